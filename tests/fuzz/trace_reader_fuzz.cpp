// libFuzzer harness for the trace reader and everything that streams a trace (summary, filter, diff, exports, the
// event table of the Python bindings):
// any input must give a result or TraceFormatError, never a crash, a sanitizer report or a hang. Built only by
// scripts/fuzz_trace_reader.sh (clang-16, -fsanitize=fuzzer,address,undefined); not part of the CMake build.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace_analysis/diff.hpp"
#include "ldmsim/trace_analysis/event_table.hpp"
#include "ldmsim/trace_analysis/export.hpp"
#include "ldmsim/trace_analysis/filter.hpp"
#include "ldmsim/trace_analysis/perfetto_export.hpp"
#include "ldmsim/trace_analysis/summary.hpp"

namespace {

std::filesystem::path scratch(const char* name) {
  return std::filesystem::temp_directory_path() / ("ldmsim-fuzz-" + std::to_string(getpid()) + "-" + name);
}

const std::filesystem::path& in_path() {
  static const std::filesystem::path p = scratch("in.ldmtrace");
  return p;
}

const std::filesystem::path& out_path() {
  static const std::filesystem::path p = scratch("out.ldmtrace");
  return p;
}

// Fork mode starts a process per job: remove each one's scratch files when it exits normally.
void remove_scratch() {
  std::error_code ec;
  std::filesystem::remove(in_path(), ec);
  std::filesystem::remove(out_path(), ec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)in_path();
  (void)out_path();
  std::atexit(remove_scratch);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path& in = in_path();
  const std::filesystem::path& out = out_path();
  {
    std::ofstream f(in, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    (void)ldmsim::summarize_trace(in, {.top = 4, .time_bins = 16, .max_issues = 16});
    std::ostringstream sink;
    ldmsim::export_chrome_json(in, sink, 16);
    ldmsim::export_csv(in, sink);
    ldmsim::export_perfetto(in, sink);
    ldmsim::TraceFilter filter;
    filter.min_bytes = 4;
    ldmsim::filter_trace(in, out, filter);
    (void)ldmsim::diff_traces(in, out);
    (void)ldmsim::read_event_table(in);
  } catch (const ldmsim::TraceFormatError&) {
    // the expected outcome for malformed input
  }
  return 0;
}
