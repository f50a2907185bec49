// Per-rank summary of an MPI run directory (rank_summary.hpp): the header's "mpi" record of each rank's trace and
// the DMA busy time of its busiest core.
#include "ldmsim/trace_analysis/rank_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
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

/// Where each column of mpi.calls is: named by mpi.calls_columns, else the first layout ([name, begin, end, peer,
/// bytes], no wait). -1: absent.
struct CallColumns {
  int name = 0, begin = 1, end = 2, wait_begin = -1, wait_end = -1;
};

CallColumns call_columns(const nlohmann::json& mpi) {
  const auto names = mpi.find("calls_columns");
  if (names == mpi.end() || !names->is_array()) return {};
  CallColumns c{-1, -1, -1, -1, -1};
  for (std::size_t i = 0; i < names->size() && i < 64; ++i) {
    const nlohmann::json& n = (*names)[i];
    if (!n.is_string()) continue;
    const auto k = static_cast<int>(i);
    const std::string& s = n.get_ref<const std::string&>();
    if (s == "name") c.name = k;
    if (s == "begin") c.begin = k;
    if (s == "end") c.end = k;
    if (s == "wait_begin") c.wait_begin = k;
    if (s == "wait_end") c.wait_end = k;
  }
  return c;
}

/// The cycle in column `k` of `row`, or nothing when the column is absent or holds no cycle.
std::optional<Cycle> cycle_at(const nlohmann::json& row, int k) {
  if (k < 0 || static_cast<std::size_t>(k) >= row.size() || !row[static_cast<std::size_t>(k)].is_number_unsigned()) {
    return std::nullopt;
  }
  return row[static_cast<std::size_t>(k)].get<Cycle>();
}

/// The calls of a header's mpi record in time order; rows that are not [name, cycles ...] are skipped, and a wait
/// outside its call is clipped to it.
std::vector<RankCall> read_calls(const nlohmann::json& mpi) {
  std::vector<RankCall> calls;
  const auto list = mpi.find("calls");
  if (list == mpi.end() || !list->is_array()) return calls;
  const CallColumns c = call_columns(mpi);
  for (const nlohmann::json& row : *list) {
    if (!row.is_array() || c.name < 0 || static_cast<std::size_t>(c.name) >= row.size() ||
        !row[static_cast<std::size_t>(c.name)].is_string()) {
      continue;
    }
    const auto begin = cycle_at(row, c.begin);
    const auto end = cycle_at(row, c.end);
    if (!begin || !end || *end < *begin) continue;
    RankCall call{row[static_cast<std::size_t>(c.name)].get<std::string>(), *begin, *end, *end, *end, 1};
    const auto wait_begin = cycle_at(row, c.wait_begin);
    const auto wait_end = cycle_at(row, c.wait_end);
    if (wait_begin && wait_end && *wait_begin < *wait_end) {
      call.wait_begin = std::clamp(*wait_begin, *begin, *end);
      call.wait_end = std::clamp(*wait_end, call.wait_begin, *end);
    }
    calls.push_back(std::move(call));
  }
  std::stable_sort(calls.begin(), calls.end(), [](const RankCall& a, const RankCall& b) { return a.begin < b.begin; });
  return calls;
}

/// At most kMaxTimelineBars bars: consecutive calls in equal runs, each bar from its first call's begin to its
/// last call's end, named by the call when all are the same, its total wait at its end.
std::vector<RankCall> merge_calls(std::vector<RankCall> calls) {
  if (calls.size() <= kMaxTimelineBars) return calls;
  const std::size_t per_bar = (calls.size() + kMaxTimelineBars - 1) / kMaxTimelineBars;
  std::vector<RankCall> bars;
  for (std::size_t i = 0; i < calls.size(); i += per_bar) {
    const std::size_t last = std::min(calls.size(), i + per_bar) - 1;
    RankCall bar{calls[i].name, calls[i].begin, calls[i].end, 0, 0, last - i + 1};
    Cycle wait = 0;
    for (std::size_t k = i; k <= last; ++k) {
      bar.end = std::max(bar.end, calls[k].end);
      wait += calls[k].wait_end - calls[k].wait_begin;
      if (calls[k].name != bar.name) bar.name.clear();
    }
    if (bar.name.empty()) bar.name = fmt::format("{} calls", bar.calls);
    bar.wait_end = bar.end;
    bar.wait_begin = bar.end - std::min(wait, bar.end - bar.begin);
    bars.push_back(std::move(bar));
  }
  return bars;
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
    row.timeline = merge_calls(read_calls(*mpi));
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

namespace {
nlohmann::json timeline_json(const std::vector<RankCall>& calls) {
  nlohmann::json bars = nlohmann::json::array();
  for (const RankCall& c : calls) bars.push_back({c.name, c.begin, c.end, c.wait_begin, c.wait_end, c.calls});
  return bars;
}
}  // namespace

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
                     {"mpi_calls", row.mpi_calls},
                     {"timeline", timeline_json(row.timeline)}});
  }
  return {{"timeline_columns", {"name", "begin", "end", "wait_begin", "wait_end", "calls"}},
          {"makespan_cycles", summary.makespan},
          {"makespan_seconds", static_cast<double>(summary.makespan) / summary.clock_hz},
          {"ranks", std::move(ranks)}};
}

}  // namespace ldmsim
