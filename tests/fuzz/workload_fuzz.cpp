// libFuzzer harness for the user-file readers: the JSON workload loader (with the shape inference and attribute
// checks of every op it binds, then the pass pipeline), the arch file loader (with its timing model's
// parameters) and the .npy reader. Any input must give a result or a ConfigError naming the culprit, never a
// crash, a sanitizer report, a hang or a huge allocation. The first byte picks the reader ('N': .npy, 'A': arch
// JSON, else workload JSON). Built only by scripts/fuzz_workload.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/plan.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/fault.hpp"

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
  if (size == 0) return 0;
  const bool npy = data[0] == 'N', arch = data[0] == 'A';
  const std::filesystem::path in = scratch_dir() / (npy ? "in.npy" : "in.json");
  {
    std::ofstream f(in, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  static const ldmsim::OperatorRegistry registry = ldmsim::OperatorRegistry::builtin();
  try {
    if (npy) {
      (void)ldmsim::read_npy(in);
    } else if (arch) {
      const ldmsim::Arch a = ldmsim::Arch::resolve(in.string());
      (void)ldmsim::make_timing_model(a);
      (void)ldmsim::Arch::from_json(a.to_json(), "round trip");
    } else {
      const ldmsim::Graph g = ldmsim::load_workload(in, registry);
      for (auto policy : {ldmsim::StagingPolicy::kMethod, ldmsim::StagingPolicy::kNaive}) {
        (void)ldmsim::describe(g, ldmsim::plan_execution(g, policy));
      }
    }
  } catch (const ldmsim::ConfigError&) {
    // the expected outcome for malformed input
  }
  return 0;
}
