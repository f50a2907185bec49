// A trace file's events as records (see event_table.hpp), in two passes over the file. The first reads the markers
// and counts the events: a group's markers follow its DMA blocks, so only then are its launches known. The second
// unpacks each DMA chunk's columns straight into a buffer of exactly the counted size, each event with its launch.
// Decoding twice costs less than a second pass over the records: those are 64 bytes an event, the file a few.
#include "ldmsim/trace_analysis/event_table.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <tuple>
#include <utility>

#include "ldmsim/sim/input_file.hpp"

namespace ldmsim {

// ------------------------------------------------------------------------------------------------- EventBuffer

EventBuffer::EventBuffer(std::size_t size) {
  if (size == 0) return;
  if (size > std::numeric_limits<std::size_t>::max() / sizeof(EventRecord) - kHugePage) throw std::bad_alloc();
  // Huge pages where the host grants them: a fresh buffer is written once, page fault by page fault.
  const std::size_t bytes = (size * sizeof(EventRecord) + kHugePage - 1) / kHugePage * kHugePage;
  data_ = static_cast<EventRecord*>(std::aligned_alloc(kHugePage, bytes));
  if (data_ == nullptr) throw std::bad_alloc();
  (void)::madvise(data_, bytes, MADV_HUGEPAGE);  // advice only: without it the pages are small
  size_ = size;
}

EventBuffer::~EventBuffer() {
  std::free(data_);
}

EventBuffer::EventBuffer(EventBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

EventBuffer& EventBuffer::operator=(EventBuffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

EventRecord* EventBuffer::release() {
  size_ = 0;
  return std::exchange(data_, nullptr);
}

// -------------------------------------------------------------------------------------------------- reading

namespace {

// A launch across core groups: the k-th launch of a name on each group is the same launch (each group begins it at
// its own cycle: groups keep their own time).
using LaunchKey = std::pair<std::string, std::size_t>;

struct LaunchMarker {
  MarkerKind kind;
  Cycle cycle;
  std::string name;
};

// One core group: its event count, its launch markers in record order, then its launches' begins by cycle.
struct Group {
  int cg = 0;
  std::uint64_t events = 0;
  std::vector<LaunchMarker> launch_markers;
  std::vector<std::pair<Cycle, LaunchKey>> begins;            // filled by merge_launches
  std::vector<std::pair<Cycle, std::int32_t>> kernel_begins;  // the same, as kernel indices sorted by cycle
};

// The launches of every group, merged by LaunchKey: earliest begin, latest end, groups counted. A launch end
// closes the latest open launch of the same name on its group.
std::map<LaunchKey, KernelLaunch> merge_launches(std::vector<Group>& groups) {
  std::map<LaunchKey, KernelLaunch> launches;
  for (Group& g : groups) {
    std::map<std::string, std::size_t> seen;
    std::map<std::string, std::vector<KernelLaunch*>> open;
    for (const LaunchMarker& m : g.launch_markers) {
      if (m.kind == MarkerKind::kLaunchBegin) {
        LaunchKey key(m.name, seen[m.name]++);
        KernelLaunch& l = launches[key];
        if (l.groups++ == 0) {
          l.name = m.name;
          l.begin = l.end = m.cycle;
        }
        l.begin = std::min(l.begin, m.cycle);
        l.end = std::max(l.end, m.cycle);
        open[m.name].push_back(&l);
        g.begins.emplace_back(m.cycle, std::move(key));
        continue;
      }
      const auto it = open.find(m.name);
      if (it == open.end() || it->second.empty()) continue;
      it->second.back()->end = std::max(it->second.back()->end, m.cycle);
      it->second.pop_back();
    }
  }
  return launches;
}

// Numbers the launches in order of (begin, name, occurrence) into table.kernels and gives each group its begins as
// kernel indices, sorted by cycle (ties in record order).
void number_launches(std::vector<Group>& groups, EventTable& table, const std::filesystem::path& file,
                     std::uint64_t offset) {
  const std::map<LaunchKey, KernelLaunch> launches = merge_launches(groups);
  if (launches.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw TraceFormatError(file, offset, "more kernel launches than an event's kernel index holds");
  }
  std::vector<std::pair<const LaunchKey*, const KernelLaunch*>> order;
  order.reserve(launches.size());
  for (const auto& [key, launch] : launches) order.emplace_back(&key, &launch);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second->begin, a.first->first, a.first->second) <
           std::tie(b.second->begin, b.first->first, b.first->second);
  });
  std::map<LaunchKey, std::int32_t> index;
  table.kernels.reserve(order.size());
  for (const auto& [key, launch] : order) {
    index.emplace(*key, static_cast<std::int32_t>(table.kernels.size()));
    table.kernels.push_back(*launch);
  }
  for (Group& g : groups) {
    for (const auto& [cycle, key] : g.begins) g.kernel_begins.emplace_back(cycle, index.at(key));
    std::stable_sort(g.kernel_begins.begin(), g.kernel_begins.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
}

// The launch of each event of one group: the one begun last at or before its issue cycle. Events arrive in issue
// order, so the current launch is kept and looked up again only when an event leaves it.
class KernelCursor {
 public:
  explicit KernelCursor(const std::vector<std::pair<Cycle, std::int32_t>>& begins) : begins_(begins) {}

  std::int32_t at(Cycle issue) {
    const bool before = current_ >= 0 && issue < begin_of(current_);
    const bool after = current_ + 1 < count() && begin_of(current_ + 1) <= issue;
    if (before || after) {
      const auto it =
          std::upper_bound(begins_.begin(), begins_.end(), issue, [](Cycle c, const auto& b) { return c < b.first; });
      current_ = (it - begins_.begin()) - 1;
    }
    return current_ < 0 ? -1 : begins_[static_cast<std::size_t>(current_)].second;
  }

 private:
  std::ptrdiff_t count() const { return static_cast<std::ptrdiff_t>(begins_.size()); }
  Cycle begin_of(std::ptrdiff_t k) const { return begins_[static_cast<std::size_t>(k)].first; }
  const std::vector<std::pair<Cycle, std::int32_t>>& begins_;
  std::ptrdiff_t current_ = -1;  // before the group's first launch
};

void unpack(const DmaChunk& chunk, int cg, KernelCursor& kernels, EventRecord* out) {
  const std::size_t n = chunk.size();
  for (std::size_t i = 0; i < n; ++i) {
    EventRecord& r = out[i];
    const std::uint64_t main_core = chunk.main48_core16[i];
    const std::uint32_t ldm_flags = chunk.ldm24_flags8[i];
    r.issue = chunk.issue[i];
    r.start = r.issue + chunk.start_delta[i];
    r.end = r.start + chunk.duration[i];
    r.main = main_core & (DmaChunk::kMainLimit - 1);
    r.bytes = chunk.length[i];
    r.ldm = ldm_flags & (DmaChunk::kLdmLimit - 1);
    r.bsize = 0;
    r.stride = 0;
    r.kernel = kernels.at(r.issue);
    r.core = static_cast<std::uint16_t>(main_core >> 48);
    r.cg = static_cast<std::uint8_t>(cg);  // the reader accepts core groups below 64 only
    r.op = static_cast<std::uint8_t>((ldm_flags >> DmaChunk::kOpShift) & 1u);
    r.mode = static_cast<std::uint8_t>((ldm_flags >> DmaChunk::kModeShift) & 3u);
    r.status = static_cast<std::uint8_t>((ldm_flags >> DmaChunk::kStatusShift) & 3u);
  }
  for (const DmaChunk::Strided& s : chunk.strided) {  // the reader checked every index is below n
    out[s.index].bsize = s.bsize;
    out[s.index].stride = s.stride;
  }
}

// Pass 1: the header, the markers, each group's event count and launch markers.
std::vector<Group> read_markers(const std::filesystem::path& file, EventTable& table, std::uint64_t& end_offset) {
  TraceReader reader(file);
  table.header = reader.header();
  table.version = reader.version();
  std::vector<Group> groups;
  TraceBlock block;
  while (reader.next(block)) {
    if (groups.empty() || groups.back().cg != block.cg) groups.push_back({.cg = block.cg});
    Group& g = groups.back();
    if (block.kind == TraceBlockKind::kDma) {
      g.events += block.chunk.size();
      continue;
    }
    for (Marker& m : block.markers) {
      if (m.kind == MarkerKind::kLaunchBegin || m.kind == MarkerKind::kLaunchEnd) {
        g.launch_markers.push_back({m.kind, m.cycle, m.text});
      }
      table.markers.push_back({block.cg, std::move(m)});
    }
  }
  table.totals = reader.totals();
  end_offset = reader.offset();
  return groups;
}

// Pass 2: every event into table.events, sized by pass 1; a file that changed in between is refused.
void read_events(const std::filesystem::path& file, const std::vector<Group>& groups, EventTable& table) {
  table.events = EventBuffer(table.totals.dma_events);
  TraceReader reader(file);
  std::size_t filled = 0;
  auto group = groups.begin();
  std::optional<KernelCursor> kernels;
  TraceBlock block;
  const auto changed = [&] { return TraceFormatError(file, reader.offset(), "the file changed while it was read"); };
  while (reader.next(block)) {
    if (block.kind != TraceBlockKind::kDma) continue;
    if (!kernels || group->cg != block.cg) {
      while (group != groups.end() && group->cg != block.cg) ++group;
      if (group == groups.end()) throw changed();
      kernels.emplace(group->kernel_begins);
    }
    if (block.chunk.size() > table.events.size() - filled) throw changed();
    unpack(block.chunk, block.cg, *kernels, table.events.data() + filled);
    filled += block.chunk.size();
  }
  if (filled != table.events.size()) throw changed();
}

}  // namespace

EventTable read_event_table(const std::filesystem::path& file, bool with_events,
                            const std::function<void(std::uint64_t bytes)>& before_allocating) {
  (void)check_input_file(file, "trace file", ~std::uint64_t{0});  // a directory, a FIFO or a device is named here
  EventTable table;
  std::uint64_t end_offset = 0;
  std::vector<Group> groups = read_markers(file, table, end_offset);
  number_launches(groups, table, file, end_offset);
  if (!with_events) return table;
  if (before_allocating) {
    constexpr std::uint64_t kMost = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t events = table.totals.dma_events;
    before_allocating(events > kMost / sizeof(EventRecord) ? kMost : events * sizeof(EventRecord));
  }
  read_events(file, groups, table);
  return table;
}

}  // namespace ldmsim
