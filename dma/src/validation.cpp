// DMA validation rules. Order: mode, zero length, granularity of each field, descriptor widths, strided
// layout, ldm range; the main-memory range is checked separately against the live regions.
#include "ldmsim/dma/validation.hpp"

#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "ldmsim/sim/main_memory.hpp"

namespace ldmsim {

namespace {

std::string describe(const DmaRequest& r) {
  if (r.strided()) {
    return fmt::format("{} {} {}, main 0x{:x}, ldm 0x{:x}, {} bytes, bsize {}, stride {}", r.api, to_string(r.mode),
                       to_string(r.op), r.main, r.ldm, r.length, r.bsize, r.stride);
  }
  return fmt::format("{} {} {}, main 0x{:x}, ldm 0x{:x}, {} bytes", r.api, to_string(r.mode), to_string(r.op), r.main,
                     r.ldm, r.length);
}

DmaViolation violation(FaultKind kind, const DmaRequest& r, std::string field, std::uint64_t value, std::string what,
                       std::string hint) {
  DmaViolation v;
  v.kind = kind;
  v.field = std::move(field);
  v.value = value;
  v.message = fmt::format("{} ({}): {}; hint: {}", r.api, describe(r), what, hint);
  return v;
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t g) {
  return (v + g - 1) / g * g;
}

/// Requests the athread layer issues for a program's athread / CRTS / dma_desc calls: their hints speak of host
/// arrays and element counts, not of the workload's tensors and staging.
bool athread_api(std::string_view api) {
  return api.starts_with("athread_") || api.starts_with("CRTS_") || api.starts_with("dma(");
}

struct BadField {
  const char* field;
  std::uint64_t value;
  std::string hint;
};

std::optional<DmaViolation> check_granularity(const DmaRequest& r, std::uint64_t g) {
  // Fast path: the hints below are formatted eagerly, so build them only when some field is misaligned. For a
  // power-of-two granularity (every preset) one mask test covers all five fields instead of five divisions.
  const bool aligned = (g & (g - 1)) == 0 ? ((r.main | r.ldm | r.length | r.bsize | r.stride) & (g - 1)) == 0
                                          : r.main % g == 0 && r.ldm % g == 0 && r.length % g == 0 &&
                                                r.bsize % g == 0 && r.stride % g == 0;
  if (aligned) return std::nullopt;
  const bool athread = athread_api(r.api);
  std::vector<BadField> bad;  // every misaligned field, in descriptor order: the first is the fault's field
  if (r.main % g != 0) {
    bad.push_back({"main address", r.main,
                   athread
                       ? fmt::format("the host data starts {} bytes past a {}-byte boundary: start the transfer "
                                     "at an element whose byte offset in the array is a multiple of {} (an even "
                                     "element of a 2-byte array), or align the array (__attribute__((aligned({}))))",
                                     r.main % g, g, g, g)
                       : std::string("the tile starts at an odd fp16 element: pad this tensor at staging so every "
                                     "row/tile starts on a 4-byte boundary")});
  }
  if (r.ldm % g != 0) {
    bad.push_back({"ldm address", r.ldm,
                   athread ? fmt::format("the ldm buffer starts {} bytes past a {}-byte boundary: point at an element "
                                         "whose byte offset is a multiple of {} (ldm_malloc and aligned "
                                         "__thread_local arrays start aligned)",
                                         r.ldm % g, g, g)
                           : fmt::format("place the ldm buffer at a multiple of {} (ldm().alloc returns aligned "
                                         "buffers; offset into it by an even number of fp16 elements)",
                                         g)});
  }
  if (r.length % g != 0) {
    bad.push_back({"length", r.length,
                   athread ? fmt::format("transfer a byte count that is a multiple of {}: round it up to {} (an even "
                                         "number of 2-byte elements) and size both buffers for it",
                                         g, round_up(r.length, g))
                           : fmt::format("an odd number of fp16 elements: pad this tensor at staging, or round the "
                                         "length up to {}",
                                         round_up(r.length, g))});
  }
  if (r.bsize % g != 0) {
    bad.push_back({"bsize", r.bsize,
                   athread ? fmt::format("round the block size up to {} bytes (pad each row of the arrays to an even "
                                         "number of 2-byte elements)",
                                         round_up(r.bsize, g))
                           : fmt::format("round bsize up to {} (pad each row at staging)", round_up(r.bsize, g))});
  }
  if (r.stride % g != 0) {
    bad.push_back(
        {"stride", r.stride,
         athread
             ? fmt::format("round the stride up to {} bytes (pad the host array's row pitch)", round_up(r.stride, g))
             : fmt::format("round stride up to {} (pad the row pitch at staging)", round_up(r.stride, g))});
  }
  auto text = [g](const BadField& b) {
    return fmt::format("{} = {} (0x{:x}) is not a multiple of the {}-byte DMA granularity (it is {} mod {})", b.field,
                       b.value, b.value, g, b.value % g, g);
  };
  std::string what = text(bad.front());
  std::string hint = bad.front().hint;
  for (std::size_t i = 1; i < bad.size(); ++i) {  // the rest, each with its own fix
    what += "; also " + text(bad[i]);
    hint += fmt::format("; for {}: {}", bad[i].field, bad[i].hint);
  }
  return violation(FaultKind::kDmaMisaligned, r, bad.front().field, bad.front().value, std::move(what),
                   std::move(hint));
}

/// Whether `value` fits a descriptor field of `bits` bits.
bool fits(std::uint64_t value, std::uint32_t bits) {
  return bits >= 64 || value < (std::uint64_t{1} << bits);
}

/// check_shape()'s rules as plain tests, without building a violation: the path every valid request takes. Keep
/// it in step with the rules below: a rule missing here would let its requests through.
bool valid_shape(const DmaRequest& r, const Arch& arch, std::uint64_t ldm_bytes) {
  const auto& f = arch.dma.fields;
  return !(r.op == DmaOp::kPut && r.mode != DmaMode::kPe) &&
         !(r.mode == DmaMode::kBcast && (r.row_mask & ((1ull << arch.rows) - 1)) == 0) && r.length != 0 &&
         fits(r.length, f.length_bits) && fits(r.bsize, f.bsize_bits) && fits(r.stride, f.stride_bits) &&
         !(r.bsize == 0 && r.stride != 0) && !(r.bsize != 0 && r.length % r.bsize != 0) && r.ldm <= ldm_bytes &&
         r.length <= ldm_bytes - r.ldm;
}

std::optional<DmaViolation> check_shape(const DmaRequest& r, const Arch& arch, std::uint64_t ldm_bytes) {
  if (valid_shape(r, arch, ldm_bytes)) return std::nullopt;
  if (r.op == DmaOp::kPut && r.mode != DmaMode::kPe) {
    return violation(FaultKind::kInvalidArgument, r, "mode", static_cast<std::uint64_t>(r.mode),
                     fmt::format("{} mode is defined for get only", to_string(r.mode)),
                     "issue one PE-mode put per core");
  }
  if (r.mode == DmaMode::kBcast && (r.row_mask & ((1ull << arch.rows) - 1)) == 0) {
    return violation(FaultKind::kInvalidArgument, r, "row mask", r.row_mask, "the row mask selects no row of the group",
                     fmt::format("set bits 0..{} for the rows that should receive the data", arch.rows - 1));
  }
  if (r.length == 0) {
    return violation(FaultKind::kDmaFieldOverflow, r, "length", 0, "length must be > 0", "skip empty transfers");
  }
  const auto& f = arch.dma.fields;
  const std::uint64_t g = arch.dma.granularity_bytes;
  auto too_wide = [&](const char* field, std::uint64_t value, std::uint32_t bits) -> std::optional<DmaViolation> {
    if (fits(value, bits)) return std::nullopt;
    return violation(FaultKind::kDmaFieldOverflow, r, field, value,
                     fmt::format("{} = {} does not fit the descriptor's {}-bit field (max {})", field, value, bits,
                                 (1ull << bits) - 1),
                     fmt::format("split the transfer into requests of at most {} bytes", ((1ull << bits) - 1) / g * g));
  };
  if (auto v = too_wide("length", r.length, f.length_bits)) return v;
  if (auto v = too_wide("bsize", r.bsize, f.bsize_bits)) return v;
  if (auto v = too_wide("stride", r.stride, f.stride_bits)) return v;
  if (r.bsize == 0 && r.stride != 0) {
    return violation(FaultKind::kDmaFieldOverflow, r, "bsize", 0, "a stride needs a block size (bsize is 0)",
                     "set bsize to the bytes of each contiguous block");
  }
  if (r.bsize != 0 && r.length % r.bsize != 0) {
    return violation(FaultKind::kDmaFieldOverflow, r, "bsize", r.bsize,
                     fmt::format("length {} is not a whole number of {}-byte blocks", r.length, r.bsize),
                     fmt::format("make length a multiple of bsize (e.g. {} or {})", r.length / r.bsize * r.bsize,
                                 (r.length / r.bsize + 1) * r.bsize));
  }
  if (r.ldm > ldm_bytes || r.length > ldm_bytes - r.ldm) {
    return violation(FaultKind::kDmaOutOfBounds, r, "ldm address", r.ldm,
                     fmt::format("ldm range [0x{:x}, 0x{:x}) is outside the {}-byte local store", r.ldm,
                                 r.ldm + r.length, ldm_bytes),
                     "check the ldm buffer size and the tile length");
  }
  return std::nullopt;
}

}  // namespace

std::optional<DmaViolation> validate_fields(const DmaRequest& request, const Arch& arch, std::uint64_t ldm_bytes) {
  if (auto v = check_granularity(request, arch.dma.granularity_bytes)) return v;
  return check_shape(request, arch, ldm_bytes == 0 ? arch.ldm_bytes : ldm_bytes);
}

std::optional<DmaViolation> validate_shape(const DmaRequest& request, const Arch& arch, std::uint64_t ldm_bytes) {
  return check_shape(request, arch, ldm_bytes == 0 ? arch.ldm_bytes : ldm_bytes);
}

std::optional<DmaViolation> validate_main_range(const DmaRequest& request, const MainMemory& memory) {
  const std::uint64_t span = request.main_end() - request.main;
  if (request.main_end() >= request.main && memory.find_region(request.main, span) != nullptr) return std::nullopt;
  std::string where;
  if (const std::optional<Region> near = memory.nearest_region(request.main)) {
    where = fmt::format("; the nearest region is '{}' [0x{:x}, 0x{:x}) of {} bytes",
                        near->name.empty() ? "unnamed" : near->name, near->base, near->end(), near->bytes);
  } else {
    where = "; no region is allocated";
  }
  return violation(FaultKind::kDmaOutOfBounds, request, "main address", request.main,
                   fmt::format("main-memory range [0x{:x}, 0x{:x}) is not inside one live region{}", request.main,
                               request.main_end(), where),
                   "check the tile offset and length against the tensor's size (padding included)");
}

std::optional<DmaViolation> validate_replica_write(const DmaRequest& request, const MainMemory& memory) {
  if (request.op != DmaOp::kPut || !memory.has_replicas()) return std::nullopt;
  if (!memory.replica_of(request.main, request.main_end() - request.main, 0)) return std::nullopt;
  const Region* region = memory.find_region(request.main, request.main_end() - request.main);
  return violation(FaultKind::kInvalidArgument, request, "main address", request.main,
                   fmt::format("the put writes '{}', a constant held in every core group's memory (each group reads "
                               "its own copy, so one group's write would leave the others' stale)",
                               region == nullptr || region->name.empty() ? "unnamed" : region->name),
                   "write results into a tensor the op produces, never into a constant");
}

}  // namespace ldmsim
