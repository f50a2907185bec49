// `ldmsim run --layers-csv FILE`: one row per layer of stats.json's "ops", with the per-layer figures a kernel
// developer compares (cycles, flops, DMA bytes, ldm, intensity, bandwidth, roofline position).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ldmsim::cli {

/// The CSV text: a header row and one row per op; text fields quoted as RFC 4180 says when they need it, a field
/// the run did not measure (ldm without a trace, intensity without DMA) left empty.
std::string layers_csv(const nlohmann::json& stats);

}  // namespace ldmsim::cli
