// Matrix blocks to and from ldm (see matrix_block.hpp).
#include "ldmsim/kernels/matrix_block.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

namespace ldmsim::tiling {
namespace {

/// True when a request with these byte fields fits the arch's descriptor widths.

/// piece_count (matrix_block.hpp) for an engine of `channels` channels.
std::size_t channel_piece_count(std::size_t channels, std::size_t bytes) {
  constexpr std::size_t kMinPieceBytes = 2048;
  return std::clamp<std::size_t>(bytes / kMinPieceBytes, 1, channels);
}

/// Strided requests a block read is cut into: whole rows per piece.
std::size_t strided_pieces(const Core& core, const BlockShape& block, std::size_t width) {
  return std::min(piece_count(core, block.rows * width * sizeof(f16)), block.rows);
}

/// Contiguous pieces of a span read of `length` elements, cut at even elements so every piece stays 4-byte legal.
template <typename Visit>
void for_each_span_piece(const Core& core, std::size_t length, Visit&& visit) {
  const std::size_t pieces = piece_count(core, length * sizeof(f16));
  for (std::size_t p = 0; p < pieces; ++p) {
    const std::size_t from = floor_even(length * p / pieces),
                      to = p + 1 == pieces ? length : floor_even(length * (p + 1) / pieces);
    if (to > from) visit(from, to);
  }
}

/// Engine time of the strided reads of `block` (runs widened to `width` elements from `start`).
double strided_cost(const Core& core, DevicePtr<const f16> start, const BlockShape& block, std::size_t width) {
  const std::size_t pieces = strided_pieces(core, block, width);
  double cycles = 0;
  for (std::size_t p = 0; p < pieces; ++p) {
    const std::size_t r0 = block.rows * p / pieces, r1 = block.rows * (p + 1) / pieces;
    const DeviceAddr at = (start + r0 * block.pitch).addr();
    cycles += r1 - r0 == 1 ? core.get_service_cycles(at, width * sizeof(f16))
                           : core.get_service_cycles(at, (r1 - r0) * width * sizeof(f16), width * sizeof(f16),
                                                     (block.pitch - width) * sizeof(f16));
  }
  return cycles;
}

/// Engine time of reading `length` elements from `start` contiguously, in span_pieces.
double span_cost(const Core& core, DevicePtr<const f16> start, std::size_t length) {
  if (!fits_fields(core, length * sizeof(f16), 0, 0)) return std::numeric_limits<double>::infinity();
  double cycles = 0;
  for_each_span_piece(core, length, [&](std::size_t from, std::size_t to) {
    cycles += core.get_service_cycles((start + from).addr(), (to - from) * sizeof(f16));
  });
  return cycles;
}

}  // namespace

double block_read_cost(const Core& core, DevicePtr<const f16> base, std::size_t total, const BlockShape& block,
                       std::size_t buffer) {
  if (block.rows == 0 || block.count == 0) return 0;
  const std::size_t begin = floor_even(block.first);
  const std::size_t width = ceil_even(block.first + block.count) - begin;
  const std::size_t last_end = begin + (block.rows - 1) * block.pitch + width;
  // get_block's choices, in its order.
  if (block.pitch % 2 == 0 && block.pitch >= width && last_end <= total &&
      fits_fields(core, block.rows * width * sizeof(f16), width * sizeof(f16), (block.pitch - width) * sizeof(f16))) {
    const double strided = strided_cost(core, base + begin, block, width);
    const std::size_t span = last_end - begin;
    return block.pitch > width && block.gaps_readable && span <= buffer
               ? std::min(strided, span_cost(core, base + begin, span))
               : strided;
  }
  const std::size_t span_end = block.first + (block.rows - 1) * block.pitch + block.count;
  const std::size_t end = ceil_even(span_end) <= total ? ceil_even(span_end) : span_end;
  if (block.gaps_readable && end - begin <= buffer && fits_fields(core, (end - begin) * sizeof(f16), 0, 0)) {
    return span_cost(core, base + begin, end - begin);
  }
  double cycles = 0;
  for (std::size_t r = 0; r < block.rows; ++r) {
    const std::size_t at = block.first + r * block.pitch;
    const std::size_t from = floor_even(at), to = std::min(total, ceil_even(at + block.count));
    cycles += core.get_service_cycles((base + from).addr(), (to - from) * sizeof(f16));
  }
  return cycles;
}

std::size_t piece_count(const Core& core, std::size_t bytes) {
  return channel_piece_count(core.dma_channels(), bytes);
}

bool fits_fields(const Core& core, std::size_t length, std::size_t bsize, std::size_t stride) {
  const DmaFieldWidths& f = core.arch().dma.fields;
  const auto below = [](std::size_t v, std::uint32_t bits) { return bits >= 64 || v < (std::uint64_t{1} << bits); };
  return below(length, f.length_bits) && below(bsize, f.bsize_bits) && below(stride, f.stride_bits);
}

/// Reads `length` contiguous elements from `start` into buf[0, length) in span pieces, all in flight at once.
void read_span(Core& core, ReadMode mode, LdmSpan<f16> buf, DevicePtr<const f16> start, std::size_t length,
               BlockRead& read, std::source_location site) {
  read.strided_ = true;
  for_each_span_piece(core, length, [&](std::size_t from, std::size_t to) {
    read.handles_.push_back(get_as(core, mode, buf.subspan(from, to - from), start + from, 0, 0, site));
  });
}

BlockRead get_block(Core& core, LdmSpan<f16> buf, DevicePtr<const f16> base, std::size_t total, const BlockShape& block,
                    ReadMode mode, std::source_location site) {
  BlockRead read;
  if (block.rows == 0 || block.count == 0) return read;
  const std::size_t begin = floor_even(block.first);
  const std::size_t width = ceil_even(block.first + block.count) - begin;
  const std::size_t last_end = begin + (block.rows - 1) * block.pitch + width;
  const std::size_t bytes = block.rows * width * sizeof(f16);
  if (block.pitch % 2 == 0 && block.pitch >= width && last_end <= total &&
      fits_fields(core, bytes, width * sizeof(f16), (block.pitch - width) * sizeof(f16))) {
    // Small runs with gaps: the whole span, gaps included, may cost the engine less than the strided blocks
    // (each block pays its own partial and realigned transactions).
    const std::size_t span = last_end - begin;
    if (block.pitch > width && block.gaps_readable && span <= buf.size() &&
        span_cost(core, base + begin, span) < strided_cost(core, base + begin, block, width)) {
      read_span(core, mode, buf, base + begin, span, read, site);
      read.first_ = block.first - begin;
      read.row_elements_ = block.pitch;
      return read;
    }
    read.strided_ = true;
    read.first_ = block.first - begin;
    read.row_elements_ = width;
    const std::size_t pieces = strided_pieces(core, block, width);
    for (std::size_t p = 0; p < pieces; ++p) {
      const std::size_t r0 = block.rows * p / pieces, r1 = block.rows * (p + 1) / pieces;
      auto dst = buf.subspan(r0 * width, (r1 - r0) * width);
      const DevicePtr<const f16> src = base + begin + r0 * block.pitch;
      if (block.pitch == width || r1 - r0 == 1) {
        read.handles_.push_back(get_as(core, mode, dst, src, 0, 0, site));
      } else {
        read.handles_.push_back(
            get_as(core, mode, dst, src, width * sizeof(f16), (block.pitch - width) * sizeof(f16), site));
      }
    }
    return read;
  }
  // An odd pitch: when the rows nearly fill their span (a window of whole input rows), one contiguous read of
  // the span, gaps included, beats a request per row.
  const std::size_t span_end = block.first + (block.rows - 1) * block.pitch + block.count;
  const std::size_t end = ceil_even(span_end) <= total ? ceil_even(span_end) : span_end;
  if (block.gaps_readable && end - begin <= buf.size() && fits_fields(core, (end - begin) * sizeof(f16), 0, 0)) {
    read_span(core, mode, buf, base + begin, end - begin, read, site);
    read.first_ = block.first - begin;
    read.row_elements_ = block.pitch;
    return read;
  }
  const std::size_t slot = ceil_even(block.count) + 2;
  for (std::size_t r = 0; r < block.rows; ++r) {
    const std::size_t at = block.first + r * block.pitch;
    RangeRead one = get_range_as(core, mode, buf.subspan(r * slot, slot), base, total, {at, at + block.count}, site);
    read.handles_.push_back(one.handle);
    read.starts_.push_back(r * slot + one.first);
  }
  return read;
}

std::vector<DmaHandle> put_block(Core& core, DevicePtr<f16> base, LdmSpan<f16> buf, const BlockShape& block,
                                 std::source_location site) {
  std::vector<DmaHandle> handles;
  if (block.rows == 0 || block.count == 0) return handles;
  const std::size_t elements = block.rows * block.count;
  const LdmSpan<const f16> src(buf.first(elements));
  const std::size_t gap = block.pitch - block.count;
  if (block.rows == 1 || gap == 0) {
    handles.push_back(core.put(base + block.first, src, site));
  } else if (fits_fields(core, elements * sizeof(f16), block.count * sizeof(f16), gap * sizeof(f16))) {
    handles.push_back(core.put_strided(base + block.first, src, block.count * sizeof(f16), gap * sizeof(f16), site));
  } else {
    for (std::size_t r = 0; r < block.rows; ++r) {
      handles.push_back(core.put(base + block.first + r * block.pitch,
                                 LdmSpan<const f16>(buf.subspan(r * block.count, block.count)), site));
    }
  }
  return handles;
}

// ---- ReadPricer ----

namespace {
std::uint64_t next_pricer_id() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

/// Gets of `mode` that `arch`'s timing model starts at once when they are issued together (at most its channels):
/// a model may serve BCAST gets one at a time on a channel of their own.
double concurrent_gets(const Arch& arch, DmaMode mode) {
  const std::size_t channels = arch.dma.channels();
  if (mode == DmaMode::kPe) return static_cast<double>(channels);
  const std::unique_ptr<TimingModel> model = make_timing_model(arch);
  DmaRequest r;
  r.op = DmaOp::kGet;
  r.mode = mode;
  r.main = 1 << 20;
  r.length = std::max<std::uint32_t>(arch.dma.transaction_bytes, 4);
  std::size_t together = 0;
  while (together < channels && model->schedule(r, 0, 0).start == 0) ++together;
  return static_cast<double>(std::max<std::size_t>(together, 1));
}

}  // namespace

ReadPricer::ReadPricer(const Arch& arch, DmaMode mode)
    : model_(make_timing_model(arch)),
      transaction_bytes_(arch.dma.transaction_bytes),
      mode_(mode),
      channels_(static_cast<double>(arch.dma.channels())),
      concurrent_(concurrent_gets(arch, mode)),
      arch_(&arch),
      start_period_(std::lcm<std::size_t>(transaction_bytes_, 4) / sizeof(f16)),
      id_(next_pricer_id()) {
  // A request's own cost: one run alone minus what the run adds.
  overhead_ = std::max(0.0, service(1, 0, 4) - run_at(0, 4));
}

ReadPricer::~ReadPricer() = default;

bool ReadPricer::memos_full() const {
  // The memos grow with the distinct queries. A run length's memo holds a cost per 2-byte offset within a
  // transaction, so the run memo is also bounded by its costs: at most 2^24 (128 MiB).
  constexpr std::size_t kMaxQueries = std::size_t{1} << 18;  // block memo at most 2^20 slots of 32 bytes
  constexpr std::size_t kMaxRunCosts = std::size_t{1} << 24;
  return blocks_.size() > kMaxQueries || runs_.size() > kMaxQueries ||
         runs_.size() * (transaction_bytes_ / 2 + 1) > kMaxRunCosts;
}

double ReadPricer::service(std::size_t runs, std::size_t offset, std::size_t run_bytes) const {
  DmaRequest r;
  r.mode = mode_;
  r.main = kPriceBase + offset;
  r.length = runs * run_bytes;
  if (runs > 1) {  // runs a whole number of transactions apart (the same alignment), never touching
    r.bsize = run_bytes;
    r.stride = (run_bytes / transaction_bytes_ + 2) * transaction_bytes_ - run_bytes;
  }
  return model_->service_cycles(r);
}

std::vector<double>& ReadPricer::run_costs(std::size_t bytes) const {
  const auto [it, added] = runs_.try_emplace(bytes);
  // Runs start on elements: even byte offsets below a transaction.
  if (added) it->second.assign(transaction_bytes_ / 2 + 1, std::numeric_limits<double>::quiet_NaN());
  return it->second;
}

double ReadPricer::run_at(std::size_t offset, std::size_t bytes) const {
  return run_in(run_costs(bytes), offset, bytes);
}

double ReadPricer::run_in(std::vector<double>& costs, std::size_t offset, std::size_t bytes) const {
  double& cost = costs[offset / 2];
  if (std::isnan(cost)) cost = std::max(0.0, service(2, offset, bytes) - service(1, offset, bytes));
  return cost;
}

double ReadPricer::run(std::optional<std::size_t> byte_offset, std::size_t bytes) const {
  if (byte_offset) return run_at(*byte_offset % transaction_bytes_, bytes);
  double sum = 0;  // unknown: the average over the 4-byte offsets within a transaction (one below 4 bytes)
  for (std::size_t offset = 0; offset < transaction_bytes_; offset += 4) sum += run_at(offset, bytes);
  return sum * 4 / static_cast<double>(std::max<std::uint32_t>(transaction_bytes_, 4));
}

double ReadPricer::span(std::optional<std::size_t> first, std::size_t elements) const {
  const std::size_t pieces = channel_piece_count(static_cast<std::size_t>(channels_), elements * sizeof(f16));
  double cycles = 0;
  for (std::size_t p = 0; p < pieces; ++p) {
    const std::size_t from = floor_even(elements * p / pieces),
                      to = p + 1 == pieces ? elements : floor_even(elements * (p + 1) / pieces);
    if (to <= from) continue;
    const auto offset = first ? std::optional<std::size_t>((*first + from) * sizeof(f16)) : std::nullopt;
    cycles += overhead_ + run(offset, (to - from) * sizeof(f16));
  }
  return cycles;
}

double ReadPricer::strided(std::optional<std::size_t> first, std::size_t rows, std::size_t width,
                           std::size_t pitch) const {
  const std::size_t pieces =
      std::min(channel_piece_count(static_cast<std::size_t>(channels_), rows * width * sizeof(f16)), rows);
  double cycles = static_cast<double>(pieces) * overhead_;
  if (!first) return cycles + static_cast<double>(rows) * run(std::nullopt, width * sizeof(f16));
  // Run offsets within a transaction repeat: price one period of rows and scale.
  const std::size_t period = std::min<std::size_t>(rows, transaction_elements());
  const std::size_t bytes = width * sizeof(f16);
  std::vector<double>& costs = run_costs(bytes);
  double runs = 0;
  // Row r starts (first + r * pitch) * 2 bytes in, modulo a transaction: stepped without a division per row.
  const std::size_t step = pitch * sizeof(f16) % transaction_bytes_;
  for (std::size_t r = 0, offset = *first * sizeof(f16) % transaction_bytes_; r < period; ++r) {
    runs += run_in(costs, offset, bytes);
    offset += step;
    if (offset >= transaction_bytes_) offset -= transaction_bytes_;
  }
  return cycles + runs * static_cast<double>(rows) / static_cast<double>(period);
}

std::size_t ReadPricer::BlockQueryHash::operator()(const BlockQuery& q) const {
  return hash_words({q.first_known ? 1u : 0u, q.rows, q.count, q.pitch, q.buffer, q.first});
}

double ReadPricer::block(std::size_t rows, std::size_t count, std::size_t pitch, std::size_t buffer,
                         std::optional<std::size_t> first) const {
  // Only where the block starts within a transaction matters (every run's cost is taken at its offset modulo a
  // transaction) and whether it starts on an even element (runs are widened to even bounds): blocks whose starts
  // differ by whole periods of both share one price.
  if (first) first = *first % start_period_;
  constexpr std::size_t kMax = std::numeric_limits<std::uint32_t>::max();
  if (rows > kMax || count > kMax || pitch > kMax || buffer > kMax ||
      start_period_ > std::numeric_limits<std::uint16_t>::max()) {
    return price_block(rows, count, pitch, buffer, first);  // beyond the memo's fields: priced each time
  }
  const BlockQuery query{static_cast<std::uint32_t>(rows),
                         static_cast<std::uint32_t>(count),
                         static_cast<std::uint32_t>(pitch),
                         static_cast<std::uint32_t>(buffer),
                         static_cast<std::uint16_t>(first.value_or(0)),
                         first.has_value()};
  return blocks_.get_or(query, [&] { return price_block(rows, count, pitch, buffer, first); });
}

double ReadPricer::block_unkept(std::size_t rows, std::size_t count, std::size_t pitch, std::size_t buffer,
                                std::optional<std::size_t> first) const {
  if (first) first = *first % start_period_;  // as block(): the same price for the same query
  return price_block(rows, count, pitch, buffer, first);
}

double ReadPricer::price_block(std::size_t rows, std::size_t count, std::size_t pitch, std::size_t buffer,
                               std::optional<std::size_t> first) const {
  if (rows == 0 || count == 0) return 0;
  // As get_block: runs widened to even bounds.
  const std::optional<std::size_t> begin = first ? std::optional<std::size_t>(floor_even(*first)) : std::nullopt;
  const std::size_t width = first ? ceil_even(*first + count) - *begin : ceil_even(count);
  if (rows == 1 || pitch == width) return span(begin, rows * width);
  if (pitch % 2 == 0 && pitch > width) {  // the strided read, or the span when cheaper and it fits
    const double runs = strided(begin, rows, width, pitch);
    const std::size_t span_elements = (rows - 1) * pitch + width;
    return span_elements <= buffer ? std::min(runs, span(begin, span_elements)) : runs;
  }
  const std::size_t span_elements = (rows - 1) * pitch + count + 1;  // an odd pitch: the span, or a read per run
  if (span_elements <= buffer) return span(begin, span_elements);
  double cycles = 0;
  for (std::size_t r = 0; r < std::min<std::size_t>(rows, transaction_bytes_); ++r) {
    const auto at = first ? std::optional<std::size_t>(floor_even(*first + r * pitch)) : std::nullopt;
    cycles += span(at, count + 1);
  }
  return cycles * static_cast<double>(rows) / static_cast<double>(std::min<std::size_t>(rows, transaction_bytes_));
}

}  // namespace ldmsim::tiling
