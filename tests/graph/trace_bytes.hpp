// Test support: a machine's trace as the bytes write_trace puts in a file, for byte-for-byte comparisons of runs.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "ldmsim/ldmsim.hpp"

namespace ldmsim::test {

/// Writes `m`'s trace to a temporary file (named after `tag` and the process) and returns its bytes.
inline std::string trace_bytes(const Machine& m, const std::string& tag) {
  const auto file = std::filesystem::temp_directory_path() / fmt::format("{}_{}.ldmtrace", tag, ::getpid());
  m.write_trace(file);
  std::ifstream in(file, std::ios::binary);
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  std::filesystem::remove(file);
  return bytes;
}

}  // namespace ldmsim::test
