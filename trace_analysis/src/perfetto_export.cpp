// Native Perfetto export (see perfetto_export.hpp). Protobuf is written by hand: the subset is small, and a DMA
// request costs two short packets written straight into the output batch. A first pass over the markers alone
// gives each group's launches, so every request can name its kernel as it streams by.
#include "ldmsim/trace_analysis/perfetto_export.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

#include "json_or.hpp"
#include "ldmsim/trace/file.hpp"
#include "packet_batches.hpp"
#include "proto_writer.hpp"

namespace ldmsim {

namespace {

using proto::Message;
using proto::put_varint;

// Field numbers of Perfetto's protos (trace_analysis/proto/perfetto_trace_subset.proto).
namespace packet {
constexpr std::uint32_t kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kInternedData = 12, kSequenceFlags = 13,
                        kTrackDescriptor = 60;
}
namespace event {
constexpr std::uint32_t kDebugAnnotations = 4, kType = 9, kNameIid = 10, kTrackUuid = 11;
constexpr std::uint64_t kSliceBegin = 1, kSliceEnd = 2;
}  // namespace event
namespace interned {
constexpr std::uint32_t kEventNames = 2, kDebugAnnotationNames = 3, kDebugAnnotationStringValues = 29;
}
constexpr std::uint32_t kSequence = 1;
constexpr std::uint64_t kIncrementalStateCleared = 1;
// Interned debug annotation names.
constexpr std::uint64_t kBytesName = 1, kBoundName = 2, kLayerName = 3, kKernelName = 4;
// Interned strings (event names and annotation string values share the numbering): 1 and 2 are fixed.
constexpr std::uint64_t kGet = 1, kPut = 2;
/// Interned strings per packet of interned data (keeps each packet far below a batch).
constexpr std::size_t kStringsPerPacket = 1024;

// Track uuids: small numbers, since every event names its track (a varint of 2-4 bytes). 1 and 2 are the layers'.
constexpr std::uint64_t kLayersUuid = 1, kLayersTrackUuid = 2;
constexpr std::uint64_t kFirstGroupUuid = 16, kFirstLaneUuid = 1024;
/// Requests past the 64th in flight on one core share the last lane (its slices then nest less neatly; no kernel
/// keeps that many requests of one core in flight).
constexpr std::size_t kMaxLanes = 64;
std::uint64_t group_uuid(int cg) {
  return kFirstGroupUuid + 2 * static_cast<std::uint64_t>(cg);
}
std::uint64_t launches_uuid(int cg) {
  return group_uuid(cg) + 1;
}
/// Two packets of a request: each at most 2 + 11 + 2 + 2 + 2 + 11 + 2 + 11 + 2 * 16 bytes.
constexpr std::size_t kMaxRequestBytes = 2 * 96;

/// Distinct strings numbered from 1 in order of first use.
class StringTable {
 public:
  StringTable() {
    id("get");
    id("put");
  }
  std::uint64_t id(const std::string& s) {
    const auto [it, added] = ids_.try_emplace(s, strings_.size() + 1);
    if (added) strings_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string, std::uint64_t> ids_;
  std::vector<std::string> strings_;
};

/// One launch of a group: [begin, end] in cycles, its kernel's string id. A launch with no end marker (a fault
/// stopped the run) lasts to the end of time.
struct Launch {
  Cycle begin = 0;
  Cycle end = std::numeric_limits<Cycle>::max();
  std::uint64_t kernel = 0;
  bool ended = false;
};

/// The first pass: each group's launches, from the markers alone (DMA payloads are skipped unread).
std::vector<std::vector<Launch>> read_launches(const std::filesystem::path& trace, StringTable& strings,
                                               std::uint64_t& markers) {
  std::vector<std::vector<Launch>> launches;
  TraceReader reader(trace);
  reader.skip_dma(true);
  TraceBlock block;
  while (reader.next(block)) {
    if (block.kind != TraceBlockKind::kMarkers) continue;
    const auto cg = static_cast<std::size_t>(block.cg);  // the reader checks 0 <= cg < kMaxCoreGroups
    if (launches.size() <= cg) launches.resize(cg + 1);
    std::vector<Launch>& group = launches[cg];
    for (const Marker& m : block.markers) {
      const bool open = !group.empty() && !group.back().ended;
      if (m.kind == MarkerKind::kLaunchBegin && !open) {
        group.push_back({m.cycle, std::numeric_limits<Cycle>::max(), strings.id(m.text.empty() ? "launch" : m.text)});
        ++markers;
      } else if (m.kind == MarkerKind::kLaunchEnd && open) {
        group.back().end = std::max(m.cycle, group.back().begin);
        group.back().ended = true;
        ++markers;
      }
    }
  }
  for (auto& group : launches) {  // markers come in cycle order; a hostile file may not
    std::stable_sort(group.begin(), group.end(), [](const Launch& a, const Launch& b) { return a.begin < b.begin; });
  }
  return launches;
}

/// Spans sorted by start, each with a string id: finds the one holding a cycle, remembering the last answer
/// (requests of a group come in issue order, so the answer rarely moves).
class SpanIndex {
 public:
  struct Span {
    Cycle start = 0;
    Cycle end = 0;
    std::uint64_t id = 0;
  };
  explicit SpanIndex(std::vector<Span> spans) : spans_(std::move(spans)) {
    std::stable_sort(spans_.begin(), spans_.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  }

  /// The id of the latest-starting span holding `t` (0: none); `cursor` is the caller's memory of the last one.
  std::uint64_t at(Cycle t, std::size_t& cursor) const {
    if (cursor < spans_.size()) {
      const Span& s = spans_[cursor];
      if (s.start <= t && t <= s.end && (cursor + 1 == spans_.size() || spans_[cursor + 1].start > t)) return s.id;
    }
    auto it = std::upper_bound(spans_.begin(), spans_.end(), t, [](Cycle c, const Span& s) { return c < s.start; });
    // Spans overlap only where runs run side by side (several models on one node): look back a little.
    for (int look = 0; it != spans_.begin() && look < 16; ++look) {
      --it;
      if (it->end >= t) {
        cursor = static_cast<std::size_t>(it - spans_.begin());
        return it->id;
      }
    }
    return 0;
  }

 private:
  std::vector<Span> spans_;
};

class PerfettoWriter {
 public:
  PerfettoWriter(const nlohmann::json& header, std::ostream& out, PerfettoOptions options)
      : batches_(out, options.compression) {
    const trace_detail::HeaderArch arch = trace_detail::header_arch(header);
    ns_per_cycle_ = 1e9 / arch.clock_hz;
    cols_ = static_cast<unsigned>(arch.cols);
  }

  /// Interned names, then the launches and layers (all known before the requests stream by).
  void start(const StringTable& strings, const std::vector<std::vector<Launch>>& launches,
             const std::vector<LayerSpan>& layers, const std::vector<std::uint64_t>& layer_ids) {
    const std::vector<std::string>& all = strings.strings();
    for (std::size_t first = 0; first == 0 || first < all.size(); first += kStringsPerPacket) {
      Message names, p;
      if (first == 0) {
        intern(names, interned::kDebugAnnotationNames, kBytesName, "bytes");
        intern(names, interned::kDebugAnnotationNames, kBoundName, "bound");
        intern(names, interned::kDebugAnnotationNames, kLayerName, "layer");
        intern(names, interned::kDebugAnnotationNames, kKernelName, "kernel");
      }
      for (std::size_t i = first; i < std::min(all.size(), first + kStringsPerPacket); ++i) {
        intern(names, interned::kEventNames, i + 1, all[i]);
        intern(names, interned::kDebugAnnotationStringValues, i + 1, all[i]);
      }
      p.uint_field(packet::kSequenceId, kSequence);
      if (first == 0) p.uint_field(packet::kSequenceFlags, kIncrementalStateCleared);
      p.message_field(packet::kInternedData, names);
      batches_.append_packet(p.bytes());
    }
    for (std::size_t cg = 0; cg < launches.size(); ++cg) {
      if (launches[cg].empty()) continue;
      const int g = static_cast<int>(cg);
      group(g);
      describe_track(launches_uuid(g), group_uuid(g), "launches", false);
      for (const Launch& l : launches[cg]) {
        slice(l.begin, launches_uuid(g), event::kSliceBegin, l.kernel, nullptr);
        if (l.ended) slice(l.end, launches_uuid(g), event::kSliceEnd, 0, nullptr);
      }
    }
    if (layers.empty()) return;
    describe_track(kLayersUuid, 0, "layers", true);
    describe_track(kLayersTrackUuid, kLayersUuid, "layers", false);
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const LayerSpan& l = layers[i];
      slice(l.start, kLayersTrackUuid, event::kSliceBegin, layer_ids[i], [&l](Message& e) {
        Message bound;
        bound.uint_field(1, kBoundName);
        bound.bytes_field(6, l.bound);
        e.message_field(event::kDebugAnnotations, bound);
      });
      slice(l.end, kLayersTrackUuid, event::kSliceEnd, 0, nullptr);
    }
  }

  void add_requests(int cg, const DmaChunk& c, const SpanIndex& layers, const SpanIndex* kernels) {
    Group& g = group(cg);
    for (std::size_t i = 0; i < c.size(); ++i) {
      const Cycle issue = c.issue[i];
      const Cycle end = issue + c.start_delta[i] + c.duration[i];
      const auto core = static_cast<unsigned>(c.main48_core16[i] >> 48);
      if (core >= g.lanes.size()) g.lanes.resize(core + 1);
      std::vector<Lane>& lanes = g.lanes[core];
      std::size_t lane = 0;
      while (lane < lanes.size() && lanes[lane].end > issue) ++lane;  // a slice must not overlap another on its track
      if (lane == kMaxLanes) lane = kMaxLanes - 1;
      if (lane == lanes.size()) {
        lanes.push_back({0, next_lane_uuid_++});
        const std::string name = "core " + std::to_string(core / cols_) + "," + std::to_string(core % cols_);
        describe_track(lanes[lane].uuid, group_uuid(cg), lane == 0 ? name : name + " dma " + std::to_string(lane),
                       false);
      }
      lanes[lane].end = end;
      const bool put = ((c.ldm24_flags8[i] >> DmaChunk::kOpShift) & 1u) != 0;
      const std::uint64_t layer = layers.at(issue, g.layer_cursor);
      const std::uint64_t kernel = kernels != nullptr ? kernels->at(issue, g.kernel_cursor) : 0;
      write_request(ns(issue), ns(end), lanes[lane].uuid, put ? kPut : kGet, c.length[i], layer, kernel);
    }
    counts_.requests += c.size();
  }

  ExportCounts finish(std::uint64_t markers) {
    batches_.finish();
    counts_.markers = markers;
    return counts_;
  }

 private:
  /// A track of a core's requests: the last end on it, and its uuid (numbered as lanes appear, so most take two
  /// bytes as a varint).
  struct Lane {
    Cycle end = 0;
    std::uint64_t uuid = 0;
  };
  struct Group {
    std::vector<std::vector<Lane>> lanes;  ///< per core
    std::size_t layer_cursor = 0;
    std::size_t kernel_cursor = 0;
  };

  static void intern(Message& interned, std::uint32_t field, std::uint64_t iid, std::string_view name) {
    Message entry;
    entry.uint_field(1, iid);
    entry.bytes_field(2, name);
    interned.message_field(field, entry);
  }

  std::uint64_t ns(Cycle c) const {
    const double t = static_cast<double>(c) * ns_per_cycle_ + 0.5;
    return t < 1.8e19 ? static_cast<std::uint64_t>(t) : std::numeric_limits<std::uint64_t>::max();
  }

  Group& group(int cg) {
    const auto index = static_cast<std::size_t>(cg);
    if (groups_.size() <= index) groups_.resize(index + 1);
    if (!groups_[index]) {
      groups_[index] = std::make_unique<Group>();
      describe_track(group_uuid(cg), 0, "cg " + std::to_string(cg), true);
    }
    return *groups_[index];
  }

  void describe_track(std::uint64_t uuid, std::uint64_t parent, const std::string& name, bool process) {
    Message d, p;
    d.uint_field(1, uuid);
    if (process) {
      Message proc;
      proc.uint_field(1, uuid);  // a pid of its own
      proc.bytes_field(6, name);
      d.message_field(3, proc);
    } else {
      d.bytes_field(2, name);
      d.uint_field(5, parent);
    }
    p.message_field(packet::kTrackDescriptor, d);
    batches_.append_packet(p.bytes());
  }

  /// A slice begin or end off the hot path (launches, layers).
  template <typename Annotate>
  void slice(Cycle at, std::uint64_t track, std::uint64_t type, std::uint64_t name_iid, const Annotate& annotate) {
    Message e, p;
    e.uint_field(event::kType, type);
    e.uint_field(event::kTrackUuid, track);
    if (name_iid != 0) e.uint_field(event::kNameIid, name_iid);
    if constexpr (!std::is_same_v<Annotate, std::nullptr_t>) annotate(e);
    p.uint_field(packet::kTimestamp, ns(at));
    p.uint_field(packet::kSequenceId, kSequence);
    p.message_field(packet::kTrackEvent, e);
    batches_.append_packet(p.bytes());
  }

  /// DebugAnnotation {name_iid, uint_value or string_value_iid} at `at`.
  static char* annotation(char* at, std::uint64_t name, bool string_iid, std::uint64_t value) {
    *at++ = static_cast<char>(event::kDebugAnnotations << 3 | 2);
    char* length = at++;
    *at++ = 1 << 3;
    at = put_varint(at, name);
    if (string_iid) {  // field 17: a two-byte key
      *at++ = static_cast<char>(0x88);
      *at++ = 0x01;
    } else {
      *at++ = 3 << 3;
    }
    at = put_varint(at, value);
    *length = static_cast<char>(at - length - 1);
    return at;
  }

  /// Both packets of a request, written in place: every length fits one byte (kMaxRequestBytes).
  void write_request(std::uint64_t begin_ns, std::uint64_t end_ns, std::uint64_t track, std::uint64_t name,
                     std::uint32_t bytes, std::uint64_t layer, std::uint64_t kernel) {
    char* const first = batches_.reserve(kMaxRequestBytes);
    char* at = first;
    for (int end = 0; end < 2; ++end) {
      char* const packet_start = at;
      at += 2;  // Trace.packet key and length
      *at++ = packet::kTimestamp << 3;
      at = put_varint(at, end ? end_ns : begin_ns);
      *at++ = packet::kSequenceId << 3;
      *at++ = kSequence;
      char* const event_start = at;
      at += 2;  // TracePacket.track_event key and length
      *at++ = event::kType << 3;
      *at++ = static_cast<char>(end ? event::kSliceEnd : event::kSliceBegin);
      *at++ = event::kTrackUuid << 3;
      at = put_varint(at, track);
      if (!end) {
        *at++ = event::kNameIid << 3;
        *at++ = static_cast<char>(name);
        at = annotation(at, kBytesName, false, bytes);
        if (layer != 0) at = annotation(at, kLayerName, true, layer);
        if (kernel != 0) at = annotation(at, kKernelName, true, kernel);
      }
      event_start[0] = static_cast<char>(packet::kTrackEvent << 3 | 2);
      event_start[1] = static_cast<char>(at - event_start - 2);
      packet_start[0] = static_cast<char>(1 << 3 | 2);
      packet_start[1] = static_cast<char>(at - packet_start - 2);
    }
    batches_.commit(at);
  }

  PacketBatches batches_;
  double ns_per_cycle_ = 1.0;
  unsigned cols_ = 1;
  std::vector<std::unique_ptr<Group>> groups_;
  std::uint64_t next_lane_uuid_ = kFirstLaneUuid;
  ExportCounts counts_;
};

}  // namespace

ExportCounts export_perfetto(const std::filesystem::path& trace, std::ostream& out,
                             const std::vector<LayerSpan>& layers, PerfettoOptions options) {
  StringTable strings;
  std::uint64_t markers = 0;
  const std::vector<std::vector<Launch>> launches = read_launches(trace, strings, markers);
  std::vector<std::uint64_t> layer_ids;
  std::vector<SpanIndex::Span> layer_spans;
  for (const LayerSpan& l : layers) {
    layer_ids.push_back(strings.id(l.name));
    layer_spans.push_back({l.start, l.end, layer_ids.back()});
  }
  const SpanIndex layer_index(std::move(layer_spans));
  std::vector<SpanIndex> kernel_index;
  for (const auto& group : launches) {
    std::vector<SpanIndex::Span> spans;
    for (const Launch& l : group) spans.push_back({l.begin, l.end, l.kernel});
    kernel_index.emplace_back(std::move(spans));
  }

  TraceReader reader(trace);
  PerfettoWriter writer(reader.header(), out, options);
  writer.start(strings, launches, layers, layer_ids);
  TraceBlock block;
  while (reader.next(block)) {
    if (block.kind != TraceBlockKind::kDma) continue;
    const auto cg = static_cast<std::size_t>(block.cg);
    writer.add_requests(block.cg, block.chunk, layer_index, cg < kernel_index.size() ? &kernel_index[cg] : nullptr);
  }
  return writer.finish(markers);
}

}  // namespace ldmsim
