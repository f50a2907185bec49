// The ranks of an MPI + athread run (docs/athread.md "MPI"): each rank's trace.rank<R>.ldmtrace in one run
// directory, summarized into the rank's makespan, its split into time on the chip, DMA and MPI (waiting or not), and
// the timeline of its MPI calls.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// A bar of a rank's MPI timeline: one call its trace header lists (mpi.calls), or several neighbouring calls when
/// the rank made more than kMaxTimelineBars (their total wait then sits at the bar's end).
struct RankCall {
  std::string name;  ///< the call (MPI_Send), or "N calls" for a bar of several different ones
  Cycle begin = 0;
  Cycle end = 0;
  Cycle wait_begin = 0;  ///< [wait_begin, wait_end): waiting for messages or other ranks (empty: none)
  Cycle wait_end = 0;
  std::uint64_t calls = 1;
};
/// Bars kept per rank for the timeline: more calls than this are merged into this many bars.
inline constexpr std::size_t kMaxTimelineBars = 1000;

/// One rank's totals.
struct RankRow {
  int rank = 0;
  std::filesystem::path file;
  Cycle cycles = 0;      ///< the rank's simulated cycles (its trace header's)
  Cycle dma_busy = 0;    ///< the busiest core's DMA time (union of its request spans)
  Cycle mpi_cycles = 0;  ///< in MPI calls
  Cycle mpi_wait = 0;    ///< of those, waiting for messages or for other ranks
  std::uint64_t mpi_calls = 0;
  /// Its MPI calls in time order, merged to at most kMaxTimelineBars (traces written before the header listed the
  /// waiting part of each call give empty waits).
  std::vector<RankCall> timeline;

  /// Simulated time outside MPI calls: the chip's compute and DMA, and the control core's own work.
  Cycle chip_cycles() const { return cycles > mpi_cycles ? cycles - mpi_cycles : 0; }
};

struct RankSummary {
  std::vector<RankRow> ranks;  ///< by rank
  double clock_hz = 1e9;
  Cycle makespan = 0;  ///< the slowest rank's cycles
};

/// R of a file named "trace.rank<R>.ldmtrace", or -1.
int rank_of_trace(const std::filesystem::path& file);
/// The trace.rank<R>.ldmtrace files of `dir`, by rank (empty when there are none).
std::vector<std::filesystem::path> rank_traces(const std::filesystem::path& dir);
/// Reads every rank's trace (TraceFormatError on a malformed one, ConfigError when one holds no MPI record).
RankSummary summarize_ranks(const std::vector<std::filesystem::path>& files);
std::string format_rank_summary(const RankSummary& summary);
nlohmann::json to_json(const RankSummary& summary);

}  // namespace ldmsim
