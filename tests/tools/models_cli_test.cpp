// `ldmsim run A B C [--concurrent]`: several models on one machine. The three LSTMs of the pipelining example give
// the same outputs, bit for bit, pipelined and sequential, with fewer idle core-cycles and a shorter makespan
// pipelined; one model alone under --concurrent is a plain run; a model that traps keeps its fault while the others
// finish; bad combinations are refused with exit 2.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.hpp"
#include "ldmsim/trace/file.hpp"

using namespace ldmsim::testing;
namespace fs = std::filesystem;

namespace {

std::string example(const std::string& name) {
  return std::string(LDMSIM_SOURCE_DIR) + "/examples/pipeline/" + name + ".json";
}

std::string three_lstms() {
  return fmt::format("'{}' '{}' '{}'", example("lstm_a"), example("lstm_b"), example("lstm_c"));
}

nlohmann::json stats_of(const fs::path& dir) {
  return nlohmann::json::parse(read_file(dir / "stats.json"));
}

}  // namespace

TEST_CASE("pipelined models give the sequential outputs bit for bit with fewer idle core-cycles", "[cli][models]") {
  const ScratchDir dir("models-lstm");
  const auto seq = run_cli(fmt::format("run {} --out '{}'", three_lstms(), dir.str("seq")));
  INFO(seq.output);
  REQUIRE(seq.code == 0);
  CHECK_THAT(seq.output, Catch::Contains("3 models on sw26010, sequential:"));
  const auto pipe = run_cli(fmt::format("run {} --concurrent --out '{}'", three_lstms(), dir.str("pipe")));
  INFO(pipe.output);
  REQUIRE(pipe.code == 0);
  CHECK_THAT(pipe.output, Catch::Contains("3 models on sw26010, pipelined:"));

  for (const char* model : {"lstm_a", "lstm_b", "lstm_c"}) {
    for (const char* output : {"y.npy", "y_h.npy"}) {
      const std::string a = read_file(dir.path / "seq" / model / output);
      REQUIRE(a.size() > 128);
      CHECK(a == read_file(dir.path / "pipe" / model / output));
    }
    CHECK(stats_of(dir.path / "pipe" / model)["ops"].size() == 1);
    CHECK_FALSE(fs::exists(dir.path / "pipe" / model / "RUN_INCOMPLETE"));
  }
  const auto s = stats_of(dir.path / "seq");
  const auto p = stats_of(dir.path / "pipe");
  CHECK(s["schedule"] == "sequential");
  CHECK(p["schedule"] == "pipelined");
  CHECK(p["machine"]["busy_core_cycles"] == s["machine"]["busy_core_cycles"]);
  CHECK(p["machine"]["idle_core_cycles"].get<std::uint64_t>() < s["machine"]["idle_core_cycles"].get<std::uint64_t>());
  CHECK(p["machine"]["makespan_cycles"].get<std::uint64_t>() < s["machine"]["makespan_cycles"].get<std::uint64_t>());
  // Sequentially each model starts where the previous one ended; pipelined, all start at 0.
  CHECK(s["models"][1]["start_cycle"] == s["models"][0]["end_cycle"]);
  CHECK(s["models"][2]["start_cycle"] == s["models"][1]["end_cycle"]);
  for (const auto& m : p["models"]) {
    CHECK(m["start_cycle"] == 0);
    CHECK(m["status"] == "ok");
  }
  const std::string svg = read_file(dir.path / "pipe" / "schedule.svg");
  CHECK_THAT(svg, Catch::StartsWith("<svg"));
  CHECK_THAT(svg, Catch::Contains("lstm_b"));
  CHECK_THAT(svg, Catch::Contains("context switch"));
  // One trace for the machine, its launches named by model.
  ldmsim::TraceReader reader(dir.path / "pipe" / "trace.ldmtrace");
  CHECK(reader.header()["run"]["schedule"] == "pipelined");
  CHECK(reader.header()["run"]["workload"] == "lstm_a+lstm_b+lstm_c");  // what `trace summary` shows
  CHECK(reader.header()["cycles"] == p["machine"]["makespan_cycles"]);
  int lstm_b_launches = 0;
  ldmsim::TraceBlock block;
  while (reader.next(block)) {
    for (const auto& m : block.markers) {
      if (m.kind == ldmsim::MarkerKind::kLaunchBegin && m.text.rfind("lstm_b:", 0) == 0) ++lstm_b_launches;
    }
  }
  CHECK(lstm_b_launches > 0);
  CHECK(run_cli(fmt::format("trace summary '{}'", dir.str("pipe"))).code == 0);
}

TEST_CASE("one model under --concurrent is a plain run", "[cli][models]") {
  const ScratchDir dir("models-one");
  const auto plain = run_cli(fmt::format("run '{}' --out '{}'", example("lstm_b"), dir.str("plain")));
  REQUIRE(plain.code == 0);
  const auto one = run_cli(fmt::format("run '{}' --concurrent --out '{}'", example("lstm_b"), dir.str("one")));
  INFO(one.output);
  REQUIRE(one.code == 0);
  CHECK(read_file(dir.path / "plain" / "y.npy") == read_file(dir.path / "one" / "lstm_b" / "y.npy"));
  CHECK(stats_of(dir.path / "plain")["cycles"] == stats_of(dir.path / "one")["machine"]["makespan_cycles"]);
  CHECK(stats_of(dir.path / "one")["machine"]["switches"] == 0);
  CHECK(read_file(dir.path / "plain" / "trace.ldmtrace").size() > 0);
}

TEST_CASE("a model that traps keeps its fault, the others finish and keep their outputs", "[cli][models]") {
  const ScratchDir dir("models-trap");
  std::ofstream(dir.path / "bad.json") << nlohmann::json{
      {"name", "bad"},
      {"staging", "none"},
      {"tensors", {{"x", {{"shape", {3, 5}}, {"init", {{"value", 1}}}}}}},
      {"ops", {{{"type", "relu"}, {"inputs", {"x"}}, {"outputs", {"y"}}}}},
      {"outputs", {"y"}}}.dump();
  const auto r = run_cli(
      fmt::format("run '{}' '{}' --concurrent --out '{}'", dir.str("bad.json"), example("lstm_a"), dir.str("o")));
  INFO(r.output);
  CHECK(r.code == 3);
  CHECK_THAT(r.output, Catch::Contains("model bad failed"));
  const auto top = stats_of(dir.path / "o");
  CHECK(top["models"][0]["status"] == "fault");
  CHECK(top["models"][0]["fault"]["kind"] == "dma-misaligned");
  CHECK_THAT(top["models"][0]["fault"]["kernel"].get<std::string>(), Catch::StartsWith("bad:"));
  CHECK(top["models"][1]["status"] == "ok");
  CHECK(stats_of(dir.path / "o" / "bad")["fault"]["kind"] == "dma-misaligned");
  CHECK_FALSE(fs::exists(dir.path / "o" / "bad" / "y.npy"));
  CHECK(fs::exists(dir.path / "o" / "lstm_a" / "y.npy"));
  CHECK_FALSE(fs::exists(dir.path / "o" / "RUN_INCOMPLETE"));
  ldmsim::TraceReader reader(dir.path / "o" / "trace.ldmtrace");
  CHECK(reader.header()["fault"]["kind"] == "dma-misaligned");
}

TEST_CASE("several models: names are made unique, and bad combinations are refused", "[cli][models]") {
  const ScratchDir dir("models-bad");
  const auto twice =
      run_cli(fmt::format("run '{}' '{}' --concurrent --out '{}'", example("lstm_a"), example("lstm_a"), dir.str("t")));
  INFO(twice.output);
  REQUIRE(twice.code == 0);
  CHECK(read_file(dir.path / "t" / "lstm_a" / "y.npy") == read_file(dir.path / "t" / "lstm_a-2" / "y.npy"));

  std::ofstream(dir.path / "tiny.json") << nlohmann::json{
      {"name", "small"},
      {"arch", "tiny"},
      {"tensors", {{"x", {{"shape", {4, 4}}, {"init", {{"value", 1}}}}}}},
      {"ops", {{{"type", "relu"}, {"inputs", {"x"}}, {"outputs", {"y"}}}}},
      {"outputs", {"y"}}}.dump();
  auto r = run_cli(fmt::format("run '{}' '{}' --out '{}'", example("lstm_a"), dir.str("tiny.json"), dir.str("a")));
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("names arch 'sw26010'") && Catch::Contains("'tiny'"));
  CHECK_THAT(r.output, Catch::Contains("--arch"));
  CHECK_FALSE(fs::exists(dir.path / "a"));  // refused before anything was written
  r = run_cli(
      fmt::format("run '{}' '{}' --arch tiny --out '{}'", dir.str("tiny.json"), dir.str("tiny.json"), dir.str("b")));
  CHECK(r.code == 0);
  // A model's directory may not be a link out of --out, nor a file; nothing is written then.
  fs::create_directories(dir.path / "linked");
  fs::create_directories(dir.path / "elsewhere");
  fs::create_directory_symlink(dir.path / "elsewhere", dir.path / "linked" / "lstm_a");
  r = run_cli(fmt::format("run '{}' '{}' --out '{}'", example("lstm_a"), example("lstm_b"), dir.str("linked")));
  CHECK(r.code == 2);
  CHECK_THAT(r.output,
             Catch::Contains("refusing to write model lstm_a's outputs") && Catch::Contains("a symbolic link"));
  CHECK(fs::is_empty(dir.path / "elsewhere"));
  CHECK_FALSE(fs::exists(dir.path / "linked" / "RUN_INCOMPLETE"));
  fs::create_directories(dir.path / "linked2");
  std::ofstream(dir.path / "linked2" / "lstm_b") << "x";
  r = run_cli(fmt::format("run '{}' '{}' --out '{}'", example("lstm_a"), example("lstm_b"), dir.str("linked2")));
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("another kind of file"));
  CHECK(read_file(dir.path / "linked2" / "lstm_b") == "x");
  // The trace may not land on any file the run writes, nor inside a model's directory.
  // (--out relative, --trace absolute, on a fresh --out: the paths compare resolved.)
  for (const std::string& trace : {dir.str("t2/lstm_a/y.npy"), dir.str("t2/lstm_b"), dir.str("t2/stats.json"),
                                   dir.str("t2/schedule.svg"), dir.str("t2/lstm_a/../lstm_a/stats.json")}) {
    r = shell(fmt::format("cd '{}' && '{}' run '{}' '{}' --out t2 --trace '{}' 2>&1", dir.str(), LDMSIM_CLI,
                          example("lstm_a"), example("lstm_b"), trace));
    INFO(trace << ": " << r.output);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Catch::Contains("--trace"));
    CHECK_FALSE(fs::exists(dir.path / "t2"));  // refused before anything was made
  }
  r = run_cli(fmt::format("run '{}' --out '{}' --trace '{}'", example("lstm_a"), dir.str("t3"), dir.str("t3/y.npy")));
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("where the run writes its output y.npy"));
  // Names stay unique even when a file is already called like a made-up one, and never name the run marker.
  fs::copy_file(example("lstm_a"), dir.path / "lstm_a-2.json");
  fs::copy_file(example("lstm_a"), dir.path / "RUN_INCOMPLETE.json");
  r = run_cli(fmt::format("run '{}' '{}' '{}' '{}' --no-trace --out '{}'", example("lstm_a"), example("lstm_a"),
                          dir.str("lstm_a-2.json"), dir.str("RUN_INCOMPLETE.json"), dir.str("n")));
  INFO(r.output);
  CHECK(r.code == 0);
  for (const char* name : {"lstm_a", "lstm_a-2", "lstm_a-2-2", "RUN_INCOMPLETE-2"}) {
    CHECK(fs::exists(dir.path / "n" / name / "y.npy"));
  }
  CHECK_FALSE(fs::exists(dir.path / "n" / "RUN_INCOMPLETE"));
  r = run_cli("run --concurrent");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("--concurrent runs several models"));
  r = run_cli(fmt::format("run '{}' '{}' --input x=a.npy", example("lstm_a"), example("lstm_b")));
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("--input gives one ONNX model's inputs"));
  // More models than ldm shares: 65 contexts.
  std::string many;
  for (int k = 0; k < 65; ++k) many += " '" + dir.str("tiny.json") + "'";
  r = run_cli(fmt::format("run {} --out '{}'", many, dir.str("many")));
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("contexts"));
}
