// What a piece of code writes to stderr (file descriptor 2), for tests of log lines: fd 2 goes to a temporary file
// while the code runs.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace ldmsim::test {

/// Runs `f` with stderr redirected to a temporary file; returns what was written there.
template <typename F>
std::string capture_stderr(F&& f) {
  char path[] = "/tmp/ldmsim-stderr-XXXXXX";
  const int file = ::mkstemp(path);
  if (file < 0) std::abort();
  std::fflush(stderr);
  const int saved = ::dup(2);
  ::dup2(file, 2);
  try {
    f();
  } catch (...) {
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    ::close(file);
    ::unlink(path);
    throw;
  }
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  ::close(file);
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ::unlink(path);
  return text;
}

}  // namespace ldmsim::test
