// Test helpers for running the built `ldmsim` binary as a user does: a shell runner capturing output and exit
// code, and scratch directories removed at the end of a test.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ldmsim::testing {

struct CliResult {
  int code = -1;
  std::string output;
};

/// Runs a shell command; captures its stdout (and whatever the command redirects there) and exit code.
inline CliResult shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  CliResult result;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

#ifdef LDMSIM_CLI
/// Runs `ldmsim ARGS`; captures stdout, and stderr too unless `stdout_only`.
inline CliResult run_cli(const std::string& args, bool stdout_only = false) {
  return shell(std::string("'") + LDMSIM_CLI + "' " + args + (stdout_only ? " 2>/dev/null" : " 2>&1"));
}
#endif

/// A fresh directory under the system temp dir, removed at the end of the test.
struct ScratchDir {
  explicit ScratchDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("ldmsim-tools-test-" + std::to_string(getpid()) + "-" + name)) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string str(const std::string& child = {}) const { return (child.empty() ? path : path / child).string(); }
  std::filesystem::path path;
};

/// The small ONNX models of tests/onnx/make_models.py, with their inputs and numpy references: generated once per
/// process (Debian's python3, where python3-onnx and numpy install).
inline const std::filesystem::path& onnx_test_models() {
  static const ScratchDir dir("onnx-models");
  static const bool made = [] {
    const auto r = shell(std::string("/usr/bin/python3 '") + LDMSIM_SOURCE_DIR + "/tests/onnx/make_models.py' '" +
                         dir.str() + "' 2>&1");
    INFO(r.output);
    REQUIRE(r.code == 0);
    return true;
  }();
  (void)made;
  return dir.path;
}

inline std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace ldmsim::testing
