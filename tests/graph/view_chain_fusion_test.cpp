// The fusion pass folds chains of view steps (a transformer's q/k/v split: slice, reshape, transpose) into one
// strided copy, or, ending in a transpose that moves the last axis (k to Kt), into that swap reading in place:
// outputs bit-identical to the unfolded graph, fewer cycles; a chain whose middle tensor is read elsewhere keeps its
// ops.
#include <catch2/catch.hpp>

#include "fusion_support.hpp"

using namespace ldmsim;
using fusion_cases::op;
using fusion_cases::tensor;
using nlohmann::json;

namespace {

std::size_t ops_of_type(const Graph& g, const std::string& type) {
  return static_cast<std::size_t>(
      std::count_if(g.ops().begin(), g.ops().end(), [&](const OpNode& o) { return o.type == type; }));
}

/// q, k and v split from one [tokens, 1, 3 * heads * dim] projection as torch exports multi-head attention.
json qkv_split(std::uint64_t tokens, std::uint64_t heads, std::uint64_t dim) {
  const std::uint64_t width = heads * dim;
  const auto part = [&](std::uint64_t k) {
    return json{{"starts", {k * width}}, {"ends", {(k + 1) * width}}, {"axes", {2}}};
  };
  const json shape = {tokens, heads, dim};
  json w;
  w["name"] = "qkv_split";
  w["tensors"] = {{"x", tensor({tokens, 1, 3 * width}, -2, 2, 1)}};
  w["ops"] = {op("slice", {"x"}, "q0", part(0)),
              op("reshape", {"q0"}, "q1", {{"shape", shape}}),
              op("transpose", {"q1"}, "q", {{"perm", {1, 0, 2}}}),
              op("slice", {"x"}, "k0", part(1)),
              op("reshape", {"k0"}, "k1", {{"shape", shape}}),
              op("transpose", {"k1"}, "kt", {{"perm", {1, 2, 0}}}),  // the last axis moves: a swap ends the chain
              op("slice", {"x"}, "v0", part(2)),
              op("reshape", {"v0"}, "v1", {{"shape", shape}}),
              op("transpose", {"v1"}, "v", {{"perm", {1, 0, 2}}})};
  w["outputs"] = {"q", "kt", "v", "v0"};  // v's slice is also an output: its chain stays apart
  return w;
}

}  // namespace

TEST_CASE("a slice, reshape and transpose chain becomes one strided copy with the same bits",
          "[graph][fusion][view_chain]") {
  const Arch arch = Arch::preset("sw26010pro");  // timed (tiny counts no cycles)
  const Graph g = test::graph_of(qkv_split(128, 4, 16));
  const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
  REQUIRE(f.view_chains.size() == 2);
  CHECK(f.view_chains[0].ops == std::vector<std::string>{"slice#0", "reshape#1", "transpose#2"});
  CHECK(f.view_chains[1].ops == std::vector<std::string>{"slice#3", "reshape#4", "transpose#5"});  // ends in a swap
  CHECK(ops_of_type(f.graph, "view") == 2);
  CHECK(ops_of_type(f.graph, "slice") == 1);
  CHECK(ops_of_type(f.graph, "transpose") == 1);
  CHECK_THAT(f.describe(g), Catch::Contains("view chain view#0: slice#0, reshape#1, transpose#2"));
  {
    const StagingPolicy policy = StagingPolicy::kMethod;
    ExecuteOptions options;
    options.staging = policy;
    Machine unfused_machine(arch), fused_machine(arch);
    const ExecutionResult unfused = execute(g, unfused_machine, options);
    const ExecutionResult fused = execute(fuse(g, arch, policy).graph, fused_machine, options);
    REQUIRE(fused.outputs.size() == 4);
    for (const auto& [name, values] : unfused.outputs) {
      CAPTURE(name);
      CHECK(fused.outputs.at(name) == values);
    }
    CHECK(fused.stats["cycles"].get<std::uint64_t>() < unfused.stats["cycles"].get<std::uint64_t>());
    CHECK(fused.stats["dma_bytes"].get<std::uint64_t>() < unfused.stats["dma_bytes"].get<std::uint64_t>());
  }
  // Naive staging pads inside rows, where one copy of the chain reads element by element: no fold.
  CHECK(fuse(g, arch, StagingPolicy::kNaive).view_chains.empty());
  FusionOptions off;
  off.view_chains = false;
  const FusedGraph kept = fuse(g, arch, StagingPolicy::kMethod, off);
  CHECK(kept.view_chains.empty());
  CHECK(ops_of_type(kept.graph, "view") == 0);
}
