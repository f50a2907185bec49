// libFuzzer harness for the user-file readers: the JSON workload loader (with the shape inference and attribute
// checks of every op it binds, then the pass pipeline), the arch file loader (with its timing model's
// parameters) and the .npy reader (user_file_input.hpp). Any input must give a result or a ConfigError naming the
// culprit, never a crash, a sanitizer report, a hang or a huge allocation. Built only by scripts/fuzz_workload.sh;
// its finds are replayed by tests/graph/user_file_corpus_test.cpp.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <system_error>

#include "user_file_input.hpp"

namespace {

const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("ldmsim-fuzz-workload-" + std::to_string(getpid()));
  return p;
}

void remove_scratch() {
  std::error_code ec;
  std::filesystem::remove_all(scratch_dir(), ec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::filesystem::create_directories(scratch_dir());
  std::atexit(remove_scratch);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ldmsim::fuzz::read_user_file(data, size, scratch_dir());
  return 0;
}
