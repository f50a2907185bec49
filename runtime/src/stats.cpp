// Aggregation and JSON form of run statistics.
#include "ldmsim/runtime/stats.hpp"

#include <algorithm>

namespace ldmsim {

std::uint64_t GroupStats::dma_requests() const {
  std::uint64_t n = 0;
  for (const auto& c : cores) n += c.dma_requests;
  return n;
}
std::uint64_t GroupStats::dma_bytes() const {
  std::uint64_t n = 0;
  for (const auto& c : cores) n += c.dma_bytes();
  return n;
}
std::uint64_t GroupStats::dma_remote_bytes() const {
  std::uint64_t n = 0;
  for (const auto& c : cores) n += c.dma_remote_bytes;
  return n;
}
std::uint64_t GroupStats::ldm_high_water() const {
  std::uint64_t n = 0;
  for (const auto& c : cores) n = std::max(n, c.ldm_high_water);
  return n;
}

std::uint64_t RunStats::dma_requests() const {
  std::uint64_t n = 0;
  for (const auto& g : groups) n += g.dma_requests();
  return n;
}
std::uint64_t RunStats::dma_bytes() const {
  std::uint64_t n = 0;
  for (const auto& g : groups) n += g.dma_bytes();
  return n;
}
std::uint64_t RunStats::dma_remote_bytes() const {
  std::uint64_t n = 0;
  for (const auto& g : groups) n += g.dma_remote_bytes();
  return n;
}
std::uint64_t RunStats::ldm_high_water() const {
  std::uint64_t n = 0;
  for (const auto& g : groups) n = std::max(n, g.ldm_high_water());
  return n;
}

nlohmann::json RunStats::to_json(bool per_core) const {
  nlohmann::json out;
  out["cycles"] = cycles;
  out["seconds"] = seconds;
  out["dma_requests"] = dma_requests();
  out["dma_bytes"] = dma_bytes();
  out["dma_local_bytes"] = dma_bytes() - dma_remote_bytes();
  out["dma_remote_bytes"] = dma_remote_bytes();
  out["ldm_high_water"] = ldm_high_water();
  out["groups"] = nlohmann::json::array();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const GroupStats& gs = groups[g];
    nlohmann::json j;
    j["cg"] = g;
    j["cycles"] = gs.cycles;
    j["launches"] = gs.launches;
    j["dma_requests"] = gs.dma_requests();
    j["dma_bytes"] = gs.dma_bytes();
    j["dma_local_bytes"] = gs.dma_bytes() - gs.dma_remote_bytes();
    j["dma_remote_bytes"] = gs.dma_remote_bytes();
    j["ldm_high_water"] = gs.ldm_high_water();
    if (per_core) {
      j["cores"] = nlohmann::json::array();
      for (const auto& c : gs.cores) {
        j["cores"].push_back({{"busy_cycles", c.busy_cycles},
                              {"dma_wait_cycles", c.dma_wait_cycles},
                              {"barrier_wait_cycles", c.barrier_wait_cycles},
                              {"dma_requests", c.dma_requests},
                              {"dma_get_bytes", c.dma_get_bytes},
                              {"dma_put_bytes", c.dma_put_bytes},
                              {"dma_remote_bytes", c.dma_remote_bytes},
                              {"ldm_high_water", c.ldm_high_water},
                              {"lint_warnings", c.lint_warnings}});
      }
    }
    out["groups"].push_back(std::move(j));
  }
  return out;
}

}  // namespace ldmsim
