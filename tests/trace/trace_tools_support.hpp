// Helpers for the trace-tool tests: a scratch directory and a small two-group trace with known contents.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace/recorder.hpp"

namespace trace_tools_test {

/// A fresh directory under the system temp dir, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ =
        std::filesystem::temp_directory_path() / ("ldmsim-trace-tools-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline ldmsim::DmaEvent event(std::uint16_t core, ldmsim::DmaOp op, std::uint32_t length, ldmsim::Cycle issue,
                              ldmsim::Cycle start, ldmsim::Cycle end) {
  ldmsim::DmaEvent e;
  e.core = core;
  e.op = op;
  e.length = length;
  e.issue = issue;
  e.start = start;
  e.end = end;
  e.main = 0x1000 + issue;
  e.ldm = 64;
  return e;
}

/// A 2x2-core arch at 1 GHz with `groups` core groups.
inline nlohmann::json header(ldmsim::Cycle cycles, const nlohmann::json& fault = nullptr, int groups = 2) {
  return {{"arch",
           {{"name", "test2x2"},
            {"clock_hz", 1e9},
            {"core_groups", {{"count", groups}, {"cores", {{"rows", 2}, {"cols", 2}}}}}}},
          {"cycles", cycles},
          {"seconds", static_cast<double>(cycles) / 1e9},
          {"fault", fault},
          {"run", {{"workload", "unit"}}}};
}

/// cg 0: core 0 gets 100 B [0,10) and, overlapping, 4096 B [5,105); core 3 puts 8 B [200,1000). One launch and a
/// barrier. cg 1: core 1 gets 64 B [10,20) and a lint warning marker.
inline std::vector<ldmsim::TraceRecorder> sample_groups() {
  using ldmsim::DmaOp;
  using ldmsim::Marker;
  using ldmsim::MarkerKind;
  std::vector<ldmsim::TraceRecorder> groups;
  groups.emplace_back(0, true);
  groups.emplace_back(1, true);
  auto& g0 = groups[0];
  g0.record(event(0, DmaOp::kGet, 100, 0, 2, 10));
  g0.record(event(0, DmaOp::kGet, 4096, 5, 10, 105));
  g0.record(event(3, DmaOp::kPut, 8, 200, 300, 1000));
  g0.mark({MarkerKind::kLaunchBegin, 0, -1, 0, "k"});
  g0.mark({MarkerKind::kBarrier, 150, 2, 0, {}});
  g0.mark({MarkerKind::kLaunchEnd, 1000, -1, 0, "k"});
  auto& g1 = groups[1];
  g1.record(event(1, DmaOp::kGet, 64, 10, 10, 20));
  g1.mark({MarkerKind::kLaunchBegin, 0, -1, 0, "k"});
  g1.mark({MarkerKind::kLintWarning, 10, 1, 0, "length 6 is not a multiple of 4"});
  g1.mark({MarkerKind::kLaunchEnd, 400, -1, 0, "k"});
  return groups;
}

inline void write_sample(const std::filesystem::path& file, const nlohmann::json& fault = nullptr) {
  const auto groups = sample_groups();
  std::vector<const ldmsim::TraceRecorder*> ptrs{&groups[0], &groups[1]};
  ldmsim::write_trace(file, header(1000, fault), ptrs);
}

}  // namespace trace_tools_test
