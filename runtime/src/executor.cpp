// The workload executor: generates and stages inputs under the staging policy, runs each op on the machine,
// restages a tensor when the next op needs another layout, strips the outputs and gathers stats.json.
#include <fmt/format.h>

#include <chrono>
#include <random>

#include "ldmsim/runtime/workload.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace {

using nlohmann::json;

std::vector<f16> initial_values(const TensorDecl& t) {
  const std::size_t n = t.shape->elements();
  std::vector<float> v(n);
  const json& i = t.init;
  std::mt19937_64 rng(i.value("seed", std::uint64_t{0}));
  if (i.contains("uniform")) {
    std::uniform_real_distribution<float> d(i["uniform"][0].get<float>(), i["uniform"][1].get<float>());
    for (auto& x : v) x = d(rng);
  } else if (i.contains("normal")) {
    std::normal_distribution<float> d(i["normal"][0].get<float>(), i["normal"][1].get<float>());
    for (auto& x : v) x = d(rng);
  } else if (i.contains("value")) {
    std::fill(v.begin(), v.end(), i["value"].get<float>());
  } else {
    v = t.file_data;
  }
  std::vector<f16> h(n);
  floats_to_halves(v, h);
  return h;
}

json group_dma(const RunStats& s) {
  json out = json::array();
  for (const auto& g : s.groups) out.push_back({{"dma_requests", g.dma_requests()}, {"dma_bytes", g.dma_bytes()}});
  return out;
}

}  // namespace

WorkloadResult execute(const Workload& w, Machine& machine, const Registry& registry, const ExecuteOptions& options) {
  StagingStats staging;
  std::map<std::string, DeviceTensor> device;
  std::map<std::string, std::vector<f16>> host;  // initial values not yet staged
  for (const auto& [name, t] : w.tensors) {
    if (!t.init.is_null()) host[name] = initial_values(t);
  }
  json ops = json::array();
  for (std::size_t i = 0; i < w.ops.size(); ++i) {
    const OpDecl& od = w.ops[i];
    const Operator& op = *registry.find(od.type);
    const StagingStats before_staging = staging;
    json plans = json::object();
    std::vector<DeviceTensor> in, out;
    for (std::size_t k = 0; k < od.inputs.size(); ++k) {
      const std::string& name = od.inputs[k];
      const PaddingPlan plan = choose_plan(*w.tensors.at(name).shape, op.padding(k), options.staging);
      plans[name] = plan.describe();
      auto it = device.find(name);
      if (it == device.end()) {
        device[name] = stage_in(machine, name, plan, host.at(name), &staging);
      } else if (!(it->second.layout() == plan.layout)) {  // restage into the layout this op needs
        const std::vector<f16> values = stage_out(machine, it->second, &staging);
        machine.free(it->second.ptr);
        it->second = stage_in(machine, name, plan, values, &staging);
      }
      in.push_back(device.at(name));
    }
    for (std::size_t k = 0; k < od.outputs.size(); ++k) {
      const std::string& name = od.outputs[k];
      const PaddingPlan plan =
          choose_plan(*w.tensors.at(name).shape, op.padding(od.inputs.size() + k), options.staging);
      plans[name] = plan.describe();
      device[name] = allocate_tensor(machine, name, plan, &staging);
      out.push_back(device.at(name));
    }
    const RunStats s0 = machine.stats();
    op.run(machine, in, out, od.attrs, fmt::format("{}#{}", od.type, i));
    const RunStats s1 = machine.stats();
    json groups = group_dma(s1), g0 = group_dma(s0);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      groups[g]["dma_requests"] =
          groups[g]["dma_requests"].get<std::uint64_t>() - g0[g]["dma_requests"].get<std::uint64_t>();
      groups[g]["dma_bytes"] = groups[g]["dma_bytes"].get<std::uint64_t>() - g0[g]["dma_bytes"].get<std::uint64_t>();
    }
    std::vector<Shape4> in_shapes;
    for (const auto& name : od.inputs) in_shapes.push_back(*w.tensors.at(name).shape);
    const OpCost cost = op.cost(in_shapes, od.attrs);
    ops.push_back({{"index", i},
                   {"type", od.type},
                   {"cycles", s1.cycles - s0.cycles},
                   {"seconds", s1.seconds - s0.seconds},
                   {"dma_requests", s1.dma_requests() - s0.dma_requests()},
                   {"dma_bytes", s1.dma_bytes() - s0.dma_bytes()},
                   {"groups", groups},
                   {"flops", cost.flops},
                   {"padding_bytes_added", staging.bytes_added - before_staging.bytes_added},
                   {"staging_host_seconds", staging.host_seconds - before_staging.host_seconds},
                   {"plans", plans}});
    if (options.progress) options.progress(i, od.type, s1.seconds);
  }
  WorkloadResult result;
  for (const auto& name : w.outputs) {
    auto it = device.find(name);
    result.shapes[name] = *w.tensors.at(name).shape;
    result.outputs[name] = it != device.end() ? stage_out(machine, it->second, &staging) : host.at(name);
  }
  const RunStats s = machine.stats();
  result.stats = {{"workload", w.name},
                  {"arch", machine.arch().name},
                  {"staging", to_string(options.staging)},
                  {"cycles", s.cycles},
                  {"seconds", s.seconds},
                  {"dma_requests", s.dma_requests()},
                  {"dma_bytes", s.dma_bytes()},
                  {"ldm_high_water", s.ldm_high_water()},
                  {"padding",
                   {{"bytes_added", staging.bytes_added},
                    {"bytes_staged", staging.bytes_staged},
                    {"staging_host_seconds", staging.host_seconds}}},
                  {"ops", ops},
                  {"machine", s.to_json(false)}};
  return result;
}

}  // namespace ldmsim
