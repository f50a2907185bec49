// Attention in one kernel: a softmax group between two batched products (scores = Q Kt, Y = P V) fuses with both
// products when shapes and ldm allow; fused and unfused runs agree within their allowance; the shapes it does not
// take (odd columns, a broadcast batch, probabilities read elsewhere, Kt and V beyond ldm) keep the products apart.
#include <catch2/catch.hpp>

#include "fusion_support.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

std::size_t ops_of_type(const Graph& g, const std::string& type) {
  return static_cast<std::size_t>(
      std::count_if(g.ops().begin(), g.ops().end(), [&](const OpNode& op) { return op.type == type; }));
}

/// Fused (with attention) and unfused outputs agree, on `arch`.
test::FusionRun run_attention(const json& w, const Arch& arch) {
  const Graph g = test::graph_of(w);
  const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
  REQUIRE(ops_of_type(f.graph, "attention") == 1);
  CHECK(ops_of_type(f.graph, "matmul") == 0);
  CHECK(f.graph.ops().size() == 1);
  REQUIRE(f.groups.size() == 1);
  CHECK_THAT(f.groups[0].attention, Catch::Contains("(scores)") && Catch::Contains("(output)"));
  CHECK_THAT(f.describe(g), Catch::Contains("attention kernel"));
  test::FusionRun run = test::run_both(g, arch);
  test::check_agree(run);
  return run;
}

}  // namespace

TEST_CASE("attention between two batched products runs as one kernel and agrees with the unfused ops",
          "[graph][fusion][attention]") {
  // Batches at least the groups, fewer (each batch's query rows cut into parts), odd query rows, one batch.
  // `faster`: the work spreads evenly. 3 batches of 5 rows on 2 groups of 4 cores give group 0 two batches and its
  // first core 2 rows of each, 4 row products where the unfused products give every core 2 (docs/fusion.md,
  // "Attention").
  struct Case {
    unsigned groups;
    json workload;
    bool faster;
  };
  for (const Case& c : std::vector<Case>{{2, fusion_cases::attention(4, 16, 8, 24, 8), true},
                                         {4, fusion_cases::attention(2, 17, 8, 24, 6), true},
                                         {2, fusion_cases::attention(3, 5, 4, 10, 12), false},
                                         {4, fusion_cases::attention(1, 33, 16, 40, 16), true}}) {
    CAPTURE(c.groups, c.workload["name"]);
    const test::FusionRun run = run_attention(c.workload, test::small_arch(c.groups));
    // Scores and probabilities never go to main memory.
    CHECK(run.fused_dma_bytes() < run.unfused_dma_bytes());
    if (c.faster) CHECK(run.fused_cycles() < run.unfused_cycles());
  }
}

TEST_CASE("the attention kernel is deterministic across host threads", "[graph][fusion][attention]") {
  const Graph g = test::graph_of(fusion_cases::attention(3, 20, 8, 16, 8));
  const Arch arch = test::small_arch(4);
  const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
  REQUIRE(ops_of_type(f.graph, "attention") == 1);
  const auto [r1, r4] = test::run_one_and_four_threads(f.graph, arch);
  CHECK(r1.outputs == r4.outputs);
  CHECK(r1.stats["cycles"] == r4.stats["cycles"]);
}

TEST_CASE("the attention kernel reads the query rows with Kt and V when ldm holds them", "[graph][fusion][attention]") {
  const Graph g = test::graph_of(fusion_cases::attention(4, 256, 32, 32, 32));
  // 64 KiB of ldm holds a batch's Q rows (16 KiB) with Kt, V and the program's tiles; 24 KiB does not.
  Arch roomy = test::small_arch(2), tight = roomy;
  tight.ldm_bytes = 24 * 1024;
  const FusedGraph with_q = fuse(g, roomy, StagingPolicy::kMethod), without_q = fuse(g, tight, StagingPolicy::kMethod);
  REQUIRE(ops_of_type(with_q.graph, "attention") == 1);
  REQUIRE(ops_of_type(without_q.graph, "attention") == 1);
  CHECK_THAT(with_q.describe(g), Catch::Contains("Q read with Kt and V"));
  CHECK_THAT(without_q.describe(g), !Catch::Contains("Q read with Kt and V"));
  Machine m_with(roomy), m_without(tight);
  const ExecutionResult a = execute(with_q.graph, m_with), b = execute(without_q.graph, m_without);
  // The same arithmetic on the same values; the same bytes, in one request per batch instead of one per core.
  CHECK(a.outputs == b.outputs);
  CHECK(a.stats["dma_bytes"] == b.stats["dma_bytes"]);
  CHECK(a.stats["dma_requests"].get<std::uint64_t>() < b.stats["dma_requests"].get<std::uint64_t>());
}

TEST_CASE("reading the query rows with Kt and V saves cycles where requests cost", "[graph][fusion][attention]") {
  // Two BERT-base heads on one sw26010pro core group: 64 cores each read 2 query rows (256 B, mostly request
  // overhead) unless the group's read brings them. 96 KiB of ldm holds two batches' Kt and V but not their Q.
  const Graph g = test::graph_of(fusion_cases::attention(2, 128, 64, 128, 64));
  Arch roomy = Arch::preset("sw26010pro"), tight = roomy;
  roomy.core_groups = tight.core_groups = 1;
  tight.ldm_bytes = 96 * 1024;
  const FusedGraph with_q = fuse(g, roomy, StagingPolicy::kMethod), without_q = fuse(g, tight, StagingPolicy::kMethod);
  REQUIRE_THAT(with_q.describe(g), Catch::Contains("Q read with Kt and V, the next batch read ahead"));
  REQUIRE_THAT(without_q.describe(g), Catch::Contains("each batch in 1 part, the next batch read ahead"));
  Machine m_with(roomy), m_without(tight);
  const ExecutionResult a = execute(with_q.graph, m_with), b = execute(without_q.graph, m_without);
  CHECK(a.outputs == b.outputs);
  CHECK(a.stats["cycles"].get<std::uint64_t>() < b.stats["cycles"].get<std::uint64_t>());
}

TEST_CASE("attention off: the softmax group fuses alone and the products stay", "[graph][fusion][attention]") {
  const Graph g = test::graph_of(fusion_cases::attention(2, 8, 8, 8, 8));
  const FusedGraph f = fuse(g, test::small_arch(), StagingPolicy::kMethod, FusionOptions{.attention = false});
  CHECK(ops_of_type(f.graph, "attention") == 0);
  CHECK(ops_of_type(f.graph, "fused") == 1);
  CHECK(ops_of_type(f.graph, "matmul") == 2);
  CHECK(f.groups.at(0).attention.empty());
}

TEST_CASE("an odd number of keys and a softmax without a mask still make one attention kernel",
          "[graph][fusion][attention]") {
  // A ViT's class token makes the tokens odd: Kt's rows are odd, read as one packed block of d * t elements.
  const test::FusionRun odd = run_attention(fusion_cases::attention(4, 17, 8, 17, 8), test::small_arch(2));
  CHECK(odd.fused_dma_bytes() < odd.unfused_dma_bytes());  // scores and probabilities stay in ldm
  // No mask: the softmax alone between the products (and the scale before it) joins them.
  json plain = fusion_cases::attention(4, 16, 8, 16, 8);
  plain["ops"] = {fusion_cases::op("matmul", {"q", "kt"}, "scores"), fusion_cases::op("mul", {"scores", "scale"}, "s"),
                  fusion_cases::op("softmax", {"s"}, "probs", {{"axis", -1}}),
                  fusion_cases::op("matmul", {"probs", "v"}, "y")};
  const test::FusionRun maskless = run_attention(plain, test::small_arch(2));
  CHECK(maskless.fused_dma_bytes() < maskless.unfused_dma_bytes());
  json lone = plain;
  lone["ops"] = {fusion_cases::op("matmul", {"q", "kt"}, "scores"),
                 fusion_cases::op("softmax", {"scores"}, "probs", {{"axis", -1}}),
                 fusion_cases::op("matmul", {"probs", "v"}, "y")};
  const Graph g = test::graph_of(lone);
  const FusedGraph f = fuse(g, test::small_arch(2), StagingPolicy::kMethod);
  REQUIRE(ops_of_type(f.graph, "attention") == 1);
  REQUIRE(f.groups.size() == 1);
  CHECK(f.groups[0].ops.size() == 1);
  test::check_agree(test::run_both(g, test::small_arch(2)));
  // A softmax alone that no products surround stays as it is: not a fused op of one.
  json alone = lone;
  alone["ops"] = {fusion_cases::op("softmax", {"q"}, "y", {{"axis", -1}})};
  const FusedGraph kept = fuse(test::graph_of(alone), test::small_arch(2), StagingPolicy::kMethod);
  CHECK(ops_of_type(kept.graph, "softmax") == 1);
  CHECK(kept.groups.empty());
}

TEST_CASE("under naive staging an odd number of keys keeps the products apart and runs", "[graph][fusion][attention]") {
  // Naive staging pads every row of an odd element count inside (Kt's rows of 17 keys), which the kernel cannot
  // read: the products stay apart (the softmax group still fuses) and the run agrees with the unfused ops.
  const Graph g = test::graph_of(fusion_cases::attention(4, 16, 8, 17, 8));
  const Arch arch = test::small_arch(2);
  CHECK(ops_of_type(fuse(g, arch, StagingPolicy::kMethod).graph, "attention") == 1);
  const FusedGraph f = fuse(g, arch, StagingPolicy::kNaive);
  CHECK(ops_of_type(f.graph, "attention") == 0);
  CHECK(ops_of_type(f.graph, "matmul") == 2);
  test::check_agree(test::run_both(g, arch, StagingPolicy::kNaive));
  // An even number of keys still makes one kernel under naive staging.
  const FusedGraph even = fuse(test::graph_of(fusion_cases::attention(4, 16, 8, 16, 8)), arch, StagingPolicy::kNaive);
  CHECK(ops_of_type(even.graph, "attention") == 1);
}

TEST_CASE("shapes the attention kernel does not take keep the products apart", "[graph][fusion][attention]") {
  const Arch arch = test::small_arch();
  const auto expect_apart = [&](const json& w) {
    const Graph g = test::graph_of(w);
    const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
    CHECK(ops_of_type(f.graph, "attention") == 0);
    CHECK(ops_of_type(f.graph, "matmul") == 2);
    test::check_agree(test::run_both(g, arch));
  };
  SECTION("an odd depth: rows of Q are not whole 4-byte words") {
    expect_apart(fusion_cases::attention(2, 8, 7, 8, 8));
  }
  SECTION("odd keys and values") {
    expect_apart(fusion_cases::attention(2, 8, 8, 9, 5));
  }
  SECTION("a Kt shared by every batch (broadcast)") {
    json w = fusion_cases::attention(2, 8, 8, 8, 8);
    w["tensors"]["kt"] = fusion_cases::tensor({1, 8, 8}, -1, 1, 2);
    expect_apart(w);
  }
  SECTION("the probabilities are also a graph output") {
    json w = fusion_cases::attention(2, 8, 8, 8, 8);
    w["outputs"].push_back("probs");
    expect_apart(w);
  }
  SECTION("the scores are read outside the group") {
    json w = fusion_cases::attention(2, 8, 8, 8, 8);
    w["ops"].push_back(fusion_cases::op("relu", {"scores"}, "r"));
    w["outputs"].push_back("r");
    const Graph g = test::graph_of(w);
    CHECK(ops_of_type(fuse(g, arch, StagingPolicy::kMethod).graph, "attention") == 0);
  }
  SECTION("one batch's Kt and V do not fit a core's ldm") {
    // 2 x 64 x 256 fp16 elements each: 64 KiB, the whole ldm.
    expect_apart(fusion_cases::attention(1, 8, 64, 256, 64));
  }
}

namespace {

/// The attention kernel's DMA events per core group (launch of one attention op on `arch`).
std::vector<std::vector<DmaEvent>> attention_events(const json& workload, const Arch& arch) {
  const Graph g = test::graph_of(workload);
  const FusedGraph f = fuse(g, arch, StagingPolicy::kMethod);
  REQUIRE(ops_of_type(f.graph, "attention") == 1);
  return test::dma_events(f.graph, arch);
}

}  // namespace

TEST_CASE("the attention kernel reads the program's resident scale once per core group", "[graph][fusion][attention]") {
  // The scores' scale is a one-element input every core needs: the group's first core reads it for all 64
  // (BCAST), the only 4-byte request of the run (the mask rows are 256 B, the other reads 2 KiB).
  Arch arch = Arch::preset("sw26010pro");
  arch.core_groups = 2;
  const auto events = attention_events(fusion_cases::attention(4, 128, 64, 128, 64), arch);
  REQUIRE(events.size() == 2);
  for (const std::vector<DmaEvent>& group : events) {
    const auto scale_reads = std::count_if(group.begin(), group.end(),
                                           [](const DmaEvent& e) { return e.op == DmaOp::kGet && e.length == 4; });
    CHECK(scale_reads == 1);
  }
  run_attention(fusion_cases::attention(4, 128, 64, 128, 64), arch);  // and the outputs agree with the unfused ops
}

TEST_CASE("the attention kernel reads a group's next batch before it waits for the current one",
          "[graph][fusion][attention]") {
  // Two BERT-base heads on one sw26010pro group: the second head's Kt, V and Q reads queue behind the first's on
  // the engine's channels, issued before the first's have landed, so no channel idles between the batches.
  Arch arch = Arch::preset("sw26010pro");
  arch.core_groups = 1;
  const auto events = attention_events(fusion_cases::attention(2, 128, 64, 128, 64), arch);
  REQUIRE(events.size() == 1);
  std::vector<DmaEvent> batch_reads;  // Kt, V and Q of both heads, in issue order (the 2 KiB reads)
  std::copy_if(events[0].begin(), events[0].end(), std::back_inserter(batch_reads),
               [](const DmaEvent& e) { return e.op == DmaOp::kGet && e.length >= 1024; });
  REQUIRE(batch_reads.size() % 2 == 0);
  const std::size_t half = batch_reads.size() / 2;
  Cycle first_landed = 0, second_issued = std::numeric_limits<Cycle>::max();
  for (std::size_t i = 0; i < batch_reads.size(); ++i) {
    if (i < half) first_landed = std::max(first_landed, batch_reads[i].end);
    if (i >= half) second_issued = std::min(second_issued, batch_reads[i].issue);
  }
  CHECK(second_issued < first_landed);
  // Each of a batch's three reads (Kt, Q, V) is cut into one part per channel of the engine (8 on sw26010pro).
  REQUIRE(half == 3 * 8);
  // V comes last, in its own wait: the scores and softmax need only Kt and Q. The workload stages q, kt and v in
  // that order, so a batch's reads of Q lie below those of Kt and V's above both.
  for (std::size_t batch = 0; batch < 2; ++batch) {
    const auto first_of = [&](std::size_t tensor) { return batch_reads[batch * half + tensor * 8].main; };
    CHECK(first_of(1) < first_of(0));  // Q after Kt, from below it
    CHECK(first_of(2) > first_of(0));  // then V, from above
  }
}

TEST_CASE(
    "the attention kernel puts a team's Y rows as one request: a mesh row's in the group's memory, a pair's "
    "in another's",
    "[graph][fusion][attention]") {
  // Four BERT-base heads on two sw26010pro groups, every tensor in group 0's memory: each core of group 0 sends
  // its two query rows' Y (256 B) by RMA to the first core of its mesh row, which puts the row's 16 rows (2 KiB)
  // in one request, 8 requests per head where each core's own put made 64; group 1 writes its Y over the link to
  // group 0's memory, a pair of cores' 4 rows (512 B) per request, 32 per head. On sw26010 (no RMA) every core puts
  // its own rows.
  const auto y_puts = [](const std::vector<DmaEvent>& group) {
    std::vector<DmaEvent> puts;
    std::copy_if(group.begin(), group.end(), std::back_inserter(puts),
                 [](const DmaEvent& e) { return e.op == DmaOp::kPut; });
    return puts;
  };
  const json w = fusion_cases::attention(4, 128, 64, 128, 64);
  Arch pro = Arch::preset("sw26010pro");
  pro.core_groups = 2;
  const auto events = attention_events(w, pro);
  REQUIRE(events.size() == 2);
  const std::vector<DmaEvent> gathered = y_puts(events[0]), paired = y_puts(events[1]);
  CHECK(gathered.size() == 2 * 8);
  CHECK(std::all_of(gathered.begin(), gathered.end(),
                    [](const DmaEvent& e) { return e.length == 16 * 64 * sizeof(f16) && e.core % 8 == 0; }));
  CHECK(paired.size() == 2 * 32);
  CHECK(std::all_of(paired.begin(), paired.end(),
                    [](const DmaEvent& e) { return e.length == 4 * 64 * sizeof(f16) && e.core % 2 == 0; }));
  run_attention(w, pro);  // the same outputs as the unfused ops
  Arch sw = Arch::preset("sw26010");
  sw.core_groups = 1;
  const auto plain = attention_events(fusion_cases::attention(2, 128, 64, 128, 64), sw);
  CHECK(y_puts(plain[0]).size() == 2 * 64);
  run_attention(fusion_cases::attention(2, 128, 64, 128, 64), sw);
}
