// Persistent compute-core fibers (see core_runners.hpp).
#include "core_runners.hpp"

#include <functional>
#include <memory>
#include <utility>

#include "group_run.hpp"
#include "launch_workers.hpp"
#include "scheduler.hpp"

namespace ldmsim::detail {

CoreRunners::~CoreRunners() {
  retire();
}

void CoreRunners::ensure(int worker, const std::shared_ptr<LaunchWorkers>& workers) {
  if (home_ >= 0) return;
  workers_ = workers;
  home_ = worker;
  stop_ = false;
  fibers_.reserve(slots_.size());
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    fibers_.emplace_back(std::allocator_arg, stacks_.slice(i), [this, i] { loop(i); });
  }
}

void CoreRunners::assign(std::size_t id, GroupRun& run, Cycle cycle, std::uint32_t key) {
  Slot& slot = slots_[id];
  slot.run = &run;
  if (!slot.parked) return;  // a fresh fiber, already ready: it finds its run when it first runs
  slot.parked = false;
  auto* order = static_cast<CoreOrder*>(slot.ctx->get_properties());
  order->cycle = cycle;
  order->id = key;
  boost::fibers::context::active()->schedule(slot.ctx);
}

void CoreRunners::loop(std::size_t id) {
  Slot& slot = slots_[id];
  slot.ctx = boost::fibers::context::active();
  for (;;) {
    while (slot.run == nullptr && !stop_) {
      slot.parked = true;
      slot.ctx->suspend();  // until assign() or retire_here() makes it ready
    }
    if (slot.run == nullptr) return;  // retired
    GroupRun& run = *std::exchange(slot.run, nullptr);
    run.run_core(static_cast<int>(id));
  }
}

void CoreRunners::retire_here() {
  stop_ = true;
  for (Slot& slot : slots_) {
    if (!slot.parked) continue;
    slot.parked = false;
    boost::fibers::context::active()->schedule(slot.ctx);
  }
  for (auto& fiber : fibers_) fiber.join();
  fibers_.clear();
  for (Slot& slot : slots_) slot = Slot{};
}

void CoreRunners::retire() {
  if (home_ < 0) return;
  std::vector<std::function<void()>> jobs(static_cast<std::size_t>(home_) + 1);
  jobs[static_cast<std::size_t>(home_)] = [this] { retire_here(); };
  workers_->run(std::move(jobs));
  home_ = -1;
  workers_.reset();
}

}  // namespace ldmsim::detail
