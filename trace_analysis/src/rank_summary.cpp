// Per-rank summary of an MPI run directory (rank_summary.hpp): the header's "mpi" record of each rank's trace and
// the DMA busy time of its busiest core.
#include "ldmsim/trace_analysis/rank_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "ldmsim/sim/fault.hpp"
#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace_analysis/summary.hpp"

namespace ldmsim {
namespace {

int rank_of(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  const std::string prefix = "trace.rank";
  const std::string suffix = ".ldmtrace";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return -1;
  }
  const char* begin = name.data() + prefix.size();
  const char* end = name.data() + name.size() - suffix.size();
  int rank = -1;
  const auto [stop, ec] = std::from_chars(begin, end, rank);
  return ec == std::errc{} && stop == end && rank >= 0 ? rank : -1;
}

Cycle cycles_field(const nlohmann::json& record, const char* key) {
  const auto it = record.find(key);
  return it != record.end() && it->is_number_unsigned() ? it->get<Cycle>() : 0;
}

}  // namespace

int rank_of_trace(const std::filesystem::path& file) {
  return rank_of(file);
}

std::vector<std::filesystem::path> rank_traces(const std::filesystem::path& dir) {
  std::vector<std::pair<int, std::filesystem::path>> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const int rank = rank_of(entry.path());
    if (rank >= 0 && entry.is_regular_file()) found.emplace_back(rank, entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::filesystem::path> files;
  for (auto& [rank, file] : found) files.push_back(std::move(file));
  return files;
}

RankSummary summarize_ranks(const std::vector<std::filesystem::path>& files) {
  RankSummary out;
  for (const auto& file : files) {
    const TraceSummary trace = summarize_trace(file, SummaryOptions{.top = 0, .time_bins = 1, .max_issues = 0});
    const nlohmann::json header = TraceReader(file).header();  // a copy: the reader is a temporary
    const auto mpi = header.find("mpi");
    if (mpi == header.end() || !mpi->is_object()) {
      throw ConfigError(
          fmt::format("{}: not the trace of an MPI rank (its header has no \"mpi\" record)", file.string()));
    }
    RankRow row;
    row.rank = rank_of(file);
    row.file = file;
    row.cycles = trace.cycles;
    for (const GroupSummary& group : trace.groups) {
      for (const CoreSummary& core : group.cores) row.dma_busy = std::max(row.dma_busy, core.dma_busy_cycles);
    }
    row.mpi_cycles = cycles_field(*mpi, "mpi_cycles");
    row.mpi_wait = cycles_field(*mpi, "wait_cycles");
    row.mpi_calls = cycles_field(*mpi, "calls_made");
    out.clock_hz = trace.clock_hz;
    out.makespan = std::max(out.makespan, row.cycles);
    out.ranks.push_back(std::move(row));
  }
  return out;
}

std::string format_rank_summary(const RankSummary& summary) {
  const auto percent = [](Cycle part, Cycle whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  std::string out = fmt::format("{} ranks, makespan {} cycles ({:.6g} s)\n", summary.ranks.size(), summary.makespan,
                                static_cast<double>(summary.makespan) / summary.clock_hz);
  out += fmt::format("{:>5} {:>14} {:>14} {:>14} {:>14} {:>14} {:>8}\n", "rank", "cycles", "chip", "DMA busy", "MPI",
                     "MPI wait", "calls");
  for (const RankRow& row : summary.ranks) {
    out += fmt::format("{:>5} {:>14} {:>8} {:>4.1f}% {:>8} {:>4.1f}% {:>8} {:>4.1f}% {:>8} {:>4.1f}% {:>8}\n", row.rank,
                       row.cycles, row.chip_cycles(), percent(row.chip_cycles(), row.cycles), row.dma_busy,
                       percent(row.dma_busy, row.cycles), row.mpi_cycles, percent(row.mpi_cycles, row.cycles),
                       row.mpi_wait, percent(row.mpi_wait, row.cycles), row.mpi_calls);
  }
  out += "chip: outside MPI calls (compute, DMA, control core); DMA busy: the busiest core's; MPI wait: part of MPI\n";
  return out;
}

nlohmann::json to_json(const RankSummary& summary) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankRow& row : summary.ranks) {
    ranks.push_back({{"rank", row.rank},
                     {"file", row.file.string()},
                     {"cycles", row.cycles},
                     {"chip_cycles", row.chip_cycles()},
                     {"dma_busy_cycles", row.dma_busy},
                     {"mpi_cycles", row.mpi_cycles},
                     {"mpi_wait_cycles", row.mpi_wait},
                     {"mpi_calls", row.mpi_calls}});
  }
  return {{"makespan_cycles", summary.makespan},
          {"makespan_seconds", static_cast<double>(summary.makespan) / summary.clock_hz},
          {"ranks", std::move(ranks)}};
}

}  // namespace ldmsim
