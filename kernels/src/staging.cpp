// Staging on the control core: pad into the planned layout and upload, download and strip.
#include "ldmsim/kernels/staging.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ldmsim/runtime/check.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/host_stopwatch.hpp"

namespace ldmsim {

namespace {

// Calls fn(logical_index, padded_index, run_length) for every contiguous w run of the shape.
template <typename F>
void for_each_run(const Layout& l, F&& fn) {
  const Shape4& s = l.shape;
  std::size_t logical = 0;
  for (std::size_t n = 0; n < s.n; ++n)
    for (std::size_t c = 0; c < s.c; ++c)
      for (std::size_t h = 0; h < s.h; ++h) {
        fn(logical, l.offset(n, c, h, 0), s.w);
        logical += s.w;
      }
}

void check_sizes(const Layout& layout, std::size_t logical, std::size_t padded) {
  if (logical != layout.shape.elements() || padded < layout.total) {
    throw ConfigError(fmt::format("staging a {} tensor: {} logical and {} padded elements for a layout of {}",
                                  layout.shape.str(), logical, padded, layout.total));
  }
}

/// Marks the elements of a `total`-element tensor at `base` outside the layout's logical runs as defined. The runs
/// come in increasing order for every layout; one that did not would only leave some of its elements marked too.
void mark_padding_defined(Machine& machine, DeviceAddr base, const Layout& layout, std::size_t total) {
  std::size_t next = 0;  // elements before it are runs or marked
  const auto gap_to = [&](std::size_t to) {
    if (to > next) mark_device_defined(machine, base + next * sizeof(f16), (to - next) * sizeof(f16));
  };
  for_each_run(layout, [&](std::size_t, std::size_t to, std::size_t len) {
    gap_to(to);
    next = std::max(next, to + len);
  });
  gap_to(total);
}

}  // namespace

void pad_into(const Layout& layout, std::span<const f16> logical, std::span<f16> padded) {
  check_sizes(layout, logical.size(), padded.size());
  if (layout.is_natural()) {
    std::copy(logical.begin(), logical.end(), padded.begin());
    std::fill(padded.begin() + static_cast<std::ptrdiff_t>(logical.size()), padded.end(), f16{});
    return;
  }
  std::fill(padded.begin(), padded.end(), f16{});
  for_each_run(layout, [&](std::size_t from, std::size_t to, std::size_t len) {
    std::memcpy(padded.data() + to, logical.data() + from, len * sizeof(f16));
  });
}

std::vector<f16> pad(const Layout& layout, std::span<const f16> logical) {
  std::vector<f16> out(layout.total);
  pad_into(layout, logical, out);
  return out;
}

std::vector<f16> strip(const Layout& layout, std::span<const f16> padded) {
  std::vector<f16> out(layout.shape.elements());
  check_sizes(layout, out.size(), padded.size());
  if (layout.is_natural()) {
    std::copy(padded.begin(), padded.begin() + static_cast<std::ptrdiff_t>(out.size()), out.begin());
    return out;
  }
  for_each_run(layout, [&](std::size_t to, std::size_t from, std::size_t len) {
    std::memcpy(out.data() + to, padded.data() + from, len * sizeof(f16));
  });
  return out;
}

DeviceTensor allocate_tensor(Machine& machine, const std::string& name, const PaddingPlan& plan, StagingStats* stats) {
  const HostStopwatch watch;
  DeviceTensor t;
  t.name = name;
  t.plan = plan;
  // Main memory hands out zeroed bytes (a freed region is cleared), so the padding needs no upload; for the init
  // check (docs/checking.md) those zeros are defined, the elements the producing kernel writes are not yet.
  const std::size_t total = std::max<std::size_t>(plan.layout.total, 1);
  t.ptr = machine.alloc<f16>(total, AllocOptions{.name = name});
  if (enabled_checks(machine).init) mark_padding_defined(machine, t.ptr.addr(), plan.layout, total);
  if (stats != nullptr) {
    stats->host_seconds += watch.elapsed();
    stats->bytes_added += plan.added_bytes();
  }
  return t;
}

namespace {

/// Allocates the tensor and fills it by `upload`, counting the staging.
template <typename Upload>
DeviceTensor stage(Machine& machine, const std::string& name, const PaddingPlan& plan, StagingStats* stats,
                   Upload upload) {
  const HostStopwatch watch;
  DeviceTensor t;
  t.name = name;
  t.plan = plan;
  // Every byte is uploaded or lent (an empty tensor's one element is not).
  t.ptr = machine.alloc<f16>(std::max<std::size_t>(plan.layout.total, 1),
                             AllocOptions{.name = name, .overwritten = plan.layout.total > 0});
  upload(t.ptr);
  if (stats != nullptr) {
    stats->host_seconds += watch.elapsed();
    stats->bytes_added += plan.added_bytes();
    stats->bytes_staged += plan.layout.total * sizeof(f16);
  }
  return t;
}

bool unpadded(const PaddingPlan& plan, std::size_t logical) {
  return plan.layout.is_natural() && logical == plan.layout.total;
}

}  // namespace

DeviceTensor stage_in(Machine& machine, const std::string& name, const PaddingPlan& plan, std::span<const f16> logical,
                      StagingStats* stats) {
  return stage(machine, name, plan, stats, [&](DevicePtr<f16> at) {
    if (unpadded(plan, logical.size())) {  // nothing to pad: upload in place
      machine.upload(at, logical);
    } else {
      machine.upload(at, std::span<const f16>(pad(plan.layout, logical)));
    }
  });
}

DeviceTensor stage_in(Machine& machine, const std::string& name, const PaddingPlan& plan, const SharedHalves& logical,
                      StagingStats* stats) {
  if (logical.empty() || !unpadded(plan, logical.size())) return stage_in(machine, name, plan, logical.span(), stats);
  return stage(machine, name, plan, stats, [&](DevicePtr<f16> at) { machine.upload_shared(at, logical); });
}

std::vector<f16> stage_out(const Machine& machine, const DeviceTensor& tensor, StagingStats* stats) {
  const HostStopwatch watch;
  std::vector<f16> padded(tensor.layout().total);
  machine.read_bytes(tensor.ptr.addr(), std::as_writable_bytes(std::span<f16>(padded)));
  std::vector<f16> out = strip(tensor.layout(), padded);
  if (stats != nullptr) {
    stats->host_seconds += watch.elapsed();
    stats->bytes_staged += padded.size() * sizeof(f16);
  }
  return out;
}

}  // namespace ldmsim
