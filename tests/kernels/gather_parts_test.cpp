// gather_parts: the split executor's exchange kernel. Parts of source tensors (boxes, in padded layouts, in any
// group's memory) laid one after another along an axis give exactly the host's result; bad parts are refused.
#include "ldmsim/kernels/gather_parts.hpp"

#include <catch2/catch.hpp>
#include <numeric>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

/// Values 0, 1, 2, ... (exact in fp16 below 2048) in C order.
std::vector<f16> iota(const Shape& s, float from) {
  std::vector<f16> v(s.elements());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = f16(from + static_cast<float>(i % 2000));
  return v;
}

std::vector<std::size_t> strides(const Shape& s) {
  std::vector<std::size_t> out(s.rank(), 1);
  for (std::size_t d = s.rank() - 1; d-- > 0;) out[d] = out[d + 1] * s[d + 1];
  return out;
}

/// The host's gather: element idx of the output comes from part p at begin + (idx with the axis shifted).
std::vector<f16> expected(const Shape& out, std::size_t axis, const std::vector<GatherPart>& parts,
                          const std::vector<std::vector<f16>>& values) {
  std::vector<f16> y(out.elements());
  const auto so = strides(out);
  for (std::size_t l = 0; l < y.size(); ++l) {
    std::vector<std::uint64_t> idx(out.rank());
    for (std::size_t d = 0; d < out.rank(); ++d) idx[d] = (l / so[d]) % out[d];
    std::size_t p = 0;
    std::uint64_t start = 0;
    while (idx[axis] >= start + parts[p].length) start += parts[p++].length;
    const auto ss = strides(parts[p].shape);
    std::size_t src = 0;
    for (std::size_t d = 0; d < out.rank(); ++d)
      src += (parts[p].begin[d] + (d == axis ? idx[d] - start : idx[d])) * ss[d];
    y[l] = values[p][src];
  }
  return y;
}

}  // namespace

TEST_CASE("gather_parts lays boxes of padded tensors in several memories along an axis", "[kernels][gather]") {
  Arch arch = Arch::preset("sw26010");
  Machine m(arch);
  // Pieces of a [2, 5, 9, 7] tensor along h (rows 0-3 in group 1, 4-8 in group 2), in naive (padded) layouts.
  const Shape a{2, 5, 4, 7}, b{2, 5, 5, 7};
  const std::vector<std::vector<f16>> values{iota(a, 0), iota(b, 500)};
  const DeviceTensor ta = stage_in(*m.group_view({1}), "a", plan_naive(Shape4::view_of(a)), values[0]);
  const DeviceTensor tb = stage_in(*m.group_view({2}), "b", plan_naive(Shape4::view_of(b)), values[1]);
  struct Case {
    Shape out;
    std::size_t axis;
    std::vector<GatherPart> parts;
  };
  const std::vector<Case> cases{
      // The whole tensor from both pieces.
      {Shape{2, 5, 9, 7}, 2, {{ta, a, {0, 0, 0, 0}, 4}, {tb, b, {0, 0, 0, 0}, 5}}},
      // Rows 2..6 (a halo window across the boundary).
      {Shape{2, 5, 5, 7}, 2, {{ta, a, {0, 0, 2, 0}, 2}, {tb, b, {0, 0, 0, 0}, 3}}},
      // Channels 1..3 of every row: boxes restricted along another axis.
      {Shape{2, 3, 9, 7}, 2, {{ta, a, {0, 1, 0, 0}, 4}, {tb, b, {0, 1, 0, 0}, 5}}},
      // One column of one piece: runs of a single element.
      {Shape{2, 5, 4, 1}, 3, {{ta, a, {0, 0, 0, 6}, 1}}},
      // A slice of samples.
      {Shape{1, 5, 5, 7}, 0, {{tb, b, {1, 0, 0, 0}, 1}}},
  };
  for (const Case& c : cases) {
    INFO(c.out.str() << " along " << c.axis);
    const DeviceTensor out = allocate_tensor(*m.group_view({0}), "out", plan_naive(Shape4::view_of(c.out)));
    gather_parts(*m.group_view({0}), c.out, c.axis, c.parts, out, "gather");
    std::vector<std::vector<f16>> sources;
    for (const GatherPart& p : c.parts) sources.push_back(p.source.name == "a" ? values[0] : values[1]);
    CHECK(stage_out(m, out) == expected(c.out, c.axis, c.parts, sources));
  }
  CHECK(m.stats().groups[0].dma_remote_bytes() > 0);  // group 0 read groups 1 and 2's memories
  CHECK(m.stats().groups[1].dma_bytes() == 0);
}

TEST_CASE("gather_parts refuses parts that do not fit", "[kernels][gather]") {
  Machine m(Arch::preset("tiny"));
  const Shape a{4, 6};
  const DeviceTensor ta = stage_in(m, "a", plan_naive(Shape4::view_of(a)), iota(a, 0));
  const DeviceTensor out = allocate_tensor(m, "out", plan_naive(Shape4::view_of(Shape{4, 3})));
  // Too few indices along the axis, a box past the source, a part of another rank, an axis past the rank.
  const std::vector<GatherPart> short_parts{{ta, a, {0, 0}, 2}};
  CHECK_THROWS_AS(gather_parts(m, Shape{4, 3}, 1, short_parts, out, "g"), ConfigError);
  const std::vector<GatherPart> past{{ta, a, {1, 4}, 3}};
  CHECK_THROWS_AS(gather_parts(m, Shape{4, 3}, 1, past, out, "g"), ConfigError);
  const std::vector<GatherPart> rank{{ta, Shape{24}, {0}, 3}};
  CHECK_THROWS_AS(gather_parts(m, Shape{4, 3}, 1, rank, out, "g"), ConfigError);
  const std::vector<GatherPart> fine{{ta, a, {0, 3}, 3}};
  CHECK_THROWS_AS(gather_parts(m, Shape{4, 3}, 2, fine, out, "g"), ConfigError);
  CHECK_NOTHROW(gather_parts(m, Shape{4, 3}, 1, fine, out, "g"));
}

TEST_CASE("gather_parts gathers halo rows channel after channel on either preset", "[kernels][gather]") {
  // A halo: the last row of each of 64 channels of a [1, 64, 4, 14] piece in group 1's memory, 28 bytes a channel
  // (read_runs decides how they are requested: tests/kernels/matrix_block_test.cpp).
  const Shape a{1, 64, 4, 14}, halo{1, 64, 1, 14};
  const std::vector<std::vector<f16>> values{iota(a, 0)};
  const std::vector<std::uint64_t> last_row{0, 0, 3, 0};
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    INFO(preset);
    Machine m(Arch::preset(preset));
    const DeviceTensor ta = stage_in(*m.group_view({1}), "a", plan_naive(Shape4::view_of(a)), values[0]);
    const DeviceTensor out = allocate_tensor(*m.group_view({0}), "out", plan_naive(Shape4::view_of(halo)));
    const std::vector<GatherPart> parts{{ta, a, last_row, 1}};
    gather_parts(*m.group_view({0}), halo, 2, parts, out, "halo");
    CHECK(stage_out(m, out) == expected(halo, 2, parts, values));
    CHECK(m.stats().groups[0].dma_remote_bytes() > 0);
  }
}
