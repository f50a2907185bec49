// The structured trap raised by the simulator: every violation the machine detects is an ldmsim::Fault.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// What kind of violation stopped the launch.
enum class FaultKind : std::uint8_t {
  kDmaMisaligned,     ///< a DMA field is not a multiple of the granularity
  kDmaOutOfBounds,    ///< a DMA touches bytes outside every live main-memory region or outside the ldm
  kDmaFieldOverflow,  ///< a DMA field does not fit the descriptor's width, or is zero / inconsistent
  kLdmOverflow,       ///< a local-store allocation does not fit
  kApiOutsideKernel,  ///< a core API was used outside a running kernel
  kDeadlock,          ///< every live core of a group is blocked
  kKernelException,   ///< a kernel threw an exception that is not a Fault
  kPendingDmaAtExit,  ///< a kernel returned with DMA requests it never waited for
  kInvalidArgument,   ///< a core API was called with an impossible argument (bad mask, bad free, ...)
  kIndexOutOfRange,   ///< a runtime index a kernel reads (gather's) is outside the axis it indexes
  kDivideByZero,      ///< an integer division or modulo by zero (div and mod of int32 tensors)
};
/// The last fault kind (trace readers: a larger stored value is unknown).
inline constexpr FaultKind kLastFaultKind = FaultKind::kDivideByZero;

/// Stable lower-case name of a fault kind ("dma-misaligned", ...), used in messages, traces and stats.
std::string_view to_string(FaultKind kind) noexcept;

/// The field of a request that a trap is about and its value (a misaligned DMA's "length" = 6, an out-of-bounds
/// DMA's "main address"), when the trap has one.
struct FaultField {
  std::string name;
  std::uint64_t value = 0;
  bool operator==(const FaultField&) const = default;
};

/// A trapped violation. what() is the full human-readable diagnostic including location and hint.
class Fault : public std::runtime_error {
 public:
  Fault(FaultKind kind, CoreLocation where, Cycle cycle, std::string kernel, std::string message,
        std::optional<FaultField> field = std::nullopt);

  FaultKind kind() const noexcept { return kind_; }
  int cg() const noexcept { return where_.cg; }
  int core() const noexcept { return where_.core; }
  CoreLocation where() const noexcept { return where_; }
  Cycle cycle() const noexcept { return cycle_; }
  const std::string& kernel() const noexcept { return kernel_; }
  /// The message without the location prefix.
  const std::string& detail() const noexcept { return detail_; }
  /// The offending field and its value, if the trap names one.
  const std::optional<FaultField>& field() const noexcept { return field_; }
  /// The same fault (kind, place, field) with another message: a caller adding what it knows to the runtime's.
  Fault with_detail(std::string message) const;

 private:
  FaultKind kind_;
  CoreLocation where_;
  Cycle cycle_;
  std::string kernel_;
  std::string detail_;
  std::optional<FaultField> field_;
};

/// Bad configuration or input (arch file, workload, arguments): the CLI maps it to exit code 2.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ldmsim
