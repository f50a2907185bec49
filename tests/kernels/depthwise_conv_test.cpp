// conv's "depthwise" algorithm: against the fp32 reference and bit for bit against implicit-precomp (the GEMM
// algorithm it stands in for) on depthwise convs of every geometry (strides, one-sided pads, dilation, a channel
// multiplier, several samples, planes larger than a tile, several tiles per core, rows and row segments larger than
// the staging buffers, a batch whose taps do not fit ldm at once), with bias, residual and activation folded; an
// infinite tap over the padding adds nothing; a conv that is not depthwise runs implicit-precomp; faster in simulated
// cycles on a MobileNet-V2 layer.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::bind_op;
using ldmsim::test::run_op;

namespace {

struct Run {
  std::vector<std::uint16_t> bits;
  Cycle cycles = 0;
  nlohmann::json metrics;
};

/// Runs conv on `shapes` with seeded inputs in [-1, 1] on `arch`; the output's bits, cycles and metrics.
Run run_conv(const std::vector<Shape>& shapes, const nlohmann::json& attrs, const Arch& arch,
             StagingPolicy policy = StagingPolicy::kMethod) {
  const auto op = bind_op("conv", shapes, attrs);
  Machine m{arch};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<DeviceTensor> in, out;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    std::vector<float> values(shapes[i].elements());
    for (float& v : values) v = dist(rng);
    std::vector<f16> halves(values.size());
    floats_to_halves(values, halves);
    in.push_back(stage_in(m, "in" + std::to_string(i), choose_plan(op->view(i), op->padding(i), policy), halves));
  }
  const std::size_t y = shapes.size();
  out.push_back(allocate_tensor(m, "y", choose_plan(op->view(y), op->padding(y), policy)));
  op->run(m, in, out, "conv");
  Run r;
  for (const f16 h : stage_out(m, out[0])) r.bits.push_back(h.bits);
  r.cycles = m.stats().cycles;
  r.metrics = op->run_metrics();
  return r;
}

/// Runs the depthwise algorithm on `shapes` with `attrs` (inputs seeded by `seed`, on `arch`): checks it against the
/// fp32 reference and its output bit for bit against implicit-precomp's on `gemm_arch` (a larger store where the
/// GEMM's tiles need one; the bits do not depend on it).
void check_reference_and_gemm_bits(const std::vector<Shape>& shapes, nlohmann::json attrs, unsigned seed,
                                   const Arch& arch, const Arch& gemm_arch) {
  attrs["algo"] = "depthwise";
  const auto r = run_op("conv", shapes, attrs, StagingPolicy::kMethod, -1.0f, 1.0f, seed, {}, arch);
  INFO(r.fault);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  const Run direct = run_conv(shapes, attrs, arch);
  attrs["algo"] = "implicit-precomp";
  CHECK(direct.bits == run_conv(shapes, attrs, gemm_arch).bits);
}

struct DepthwiseCase {
  Shape x, w;
  nlohmann::json attrs;
  bool bias = true;
};

std::vector<DepthwiseCase> depthwise_cases() {
  return {
      {Shape{1, 4, 7, 7}, Shape{4, 1, 3, 3}, {{"groups", 4}, {"pad", 1}}},                            // MobileNet
      {Shape{1, 6, 9, 9}, Shape{6, 1, 3, 3}, {{"groups", 6}, {"pad", 1}, {"stride", 2}}, false},      // stride 2
      {Shape{2, 3, 8, 11}, Shape{6, 1, 3, 3}, {{"groups", 3}, {"pad", {1, 0, 0, 2}}}},                // multiplier 2
      {Shape{1, 5, 12, 12}, Shape{5, 1, 3, 3}, {{"groups", 5}, {"dilation", 2}, {"pad", 2}}, false},  // dilation
      {Shape{3, 7, 5, 6}, Shape{7, 1, 5, 5}, {{"groups", 7}, {"pad", 2}, {"stride", {1, 2}}}},        // 5x5, 3 samples
      {Shape{1, 3, 1, 1}, Shape{3, 1, 1, 1}, {{"groups", 3}}},                                        // 1x1x1
      {Shape{1, 2, 131, 97}, Shape{2, 1, 3, 3}, {{"groups", 2}, {"pad", 1}}},  // planes larger than a tile
  };
}

std::vector<Shape> shapes_of(const DepthwiseCase& c) {
  std::vector<Shape> shapes{c.x, c.w};
  if (c.bias) shapes.push_back(Shape{c.w[0]});
  return shapes;
}

}  // namespace

TEST_CASE("depthwise conv matches the reference and implicit-precomp's bits", "[kernels][conv][depthwise]") {
  for (const DepthwiseCase& c : depthwise_cases()) {
    nlohmann::json attrs = c.attrs;
    attrs["algo"] = "depthwise";
    INFO(c.x.str() << " * " << c.w.str() << " " << attrs.dump());
    for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
      INFO(to_string(p));
      const auto r = run_op("conv", shapes_of(c), attrs, p, -1.0f, 1.0f, 17);
      INFO(r.fault);
      REQUIRE_FALSE(r.trapped);
      CHECK(r.max_excess <= 0);
      CHECK(r.metrics["algo"] == "depthwise");
    }
    nlohmann::json gemm = c.attrs;
    gemm["algo"] = "implicit-precomp";
    const Arch arch = ldmsim::test::small_arch();
    CHECK(run_conv(shapes_of(c), attrs, arch).bits == run_conv(shapes_of(c), gemm, arch).bits);
  }
}

TEST_CASE("depthwise conv folds a residual and an activation as the GEMM algorithms do", "[kernels][conv][depthwise]") {
  const Shape x{2, 6, 10, 9}, w{6, 1, 3, 3}, y{2, 6, 10, 9};
  const Arch arch = ldmsim::test::small_arch();
  for (const char* residual : {"after", "before"}) {
    for (const nlohmann::json& activation :
         {nlohmann::json("relu"), nlohmann::json{{"type", "clip"}, {"min", 0.0}, {"max", 0.5}}}) {
      const nlohmann::json attrs{{"groups", 6}, {"pad", 1}, {"residual", residual}, {"activation", activation}};
      INFO(attrs.dump());
      check_reference_and_gemm_bits({x, w, Shape{6}, y}, attrs, 5, arch, arch);
    }
  }
}

TEST_CASE("depthwise conv reads rows longer than its staging buffer in chunks", "[kernels][conv][depthwise][big]") {
  // sw26010's 64 KiB local store: a 3-row window of 20,000-element rows does not fit one read.
  const Arch arch = Arch::preset("sw26010");
  const std::vector<Shape> shapes{Shape{1, 2, 4, 20000}, Shape{2, 1, 3, 3}, Shape{2}};
  // The GEMM algorithms need a larger local store for such rows.
  nlohmann::json roomy = arch.to_json();
  roomy["core_groups"]["cores"]["ldm_bytes"] = 1 << 20;
  check_reference_and_gemm_bits(shapes, {{"groups", 2}, {"pad", 1}, {"stride", {1, 3}}}, 3, arch,
                                Arch::from_json(roomy));
}

TEST_CASE("depthwise conv writes several tiles per core, and the residual of each", "[kernels][conv][depthwise]") {
  // 64 planes of 40x40 over small_arch's cores: eight planes a core, in tiles of four.
  const Shape x{2, 32, 40, 40}, w{32, 1, 3, 3}, y{2, 32, 40, 40};
  const Arch arch = ldmsim::test::small_arch();
  check_reference_and_gemm_bits(
      {x, w, Shape{32}, y}, {{"groups", 32}, {"pad", 1}, {"residual", "after"}, {"activation", "relu"}}, 9, arch, arch);
}

TEST_CASE("depthwise conv reads a row segment wider than its buffers in column chunks", "[kernels][conv][depthwise]") {
  // Two cores, one plane each: each output row segment (a tile) reads more columns than a window buffer holds.
  nlohmann::json tree = Arch::preset("sw26010").to_json();
  tree["core_groups"]["count"] = 1;
  tree["core_groups"]["cores"]["rows"] = 1;
  tree["core_groups"]["cores"]["cols"] = 2;
  const Arch arch = Arch::from_json(tree);
  tree["core_groups"]["cores"]["ldm_bytes"] = 1 << 20;
  const Arch roomy = Arch::from_json(tree);
  const std::vector<Shape> shapes{Shape{1, 2, 3, 40000}, Shape{2, 1, 3, 3}, Shape{2}};
  check_reference_and_gemm_bits(shapes, {{"groups", 2}, {"pad", 1}}, 4, arch, roomy);
}

TEST_CASE("depthwise conv of a large batch fits a 64 KiB local store", "[kernels][conv][depthwise][big]") {
  // EfficientNet-B0's 5x5 depthwise layer of 1152 channels at batch 32 on one sw26010 group: 576 planes a core, every
  // channel's taps more than a core can hold at once, so it reads them window by window.
  nlohmann::json tree = Arch::preset("sw26010").to_json();
  tree["core_groups"]["count"] = 1;
  const Arch arch = Arch::from_json(tree);
  const auto r = run_op("conv", {Shape{32, 1152, 7, 7}, Shape{1152, 1, 5, 5}, Shape{1152}},
                        {{"groups", 1152}, {"pad", 2}}, StagingPolicy::kMethod, -1.0f, 1.0f, 6, {}, arch);
  INFO(r.fault);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  CHECK(r.metrics["algo"] == "depthwise");
}

TEST_CASE("a conv of one group and one input channel is a product, not a depthwise conv",
          "[kernels][conv][depthwise]") {
  const auto r = run_op("conv", {Shape{1, 1, 12, 12}, Shape{8, 1, 3, 3}}, {{"pad", 1}}, StagingPolicy::kMethod);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.metrics["algo"] == "implicit-precomp");
}

TEST_CASE("algo depthwise on a conv that is not depthwise runs implicit-precomp", "[kernels][conv][depthwise]") {
  const auto r = run_op("conv", {Shape{1, 4, 6, 6}, Shape{4, 2, 3, 3}}, {{"groups", 2}, {"algo", "depthwise"}},
                        StagingPolicy::kMethod, -1.0f, 1.0f, 3);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  CHECK(r.metrics["algo"] == "implicit-precomp");
}

TEST_CASE("depthwise conv takes fewer simulated cycles than implicit-precomp on a MobileNet-V2 layer",
          "[kernels][conv][depthwise]") {
  // features.5's depthwise conv: 192 channels of 28x28, 3x3, pad 1, every operand in local memory.
  const std::vector<Shape> shapes{Shape{1, 192, 28, 28}, Shape{192, 1, 3, 3}, Shape{192}};
  const nlohmann::json attrs{{"groups", 192}, {"pad", 1}, {"activation", {{"type", "clip"}, {"min", 0}, {"max", 6}}}};
  nlohmann::json dw = attrs, gemm = attrs;
  dw["algo"] = "depthwise";
  gemm["algo"] = "implicit-precomp";
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    INFO(preset);
    nlohmann::json tree = Arch::preset(preset).to_json();
    tree["core_groups"]["count"] = 1;  // one group: its memory is local
    const Arch arch = Arch::from_json(tree);
    const Run direct = run_conv(shapes, dw, arch), product = run_conv(shapes, gemm, arch);
    CHECK(direct.bits == product.bits);
    CHECK(direct.cycles < product.cycles);
    WARN(preset << ": depthwise " << direct.cycles << " cycles, implicit-precomp " << product.cycles);
  }
}

TEST_CASE("depthwise conv gives the same bits and cycles on any number of host threads", "[kernels][conv][depthwise]") {
  const std::vector<Shape> shapes{Shape{2, 24, 15, 15}, Shape{24, 1, 3, 3}, Shape{24}};
  const nlohmann::json attrs{{"groups", 24}, {"pad", 1}, {"stride", 2}, {"algo", "depthwise"}};
  const Arch arch = ldmsim::test::small_arch(4);
  const auto run = [&](unsigned threads) {
    const auto op = bind_op("conv", shapes, attrs);
    Machine m{arch, MachineOptions{.threads = threads}};
    std::vector<DeviceTensor> in;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      std::vector<f16> halves(shapes[i].elements(), f16(0.25f * static_cast<float>(i + 1)));
      in.push_back(stage_in(m, "in" + std::to_string(i),
                            choose_plan(op->view(i), op->padding(i), StagingPolicy::kMethod), halves));
    }
    std::vector<DeviceTensor> out{
        allocate_tensor(m, "y", choose_plan(op->view(3), op->padding(3), StagingPolicy::kMethod))};
    op->run(m, in, out, "conv");
    std::vector<std::uint16_t> bits;
    for (const f16 h : stage_out(m, out[0])) bits.push_back(h.bits);
    return std::pair{bits, m.stats().cycles};
  };
  const auto one = run(1);
  CHECK(run(2) == one);
  CHECK(run(3) == one);
}

TEST_CASE("depthwise conv adds nothing for an infinite tap over the padding", "[kernels][conv][depthwise]") {
  // Planes of ones, 3x3 filters of ones, the first channel's first tap +inf, pad 1: output (1, 0)'s first tap lies
  // over the padding column, so it sums its six taps over the plane; an output whose first tap reads the plane is
  // inf.
  const std::vector<Shape> shapes{Shape{1, 2, 4, 4}, Shape{2, 1, 3, 3}};
  const nlohmann::json attrs{{"groups", 2}, {"pad", 1}, {"algo", "depthwise"}};
  const auto op = bind_op("conv", shapes, attrs);
  Machine m{ldmsim::test::small_arch()};
  std::vector<f16> x(shapes[0].elements(), f16(1.0f)), w(shapes[1].elements(), f16(1.0f));
  w[0] = f16(std::numeric_limits<float>::infinity());
  std::vector<DeviceTensor> in;
  for (std::size_t i = 0; i < 2; ++i) {
    in.push_back(stage_in(m, "in" + std::to_string(i), choose_plan(op->view(i), op->padding(i), StagingPolicy::kMethod),
                          i == 0 ? x : w));
  }
  std::vector<DeviceTensor> out{
      allocate_tensor(m, "y", choose_plan(op->view(2), op->padding(2), StagingPolicy::kMethod))};
  op->run(m, in, out, "conv");
  const std::vector<f16> y = stage_out(m, out[0]);
  REQUIRE(y.size() == 32);
  CHECK(static_cast<float>(y[4]) == 6.0f);       // channel 0, output (1, 0)
  CHECK(static_cast<float>(y[0]) == 4.0f);       // output (0, 0): the first tap over a padding row and column
  CHECK(std::isinf(static_cast<float>(y[5])));   // output (1, 1)
  CHECK(static_cast<float>(y[16 + 4]) == 6.0f);  // channel 1: every tap finite
  CHECK(static_cast<float>(y[16 + 5]) == 9.0f);
}
