// Private helpers of the operator definitions: launching on every core, binding kinds, attribute readers that
// accept one integer or a pair, and the fp16 <-> float conversions of ldm tiles.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <source_location>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ldmsim/kernels/operator.hpp"
#include "ldmsim/kernels/tiling.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim::ops {

/// Runs `kernel(core, args...)` on every core of every group under `name` and joins.
template <typename F, typename... Args>
void launch_all(Machine& machine, const std::string& name, F&& kernel, Args&&... args) {
  machine.launch(LaunchSpec{.name = name}, std::forward<F>(kernel), std::forward<Args>(args)...).join();
}

/// Device allocations of a kernel run, freed when the scope ends (a trapped launch or a failed allocation
/// included), the last first.
class DeviceScratch {
 public:
  explicit DeviceScratch(Machine& machine) : machine_(machine) {}
  ~DeviceScratch() {
    for (auto it = addrs_.rbegin(); it != addrs_.rend(); ++it) machine_.free_bytes(*it);
  }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  template <typename T>
  DevicePtr<T> alloc(std::size_t count, const AllocOptions& where = {}) {
    const DevicePtr<T> p = machine_.alloc<T>(count, where);
    addrs_.push_back(p.addr());
    return p;
  }
  /// A tensor laid out by `plan` (allocate_tensor: zero-filled, its padding defined for the init check).
  DeviceTensor tensor(const std::string& name, const PaddingPlan& plan) {
    DeviceTensor t = allocate_tensor(machine_, name, plan);
    addrs_.push_back(t.ptr.addr());
    return t;
  }

 private:
  Machine& machine_;
  std::vector<DeviceAddr> addrs_;
};

/// An OperatorKind whose bind is a function.
class FunctionKind final : public OperatorKind {
 public:
  using Binder = std::unique_ptr<BoundOp> (*)(std::string_view name, const JsonField& attrs,
                                              std::span<const Shape> inputs);
  FunctionKind(std::string name, Arity arity, Binder binder, OperatorTraits traits = {})
      : OperatorKind(std::move(traits)), name_(std::move(name)), arity_(arity), binder_(binder) {}
  std::string_view name() const override { return name_; }
  Arity arity() const override { return arity_; }
  std::unique_ptr<BoundOp> bind(const JsonField& attrs, std::span<const Shape> inputs) const override {
    return binder_(name_, attrs, inputs);
  }

 private:
  std::string name_;
  Arity arity_;
  Binder binder_;
};

/// Attribute readers: the attributes object (null allowed) checked against the known keys.
inline const JsonField& check_attrs(const JsonField& attrs, std::initializer_list<std::string_view> known) {
  if (attrs.json().is_null()) return attrs;
  return attrs.expect_object(known);
}

/// An integer attribute in [lo, hi], `fallback` when absent.
inline std::int64_t int_attr(const JsonField& attrs, std::string_view key, std::int64_t fallback, std::int64_t lo,
                             std::int64_t hi = std::int64_t{1} << 40) {
  const auto v = attrs.find(key);
  return v ? v->integer(lo, hi) : fallback;
}

/// A pair attribute: [a, b] or one integer for both, each in [lo, hi].
inline std::pair<std::uint64_t, std::uint64_t> pair_attr(const JsonField& attrs, std::string_view key,
                                                         std::uint64_t fallback, std::uint64_t lo,
                                                         std::uint64_t hi = std::uint64_t{1} << 24) {
  const auto v = attrs.find(key);
  if (!v) return {fallback, fallback};
  if (v->json().is_array()) {
    const auto items = v->elements();
    if (items.size() != 2) v->fail("must be an integer or a pair [h, w]");
    return {items[0].unsigned_integer(lo, hi), items[1].unsigned_integer(lo, hi)};
  }
  const std::uint64_t one = v->unsigned_integer(lo, hi);
  return {one, one};
}

/// A number attribute, `fallback` when absent.
inline double num_attr(const JsonField& attrs, std::string_view key, double fallback) {
  const auto v = attrs.find(key);
  return v ? v->number() : fallback;
}

/// fp16 tile -> floats and back (bulk conversions). A range beyond the ldm buffer is a kernel bug that would
/// overwrite a neighbouring buffer (or memory past the local store): it throws instead.
inline void check_in_buffer(LdmSpan<const f16> buffer, std::size_t first, std::size_t n) {
  if (first > buffer.size() || n > buffer.size() - first) {
    throw std::logic_error(fmt::format("ldm tile conversion of [{}, {}) outside a buffer of {} elements", first,
                                       first + n, buffer.size()));
  }
}
inline void to_floats(LdmSpan<const f16> from, std::size_t first, std::size_t n, float* out) {
  check_in_buffer(from, first, n);
  halves_to_floats(std::span<const f16>(from.data() + first, n), std::span<float>(out, n));
}
/// The logical elements [first, first + count) of a tensor stored in `layout` at `base`, read as tiling::gather
/// reads them (through `staging`; the same requests), as floats into out[0, count): converted where the reads put
/// them, for a kernel that would only have converted gather's copy in ldm.
inline void gather_floats(Core& core, LdmSpan<f16> staging, DevicePtr<const f16> base, const Layout& layout,
                          std::size_t first, std::size_t count, float* out,
                          std::source_location site = std::source_location::current()) {
  tiling::gather_each(
      core, staging, base, layout, first, count,
      [out](std::size_t at, const f16* from, std::size_t n) {
        halves_to_floats(std::span<const f16>(from, n), std::span<float>(out + at, n));
      },
      site);
}
inline void to_halves(const float* in, std::size_t n, LdmSpan<f16> to) {
  check_in_buffer(to, 0, n);
  floats_to_halves(std::span<const float>(in, n), to.first(n).span());
}

[[noreturn]] inline void reject(std::string_view op, const std::string& why) {
  throw ConfigError(fmt::format("{}: {}", op, why));
}

}  // namespace ldmsim::ops
