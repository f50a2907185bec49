// Per-layer text of `ldmsim run` (see layer_table.hpp).
#include "layer_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace ldmsim::cli {

std::string layer_progress_line(const nlohmann::json& op, std::size_t op_count) {
  return fmt::format("[{}/{}] {} ({}): {:.4g} us simulated, bound {}, {} DMA bytes",
                     op.at("index").get<std::size_t>() + 1, op_count, op.at("name").get<std::string>(),
                     op.at("type").get<std::string>(), op.at("seconds").get<double>() * 1e6,
                     op.at("bound").get<std::string>(), op.at("dma_bytes").get<std::uint64_t>());
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
  std::string out =
      fmt::format("slowest {} of {} layers:\n  {:<{}} {:<16} {:>12} {:>6} {:<8} {:>12} {:>6}\n", order.size(),
                  ops.size(), "layer", width, "type", "cycles", "share", "bound", "DMA bytes", "peak");
  for (const nlohmann::json* op : order) {
    const auto cycles = op->at("cycles").get<std::uint64_t>();
    out += fmt::format("  {:<{}} {:<16} {:>12} {:>5.1f}% {:<8} {:>12} {:>5.1f}%\n",
                       op->at("name").get<std::string>().substr(0, width), width, op->at("type").get<std::string>(),
                       cycles, 100.0 * static_cast<double>(cycles) / total, op->at("bound").get<std::string>(),
                       op->at("dma_bytes").get<std::uint64_t>(), 100.0 * op->at("peak_fraction").get<double>());
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
