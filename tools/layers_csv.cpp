// The per-layer CSV of `ldmsim run --layers-csv` (see layers_csv.hpp).
#include "layers_csv.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace ldmsim::cli {

namespace {

/// The columns, each the stats.json op field of the same name.
constexpr std::array<std::string_view, 19> kColumns = {"index",
                                                       "name",
                                                       "type",
                                                       "bound",
                                                       "cycles",
                                                       "start_cycle",
                                                       "seconds",
                                                       "flops",
                                                       "dma_requests",
                                                       "dma_bytes",
                                                       "dma_local_bytes",
                                                       "dma_remote_bytes",
                                                       "ldm_high_water",
                                                       "arithmetic_intensity",
                                                       "achieved_dma_bytes_per_second",
                                                       "achieved_flops_per_second",
                                                       "roofline_limit",
                                                       "roofline_seconds",
                                                       "roofline_fraction"};

std::string csv_text(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string csv_field(const nlohmann::json& op, std::string_view column) {
  const auto it = op.find(column);
  if (it == op.end() || it->is_null()) return {};
  if (it->is_string()) return csv_text(it->get<std::string>());
  if (it->is_number_float()) return fmt::format("{:.6g}", it->get<double>());
  return it->dump();
}

}  // namespace

std::string layers_csv(const nlohmann::json& stats) {
  std::string out;
  for (std::size_t c = 0; c < kColumns.size(); ++c) out += fmt::format("{}{}", c == 0 ? "" : ",", kColumns[c]);
  out += '\n';
  for (const nlohmann::json& op : stats.at("ops")) {
    for (std::size_t c = 0; c < kColumns.size(); ++c) out += (c == 0 ? "" : ",") + csv_field(op, kColumns[c]);
    out += '\n';
  }
  return out;
}

}  // namespace ldmsim::cli
