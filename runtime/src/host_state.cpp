// HostState's slots (see host_state.hpp).
#include "ldmsim/runtime/host_state.hpp"

#include <atomic>

namespace ldmsim {

std::size_t HostState::next_slot() {
  static std::atomic<std::size_t> next{0};
  return next++;
}

void* HostState::make(std::size_t slot, Erased (*create)()) {
  while (slots_.size() <= slot) slots_.emplace_back(nullptr, [](void*) {});
  slots_[slot] = create();
  return slots_[slot].get();
}

}  // namespace ldmsim
