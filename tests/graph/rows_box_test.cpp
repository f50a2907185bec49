// Rows as boxes of a whole tensor (docs/splitting.md, "Rows read in place" and "Rows written into one tensor"):
// which ops and inputs qualify, and an inverted-residual block whose cost-aware plan uses both, against the run
// without splits: the same outputs, no gather before the pieces that read in place, none after the pieces that write
// into one tensor, no checking report, the same trace on two host threads.
#include <catch2/catch.hpp>

#include "fusion_support.hpp"
#include "ldmsim/graph/split.hpp"
#include "ldmsim/runtime/check.hpp"
#include "trace_bytes.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

/// x -> 1x1 conv -> t -> 1x1 conv to `expand` channels, clip -> depthwise 3x3 conv, clip -> 1x1 conv to 32, + t.
json inverted_residual(std::uint64_t width, std::uint64_t expand = 96) {
  json w = json::parse(R"({
    "tensors": {"x": {"init": {"normal": [0, 1], "seed": 1}},
                "w0": {"shape": [32, 32, 1, 1], "init": {"uniform": [-0.2, 0.2], "seed": 2}},
                "w1": {"init": {"uniform": [-0.2, 0.2], "seed": 3}},
                "w2": {"init": {"uniform": [-0.3, 0.3], "seed": 4}},
                "w3": {"init": {"uniform": [-0.08, 0.08], "seed": 5}}},
    "ops": [{"type": "conv", "inputs": ["x", "w0"], "outputs": ["t"]},
            {"type": "conv", "inputs": ["t", "w1"], "outputs": ["c1"]},
            {"type": "clip", "inputs": ["c1"], "outputs": ["r1"], "attrs": {"min": 0, "max": 6}},
            {"type": "conv", "inputs": ["r1", "w2"], "outputs": ["c2"], "attrs": {"pad": 1}},
            {"type": "clip", "inputs": ["c2"], "outputs": ["r2"], "attrs": {"min": 0, "max": 6}},
            {"type": "conv", "inputs": ["r2", "w3"], "outputs": ["c3"]},
            {"type": "add", "inputs": ["c3", "t"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  w["tensors"]["x"]["shape"] = {1, 32, 28, width};
  w["tensors"]["w1"]["shape"] = {expand, 32, 1, 1};
  w["tensors"]["w2"]["shape"] = {expand, 1, 3, 3};
  w["tensors"]["w3"]["shape"] = {32, expand, 1, 1};
  w["ops"][3]["attrs"]["groups"] = expand;
  return w;
}

struct Run {
  ExecutionResult result;
  std::string trace;
  std::string reports;
};

Run run(const Graph& g, const Arch& arch, bool cost_aware, unsigned threads = 1, bool checks = false) {
  MachineOptions options;
  options.threads = threads;
  Machine m(arch, options);
  if (checks) enable_checks(m, CheckSet{.races = true, .init = true, .bounds = true});
  ExecuteOptions exec;
  exec.split = SplitOptions{.enabled = cost_aware, .cost_aware = cost_aware};
  Run r{execute(g, m, exec), test::trace_bytes(m, "rows_box_test"), {}};
  for (const CheckReport& report : check_reports(m)) r.reports += format_check_report(report) + "\n";
  return r;
}

}  // namespace

TEST_CASE("rows are read in place by pointwise convs, and written into one tensor by convs on the matrix engine",
          "[graph][split]") {
  const Graph g = test::graph_of(inverted_residual(28));
  const TensorRegion rows{false, 2, 7, 14};
  const OpNode& expand = g.ops()[1];     // 1x1 conv
  const OpNode& depthwise = g.ops()[3];  // 3x3, one group per channel
  const OpNode& project = g.ops()[5];    // 1x1 conv
  CHECK(rows_in_place(g, expand, 0, rows));
  CHECK_FALSE(rows_in_place(g, expand, 1, rows));  // the weights
  CHECK_FALSE(rows_in_place(g, expand, 0, TensorRegion{}));
  CHECK_FALSE(rows_in_place(g, expand, 0, TensorRegion{false, 1, 0, 16}));  // channels, not rows
  CHECK_FALSE(rows_in_place(g, depthwise, 0, rows));
  CHECK(rows_in_place(g, project, 0, rows));
  // An odd width would start rows on half words.
  const Graph odd = test::graph_of(inverted_residual(27));
  CHECK_FALSE(rows_in_place(odd, odd.ops()[1], 0, rows));

  const Arch arch = Arch::preset("sw26010pro");
  SplitPlan plan;
  plan.memories = arch.core_groups;
  plan.cores = arch.total_cores();
  const auto cut = [&](const Graph& graph, const OpNode& op, const std::string& rule) {
    for (const SplitAxis& axis : split_axes(graph, op)) {
      if (axis.rule == rule) return split_along(graph, op, axis, plan, arch);
    }
    return std::optional<OpSplit>{};
  };
  const std::optional<OpSplit> by_rows = cut(g, expand, "conv-h");
  REQUIRE(by_rows);
  const std::optional<OpSplit> into_one = rows_into_one(g, expand, *by_rows);
  REQUIRE(into_one);
  CHECK(into_one->whole_output);
  CHECK(into_one->tensor_pieces.back().empty());  // the output is held whole
  CHECK(into_one->blocks == by_rows->blocks);
  const std::optional<OpSplit> depthwise_rows = cut(g, depthwise, "conv-h");
  REQUIRE(depthwise_rows);
  CHECK_FALSE(rows_into_one(g, depthwise, *depthwise_rows));  // it writes its layout's whole extent
  const std::optional<OpSplit> by_channels = cut(g, expand, "conv-k");
  REQUIRE(by_channels);
  CHECK_FALSE(rows_into_one(g, expand, *by_channels));
  CHECK_FALSE(rows_into_one(odd, odd.ops()[0], *cut(odd, odd.ops()[0], "conv-h")));
}

TEST_CASE("the cost-aware plan reads rows where a whole copy lies and writes rows into one tensor, outputs unchanged",
          "[graph][split][auto]") {
  // On sw26010pro the expanding conv's pieces write their rows into one r1 in group 0's memory, which the depthwise
  // conv (whole) reads as it would a whole op's output; the projection is cut by rows again, each piece reading its
  // rows of r2 where the depthwise conv left it. Without the boxes each of those steps would be a gather.
  const Arch arch = Arch::preset("sw26010pro");
  const FusedGraph f = fuse(test::graph_of(inverted_residual(28)), arch, StagingPolicy::kMethod);
  const Run chosen = run(f.graph, arch, true), whole = run(f.graph, arch, false);
  const json& ops = chosen.result.stats["ops"];
  REQUIRE(ops.size() == 4);  // conv, conv+clip, depthwise conv+clip, conv+add
  CHECK(ops[1]["placement"]["placement"] == "conv-h into one");
  CHECK(ops[2]["placement"]["placement"] == "whole");
  CHECK(ops[3]["placement"]["placement"] == "conv-h");
  CHECK(chosen.result.outputs.at("y") == whole.result.outputs.at("y"));
  // Checking mode finds no read of unwritten bytes, out of bounds or racing in the boxes.
  const Run checked = run(f.graph, arch, true, 1, true);
  CHECK(checked.reports.empty());
  CHECK(checked.result.outputs.at("y") == chosen.result.outputs.at("y"));
  // The whole conv after the pieces moves what it moves after a whole op: no gather of r1 first.
  CHECK(ops[2]["dma_bytes"] == whole.result.stats["ops"][2]["dma_bytes"]);
  // The projection reads r2 once (its rows on each group): less than the whole op moves, where a gather would read
  // and write r2 again (150 KB) first.
  CHECK(ops[3]["dma_bytes"].get<std::uint64_t>() < whole.result.stats["ops"][3]["dma_bytes"].get<std::uint64_t>());
  CHECK(chosen.result.stats["cycles"].get<std::uint64_t>() < whole.result.stats["cycles"].get<std::uint64_t>());
  // Two host threads, after the runs above in this process: the same trace, stats and outputs.
  const Run two = run(f.graph, arch, true, 2);
  CHECK(two.trace == chosen.trace);
  CHECK(two.result.stats == chosen.result.stats);
  CHECK(two.result.outputs.at("y") == chosen.result.outputs.at("y"));
}

TEST_CASE("a box read in place is the 1x1 conv's alone: another reader of those rows gathers them", "[graph][split]") {
  // t is whole (softmax runs whole); the 1x1 conv's pieces read their rows of t in place, then the relu, cut by the
  // same rows, needs them too. It gathers them as it would without the conv before it, instead of re-laying out
  // the conv's boxes (read at the whole copy's pitches, mostly remotely: 4x the cycles).
  const auto graph = [](bool with_conv) {
    json w = json::parse(R"({
      "tensors": {"x": {"shape": [1, 16, 64, 8], "init": {"normal": [0, 1], "seed": 1}},
                  "w": {"shape": [8, 16, 1, 1], "init": {"uniform": [-0.3, 0.3], "seed": 2}}},
      "ops": [{"type": "softmax", "inputs": ["x"], "outputs": ["t"], "attrs": {"axis": 1}},
              {"type": "conv", "inputs": ["t", "w"], "outputs": ["y1"]},
              {"type": "relu", "inputs": ["t"], "outputs": ["y2"]}],
      "outputs": ["y1", "y2"]})");
    if (!with_conv) w["ops"].erase(1), w["outputs"].erase(0);
    return test::graph_of(w);
  };
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    INFO(preset);
    const Arch arch = Arch::preset(preset);
    MachineOptions one;
    one.threads = 1;
    ExecuteOptions on;
    on.split = SplitOptions{.enabled = true};
    Machine a(arch, one), b(arch, one);
    const ExecutionResult both = execute(graph(true), a, on), alone = execute(graph(false), b, on);
    REQUIRE(both.stats["ops"][1]["split"]["rule"] == "conv-h");
    REQUIRE(both.stats["ops"][2]["split"]["rule"] == alone.stats["ops"][1]["split"]["rule"]);
    CHECK(both.outputs.at("y2") == alone.outputs.at("y2"));
    const auto relu_cycles = [](const ExecutionResult& r, std::size_t i) {
      return static_cast<double>(r.stats["ops"][i]["cycles"].get<std::uint64_t>());
    };
    CHECK(relu_cycles(both, 2) <= 1.2 * relu_cycles(alone, 1));
  }
}

TEST_CASE("channels of a whole tensor are read in place by a pointwise op cut by channels", "[graph][split]") {
  // t is whole in group 0's memory (softmax runs whole); the relu, cut by channels, reads each piece's channels as
  // the block of planes they are in t, remotely from groups 1.., instead of gathering them into buffers first.
  const auto graph = [](std::uint64_t n) {
    json w = json::parse(R"({
      "tensors": {"x": {"init": {"normal": [0, 1], "seed": 1}}},
      "ops": [{"type": "softmax", "inputs": ["x"], "outputs": ["t"], "attrs": {"axis": 1}},
              {"type": "relu", "inputs": ["t"], "outputs": ["y"]}],
      "outputs": ["y"]})");
    w["tensors"]["x"]["shape"] = {n, 64, 8, 8};
    return test::graph_of(w);
  };
  const Graph one = graph(1), two = graph(2);
  const OpNode& relu = one.ops()[1];
  const TensorRegion channels{false, 1, 16, 32};
  CHECK(channels_in_place(one, relu, "elementwise", 0, channels));
  CHECK_FALSE(channels_in_place(one, relu, "elementwise", 0, TensorRegion{false, 2, 0, 4}));  // rows
  CHECK_FALSE(channels_in_place(one, relu, "conv-g", 0, channels));                           // not pointwise
  CHECK_FALSE(channels_in_place(two, two.ops()[1], "elementwise", 0, channels));  // two samples: not one block
  const Graph odd = test::graph_of(json::parse(R"({
      "tensors": {"x": {"shape": [1, 64, 5, 5], "init": {"normal": [0, 1], "seed": 1}}},
      "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})"));
  CHECK_FALSE(channels_in_place(odd, odd.ops()[0], "elementwise", 0, channels));  // odd planes: half-word starts
  const Graph words = test::graph_of(json::parse(R"({
      "tensors": {"a": {"shape": [1, 64, 8, 8], "dtype": "int32", "init": {"value": 3}},
                  "b": {"shape": [1, 64, 8, 8], "dtype": "int32", "init": {"value": 4}}},
      "ops": [{"type": "equal", "inputs": ["a", "b"], "outputs": ["y"]}], "outputs": ["y"]})"));
  CHECK_FALSE(channels_in_place(words, words.ops()[0], "elementwise", 0, channels));  // 4-byte elements

  for (const char* preset : {"sw26010", "sw26010pro"}) {
    INFO(preset);
    const Arch arch = Arch::preset(preset);
    MachineOptions options;
    options.threads = 1;
    Machine m(arch, options), whole(arch, options);
    enable_checks(m, CheckSet{.races = true, .init = true, .bounds = true});
    ExecuteOptions on;
    on.split = SplitOptions{.enabled = true};
    const ExecutionResult split = execute(one, m, on), off = execute(one, whole, ExecuteOptions{});
    REQUIRE(split.stats["ops"][1]["split"]["rule"] == "elementwise");
    REQUIRE(plan_split(one, arch, {.enabled = true}).ops[1]->axis.axis == 1);  // the channels, its largest
    CHECK(split.outputs.at("y") == off.outputs.at("y"));
    CHECK(check_reports(m).empty());
    // The relu's record holds what its groups moved: t read once and y written once, no gather of t before.
    const std::uint64_t bytes = 64 * 8 * 8 * sizeof(f16);
    CHECK(split.stats["ops"][1]["dma_bytes"].get<std::uint64_t>() <= 2 * bytes + 1024);
  }
}
