// The cost-aware choice prices its ops' placements on several host threads (placement_search.cpp, all_candidates):
// watched through an fc under another name whose bound ops record the threads that ask their kernel's estimate and
// refuse to estimate on inputs of given widths.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/placement_choice.hpp"
#include "ldmsim/sim/fault.hpp"
#include "support/wrapping_kind.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

/// What the probed ops saw, shared by every op bound from the probe's kind.
struct EstimateProbe {
  std::mutex mutex;
  std::condition_variable arrived;
  std::set<std::thread::id> threads;  ///< those that asked an estimate
  /// An op waits (up to a few seconds) until this many threads have asked: the pricing is then known to be shared.
  std::size_t wait_for = 1;
  std::uint64_t refused_first = 0, refused_later = 0;  ///< input widths refused at once, and after a delay (0: none)
};

/// fc, watched: records the asking thread, refuses the probe's widths (a ConfigError naming the width).
class ProbedFc final : public test::WrappedOp {
 public:
  ProbedFc(std::unique_ptr<BoundOp> inner, std::shared_ptr<EstimateProbe> probe)
      : WrappedOp(std::move(inner)), probe_(std::move(probe)) {}
  std::optional<double> kernel_estimate(const Arch& arch, KernelEstimates& memo) const override {
    const Shape& x = input_shapes()[0];
    const std::uint64_t width = x[x.rank() - 1];
    {
      std::unique_lock lock(probe_->mutex);
      probe_->threads.insert(std::this_thread::get_id());
      probe_->arrived.notify_all();
      probe_->arrived.wait_for(lock, std::chrono::seconds(5),
                               [&] { return probe_->threads.size() >= probe_->wait_for; });
    }
    if (width == probe_->refused_first) throw ConfigError(fmt::format("probe refuses width {}", width));
    if (width == probe_->refused_later) {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // after the other refusal, in time
      throw ConfigError(fmt::format("probe refuses width {}", width));
    }
    return WrappedOp::kernel_estimate(arch, memo);
  }

 private:
  std::shared_ptr<EstimateProbe> probe_;
};

/// A chain of probed fc layers whose input widths are `widths` (each layer's output is the next one's input).
Graph probed_chain(const std::shared_ptr<EstimateProbe>& probe, const std::vector<int>& widths) {
  OperatorRegistry registry = OperatorRegistry::builtin();
  registry.add(std::make_unique<test::WrappingKind>(
      "probed_fc", "fc", std::vector<std::string>{},
      [probe](std::unique_ptr<BoundOp> fc) { return std::make_unique<ProbedFc>(std::move(fc), probe); }));
  json tensors = {{"x", {{"shape", {8, widths.front()}}, {"init", {{"normal", {0, 1}}, {"seed", 1}}}}}};
  json ops = json::array();
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const int out = i + 1 < widths.size() ? widths[i + 1] : 16;
    const std::string w = fmt::format("w{}", i), in = i == 0 ? "x" : fmt::format("y{}", i - 1);
    tensors[w] = {{"shape", {out, widths[i]}}, {"init", {{"uniform", {-0.1, 0.1}}, {"seed", 10 + i}}}};
    ops.push_back({{"type", "probed_fc"}, {"inputs", {in, w}}, {"outputs", {fmt::format("y{}", i)}}});
  }
  const json workload = {
      {"name", "probed"}, {"tensors", tensors}, {"ops", ops}, {"outputs", {fmt::format("y{}", widths.size() - 1)}}};
  return workload_from_json(workload, "probed.json", ".", registry);
}

const std::vector<int> kWidths = {64, 96, 128, 44, 160, 52, 192, 224};
const SplitOptions kAuto{.enabled = true, .cost_aware = true};

}  // namespace

TEST_CASE("the placements are priced on the host threads given and planned as on one", "[graph][split][auto]") {
  const Arch arch = Arch::preset("sw26010pro");
  const auto alone_probe = std::make_shared<EstimateProbe>();
  const SplitPlan alone = plan_split(probed_chain(alone_probe, kWidths), arch, kAuto, nullptr, nullptr, 1);
  CHECK(alone_probe->threads.size() == 1);
  for (const unsigned threads : {2U, 3U}) {
    INFO(threads << " threads");
    const auto probe = std::make_shared<EstimateProbe>();
    probe->wait_for = 2;  // each op's first ask waits for a second thread
    const Graph g = probed_chain(probe, kWidths);
    const SplitPlan together = plan_split(g, arch, kAuto, nullptr, nullptr, threads);
    CHECK(probe->threads.size() >= 2);
    CHECK(probe->threads.size() <= threads);
    CHECK(describe_placements(g, together) == describe_placements(g, alone));
    CHECK(together.estimated_cycles == alone.estimated_cycles);
  }
}

TEST_CASE("placements priced on several threads throw the first refusal in schedule order", "[graph][split][auto]") {
  const Arch arch = Arch::preset("sw26010pro");
  for (const unsigned threads : {1U, 2U, 3U}) {
    INFO(threads << " threads");
    const auto probe = std::make_shared<EstimateProbe>();
    // Op 3 (width 44) refuses late, op 5 (width 52) at once: op 5's refusal comes first in time, op 3's in order.
    probe->refused_later = 44;
    probe->refused_first = 52;
    const Graph g = probed_chain(probe, kWidths);
    CHECK_THROWS_WITH(plan_split(g, arch, kAuto, nullptr, nullptr, threads), Catch::Contains("refuses width 44"));
  }
}
