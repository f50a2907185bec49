// Fault construction: the what() text carries the location so a bare `catch (std::exception&)` still
// prints where the trap happened.
#include "ldmsim/sim/fault.hpp"

#include <fmt/format.h>

namespace ldmsim {

std::string_view to_string(FaultKind kind) noexcept {
  switch (kind) {
    case FaultKind::kDmaMisaligned:
      return "dma-misaligned";
    case FaultKind::kDmaOutOfBounds:
      return "dma-out-of-bounds";
    case FaultKind::kDmaFieldOverflow:
      return "dma-field-overflow";
    case FaultKind::kLdmOverflow:
      return "ldm-overflow";
    case FaultKind::kApiOutsideKernel:
      return "api-outside-kernel";
    case FaultKind::kDeadlock:
      return "deadlock";
    case FaultKind::kKernelException:
      return "kernel-exception";
    case FaultKind::kPendingDmaAtExit:
      return "pending-dma-at-exit";
    case FaultKind::kInvalidArgument:
      return "invalid-argument";
  }
  return "unknown";
}

namespace {
std::string format_what(FaultKind kind, CoreLocation where, Cycle cycle, const std::string& kernel,
                        const std::string& message) {
  std::string location;
  if (where.cg >= 0 && where.core >= 0) {
    location = fmt::format("cg {} core {}", where.cg, where.core);
  } else if (where.cg >= 0) {
    location = fmt::format("cg {}", where.cg);
  } else {
    location = "control core";
  }
  const std::string in_kernel = kernel.empty() ? std::string{} : fmt::format(" in kernel '{}'", kernel);
  return fmt::format("trap {}: {}{} at cycle {}: {}", to_string(kind), location, in_kernel, cycle, message);
}
}  // namespace

Fault::Fault(FaultKind kind, CoreLocation where, Cycle cycle, std::string kernel, std::string message)
    : std::runtime_error(format_what(kind, where, cycle, kernel, message)),
      kind_(kind),
      where_(where),
      cycle_(cycle),
      kernel_(std::move(kernel)),
      detail_(std::move(message)) {}

}  // namespace ldmsim
