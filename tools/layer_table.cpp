// Per-layer text of `ldmsim run` (see layer_table.hpp).
#include "layer_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "ldmsim/sim/bytes_text.hpp"
#include "ldmsim/trace_analysis/units_text.hpp"

namespace ldmsim::cli {

namespace {

/// A field the run may not have measured (ldm without a trace, intensity without DMA) as text, "-" when absent.
std::string measured(const nlohmann::json& op, const char* key, const auto& text) {
  const auto it = op.find(key);
  return it == op.end() || it->is_null() ? std::string("-") : text(*it);
}

std::string ldm_text(const nlohmann::json& op) {
  return measured(op, "ldm_high_water",
                  [](const nlohmann::json& v) { return bytes_text(static_cast<double>(v.get<std::uint64_t>())); });
}

std::string intensity_text(const nlohmann::json& op) {
  return measured(op, "arithmetic_intensity",
                  [](const nlohmann::json& v) { return fmt::format("{:.3g}", v.get<double>()); });
}

std::string roofline_text(const nlohmann::json& op) {
  return measured(op, "roofline_fraction", [&op](const nlohmann::json& v) {
    return fmt::format("{:.1f}% {}", 100.0 * v.get<double>(), op.value("roofline_limit", std::string("?")));
  });
}

}  // namespace

std::string layer_progress_line(const nlohmann::json& op, std::size_t op_count, double elapsed_seconds) {
  return fmt::format("[{}/{} {:.1f}s] {} ({}): {} simulated, bound {}, {} DMA", op.at("index").get<std::size_t>() + 1,
                     op_count, elapsed_seconds, op.at("name").get<std::string>(), op.at("type").get<std::string>(),
                     seconds_text(op.at("seconds").get<double>()), op.at("bound").get<std::string>(),
                     bytes_text(static_cast<double>(op.at("dma_bytes").get<std::uint64_t>())));
}

std::string slowest_layers_table(const nlohmann::json& stats, std::size_t count) {
  const nlohmann::json& ops = stats.at("ops");
  if (ops.empty() || count == 0) return {};
  std::vector<const nlohmann::json*> order;
  for (const nlohmann::json& op : ops) order.push_back(&op);
  std::stable_sort(order.begin(), order.end(), [](const nlohmann::json* a, const nlohmann::json* b) {
    return a->at("cycles").get<std::uint64_t>() > b->at("cycles").get<std::uint64_t>();
  });
  order.resize(std::min(count, order.size()));
  const double total = std::max<double>(1.0, static_cast<double>(stats.at("cycles").get<std::uint64_t>()));
  std::size_t width = 5;
  for (const nlohmann::json* op : order) width = std::max(width, op->at("name").get<std::string>().size());
  width = std::min<std::size_t>(width, 48);
  std::string out = fmt::format(
      "slowest {} of {} layers:\n  {:<{}} {:<16} {:>12} {:>6} {:<8} {:>10} {:>10} {:>7} {:>6} {}\n", order.size(),
      ops.size(), "layer", width, "type", "cycles", "share", "bound", "DMA", "ldm", "flop/B", "peak", "roofline");
  for (const nlohmann::json* op : order) {
    const auto cycles = op->at("cycles").get<std::uint64_t>();
    out += fmt::format("  {:<{}} {:<16} {:>12} {:>5.1f}% {:<8} {:>10} {:>10} {:>7} {:>5.1f}% {}\n",
                       op->at("name").get<std::string>().substr(0, width), width, op->at("type").get<std::string>(),
                       cycles, 100.0 * static_cast<double>(cycles) / total, op->at("bound").get<std::string>(),
                       bytes_text(static_cast<double>(op->at("dma_bytes").get<std::uint64_t>())), ldm_text(*op),
                       intensity_text(*op), 100.0 * op->at("peak_fraction").get<double>(), roofline_text(*op));
  }
  return out;
}

std::string op_choices_text(const nlohmann::json& stats) {
  std::string text;
  for (const auto& op : stats["ops"]) {
    if (!op.contains("metrics") || !op["metrics"].is_object() || !op["metrics"].contains("explain")) continue;
    text += fmt::format("{} ({}):\n", op["name"].get<std::string>(), op["type"].get<std::string>());
    for (const auto& line : op["metrics"]["explain"]) text += fmt::format("  {}\n", line.get<std::string>());
  }
  return text;
}

}  // namespace ldmsim::cli
