// Host-side state that code above the runtime keeps with a machine or with one of its core groups: planning caches,
// memos and scratch buffers of the kernels' host work, one instance per type, made on first use. A Machine holds one
// set for its control core (Machine::host_state) and one per host thread of a launch for the compute cores that
// thread runs (Core::group_state).
// Nothing in it may change a simulated result: it only saves the host work of computing something again.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace ldmsim {

/// One instance of each type asked for, made (default-constructed) on first use and kept until the set is
/// destroyed. A set of one user at a time (one host thread of a launch) takes no lock; a shared set (a machine's
/// control core, whose core groups' controls may run at once, Machine::run_group_controls) finds and makes its
/// instances under a lock, and a type kept there must lock what it changes.
class HostState {
 public:
  explicit HostState(bool shared = false) : shared_(shared) {}
  HostState(const HostState&) = delete;
  HostState& operator=(const HostState&) = delete;

  /// This set's T.
  template <typename T>
  T& get() {
    const std::size_t slot = slot_of<T>();
    if (!shared_ && slot < slots_.size() && slots_[slot]) return *static_cast<T*>(slots_[slot].get());
    return *static_cast<T*>(
        get_or_make(slot, [] { return Erased(new T, [](void* p) { delete static_cast<T*>(p); }); }));
  }
  /// This set's T if it was made, else null.
  template <typename T>
  T* find() const {
    const std::size_t slot = slot_of<T>();
    if (!shared_) return slot < slots_.size() ? static_cast<T*>(slots_[slot].get()) : nullptr;
    return static_cast<T*>(find_slot(slot));
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
  void* get_or_make(std::size_t slot, Erased (*create)());
  void* find_slot(std::size_t slot) const;

  const bool shared_;
  mutable std::mutex mutex_;  // taken only when shared_
  std::vector<Erased> slots_;
};

}  // namespace ldmsim
