// The `ldmsim` tool is linked from its own, link-time-optimised compile of the libraries (LDMSIM_LTO); this test
// program links the ordinary libraries. Both must simulate the same machine: every file of a run directory but the
// host times, byte for byte, on workloads and on ONNX models whose kernels cover the arithmetic files (conv,
// depthwise, matmul, softmax, erf, layer norm, GRU).
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
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

/// The session `ldmsim run` makes when given only the arch: the cost-aware placement by default, a trace.
ldmsim::Session session_as_the_tool(const std::string& arch) {
  ldmsim::RunConfig config;
  config.arch = arch;
  config.split_by_format = true;
  return ldmsim::Session(config);
}

/// Runs the model with the tool into dir/tool and with the libraries into dir/library; compares the two.
void check_same_runs(const std::filesystem::path& model, const std::map<std::string, std::filesystem::path>& inputs,
                     const std::string& arch, const ScratchDir& dir) {
  std::string flags = " --arch " + arch;
  for (const auto& [name, file] : inputs) flags += " --input " + name + "='" + file.string() + "'";
  const auto tool = run_cli("run '" + model.string() + "'" + flags + " --out " + dir.str("tool"));
  INFO(tool.output);
  REQUIRE(tool.code == 0);

  ldmsim::Session session = session_as_the_tool(arch);
  ldmsim::RunRequest request;
  request.outputs = ldmsim::RunOutputs{dir.path / "library", {}};
  (void)session.run(session.load(model, ldmsim::ModelReadOptions{.input_files = inputs}), request);

  const std::set<std::string> names = run_files(dir.path / "tool");
  REQUIRE(names == run_files(dir.path / "library"));
  CHECK(names.count("stats.json") == 1);
  CHECK(names.count("trace.ldmtrace") == 1);
  for (const std::string& name : names) {
    INFO(name);
    CHECK(read_file(dir.path / "tool" / name) == read_file(dir.path / "library" / name));
  }
}

}  // namespace

TEST_CASE("the tool and the libraries write byte-identical runs of workloads", "[cli][lto]") {
  const std::string workload = GENERATE(as<std::string>{}, "cnn_block.json", "conv_block.json", "relu6_block.json",
                                        "pipeline/lstm_a.json", "split/method_mlp.json");
  const std::string arch = GENERATE(as<std::string>{}, "sw26010", "sw26010pro");
  INFO(workload << " on " << arch);
  ScratchDir dir("tool-library-parity");
  check_same_runs(std::filesystem::path(LDMSIM_SOURCE_DIR) / "examples" / workload, {}, arch, dir);
}

TEST_CASE("the tool and the libraries write byte-identical runs of ONNX models", "[cli][lto][onnx]") {
  const std::string name = GENERATE(as<std::string>{}, "cnn", "op_attention_block", "op_convnext_block",
                                    "op_gelu_decomposed", "op_shufflenet_unit", "gru_onnx");
  const std::string arch = GENERATE(as<std::string>{}, "sw26010", "sw26010pro");
  INFO(name << " on " << arch);
  const std::filesystem::path& models = ldmsim::testing::onnx_test_models();
  ScratchDir dir("tool-library-parity-onnx");
  check_same_runs(models / (name + ".onnx"), {{"x", models / (name + "_x.npy")}}, arch, dir);
}
