// A typed view of a buffer in one compute core's local store: host-visible elements for the kernel's
// computation plus the ldm offset that DMA requests use.
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// Elements [0, size()) at ldm offset ldm_addr() of the owning core.
template <typename T>
class LdmSpan {
 public:
  LdmSpan() = default;
  LdmSpan(T* data, LdmAddr ldm_addr, std::size_t count) : data_(data), ldm_addr_(ldm_addr), count_(count) {}
  /// LdmSpan<T> converts to LdmSpan<const T>.
  template <typename U, typename = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
  LdmSpan(LdmSpan<U> other)  // NOLINT(google-explicit-constructor)
      : data_(other.data()), ldm_addr_(other.ldm_addr()), count_(other.size()) {}

  T* data() const { return data_; }
  LdmAddr ldm_addr() const { return ldm_addr_; }
  std::size_t size() const { return count_; }
  std::size_t size_bytes() const { return count_ * sizeof(T); }
  bool empty() const { return count_ == 0; }
  T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() const { return data_; }
  T* end() const { return data_ + count_; }
  std::span<T> span() const { return {data_, count_}; }

  LdmSpan first(std::size_t n) const { return {data_, ldm_addr_, n}; }
  LdmSpan subspan(std::size_t offset, std::size_t n) const {
    return {data_ + offset, static_cast<LdmAddr>(ldm_addr_ + offset * sizeof(T)), n};
  }

 private:
  T* data_ = nullptr;
  LdmAddr ldm_addr_ = 0;
  std::size_t count_ = 0;
};

}  // namespace ldmsim
