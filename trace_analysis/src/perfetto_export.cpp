// Native Perfetto export (see perfetto_export.hpp). Protobuf is written by hand: the subset is small, and a DMA
// request costs two short packets written straight into the output batch. A first pass over the markers alone
// gives each group's launches, so every request can name its kernel as it streams by.
#include "ldmsim/trace_analysis/perfetto_export.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
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
constexpr std::uint64_t kBytesName = 1, kBoundName = 2, kLayerName = 3, kKernelName = 4, kPeerName = 5;
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
/// A rank's own tracks, after its uuid base (the rank's process): its MPI calls.
constexpr std::uint64_t kMpiTrack = 1;
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

/// One MPI call of a rank (its trace header's "mpi" record, docs/athread.md): cycles on the rank's clock.
struct MpiCall {
  std::uint64_t name = 0;  ///< string id
  Cycle begin = 0;
  Cycle end = 0;
  std::int64_t peer = -1;
  std::uint64_t bytes = 0;
};

/// The calls listed in a header's mpi.calls ([name, begin, end, peer, bytes, ...] rows: later columns, such as the
/// wait, are not exported); malformed rows are skipped.
std::vector<MpiCall> read_mpi_calls(const nlohmann::json& header, StringTable& strings) {
  std::vector<MpiCall> calls;
  const auto mpi = header.find("mpi");
  if (mpi == header.end() || !mpi->is_object()) return calls;
  const auto list = mpi->find("calls");
  if (list == mpi->end() || !list->is_array()) return calls;
  for (const nlohmann::json& row : *list) {
    if (!row.is_array() || row.size() < 5 || !row[0].is_string() || !row[1].is_number_unsigned() ||
        !row[2].is_number_unsigned() || !row[3].is_number_integer() || !row[4].is_number_unsigned()) {
      continue;
    }
    const auto begin = row[1].get<Cycle>();
    const auto end = std::max(begin, row[2].get<Cycle>());
    calls.push_back(
        {strings.id(row[0].get<std::string>()), begin, end, row[3].get<std::int64_t>(), row[4].get<std::uint64_t>()});
  }
  std::stable_sort(calls.begin(), calls.end(), [](const MpiCall& a, const MpiCall& b) { return a.begin < b.begin; });
  return calls;
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
  PerfettoWriter(std::ostream& out, PerfettoOptions options) : batches_(out, options.compression) {}

  /// Every interned string, once, before any event (all are known after the first pass).
  void intern_all(const StringTable& strings) {
    const std::vector<std::string>& all = strings.strings();
    for (std::size_t first = 0; first == 0 || first < all.size(); first += kStringsPerPacket) {
      Message names, p;
      if (first == 0) {
        intern(names, interned::kDebugAnnotationNames, kBytesName, "bytes");
        intern(names, interned::kDebugAnnotationNames, kBoundName, "bound");
        intern(names, interned::kDebugAnnotationNames, kLayerName, "layer");
        intern(names, interned::kDebugAnnotationNames, kKernelName, "kernel");
        intern(names, interned::kDebugAnnotationNames, kPeerName, "peer");
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
  }

  /// Starts the tracks of one trace file: its groups are processes of their own, or with `rank` tracks under the
  /// process "rank R" (an MPI run's rank), whose uuids stay apart from every other rank's.
  void begin_trace(const nlohmann::json& header, std::optional<int> rank) {
    const trace_detail::HeaderArch arch = trace_detail::header_arch(header);
    ns_per_cycle_ = 1e9 / arch.clock_hz;
    cols_ = static_cast<unsigned>(arch.cols);
    groups_.clear();
    rank_ = rank;
    uuid_base_ = rank ? (static_cast<std::uint64_t>(*rank) + 1) << 32 : 0;
    if (rank)
      describe_track(uuid_base_, 0, "rank " + std::to_string(*rank), true, static_cast<std::uint64_t>(*rank) + 1);
  }

  /// Each group's launches as slices named by their kernels.
  void add_launches(const std::vector<std::vector<Launch>>& launches) {
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
  }

  void add_layers(const std::vector<LayerSpan>& layers, const std::vector<std::uint64_t>& layer_ids) {
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

  /// A rank's MPI calls as slices of its "MPI" track, named by the call, with the peer and bytes.
  void add_mpi_calls(const std::vector<MpiCall>& calls) {
    if (calls.empty() || !rank_) return;
    const std::uint64_t track = uuid_base_ + kMpiTrack;
    describe_track(track, uuid_base_, "MPI", false);
    for (const MpiCall& c : calls) {
      slice(c.begin, track, event::kSliceBegin, c.name, [&c](Message& e) {
        Message peer, bytes;
        peer.uint_field(1, kPeerName);
        peer.uint_field(4, static_cast<std::uint64_t>(c.peer));  // int64: two's complement, as protobuf has it
        bytes.uint_field(1, kBytesName);
        bytes.uint_field(3, c.bytes);
        e.message_field(event::kDebugAnnotations, peer);
        e.message_field(event::kDebugAnnotations, bytes);
      });
      slice(c.end, track, event::kSliceEnd, 0, nullptr);
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

  /// The requests of one trace file, block by block.
  void add_requests(TraceReader& reader, const SpanIndex& layers, const std::vector<SpanIndex>& kernels) {
    TraceBlock block;
    while (reader.next(block)) {
      if (block.kind != TraceBlockKind::kDma) continue;
      const auto cg = static_cast<std::size_t>(block.cg);
      add_requests(block.cg, block.chunk, layers, cg < kernels.size() ? &kernels[cg] : nullptr);
    }
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

  std::uint64_t group_uuid(int cg) const { return uuid_base_ + kFirstGroupUuid + 2 * static_cast<std::uint64_t>(cg); }
  std::uint64_t launches_uuid(int cg) const { return group_uuid(cg) + 1; }

  Group& group(int cg) {
    const auto index = static_cast<std::size_t>(cg);
    if (groups_.size() <= index) groups_.resize(index + 1);
    if (!groups_[index]) {
      groups_[index] = std::make_unique<Group>();
      // A group is a process of its own, or a track under its rank's process.
      describe_track(group_uuid(cg), rank_ ? uuid_base_ : 0, "cg " + std::to_string(cg), !rank_);
    }
    return *groups_[index];
  }

  void describe_track(std::uint64_t uuid, std::uint64_t parent, const std::string& name, bool process,
                      std::uint64_t pid = 0) {
    Message d, p;
    d.uint_field(1, uuid);
    if (process) {
      Message proc;
      proc.uint_field(1, pid != 0 ? pid : uuid);  // a pid of its own
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
  std::optional<int> rank_;      ///< the trace being written is this MPI rank's
  std::uint64_t uuid_base_ = 0;  ///< the rank's process track; its own tracks follow
  std::uint64_t next_lane_uuid_ = kFirstLaneUuid;
  ExportCounts counts_;
};

}  // namespace

namespace {

/// What the first pass learns of one trace file.
struct TracePlan {
  std::filesystem::path file;
  std::optional<int> rank;
  std::vector<std::vector<Launch>> launches;
  std::vector<SpanIndex> kernels;  ///< per group
  std::vector<MpiCall> mpi_calls;
};

TracePlan plan_trace(const std::filesystem::path& file, std::optional<int> rank, StringTable& strings,
                     std::uint64_t& markers) {
  TracePlan plan{file, rank, read_launches(file, strings, markers), {}, {}};
  for (const auto& group : plan.launches) {
    std::vector<SpanIndex::Span> spans;
    for (const Launch& l : group) spans.push_back({l.begin, l.end, l.kernel});
    plan.kernels.emplace_back(std::move(spans));
  }
  if (rank) plan.mpi_calls = read_mpi_calls(TraceReader(file).header(), strings);
  return plan;
}

}  // namespace

ExportCounts export_perfetto(const std::filesystem::path& trace, std::ostream& out,
                             const std::vector<LayerSpan>& layers, PerfettoOptions options) {
  StringTable strings;
  std::uint64_t markers = 0;
  const TracePlan plan = plan_trace(trace, std::nullopt, strings, markers);
  std::vector<std::uint64_t> layer_ids;
  std::vector<SpanIndex::Span> layer_spans;
  for (const LayerSpan& l : layers) {
    layer_ids.push_back(strings.id(l.name));
    layer_spans.push_back({l.start, l.end, layer_ids.back()});
  }
  const SpanIndex layer_index(std::move(layer_spans));

  TraceReader reader(trace);
  PerfettoWriter writer(out, options);
  writer.intern_all(strings);
  writer.begin_trace(reader.header(), std::nullopt);
  writer.add_launches(plan.launches);
  writer.add_layers(layers, layer_ids);
  writer.add_requests(reader, layer_index, plan.kernels);
  return writer.finish(markers);
}

ExportCounts export_perfetto_ranks(const std::vector<RankTrace>& ranks, std::ostream& out, PerfettoOptions options) {
  StringTable strings;
  std::uint64_t markers = 0;
  std::vector<TracePlan> plans;
  for (const RankTrace& r : ranks) plans.push_back(plan_trace(r.file, r.rank, strings, markers));
  const SpanIndex no_layers({});
  PerfettoWriter writer(out, options);
  writer.intern_all(strings);
  for (const TracePlan& plan : plans) {
    TraceReader reader(plan.file);
    writer.begin_trace(reader.header(), plan.rank);
    writer.add_launches(plan.launches);
    writer.add_mpi_calls(plan.mpi_calls);
    writer.add_requests(reader, no_layers, plan.kernels);
  }
  return writer.finish(markers);
}

}  // namespace ldmsim
