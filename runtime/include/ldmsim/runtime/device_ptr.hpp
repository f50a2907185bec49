// A typed pointer into simulated device main memory. It is an address, not a host pointer: only the DMA
// engine (kernel side) and Machine::upload/download (control core) turn it into bytes.
#pragma once

#include <cstddef>
#include <type_traits>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// Typed device address; arithmetic moves by whole elements like a C pointer.
template <typename T>
class DevicePtr {
 public:
  DevicePtr() = default;
  explicit DevicePtr(DeviceAddr addr) : addr_(addr) {}
  /// DevicePtr<T> converts to DevicePtr<const T>.
  template <typename U, typename = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
  DevicePtr(DevicePtr<U> other) : addr_(other.addr()) {}  // NOLINT(google-explicit-constructor)

  DeviceAddr addr() const { return addr_; }
  explicit operator bool() const { return addr_ != 0; }

  DevicePtr operator+(std::size_t n) const { return DevicePtr(addr_ + n * sizeof(T)); }
  DevicePtr& operator+=(std::size_t n) {
    addr_ += n * sizeof(T);
    return *this;
  }
  /// A pointer `bytes` bytes further (may break element alignment on purpose, e.g. to test traps).
  DevicePtr byte_offset(std::size_t bytes) const { return DevicePtr(addr_ + bytes); }

  friend bool operator==(DevicePtr a, DevicePtr b) = default;

 private:
  DeviceAddr addr_ = 0;
};

}  // namespace ldmsim
