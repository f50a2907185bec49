// Fault construction: the what() text carries the location so a bare `catch (std::exception&)` still
// prints where the trap happened.
#include "ldmsim/sim/fault.hpp"

#include <fmt/format.h>

#include "ldmsim/sim/enum_names.hpp"

namespace ldmsim {

constexpr auto kFaultKindNames = enum_names<FaultKind>({
    {FaultKind::kDmaMisaligned, "dma-misaligned"},
    {FaultKind::kDmaOutOfBounds, "dma-out-of-bounds"},
    {FaultKind::kDmaFieldOverflow, "dma-field-overflow"},
    {FaultKind::kLdmOverflow, "ldm-overflow"},
    {FaultKind::kApiOutsideKernel, "api-outside-kernel"},
    {FaultKind::kDeadlock, "deadlock"},
    {FaultKind::kKernelException, "kernel-exception"},
    {FaultKind::kPendingDmaAtExit, "pending-dma-at-exit"},
    {FaultKind::kInvalidArgument, "invalid-argument"},
    {FaultKind::kIndexOutOfRange, "index-out-of-range"},
    {FaultKind::kDivideByZero, "divide-by-zero"},
});

std::string_view to_string(FaultKind kind) noexcept {
  return kFaultKindNames.name(kind, "unknown");
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

Fault::Fault(FaultKind kind, CoreLocation where, Cycle cycle, std::string kernel, std::string message,
             std::optional<FaultField> field)
    : std::runtime_error(format_what(kind, where, cycle, kernel, message)),
      kind_(kind),
      where_(where),
      cycle_(cycle),
      kernel_(std::move(kernel)),
      detail_(std::move(message)),
      field_(std::move(field)) {}

Fault Fault::with_detail(std::string message) const {
  return Fault(kind_, where_, cycle_, kernel_, std::move(message), field_);
}

}  // namespace ldmsim
