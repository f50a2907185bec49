// Launch execution across host threads (see launch_state.hpp).
#include "launch_state.hpp"

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/operations.hpp>

#include "scheduler.hpp"

namespace ldmsim::detail {

LaunchState::LaunchState(MachineImpl& machine, const std::vector<int>& groups, Kernel kernel, std::string name,
                         bool node_sync)
    : machine_(machine), kernel_(std::move(kernel)) {
  if (node_sync) node_ = std::make_unique<NodeSync>(machine_.arch.node_barrier_cycles);
  for (int cg : groups) {
    runs_.push_back(std::make_unique<GroupRun>(machine_, *machine_.groups[static_cast<std::size_t>(cg)], kernel_, name,
                                               node_.get()));
    if (node_) node_->add(*runs_.back(), machine_.arch.cores_per_group());
  }
  machine_.launch_active = true;
  if (node_) {
    threads_.emplace_back([this] {
      boost::fibers::use_scheduling_algorithm<CycleOrderedScheduler>();
      std::vector<GroupRun*> runs;
      for (auto& run : runs_) runs.push_back(run.get());
      GroupRun::run_together(runs);
    });
    return;
  }
  const std::size_t threads = std::min<std::size_t>(machine_.threads, runs_.size());
  for (std::size_t t = 0; t < threads; ++t) {
    threads_.emplace_back([this, t, threads] {
      boost::fibers::use_scheduling_algorithm<CycleOrderedScheduler>();
      for (std::size_t i = t; i < runs_.size(); i += threads) runs_[i]->run();
    });
  }
}

LaunchState::~LaunchState() {
  join();
}

std::optional<Fault> LaunchState::join() {
  if (joined_) return fault_;
  for (auto& thread : threads_) thread.join();
  joined_ = true;
  machine_.launch_active = false;
  for (const auto& run : runs_) {
    const auto& f = run->fault();
    if (!f) continue;
    auto key = [](const Fault& x) { return std::make_tuple(x.cycle(), x.cg(), x.core()); };
    if (!fault_ || key(*f) < key(*fault_)) fault_ = *f;
  }
  return fault_;
}

}  // namespace ldmsim::detail
