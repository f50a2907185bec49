// Streaming summary of a DMA trace: run info, per core group and per core request counts, bytes, bandwidth and
// busy time, a request-size histogram, bandwidth over time, the N slowest requests, faults and lint warnings.
// Memory is bounded by the number of cores and time bins, never by the number of events.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace/recorder.hpp"
#include "ldmsim/trace_analysis/layers.hpp"

namespace ldmsim {

/// What to keep while summarizing.
struct SummaryOptions {
  std::size_t top = 10;            ///< how many slowest requests to keep
  std::size_t time_bins = 100;     ///< bandwidth-over-time resolution (bins over the whole run)
  std::size_t max_issues = 10000;  ///< faults and lint warnings kept with their text (the rest are only counted)
};

/// Bytes moved per time bin; the bin width doubles (merging pairs) when an event ends past the last bin, so the
/// bin count stays fixed whatever the run length. Bytes of a request are spread evenly over [start, end).
class BandwidthBins {
 public:
  explicit BandwidthBins(std::size_t bins = 100, Cycle width = 1);
  void add(Cycle start, Cycle end, double bytes);
  /// Widens the bins (by doubling) until they cover `cycle`.
  void cover(Cycle cycle);
  Cycle width() const { return width_; }
  const std::vector<double>& bytes() const { return bytes_; }

 private:
  std::vector<double> bytes_;
  Cycle width_;
};

/// One compute core's DMA activity.
struct CoreSummary {
  int core = 0;
  int row = 0;
  int col = 0;
  std::uint64_t get_requests = 0;
  std::uint64_t put_requests = 0;
  std::uint64_t get_bytes = 0;
  std::uint64_t put_bytes = 0;
  std::uint64_t remote_bytes = 0;   ///< of those, bytes in another core group's memory window
  std::uint64_t trapped = 0;        ///< requests recorded with status trapped
  std::uint64_t lint_warnings = 0;  ///< requests recorded with status lint warning
  Cycle dma_busy_cycles = 0;        ///< union of the core's [issue, end] request spans
  double busy_fraction = -1;        ///< busy (compute + issue) / group cycles, from stats.json; -1 if unknown
  double waiting_fraction = -1;     ///< (DMA + barrier wait) / group cycles, from stats.json; -1 if unknown

  std::uint64_t requests() const { return get_requests + put_requests; }
  std::uint64_t bytes() const { return get_bytes + put_bytes; }
};

/// One core group.
struct GroupSummary {
  int cg = 0;
  Cycle cycles = 0;  ///< end of the group's last launch (or last request / marker)
  std::uint64_t launches = 0;
  std::uint64_t barriers = 0;
  std::vector<CoreSummary> cores;  ///< indexed by core id
  BandwidthBins bandwidth;         ///< bytes per time bin (all groups share one bin width after finish())

  std::uint64_t requests() const;
  std::uint64_t bytes() const;
  std::uint64_t get_bytes() const;
  std::uint64_t put_bytes() const;
  std::uint64_t remote_bytes() const;
};

/// One request with where it ran (for the slowest list).
struct LocatedRequest {
  int cg = 0;
  std::uint64_t index = 0;  ///< position among the group's requests
  DmaEvent event;
};

/// A fault or lint warning marker.
struct TraceIssue {
  MarkerKind kind = MarkerKind::kFault;
  int cg = 0;
  int core = -1;
  Cycle cycle = 0;
  std::string what;  ///< fault kind name ("dma-misaligned") or "lint"
  std::string text;
};

/// Request-size histogram: bucket 0 holds length 0, bucket k >= 1 holds lengths in [2^(k-1), 2^k).
struct SizeHistogram {
  static constexpr std::size_t kBuckets = 34;
  std::array<std::uint64_t, kBuckets> count{};
  std::array<std::uint64_t, kBuckets> bytes{};
  static std::size_t bucket(std::uint32_t length);
};

/// A checking report the run wrote into the trace header's "check" (docs/checking.md): one bug site.
struct TraceCheckReport {
  std::string kind;   ///< dma-race, ldm-race, put-source, uninit-read, reply-reset, bounds
  std::string model;  ///< the model it belongs to in a run of several models (else empty)
  std::string kernel;
  int cg = 0;  ///< first occurrence
  int core = 0;
  Cycle cycle = 0;
  std::uint64_t count = 1;
  std::string message;
};

/// The whole summary.
struct TraceSummary {
  nlohmann::json run;    ///< the header's "run" object (workload, ...) or null
  nlohmann::json fault;  ///< the header's "fault" (null for a clean run)
  std::string arch;      ///< arch name
  double clock_hz = 1e9;
  int rows = 1;
  int cols = 1;
  Cycle cycles = 0;  ///< header cycles (else the largest group cycles)
  double seconds = 0;
  std::vector<GroupSummary> groups;  ///< in cg order, only groups present in the trace
  SizeHistogram sizes;
  std::vector<LocatedRequest> slowest;  ///< longest issue-to-end first
  std::vector<TraceIssue> issues;       ///< faults and lint warnings in file order (up to max_issues)
  std::uint64_t faults = 0;
  std::uint64_t lint_markers = 0;
  bool checked = false;                 ///< the run had checking on (the header has a "check" array)
  std::vector<TraceCheckReport> check;  ///< its reports, one per site, in order of first occurrence
  bool has_run_stats = false;           ///< busy/waiting fractions came from a stats.json
  std::vector<LayerSpan> layers;        ///< the run's layers, from the same stats.json (empty without one)

  std::uint64_t requests() const;
  std::uint64_t bytes() const;
  double seconds_of(Cycle c) const { return static_cast<double>(c) / clock_hz; }
};

/// Builds a TraceSummary from a header and the blocks of a trace, one block at a time.
class SummaryBuilder {
 public:
  explicit SummaryBuilder(const nlohmann::json& header, SummaryOptions options = {});
  void add(const TraceBlock& block);
  TraceSummary finish();

 private:
  struct CoreState {
    Cycle span_begin = 0;
    Cycle span_end = 0;
    bool open = false;
  };
  GroupSummary& group(int cg);
  CoreSummary& core(GroupSummary& g, std::size_t id);
  void add_event(GroupSummary& g, const DmaEvent& e);
  void add_marker(GroupSummary& g, const Marker& m);
  void read_check_reports(const nlohmann::json& header);
  void keep_slow(int cg, const DmaEvent& e);

  SummaryOptions options_;
  TraceSummary summary_;
  std::uint64_t window_bytes_ = 0;             ///< main memory per core group (the header's arch); 0: unknown
  std::vector<std::vector<CoreState>> spans_;  ///< per group (same index as summary_.groups), per core
  std::uint64_t group_index_ = 0;              ///< requests seen in the current group
  std::vector<LocatedRequest> heap_;           ///< min-heap on latency of the slowest so far
};

/// Reads `file` block by block and summarizes it. Throws TraceFormatError for a malformed file.
TraceSummary summarize_trace(const std::filesystem::path& file, SummaryOptions options = {});

/// Fills busy/waiting fractions from a run's stats.json (RunStats::to_json with per-core data). Returns false
/// (and changes nothing) when the stats do not describe this trace's run (group count or cycles differ).
bool apply_run_stats(TraceSummary& summary, const nlohmann::json& stats);

/// Machine-readable summary (the `--json` output of `ldmsim trace summary`).
nlohmann::json to_json(const TraceSummary& summary);

/// What the text summary shows of a big machine: one core group's rows only, and the busiest cores.
struct SummaryView {
  std::optional<int> cg;  ///< only this core group in the group and core tables and the slowest requests
  std::size_t cores = 0;  ///< the per-core table keeps the cores that moved the most bytes (0: every core)
};

/// Human-readable summary as printed by `ldmsim trace summary`.
std::string format_summary(const TraceSummary& summary, const SummaryView& view = {});

/// Achieved bandwidth in bytes per second over `cycles` (0 when cycles is 0).
double achieved_bandwidth(std::uint64_t bytes, Cycle cycles, double clock_hz);

}  // namespace ldmsim
