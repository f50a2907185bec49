// `ldmsim plan`: every tensor's tags in text and JSON for a workload and an ONNX model, nothing run or written
// except the JSON file asked for, and bad input refused with exit 2; `run --explain` without a workload refused.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "ldmsim/frontends/npy.hpp"

using namespace ldmsim::testing;

TEST_CASE("ldmsim plan prints every tensor's static and dynamic tags", "[cli][plan]") {
  const std::string workload = std::string(LDMSIM_SOURCE_DIR) + "/examples/conv_block.json";
  const auto r = run_cli(fmt::format("plan '{}' --arch sw26010pro", workload));
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output,
             Catch::Contains("conv_block on sw26010pro (6 memories, 64 cores each; staging method, fusion on, split "
                             "off)"));
  CHECK_THAT(r.output, Catch::Contains("static:input neuron,fp16,[2,3,17,17]"));
  // Values as the machine holds them: 0.05 rounded to fp16 is 0.04998779296875.
  CHECK_THAT(r.output, Catch::Contains("static:constant weight,fp16,[8],values [0.049987793,0.049987793"));
  CHECK_THAT(r.output, Catch::Contains("static:output neuron,fp16,[2,5]"));
  CHECK_THAT(r.output, Catch::Contains("dynamic:fp16,nc,tiling none,padding c=1,size 24,split none,mem0,no"));

  const ScratchDir out("plan-json");
  const auto j = run_cli(fmt::format("plan '{}' --json-file '{}/tags.json' --fusion off", workload, out.str()));
  INFO(j.output);
  REQUIRE(j.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(read_file(out.path / "tags.json"));
  CHECK(doc["tensors"].size() == 13);
  CHECK(doc["memories"] == 4);
  for (const auto& t : doc["tensors"]) {
    CHECK(t.contains("static"));
    CHECK(t["dynamic"]["bytes"].get<std::uint64_t>() >= 2);
  }
  const auto printed = run_cli(fmt::format("plan '{}' --json", workload), true);
  REQUIRE(printed.code == 0);
  CHECK(nlohmann::json::parse(printed.output)["tensors"].size() == 13);
}

TEST_CASE("ldmsim plan refuses bad input with exit 2", "[cli][plan]") {
  const ScratchDir dir("plan-bad");
  std::ofstream(dir.path / "bad.json") << R"({"name": "x", "tensors": {}, "ops": [{"type": "nope"}], "outputs": []})";
  auto r = run_cli(fmt::format("plan '{}'", (dir.path / "bad.json").string()));
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("unknown op 'nope'") || Catch::Contains("ops[0]"));
  r = run_cli(fmt::format("plan '{}'", (dir.path / "missing.json").string()));
  CHECK(r.code == 2);
  const std::string workload = std::string(LDMSIM_SOURCE_DIR) + "/examples/conv_block.json";
  r = run_cli(fmt::format("plan '{}' --arch no_such_arch", workload));
  CHECK(r.code == 2);
  r = run_cli(fmt::format("plan '{}' --json-file ''", workload));  // an empty path is refused, not ignored
  CHECK(r.code == 2);
  r = run_cli(fmt::format("plan '{}' --json-file '{}'", workload, dir.str()));  // a directory is not replaced
  CHECK(r.code == 2);
  CHECK(std::filesystem::is_directory(dir.path));
}

TEST_CASE("run --explain needs a workload", "[cli][recurrent]") {
  const auto r = run_cli("run --explain --no-trace");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Catch::Contains("--explain shows the choices of a workload's ops"));
}

TEST_CASE("ldmsim plan --split on prints the pieces, their memories and the reduction tree", "[cli][plan][split]") {
  const std::string dir = std::string(LDMSIM_SOURCE_DIR) + "/examples/split";
  const auto r =
      run_cli(fmt::format("plan '{0}/method_mlp.json' --arch '{0}/arch_2x2.json' --split on "
                          "--split-rounding pad",
                          dir));
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Catch::Contains("split on"));
  CHECK_THAT(r.output, Catch::Contains("dynamic:fp16,nc,tiling c=256,padding c=24,size 2048,split "
                                       "c[(0,255),(256,511),(512,767),(768,1023)],mem,no"));
  CHECK_THAT(r.output, Catch::Contains("split matmul#0: inner of x (D 1000, padded to 1024), mode 1, 4 pieces"));
  CHECK_THAT(r.output, Catch::Contains("reduction level 1: o1+o2 (core), o3+o4 (core)"));
  CHECK_THAT(r.output, Catch::Contains("reduction level 2: o1+o3 (cg)"));
  const auto j = run_cli(fmt::format("plan '{0}/method_mlp.json' --arch '{0}/arch_2x2.json' --split on --json", dir));
  REQUIRE(j.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(j.output);
  CHECK(doc["split"]["ops"][0]["mode"] == 1);
  CHECK(doc["split"]["ops"][0]["pieces"].size() == 4);
  CHECK(run_cli(fmt::format("plan '{}/method_mlp.json' --split sideways", dir)).code == 2);
}

TEST_CASE("ldmsim plan and run --place pin an op's placement and refuse what the model lacks", "[cli][plan][split]") {
  const std::string dir = std::string(LDMSIM_SOURCE_DIR) + "/examples/split";
  const std::string model = fmt::format("'{0}/method_mlp.json' --arch '{0}/arch_2x2.json' --split auto", dir);
  const auto chosen = run_cli("plan " + model);
  REQUIRE(chosen.code == 0);
  REQUIRE_THAT(chosen.output, Catch::Contains("matmul#0: inner, estimated") && Catch::Contains("runner-up whole"));
  const auto pinned = run_cli("plan " + model + " --place 'matmul#0=whole'");
  INFO(pinned.output);
  REQUIRE(pinned.code == 0);
  CHECK_THAT(pinned.output, Catch::Contains("matmul#0: whole, estimated") && Catch::Contains("(pinned)"));
  const auto j = run_cli("plan " + model + " --place 'matmul#0=whole' --json");
  REQUIRE(j.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(j.output);
  CHECK(doc["split"]["placements"][0]["pinned"] == true);
  CHECK(doc["split"]["placements"][0]["placement"] == "whole");
  const ScratchDir out("run-place");
  const auto ran = run_cli(fmt::format("run {} --place 'matmul#0=inner' --no-trace --out '{}'", model, out.str()));
  REQUIRE(ran.code == 0);
  const nlohmann::json stats = nlohmann::json::parse(read_file(out.path / "stats.json"));
  CHECK(stats["ops"][0]["placement"]["pinned"] == true);
  CHECK(stats["ops"][0]["split"]["rule"] == "inner");
  CHECK(stats["split"]["pinned"] == nlohmann::json{{"matmul#0", "inner"}});  // what repeats the run
  // Pinned whole, nothing is split: the run takes the whole machine, and still records the pin.
  const ScratchDir whole_out("run-place-whole");
  const auto whole =
      run_cli(fmt::format("run {} --place 'matmul#0=whole' --no-trace --out '{}'", model, whole_out.str()));
  REQUIRE(whole.code == 0);
  const nlohmann::json whole_stats = nlohmann::json::parse(read_file(whole_out.path / "stats.json"));
  CHECK(whole_stats["split"]["ops_split"] == 0);
  CHECK(whole_stats["split"]["pinned"] == nlohmann::json{{"matmul#0", "whole"}});
  // Refused by name, exit 2: an op the model lacks, a placement it is not offered, a malformed pin, two
  // placements for one op, and a pin without the cost-aware choice.
  const auto missing = run_cli("plan " + model + " --place 'conv9=whole'");
  CHECK(missing.code == 2);
  CHECK_THAT(missing.output, Catch::Contains("the model has no op 'conv9'"));
  const auto label = run_cli("plan " + model + " --place 'matmul#0=conv-h'");
  CHECK(label.code == 2);
  CHECK_THAT(label.output, Catch::Contains("its placements here: 'whole', 'inner'"));
  CHECK(run_cli("plan " + model + " --place matmul0").code == 2);
  const auto twice = run_cli("plan " + model + " --place 'matmul#0=whole' --place 'matmul#0=inner'");
  CHECK(twice.code == 2);
  CHECK_THAT(twice.output, Catch::Contains("already placed whole"));
  const auto on =
      run_cli(fmt::format("plan '{0}/method_mlp.json' --arch '{0}/arch_2x2.json' --split on --place "
                          "'matmul#0=whole'",
                          dir));
  CHECK(on.code == 2);
  CHECK_THAT(on.output, Catch::Contains("--split auto"));
  // A workload JSON runs --split off unless told: the refusal says how to pin.
  const auto off =
      run_cli(fmt::format("plan '{0}/method_mlp.json' --arch '{0}/arch_2x2.json' --place 'matmul#0=whole'", dir));
  CHECK(off.code == 2);
  CHECK_THAT(off.output, Catch::Contains("a workload JSON's default: pass --split auto"));
  // Pins name one model's ops: refused with several.
  const auto two =
      run_cli(fmt::format("run '{0}/method_mlp.json' '{0}/method_mlp.json' --arch '{0}/arch_2x2.json' "
                          "--split auto --place 'matmul#0=whole' --no-trace --out '{1}/two'",
                          dir, out.str()));
  CHECK(two.code == 2);
  CHECK_THAT(two.output, Catch::Contains("--place pins the ops of one model"));
}

TEST_CASE("ldmsim run --split on writes the split ops and the same outputs", "[cli][run][split]") {
  const std::string dir = std::string(LDMSIM_SOURCE_DIR) + "/examples/split";
  const ScratchDir out("run-split");
  const auto r = run_cli(
      fmt::format("run '{0}/method_mlp.json' --arch '{0}/arch_2x2.json' --split on --out '{1}/on'", dir, out.str()));
  INFO(r.output);
  REQUIRE(r.code == 0);
  const nlohmann::json stats = nlohmann::json::parse(read_file(out.path / "on/stats.json"));
  CHECK(stats["split"]["enabled"] == true);
  CHECK(stats["ops"][0]["split"]["rule"] == "inner");
  CHECK(stats["ops"][0].contains("dma_remote_bytes"));
}

TEST_CASE("ldmsim run --constant-packs on|off packs a split op's constants per core", "[cli][run][split][packs]") {
  const ScratchDir out("run-packs");
  {
    std::ofstream w(out.path / "bn.json");
    w << R"({"tensors": {"x": {"shape": [1, 32, 12, 12], "init": {"normal": [0, 1], "seed": 1}},
             "s": {"shape": [32], "init": {"value": 2}}, "b": {"shape": [32], "init": {"value": 1}},
             "m": {"shape": [32], "init": {"value": 0}}, "v": {"shape": [32], "init": {"value": 1}}},
            "ops": [{"type": "spatialbn", "inputs": ["x", "s", "b", "m", "v"], "outputs": ["y"]}],
            "outputs": ["y"]})";
  }
  for (const char* packs : {"on", "off"}) {
    const auto r =
        run_cli(fmt::format("run '{0}/bn.json' --arch sw26010 --split on --constant-packs {1} "
                            "--no-trace --out '{0}/{1}'",
                            out.str(), packs));
    INFO(r.output);
    REQUIRE(r.code == 0);
    const nlohmann::json stats = nlohmann::json::parse(read_file(out.path / packs / "stats.json"));
    CHECK(stats["split"]["constant_packs"] == (std::string(packs) == "on"));
    CHECK(stats["ops"][0].contains("constant_packs") == (std::string(packs) == "on"));
  }
  CHECK(read_file(out.path / "on/y.npy") == read_file(out.path / "off/y.npy"));
  const auto bad = run_cli(fmt::format("run '{0}/bn.json' --split on --constant-packs maybe --out '{0}/x'", out.str()));
  CHECK(bad.code == 2);
  CHECK_THAT(bad.output, Catch::Contains("--constant-packs"));
}

TEST_CASE("ldmsim plan lists an f32 file's constant as the fp16 values the machine holds", "[cli][plan]") {
  const ScratchDir dir("plan-f32");
  ldmsim::write_npy(dir.path / "w.npy", {2, 4}, std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f});
  std::ofstream(dir.path / "fc.json") << R"({"name": "fc_f32",
    "tensors": {"x": {"shape": [1, 4], "init": {"value": 1}},
                "w": {"shape": [2, 4], "dtype": "f32", "init": {"file": "w.npy"}},
                "b": {"shape": [2], "init": {"value": 0}}},
    "ops": [{"type": "fc", "inputs": ["x", "w", "b"], "outputs": ["y"]}], "outputs": ["y"]})";
  const auto r = run_cli(fmt::format("plan '{}'", dir.str("fc.json")));
  INFO(r.output);
  REQUIRE(r.code == 0);
  // fp16(0.1) = 0.0999755859375, fp16(0.2) = 0.199951171875, fp16(0.5) = 0.5 exactly.
  CHECK_THAT(r.output, Catch::Contains("static:constant weight,fp32,[2,4],values [0.099975586,0.19995117"));
  CHECK_THAT(r.output, Catch::Contains(",0.5,"));
}

TEST_CASE("plan, run --dump-graph and stats.json show each op's placement, estimate and runner-up with --split auto",
          "[cli][run][split][auto]") {
  const std::string workload = std::string(LDMSIM_SOURCE_DIR) + "/examples/conv_block.json";
  const auto text = run_cli(fmt::format("plan '{}' --arch sw26010 --split auto", workload));
  INFO(text.output);
  REQUIRE(text.code == 0);
  CHECK_THAT(text.output, Catch::Contains("split auto"));
  CHECK_THAT(text.output, Catch::Contains("placements (--split auto), estimated "));
  CHECK_THAT(text.output, Catch::Contains("(runner-up "));

  const ScratchDir out("run-auto");
  const auto plan = run_cli(fmt::format("plan '{}' --arch sw26010 --split auto --json", workload), true);
  REQUIRE(plan.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(plan.output);
  CHECK(doc["split"]["mode"] == "auto");
  REQUIRE(doc["split"]["placements"].is_array());
  for (const auto& p : doc["split"]["placements"]) {
    CHECK(p["estimated_cycles"].get<double>() >= 0);
    CHECK(p.contains("placement"));
  }

  const auto r =
      run_cli(fmt::format("run '{}' --arch sw26010 --split auto --dump-graph --out '{}/auto'", workload, out.str()));
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Catch::Contains("placements (--split auto), estimated "));
  const nlohmann::json stats = nlohmann::json::parse(read_file(out.path / "auto/stats.json"));
  std::size_t placed = 0;
  for (const auto& op : stats["ops"]) {
    REQUIRE(op.contains("placement"));
    CHECK(op["placement"]["estimated_cycles"].get<double>() >= 0);
    // A split op's record says how it was cut, and that is the placement chosen.
    if (op.contains("split")) {
      CHECK_THAT(op["placement"]["placement"].get<std::string>(),
                 Catch::StartsWith(op["split"]["rule"].get<std::string>()));
      ++placed;
    }
  }
  CHECK(placed == doc["split"]["ops"].size());
  CHECK(run_cli(fmt::format("run '{}' --split sometimes", workload)).code == 2);
}

TEST_CASE("plan and stats.json show each op's estimate under the rule's placement (--split on)", "[cli][run][split]") {
  const std::string workload = std::string(LDMSIM_SOURCE_DIR) + "/examples/conv_block.json";
  const auto text = run_cli(fmt::format("plan '{}' --arch sw26010 --split on", workload));
  INFO(text.output);
  REQUIRE(text.code == 0);
  CHECK_THAT(text.output, Catch::Contains("placements (--split on), estimated "));
  CHECK_THAT(text.output, !Catch::Contains("runner-up"));

  const ScratchDir out("run-on-priced");
  const auto r = run_cli(fmt::format("run '{}' --arch sw26010 --split on --out '{}/on'", workload, out.str()));
  INFO(r.output);
  REQUIRE(r.code == 0);
  const nlohmann::json stats = nlohmann::json::parse(read_file(out.path / "on/stats.json"));
  double sum = 0;
  for (const auto& op : stats["ops"]) {
    REQUIRE(op.contains("placement"));
    CHECK_FALSE(op["placement"].contains("runner_up"));
    sum += op["placement"]["estimated_cycles"].get<double>();
    // The placement named is the rule's cut, or whole where the rule left the op whole.
    const std::string placement = op["placement"]["placement"];
    CHECK(placement == (op.contains("split") ? op["split"]["rule"].get<std::string>() : std::string("whole")));
  }
  CHECK(sum > 0);
  CHECK(stats["split"]["estimated_cycles"].get<double>() == Approx(sum).epsilon(1e-6).margin(stats["ops"].size()));
}
