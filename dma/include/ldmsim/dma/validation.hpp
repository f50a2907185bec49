// DMA validation, done before any byte moves: 4-byte granularity of every field, descriptor field widths,
// the strided layout rule, the ldm range and the main-memory region. Returns a violation, never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ldmsim/dma/request.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

class MainMemory;

/// What is wrong with a request: the fault kind, the offending field and value, and a message with a hint.
struct DmaViolation {
  FaultKind kind = FaultKind::kDmaMisaligned;
  std::string field;
  std::uint64_t value = 0;
  std::string message;  ///< "<api> <op>: <field> = <value> is not a multiple of 4 bytes; hint: ..."

  /// Alignment violations can be downgraded to warnings by the lint policy; others always trap.
  bool lintable() const { return kind == FaultKind::kDmaMisaligned; }
};

/// Checks the request's own fields and the ldm range (checks that need no main memory): granularity first,
/// then the rest (validate_shape). `ldm_bytes` is the local store the issuing core sees (0: arch.ldm_bytes; a
/// model's context sees its share when several models share the machine).
std::optional<DmaViolation> validate_fields(const DmaRequest& request, const Arch& arch, std::uint64_t ldm_bytes = 0);
/// Every field check except granularity: mode, zero length, field widths, strided layout, ldm range. The lint
/// policy uses it after downgrading a granularity violation to a warning.
std::optional<DmaViolation> validate_shape(const DmaRequest& request, const Arch& arch, std::uint64_t ldm_bytes = 0);
/// Checks that the main-memory side lies inside one live region.
std::optional<DmaViolation> validate_main_range(const DmaRequest& request, const MainMemory& memory);
/// A put into a region replicated in every core group's memory (MainMemory::add_replica, a constant): it would
/// change one group's copy only. nullopt for every other request.
std::optional<DmaViolation> validate_replica_write(const DmaRequest& request, const MainMemory& memory);

}  // namespace ldmsim
