// Every input that ever crashed or hung the trace reader (tests/fuzz/corpus-regressions/, kept by
// scripts/fuzz_trace_reader.sh) must now either read cleanly or throw TraceFormatError.
#include <catch2/catch.hpp>
#include <filesystem>

#include "ldmsim/dma/trace_summary.hpp"

TEST_CASE("fuzz regression inputs give TraceFormatError or a summary, never a crash", "[trace-fuzz]") {
  const std::filesystem::path dir = std::filesystem::path(LDMSIM_SOURCE_DIR) / "tests/fuzz/corpus-regressions";
  std::size_t files = 0;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (!entry.is_regular_file() || entry.path().filename().string().front() == '.') continue;
      ++files;
      INFO(entry.path().string());
      try {
        (void)ldmsim::summarize_trace(entry.path());
        SUCCEED("read cleanly");
      } catch (const ldmsim::TraceFormatError& e) {
        CHECK(std::string(e.what()).find(" at byte ") != std::string::npos);
      }
    }
  }
  WARN(files << " regression inputs checked");
}
