// libFuzzer harness for the trace reader and everything that streams a trace (summary, filter, diff, exports):
// any input must give a result or TraceFormatError, never a crash, a sanitizer report or a hang. Built only by
// scripts/fuzz_trace_reader.sh (clang-14, -fsanitize=fuzzer,address,undefined); not part of the CMake build.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ldmsim/dma/trace_diff.hpp"
#include "ldmsim/dma/trace_export.hpp"
#include "ldmsim/dma/trace_file.hpp"
#include "ldmsim/dma/trace_filter.hpp"
#include "ldmsim/dma/trace_summary.hpp"

namespace {

std::filesystem::path scratch(const char* name) {
  return std::filesystem::temp_directory_path() / ("ldmsim-fuzz-" + std::to_string(getpid()) + "-" + name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path in = scratch("in.ldmtrace");
  static const std::filesystem::path out = scratch("out.ldmtrace");
  {
    std::ofstream f(in, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    (void)ldmsim::summarize_trace(in, {.top = 4, .time_bins = 16, .max_issues = 16});
    std::ostringstream sink;
    ldmsim::export_chrome_json(in, sink, 16);
    ldmsim::export_csv(in, sink);
    ldmsim::TraceFilter filter;
    filter.min_bytes = 4;
    ldmsim::filter_trace(in, out, filter);
    (void)ldmsim::diff_traces(in, out);
  } catch (const ldmsim::TraceFormatError&) {
    // the expected outcome for malformed input
  }
  return 0;
}
