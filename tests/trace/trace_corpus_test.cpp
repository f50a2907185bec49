// Every input that ever crashed or hung the trace tools (tests/fuzz/corpus-regressions/, kept by
// scripts/fuzz_trace_reader.sh) must now go through every step of the fuzz harness (summary, both exports,
// filter, diff, event table) cleanly or stop at a TraceFormatError naming a byte offset; nothing else may escape.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>

#include "ldmsim/trace_analysis/diff.hpp"
#include "ldmsim/trace_analysis/event_table.hpp"
#include "ldmsim/trace_analysis/export.hpp"
#include "ldmsim/trace_analysis/filter.hpp"
#include "ldmsim/trace_analysis/summary.hpp"

TEST_CASE("fuzz regression inputs pass every trace tool or give TraceFormatError, never a crash", "[trace-fuzz]") {
  const std::filesystem::path dir = std::filesystem::path(LDMSIM_SOURCE_DIR) / "tests/fuzz/corpus-regressions";
  const auto filtered =
      std::filesystem::temp_directory_path() / ("ldmsim_corpus_filtered_" + std::to_string(::getpid()) + ".ldmtrace");
  std::size_t files = 0;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (!entry.is_regular_file() || entry.path().filename().string().front() == '.') continue;
      ++files;
      INFO(entry.path().string());
      try {
        // The same steps, in the same order, as tests/fuzz/trace_reader_fuzz.cpp.
        (void)ldmsim::summarize_trace(entry.path(), {.top = 4, .time_bins = 16, .max_issues = 16});
        std::ostringstream sink;
        ldmsim::export_chrome_json(entry.path(), sink, 16);
        ldmsim::export_csv(entry.path(), sink);
        ldmsim::TraceFilter filter;
        filter.min_bytes = 4;
        ldmsim::filter_trace(entry.path(), filtered, filter);
        (void)ldmsim::diff_traces(entry.path(), filtered);
        (void)ldmsim::read_event_table(entry.path());
        SUCCEED("read cleanly");
      } catch (const ldmsim::TraceFormatError& e) {
        CHECK(std::string(e.what()).find(" at byte ") != std::string::npos);
      }
    }
  }
  std::filesystem::remove(filtered);
  CHECK(files > 0);
  WARN(files << " regression inputs checked");
}
