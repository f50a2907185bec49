// Host-side state that code above the runtime keeps with a machine or with one of its core groups: planning caches,
// memos and scratch buffers of the kernels' host work, one instance per type, made on first use. A Machine holds one
// set for its control core (Machine::host_state) and one per host thread of a launch for the compute cores that
// thread runs (Core::group_state).
// Nothing in it may change a simulated result: it only saves the host work of computing something again.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace ldmsim {

/// One instance of each type asked for, made (default-constructed) on first use and kept until the set is
/// destroyed. Not thread-safe: each set has one user at a time (a machine's control core, or one host thread of a
/// launch).
class HostState {
 public:
  HostState() = default;
  HostState(const HostState&) = delete;
  HostState& operator=(const HostState&) = delete;

  /// This set's T.
  template <typename T>
  T& get() {
    const std::size_t slot = slot_of<T>();
    if (slot < slots_.size() && slots_[slot]) return *static_cast<T*>(slots_[slot].get());
    return *static_cast<T*>(make(slot, [] { return Erased(new T, [](void* p) { delete static_cast<T*>(p); }); }));
  }
  /// This set's T if it was made, else null.
  template <typename T>
  T* find() const {
    const std::size_t slot = slot_of<T>();
    return slot < slots_.size() ? static_cast<T*>(slots_[slot].get()) : nullptr;
  }

 private:
  using Erased = std::unique_ptr<void, void (*)(void*)>;
  /// A process-wide number per type (the slot it takes in every set), handed out in order of first use.
  template <typename T>
  static std::size_t slot_of() {
    static const std::size_t slot = next_slot();
    return slot;
  }
  static std::size_t next_slot();
  void* make(std::size_t slot, Erased (*create)());

  std::vector<Erased> slots_;
};

}  // namespace ldmsim
