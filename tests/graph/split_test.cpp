// The split rule and the split executor (docs/splitting.md): the method's worked example reproduced (tags, pieces,
// the reduction tree); the three modes; pieces run on the groups that hold them with the outputs of the unsplit
// run, fewer remote bytes and fewer cycles when the network is priced; exchanges between differently split ops;
// identical results for any number of host threads.
#include "ldmsim/graph/split.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "kernels/op_harness.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"
#include "ldmsim/graph/tags.hpp"
#include "ldmsim/runtime/check.hpp"
#include "trace_bytes.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

Graph load(const std::filesystem::path& file) {
  std::ifstream in(file);
  return workload_from_json(json::parse(in), file.string(), file.parent_path().string(), test::registry());
}

Graph from(const json& tree) {
  return workload_from_json(tree, "split.json", ".", test::registry());
}

Arch method_arch() {
  return Arch::load(std::filesystem::path(LDMSIM_SOURCE_DIR) / "examples/split/arch_2x2.json");
}

const TensorTags& by_name(const std::vector<TensorTags>& tags, const std::string& name) {
  for (const TensorTags& t : tags) {
    if (t.name == name) return t;
  }
  FAIL("no tensor " << name);
  throw std::logic_error("unreachable");
}

struct Run {
  ExecutionResult result;
  std::string trace;
};

Run run(const Graph& g, const Arch& arch, bool split, unsigned threads = 1,
        SplitRounding rounding = SplitRounding::kExact) {
  MachineOptions options;
  options.threads = threads;
  Machine m(arch, options);
  ExecuteOptions exec;
  exec.split = {split, rounding};
  Run r{execute(g, m, exec), {}};
  r.trace = test::trace_bytes(m, "split_test");
  return r;
}

double max_difference(const std::vector<f16>& a, const std::vector<f16>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max(
        d, std::abs(static_cast<double>(static_cast<float>(a[i])) - static_cast<double>(static_cast<float>(b[i]))));
  }
  return d;
}

std::uint64_t remote_bytes(const ExecutionResult& r) {
  return r.stats["machine"]["dma_remote_bytes"].get<std::uint64_t>();
}

json conv_chain() {
  return json::parse(R"({
    "name": "conv_chain",
    "tensors": {"x": {"shape": [1, 16, 20, 20], "init": {"normal": [0, 1], "seed": 1}},
                "w": {"shape": [16, 16, 3, 3], "init": {"uniform": [-0.1, 0.1], "seed": 2}},
                "b": {"shape": [16], "init": {"value": 0.05}},
                "w2": {"shape": [8, 16, 3, 3], "init": {"uniform": [-0.1, 0.1], "seed": 3}}},
    "ops": [{"type": "conv", "inputs": ["x", "w", "b"], "outputs": ["c1"], "attrs": {"pad": 1}},
            {"type": "relu", "inputs": ["c1"], "outputs": ["r1"]},
            {"type": "conv", "inputs": ["r1", "w2"], "outputs": ["c2"], "attrs": {"pad": [0, 1, 2, 1], "stride": 2}},
            {"type": "max_pool", "inputs": ["c2"], "outputs": ["y"], "attrs": {"kernel": 2, "stride": 2}}],
    "outputs": ["y", "r1"]})");
}

Arch priced(const char* preset) {
  Arch a = Arch::preset(preset);
  REQUIRE(a.dma.remote.bytes_per_cycle > 0);  // the presets price the network between groups
  return a;
}

}  // namespace

TEST_CASE("the method's worked example: an MLP on 2 core groups x 2 cores", "[graph][split]") {
  const Graph g = load(std::filesystem::path(LDMSIM_SOURCE_DIR) / "examples/split/method_mlp.json");
  const Arch arch = method_arch();
  REQUIRE(arch.core_groups == 2);
  REQUIRE(arch.cores_per_group() == 2);
  const SplitPlan split = plan_split(g, arch, {true, SplitRounding::kPad});
  const ExecutionPlan plan = plan_execution(g, StagingPolicy::kMethod);
  const auto tags = tensor_tags(g, g, plan, &split);
  const TensorTags& x = by_name(tags, "x");
  CHECK(x.static_text() == "static:input neuron,fp32,[1,1000]");
  CHECK(x.dynamic_text() ==
        "dynamic:fp16,nc,tiling c=256,padding c=24,size 2048,split c[(0,255),(256,511),(512,767),(768,1023)],mem,no");
  REQUIRE(x.dynamic.pieces.size() == 4);
  CHECK(x.dynamic.pieces[0].store == "mem0");
  CHECK(x.dynamic.pieces[1].store == "mem0");
  CHECK(x.dynamic.pieces[2].store == "mem1");
  CHECK(x.dynamic.pieces[3].store == "mem1");
  const TensorTags& w = by_name(tags, "w");
  CHECK(w.static_text() == "static:constant weight,fp32,[1000,4],values uniform [-0.1, 0.1] seed 2");
  CHECK(w.dynamic_text() ==
        "dynamic:fp16,nc,tiling n=256,padding n=24,size 8192,split n[(0,255),(256,511),(512,767),(768,1023)],mem,no");
  const TensorTags& y = by_name(tags, "y");
  CHECK(y.dynamic.store == "cg");
  CHECK(y.dynamic.exchange == "core");
  CHECK(y.dynamic.split_dim.empty());

  REQUIRE(split.ops[0].has_value());
  const OpSplit& s = *split.ops[0];
  CHECK(s.mode == 1);
  CHECK(s.padded == 1024);
  CHECK(s.parallelism == "hybrid");
  REQUIRE(s.pieces.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(s.pieces[i].group == static_cast<int>(i / 2));
    CHECK(s.pieces[i].core == static_cast<int>(i % 2));
  }
  // o1+o2 and o3+o4 inside each group, then their sum across the groups.
  REQUIRE(s.tree.size() == 2);
  REQUIRE(s.tree[0].size() == 2);
  CHECK((s.tree[0][0].left == 0 && s.tree[0][0].right == 1 && s.tree[0][0].exchange == "core"));
  CHECK((s.tree[0][1].left == 2 && s.tree[0][1].right == 3 && s.tree[0][1].exchange == "core"));
  REQUIRE(s.tree[1].size() == 1);
  CHECK((s.tree[1][0].left == 0 && s.tree[1][0].right == 2 && s.tree[1][0].exchange == "cg"));

  // Run: each group sums its half of the inner dimension, one add across the groups; the unsplit result within
  // fp16 rounding of the changed summation order, and no tensor read from the other group's memory but a partial.
  const Run off = run(g, arch, false), on = run(g, arch, true, 1, SplitRounding::kPad);
  CHECK(max_difference(off.result.outputs.at("y"), on.result.outputs.at("y")) <= 2e-3);
  // Unsplit, this one-row product runs on group 0 alone; split, both groups work, each on its own memory, and
  // only group 1's partial [1, 4] crosses (padded to whole 4-byte words).
  for (const json& group : on.result.stats["ops"][0]["groups"]) CHECK(group["dma_bytes"] > 0);
  CHECK(remote_bytes(on.result) <= 4 * 2 * 2);
  CHECK(on.result.stats["ops"][0]["split"]["reduction_levels"] == 2);
}

TEST_CASE("the split rule's three modes and its rounding", "[graph][split]") {
  const Arch arch = Arch::preset("sw26010");  // M = 4 memories, C = 256 cores
  const Graph g = from(json::parse(R"({
    "tensors": {"a": {"shape": [1, 1000], "init": {"value": 1}},
                "b": {"shape": [2, 3, 7, 7], "init": {"value": 1}},
                "c": {"shape": [1, 16, 56, 56], "init": {"value": 1}},
                "w": {"shape": [8, 16, 3, 3], "init": {"value": 1}}},
    "ops": [{"type": "relu", "inputs": ["a"], "outputs": ["ra"]},
            {"type": "max_pool", "inputs": ["b"], "outputs": ["pb"], "attrs": {"kernel": 3}},
            {"type": "conv", "inputs": ["c", "w"], "outputs": ["cc"], "attrs": {"pad": 1}}],
    "outputs": ["ra", "pb", "cc"]})"));
  const SplitPlan exact = plan_split(g, arch, {true, SplitRounding::kExact});
  // relu [1, 1000]: its largest dimension, D = 1000 >= C: mode 1, 256 pieces of 3 or 4, 64 per group.
  const OpSplit& relu = *exact.ops[0];
  CHECK(relu.mode == 1);
  CHECK(relu.pieces.size() == 256);
  CHECK(relu.pieces.front().first == 0);
  CHECK(relu.pieces.front().last == 2);  // 1000 / 256: pieces of 3 or 4
  CHECK(relu.pieces.back().last == 999);
  CHECK(relu.pieces[64].group == 1);
  CHECK(relu.blocks[1] == std::make_pair<std::uint64_t, std::uint64_t>(250, 500));
  // max_pool [2, 3, 7, 7]: n = 2 < M, c = 3 < M: the largest, c, in mode 3: 3 pieces of one; group 3 idles.
  const OpSplit& pool = *exact.ops[1];
  CHECK(pool.axis.rule == "pool-c");
  CHECK(pool.mode == 3);
  CHECK(pool.pieces.size() == 3);
  CHECK(pool.blocks[3].first == pool.blocks[3].second);
  // conv: n = 1 < M, then the output rows, 56 in [M, C): mode 2, one piece per group, with halo rows.
  const OpSplit& conv = *exact.ops[2];
  CHECK(conv.axis.rule == "conv-h");
  CHECK(conv.mode == 2);
  REQUIRE(conv.pieces.size() == 4);
  CHECK(conv.tensor_pieces[0][1].begin == 13);  // output rows 14..27 read input rows 13..28 (pad 1)
  CHECK(conv.tensor_pieces[0][1].end == 29);
  // Pad rounding: relu's contiguous pieces become whole 128-byte transactions (64 elements): 256 x 64.
  const SplitPlan pad = plan_split(g, arch, {true, SplitRounding::kPad});
  CHECK(pad.ops[0]->padded == 256 * 64);
  CHECK(pad.ops[2]->padded == 56);  // rows are not contiguous: nothing added
  // Align rounding (the default): boundaries on whole transactions, nothing added; pieces shorter than one merge.
  const SplitPlan align = plan_split(g, arch, {true, SplitRounding::kAlign});
  CHECK(align.ops[0]->padded == 1000);
  CHECK(align.ops[0]->pieces.size() == 16);  // 1000 elements are 16 transactions of 64 (the last one 40)
  for (const SplitPiece& p : align.ops[0]->pieces) CHECK(p.first % 64 == 0);
  CHECK(align.ops[0]->blocks[1] == std::make_pair<std::uint64_t, std::uint64_t>(256, 512));
  CHECK(align.ops[0]->blocks[3] == std::make_pair<std::uint64_t, std::uint64_t>(768, 1000));
  CHECK(align.ops[2]->pieces.size() == conv.pieces.size());  // rows: as exact
  // Off, or on one memory: nothing is split.
  CHECK_FALSE(plan_split(g, arch, {false, SplitRounding::kExact}).ops[0].has_value());
  CHECK_FALSE(plan_split(g, Arch::preset("tiny"), {true, SplitRounding::kExact}).ops[0].has_value());
}

TEST_CASE("split runs give the unsplit outputs with fewer remote bytes", "[graph][split]") {
  const Graph g = from(conv_chain());
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    INFO(preset);
    const Arch arch = priced(preset);
    const Run off = run(g, arch, false), on = run(g, arch, true);
    for (const char* name : {"y", "r1"}) CHECK(on.result.outputs.at(name) == off.result.outputs.at(name));
    CHECK(remote_bytes(on.result) < remote_bytes(off.result) / 4);
    CHECK(on.result.stats["split"]["ops_split"] == 4);
    // Each split op ran on several groups, each reading its own memory.
    const json& conv = on.result.stats["ops"][0];
    CHECK(conv["split"]["rule"] == "conv-h");
    CHECK(conv["dma_remote_bytes"] == 0);
    for (const json& group : conv["groups"]) CHECK(group["dma_bytes"] > 0);
  }
}

TEST_CASE("a split conv layer runs faster than the unsplit one when remote memory is priced", "[graph][split]") {
  // Unsplit, groups 1..N read every input row from group 0's memory; split, each group reads its rows (and a
  // halo) from its own. (Small chains of ops can be slower split: each exchange is its own launches; see
  // docs/splitting.md.)
  const Graph g = from(json::parse(R"({
    "tensors": {"x": {"shape": [1, 32, 28, 28], "init": {"normal": [0, 1], "seed": 1}},
                "w": {"shape": [32, 32, 3, 3], "init": {"uniform": [-0.1, 0.1], "seed": 2}}},
    "ops": [{"type": "conv", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {"pad": 1}}],
    "outputs": ["y"]})"));
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    INFO(preset);
    const Run off = run(g, priced(preset), false), on = run(g, priced(preset), true);
    CHECK(on.result.outputs.at("y") == off.result.outputs.at("y"));
    CHECK(remote_bytes(on.result) == 0);
    CHECK(remote_bytes(off.result) > 0);
    CHECK(on.result.stats["cycles"] < off.result.stats["cycles"]);
    // The same run with a free network: remote placement was what cost the unsplit run.
    Arch free = priced(preset);
    free.dma.remote = {};
    CHECK(run(g, free, false).result.stats["cycles"] < off.result.stats["cycles"]);
  }
}

TEST_CASE("a conv cut by rows writes into its consumer's buffer, so only the halo rows move", "[graph][split]") {
  // x -> 1x1 conv -> t -> 3x3 conv -> y, both cut by rows: the first conv writes each group's rows into the middle
  // of the buffer the second reads (margin rows), so a group's exchange copies the neighbours' halo rows only. With
  // a second reader of t (the relu) the producer writes a buffer of its own and each group gathers its whole
  // region: the same outputs, more bytes moved.
  const auto graph = [](bool second_reader) {
    json w = json::parse(R"({
      "tensors": {"x": {"shape": [1, 16, 32, 32], "init": {"normal": [0, 1], "seed": 3}},
                  "w1": {"shape": [16, 16, 1, 1], "init": {"uniform": [-0.3, 0.3], "seed": 4}},
                  "w2": {"shape": [16, 16, 3, 3], "init": {"uniform": [-0.1, 0.1], "seed": 5}}},
      "ops": [{"type": "conv", "inputs": ["x", "w1"], "outputs": ["t"]},
              {"type": "conv", "inputs": ["t", "w2"], "outputs": ["y"], "attrs": {"pad": 1}}],
      "outputs": ["y"]})");
    if (second_reader) {
      w["ops"].push_back({{"type", "relu"}, {"inputs", {"t"}}, {"outputs", {"r"}}});
      w["outputs"].push_back("r");
    }
    return from(w);
  };
  const Graph margins = graph(false), own_buffer = graph(true);
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    INFO(preset);
    const Arch arch = priced(preset);
    const Run off = run(margins, arch, false), on = run(margins, arch, true), other = run(own_buffer, arch, true);
    CHECK(on.result.outputs.at("y") == off.result.outputs.at("y"));
    CHECK(other.result.outputs.at("y") == off.result.outputs.at("y"));
    for (const Run* r : {&on, &other}) {
      REQUIRE(r->result.stats["ops"][0]["split"]["rule"] == "conv-h");
      REQUIRE(r->result.stats["ops"][1]["split"]["rule"] == "conv-h");
    }
    // The 3x3 conv's op record holds its groups' exchanges: with margin rows no group copies its own rows (8 rows
    // of 16 planes of 32, read and written, on each of at least 3 groups).
    const auto bytes = [](const Run& r) { return r.result.stats["ops"][1]["dma_bytes"].get<std::uint64_t>(); };
    const std::uint64_t own_rows = 8 * 16 * 32 * sizeof(f16);
    CHECK(bytes(on) + 3 * 2 * own_rows <= bytes(other));
    CHECK(on.result.stats["cycles"] < other.result.stats["cycles"]);
    // The same run on two host threads: the same trace and cycles.
    const Run two = run(margins, arch, true, 2);
    CHECK(two.trace == on.trace);
    CHECK(two.result.outputs.at("y") == on.result.outputs.at("y"));
  }
}

TEST_CASE("a gather of halo rows from a margin buffer reads those rows and not the rows still to come",
          "[graph][split][check]") {
  // A mobile block's chain cut by rows on sw26010 (found by a random-graph search): the 1x1 conv of t15 in 3 pieces
  // of one row writes into the buffers of the depthwise conv's 2 pieces; group 0 gathers its halo row (row 1) from
  // group 1's buffer before group 2's row (row 2) is put there. A read across the gap between planes took row 2's
  // unwritten bytes along (discarded, but an uninit-device-read and a read of another writer's bytes).
  const Graph g = from(json::parse(R"({
    "name": "h17",
    "tensors": {
                "x": {"shape": [3, 64, 6, 56], "init": {"normal": [0, 1], "seed": 18}},
                "w2": {"shape": [384, 64, 1, 1], "init": {"uniform": [-0.125, 0.125], "seed": 529}},
                "b3": {"shape": [384], "init": {"uniform": [-0.1, 0.1], "seed": 3}},
                "w5": {"shape": [384, 1, 3, 3], "init": {"uniform": [-0.3, 0.3], "seed": 532}},
                "w7": {"shape": [64, 384, 1, 1], "init": {"uniform": [-0.051031036307982884, 0.051031036307982884], "seed": 534}},
                "w10": {"shape": [64, 1, 3, 3], "init": {"uniform": [-0.3, 0.3], "seed": 537}},
                "w12": {"shape": [64, 64, 1, 1], "init": {"uniform": [-0.125, 0.125], "seed": 539}},
                "w14": {"shape": [8, 64, 3, 3], "init": {"uniform": [-0.2, 0.2], "seed": 541}},
                "w16": {"shape": [24, 8, 1, 1], "init": {"uniform": [-0.35355339059327373, 0.35355339059327373], "seed": 543}},
                "w18": {"shape": [24, 1, 3, 3], "init": {"uniform": [-0.3, 0.3], "seed": 545}},
                "w20": {"shape": [8, 24, 1, 1], "init": {"uniform": [-0.20412414523193154, 0.20412414523193154], "seed": 547}},
                "b21": {"shape": [8], "init": {"uniform": [-0.1, 0.1], "seed": 21}}},
    "ops": [
            {"type": "conv", "inputs": ["x", "w2", "b3"], "outputs": ["t1"], "attrs": {}},
            {"type": "conv", "inputs": ["t1", "w5"], "outputs": ["t4"], "attrs": {"pad": 1, "groups": 384}},
            {"type": "conv", "inputs": ["t4", "w7"], "outputs": ["t6"], "attrs": {}},
            {"type": "add", "inputs": ["x", "t6"], "outputs": ["t8"]},
            {"type": "conv", "inputs": ["t8", "w10"], "outputs": ["t9"], "attrs": {"pad": 1, "groups": 64, "stride": 2, "activation": {"type": "clip", "min": 0, "max": 6}}},
            {"type": "conv", "inputs": ["t9", "w12"], "outputs": ["t11"], "attrs": {"activation": {"type": "clip", "min": 0, "max": 6}}},
            {"type": "conv", "inputs": ["t11", "w14"], "outputs": ["t13"], "attrs": {"pad": 1}},
            {"type": "conv", "inputs": ["t13", "w16"], "outputs": ["t15"], "attrs": {"activation": {"type": "clip", "min": 0, "max": 6}}},
            {"type": "conv", "inputs": ["t15", "w18"], "outputs": ["t17"], "attrs": {"pad": 1, "groups": 24, "stride": 2, "activation": {"type": "clip", "min": 0, "max": 6}}},
            {"type": "conv", "inputs": ["t17", "w20", "b21"], "outputs": ["t19"], "attrs": {}}],
    "outputs": ["t19"]})"));
  const Arch arch = priced("sw26010");
  Machine m(arch);
  enable_checks(m, CheckSet{.races = true, .init = true, .bounds = true});
  ExecuteOptions exec;
  exec.split = SplitOptions{.enabled = true};
  const ExecutionResult on = execute(g, m, exec);
  REQUIRE(on.stats["ops"][6]["split"]["rule"] == "conv-h");  // t15, by rows
  REQUIRE(on.stats["ops"][7]["split"]["rule"] == "conv-h");  // t17, by rows with a halo
  std::string reports;
  for (const CheckReport& r : check_reports(m)) reports += format_check_report(r) + "\n";
  CHECK(reports.empty());
  CHECK(on.outputs.at("t19") == run(g, arch, false).result.outputs.at("t19"));
}

TEST_CASE("a whole op's constants are held in every group's memory, each group reading its own copy",
          "[graph][split]") {
  // A batch of matrices by a batch of weights runs whole (no rule cuts a batch of several products): split off,
  // groups 1.. read the weights from group 0's memory; split on, each reads its own copy, and the outputs are the
  // same.
  const auto graph = [](bool constant) {
    json w = json::parse(R"({
      "tensors": {"x": {"shape": [4, 32, 64], "init": {"normal": [0, 1], "seed": 1}},
                  "w": {"shape": [4, 64, 128], "init": {"uniform": [-0.1, 0.1], "seed": 2}}},
      "ops": [{"type": "matmul", "inputs": ["x", "w"], "outputs": ["y"]}],
      "outputs": ["y"]})");
    w["tensors"]["w"]["constant"] = constant;
    return from(w);
  };
  const Graph g = graph(true), given = graph(false);  // `given`: the weight is a run-time parameter, not a constant
  const std::uint64_t w_bytes = 4 * 64 * 128 * 2;
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    INFO(preset);
    const Arch arch = priced(preset);
    const std::uint64_t others = arch.core_groups - 1;
    const Run off = run(g, arch, false), on = run(g, arch, true), on_given = run(given, arch, true);
    CHECK(on.result.outputs.at("y") == off.result.outputs.at("y"));
    CHECK(on.result.stats["split"]["ops_split"] == 0);
    CHECK(on.result.stats["split"]["replicated_constants"] == 1);
    CHECK(on.result.stats["split"]["replicated_bytes"].get<std::uint64_t>() >= others * w_bytes);
    // Only constants are copied: with the weight given at run time the groups read it from group 0's memory, as
    // split off does; as a constant, none of its bytes cross a link.
    CHECK(on_given.result.stats["split"]["replicated_constants"] == 0);
    CHECK(remote_bytes(on_given.result) == remote_bytes(off.result));
    CHECK(remote_bytes(on.result) < remote_bytes(off.result));
    CHECK(on.result.stats["cycles"] < off.result.stats["cycles"]);
    CHECK(on.result.stats["device_memory"]["peak_tensor_bytes"].get<std::uint64_t>() >=
          off.result.stats["device_memory"]["peak_tensor_bytes"].get<std::uint64_t>() + others * w_bytes);
    // Reads of the copies are traced at their own addresses, the same for any number of host threads.
    const Run two = run(g, arch, true, 2);
    CHECK(two.trace == on.trace);
    CHECK(two.result.stats["cycles"] == on.result.stats["cycles"]);
  }
}

TEST_CASE("a constant's copies in other groups count as written for the init check", "[graph][split][check]") {
  // w feeds a whole op (its copies go to every group's memory) and a split add, whose pieces read their rows from
  // their own group's copy: those reads are of bytes the constant holds, not uninitialised memory.
  const Graph g = from(json::parse(R"({
    "tensors": {"x": {"shape": [4, 32, 64], "init": {"normal": [0, 1], "seed": 1}},
                "w": {"shape": [4, 64, 128], "init": {"uniform": [-0.1, 0.1], "seed": 2}, "constant": true},
                "v": {"shape": [4, 64, 128], "init": {"uniform": [-0.1, 0.1], "seed": 3}}},
    "ops": [{"type": "matmul", "inputs": ["x", "w"], "outputs": ["y"]},
            {"type": "add", "inputs": ["v", "w"], "outputs": ["z"]}],
    "outputs": ["y", "z"]})"));
  const Arch arch = priced("sw26010pro");
  Machine m(arch);
  enable_checks(m, CheckSet{.races = true, .init = true, .bounds = true});
  ExecuteOptions exec;
  exec.split = {true, SplitRounding::kExact};
  const ExecutionResult on = execute(g, m, exec);
  REQUIRE(on.stats["split"]["replicated_constants"] == 1);
  REQUIRE(on.stats["split"]["ops_split"] == 1);
  std::string reports;
  for (const CheckReport& r : check_reports(m)) reports += format_check_report(r) + "\n";
  CHECK(reports.empty());
  const Run off = run(g, arch, false);
  CHECK(on.outputs.at("z") == off.result.outputs.at("z"));
}

TEST_CASE("a consumer split another way gets its pieces by exchange between groups", "[graph][split]") {
  // relu splits [2, 6, 9, 9] along h (its largest); the pool pads, so it cannot take rows with a halo and splits
  // along c: its pieces are gathered and cut.
  const Graph g = from(json::parse(R"({
    "tensors": {"x": {"shape": [2, 6, 9, 9], "init": {"normal": [0, 1], "seed": 4}}},
    "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["r"]},
            {"type": "max_pool", "inputs": ["r"], "outputs": ["y"], "attrs": {"kernel": 3, "stride": 2, "pad": 1}},
            {"type": "softmax", "inputs": ["y"], "outputs": ["p"]}],
    "outputs": ["p"]})"));
  const Arch arch = priced("sw26010");
  const SplitPlan split = plan_split(g, arch, {true, SplitRounding::kExact});
  CHECK(split.ops[0]->axis.rule == "elementwise");
  CHECK(split.ops[1]->axis.rule == "pool-c");
  CHECK_FALSE(split.ops[2].has_value());  // softmax runs whole
  const auto tags = tensor_tags(g, g, plan_execution(g, StagingPolicy::kMethod), &split);
  CHECK(by_name(tags, "x").dynamic.exchange == "no");
  CHECK(by_name(tags, "r").dynamic.split_dim == "h");
  CHECK(by_name(tags, "r").dynamic.exchange == "cg");
  CHECK(by_name(tags, "y").dynamic.exchange == "cg");  // split along c, read whole by softmax
  const Run off = run(g, arch, false), on = run(g, arch, true);
  CHECK(on.result.outputs.at("p") == off.result.outputs.at("p"));
  CHECK(remote_bytes(on.result) > 0);  // the exchange reads other groups' memories
}

TEST_CASE("an op whose input is already split along one of its dimensions keeps that split", "[graph][split]") {
  // The conv splits its output rows; relu's largest dimension is c, the pool's rule would take c, the concat's n:
  // each follows the rows instead (no exchange), the pool reading its window's halo rows.
  const Graph g = from(json::parse(R"({
    "tensors": {"x": {"shape": [1, 8, 24, 24], "init": {"normal": [0, 1], "seed": 8}},
                "w": {"shape": [40, 8, 3, 3], "init": {"uniform": [-0.1, 0.1], "seed": 9}}},
    "ops": [{"type": "conv", "inputs": ["x", "w"], "outputs": ["c"], "attrs": {"pad": 1}},
            {"type": "relu", "inputs": ["c"], "outputs": ["r"]},
            {"type": "max_pool", "inputs": ["r"], "outputs": ["p"], "attrs": {"kernel": 3, "stride": 2}},
            {"type": "concat", "inputs": ["p", "p"], "outputs": ["y"], "attrs": {"axis": 1}}],
    "outputs": ["y"]})"));
  const Arch arch = priced("sw26010pro");
  const SplitPlan split = plan_split(g, arch, {true, SplitRounding::kAlign});
  CHECK(split.ops[0]->axis.rule == "conv-h");
  CHECK(split.ops[1]->axis.rule == "elementwise");
  CHECK(split.ops[1]->axis.axis == 2);
  CHECK(split.ops[2]->axis.rule == "pool-h");
  CHECK(split.ops[3]->axis.rule == "concat");
  CHECK(split.ops[3]->axis.axis == 2);
  const Run off = run(g, arch, false), on = run(g, arch, true);
  CHECK(on.result.outputs.at("y") == off.result.outputs.at("y"));
  CHECK(on.result.stats["ops"][1]["dma_remote_bytes"] == 0);  // relu reads its own rows
  CHECK(on.result.stats["ops"][3]["dma_remote_bytes"] == 0);  // each group concatenates its own rows
}

TEST_CASE("awkward graphs run split with the unsplit outputs", "[graph][split]") {
  // Each found by review: a halo covering every row beside an unsplit consumer (a copy kept twice, freed twice);
  // a strided conv skipping rows another op reads (rows never staged); groups whose output rows read only
  // padding (empty input pieces); whole-number float attributes (read as 1 before); everything in group 0 under
  // pad rounding; a ceil_mode pool whose last window runs past the rows (a piece shorter than the kernel).
  const std::vector<std::pair<const char*, json>> cases{
      {"halo covers every row", json::parse(R"({
        "tensors": {"x": {"shape": [1, 4, 4, 4], "init": {"normal": [0, 1], "seed": 1}},
                    "w1": {"shape": [8, 4, 5, 5], "init": {"uniform": [-0.1, 0.1], "seed": 2}},
                    "w2": {"shape": [1, 4, 4, 4], "init": {"uniform": [-0.1, 0.1], "seed": 3}}},
        "ops": [{"type": "conv", "inputs": ["x", "w1"], "outputs": ["y1"], "attrs": {"pad": 2}},
                {"type": "conv", "inputs": ["x", "w2"], "outputs": ["y2"]},
                {"type": "flatten", "inputs": ["y1"], "outputs": ["f"]},
                {"type": "softmax", "inputs": ["f"], "outputs": ["s"]}],
        "outputs": ["s", "y2"]})")},
      {"strided conv skips rows", json::parse(R"({
        "tensors": {"x": {"shape": [1, 2, 8, 8], "init": {"normal": [0, 1], "seed": 1}},
                    "w": {"shape": [4, 2, 1, 1], "init": {"uniform": [-0.5, 0.5], "seed": 2}}},
        "ops": [{"type": "conv", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {"stride": 2}},
                {"type": "relu", "inputs": ["x"], "outputs": ["r"]}],
        "outputs": ["y", "r"]})")},
      {"rows of padding only", json::parse(R"({
        "tensors": {"x": {"shape": [1, 3, 2, 2], "init": {"normal": [0, 1], "seed": 1}},
                    "w": {"shape": [4, 3, 1, 1], "init": {"uniform": [-0.3, 0.3], "seed": 2}},
                    "v": {"shape": [4, 3, 2, 2], "init": {"uniform": [-0.3, 0.3], "seed": 3}}},
        "ops": [{"type": "conv", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {"pad": [1, 1, 0, 1]}},
                {"type": "conv", "inputs": ["x", "v"], "outputs": ["z"], "attrs": {"pad": 3}}],
        "outputs": ["y", "z"]})")},
      {"ceil_mode pools", json::parse(R"({
        "tensors": {"x": {"shape": [1, 1, 7, 13], "init": {"normal": [0, 1], "seed": 1}}},
        "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["r"]},
                {"type": "max_pool", "inputs": ["r"], "outputs": ["y"],
                 "attrs": {"kernel": 2, "stride": 2, "ceil_mode": true}},
                {"type": "avg_pool", "inputs": ["r"], "outputs": ["z"],
                 "attrs": {"kernel": 4, "stride": 4, "ceil_mode": true}}],
        "outputs": ["y", "z"]})")},
      {"float attributes", json::parse(R"({
        "tensors": {"x": {"shape": [1, 4, 9, 9], "init": {"normal": [0, 1], "seed": 1}},
                    "w": {"shape": [4, 4, 3, 3], "init": {"uniform": [-0.3, 0.3], "seed": 2}},
                    "g": {"shape": [8, 2, 1, 1], "init": {"uniform": [-0.3, 0.3], "seed": 3}},
                    "a": {"shape": [1, 4], "init": {"normal": [0, 1], "seed": 4}},
                    "b": {"shape": [6, 4], "init": {"uniform": [-0.3, 0.3], "seed": 5}}},
        "ops": [{"type": "conv", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {"stride": 2.0, "pad": 1.0}},
                {"type": "conv", "inputs": ["y", "g"], "outputs": ["z"], "attrs": {"groups": 2.0}},
                {"type": "gemm", "inputs": ["a", "b"], "outputs": ["c"], "attrs": {"transB": 1.0}}],
        "outputs": ["z", "c"]})")},
  };
  for (const auto& [name, tree] : cases) {
    INFO(name);
    const Graph g = from(tree);
    const Arch arch = priced("sw26010");
    const Run off = run(g, arch, false);
    for (const SplitRounding rounding : {SplitRounding::kAlign, SplitRounding::kPad}) {
      const Run on = run(g, arch, true, 1, rounding);
      CHECK(on.result.outputs == off.result.outputs);
    }
  }
}

TEST_CASE("a broadcast operand's split does not pick the op's dimension", "[graph][split]") {
  // v [6, 32] is split along its last axis (w of the output); its axis 1 is not the output's axis 1 (c).
  const Graph g = from(json::parse(R"({
    "tensors": {"c": {"shape": [2, 4, 6, 32], "init": {"normal": [0, 1], "seed": 1}},
                "u": {"shape": [6, 32], "init": {"normal": [0, 1], "seed": 2}}},
    "ops": [{"type": "relu", "inputs": ["u"], "outputs": ["v"]},
            {"type": "add", "inputs": ["c", "v"], "outputs": ["y"]}],
    "outputs": ["y"]})"));
  const Arch arch = priced("sw26010");
  const SplitPlan split = plan_split(g, arch, {true, SplitRounding::kAlign});
  CHECK(split.ops[0]->axis.axis == 1);
  CHECK(split.ops[1]->axis.axis == 3);  // the rule's largest dimension, not c
  const Run off = run(g, arch, false), on = run(g, arch, true);
  CHECK(on.result.outputs.at("y") == off.result.outputs.at("y"));
}

TEST_CASE("after a split op, consecutive whole ops run each group at its own clock, as a run without splits does",
          "[graph][split]") {
  // relu splits; the softmaxes run whole on every group, reading group 0's memory (the others remotely, so groups
  // end each softmax at different cycles). The first softmax waits for every relu piece; the second starts on
  // each group when that group ended the first, not when the slowest did.
  const Graph g = from(json::parse(R"({
    "tensors": {"x": {"shape": [8, 64, 64], "init": {"normal": [0, 1], "seed": 3}}},
    "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["r"]},
            {"type": "softmax", "inputs": ["r"], "outputs": ["s1"]},
            {"type": "softmax", "inputs": ["s1"], "outputs": ["s2"]}],
    "outputs": ["s2"]})"));
  const Arch arch = priced("sw26010pro");
  const SplitPlan split = plan_split(g, arch, {true, SplitRounding::kExact});
  REQUIRE(split.ops[0].has_value());
  REQUIRE_FALSE(split.ops[1].has_value());
  REQUIRE_FALSE(split.ops[2].has_value());
  MachineOptions options;
  Machine m(arch, options);
  ExecuteOptions exec;
  exec.split = {true, SplitRounding::kExact};
  const ExecutionResult on = execute(g, m, exec);
  // Per group: when it began the second softmax and ended the first (launch markers, at the group's clock).
  std::vector<Cycle> began(m.trace().size(), 0), ended(m.trace().size(), 0);
  for (const TraceRecorder* recorder : m.trace()) {
    std::string launch;
    for (const Marker& marker : recorder->markers()) {
      if (marker.kind == MarkerKind::kLaunchBegin) launch = marker.text;
      const auto at = static_cast<std::size_t>(recorder->cg());
      if (marker.kind == MarkerKind::kLaunchBegin && marker.text == "softmax#2") began[at] = marker.cycle;
      if (marker.kind == MarkerKind::kLaunchEnd && launch == "softmax#1") ended[at] = marker.cycle;
    }
  }
  const Cycle slowest = *std::max_element(ended.begin(), ended.end());
  CHECK(*std::min_element(ended.begin(), ended.end()) < slowest);  // the groups' ends differ
  CHECK(began == ended);
  CHECK(on.outputs.at("s2") == run(g, arch, false).result.outputs.at("s2"));
}

TEST_CASE("split runs are identical for any number of host threads", "[graph][split]") {
  const Graph g = from(conv_chain());
  const Arch arch = priced("sw26010");
  const Run one = run(g, arch, true, 1), two = run(g, arch, true, 2), four = run(g, arch, true, 4);
  CHECK(one.result.stats == two.result.stats);
  CHECK(one.result.stats == four.result.stats);
  CHECK(one.trace == two.trace);
  CHECK(one.trace == four.trace);
  CHECK(one.result.outputs == four.result.outputs);
}

TEST_CASE("the reduction tree sums each group's pieces before pairing groups, as the executor runs it",
          "[graph][split]") {
  // 2048 inputs on sw26010pro, aligned: 32 pieces dealt 5, 5, 6, 5, 5, 6 over the 6 groups.
  const Graph g = from(json::parse(R"({
    "tensors": {"x": {"shape": [1, 2048], "init": {"normal": [0, 1], "seed": 1}},
                "w": {"shape": [16, 2048], "init": {"uniform": [-0.02, 0.02], "seed": 2}}},
    "ops": [{"type": "fc", "inputs": ["x", "w"], "outputs": ["y"]}],
    "outputs": ["y"]})"));
  const SplitPlan split = plan_split(g, priced("sw26010pro"), {true, SplitRounding::kAlign});
  const OpSplit& s = *split.ops[0];
  REQUIRE(s.pieces.size() == 32);
  bool crossed = false;
  std::size_t pairs = 0;
  for (const auto& level : s.tree) {
    for (const ReductionPair& p : level) {
      const bool same = s.pieces[p.left].group == s.pieces[p.right].group;
      CHECK(p.exchange == (same ? "core" : "cg"));
      CHECK_FALSE((same && crossed));  // no core pair after the groups started pairing
      crossed = crossed || !same;
      ++pairs;
    }
  }
  CHECK(pairs == 31);  // 32 partials, one sum
  const Run off = run(g, priced("sw26010pro"), false), on = run(g, priced("sw26010pro"), true);
  CHECK(max_difference(off.result.outputs.at("y"), on.result.outputs.at("y")) <= 4e-3);
}

TEST_CASE("fc and gemm split their inner dimension and sum the partials by the tree", "[graph][split]") {
  const Graph g = from(json::parse(R"({
    "tensors": {"x": {"shape": [1, 512], "init": {"normal": [0, 1], "seed": 5}},
                "w": {"shape": [48, 512], "init": {"uniform": [-0.05, 0.05], "seed": 6}},
                "b": {"shape": [48], "init": {"value": 0.25}},
                "c": {"shape": [1, 16], "init": {"value": -0.5}},
                "v": {"shape": [48, 16], "init": {"uniform": [-0.1, 0.1], "seed": 7}}},
    "ops": [{"type": "fc", "inputs": ["x", "w", "b"], "outputs": ["h"]},
            {"type": "gemm", "inputs": ["h", "v", "c"], "outputs": ["y"], "attrs": {"alpha": 0.5, "beta": 2}}],
    "outputs": ["y", "h"]})"));
  const Arch arch = priced("sw26010pro");
  const SplitPlan split = plan_split(g, arch, {true, SplitRounding::kExact});
  CHECK(split.ops[0]->axis.rule == "inner");
  CHECK(split.ops[0]->tree.size() == 9);  // 384 pieces: ceil(log2 384) levels
  const Run off = run(g, arch, false), on = run(g, arch, true);
  // The bias and C are added once (by the first piece); the rest differs by the summation order only.
  CHECK(max_difference(off.result.outputs.at("h"), on.result.outputs.at("h")) <= 4e-3);
  CHECK(max_difference(off.result.outputs.at("y"), on.result.outputs.at("y")) <= 4e-3);
  CHECK(remote_bytes(on.result) < remote_bytes(off.result) / 10);
}

TEST_CASE("a depthwise conv splits by channels, each piece reading only its own planes", "[graph][split]") {
  // relu cuts [1, 64, 3, 3] along c (its largest dimension); the depthwise conv after it keeps that cut: each piece
  // is a depthwise conv of its own channels (filters, bias and the residual cut alike), reading no other group's
  // memory, with the whole op's outputs bit for bit.
  const Graph g = from(json::parse(R"({
    "tensors": {"x": {"shape": [1, 64, 3, 3], "init": {"normal": [0, 1], "seed": 5}},
                "w": {"shape": [64, 1, 3, 3], "init": {"uniform": [-0.3, 0.3], "seed": 6}},
                "b": {"shape": [64], "init": {"uniform": [-0.1, 0.1], "seed": 7}}},
    "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["r"]},
            {"type": "conv", "inputs": ["r", "w", "b"], "outputs": ["y"], "attrs": {"pad": 1, "groups": 64}}],
    "outputs": ["y"]})"));
  const std::vector<SplitAxis> axes = split_axes(g, g.ops()[1]);
  const auto by_channels =
      std::find_if(axes.begin(), axes.end(), [](const SplitAxis& a) { return a.rule == "conv-g"; });
  REQUIRE(by_channels != axes.end());
  CHECK(by_channels->input_axis == 1);
  CHECK(by_channels->extent == 64);
  const PieceWork w = piece_work(g, g.ops()[1], *by_channels, 16, 40, json::object());
  CHECK((w.regions[0].axis == 1 && w.regions[0].begin == 16 && w.regions[0].end == 40));  // X's planes
  CHECK((w.regions[1].axis == 0 && w.regions[1].begin == 16 && w.regions[1].end == 40));  // their filters
  CHECK((w.regions[2].axis == 0 && w.regions[2].end == 40));                              // and biases
  CHECK((w.regions[3].axis == 1 && w.regions[3].begin == 16));
  CHECK(w.attrs["groups"] == 24);
  const Arch arch = priced("sw26010");
  const SplitPlan split = plan_split(g, arch, {true, SplitRounding::kExact});
  REQUIRE(split.ops[0]);
  CHECK(split.ops[0]->axis.axis == 1);
  REQUIRE(split.ops[1]);
  CHECK(split.ops[1]->axis.rule == "conv-g");
  const Run off = run(g, arch, false), on = run(g, arch, true);
  CHECK(on.result.outputs.at("y") == off.result.outputs.at("y"));
  CHECK(on.result.stats["ops"][1]["dma_remote_bytes"] == 0);
  // A grouped conv with several channels per group is not cut so.
  const Graph grouped = from(json::parse(R"({
    "tensors": {"x": {"shape": [1, 64, 3, 3], "init": {"normal": [0, 1], "seed": 5}},
                "w": {"shape": [64, 2, 3, 3], "init": {"uniform": [-0.3, 0.3], "seed": 6}}},
    "ops": [{"type": "conv", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {"pad": 1, "groups": 32}}],
    "outputs": ["y"]})"));
  for (const SplitAxis& a : split_axes(grouped, grouped.ops()[0])) CHECK(a.rule != "conv-g");
}

TEST_CASE("a conv splits its input channels and sums the partials by the tree", "[graph][split]") {
  // Offered to the cost-aware choice only, which takes it here: the output (2 channels of 8x8) is far smaller than
  // the input. Each group convolves its channels of X with theirs of W; the first adds the bias and the residual,
  // the tree adds the partial outputs and the relu runs on the sum. Only the order of the sums differs from the
  // whole op.
  const Graph g = from(json::parse(R"({
    "tensors": {"x": {"shape": [1, 512, 8, 8], "init": {"normal": [0, 1], "seed": 5}},
                "w": {"shape": [2, 512, 3, 3], "init": {"uniform": [-0.01, 0.01], "seed": 6}},
                "b": {"shape": [2], "init": {"value": 0.25}},
                "r": {"shape": [1, 2, 8, 8], "init": {"normal": [0, 1], "seed": 7}}},
    "ops": [{"type": "conv", "inputs": ["x", "w", "b", "r"], "outputs": ["y"],
             "attrs": {"pad": 1, "residual": "after", "activation": "relu"}}],
    "outputs": ["y"]})"));
  const OpNode& conv = g.ops()[0];
  const std::vector<SplitAxis> axes = split_axes(g, conv);
  const auto by_inputs = std::find_if(axes.begin(), axes.end(), [](const SplitAxis& a) { return a.rule == "conv-c"; });
  REQUIRE(by_inputs != axes.end());
  CHECK(by_inputs->reduces);
  CHECK(by_inputs->input_axis == 1);
  CHECK(by_inputs->cost_aware_only);
  const PieceWork first = piece_work(g, conv, *by_inputs, 0, 16, conv.attrs);
  CHECK((first.regions[0].axis == 1 && first.regions[0].end == 16));  // X's channels
  CHECK((first.regions[1].axis == 1 && first.regions[1].end == 16));  // W's input channels
  CHECK_FALSE(first.dropped[2]);
  CHECK_FALSE(first.dropped[3]);
  CHECK(first.regions[4].whole);  // a partial output of every element
  CHECK(first.attrs.contains("residual"));
  const PieceWork later = piece_work(g, conv, *by_inputs, 16, 40, conv.attrs);
  CHECK(later.dropped[2]);  // the bias and the residual are the first piece's
  CHECK(later.dropped[3]);
  CHECK_FALSE(later.attrs.contains("residual"));
  const Arch arch = priced("sw26010");
  const SplitOptions chosen{.enabled = true, .rounding = SplitRounding::kExact, .cost_aware = true};
  const SplitPlan split = plan_split(g, arch, chosen);
  REQUIRE(split.ops[0]);
  CHECK(split.ops[0]->axis.rule == "conv-c");
  const auto between_groups = std::count_if(split.ops[0]->tree.begin(), split.ops[0]->tree.end(), [](const auto& l) {
    return std::any_of(l.begin(), l.end(), [](const ReductionPair& p) { return p.exchange == "cg"; });
  });
  CHECK(between_groups == 2);                                                  // 4 groups
  const SplitPlan fixed = plan_split(g, arch, {true, SplitRounding::kExact});  // the fixed rule never takes it
  CHECK((!fixed.ops[0] || fixed.ops[0]->axis.rule != "conv-c"));
  const Run off = run(g, arch, false);
  Machine m(arch);
  ExecuteOptions options;
  options.split = chosen;
  const Run on{execute(g, m, options), {}};
  CHECK(max_difference(off.result.outputs.at("y"), on.result.outputs.at("y")) <= 4e-3);
  std::size_t zeros = 0;
  for (const f16 v : on.result.outputs.at("y")) zeros += static_cast<float>(v) == 0.0f ? 1u : 0u;
  CHECK(zeros > 0);  // the relu ran on the sum
  CHECK(remote_bytes(on.result) < remote_bytes(off.result));
}
