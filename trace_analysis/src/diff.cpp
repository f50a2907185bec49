// Trace diff: a cursor per file flattens blocks into one item stream (DMA requests and markers in file order),
// counts as it goes, and the two cursors advance in lockstep until the first difference, then drain.
#include "ldmsim/trace_analysis/diff.hpp"

#include <fmt/format.h>

#include <utility>

#include "ldmsim/trace/file.hpp"

namespace ldmsim {
namespace {

struct Item {
  bool dma = true;
  int cg = 0;
  DmaEvent event;
  const Marker* marker = nullptr;
  friend bool same(const Item& x, const Item& y) {
    if (x.dma != y.dma || x.cg != y.cg) return false;
    return x.dma ? x.event == y.event : *x.marker == *y.marker;
  }
};

std::string describe(const Item* item) {
  if (item == nullptr) return "(end of trace)";
  if (item->dma) {
    const DmaEvent& e = item->event;
    return fmt::format("cg {} core {} {} {} B main 0x{:x} ldm 0x{:x} {} issue {} start {} end {}", item->cg, e.core,
                       to_string(e.op), e.length, e.main, e.ldm, to_string(e.mode), e.issue, e.start, e.end);
  }
  const Marker& m = *item->marker;
  return fmt::format("cg {} {} core {} cycle {} value {}{}", item->cg, to_string(m.kind), m.core, m.cycle, m.value,
                     m.text.empty() ? std::string() : " \"" + m.text + "\"");
}

class Cursor {
 public:
  Cursor(const std::filesystem::path& path, bool side_b, TraceDiff& diff) : reader_(path), b_(side_b), diff_(diff) {
    const auto& h = reader_.header();
    const Cycle c = h.contains("cycles") && h["cycles"].is_number_unsigned() ? h["cycles"].get<Cycle>() : 0;
    (b_ ? diff_.cycles_b : diff_.cycles_a) = c;
  }

  /// The next item, or nullptr at the end of the file.
  const Item* next() {
    while (pos_ >= size()) {
      if (!reader_.next(block_)) return nullptr;
      pos_ = 0;
    }
    item_.cg = block_.cg;
    item_.dma = block_.kind == TraceBlockKind::kDma;
    if (item_.dma) {
      item_.event = block_.chunk.at(pos_);
      count(item_.event);
    } else {
      item_.marker = &block_.markers[pos_];
    }
    ++pos_;
    return &item_;
  }

 private:
  std::size_t size() const { return block_.kind == TraceBlockKind::kDma ? block_.chunk.size() : block_.markers.size(); }
  void count(const DmaEvent& e) {
    auto& cg = diff_.per_cg[block_.cg];
    auto& op = diff_.per_op[std::string(to_string(e.op))];
    DiffCounts& c1 = b_ ? cg.second : cg.first;
    DiffCounts& c2 = b_ ? op.second : op.first;
    ++c1.requests;
    c1.bytes += e.length;
    ++c2.requests;
    c2.bytes += e.length;
  }

  TraceReader reader_;
  bool b_;
  TraceDiff& diff_;
  TraceBlock block_;
  std::size_t pos_ = 0;
  Item item_;
};

nlohmann::json counts_json(const std::pair<DiffCounts, DiffCounts>& p) {
  return {{"a", {{"requests", p.first.requests}, {"bytes", p.first.bytes}}},
          {"b", {{"requests", p.second.requests}, {"bytes", p.second.bytes}}},
          {"same", p.first == p.second}};
}

std::string signed_diff(std::uint64_t a, std::uint64_t b) {
  return a == b ? std::string("=") : b > a ? fmt::format("+{}", b - a) : fmt::format("-{}", a - b);
}

}  // namespace

TraceDiff diff_traces(const std::filesystem::path& a, const std::filesystem::path& b) {
  TraceDiff diff;
  Cursor ca(a, false, diff);
  Cursor cb(b, true, diff);
  std::uint64_t index = 0;
  for (;;) {
    const Item* x = ca.next();
    const Item* y = cb.next();
    if (x == nullptr && y == nullptr) break;
    if (x != nullptr && y != nullptr && same(*x, *y)) {
      ++index;
      continue;
    }
    diff.identical = false;
    diff.divergence_index = index;
    diff.divergence = fmt::format("A: {}\nB: {}", describe(x), describe(y));
    while (x != nullptr) x = ca.next();
    while (y != nullptr) y = cb.next();
    break;
  }
  return diff;
}

nlohmann::json TraceDiff::to_json() const {
  nlohmann::json j;
  j["cycles"] = {{"a", cycles_a}, {"b", cycles_b}, {"same", cycles_a == cycles_b}};
  j["per_cg"] = nlohmann::json::object();
  for (const auto& [cg, p] : per_cg) j["per_cg"][std::to_string(cg)] = counts_json(p);
  j["per_op"] = nlohmann::json::object();
  for (const auto& [op, p] : per_op) j["per_op"][op] = counts_json(p);
  j["identical"] = identical;
  j["first_divergence"] =
      identical ? nlohmann::json(nullptr) : nlohmann::json{{"index", divergence_index}, {"description", divergence}};
  return j;
}

std::string TraceDiff::format() const {
  std::string out = fmt::format("cycles: A {} B {} ({})\n", cycles_a, cycles_b, signed_diff(cycles_a, cycles_b));
  out += fmt::format("{:<8} {:>12} {:>12} {:>10} {:>14} {:>14} {:>12}\n", "", "requests A", "requests B", "diff",
                     "bytes A", "bytes B", "diff");
  const auto row = [&out](const std::string& name, const std::pair<DiffCounts, DiffCounts>& p) {
    out += fmt::format("{:<8} {:>12} {:>12} {:>10} {:>14} {:>14} {:>12}\n", name, p.first.requests, p.second.requests,
                       signed_diff(p.first.requests, p.second.requests), p.first.bytes, p.second.bytes,
                       signed_diff(p.first.bytes, p.second.bytes));
  };
  for (const auto& [cg, p] : per_cg) row(fmt::format("cg {}", cg), p);
  for (const auto& [op, p] : per_op) row(op, p);
  if (identical) {
    out += "identical: same DMA requests and markers in the same order\n";
  } else {
    out += fmt::format("first divergence at event #{} (file order):\n{}\n", divergence_index, divergence);
  }
  return out;
}

}  // namespace ldmsim
