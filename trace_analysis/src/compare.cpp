// Runs side by side, layer by layer (see compare.hpp).
#include "ldmsim/trace_analysis/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "json_or.hpp"
#include "ldmsim/sim/bytes_text.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

using trace_detail::json_or;

namespace {

/// Union-find over layer names: the ops of every run that share a loaded layer end up in one set.
class LayerSets {
 public:
  std::size_t id(const std::string& name) {
    const auto [it, added] = ids_.emplace(name, parent_.size());
    if (added) parent_.push_back(parent_.size());
    return it->second;
  }
  std::size_t root(std::size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void join(std::size_t a, std::size_t b) { parent_[root(a)] = root(b); }

 private:
  std::map<std::string, std::size_t> ids_;
  std::vector<std::size_t> parent_;
};

/// An op of one run as compare needs it.
struct RunOp {
  std::vector<std::string> layers;
  std::string name, bound;
  Cycle cycles = 0;
  std::uint64_t dma_bytes = 0;
  std::optional<std::uint64_t> ldm;
  double seconds = 0;
  std::optional<double> roofline_seconds;
};

std::vector<RunOp> run_ops(const nlohmann::json& stats, const std::string& label) {
  const auto it = stats.is_object() ? stats.find("ops") : stats.end();
  if (it == stats.end() || !it->is_array()) {
    throw ConfigError(fmt::format("{}: not the stats.json of a model's run (no \"ops\" array)", label));
  }
  std::vector<RunOp> ops;
  for (const nlohmann::json& entry : *it) {
    RunOp op;
    op.name = json_or<std::string>(entry, "name", "");
    const auto cycles = json_or<std::int64_t>(entry, "cycles", -1);
    if (op.name.empty() || cycles < 0) {
      throw ConfigError(fmt::format("{}: op {} has no name or cycles", label, ops.size()));
    }
    op.cycles = static_cast<Cycle>(cycles);
    op.bound = json_or<std::string>(entry, "bound", "?");
    op.dma_bytes = json_or<std::uint64_t>(entry, "dma_bytes", 0);
    if (entry.contains("ldm_high_water")) op.ldm = json_or<std::uint64_t>(entry, "ldm_high_water", 0);
    op.seconds = json_or<double>(entry, "seconds", 0.0);
    if (entry.contains("roofline_seconds")) op.roofline_seconds = json_or<double>(entry, "roofline_seconds", 0.0);
    if (const auto s = entry.find("source_layers"); s != entry.end() && s->is_array()) {
      for (const nlohmann::json& layer : *s) {
        if (layer.is_string()) op.layers.push_back(layer.get<std::string>());
      }
    }
    if (op.layers.empty()) op.layers.push_back(op.name);
    ops.push_back(std::move(op));
  }
  return ops;
}

ComparedRun run_header(const nlohmann::json& stats, const std::string& label, std::size_t ops) {
  ComparedRun run;
  run.label = label;
  run.workload = json_or<std::string>(stats, "workload", "?");
  run.arch = json_or<std::string>(stats, "arch", "?");
  run.cycles = json_or<Cycle>(stats, "cycles", 0);
  run.dma_bytes = json_or<std::uint64_t>(stats, "dma_bytes", 0);
  run.ldm_high_water = json_or<std::uint64_t>(stats, "ldm_high_water", 0);
  run.ops = ops;
  const nlohmann::json fusion = json_or<nlohmann::json>(stats, "fusion", nlohmann::json::object());
  const auto enabled = fusion.is_object() ? fusion.find("enabled") : fusion.end();
  run.fusion = enabled != fusion.end() && enabled->is_boolean() && enabled->get<bool>();
  return run;
}

void add_op(CompareCell& cell, const RunOp& op, Cycle& slowest) {
  cell.has_roofline = (cell.ops == 0 || cell.has_roofline) && op.roofline_seconds.has_value();
  ++cell.ops;
  cell.cycles += op.cycles;
  cell.dma_bytes += op.dma_bytes;
  if (op.ldm) cell.ldm_high_water = std::max(cell.ldm_high_water.value_or(0), *op.ldm);
  cell.seconds += op.seconds;
  cell.roofline_seconds += op.roofline_seconds.value_or(0.0);
  if (cell.ops == 1 || op.cycles > slowest) cell.bound = op.bound, slowest = op.cycles;
  cell.names.push_back(op.name);
}

std::string ratio_text(double later, double first) {
  return first > 0 ? fmt::format("x{:.3f}", later / first) : (later > 0 ? std::string("new") : std::string("-"));
}

/// The row's layers joined by '+'; when that is too wide, its first layer (cut short) and how many more.
std::string row_name(const CompareRow& row, std::size_t width) {
  std::string joined;
  for (const std::string& layer : row.layers) joined += (joined.empty() ? "" : "+") + layer;
  if (joined.size() <= width) return joined;
  const std::string more = row.layers.size() > 1 ? fmt::format(" (+{})", row.layers.size() - 1) : "..";
  const std::string& first = row.layers.front();
  const std::size_t room = width - more.size();
  return (first.size() <= room ? first : first.substr(0, room - 2) + "..") + more;
}

/// One run's columns: cycles, (for a later run) their ratio to the first run's, DMA bytes, (ratio), ldm, bound,
/// roofline fraction.
std::string columns(bool later, const std::string& cycles, const std::string& cycles_ratio, const std::string& dma,
                    const std::string& dma_ratio, const std::string& ldm, const std::string& bound,
                    const std::string& roof) {
  return later ? fmt::format(" {:>12} {:>7} {:>10} {:>7} {:>10} {:<7} {:>6}", cycles, cycles_ratio, dma, dma_ratio, ldm,
                             bound, roof)
               : fmt::format(" {:>12} {:>10} {:>10} {:<7} {:>6}", cycles, dma, ldm, bound, roof);
}

std::string cell_text(const CompareCell& cell, const CompareCell& first, bool later) {
  if (cell.ops == 0) return columns(later, "-", "", "-", "", "-", "-", "-");
  const auto roof = cell.roofline_fraction();
  return columns(later, std::to_string(cell.cycles),
                 ratio_text(static_cast<double>(cell.cycles), static_cast<double>(first.cycles)),
                 bytes_text(static_cast<double>(cell.dma_bytes)),
                 ratio_text(static_cast<double>(cell.dma_bytes), static_cast<double>(first.dma_bytes)),
                 cell.ldm_high_water ? bytes_text(static_cast<double>(*cell.ldm_high_water)) : "-", cell.bound,
                 roof ? fmt::format("{:.1f}%", 100.0 * *roof) : "-");
}

/// How much a row's cycles differ between the runs: the largest absolute difference to the first run.
Cycle change(const CompareRow& row) {
  Cycle most = 0;
  for (const CompareCell& c : row.runs) {
    const Cycle a = row.runs.front().cycles;
    most = std::max(most, c.cycles > a ? c.cycles - a : a - c.cycles);
  }
  return most;
}

constexpr std::size_t kNameWidth = 40;

}  // namespace

std::string run_letter(std::size_t i) {
  return i < 26 ? std::string(1, static_cast<char>('A' + i)) : fmt::format("R{}", i + 1);
}

std::optional<double> CompareCell::roofline_fraction() const {
  if (!has_roofline || seconds <= 0) return std::nullopt;
  return roofline_seconds / seconds;
}

Comparison compare_runs(const std::vector<nlohmann::json>& stats, const std::vector<std::string>& labels) {
  if (stats.size() < 2 || labels.size() != stats.size()) {
    throw ConfigError("compare needs two runs or more (run directories or stats.json files)");
  }
  std::vector<std::vector<RunOp>> runs;
  Comparison out;
  for (std::size_t r = 0; r < stats.size(); ++r) {
    runs.push_back(run_ops(stats[r], labels[r]));
    out.runs.push_back(run_header(stats[r], labels[r], runs.back().size()));
  }
  LayerSets sets;
  for (const auto& ops : runs) {
    for (const RunOp& op : ops) {
      const std::size_t first = sets.id(op.layers.front());
      for (const std::string& layer : op.layers) sets.join(sets.id(layer), first);
    }
  }
  std::map<std::size_t, std::size_t> row_of;  // set root -> row
  std::vector<std::vector<Cycle>> slowest;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (const RunOp& op : runs[r]) {
      const std::size_t root = sets.root(sets.id(op.layers.front()));
      auto [it, added] = row_of.emplace(root, out.rows.size());
      if (added) {
        out.rows.push_back({{}, std::vector<CompareCell>(runs.size())});
        slowest.emplace_back(runs.size(), 0);
      }
      CompareRow& row = out.rows[it->second];
      for (const std::string& layer : op.layers) {
        if (std::find(row.layers.begin(), row.layers.end(), layer) == row.layers.end()) row.layers.push_back(layer);
      }
      add_op(row.runs[r], op, slowest[it->second][r]);
    }
  }
  return out;
}

std::string format_comparison(const Comparison& c, std::size_t top) {
  std::string out;
  for (std::size_t r = 0; r < c.runs.size(); ++r) {
    const ComparedRun& run = c.runs[r];
    out += fmt::format("{}: {} ({} on {}, fusion {}, {} ops)\n", run_letter(r), run.label, run.workload, run.arch,
                       run.fusion ? "on" : "off", run.ops);
  }
  std::vector<std::size_t> shown(c.rows.size());
  std::iota(shown.begin(), shown.end(), 0);
  if (top > 0 && top < shown.size()) {
    std::stable_sort(shown.begin(), shown.end(),
                     [&c](std::size_t a, std::size_t b) { return change(c.rows[a]) > change(c.rows[b]); });
    shown.resize(top);
    std::sort(shown.begin(), shown.end());
    out += fmt::format("the {} of {} rows whose cycles changed most:\n", top, c.rows.size());
  }
  out += fmt::format("\n{:<{}}", "layer", kNameWidth);
  for (std::size_t r = 0; r < c.runs.size(); ++r) {
    const std::string x = run_letter(r);
    out += columns(r > 0, "cycles " + x, "/A", "DMA " + x, "/A", "ldm " + x, "bound " + x, "roof " + x);
  }
  out += '\n';
  for (const std::size_t i : shown) {
    const CompareRow& row = c.rows[i];
    out += fmt::format("{:<{}}", row_name(row, kNameWidth), kNameWidth);
    for (std::size_t r = 0; r < row.runs.size(); ++r) out += cell_text(row.runs[r], row.runs.front(), r > 0);
    out += '\n';
  }
  out += fmt::format("{:<{}}", "total", kNameWidth);
  const ComparedRun& a = c.runs.front();
  for (std::size_t r = 0; r < c.runs.size(); ++r) {
    const ComparedRun& run = c.runs[r];
    out += columns(r > 0, std::to_string(run.cycles),
                   ratio_text(static_cast<double>(run.cycles), static_cast<double>(a.cycles)),
                   bytes_text(static_cast<double>(run.dma_bytes)),
                   ratio_text(static_cast<double>(run.dma_bytes), static_cast<double>(a.dma_bytes)),
                   bytes_text(static_cast<double>(run.ldm_high_water)), "", "");
  }
  out += '\n';
  for (std::size_t r = 1; r < c.runs.size(); ++r) {
    const auto delta = static_cast<std::int64_t>(c.runs[r].cycles) - static_cast<std::int64_t>(a.cycles);
    out += fmt::format("{} vs A: {:+} cycles ({:+.1f}%), {} rows\n", run_letter(r), delta,
                       a.cycles > 0 ? 100.0 * static_cast<double>(delta) / static_cast<double>(a.cycles) : 0.0,
                       c.rows.size());
  }
  return out;
}

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json runs = nlohmann::json::array(), rows = nlohmann::json::array();
  for (const ComparedRun& r : c.runs) {
    runs.push_back({{"label", r.label},
                    {"workload", r.workload},
                    {"arch", r.arch},
                    {"cycles", r.cycles},
                    {"dma_bytes", r.dma_bytes},
                    {"ldm_high_water", r.ldm_high_water},
                    {"ops", r.ops},
                    {"fusion", r.fusion}});
  }
  for (const CompareRow& row : c.rows) {
    nlohmann::json cells = nlohmann::json::array();
    for (const CompareCell& cell : row.runs) {
      const auto roof = cell.roofline_fraction();
      cells.push_back(
          {{"ops", cell.ops},
           {"names", cell.names},
           {"cycles", cell.cycles},
           {"dma_bytes", cell.dma_bytes},
           {"ldm_high_water", cell.ldm_high_water ? nlohmann::json(*cell.ldm_high_water) : nlohmann::json()},
           {"bound", cell.ops > 0 ? cell.bound : "-"},
           {"roofline_fraction", roof ? nlohmann::json(*roof) : nlohmann::json()}});
    }
    rows.push_back({{"layers", row.layers}, {"runs", std::move(cells)}});
  }
  return {{"runs", std::move(runs)}, {"rows", std::move(rows)}};
}

}  // namespace ldmsim
