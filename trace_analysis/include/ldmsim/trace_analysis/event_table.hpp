// Every DMA event of a trace file unpacked into fixed-size records in one flat buffer, and the kernel launches the
// events belong to: what `ldmsim.Trace(path).events()` hands to numpy as a structured array without building an
// object per event. Memory: the records (64 bytes an event) plus one decoded block; the file is read twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ldmsim/sim/types.hpp"
#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace/recorder.hpp"

namespace ldmsim {

/// One DMA event, unpacked; naturally aligned, 64 bytes. The Python bindings describe exactly this layout as the
/// numpy dtype of Trace.events().
struct EventRecord {
  std::uint64_t issue;   ///< issue cycle
  std::uint64_t start;   ///< cycle the transfer starts
  std::uint64_t end;     ///< completion cycle
  std::uint64_t main;    ///< main-memory address
  std::uint32_t bytes;   ///< bytes moved
  std::uint32_t ldm;     ///< local-store address
  std::uint32_t bsize;   ///< strided block size (0: contiguous)
  std::uint32_t stride;  ///< bytes skipped between blocks
  std::int32_t kernel;   ///< index into EventTable::kernels; -1 when no launch of its group began by its issue cycle
  std::uint16_t core;    ///< core id within its group
  std::uint8_t cg;       ///< core group
  std::uint8_t op;       ///< 0 get, 1 put
  std::uint8_t mode;     ///< 0 PE, 1 BCAST, 2 ROW
  std::uint8_t status;   ///< 0 ok, 1 trapped, 2 lint warning
};
static_assert(sizeof(EventRecord) == 64);

/// An array of EventRecord of a size fixed when made, in memory from std::aligned_alloc (huge pages advised), that
/// release() hands to an owner which frees it with std::free (a numpy array's base).
class EventBuffer {
 public:
  EventBuffer() = default;
  /// `size` records, uninitialized; std::bad_alloc when the host has not the memory.
  explicit EventBuffer(std::size_t size);
  ~EventBuffer();
  EventBuffer(EventBuffer&& other) noexcept;
  EventBuffer& operator=(EventBuffer&& other) noexcept;
  EventBuffer(const EventBuffer&) = delete;
  EventBuffer& operator=(const EventBuffer&) = delete;

  EventRecord* data() { return data_; }
  const EventRecord* data() const { return data_; }
  std::size_t size() const { return size_; }
  /// The records, now owned by the caller (free with std::free); the buffer is empty afterwards.
  EventRecord* release();

 private:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  EventRecord* data_ = nullptr;
  std::size_t size_ = 0;
};

/// One kernel launch over the core groups it ran on: the k-th launch of a name on each group is the same launch
/// (each group begins it at its own cycle, since groups keep their own time).
struct KernelLaunch {
  std::string name;
  Cycle begin = 0;           ///< earliest begin over its groups
  Cycle end = 0;             ///< latest launch-end marker over its groups (the begin when none was recorded)
  std::uint32_t groups = 0;  ///< core groups it began on
};

struct LocatedMarker {
  int cg = 0;
  Marker marker;
};

/// A whole trace file in memory, events as records.
struct EventTable {
  nlohmann::json header;
  std::uint32_t version = 0;
  TraceTotals totals;
  /// In file order: core groups in increasing cg order, each group's events in issue order.
  EventBuffer events;
  /// Sorted by (begin, name, occurrence).
  std::vector<KernelLaunch> kernels;
  std::vector<LocatedMarker> markers;
};

/// Reads `file`: ConfigError when it is not a readable regular file (missing, a directory, a FIFO), TraceFormatError
/// when it is malformed or truncated, std::bad_alloc when the host cannot hold its events. An event belongs to the
/// launch begun last on its core group at or before its issue cycle. Without `with_events` the events are checked
/// and counted but not kept (the launches and markers alone).
/// `before_allocating`, when set, is called with the bytes the events take before they are allocated (and may throw:
/// a check against the host's memory).
EventTable read_event_table(const std::filesystem::path& file, bool with_events = true,
                            const std::function<void(std::uint64_t bytes)>& before_allocating = {});

}  // namespace ldmsim
