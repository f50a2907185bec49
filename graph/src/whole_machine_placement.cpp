// The whole-machine placement (placement.hpp): every op runs on every core group, each tensor has one device copy
// in the layout the plan gives it, and a re-layout is the `relayout:NAME` kernel on the whole machine. For a
// cost-aware plan that splits nothing, constants also have a copy in every other group's memory (their replicas).
#include <fmt/format.h>

#include <optional>

#include "constant_replicas.hpp"
#include "ldmsim/graph/tags.hpp"
#include "ldmsim/kernels/relayout.hpp"
#include "ldmsim/sim/fault.hpp"
#include "placement.hpp"

namespace ldmsim::executor_detail {

namespace {

class WholeMachine final : public Placement {
 public:
  WholeMachine(RunState& state, std::optional<SplitRunRecord> plan)
      : s_(state), device_(state.graph.tensors().size()), replica_copies_(device_.size()), plan_(std::move(plan)) {
    if (plan_) replicas_.emplace(state);
  }

  void stage(const Step& step) override {
    const TensorNode& node = s_.graph.tensor(step.tensor);
    device_[step.tensor] =
        for_op(step.op, [&] { return s_.stage(s_.machine, node.name, step.plan, initial_values(node)); });
    replicate(step.tensor);
  }

  void relayout(const Step& step) override {
    const TensorNode& node = s_.graph.tensor(step.tensor);
    const DeviceTensor from = *device_[step.tensor];
    const DeviceTensor to = for_op(step.op, [&] { return s_.allocate(s_.machine, node.name, step.plan); });
    const RunStats s0 = s_.machine.stats();
    ldmsim::relayout(s_.machine, from, to, fmt::format("relayout:{}", node.name));
    const RunStats s1 = s_.machine.stats();
    s_.relayouts.push_back({node.name, step.op, from.plan.describe(), to.plan.describe(), s1.cycles - s0.cycles,
                            s0.cycles, s1.cycles, s1.dma_bytes() - s0.dma_bytes()});
    release_replicas(step.tensor);
    s_.release(from);
    device_[step.tensor] = to;
    replicate(step.tensor);
  }

  void hand_over(const Step& step) override {
    const OpNode& op = s_.graph.ops()[step.op];
    DeviceTensor t = *device_[op.inputs[0]];
    device_[op.inputs[0]].reset();
    t.name = s_.graph.tensor(step.tensor).name;
    t.plan = step.plan;
    device_[step.tensor] = t;
    replica_copies_[step.tensor] = std::move(replica_copies_[op.inputs[0]]);  // they go with the buffer
    replica_copies_[op.inputs[0]].clear();
    s_.record_hand_over(op, t.name, step.plan, s_.graph.tensor(op.inputs[0]).name);
  }

  void free(const Step& step) override {
    release_replicas(step.tensor);
    s_.release(*device_[step.tensor]);
    device_[step.tensor].reset();
  }

  void run(const OpNode& op) override {
    const auto& plans = s_.plan.op_plans[op.index];
    std::map<std::string, std::string> layouts;
    std::vector<DeviceTensor> in, out;
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      DeviceTensor t = *device_[op.inputs[k]];
      t.plan = plans[k];  // the same placement, seen through this op's plan
      in.push_back(t);
      layouts[t.name] = plans[k].describe();
    }
    for (std::size_t k = 0; k < op.outputs.size(); ++k) {
      const std::size_t t = op.outputs[k];
      const PaddingPlan& p = plans[op.inputs.size() + k];
      device_[t] = for_op(op.index, [&] { return s_.allocate(s_.machine, s_.graph.tensor(t).name, p); });
      out.push_back(*device_[t]);
      layouts[device_[t]->name] = p.describe();
    }
    const RunStats s0 = s_.machine.stats();
    op.bound->run(s_.machine, in, out, op.label());
    s_.record(op, s0, s_.machine.stats(), std::move(layouts));
  }

  std::vector<f16> download(std::size_t tensor) override {
    return stage_out(s_.machine, *device_[tensor], &s_.staging);
  }

  void summarize(RunSummary& summary) const override {
    if (!plan_) return;
    summary.split = *plan_;
    if (replicas_) {
      summary.split->replicated_constants = replicas_->constants();
      summary.split->replicated_bytes = replicas_->bytes();
    }
  }

 private:
  /// A constant's copies in the other groups' memories, when the plan holds constants there.
  void replicate(std::size_t t) {
    if (!replicas_ || !is_constant_tensor(s_.graph, t)) return;
    replica_copies_[t] = replicas_->replicate(*device_[t]);
  }
  void release_replicas(std::size_t t) {
    if (!replicas_) return;
    replicas_->release(replica_copies_[t]);
    replica_copies_[t].clear();
  }

  /// f(), with a ConfigError (main memory full) naming the op whose step it is.
  template <typename F>
  auto for_op(std::size_t op, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const ConfigError& e) {
      if (op >= s_.graph.ops().size()) throw;
      const OpNode& node = s_.graph.ops()[op];
      throw ConfigError(fmt::format("op {} ({}): {}", node.layer(), node.type, e.what()));
    }
  }

  RunState& s_;
  std::vector<std::optional<DeviceTensor>> device_;
  std::vector<std::vector<ReplicaCopy>> replica_copies_;  // per tensor
  std::optional<SplitRunRecord> plan_;                    // a cost-aware plan that splits nothing
  std::optional<ConstantReplicas> replicas_;
};

}  // namespace

std::unique_ptr<Placement> whole_machine_placement(RunState& state, std::optional<SplitRunRecord> plan) {
  return std::make_unique<WholeMachine>(state, std::move(plan));
}

}  // namespace ldmsim::executor_detail
