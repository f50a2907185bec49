// A DMA request as a kernel issues it: direction, mode, addresses, length and the strided layout.
#pragma once

#include <cstdint>
#include <string_view>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// Direction: get = main memory -> ldm, put = ldm -> main memory.
enum class DmaOp : std::uint8_t { kGet = 0, kPut = 1 };

/// Delivery mode, as in athread. PE: the issuing core's ldm. BCAST (get only): the same ldm range of every
/// core of the group whose row is in row_mask. ROW (get only): every core of the issuing core's row.
enum class DmaMode : std::uint8_t { kPe = 0, kBcast = 1, kRow = 2 };

std::string_view to_string(DmaOp op) noexcept;
std::string_view to_string(DmaMode mode) noexcept;

/// One request. With bsize == 0 the main-memory side is contiguous. With bsize > 0 the main-memory side is
/// length / bsize blocks of bsize bytes, block i starting at main + i * (bsize + stride) (stride = bytes
/// skipped between blocks, athread's meaning); the ldm side is always contiguous. length must then be a
/// multiple of bsize.
struct DmaRequest {
  DmaOp op = DmaOp::kGet;
  DmaMode mode = DmaMode::kPe;
  DeviceAddr main = 0;
  std::uint64_t ldm = 0;  ///< ldm offset (validated to fit LdmAddr)
  std::uint64_t length = 0;
  std::uint64_t bsize = 0;
  std::uint64_t stride = 0;
  std::uint32_t row_mask = ~0u;  ///< BCAST: rows that receive the data
  std::string_view api = "dma";  ///< the API call that issued it, for diagnostics ("Core::get", "athread_get")
  /// BCAST/ROW get: the receivers other than the first get their copies when they read them (Core::ready_ldm) or
  /// their range is next touched, not when the request lands (DeferredCopies). For kernels whose receivers read
  /// such buffers through Core::ready_ldm only; time, trace and results are the same either way.
  bool replicate_on_read = false;

  bool strided() const { return bsize != 0; }
  std::uint64_t block_bytes() const { return bsize != 0 ? bsize : length; }
  std::uint64_t block_count() const { return bsize != 0 ? length / bsize : 1; }
  std::uint64_t block_pitch() const { return bsize + stride; }
  /// One past the last main-memory byte touched.
  DeviceAddr main_end() const { return main + (block_count() - 1) * block_pitch() + block_bytes(); }
};

}  // namespace ldmsim
