// Native Perfetto export (see perfetto_export.hpp). Protobuf is written by hand (varints and length-delimited
// fields): the subset is small, and a DMA request costs two short packets, deflated in batches.
#include "ldmsim/trace_analysis/perfetto_export.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "json_or.hpp"
#include "ldmsim/trace/file.hpp"

namespace ldmsim {

namespace {

/// A protobuf message being written: fields appended in any order.
class Proto {
 public:
  void varint(std::uint64_t v) {
    char buffer[10];  // one append per varint: byte-wise push_back was a fifth of the export's time
    std::size_t n = 0;
    while (v >= 0x80) {
      buffer[n++] = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    buffer[n++] = static_cast<char>(v);
    bytes_.append(buffer, n);
  }
  void uint_field(std::uint32_t field, std::uint64_t v) {
    varint(field << 3);
    varint(v);
  }
  void bytes_field(std::uint32_t field, std::string_view v) {
    varint(field << 3 | 2);
    varint(v.size());
    bytes_.append(v);
  }
  void message_field(std::uint32_t field, const Proto& m) { bytes_field(field, m.bytes_); }
  const std::string& bytes() const { return bytes_; }
  void clear() { bytes_.clear(); }

 private:
  std::string bytes_;
};

// Field numbers of Perfetto's protos (trace_analysis/proto/perfetto_trace_subset.proto).
namespace packet {
constexpr std::uint32_t kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kInternedData = 12, kSequenceFlags = 13,
                        kCompressedPackets = 50, kTrackDescriptor = 60;
}
namespace event {
constexpr std::uint32_t kDebugAnnotations = 4, kType = 9, kNameIid = 10, kTrackUuid = 11, kName = 23;
constexpr std::uint64_t kSliceBegin = 1, kSliceEnd = 2;
}  // namespace event
constexpr std::uint32_t kSequence = 1;
constexpr std::uint64_t kIncrementalStateCleared = 1, kNeedsIncrementalState = 2;
// Interned names: event names and debug annotation names.
constexpr std::uint64_t kGet = 1, kPut = 2, kBytes = 1, kBound = 2;
constexpr std::uint64_t kLayersUuid = 1, kLayersTrackUuid = 2;
/// Uncompressed packet bytes per deflated batch.
constexpr std::size_t kBatchBytes = 1 << 20;

// Track uuids: small numbers, since every event names its track (a varint of 2-4 bytes). 1 and 2 are the layers'.
constexpr std::uint64_t kFirstGroupUuid = 16, kFirstLaneUuid = 1024;
constexpr std::size_t kMaxLanes = 64;
std::uint64_t group_uuid(int cg) {
  return kFirstGroupUuid + 2 * static_cast<std::uint64_t>(cg);
}
std::uint64_t launches_uuid(int cg) {
  return group_uuid(cg) + 1;
}
/// Lane `lane` (< kMaxLanes) of core `core`. Requests past the 64th in flight on one core share the last lane (its
/// slices then nest less neatly; no kernel keeps that many requests of one core in flight).
std::uint64_t lane_uuid(int cg, int core, std::size_t lane) {
  return kFirstLaneUuid + ((static_cast<std::uint64_t>(cg) << 16 | static_cast<std::uint64_t>(core)) << 6) + lane;
}

class PerfettoWriter {
 public:
  PerfettoWriter(const nlohmann::json& header, std::ostream& out, PerfettoOptions options)
      : out_(out), options_(options) {
    const trace_detail::HeaderArch arch = trace_detail::header_arch(header);
    ns_per_cycle_ = 1e9 / arch.clock_hz;
    cols_ = arch.cols;
    Proto interned, p;
    intern(interned, 2, kGet, "get");
    intern(interned, 2, kPut, "put");
    intern(interned, 3, kBytes, "bytes");
    intern(interned, 3, kBound, "bound");
    p.uint_field(packet::kSequenceId, kSequence);
    p.uint_field(packet::kSequenceFlags, kIncrementalStateCleared);
    p.message_field(packet::kInternedData, interned);
    emit(p);
  }

  void add(const TraceBlock& block) {
    if (block.kind == TraceBlockKind::kDma) {
      for (std::size_t i = 0; i < block.chunk.size(); ++i) add_event(block.cg, block.chunk.at(i));
    } else {
      for (const Marker& m : block.markers) add_marker(block.cg, m);
    }
  }

  void add_layers(const std::vector<LayerSpan>& layers) {
    if (layers.empty()) return;
    describe_track(kLayersUuid, 0, "layers", true);
    describe_track(kLayersTrackUuid, kLayersUuid, "layers", false);
    for (const LayerSpan& l : layers) {
      slice(l.start, kLayersTrackUuid, event::kSliceBegin, 0, l.name, [&l](Proto& e) {
        Proto bound;
        bound.uint_field(1, kBound);
        bound.bytes_field(6, l.bound);
        e.message_field(event::kDebugAnnotations, bound);
      });
      slice(l.end, kLayersTrackUuid, event::kSliceEnd, 0, {}, nullptr);
    }
  }

  ExportCounts finish() {
    flush();
    out_.flush();
    if (!out_) throw std::runtime_error("writing the Perfetto trace failed");
    return counts_;
  }

 private:
  static void intern(Proto& interned, std::uint32_t field, std::uint64_t iid, std::string_view name) {
    Proto entry;
    entry.uint_field(1, iid);
    entry.bytes_field(2, name);
    interned.message_field(field, entry);
  }

  std::uint64_t ns(Cycle c) const {
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(c) * ns_per_cycle_));
  }

  void describe_track(std::uint64_t uuid, std::uint64_t parent, const std::string& name, bool process) {
    Proto d, p;
    d.uint_field(1, uuid);
    if (process) {
      Proto proc;
      proc.uint_field(1, uuid);  // a pid of its own
      proc.bytes_field(6, name);
      d.message_field(3, proc);
    } else {
      d.bytes_field(2, name);
      d.uint_field(5, parent);
    }
    p.message_field(packet::kTrackDescriptor, d);
    emit(p);
  }

  template <typename Annotate>
  void slice(Cycle at, std::uint64_t track, std::uint64_t type, std::uint64_t name_iid, std::string_view name,
             const Annotate& annotate) {
    event_.clear();
    event_.uint_field(event::kType, type);
    event_.uint_field(event::kTrackUuid, track);
    if (name_iid != 0) event_.uint_field(event::kNameIid, name_iid);
    if (!name.empty()) event_.bytes_field(event::kName, name);
    if constexpr (!std::is_same_v<Annotate, std::nullptr_t>) annotate(event_);
    packet_.clear();
    packet_.uint_field(packet::kTimestamp, ns(at));
    packet_.uint_field(packet::kSequenceId, kSequence);
    packet_.uint_field(packet::kSequenceFlags, kNeedsIncrementalState);
    packet_.message_field(packet::kTrackEvent, event_);
    emit(packet_);
  }

  void add_event(int cg, const DmaEvent& e) {
    if (!groups_.contains(cg)) {
      groups_.emplace(cg, std::map<int, std::vector<Cycle>>{});
      describe_track(group_uuid(cg), 0, "cg " + std::to_string(cg), true);
    }
    if (cg != lanes_cg_) {
      lanes_ = &groups_[cg];
      lanes_cg_ = cg;
    }
    std::vector<Cycle>& lanes = (*lanes_)[e.core];
    std::size_t lane = 0;
    while (lane < lanes.size() && lanes[lane] > e.issue) ++lane;  // a slice must not overlap another on its track
    if (lane == kMaxLanes) lane = kMaxLanes - 1;
    if (lane == lanes.size()) {
      lanes.push_back(0);
      const std::string core = std::to_string(e.core / cols_) + "," + std::to_string(e.core % cols_);
      describe_track(lane_uuid(cg, e.core, lane), group_uuid(cg),
                     "core " + core + (lane == 0 ? std::string() : " dma " + std::to_string(lane)), false);
    }
    lanes[lane] = e.end;
    const std::uint64_t track = lane_uuid(cg, e.core, lane);
    const std::uint64_t length = e.length;
    slice(e.issue, track, event::kSliceBegin, e.op == DmaOp::kGet ? kGet : kPut, {}, [length](Proto& ev) {
      // DebugAnnotation {name_iid: bytes, uint_value: length}, written in place (no message of its own per event).
      std::size_t varint_bytes = 1;
      for (std::uint64_t v = length; v >= 0x80; v >>= 7) ++varint_bytes;
      ev.varint(event::kDebugAnnotations << 3 | 2);
      ev.varint(2 + 1 + varint_bytes);
      ev.uint_field(1, kBytes);
      ev.uint_field(3, length);
    });
    slice(e.end, track, event::kSliceEnd, 0, {}, nullptr);
    ++counts_.requests;
  }

  void add_marker(int cg, const Marker& m) {
    if (m.kind != MarkerKind::kLaunchBegin && m.kind != MarkerKind::kLaunchEnd) return;
    if (!launch_tracks_.contains(cg)) {
      if (!groups_.contains(cg)) {
        groups_.emplace(cg, std::map<int, std::vector<Cycle>>{});
        describe_track(group_uuid(cg), 0, "cg " + std::to_string(cg), true);
      }
      launch_tracks_[cg] = false;
      describe_track(launches_uuid(cg), group_uuid(cg), "launches", false);
    }
    bool& open = launch_tracks_[cg];
    if (m.kind == MarkerKind::kLaunchBegin && !open) {
      slice(m.cycle, launches_uuid(cg), event::kSliceBegin, 0,
            m.text.empty() ? std::string_view("launch") : std::string_view(m.text), nullptr);
      open = true;
    } else if (m.kind == MarkerKind::kLaunchEnd && open) {
      slice(m.cycle, launches_uuid(cg), event::kSliceEnd, 0, {}, nullptr);
      open = false;
    }
    ++counts_.markers;
  }

  /// Appends one packet to the Trace (field 1), deflating the batch once it is large.
  void emit(const Proto& p) {
    pending_.push_back(static_cast<char>(1 << 3 | 2));
    std::uint64_t n = p.bytes().size();
    while (n >= 0x80) {
      pending_.push_back(static_cast<char>(n | 0x80));
      n >>= 7;
    }
    pending_.push_back(static_cast<char>(n));
    pending_.append(p.bytes());
    if (pending_.size() >= kBatchBytes) flush();
  }

  void flush() {
    if (pending_.empty()) return;
    if (!options_.compress) {
      out_.write(pending_.data(), static_cast<std::streamsize>(pending_.size()));
    } else {
      uLongf size = compressBound(static_cast<uLong>(pending_.size()));
      deflated_.resize(size);
      if (compress2(reinterpret_cast<Bytef*>(deflated_.data()), &size, reinterpret_cast<const Bytef*>(pending_.data()),
                    static_cast<uLong>(pending_.size()), Z_BEST_SPEED) != Z_OK) {
        throw std::runtime_error("deflating Perfetto packets failed");
      }
      Proto p;
      p.bytes_field(packet::kCompressedPackets, std::string_view(deflated_.data(), size));
      Proto framed;
      framed.bytes_field(1, p.bytes());
      out_.write(framed.bytes().data(), static_cast<std::streamsize>(framed.bytes().size()));
    }
    pending_.clear();
  }

  std::ostream& out_;
  PerfettoOptions options_;
  double ns_per_cycle_ = 1.0;
  int cols_ = 1;
  std::map<int, std::map<int, std::vector<Cycle>>> groups_;  ///< per group, per core: each lane's last end
  std::map<int, std::vector<Cycle>>* lanes_ = nullptr;       ///< groups_[lanes_cg_]: blocks come group by group
  int lanes_cg_ = -1;
  std::map<int, bool> launch_tracks_;  ///< per group: a launch slice is open
  Proto event_, packet_;
  std::string pending_, deflated_;
  ExportCounts counts_;
};

}  // namespace

ExportCounts export_perfetto(const std::filesystem::path& trace, std::ostream& out,
                             const std::vector<LayerSpan>& layers, PerfettoOptions options) {
  TraceReader reader(trace);
  PerfettoWriter writer(reader.header(), out, options);
  TraceBlock block;
  while (reader.next(block)) writer.add(block);
  writer.add_layers(layers);
  return writer.finish();
}

}  // namespace ldmsim
