// 2-D and 3-D class operators (softmax, fc, pools, spatialbn inference and training) on even and odd shapes
// under all three staging policies: method and naive match the reference, none traps exactly when a tensor
// needs padding and then says so. Units larger than sw26010's 64 KiB ldm, fc at batch 1, attribute errors.
#include <catch2/catch.hpp>
#include <limits>
#include <string_view>

#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::bind_op;
using ldmsim::test::run_op;
using ldmsim::test::shape_of;

namespace {

using Case = test::OpCase;

std::vector<Case> cases_for(const Shape4& s4) {
  const Shape s = shape_of(s4), c1{s4.c};
  std::vector<Case> out;
  out.push_back({"softmax", {s}, {}});
  out.push_back({"fc", {s, Shape{3, s4.chw()}, Shape{3}}, {}});
  out.push_back({"fc", {s, Shape{4, s4.chw()}}, {}});
  out.push_back({"max_pool", {s}, {{"kernel", 2}, {"stride", 1}}});
  out.push_back({"avg_pool", {s}, {{"kernel", 3}, {"stride", 2}, {"pad", 1}}});
  out.push_back({"avg_pool", {s}, {{"kernel", 2}, {"stride", 2}, {"pad", 1}, {"count_include_pad", true}}});
  out.push_back({"max_pool", {s}, {{"kernel", 2}, {"stride", 2}, {"ceil_mode", true}}});
  out.push_back({"avg_pool", {s}, {{"kernel", 3}, {"stride", 2}, {"pad", 1}, {"ceil_mode", true}}});
  out.push_back({"max_pool", {s}, {{"kernel", 2}, {"stride", 1}, {"dilation", {2, 3}}}});
  out.push_back({"max_pool", {s}, {{"kernel", 3}, {"stride", 2}, {"pad", 2}, {"dilation", 2}, {"ceil_mode", true}}});
  out.push_back({"spatialbn", {s, c1, c1, c1, c1}, {{"epsilon", 1e-3}}});
  out.push_back({"spatialbn_train", {s, c1, c1}, {}});
  return out;
}

/// spatialbn's var (input 4) must be positive.
std::vector<std::vector<float>> fixed_for(const std::string& op, std::size_t channels) {
  if (op != "spatialbn") return {};
  return {{}, {}, {}, {}, std::vector<float>(channels, 0.5f)};
}

}  // namespace

TEST_CASE("matrix operators on even and odd shapes under every staging policy", "[kernels][2d]") {
  int trapped = 0, clean = 0;
  for (const Shape4& s : test::test_shapes()) {
    for (const Case& c : cases_for(s)) {
      if ((c.op == "max_pool" && (s.h < 2 || s.w < 2))) continue;
      if (c.attrs.contains("dilation") && c.attrs["dilation"].is_array() && (s.h < 3 || s.w < 4)) continue;
      INFO(c.op << " " << s.str() << " " << c.attrs.dump());
      const auto fixed = fixed_for(c.op, s.c);
      for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
        const auto r = run_op(c.op, c.shapes, c.attrs, p, -2.0f, 2.0f, 11, fixed);
        INFO(to_string(p) << ": " << r.fault);
        REQUIRE_FALSE(r.trapped);
        CHECK(r.max_excess <= 0);
      }
      const auto r = run_op(c.op, c.shapes, c.attrs, StagingPolicy::kNone, -2.0f, 2.0f, 11, fixed);
      INFO("none: " << r.fault);
      CHECK(r.trapped == r.any_padding);
      (r.trapped ? trapped : clean) += 1;
      if (r.trapped) {
        CHECK_THAT(r.fault, Catch::Contains("pad this tensor at staging"));
      } else {
        CHECK(r.max_excess <= 0);
      }
    }
  }
  CHECK(trapped > 10);
  CHECK(clean > 10);
}

TEST_CASE("units larger than sw26010's 64 KiB ldm run without trapping", "[kernels][2d][big]") {
  const Arch sw = Arch::preset("sw26010");
  // A 256x160 plane is 80 KiB of fp16; a softmax row of 40000 is 78 KiB.
  const Shape plane{1, 2, 256, 160}, c{2};
  const std::vector<Case> cases = {
      {"relu", {plane}, nullptr},
      {"softmax", {Shape{2, 40000}}, nullptr},
      {"max_pool", {plane}, {{"kernel", 3}, {"stride", 2}, {"pad", 1}}},
      {"max_pool", {plane}, {{"kernel", 3}, {"stride", 2}, {"pad", 3}, {"dilation", {2, 3}}}},
      {"max_pool",
       {Shape{1, 1, 5, 30001}},
       {{"kernel", {2, 3}}, {"stride", {1, 2}}, {"pad", {1, 2}}, {"dilation", {3, 2}}}},
      {"avg_pool", {Shape{1, 1, 300, 301}}, {{"kernel", 2}}},
      {"spatialbn", {plane, c, c, c, c}, nullptr},
      {"spatialbn_train", {plane, c, c}, nullptr},
      {"fc", {Shape{2, 40000}, Shape{3, 40000}, Shape{3}}, nullptr},
  };
  for (const Case& k : cases) {
    INFO(k.op);
    const auto r = run_op(k.op, k.shapes, k.attrs, StagingPolicy::kMethod, -2.0f, 2.0f, 5, fixed_for(k.op, 2), sw);
    INFO(r.fault);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
  }
}

TEST_CASE("pools on tiny's 16 KiB ldm keep their output tiles within the free ldm", "[kernels][2d][big]") {
  // A 9000-wide plane cuts tiles by rows; a 60x60 plane (3600 elements) fits a tile on 64 KiB but not here.
  const std::vector<Case> cases = {
      {"max_pool", {Shape{1, 2, 12, 9000}}, {{"kernel", 3}, {"stride", 1}}},
      {"max_pool", {Shape{1, 2, 12, 9000}}, {{"kernel", 2}, {"stride", 1}, {"dilation", {2, 3}}}},
      {"avg_pool", {Shape{1, 2, 12, 9000}}, {{"kernel", 3}, {"stride", 1}, {"pad", 1}}},
      {"max_pool", {Shape{1, 3, 60, 60}}, {{"kernel", 2}, {"stride", 1}}},
  };
  for (const Case& k : cases) {
    INFO(k.op << " " << k.attrs.dump());
    const auto r = run_op(k.op, k.shapes, k.attrs, StagingPolicy::kMethod, -2.0f, 2.0f, 5, {}, Arch::preset("tiny"));
    INFO(r.fault);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
  }
}

TEST_CASE("spatialbn whose [C] parameters do not fit beside the tiles gathers them per tile", "[kernels][2d]") {
  // 5000 channels of 4 parameters are 40 KiB: more than a quarter of tiny's 16 KiB ldm.
  const Shape x{2, 5000, 1, 3}, c{5000};
  const auto r = run_op("spatialbn", {x, c, c, c, c}, nullptr, StagingPolicy::kMethod, -2.0f, 2.0f, 5,
                        fixed_for("spatialbn", 5000), Arch::preset("tiny"));
  INFO(r.fault);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
}

TEST_CASE("fc at batch 1 spreads its outputs over every core of every group", "[kernels][2d]") {
  const Arch arch = test::small_arch(2);
  const auto r = run_op("fc", {Shape{1, 512}, Shape{1000, 512}, Shape{1000}}, nullptr, StagingPolicy::kMethod, -1.0f,
                        1.0f, 3, {}, arch);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  CHECK(r.cores_with_dma == arch.core_groups * arch.cores_per_group());
}

TEST_CASE("bad attributes and shapes are rejected when the op is bound", "[kernels][2d]") {
  CHECK_THROWS_WITH(bind_op("max_pool", {Shape{1, 1, 4, 4}}, {{"kernel", 0}}), Catch::Contains("kernel"));
  CHECK_THROWS_WITH(bind_op("max_pool", {Shape{1, 1, 4, 4}}, {{"size", 2}}), Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(bind_op("max_pool", {Shape{1, 1, 4, 4}}, {{"kernel", std::int64_t{1} << 62}}),
                    Catch::Contains("attrs.kernel"));
  CHECK_THROWS_WITH(bind_op("avg_pool", {Shape{1, 1, 4, 4}}, {{"kernel", 2}, {"pad", {std::int64_t{1} << 62, 0}}}),
                    Catch::Contains("attrs.pad"));
  CHECK_THROWS_WITH(bind_op("max_pool", {Shape{1, 1, 4, 4}}, {{"kernel", 9}}),
                    Catch::Contains("max_pool: kernel 9x9 is larger than the padded input 4x4"));
  CHECK_THROWS_WITH(bind_op("max_pool", {Shape{1, 1, 4, 4}}, {{"kernel", 2}, {"pad", 2}}),
                    Catch::Contains("must be smaller than the kernel"));
  CHECK_THROWS_WITH(bind_op("max_pool", {Shape{1, 1, 4, 4}}, {{"kernel", 3}, {"dilation", 2}}),
                    Catch::Contains("kernel 3x3 with dilation 2x2 (reach 5x5) is larger than the padded input 4x4"));
  CHECK_THROWS_WITH(bind_op("max_pool", {Shape{1, 1, 4, 4}}, {{"kernel", 2}, {"dilation", 0}}),
                    Catch::Contains("attrs.dilation"));
  CHECK_THROWS_WITH(bind_op("avg_pool", {Shape{1, 1, 4, 4}}, {{"kernel", 2}, {"dilation", 2}}),
                    Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(bind_op("fc", {Shape{2, 3, 1, 1}, Shape{4, 5}}), Catch::Contains("fc") && Catch::Contains("c*h*w"));
  CHECK_THROWS_WITH(bind_op("fc", {Shape{2, 3}, Shape{4, 3}, Shape{5}}), Catch::Contains("bias [5] must be [4]"));
  CHECK_THROWS_WITH(bind_op("spatialbn", {Shape{1, 3, 2, 2}, Shape{3}, Shape{3}, Shape{4}, Shape{3}}),
                    Catch::Contains("input 3 is [4], expected [3]"));
  CHECK_THROWS_WITH(bind_op("spatialbn_train", {Shape{1, 3, 2, 2}, Shape{3}, Shape{3}}, {{"epsilon", 0}}),
                    Catch::Contains("epsilon"));
  CHECK_THROWS_WITH(bind_op("softmax", {Shape{2, 3, 1, 1}}, {{"axis", 4}}), Catch::Contains("axis"));
}

TEST_CASE("pools combine each window row by row, then column by column: a sequential loop's bits", "[kernels][2d]") {
  // max keeps its running value unless a value is larger (std::max), so which of +0 and -0 survives, and that a
  // NaN never does, depend on the order, as does the rounding of avg's sums of large and small values: the
  // kernel's loops over many outputs at once must keep each output's order. Mostly negative values, so windows'
  // maxima are often a zero of either sign.
  const std::size_t H = 7, W = 9;
  std::vector<f16> x(2 * H * W);
  for (std::size_t i = 0; i < x.size(); ++i) {
    // Per 4 columns: +0, -0 (side by side in a window's row), a large and a small negative value.
    const float magnitude = static_cast<float>(1 + (i * 37) % 23) * (i % 4 == 2 ? 1000.0f : 0.001f);
    x[i] = f16(i % 17 == 0  ? std::numeric_limits<float>::quiet_NaN()
               : i % 4 == 0 ? 0.0f
               : i % 4 == 1 ? -0.0f
                            : -magnitude);
  }
  for (const char* op : {"max_pool", "avg_pool"}) {
    for (const std::size_t stride : {1U, 2U}) {
      const std::size_t k = 3, pad = 1, P = (H + 2 * pad - k) / stride + 1, Q = (W + 2 * pad - k) / stride + 1;
      INFO(op << " stride " << stride);
      const auto bound = bind_op(op, {Shape{1, 2, H, W}}, {{"kernel", k}, {"stride", stride}, {"pad", pad}});
      Machine m{test::small_arch()};
      const std::vector<DeviceTensor> in{
          stage_in(m, "x", choose_plan(bound->view(0), bound->padding(0), StagingPolicy::kMethod), x)};
      const std::vector<DeviceTensor> out{
          allocate_tensor(m, "y", choose_plan(bound->view(1), bound->padding(1), StagingPolicy::kMethod))};
      bound->run(m, in, out, op);
      const std::vector<f16> got = stage_out(m, out[0]);
      REQUIRE(got.size() == 2 * P * Q);
      std::size_t differing = 0;
      for (std::size_t c = 0; c < 2; ++c) {
        for (std::size_t p = 0; p < P; ++p) {
          for (std::size_t q = 0; q < Q; ++q) {
            const std::size_t h0 = p * stride > pad ? p * stride - pad : 0, h1 = std::min(H, p * stride + k - pad);
            const std::size_t w0 = q * stride > pad ? q * stride - pad : 0, w1 = std::min(W, q * stride + k - pad);
            const bool is_max = std::string_view(op) == "max_pool";
            float v = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
            for (std::size_t h = h0; h < h1; ++h) {
              for (std::size_t w = w0; w < w1; ++w) {
                const auto value = static_cast<float>(x[(c * H + h) * W + w]);
                v = is_max ? std::max(v, value) : v + value;
              }
            }
            if (!is_max) v /= static_cast<float>((h1 - h0) * (w1 - w0));
            differing += f16(v).bits != got[(c * P + p) * Q + q].bits;
          }
        }
      }
      CHECK(differing == 0);
    }
  }
}
