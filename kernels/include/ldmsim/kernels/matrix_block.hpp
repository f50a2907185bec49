// Blocks of a row-major matrix in device memory moved to and from ldm in as few DMA requests as the 4-byte rule
// allows: `rows` runs of `count` elements, run r starting at element first + r * pitch. With an even pitch the
// block is one strided request (each run widened to even bounds; one contiguous request when the runs touch);
// with an odd pitch, runs alternate in parity: one contiguous request of the whole span when it fits the buffer
// (rows that nearly fill it), else one request per run, all in flight at once.
#pragma once

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <unordered_map>
#include <vector>

#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/kernels/tiling.hpp"
#include "ldmsim/sim/flat_memo.hpp"

namespace ldmsim::tiling {

/// The shape of a block: rows x count elements, rows `pitch` elements apart, the first at element `first`.
struct BlockShape {
  std::size_t first = 0;
  std::size_t pitch = 0;
  std::size_t rows = 0;
  std::size_t count = 0;
  /// False when the bytes between the rows belong to another writer (a box of a larger buffer): never read across.
  bool gaps_readable = true;
};

/// Whether a request of `length` bytes, runs of `bsize` and gaps of `stride` bytes fits the arch's DMA fields.
bool fits_fields(const Core& core, std::size_t length, std::size_t bsize, std::size_t stride);

/// How many requests to cut a read of `bytes` into: the timing model serves requests on parallel channels, so
/// one big request moves at a channel's share of the bandwidth; pieces of at least 2 KiB (smaller ones pay a
/// request's setup for little), at most one per channel.
std::size_t piece_count(const Core& core, std::size_t bytes);

/// Elements of ldm a block read needs (each run widened by up to 2 elements).
inline std::size_t block_buffer_elements(std::size_t rows, std::size_t count) {
  return rows * (ceil_even(count) + 2);
}

/// Elements of ldm a block read needs when it may be read as its whole span, gaps included (get_block does when
/// that costs the engine less than the strided runs): the span's when that is at most 4 times the runs' (each run
/// widened by up to 2 elements), else the runs'.
inline std::size_t block_or_span_elements(std::size_t rows, std::size_t count, std::size_t pitch) {
  const std::size_t runs = block_buffer_elements(rows, count);
  if (rows < 2) return runs;
  const std::size_t span = (rows - 1) * pitch + ceil_even(count) + 2;
  return span <= 4 * runs ? std::max(runs, span) : runs;
}

/// A block read in flight: wait(), then run r's elements start at buf[start(r)].
class BlockRead {
 public:
  void wait() {
    for (DmaHandle& h : handles_) h.wait();
    handles_.clear();
  }
  std::size_t start(std::size_t row) const { return strided_ ? first_ + row * row_elements_ : starts_[row]; }
  /// The requests' handles: one or two of them held in place (a read allocates nothing for them).
  using Handles = boost::container::small_vector<DmaHandle, 2>;
  /// Moves the requests' handles out (the caller waits for them).
  Handles take_handles() { return std::move(handles_); }

 private:
  friend BlockRead get_block(Core&, LdmSpan<f16>, DevicePtr<const f16>, std::size_t, const BlockShape&, ReadMode,
                             std::source_location);
  friend void read_span(Core&, ReadMode, LdmSpan<f16>, DevicePtr<const f16>, std::size_t, BlockRead&,
                        std::source_location);
  Handles handles_;
  bool strided_ = false;
  std::size_t first_ = 0, row_elements_ = 0;
  std::vector<std::size_t> starts_;
};

/// Issues the reads of `block` of a device buffer of `total` elements into buf (block_buffer_elements). `site`: the
/// kernel code they are made for (tiling::get_as).
BlockRead get_block(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, std::size_t total, const BlockShape& block,
                    ReadMode mode = ReadMode::kPe, std::source_location site = std::source_location::current());

/// Prices block reads the way get_block issues them (strided or span, cut into pieces) with the arch's own DMA
/// timing model. Where a block starts is given in elements from a transaction-aligned base (device buffers are);
/// unknown, each run's cost is averaged over the 4-byte offsets within a transaction. The control core ranks
/// blockings with it; no core is involved. Its memos are kept as long as the pricer: the layers of a network ask for
/// many of the same blocks.
class ReadPricer {
 public:
  /// Prices gets issued in `mode`: PE, or BCAST (a team leader's reads for its whole group, which a model may
  /// serve on a channel of its own).
  explicit ReadPricer(const Arch& arch, DmaMode mode = DmaMode::kPe);
  ~ReadPricer();
  ReadPricer(const ReadPricer&) = delete;
  ReadPricer& operator=(const ReadPricer&) = delete;
  /// True when its memos grew past their bound: a long-lived keeper (a machine's planning state) then starts
  /// afresh with a new pricer. Prices are a pure function of the query, so that changes no price.
  bool memos_full() const;
  /// Engine cycles (channel service, summed over requests) of get_block of rows x count elements, `pitch`
  /// apart, the first at element `first`, into a buffer of `buffer` elements.
  double block(std::size_t rows, std::size_t count, std::size_t pitch, std::size_t buffer,
               std::optional<std::size_t> first = std::nullopt) const;
  /// block()'s price, not kept in its memo: for queries that seldom repeat (a put's blocks at each alignment, whose
  /// sum the caller keeps), which would only grow the memo.
  double block_unkept(std::size_t rows, std::size_t count, std::size_t pitch, std::size_t buffer,
                      std::optional<std::size_t> first = std::nullopt) const;
  /// Unique to this pricer (never reused in the process): a key for memos of prices kept beside it.
  std::uint64_t id() const { return id_; }
  /// Requests of this pricer's mode a group's engine serves at once (its channels; for BCAST, as many as the model
  /// starts together).
  double channels() const { return concurrent_; }
  /// Elements of f16 in one transaction: reads whose starts differ by a multiple of it cost the same.
  /// (At least 1: with transactions of 1 byte every element starts aligned.)
  std::size_t transaction_elements() const { return std::max<std::size_t>(1, transaction_bytes_ / sizeof(f16)); }

 private:
  /// Service of one request of `runs` runs of `run_bytes`, each starting `offset` bytes into a transaction.
  double service(std::size_t runs, std::size_t offset, std::size_t run_bytes) const;
  /// What one run of `bytes` adds to a request, starting `offset` bytes into a transaction.
  double run_at(std::size_t offset, std::size_t bytes) const;
  /// ... at a byte offset from an aligned base, or averaged over the alignments when unknown.
  double run(std::optional<std::size_t> byte_offset, std::size_t bytes) const;
  /// A contiguous read of `elements` from element `first`, in get_block's pieces.
  double span(std::optional<std::size_t> first, std::size_t elements) const;
  /// get_block's strided requests: rows runs of width elements, pitch apart.
  double strided(std::optional<std::size_t> first, std::size_t rows, std::size_t width, std::size_t pitch) const;

  static constexpr DeviceAddr kPriceBase = 1 << 20;  // any transaction-aligned address: only alignment matters
  std::unique_ptr<TimingModel> model_;
  std::uint32_t transaction_bytes_;
  DmaMode mode_;
  double channels_ = 1;    // the engine's channels: get_block cuts reads into pieces for them
  double concurrent_ = 1;  // requests of mode_ served at once
  double overhead_ = 0;
  const Arch* arch_;
  /// Elements after which a block's start prices the same again (block()'s key; a division, so computed once).
  std::size_t start_period_;
  std::uint64_t id_;
  /// What block() is asked; the control core ranks thousands of blockings whose reads repeat.
  struct BlockQuery {
    std::uint32_t rows, count, pitch, buffer;  // narrow fields: with its value a memo slot takes 32 bytes, not 64
    std::uint16_t first;                       ///< within a start period
    bool first_known;
    bool operator==(const BlockQuery&) const = default;
  };
  struct BlockQueryHash {
    std::size_t operator()(const BlockQuery& q) const;
  };
  double price_block(std::size_t rows, std::size_t count, std::size_t pitch, std::size_t buffer,
                     std::optional<std::size_t> first) const;
  /// run_at's costs of runs of `bytes`, by 2-byte offset (runs start on elements) within a transaction (NaN: not
  /// priced yet).
  std::vector<double>& run_costs(std::size_t bytes) const;
  /// run_at with its run_costs table at hand.
  double run_in(std::vector<double>& costs, std::size_t offset, std::size_t bytes) const;
  mutable std::unordered_map<std::size_t, std::vector<double>> runs_;  // memo: bytes -> run_costs
  mutable FlatMemo<BlockQuery, double, BlockQueryHash> blocks_;        // memo of block()
};

/// Writes rows x count elements packed in buf (row r at buf[r * count]) to `block` of a device buffer. The caller
/// owns whole 4-byte words: block.first and count even with an even pitch, or (odd pitch) count == pitch and
/// block.first even, so the rows form one contiguous even range. Returns the handles to wait for.
std::vector<DmaHandle> put_block(Core& core, DevicePtr<f16> base, LdmSpan<f16> buf, const BlockShape& block,
                                 std::source_location site = std::source_location::current());

/// Engine time (channel service, summed over requests) get_block spends reading `block` of a device buffer of `total`
/// elements at `base` into a buffer of `buffer` elements, as it would issue the reads.
double block_read_cost(const Core& core, DevicePtr<const f16> base, std::size_t total, const BlockShape& block,
                       std::size_t buffer);

/// Reads `runs` of a device buffer of `total` elements, run i into to[i] (ldm), through `buf`: consecutive runs of
/// one length, each the same pitch after the one before, go as one block read (get_block: one strided request, or
/// the span) as many as buf holds, when that costs the engine less than a request per run (a strided request pays
/// per block too: on some engines more than the runs' own requests); any other run is read on its own, in pieces
/// of buf (a widened read of one element takes 3). buf holds at least 3 elements (std::logic_error otherwise).
/// Without `gaps_readable` (a box of a larger buffer) no read spans the gaps between runs. Blocks until done.
void read_runs(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, std::size_t total, std::span<const Run> runs,
               std::span<f16* const> to, bool gaps_readable = true,
               std::source_location site = std::source_location::current());

}  // namespace ldmsim::tiling
