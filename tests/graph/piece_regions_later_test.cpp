// The cost-aware choice prices candidate splits without their pieces' regions (split_along with
// PieceRegions::kLater) and fills them for the split it keeps (fill_piece_regions): what it fills must be what
// split_along fills at once, and no kept split may reach the executor or the tags without them.
#include <catch2/catch.hpp>

#include "kernels/op_harness.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/split.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

/// A conv (cut by rows, channels or filters; its rows also into one output), a gemm with a weight (model and data
/// parallel cuts) and an element-wise op.
Graph convs_and_gemm() {
  return workload_from_json(json::parse(R"({
    "tensors": {"x": {"shape": [1, 16, 30, 30], "init": {"normal": [0, 1], "seed": 1}},
                "w": {"shape": [24, 16, 3, 3], "init": {"uniform": [-0.1, 0.1], "seed": 2}},
                "v": {"shape": [20, 64], "init": {"uniform": [-0.1, 0.1], "seed": 3}},
                "m": {"shape": [60, 64], "init": {"uniform": [-1, 1], "seed": 4}}},
    "ops": [{"type": "conv", "inputs": ["x", "w"], "outputs": ["c"], "attrs": {"pad": 1}},
            {"type": "relu", "inputs": ["c"], "outputs": ["r"]},
            {"type": "gemm", "inputs": ["m", "v"], "outputs": ["g"], "attrs": {"transB": 1}}],
    "outputs": ["r", "g"]})"),
                            "pieces.json", ".", test::registry());
}

void require_same_pieces(const OpSplit& filled, const OpSplit& later) {
  REQUIRE(later.tensor_pieces.size() == filled.tensor_pieces.size());
  for (std::size_t t = 0; t < filled.tensor_pieces.size(); ++t) {
    INFO("tensor " << t);
    REQUIRE(later.tensor_pieces[t].size() == filled.tensor_pieces[t].size());
    for (std::size_t p = 0; p < filled.tensor_pieces[t].size(); ++p) {
      CHECK(same_region(later.tensor_pieces[t][p], filled.tensor_pieces[t][p]));
    }
  }
  CHECK(later.parallelism == filled.parallelism);
}

}  // namespace

TEST_CASE("pieces' regions filled later are the regions split_along fills at once", "[graph][split][auto]") {
  const Graph g = convs_and_gemm();
  int compared = 0, into_one = 0;
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    const Arch arch = Arch::preset(preset);
    SplitPlan plan;
    plan.memories = arch.core_groups;
    plan.cores = arch.total_cores();
    for (const OpNode& op : g.ops()) {
      for (const SplitAxis& axis : split_axes(g, op)) {
        if (axis.extent < 2) continue;
        INFO(preset << " " << op.layer() << " axis " << axis.rule << " " << axis.axis);
        const std::optional<OpSplit> filled = split_along(g, op, axis, plan, arch);
        std::optional<OpSplit> later = split_along(g, op, axis, plan, arch, PieceRegions::kLater);
        REQUIRE(filled.has_value() == later.has_value());
        if (!filled) continue;
        CHECK(later->tensor_pieces.empty());
        CHECK(later->parallelism.empty());
        // A conv's rows into one output: made from the unfilled split, filled afterwards.
        if (std::optional<OpSplit> one = rows_into_one(g, op, *later)) {
          const std::optional<OpSplit> one_filled = rows_into_one(g, op, *filled);
          REQUIRE(one_filled);
          fill_piece_regions(g, op, *one);
          require_same_pieces(*one_filled, *one);
          CHECK(one->tensor_pieces.back().empty());  // the output is held whole
          ++into_one;
        }
        fill_piece_regions(g, op, *later);
        require_same_pieces(*filled, *later);
        ++compared;
      }
      // A one-group split is left as one_group made it.
      OpSplit alone = one_group(op, plan, 1);
      fill_piece_regions(g, op, alone);
      CHECK(alone.parallelism == "none");
      for (const auto& pieces : alone.tensor_pieces) CHECK(pieces.empty());
    }
  }
  CHECK(compared >= 8);
  CHECK(into_one >= 2);
}

TEST_CASE("every split the cost-aware choice keeps has its pieces' regions", "[graph][split][auto]") {
  const Graph g = convs_and_gemm();
  int kept_splits = 0;
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    const Arch arch = Arch::preset(preset);
    const SplitOptions options{.enabled = true, .cost_aware = true};
    const SplitPlan chosen = plan_split(g, arch, options);
    // The choice itself, and each op pinned to its runner-up, so that more kinds of split are kept.
    std::vector<SplitPlan> plans{chosen};
    for (std::size_t i = 0; i < g.ops().size(); ++i) {
      if (chosen.choices[i].runner_up.empty()) continue;
      SplitOptions pinned = options;
      pinned.pinned[g.ops()[i].label()] = chosen.choices[i].runner_up;
      plans.push_back(plan_split(g, arch, pinned));
    }
    for (const SplitPlan& plan : plans) {
      for (const std::optional<OpSplit>& kept : plan.ops) {
        if (!kept || kept->axis.rule == kOneGroupRule) continue;
        INFO(preset << " " << g.ops()[kept->op].layer() << " " << kept->axis.rule);
        CHECK_FALSE(kept->parallelism.empty());
        std::size_t regions = 0;
        for (const auto& pieces : kept->tensor_pieces) regions += pieces.size();
        CHECK(regions >= kept->pieces.size());  // at least one tensor cut per piece
        ++kept_splits;
      }
    }
  }
  CHECK(kept_splits >= 2);
}
