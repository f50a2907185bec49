// The ranks of an MPI + athread run (docs/athread.md "MPI"): each rank's trace.rank<R>.ldmtrace in one run
// directory, summarized into the rank's makespan and its split into time on the chip, DMA and MPI (waiting or not).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ldmsim/sim/types.hpp"

namespace ldmsim {

/// One rank's totals.
struct RankRow {
  int rank = 0;
  std::filesystem::path file;
  Cycle cycles = 0;      ///< the rank's simulated cycles (its trace header's)
  Cycle dma_busy = 0;    ///< the busiest core's DMA time (union of its request spans)
  Cycle mpi_cycles = 0;  ///< in MPI calls
  Cycle mpi_wait = 0;    ///< of those, waiting for messages or for other ranks
  std::uint64_t mpi_calls = 0;

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
