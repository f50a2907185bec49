// Columnar DMA trace chunks and the per-group trace recorder: packing, unpacking and memory accounting.
// Recording is a range check and six column stores per event; the rare out-of-range case throws. A spilling
// recorder hands each full chunk to its TraceSpill and reuses the chunk's memory.
#include "ldmsim/trace/recorder.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "block.hpp"
#include "spill.hpp"

namespace ldmsim {
namespace {

constexpr std::uint64_t kU32Max = std::numeric_limits<std::uint32_t>::max();

[[noreturn]] void throw_unpackable(const DmaEvent& e) {
  std::string what = "DMA trace: event of core " + std::to_string(e.core) + " issued at cycle " +
                     std::to_string(e.issue) + " does not fit the trace packing: ";
  if (e.main >= DmaChunk::kMainLimit) {
    what += "main address " + std::to_string(e.main) + " >= 2^48";
  } else if (e.ldm >= DmaChunk::kLdmLimit) {
    what += "ldm address " + std::to_string(e.ldm) + " >= 2^24";
  } else if (e.start < e.issue) {
    what += "start cycle " + std::to_string(e.start) + " is before issue cycle " + std::to_string(e.issue);
  } else if (e.start - e.issue > kU32Max) {
    what += "start - issue = " + std::to_string(e.start - e.issue) + " >= 2^32";
  } else if (e.end < e.start) {
    what += "end cycle " + std::to_string(e.end) + " is before start cycle " + std::to_string(e.start);
  } else if (e.end - e.start > kU32Max) {
    what += "end - start = " + std::to_string(e.end - e.start) + " >= 2^32";
  } else {
    what += "op/mode/status out of range (" + std::to_string(static_cast<unsigned>(e.op)) + "/" +
            std::to_string(static_cast<unsigned>(e.mode)) + "/" + std::to_string(static_cast<unsigned>(e.status)) + ")";
  }
  throw std::length_error(what);
}

template <typename T>
std::size_t capacity_bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

}  // namespace

std::string_view to_string(MarkerKind k) noexcept {
  switch (k) {
    case MarkerKind::kLaunchBegin:
      return "launch begin";
    case MarkerKind::kLaunchEnd:
      return "launch end";
    case MarkerKind::kCoreExit:
      return "core exit";
    case MarkerKind::kBarrier:
      return "barrier";
    case MarkerKind::kFault:
      return "fault";
    case MarkerKind::kLintWarning:
      return "lint warning";
  }
  return "?";
}

void DmaChunk::reserve(std::size_t n) {
  issue.reserve(n);
  start_delta.reserve(n);
  duration.reserve(n);
  main48_core16.reserve(n);
  length.reserve(n);
  ldm24_flags8.reserve(n);
}

void DmaChunk::push(const DmaEvent& e) {
  const auto op = static_cast<std::uint32_t>(e.op);
  const auto mode = static_cast<std::uint32_t>(e.mode);
  const auto status = static_cast<std::uint32_t>(e.status);
  // One predictable branch covers every field; the slow path says which one overflowed.
  const bool fits = e.main < kMainLimit && e.ldm < kLdmLimit && e.start >= e.issue && e.start - e.issue <= kU32Max &&
                    e.end >= e.start && e.end - e.start <= kU32Max && op <= static_cast<std::uint32_t>(DmaOp::kPut) &&
                    mode <= static_cast<std::uint32_t>(DmaMode::kRow) &&
                    status <= static_cast<std::uint32_t>(DmaStatus::kLintWarning);
  if (!fits) [[unlikely]]
    throw_unpackable(e);
  if (e.bsize != 0 || e.stride != 0) {
    strided.push_back({static_cast<std::uint32_t>(issue.size()), e.bsize, e.stride});
  }
  issue.push_back(e.issue);
  start_delta.push_back(static_cast<std::uint32_t>(e.start - e.issue));
  duration.push_back(static_cast<std::uint32_t>(e.end - e.start));
  main48_core16.push_back(e.main | std::uint64_t{e.core} << 48);
  length.push_back(e.length);
  ldm24_flags8.push_back(e.ldm | op << kOpShift | mode << kModeShift | status << kStatusShift);
}

DmaEvent DmaChunk::at(std::size_t i) const {
  DmaEvent e;
  e.issue = issue[i];
  e.start = e.issue + start_delta[i];
  e.end = e.start + duration[i];
  e.main = main48_core16[i] & (kMainLimit - 1);
  e.core = static_cast<std::uint16_t>(main48_core16[i] >> 48);
  e.length = length[i];
  const std::uint32_t lf = ldm24_flags8[i];
  e.ldm = lf & (kLdmLimit - 1);
  e.op = static_cast<DmaOp>((lf >> kOpShift) & 1u);
  e.mode = static_cast<DmaMode>((lf >> kModeShift) & 3u);
  e.status = static_cast<DmaStatus>((lf >> kStatusShift) & 3u);
  if (!strided.empty()) {
    const auto it = std::lower_bound(strided.begin(), strided.end(), i,
                                     [](const Strided& s, std::size_t index) { return s.index < index; });
    if (it != strided.end() && it->index == i) {
      e.bsize = it->bsize;
      e.stride = it->stride;
    }
  }
  return e;
}

void DmaChunk::clear() {
  issue.clear();
  start_delta.clear();
  duration.clear();
  main48_core16.clear();
  length.clear();
  ldm24_flags8.clear();
  strided.clear();
}

std::size_t DmaChunk::payload_bytes() const {
  return size() * (2 * sizeof(std::uint64_t) + 4 * sizeof(std::uint32_t)) + strided.size() * sizeof(Strided);
}

TraceRecorder::TraceRecorder(int cg, bool enabled) : cg_(cg), enabled_(enabled) {}
TraceRecorder::~TraceRecorder() = default;
TraceRecorder::TraceRecorder(TraceRecorder&&) noexcept = default;
TraceRecorder& TraceRecorder::operator=(TraceRecorder&&) noexcept = default;

void TraceRecorder::spill_to(const std::filesystem::path& directory, TraceCodec codec) {
  if (spill_) {
    throw std::logic_error("TraceRecorder::spill_to: core group " + std::to_string(cg_) + " already spills to '" +
                           spill_directory_.string() + "'");
  }
  if (!chunks_.empty() || !markers_.empty()) {
    throw std::logic_error("TraceRecorder::spill_to: core group " + std::to_string(cg_) +
                           " has recorded already; choose spilling before recording");
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec)) {
    throw std::invalid_argument("trace spill directory '" + directory.string() + "' is not a directory" +
                                (ec ? ": " + ec.message() : std::string()));
  }
  spill_directory_ = directory;
  spill_codec_ = codec;
  spill_ = std::make_unique<detail::TraceSpill>(directory, cg_, codec);
}

void TraceRecorder::record(const DmaEvent& event) {
  if (!enabled_) return;
  if (chunks_.empty() || chunks_.back().full()) [[unlikely]] {
    if (spill_ && !chunks_.empty()) {
      // Recycle the open chunk: its pages are already committed, which is what makes recording cheap.
      spill_->append_dma(chunks_.back());
      chunks_.back().clear();
      chunks_.back().push(event);
      return;
    }
    DmaChunk chunk;
    chunk.reserve(DmaChunk::kCapacity);
    chunk.push(event);  // validate before the chunk becomes visible
    chunks_.push_back(std::move(chunk));
    return;
  }
  chunks_.back().push(event);
}

void TraceRecorder::mark(Marker marker) {
  if (!enabled_) return;
  if (spill_ && markers_.size() >= kSpillMarkers) [[unlikely]] {
    spill_->append_markers(markers_);
    markers_.clear();
  }
  markers_.push_back(std::move(marker));
}

void TraceRecorder::append_chunk(DmaChunk chunk) {
  if (chunk.size() == 0) return;
  chunks_.push_back(std::move(chunk));
}

std::uint64_t TraceRecorder::dma_count() const {
  std::uint64_t n = spill_ ? spill_->dma_events() : 0;
  for (const auto& chunk : chunks_) n += chunk.size();
  return n;
}

std::uint64_t TraceRecorder::marker_count() const {
  return (spill_ ? spill_->markers() : 0) + markers_.size();
}

void TraceRecorder::for_each_spilled_block(const std::function<void(std::span<const unsigned char>)>& f) const {
  if (spill_) spill_->for_each_block(f);
}

void TraceRecorder::for_each_chunk(const std::function<void(const DmaChunk&)>& f) const {
  if (spill_ && spill_->dma_events() > 0) {
    detail::BlockCodec codec;
    DmaChunk chunk;
    spill_->for_each_block([&](std::span<const unsigned char> block) {
      const auto h = detail::get_block_header(block.data());
      if (h.type != detail::kDmaBlock) return;
      codec.decode_dma(block.subspan(detail::kBlockHeaderBytes), h.codec, h.count, chunk);
      f(chunk);
    });
  }
  for (const auto& chunk : chunks_) f(chunk);
}

std::vector<Marker> TraceRecorder::markers() const {
  std::vector<Marker> out;
  if (spill_ && spill_->markers() > 0) {
    std::vector<Marker> block_markers;
    spill_->for_each_block([&](std::span<const unsigned char> block) {
      const auto h = detail::get_block_header(block.data());
      if (h.type != detail::kMarkersBlock) return;
      detail::decode_markers(block.subspan(detail::kBlockHeaderBytes), h.count, block_markers);
      std::move(block_markers.begin(), block_markers.end(), std::back_inserter(out));
    });
  }
  out.insert(out.end(), markers_.begin(), markers_.end());
  return out;
}

std::size_t TraceRecorder::memory_bytes() const {
  std::size_t bytes = capacity_bytes(chunks_) + capacity_bytes(markers_);
  for (const auto& c : chunks_) {
    bytes += capacity_bytes(c.issue) + capacity_bytes(c.start_delta) + capacity_bytes(c.duration) +
             capacity_bytes(c.main48_core16) + capacity_bytes(c.length) + capacity_bytes(c.ldm24_flags8) +
             capacity_bytes(c.strided);
  }
  for (const auto& m : markers_) {
    if (m.text.capacity() > std::string().capacity()) bytes += m.text.capacity() + 1;  // heap beyond SSO
  }
  if (spill_) bytes += sizeof(detail::TraceSpill) + spill_->memory_bytes();
  return bytes;
}

std::uint64_t TraceRecorder::spilled_bytes() const {
  return spill_ ? spill_->file_bytes() : 0;
}

void TraceRecorder::clear() {
  chunks_ = {};
  markers_ = {};
  if (spill_) spill_ = std::make_unique<detail::TraceSpill>(spill_directory_, cg_, spill_codec_);
}

}  // namespace ldmsim
