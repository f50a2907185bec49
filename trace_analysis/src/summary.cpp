// Streaming trace summary: per-core counters and request-span unions, a size histogram, doubling time bins, a
// bounded min-heap of the slowest requests and the fault / lint markers, plus JSON and text renderings.
#include "ldmsim/trace_analysis/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "json_or.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/bytes_text.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/main_memory.hpp"
#include "ldmsim/trace_analysis/units_text.hpp"

namespace ldmsim {
namespace {

using trace_detail::json_or;

Cycle latency(const DmaEvent& e) {
  return e.end - e.issue;
}

/// Heap order: the root is the request to drop first (shortest; among equals the latest in file order).
bool slower(const LocatedRequest& a, const LocatedRequest& b) {
  if (latency(a.event) != latency(b.event)) return latency(a.event) > latency(b.event);
  if (a.cg != b.cg) return a.cg < b.cg;
  return a.index < b.index;
}

std::string fault_kind_name(std::uint32_t value) {
  if (value > static_cast<std::uint32_t>(kLastFaultKind)) return "fault-" + std::to_string(value);
  return std::string(to_string(static_cast<FaultKind>(value)));
}

double fraction(Cycle part, Cycle whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

nlohmann::json maybe_fraction(double f) {
  return f < 0 ? nlohmann::json(nullptr) : nlohmann::json(f);
}

std::string percent(double f) {
  return f < 0 ? std::string("-") : fmt::format("{:.1f}%", 100.0 * f);
}

}  // namespace

// ------------------------------------------------------------------------------------------------ bandwidth bins

BandwidthBins::BandwidthBins(std::size_t bins, Cycle width)
    : bytes_(std::max<std::size_t>(bins, 1), 0.0), width_(std::max<Cycle>(width, 1)) {}

void BandwidthBins::cover(Cycle cycle) {
  const std::size_t n = bytes_.size();
  while (cycle / n >= width_) {
    if (width_ > std::numeric_limits<Cycle>::max() / 2) return;  // only a corrupted trace gets here
    for (std::size_t i = 0; i < n; ++i) {
      const double merged = (2 * i < n ? bytes_[2 * i] : 0.0) + (2 * i + 1 < n ? bytes_[2 * i + 1] : 0.0);
      bytes_[i] = i < (n + 1) / 2 ? merged : 0.0;
    }
    width_ *= 2;
  }
}

void BandwidthBins::add(Cycle start, Cycle end, double bytes) {
  cover(end == start ? end : end - 1);
  const Cycle last = bytes_.size() - 1;
  if (end <= start) {
    bytes_[static_cast<std::size_t>(std::min(start / width_, last))] += bytes;
    return;
  }
  const double per_cycle = bytes / static_cast<double>(end - start);
  for (Cycle b = std::min(start / width_, last); b <= last && b * width_ < end; ++b) {
    const Cycle lo = std::max(start, b * width_);
    const Cycle hi = b == last ? end : std::min(end, (b + 1) * width_);
    bytes_[static_cast<std::size_t>(b)] += per_cycle * static_cast<double>(hi - lo);
  }
}

// ---------------------------------------------------------------------------------------------------- totals

std::uint64_t GroupSummary::requests() const {
  std::uint64_t n = 0;
  for (const auto& c : cores) n += c.requests();
  return n;
}
std::uint64_t GroupSummary::bytes() const {
  return get_bytes() + put_bytes();
}
std::uint64_t GroupSummary::get_bytes() const {
  std::uint64_t n = 0;
  for (const auto& c : cores) n += c.get_bytes;
  return n;
}
std::uint64_t GroupSummary::remote_bytes() const {
  std::uint64_t n = 0;
  for (const auto& c : cores) n += c.remote_bytes;
  return n;
}
std::uint64_t GroupSummary::put_bytes() const {
  std::uint64_t n = 0;
  for (const auto& c : cores) n += c.put_bytes;
  return n;
}
std::uint64_t TraceSummary::requests() const {
  std::uint64_t n = 0;
  for (const auto& g : groups) n += g.requests();
  return n;
}
std::uint64_t TraceSummary::bytes() const {
  std::uint64_t n = 0;
  for (const auto& g : groups) n += g.bytes();
  return n;
}

std::size_t SizeHistogram::bucket(std::uint32_t length) {
  return static_cast<std::size_t>(std::bit_width(length));
}

double achieved_bandwidth(std::uint64_t bytes, Cycle cycles, double clock_hz) {
  return cycles == 0 ? 0.0 : static_cast<double>(bytes) * clock_hz / static_cast<double>(cycles);
}

// ---------------------------------------------------------------------------------------------------- builder

SummaryBuilder::SummaryBuilder(const nlohmann::json& header, SummaryOptions options) : options_(options) {
  const nlohmann::json arch = header.value("arch", nlohmann::json::object());
  summary_.arch = json_or<std::string>(arch, "name", "?");
  summary_.clock_hz = json_or<double>(arch, "clock_hz", 1e9);
  if (!(summary_.clock_hz > 0)) summary_.clock_hz = 1e9;
  const nlohmann::json cores =
      arch.value("core_groups", nlohmann::json::object()).value("cores", nlohmann::json::object());
  // The core grid sizes per-core tables: a header outside the simulator's 1..32 range (a damaged or foreign
  // file) counts as "unknown" rather than asking for rows * cols entries.
  const auto grid = [&](const char* key) {
    const int v = json_or<int>(cores, key, 1);
    return v >= 1 && v <= 32 ? v : 1;
  };
  summary_.rows = grid("rows");
  summary_.cols = grid("cols");
  window_bytes_ = json_or<std::uint64_t>(arch.value("core_groups", nlohmann::json::object()), "main_memory_bytes", 0);
  summary_.cycles = json_or<Cycle>(header, "cycles", 0);
  summary_.seconds = json_or<double>(header, "seconds", 0.0);
  summary_.run = header.value("run", nlohmann::json());
  summary_.fault = header.value("fault", nlohmann::json());
  read_check_reports(header);
}

void SummaryBuilder::read_check_reports(const nlohmann::json& header) {
  // Written by the run when checking was on; fields of the wrong type read as their defaults (a damaged header
  // is still summarised).
  const auto it = header.find("check");
  if (it == header.end() || !it->is_array()) return;
  summary_.checked = true;
  for (const nlohmann::json& r : *it) {
    if (!r.is_object()) continue;
    summary_.check.push_back({json_or<std::string>(r, "kind", "?"), json_or<std::string>(r, "model", ""),
                              json_or<std::string>(r, "kernel", "?"), json_or<int>(r, "cg", 0),
                              json_or<int>(r, "core", 0), json_or<Cycle>(r, "cycle", 0),
                              json_or<std::uint64_t>(r, "count", 1), json_or<std::string>(r, "message", "")});
  }
}

GroupSummary& SummaryBuilder::group(int cg) {
  if (summary_.groups.empty() || summary_.groups.back().cg != cg) {
    GroupSummary g;
    g.cg = cg;
    const std::size_t bins = std::max<std::size_t>(options_.time_bins, 1);
    g.bandwidth = BandwidthBins(bins, summary_.cycles == 0 ? 1 : (summary_.cycles + bins - 1) / bins);
    summary_.groups.push_back(std::move(g));
    spans_.emplace_back();
    group_index_ = 0;
  }
  return summary_.groups.back();
}

CoreSummary& SummaryBuilder::core(GroupSummary& g, std::size_t id) {
  if (id >= kMaxCoresPerGroup) {
    // The per-core tables are sized from what an arch allows, so a hostile trace cannot inflate them.
    throw std::length_error(
        fmt::format("core {} of core group {}: an arch has at most {} cores per group", id, g.cg, kMaxCoresPerGroup));
  }
  if (id >= g.cores.size()) {
    const std::size_t n = std::max<std::size_t>(id + 1, static_cast<std::size_t>(summary_.rows * summary_.cols));
    const std::size_t old = g.cores.size();
    g.cores.resize(n);
    spans_.back().resize(n);
    for (std::size_t i = old; i < n; ++i) {
      g.cores[i].core = static_cast<int>(i);
      g.cores[i].row = static_cast<int>(i) / summary_.cols;
      g.cores[i].col = static_cast<int>(i) % summary_.cols;
    }
  }
  return g.cores[id];
}

void SummaryBuilder::keep_slow(int cg, const DmaEvent& e) {
  if (options_.top == 0) return;
  LocatedRequest r{cg, group_index_, e};
  if (heap_.size() < options_.top) {
    heap_.push_back(r);
    std::push_heap(heap_.begin(), heap_.end(), slower);
  } else if (slower(r, heap_.front())) {
    std::pop_heap(heap_.begin(), heap_.end(), slower);
    heap_.back() = r;
    std::push_heap(heap_.begin(), heap_.end(), slower);
  }
}

void SummaryBuilder::add_event(GroupSummary& g, const DmaEvent& e) {
  CoreSummary& c = core(g, e.core);
  if (e.op == DmaOp::kGet) {
    ++c.get_requests;
    c.get_bytes += e.length;
  } else {
    ++c.put_requests;
    c.put_bytes += e.length;
  }
  // Each core group's memory is one window of the address space (MainMemory): the window says whose it is.
  if (window_bytes_ > 0 && e.main >= MainMemory::kBase && e.status != DmaStatus::kTrapped &&
      MainMemory::window_of(e.main, window_bytes_) != static_cast<std::uint64_t>(g.cg)) {
    c.remote_bytes += e.length;
  }
  if (e.status == DmaStatus::kTrapped) ++c.trapped;
  if (e.status == DmaStatus::kLintWarning) ++c.lint_warnings;
  // Union of request spans: a core's requests arrive in issue order, so one open span per core suffices.
  CoreState& s = spans_.back()[e.core];
  if (s.open && e.issue <= s.span_end) {
    s.span_end = std::max(s.span_end, e.end);
  } else {
    if (s.open) c.dma_busy_cycles += s.span_end - s.span_begin;
    s = {e.issue, e.end, true};
  }
  ++summary_.sizes.count[SizeHistogram::bucket(e.length)];
  summary_.sizes.bytes[SizeHistogram::bucket(e.length)] += e.length;
  g.bandwidth.add(e.start, e.end, static_cast<double>(e.length));
  g.cycles = std::max(g.cycles, e.end);
  keep_slow(g.cg, e);
  ++group_index_;
}

void SummaryBuilder::add_marker(GroupSummary& g, const Marker& m) {
  g.cycles = std::max(g.cycles, m.cycle);
  switch (m.kind) {
    case MarkerKind::kLaunchBegin:
      ++g.launches;
      break;
    case MarkerKind::kBarrier:
      ++g.barriers;
      break;
    case MarkerKind::kFault:
    case MarkerKind::kLintWarning: {
      const bool fault = m.kind == MarkerKind::kFault;
      ++(fault ? summary_.faults : summary_.lint_markers);
      if (summary_.issues.size() < options_.max_issues) {
        summary_.issues.push_back({m.kind, g.cg, m.core, m.cycle, fault ? fault_kind_name(m.value) : "lint", m.text});
      }
      break;
    }
    case MarkerKind::kLaunchEnd:
    case MarkerKind::kCoreExit:
      break;
  }
  if (m.core >= 0 && m.core <= 0xFFFF) core(g, static_cast<std::size_t>(m.core));
}

void SummaryBuilder::add(const TraceBlock& block) {
  GroupSummary& g = group(block.cg);
  if (block.kind == TraceBlockKind::kDma) {
    for (std::size_t i = 0; i < block.chunk.size(); ++i) add_event(g, block.chunk.at(i));
  } else {
    for (const auto& m : block.markers) add_marker(g, m);
  }
}

TraceSummary SummaryBuilder::finish() {
  for (std::size_t gi = 0; gi < summary_.groups.size(); ++gi) {
    auto& g = summary_.groups[gi];
    for (std::size_t c = 0; c < g.cores.size(); ++c) {
      const CoreState& s = spans_[gi][c];
      if (s.open) g.cores[c].dma_busy_cycles += s.span_end - s.span_begin;
    }
  }
  if (summary_.cycles == 0) {
    for (const auto& g : summary_.groups) summary_.cycles = std::max(summary_.cycles, g.cycles);
  }
  if (summary_.seconds == 0) summary_.seconds = summary_.seconds_of(summary_.cycles);
  // One bin width for every group, so bandwidth plots line up.
  Cycle width = 1;
  for (const auto& g : summary_.groups) width = std::max(width, g.bandwidth.width());
  for (auto& g : summary_.groups) g.bandwidth.cover(width * g.bandwidth.bytes().size() - 1);
  std::sort_heap(heap_.begin(), heap_.end(), slower);
  summary_.slowest = std::move(heap_);
  heap_.clear();
  return std::move(summary_);
}

TraceSummary summarize_trace(const std::filesystem::path& file, SummaryOptions options) {
  TraceReader reader(file);
  SummaryBuilder builder(reader.header(), options);
  TraceBlock block;
  while (reader.next(block)) {
    try {
      builder.add(block);
    } catch (const std::length_error& e) {
      throw TraceFormatError(file, reader.offset(), e.what());
    }
  }
  return builder.finish();
}

bool apply_run_stats(TraceSummary& summary, const nlohmann::json& stats) {
  if (!stats.is_object()) return false;
  // The demo's stats hold the groups at the top, a workload run's under "machine" beside its per-op entries.
  const bool nested = !stats.contains("groups") && stats.contains("machine") && stats["machine"].is_object();
  const nlohmann::json& machine = nested ? stats["machine"] : stats;
  if (!machine.contains("groups") || !machine["groups"].is_array()) return false;
  if (json_or<Cycle>(stats, "cycles", 0) != summary.cycles) return false;
  const auto& groups = machine["groups"];
  for (const auto& g : summary.groups) {
    if (g.cg < 0 || static_cast<std::size_t>(g.cg) >= groups.size()) return false;
  }
  for (auto& g : summary.groups) {
    const auto& gj = groups[static_cast<std::size_t>(g.cg)];
    const Cycle cycles = json_or<Cycle>(gj, "cycles", g.cycles);
    if (!gj.contains("cores") || !gj["cores"].is_array()) continue;
    const auto& cores = gj["cores"];
    for (auto& c : g.cores) {
      if (static_cast<std::size_t>(c.core) >= cores.size()) continue;
      const auto& cj = cores[static_cast<std::size_t>(c.core)];
      c.busy_fraction = fraction(json_or<Cycle>(cj, "busy_cycles", 0), cycles);
      c.waiting_fraction =
          fraction(json_or<Cycle>(cj, "dma_wait_cycles", 0) + json_or<Cycle>(cj, "barrier_wait_cycles", 0), cycles);
    }
  }
  summary.has_run_stats = true;
  summary.layers = layers_from_stats(stats);
  return true;
}

// ---------------------------------------------------------------------------------------------------- output

namespace {

nlohmann::json request_json(const TraceSummary& s, const LocatedRequest& r) {
  const DmaEvent& e = r.event;
  return {{"cg", r.cg},
          {"core", e.core},
          {"index", r.index},
          {"op", std::string(to_string(e.op))},
          {"mode", std::string(to_string(e.mode))},
          {"bytes", e.length},
          {"main", e.main},
          {"ldm", e.ldm},
          {"bsize", e.bsize},
          {"stride", e.stride},
          {"issue", e.issue},
          {"start", e.start},
          {"end", e.end},
          {"latency_cycles", latency(e)},
          {"latency_seconds", s.seconds_of(latency(e))}};
}

}  // namespace

nlohmann::json to_json(const TraceSummary& s) {
  nlohmann::json out;
  out["arch"] = s.arch;
  out["clock_hz"] = s.clock_hz;
  out["core_grid"] = {{"rows", s.rows}, {"cols", s.cols}};
  out["run"] = s.run;
  out["cycles"] = s.cycles;
  out["seconds"] = s.seconds;
  out["fault"] = s.fault;
  out["complete"] = s.fault.is_null() ? "complete" : "complete up to the fault";
  out["requests"] = s.requests();
  out["bytes"] = s.bytes();
  out["bandwidth_bytes_per_second"] = achieved_bandwidth(s.bytes(), s.cycles, s.clock_hz);
  out["run_stats"] = s.has_run_stats;
  out["layers"] = nlohmann::json::array();
  for (const LayerSpan& l : s.layers) out["layers"].push_back(to_json(l));
  const Cycle bin = s.groups.empty() ? 1 : s.groups.front().bandwidth.width();
  out["bin_cycles"] = bin;
  out["groups"] = nlohmann::json::array();
  for (const auto& g : s.groups) {
    nlohmann::json gj;
    gj["cg"] = g.cg;
    gj["cycles"] = g.cycles;
    gj["launches"] = g.launches;
    gj["barriers"] = g.barriers;
    gj["requests"] = g.requests();
    gj["bytes"] = g.bytes();
    gj["get_bytes"] = g.get_bytes();
    gj["put_bytes"] = g.put_bytes();
    gj["remote_bytes"] = g.remote_bytes();
    gj["bandwidth_bytes_per_second"] = achieved_bandwidth(g.bytes(), g.cycles, s.clock_hz);
    gj["cores"] = nlohmann::json::array();
    for (const auto& c : g.cores) {
      gj["cores"].push_back({{"core", c.core},
                             {"row", c.row},
                             {"col", c.col},
                             {"requests", c.requests()},
                             {"get_requests", c.get_requests},
                             {"put_requests", c.put_requests},
                             {"get_bytes", c.get_bytes},
                             {"put_bytes", c.put_bytes},
                             {"remote_bytes", c.remote_bytes},
                             {"bandwidth_bytes_per_second", achieved_bandwidth(c.bytes(), g.cycles, s.clock_hz)},
                             {"dma_busy_cycles", c.dma_busy_cycles},
                             {"dma_busy_fraction", fraction(c.dma_busy_cycles, g.cycles)},
                             {"busy_fraction", maybe_fraction(c.busy_fraction)},
                             {"waiting_fraction", maybe_fraction(c.waiting_fraction)},
                             {"trapped", c.trapped},
                             {"lint_warnings", c.lint_warnings}});
    }
    nlohmann::json series = nlohmann::json::array();
    for (const double b : g.bandwidth.bytes()) series.push_back(b * s.clock_hz / static_cast<double>(bin));
    gj["bandwidth_over_time"] = std::move(series);
    out["groups"].push_back(std::move(gj));
  }
  out["size_histogram"] = nlohmann::json::array();
  for (std::size_t k = 0; k < SizeHistogram::kBuckets; ++k) {
    if (s.sizes.count[k] == 0) continue;
    const std::uint64_t lo = k == 0 ? 0 : std::uint64_t{1} << (k - 1);
    const std::uint64_t hi = k == 0 ? 0 : (std::uint64_t{1} << k) - 1;
    out["size_histogram"].push_back(
        {{"min", lo}, {"max", hi}, {"requests", s.sizes.count[k]}, {"bytes", s.sizes.bytes[k]}});
  }
  out["slowest"] = nlohmann::json::array();
  for (const auto& r : s.slowest) out["slowest"].push_back(request_json(s, r));
  out["faults"] = s.faults;
  out["lint_warnings"] = s.lint_markers;
  out["issues"] = nlohmann::json::array();
  for (const auto& i : s.issues) {
    out["issues"].push_back({{"kind", i.kind == MarkerKind::kFault ? "fault" : "lint"},
                             {"what", i.what},
                             {"cg", i.cg},
                             {"core", i.core},
                             {"cycle", i.cycle},
                             {"message", i.text}});
  }
  if (s.checked) {
    out["check"] = nlohmann::json::array();
    for (const auto& r : s.check) {
      nlohmann::json entry = {{"kind", r.kind},   {"kernel", r.kernel}, {"cg", r.cg},          {"core", r.core},
                              {"cycle", r.cycle}, {"count", r.count},   {"message", r.message}};
      if (!r.model.empty()) entry["model"] = r.model;
      out["check"].push_back(std::move(entry));
    }
  }
  return out;
}

std::string format_summary(const TraceSummary& s, const SummaryView& view) {
  const auto shown = [&view](int cg) { return !view.cg || *view.cg == cg; };
  std::string out;
  auto line = [&out](const std::string& text) { out += text + '\n'; };
  std::string workload = "?";
  if (s.run.is_object() && s.run.contains("workload") && s.run["workload"].is_string()) {
    workload = s.run["workload"].get<std::string>();
  }
  line(fmt::format("arch {} ({} cores per group as {}x{}, {:g} GHz), workload {}", s.arch, s.rows * s.cols, s.rows,
                   s.cols, s.clock_hz / 1e9, workload));
  line(fmt::format("total: {} cycles = {} simulated; {} DMA requests, {} moved, {} achieved", s.cycles,
                   seconds_text(s.seconds), s.requests(), bytes_text(static_cast<double>(s.bytes())),
                   rate_text(achieved_bandwidth(s.bytes(), s.cycles, s.clock_hz), "B/s")));
  if (s.fault.is_null()) {
    line("trace: complete");
  } else {
    line(fmt::format("trace: the run TRAPPED; the trace is complete up to the fault at cycle {}: {}",
                     json_or<Cycle>(s.fault, "cycle", 0), json_or<std::string>(s.fault, "message", "?")));
  }
  line("");
  line(fmt::format("{:>4} {:>10} {:>12} {:>11} {:>11} {:>11} {:>10} {:>8}", "cg", "requests", "bytes", "get", "put",
                   "remote", "GB/s", "cycles"));
  for (const auto& g : s.groups) {
    if (!shown(g.cg)) continue;
    line(fmt::format("{:>4} {:>10} {:>12} {:>11} {:>11} {:>11} {:>10.3g} {:>8}", g.cg, g.requests(),
                     bytes_text(static_cast<double>(g.bytes())), bytes_text(static_cast<double>(g.get_bytes())),
                     bytes_text(static_cast<double>(g.put_bytes())), bytes_text(static_cast<double>(g.remote_bytes())),
                     achieved_bandwidth(g.bytes(), g.cycles, s.clock_hz) / 1e9, g.cycles));
  }
  line("");
  line(fmt::format("per core: {:>8} {:>9} {:>7} {:>11} {:>11} {:>9} {:>8} {:>8} {:>8}", "cg", "core", "req", "get",
                   "put", "GB/s", "dma-busy", "busy", "waiting"));
  std::vector<std::pair<const GroupSummary*, const CoreSummary*>> cores;
  for (const auto& g : s.groups) {
    if (!shown(g.cg)) continue;
    for (const auto& c : g.cores) cores.emplace_back(&g, &c);
  }
  const std::size_t all_cores = cores.size();
  if (view.cores > 0 && view.cores < cores.size()) {
    std::stable_sort(cores.begin(), cores.end(),
                     [](const auto& a, const auto& b) { return a.second->bytes() > b.second->bytes(); });
    cores.resize(view.cores);
  }
  for (const auto& [group, core] : cores) {
    const auto& g = *group;
    const auto& c = *core;
    line(fmt::format(
        "          {:>8} {:>9} {:>7} {:>11} {:>11} {:>9.3g} {:>8} {:>8} {:>8}", g.cg,
        fmt::format("{},{}", c.row, c.col), c.requests(), bytes_text(static_cast<double>(c.get_bytes)),
        bytes_text(static_cast<double>(c.put_bytes)), achieved_bandwidth(c.bytes(), g.cycles, s.clock_hz) / 1e9,
        percent(fraction(c.dma_busy_cycles, g.cycles)), percent(c.busy_fraction), percent(c.waiting_fraction)));
  }
  if (cores.size() < all_cores) {
    line(fmt::format("          ... {} more cores (the {} that moved the most bytes are shown; --top sets how many)",
                     all_cores - cores.size(), cores.size()));
  }
  if (!s.has_run_stats) line("(busy and waiting need the run's stats.json next to the trace; dma-busy is from spans)");
  if (!s.layers.empty()) {
    line("");
    line(fmt::format("layers (from stats.json): {:>12} {:>12} {:>8} {:>12} {:>7} {:>10} {:>13}  layer (type)", "start",
                     "cycles", "bound", "DMA bytes", "peak", "ldm", "roofline"));
    for (const LayerSpan& l : s.layers) {
      const std::string ldm = l.ldm_high_water ? bytes_text(static_cast<double>(*l.ldm_high_water)) : "-";
      const std::string roof =
          l.roofline_fraction ? fmt::format("{} {}", percent(*l.roofline_fraction), l.roofline_limit) : "-";
      line(fmt::format("                          {:>12} {:>12} {:>8} {:>12} {:>7} {:>10} {:>13}  {} ({})", l.start,
                       l.end - l.start, l.bound, l.dma_bytes, percent(l.peak_fraction), ldm, roof, l.name, l.type));
    }
  }
  line("");
  line("request sizes:");
  for (std::size_t k = 0; k < SizeHistogram::kBuckets; ++k) {
    if (s.sizes.count[k] == 0) continue;
    const std::uint64_t lo = k == 0 ? 0 : std::uint64_t{1} << (k - 1);
    line(fmt::format("  {:>10} .. {:<10} {:>10} requests {:>12}", bytes_text(static_cast<double>(lo)),
                     k == 0 ? std::string("0 B") : bytes_text(static_cast<double>((std::uint64_t{1} << k) - 1)),
                     s.sizes.count[k], bytes_text(static_cast<double>(s.sizes.bytes[k]))));
  }
  line("");
  if (view.cg) {
    const auto in_group = std::count_if(s.slowest.begin(), s.slowest.end(), [&](const auto& r) { return shown(r.cg); });
    line(fmt::format("{} of the run's {} slowest requests are in core group {} (issue to completion):", in_group,
                     s.slowest.size(), *view.cg));
  } else {
    line(fmt::format("{} slowest requests (issue to completion):", s.slowest.size()));
  }
  for (const auto& r : s.slowest) {
    if (!shown(r.cg)) continue;
    const DmaEvent& e = r.event;
    line(fmt::format("  cg {} core {},{} {} {} B main 0x{:x} ldm 0x{:x}: {} cycles (issue {}, start {}, end {})", r.cg,
                     e.core / s.cols, e.core % s.cols, to_string(e.op), e.length, e.main, e.ldm, latency(e), e.issue,
                     e.start, e.end));
  }
  line("");
  line(fmt::format("faults: {}, lint warnings: {}", s.faults, s.lint_markers));
  for (const auto& i : s.issues) {
    line(fmt::format("  {} {} at cycle {}, cg {} core {}: {}", i.kind == MarkerKind::kFault ? "fault" : "lint", i.what,
                     i.cycle, i.cg,
                     i.core < 0 ? std::string("-") : fmt::format("{},{}", i.core / s.cols, i.core % s.cols), i.text));
  }
  const std::uint64_t kept = s.issues.size();
  if (s.faults + s.lint_markers > kept) line(fmt::format("  ... {} more not shown", s.faults + s.lint_markers - kept));
  if (s.checked) {
    std::uint64_t occurrences = 0;
    for (const auto& r : s.check) occurrences += r.count;
    line("");
    line(s.check.empty() ? std::string("check: no reports")
                         : fmt::format("check: {} report{} ({} occurrence{})", s.check.size(),
                                       s.check.size() == 1 ? "" : "s", occurrences, occurrences == 1 ? "" : "s"));
    for (const auto& r : s.check) {
      if (!shown(r.cg)) continue;
      line(fmt::format("  {}check {} ({} time{}): kernel {}, core group {}, core {}, cycle {}: {}",
                       r.model.empty() ? "" : "model " + r.model + ": ", r.kind, r.count, r.count == 1 ? "" : "s",
                       r.kernel, r.cg, r.core, r.cycle, r.message));
    }
  }
  return out;
}

}  // namespace ldmsim
