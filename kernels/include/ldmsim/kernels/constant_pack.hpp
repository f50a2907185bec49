// Constant packing (docs/splitting.md, "Constant packs"): one pack per core holding the slices of an op's constant
// inputs that core reads, behind a marker area of their sizes and offsets. The control core builds and stages the
// packs before the op runs; each core fetches its own with one DMA instead of one read per constant.
//
// A pack is 32-bit words (little-endian, as the device stores them):
//   word 0: kPackMagic; word 1: entry count E; word 2: the pack's bytes (marker area and values);
//   then per entry 4 words: input, begin, count, byte offset of its values;
//   then the values, fp16, each entry's starting on a word.
// Entry i holds `count` values of op input `input` from logical index `begin`, wrapping at the input's length
// (a cyclic channel range).
#pragma once

#include <cstdint>
#include <source_location>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "ldmsim/runtime/core.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace ldmsim::packing {

inline constexpr std::uint32_t kPackMagic = 0x4b50444cu;  // "LDPK"
inline constexpr std::size_t kHeaderWords = 3, kEntryWords = 4;

/// One constant's slice in a pack.
struct PackEntry {
  std::uint32_t input = 0;   ///< the op's input index
  std::uint32_t begin = 0;   ///< first logical index
  std::uint32_t count = 0;   ///< values, from begin, wrapping at the input's length
  std::uint32_t offset = 0;  ///< bytes from the pack's start to the values (set when the pack is built)
  bool operator==(const PackEntry&) const = default;
};

/// What an op's kernel reads, per core: entries (input, begin, count) for each worker (tiling::worker_index order)
/// of the machine it runs on; a worker without entries gets no pack. Constants the op derives itself (conv's
/// offset table, as fp16 bit pairs) are `derived`, packed as inputs number (op inputs + i).
struct PackPlan {
  std::vector<std::vector<PackEntry>> cores;
  std::vector<std::vector<f16>> derived;
};

/// Bytes of the pack of `entries` (marker area and values).
std::size_t build_size(std::span<const PackEntry> entries);

/// A malformed pack: names the field and its value.
class PackError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Builds one core's pack from `entries` (offsets are assigned) and the logical values of every op input
/// (`inputs[i]`; only the entries' inputs are read). Throws PackError for an entry whose input is missing or empty,
/// or whose count exceeds the input's length.
std::vector<std::byte> build_pack(std::span<const PackEntry> entries, std::span<const std::span<const f16>> inputs);

/// A pack's marker area checked against its bytes, and its values.
class PackView {
 public:
  /// Parses `bytes` (a whole pack; the view keeps pointing into them). Throws PackError naming the field when the
  /// magic, the entry count, the byte size or an entry's offset or count does not fit the bytes given.
  static PackView parse(std::span<const std::byte> bytes);
  std::span<const PackEntry> entries() const { return entries_; }
  /// Entry i's values.
  std::span<const f16> values(std::size_t i) const;
  /// The index of the first entry of `input`. Throws PackError when there is none.
  std::size_t find(std::uint32_t input) const;

 private:
  std::span<const std::byte> bytes_;
  std::vector<PackEntry> entries_;
};

/// Where each worker's pack was staged, for the kernel's arguments (addr 0: that worker has none).
struct StagedPacks {
  std::vector<DeviceAddr> addr;
  std::vector<std::uint32_t> bytes;
  std::uint32_t max_bytes = 0;
  std::size_t total_bytes = 0;
  bool empty() const { return max_bytes == 0; }
};

/// This core's pack (tiling::worker_index) read into `buffer` (at least max_bytes / 2 elements) by one get: wait
/// for `handle`, then parse `bytes` of the buffer. No handle and 0 bytes when the core has no pack.
struct PackFetch {
  DmaHandle handle;
  std::size_t bytes = 0;
  std::span<const std::byte> data(LdmSpan<f16> buffer) const { return std::as_bytes(buffer.span()).first(bytes); }
};
PackFetch fetch_pack(Core& core, const StagedPacks& packs, LdmSpan<f16> buffer,
                     std::source_location site = std::source_location::current());

/// An ldm buffer for any core's pack: on a DMA transaction and a whole number of them long, so the buffers a
/// kernel allocates after it keep the alignment they would have without it.
LdmSpan<f16> alloc_pack_buffer(Core& core, const StagedPacks& packs);

}  // namespace ldmsim::packing
