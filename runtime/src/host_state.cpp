// HostState's slots (see host_state.hpp).
#include "ldmsim/runtime/host_state.hpp"

#include <atomic>

namespace ldmsim {

std::size_t HostState::next_slot() {
  static std::atomic<std::size_t> next{0};
  return next++;
}

void* HostState::get_or_make(std::size_t slot, Erased (*create)()) {
  std::unique_lock lock(mutex_, std::defer_lock);
  if (shared_) lock.lock();
  while (slots_.size() <= slot) slots_.emplace_back(nullptr, [](void*) {});
  if (!slots_[slot]) slots_[slot] = create();
  return slots_[slot].get();
}

void* HostState::find_slot(std::size_t slot) const {
  std::unique_lock lock(mutex_, std::defer_lock);
  if (shared_) lock.lock();
  return slot < slots_.size() ? slots_[slot].get() : nullptr;
}

}  // namespace ldmsim
