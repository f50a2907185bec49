// Cycles per LSTM time step against ep (elements of [x_t, h_(t-1)] consumed in parallel) for hidden sizes 512
// and 1024 (input = hidden), batch 1 and 16, on sw26010 and sw26010pro: every ep from 1 to the cores of a group,
// each timed by the op's own simulation of its step kernel (run_metrics' cycles_per_step with "ep" forced, one core
// group per task), plus the search's choice over core groups per task and ep. Prints a markdown table
// (docs/benchmarks.md). The batch is split over the core groups, so a group's step works on its slice (batch 16: 4 rows
// on sw26010, 3 on sw26010pro).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ldmsim/kernels/operator.hpp"
#include "ldmsim/kernels/staging.hpp"
#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

/// Runs one step of an LSTM with `ep` on one core group per task (ep 0: the search over groups and ep) and returns
/// the op's metrics.
nlohmann::json lstm_metrics(const OperatorRegistry& registry, const Arch& arch, std::size_t hidden, std::size_t batch,
                            std::size_t ep) {
  const std::vector<Shape> shapes{Shape{1, batch, hidden}, Shape{1, 4 * hidden, hidden}, Shape{1, 4 * hidden, hidden}};
  nlohmann::json attrs = nlohmann::json::object();
  if (ep != 0) attrs["ep"] = ep, attrs["groups"] = 1;
  const auto op = registry.bind("lstm", JsonField(attrs, "bench"), shapes);
  Machine machine(arch, MachineOptions{.threads = 1, .trace = false});
  std::vector<DeviceTensor> in, out;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    in.push_back(allocate_tensor(machine, "in", choose_plan(op->view(i), op->padding(i), StagingPolicy::kMethod)));
  }
  for (std::size_t j = 0; j < op->output_shapes().size(); ++j) {
    const std::size_t index = shapes.size() + j;
    out.push_back(
        allocate_tensor(machine, "out", choose_plan(op->view(index), op->padding(index), StagingPolicy::kMethod)));
  }
  op->run(machine, in, out, "lstm");
  return op->run_metrics();
}

}  // namespace

int main() {
  const OperatorRegistry registry = OperatorRegistry::builtin();
  fmt::print(
      "| arch | hidden | batch | one group per task: cycles per step at ep = 1, 2, 4, ... 64 (* streamed, - does "
      "not fit) | best ep | the search (groups per task too): choice, cycles per step |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    const Arch arch = Arch::preset(preset);
    for (const std::size_t hidden : {512u, 1024u}) {
      for (const std::size_t batch : {1u, 16u}) {
        std::vector<std::string> cells;
        double best = 1e300;
        std::size_t best_ep = 0;
        for (std::size_t ep = 1; ep <= arch.cores_per_group(); ep *= 2) {
          try {
            const nlohmann::json m = lstm_metrics(registry, arch, hidden, batch, ep);
            const double cycles = m["candidates"][0]["cycles_per_step"].get<double>();
            cells.push_back(fmt::format("{:.0f}{}", cycles, m["weights"] == "resident" ? "" : "*"));
            if (cycles < best) best = cycles, best_ep = ep;
          } catch (const ConfigError&) {  // a core's share does not fit its ldm
            cells.push_back("-");
          }
        }
        const nlohmann::json greedy = lstm_metrics(registry, arch, hidden, batch, 0);
        double chosen = 0;
        for (const auto& c : greedy["candidates"]) {
          if (c["groups"] == greedy["groups"] && c["ep"] == greedy["ep"]) chosen = c["cycles_per_step"].get<double>();
        }
        fmt::print("| {} | {} | {} | {} | {} | {} groups x ep {}: {:.0f}{} |\n", preset, hidden, batch,
                   fmt::join(cells, ", "), best_ep, greedy["groups"].get<std::size_t>(),
                   greedy["ep"].get<std::size_t>(), chosen, greedy["weights"] == "resident" ? "" : "*");
      }
    }
  }
  return 0;
}
