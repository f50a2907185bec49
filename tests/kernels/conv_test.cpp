// conv against the fp32 reference with every algorithm (im2col, direct, implicit, implicit-precomp) on odd and
// even shapes: 1x1x1x1, a C=3 first layer, stride 2 on an odd input, padding on one side only, dilation 2,
// depthwise and 2-group convolutions, 1x1 and 7x7 stride 2 kernels, with and without bias; under method and
// naive staging, and under none (a trap must name the staging fix). The preprocessor's offset table on a
// hand-computed case; bad attributes and shapes rejected naming the op.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "../../kernels/src/ops/conv_tiles.hpp"  // white box: the offset table, the blocking search count
#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::bind_op;
using ldmsim::test::run_op;

namespace {

struct ConvCase {
  Shape x, w;
  nlohmann::json attrs;
  bool bias = false;
};

std::vector<ConvCase> conv_cases() {
  return {
      {Shape{1, 1, 1, 1}, Shape{1, 1, 1, 1}, nlohmann::json::object(), false},
      {Shape{1, 3, 11, 11}, Shape{4, 3, 3, 3}, {{"pad", 1}}, true},                        // C=3 first layer
      {Shape{2, 3, 9, 9}, Shape{5, 3, 3, 3}, {{"stride", 2}}, true},                       // stride 2, odd input
      {Shape{1, 2, 6, 7}, Shape{3, 2, 3, 3}, {{"pad", {1, 0, 0, 2}}}, false},              // pad on one side only
      {Shape{1, 2, 9, 9}, Shape{2, 2, 3, 3}, {{"dilation", 2}, {"pad", 2}}, true},         // dilation 2
      {Shape{1, 4, 7, 7}, Shape{4, 1, 3, 3}, {{"groups", 4}, {"pad", 1}}, true},           // depthwise
      {Shape{2, 4, 6, 5}, Shape{6, 2, 3, 3}, {{"groups", 2}, {"stride", {1, 2}}}, false},  // 2 groups
      {Shape{2, 5, 7, 7}, Shape{3, 5, 1, 1}, nlohmann::json::object(), true},              // 1x1
      {Shape{1, 3, 19, 19}, Shape{4, 3, 7, 7}, {{"stride", 2}, {"pad", 3}}, false},        // 7x7 stride 2
      {Shape{2, 8, 10, 10}, Shape{8, 8, 3, 3}, {{"pad", 1}}, true},                        // all even
  };
}

std::vector<Shape> shapes_of(const ConvCase& c) {
  std::vector<Shape> shapes{c.x, c.w};
  if (c.bias) shapes.push_back(Shape{c.w[0]});
  return shapes;
}

}  // namespace

TEST_CASE("conv: every algorithm matches the reference under every staging policy", "[kernels][conv]") {
  int trapped = 0, clean = 0;
  for (const ConvCase& c : conv_cases()) {
    for (const char* algo : {"im2col", "direct", "implicit", "implicit-precomp"}) {
      nlohmann::json attrs = c.attrs;
      attrs["algo"] = algo;
      INFO(c.x.str() << " * " << c.w.str() << " " << attrs.dump());
      for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
        const auto r = run_op("conv", shapes_of(c), attrs, p, -1.0f, 1.0f, 17);
        INFO(to_string(p) << ": " << r.fault);
        REQUIRE_FALSE(r.trapped);
        CHECK(r.max_excess <= 0);
      }
      const auto r = run_op("conv", shapes_of(c), attrs, StagingPolicy::kNone, -1.0f, 1.0f, 17);
      INFO("none: " << r.fault);
      // A trap happens only where the planner asked for padding, and says how to fix it; without a trap the
      // result is right (a stride can skip the odd last element of an unpadded input, so no rule breaks).
      if (r.trapped) {
        CHECK(r.any_padding);
        CHECK_THAT(r.fault, Catch::Contains("pad this tensor at staging"));
      } else {
        CHECK(r.max_excess <= 0);
      }
      (r.trapped ? trapped : clean) += 1;
    }
  }
  CHECK(trapped >= 8);
  CHECK(clean >= 4);
}

TEST_CASE("conv on sw26010's 64 KiB ldm with a layer larger than the local store", "[kernels][conv][big]") {
  const Shape x{2, 16, 30, 31}, w{24, 16, 3, 3};
  for (const char* algo : {"im2col", "direct", "implicit", "implicit-precomp"}) {
    INFO(algo);
    const auto r = run_op("conv", {x, w, Shape{24}}, {{"pad", 1}, {"algo", algo}}, StagingPolicy::kMethod, -1.0f, 1.0f,
                          5, {}, Arch::preset("sw26010"));
    INFO(r.fault);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
  }
}

TEST_CASE("conv whose image rows are wider than its default algorithm can read runs direct or im2col",
          "[kernels][conv][big]") {
  struct Wide {
    Shape x, w;
    nlohmann::json attrs;
    const char* arch;
    const char* runs_as;
  };
  // A 1-D signal of 100,000 samples: implicit-precomp reads whole input rows (400 KB for two channels), direct
  // reads windows as wide as a tile's outputs. A 3x3 conv over 3000-wide rows on tiny's 16 KiB: direct's windows
  // span two output rows (whole input rows) too, so im2col builds its image matrix in segments of the free ldm.
  const std::vector<Wide> cases = {
      {Shape{1, 2, 1, 100000}, Shape{4, 2, 1, 3}, {{"pad", {0, 1}}}, "sw26010pro", "direct"},
      {Shape{1, 1, 1, 30001}, Shape{3, 1, 1, 10}, {{"stride", {1, 5}}}, "sw26010", "direct"},
      {Shape{1, 2, 12, 3000}, Shape{4, 2, 3, 3}, {{"pad", 1}}, "tiny", "im2col"},
      {Shape{1, 3, 5, 2001}, Shape{2, 3, 3, 3}, {{"stride", 2}, {"dilation", {1, 2}}}, "tiny", "im2col"},
  };
  for (const Wide& c : cases) {
    INFO(c.x.str() << " on " << c.arch);
    const auto r =
        run_op("conv", {c.x, c.w}, c.attrs, StagingPolicy::kMethod, -1.0f, 1.0f, 7, {}, Arch::preset(c.arch));
    INFO(r.fault);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
    CHECK(r.metrics.at("algo") == c.runs_as);
  }
  // An algorithm the workload names runs as named, and then does not fit.
  nlohmann::json named = cases[0].attrs;
  named["algo"] = "implicit-precomp";
  const auto r = run_op("conv", {cases[0].x, cases[0].w}, named, StagingPolicy::kMethod, -1.0f, 1.0f, 7, {},
                        Arch::preset("sw26010pro"));
  CHECK(r.trapped);
  CHECK_THAT(r.fault, Catch::Contains("ldm-overflow"));
}

TEST_CASE("implicit-precomp places each channel's row block 4-byte aligned on odd widths", "[kernels][conv]") {
  // A kernel as large as its stride (a patch embedding) over an odd width: a block of several input rows of an
  // odd pitch spans an odd number of elements, and the next channel's block used to land 2 bytes off.
  const std::vector<std::pair<Shape, Shape>> cases = {
      {Shape{1, 3, 16, 67}, Shape{8, 3, 4, 4}},
      {Shape{2, 8, 12, 63}, Shape{4, 8, 4, 4}},
      {Shape{1, 3, 24, 61}, Shape{6, 3, 8, 8}},
  };
  for (const auto& [x, w] : cases) {
    const std::size_t k = w[3];
    for (const char* arch : {"sw26010", "sw26010pro"}) {
      INFO(x.str() << " by " << w.str() << " on " << arch);
      const auto r = run_op("conv", {x, w, Shape{w[0]}}, {{"stride", k}}, StagingPolicy::kMethod, -1.0f, 1.0f, 3, {},
                            Arch::preset(arch));
      INFO(r.fault);
      REQUIRE_FALSE(r.trapped);
      CHECK(r.max_excess <= 0);
      CHECK(r.metrics.at("algo") == "implicit-precomp");
    }
  }
}

TEST_CASE("implicit-precomp reads its offset table per k chunk when it does not fit an eighth of ldm",
          "[kernels][conv]") {
  // 24 x 3 x 3 = 216 image rows x 12 bytes = 2.5 KiB, more than 2 KiB (1/8 of tiny's 16 KiB ldm).
  const Shape x{1, 24, 6, 7}, w{4, 24, 3, 3};
  for (const char* algo : {"implicit-precomp", "im2col", "direct", "implicit"}) {
    INFO(algo);
    const auto r = run_op("conv", {x, w, Shape{4}}, {{"pad", 1}, {"algo", algo}}, StagingPolicy::kMethod, -1.0f, 1.0f,
                          9, {}, Arch::preset("tiny"));
    INFO(r.fault);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
  }
}

TEST_CASE("conv whose weight rows fit in ldm keeps them resident and matches the reference", "[kernels][conv]") {
  // 32 output channels over sw26010pro's 8-core mesh rows: each member's 4 weight rows x 288 stay in ldm for
  // every image tile it takes (read once, not per block); the engine picks this here by estimated cycles.
  const Shape x{4, 32, 16, 16}, w{32, 32, 3, 3};
  for (const char* algo : {"implicit-precomp", "direct"}) {
    for (StagingPolicy policy : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
      INFO(algo << " " << to_string(policy));
      const auto r = run_op("conv", {x, w, Shape{32}}, {{"pad", 1}, {"algo", algo}}, policy, -1.0f, 1.0f, 4, {},
                            Arch::preset("sw26010pro"));
      INFO(r.fault);
      REQUIRE_FALSE(r.trapped);
      CHECK(r.max_excess <= 0);
      CHECK(r.metrics["blocking"]["a_resident"] == true);
    }
  }
}

TEST_CASE("conv with row teams gives the same bits and cycles on any number of host threads", "[kernels][conv]") {
  // sw26010's 8-core mesh rows share image tiles by ROW gets between row barriers (the engine picks teams here).
  const auto op = bind_op("conv", {Shape{2, 16, 14, 14}, Shape{32, 16, 3, 3}}, {{"pad", 1}});
  std::vector<f16> x(2 * 16 * 14 * 14), w(32 * 16 * 3 * 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = f16(static_cast<float>(i % 13) / 13.0f - 0.5f);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = f16(static_cast<float>(i % 7) / 7.0f - 0.5f);
  std::vector<std::vector<f16>> outputs;
  std::vector<Cycle> cycles;
  for (unsigned threads : {1u, 4u}) {
    Machine m{Arch::preset("sw26010"), MachineOptions{.threads = threads, .trace = false}};
    std::vector<DeviceTensor> in{stage_in(m, "x", choose_plan(op->view(0), op->padding(0), StagingPolicy::kMethod), x),
                                 stage_in(m, "w", choose_plan(op->view(1), op->padding(1), StagingPolicy::kMethod), w)};
    std::vector<DeviceTensor> out{
        allocate_tensor(m, "y", choose_plan(op->view(2), op->padding(2), StagingPolicy::kMethod))};
    op->run(m, in, out, "conv");
    outputs.push_back(stage_out(m, out[0]));
    cycles.push_back(m.stats().cycles);
  }
  CHECK(outputs[0] == outputs[1]);
  CHECK(cycles[0] == cycles[1]);
}

TEST_CASE("conv's tile algorithms refuse an output that overlaps the input, while im2col runs in place",
          "[kernels][conv]") {
  // The tile algorithms read x while they overwrite it (racy on the hardware), and their tile memos take x as fixed
  // while the kernel runs. im2col reads all of x into its image matrix in a launch of its own first. A 1x1 conv with
  // as many outputs as inputs has y the size of x.
  const std::vector<f16> ones(4 * 36, f16(1.0f));
  for (const char* algo : {"implicit-precomp", "implicit", "direct", "im2col"}) {
    INFO(algo);
    const auto bound = bind_op("conv", {Shape{1, 4, 6, 6}, Shape{4, 4, 1, 1}}, {{"algo", algo}});
    Machine m{ldmsim::test::small_arch()};
    const PaddingPlan xp = choose_plan(bound->view(0), bound->padding(0), StagingPolicy::kMethod);
    std::vector<DeviceTensor> in{
        stage_in(m, "x", xp, ones),
        stage_in(m, "w", choose_plan(bound->view(1), bound->padding(1), StagingPolicy::kMethod),
                 std::vector<f16>(16, f16(0.5f)))};
    const PaddingPlan yp = choose_plan(bound->view(2), bound->padding(2), StagingPolicy::kMethod);
    REQUIRE(yp.layout.total == xp.layout.total);
    const std::vector<DeviceTensor> same{{"y", in[0].ptr, yp}};
    const std::vector<DeviceTensor> inside{{"y", in[0].ptr + 2, yp}};  // a partial overlap
    const std::vector<f16> twos(4 * 36, f16(2.0f));                    // 4 inputs x 1 x 0.5 each
    if (std::string_view(algo) == "im2col") {
      REQUIRE_NOTHROW(bound->run(m, in, same, "conv"));
      CHECK(stage_out(m, same[0]) == twos);
      continue;
    }
    CHECK_THROWS_AS(bound->run(m, in, same, "conv"), std::invalid_argument);
    CHECK_THROWS_WITH(bound->run(m, in, same, "conv"),
                      Catch::Contains("conv: output y overlaps input x in device memory"));
    CHECK_THROWS_AS(bound->run(m, in, inside, "conv"), std::invalid_argument);
    const std::vector<DeviceTensor> apart{allocate_tensor(m, "y", yp)};
    CHECK_NOTHROW(bound->run(m, in, apart, "conv"));
    CHECK(stage_out(m, apart[0]) == twos);
  }
}

TEST_CASE("the convolution preprocessor's offset table, by hand", "[kernels][conv]") {
  // C/groups = 2, 4 x 5 input (natural layout: row pitch 5, plane pitch 20), 2 x 2 kernel, dilation (1, 2).
  ops::ConvGeometry g;
  g.c = 2, g.h = 4, g.w = 5, g.k = 1, g.r = 2, g.s = 2, g.dilation_h = 1, g.dilation_w = 2;
  const Layout x = Layout::natural(Shape4{1, 2, 4, 5});
  const auto table = ops::offset_table(g, x);
  // j = (c, r, s): offset = c*20 + r*1*5 + s*2, row = r, column = 2s.
  const std::vector<std::array<std::int32_t, 3>> expected = {{0, 0, 0},  {2, 0, 2},  {5, 1, 0},  {7, 1, 2},
                                                             {20, 0, 0}, {22, 0, 2}, {25, 1, 0}, {27, 1, 2}};
  REQUIRE(table.size() == expected.size());
  for (std::size_t j = 0; j < table.size(); ++j) {
    INFO("j " << j);
    CHECK(table[j].offset == expected[j][0]);
    CHECK(table[j].row == expected[j][1]);
    CHECK(table[j].column == expected[j][2]);
  }
}

TEST_CASE("conv attribute and shape errors name the op", "[kernels][conv]") {
  const Shape x{1, 4, 5, 5}, w{2, 4, 3, 3};
  CHECK_THROWS_WITH(bind_op("conv", {x, w}, {{"stride", 0}}), Catch::Contains("attrs.stride"));
  CHECK_THROWS_WITH(bind_op("conv", {x, Shape{2, 4, 7, 7}}),
                    Catch::Contains("conv: the dilated kernel's height (7) is larger than the padded input's (5)"));
  CHECK_NOTHROW(bind_op("conv", {x, Shape{2, 4, 7, 7}}, {{"pad", 1}}));
  CHECK_THROWS_WITH(bind_op("conv", {x, Shape{3, 2, 3, 3}}, {{"groups", 3}}),
                    Catch::Contains("conv: groups 3 must divide the input channels (4)"));
  CHECK_THROWS_WITH(bind_op("conv", {x, Shape{2, 3, 3, 3}}),
                    Catch::Contains("conv: W [2, 3, 3, 3] must have C/groups = 4"));
  CHECK_THROWS_WITH(bind_op("conv", {x, w, Shape{3}}), Catch::Contains("conv: bias [3] must be [2]"));
  CHECK_THROWS_WITH(bind_op("conv", {Shape{4, 5, 5}, w}), Catch::Contains("X [4, 5, 5] must be 4-D"));
  CHECK_THROWS_WITH(
      bind_op("conv", {x, w}, {{"algo", "winograd"}}),
      Catch::Contains("attrs.algo must be one of im2col, direct, implicit, implicit-precomp or depthwise"));
  CHECK_THROWS_WITH(bind_op("conv", {x, w}, {{"pad", {1, 2, 3}}}), Catch::Contains("attrs.pad"));
  CHECK_THROWS_WITH(bind_op("conv", {x, w}, {{"dilation", {1, 0}}}), Catch::Contains("attrs.dilation"));
  // Offsets beyond 32 bits: implicit-precomp is refused when bound, naming the way out; direct takes it.
  const Shape huge{1, 1024, 2048, 2048}, hw{8, 1024, 3, 3};
  CHECK_THROWS_WITH(
      bind_op("conv", {huge, hw}),
      Catch::Contains("conv: implicit-precomp's offset table holds 32-bit") && Catch::Contains("--conv-algo direct"));
  CHECK_NOTHROW(bind_op("conv", {huge, hw}, {{"algo", "direct"}}));
}

TEST_CASE("conv runs right on an arch whose transactions are smaller than the 4-byte DMA rule", "[kernels][conv]") {
  // The blocking search prices reads by their offset within a transaction: 1- and 2-byte transactions once
  // crashed it (a table of transaction_bytes / 4 entries).
  for (const std::uint32_t bytes : {1u, 2u}) {
    INFO("transaction_bytes " << bytes);
    nlohmann::json tree = ldmsim::test::small_arch().to_json();
    tree["dma"]["granularity_bytes"] = 1;
    tree["dma"]["transaction_bytes"] = bytes;
    const Arch arch = Arch::from_json(tree);
    for (const char* algo : {"implicit-precomp", "direct", "im2col"}) {
      INFO(algo);
      const auto r = run_op("conv", {Shape{1, 3, 9, 9}, Shape{4, 3, 3, 3}}, {{"pad", 1}, {"algo", algo}},
                            StagingPolicy::kMethod, -1.0f, 1.0f, 5, {}, arch);
      REQUIRE_FALSE(r.trapped);
      CHECK(r.max_excess <= 0);
    }
  }
}

namespace {

/// Runs a 3x3 conv (pad 1) of x by w with `algo` on m; its blocking.
nlohmann::json run_conv(Machine& m, const Shape& x, const Shape& w, const char* algo) {
  const auto bound = bind_op("conv", {x, w}, {{"pad", 1}, {"algo", algo}});
  std::vector<DeviceTensor> in;
  for (std::size_t i = 0; i < 2; ++i) {
    const Shape& s = i == 0 ? x : w;
    in.push_back(stage_in(m, i == 0 ? "x" : "w", choose_plan(bound->view(i), bound->padding(i), StagingPolicy::kMethod),
                          std::vector<f16>(s.elements(), f16(0.25f))));
  }
  const std::vector<DeviceTensor> out{
      allocate_tensor(m, "y", choose_plan(bound->view(2), bound->padding(2), StagingPolicy::kMethod))};
  bound->run(m, in, out, "conv");
  return bound->run_metrics()["blocking"];
}

}  // namespace

TEST_CASE("a conv whose job and arch were seen before reuses their blocking: one search", "[kernels][conv]") {
  // ResNet-18 repeats layer shapes; the search is the control core's work between launches.
  const auto run = run_conv;
  Machine m{Arch::preset("sw26010pro")};
  const Shape x{1, 16, 12, 12}, w{32, 16, 3, 3};
  CHECK(ops::blocking_searches(m) == 0);
  const auto first = run(m, x, w, "implicit-precomp");
  CHECK(ops::blocking_searches(m) == 1);
  CHECK(run(m, x, w, "implicit-precomp") == first);  // the same job again
  CHECK(ops::blocking_searches(m) == 1);
  run(m, Shape{1, 16, 12, 14}, w, "implicit-precomp");  // another width
  CHECK(ops::blocking_searches(m) == 2);
  run(m, x, w, "direct");  // another tile source
  CHECK(ops::blocking_searches(m) == 3);
  {
    // A group view has another arch (one core group) and shares the machine's searches.
    const std::unique_ptr<Machine> view = m.group_view({2});
    CHECK(run(*view, x, w, "implicit-precomp") != first);
    CHECK(ops::blocking_searches(m) == 4);
    CHECK(ops::blocking_searches(*view) == 4);
  }
  CHECK(run(m, x, w, "implicit-precomp") == first);  // the machine's own arch again: still kept
  CHECK(ops::blocking_searches(m) == 4);
  // The searches are the machine's: another machine of the same arch starts with none and searches for itself.
  Machine other{Arch::preset("sw26010pro")};
  CHECK(ops::blocking_searches(other) == 0);
  CHECK(run(other, x, w, "implicit-precomp") == first);
  CHECK(ops::blocking_searches(other) == 1);
  CHECK(ops::blocking_searches(m) == 4);
}

TEST_CASE("implicit-precomp reads the channels of a small image as one block where its planes continue",
          "[kernels][conv]") {
  // 7x7 planes with rows padded to 8 (a plane is its 7 rows: consecutive channels' row blocks are evenly spaced)
  // against planes padded to 50 elements (a gap after each plane: a block per channel). Same values either way;
  // one block per run of channels takes well under half the requests and fewer cycles.
  const Shape4 xs{1, 64, 7, 7};
  const auto op =
      bind_op("conv", {Shape{1, 64, 7, 7}, Shape{64, 64, 3, 3}}, {{"pad", 1}, {"algo", "implicit-precomp"}});
  std::vector<f16> x(xs.elements()), w(64 * 64 * 3 * 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = f16(static_cast<float>(i % 13) / 13.0f - 0.5f);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = f16(static_cast<float>(i % 7) / 7.0f - 0.5f);
  Arch arch = Arch::preset("sw26010pro");
  arch.core_groups = 1;
  struct Result {
    std::vector<f16> y;
    std::uint64_t requests;
    Cycle cycles;
    std::string blocking;
  };
  const auto run = [&](const PaddingPlan& x_plan) {
    Machine m{arch};
    std::vector<DeviceTensor> in{stage_in(m, "x", x_plan, x),
                                 stage_in(m, "w", choose_plan(op->view(1), op->padding(1), StagingPolicy::kMethod), w)};
    std::vector<DeviceTensor> out{
        allocate_tensor(m, "y", choose_plan(op->view(2), op->padding(2), StagingPolicy::kMethod))};
    op->run(m, in, out, "conv");
    const RunStats stats = m.stats();
    nlohmann::json blocking = op->run_metrics()["blocking"];
    blocking.erase("estimated_cycles");  // lower where the reads merge
    return Result{stage_out(m, out[0]), stats.dma_requests(), stats.cycles, blocking.dump()};
  };
  const PaddingPlan rows = plan_row(xs, Unit::kRow), planes = plan_column(xs, Unit::kPlane);
  REQUIRE(rows.layout.hw_pitch == 7 * rows.layout.w_pitch);
  REQUIRE(planes.layout.hw_pitch == 50);
  const Result merged = run(rows), apart = run(planes);
  CHECK(merged.y == apart.y);
  REQUIRE(merged.blocking == apart.blocking);  // the same tiles: the requests differ by the merge alone
  INFO("requests " << merged.requests << " vs " << apart.requests);
  CHECK(2 * merged.requests < apart.requests);
  CHECK(merged.cycles < apart.cycles);
}

TEST_CASE("continuing_blocks: row blocks one plane apart with the same rows and columns, planes their rows exactly",
          "[kernels][conv]") {
  using ops::continuing_blocks;
  using ops::RowBlock;
  // 7 rows of pitch 8 (plane 56): blocks at offsets 0, 56, 112 continue; a different width, a gap or an empty
  // block ends the run.
  const RowBlock a{.h0 = 0, .rows = 7, .step = 1, .w0 = 0, .w1 = 7, .offset = 0};
  const auto at = [&](std::size_t offset) {
    RowBlock b = a;
    b.offset = offset;
    return b;
  };
  std::vector<RowBlock> blocks{a, at(56), at(112)};
  CHECK(continuing_blocks(blocks, 0, 56, 8) == 3);
  CHECK(continuing_blocks(blocks, 1, 56, 8) == 2);
  CHECK(continuing_blocks(blocks, 0, 64, 8) == 1);  // planes padded past their rows: rows not evenly spaced
  blocks[1].w1 = 6;
  CHECK(continuing_blocks(blocks, 0, 56, 8) == 1);
  blocks[1] = at(57);
  CHECK(continuing_blocks(blocks, 0, 56, 8) == 1);
  blocks[1] = RowBlock{};
  CHECK(continuing_blocks(blocks, 0, 56, 8) == 1);
  CHECK(continuing_blocks(blocks, 1, 56, 8) == 0);  // an empty block (all padding) is no run
  // Every 2nd row of a 14-row plane (stride 2, one kernel row): 7 rows of step 2 span the plane.
  const RowBlock strided{.h0 = 1, .rows = 7, .step = 2, .w0 = 0, .w1 = 14, .offset = 16};
  RowBlock next = strided;
  next.offset += 14 * 16;
  CHECK(continuing_blocks(std::vector<RowBlock>{strided, next}, 0, 14 * 16, 16) == 2);
}

TEST_CASE("a conv's kernel estimate is the blocking estimate its run reports", "[kernels][conv][estimate]") {
  // The cost-aware placement asks a conv before it runs; the run's own search (staged by the padding method) must
  // price the same job the same way.
  const Arch arch = Arch::preset("sw26010pro");
  const std::vector<Shape> shapes{Shape{1, 32, 28, 28}, Shape{48, 32, 3, 3}, Shape{48}};
  KernelEstimates memo;
  for (const char* algo : {"implicit-precomp", "implicit", "direct", "im2col"}) {
    INFO(algo);
    const nlohmann::json attrs{{"pad", 1}, {"algo", algo}};
    const auto bound = bind_op("conv", shapes, attrs);
    const std::optional<double> estimate = bound->kernel_estimate(arch, memo);
    REQUIRE(estimate);
    const auto r = run_op("conv", shapes, attrs, StagingPolicy::kMethod, -1.0f, 1.0f, 3, {}, arch);
    REQUIRE_FALSE(r.trapped);
    CHECK(std::llround(*estimate) == r.metrics["blocking"]["estimated_cycles"].get<long long>());
    // Asked again: the memo's blocking, no new search.
    const std::uint64_t searches = memo.searches();
    CHECK(bound->kernel_estimate(arch, memo) == estimate);
    CHECK(memo.searches() == searches);
  }
  // The depthwise kernel has no blocking to estimate.
  CHECK_FALSE(bind_op("conv", {Shape{1, 8, 9, 9}, Shape{8, 1, 3, 3}}, {{"groups", 8}})->kernel_estimate(arch, memo));
}

TEST_CASE("a planner's estimate through the machine's own searches is the search its launch then finds",
          "[kernels][conv]") {
  // The cost-aware placement asks the kernels it weighs for their estimates before they run (executor.cpp).
  const Shape x{1, 16, 12, 12}, w{32, 16, 3, 3};
  const auto bound = bind_op("conv", {x, w}, {{"pad", 1}, {"algo", "implicit-precomp"}});
  Machine m{Arch::preset("sw26010pro")};
  KernelEstimates estimates(m);
  const std::optional<double> estimate = bound->kernel_estimate(m.arch(), estimates);
  REQUIRE(estimate);
  CHECK(*estimate > 0);
  CHECK(ops::blocking_searches(m) == 1);
  CHECK(estimates.searches() == 1);
  const nlohmann::json blocking = run_conv(m, x, w, "implicit-precomp");
  CHECK(ops::blocking_searches(m) == 1);  // found, not searched again
  CHECK(blocking["estimated_cycles"] == std::llround(*estimate));
  // Estimates of their own search apart from any machine's.
  KernelEstimates own;
  CHECK(bound->kernel_estimate(m.arch(), own) == estimate);
  CHECK(own.searches() == 1);
  CHECK(ops::blocking_searches(m) == 1);
}
