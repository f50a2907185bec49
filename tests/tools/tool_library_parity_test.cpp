// The `ldmsim` tool is linked from its own, link-time-optimised compile of the libraries (LDMSIM_LTO); this
// test program links the ordinary libraries. Both must simulate the same machine: every file of a run directory but
// the host times, byte for byte.
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <string>

#include "cli_support.hpp"
#include "ldmsim/session/session.hpp"

namespace {

using ldmsim::testing::read_file;
using ldmsim::testing::run_cli;
using ldmsim::testing::ScratchDir;

std::set<std::string> run_files(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name != "host_times.json") names.insert(name);  // host seconds differ from run to run
  }
  return names;
}

}  // namespace

TEST_CASE("the tool and the libraries write byte-identical runs", "[cli][lto]") {
  const std::string workload = GENERATE(as<std::string>{}, "cnn_block.json", "conv_block.json", "relu6_block.json",
                                        "pipeline/lstm_a.json", "split/method_mlp.json");
  INFO(workload);
  const std::filesystem::path path = std::filesystem::path(LDMSIM_SOURCE_DIR) / "examples" / workload;
  ScratchDir dir("tool-library-parity");
  const auto tool = run_cli("run '" + path.string() + "' --out " + dir.str("tool"));
  REQUIRE(tool.code == 0);

  ldmsim::Session session;  // the tool's defaults
  ldmsim::RunRequest request;
  request.outputs = ldmsim::RunOutputs{dir.path / "library", {}};
  (void)session.run(session.load(path), request);

  const std::set<std::string> names = run_files(dir.path / "tool");
  REQUIRE(names == run_files(dir.path / "library"));
  CHECK(names.count("stats.json") == 1);
  CHECK(names.count("trace.ldmtrace") == 1);
  for (const std::string& name : names) {
    INFO(name);
    CHECK(read_file(dir.path / "tool" / name) == read_file(dir.path / "library" / name));
  }
}
