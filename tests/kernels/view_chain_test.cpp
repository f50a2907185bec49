// Chains of view steps composed into one strided copy: on random chains of slices (negative steps too), transposes
// that keep the last axis, reshapes and expands, the composed op's reference is the chain's, element for element;
// chains that are not one strided view are refused.
#include "ldmsim/kernels/view_chain.hpp"

#include <catch2/catch.hpp>
#include <random>

#include "op_harness.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

std::vector<float> counting(const Shape& s) {
  std::vector<float> v(s.elements());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);  // exact in fp32 for these sizes
  return v;
}

/// A random view step on a tensor of `s`; nullptr when the draw does not apply to `s`.
std::unique_ptr<BoundOp> random_step(const Shape& s, std::mt19937& rng) {
  const auto pick = [&](std::uint64_t n) { return n == 0 ? 0 : rng() % n; };
  const std::size_t rank = s.rank();
  switch (pick(4)) {
    case 0: {  // slice one axis, any step
      const std::size_t axis = pick(rank);
      const auto d = static_cast<std::int64_t>(s[axis]);
      const std::int64_t step = pick(2) == 0 ? 1 + static_cast<std::int64_t>(pick(2)) : -1;
      const std::int64_t start = step > 0 ? static_cast<std::int64_t>(pick(static_cast<std::uint64_t>(d))) : d - 1;
      const std::int64_t end = step > 0 ? d : -d - 1;
      return test::bind_op("slice", {s}, {{"starts", {start}}, {"ends", {end}}, {"axes", {axis}}, {"steps", {step}}});
    }
    case 1: {  // transpose of the leading axes, the last kept last
      std::vector<std::size_t> perm(rank);
      for (std::size_t d = 0; d < rank; ++d) perm[d] = d;
      if (rank > 1) std::shuffle(perm.begin(), perm.end() - 1, rng);
      return test::bind_op("transpose", {s}, {{"perm", perm}});
    }
    case 2: {  // reshape: merge two neighbours or split one axis by a divisor
      std::vector<std::uint64_t> dims(s.dims().begin(), s.dims().end());
      const std::size_t a = pick(rank);
      if (pick(2) == 0 && a + 1 < rank) {
        dims[a] *= dims[a + 1];
        dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(a) + 1);
      } else {
        std::uint64_t f = 1;
        for (std::uint64_t c = 2; c < dims[a]; ++c) {
          if (dims[a] % c == 0) f = c;
        }
        if (f == 1 || rank >= Shape::kMaxRank) return nullptr;
        dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(a), f);
        dims[a + 1] /= f;
      }
      return test::bind_op("reshape", {s}, {{"shape", dims}});
    }
    default: {  // expand: a new leading axis, or a size-1 axis repeated
      std::vector<std::uint64_t> dims(s.dims().begin(), s.dims().end());
      if (rank < Shape::kMaxRank && pick(2) == 0) {
        dims.insert(dims.begin(), 2);
      } else {
        const std::size_t a = pick(rank);
        if (dims[a] != 1) return nullptr;
        dims[a] = 3;
      }
      return test::bind_op("expand", {s}, {{"shape", dims}});
    }
  }
}

}  // namespace

TEST_CASE("a composed view chain gives the chain's elements", "[kernels][view_chain]") {
  std::mt19937 rng(11);
  std::size_t composed = 0, refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<std::uint64_t> dims;
    const std::size_t rank = 1 + rng() % 4;
    for (std::size_t d = 0; d < rank; ++d) dims.push_back(1 + rng() % 6);
    const Shape x(dims);
    std::vector<std::unique_ptr<BoundOp>> chain;
    Shape s = x;
    const std::size_t length = 1 + rng() % 5;
    while (chain.size() < length) {
      auto step = random_step(s, rng);
      // A transpose whose last axis has size 1 moves the last axis that has more: a swap, not a view step.
      if (!step || !is_view_step(*step)) continue;
      s = step->output_shapes()[0];
      chain.push_back(std::move(step));
    }
    std::vector<const BoundOp*> bound;
    for (const auto& op : chain) bound.push_back(op.get());
    const std::unique_ptr<BoundOp> one = compose_view_chain(bound);
    if (!one) {
      ++refused;
      continue;
    }
    ++composed;
    CAPTURE(trial, x.str(), s.str());
    std::vector<HostTensor> data{HostTensor{x, counting(x)}};
    for (const auto& op : chain) data = op->reference(data);
    const std::vector<HostTensor> direct = one->reference(std::vector<HostTensor>{HostTensor{x, counting(x)}});
    CHECK(one->output_shapes()[0] == s);
    CHECK(direct[0].data == data[0].data);
  }
  // Most chains compose; a reshape that merges axes a slice or transpose separated does not.
  CHECK(composed > 300);
  CHECK(refused > 0);
}

TEST_CASE("view chains refuse what is not one strided view", "[kernels][view_chain]") {
  // [4, 6] transposed to [6, 4] moves the last axis: a swap, not a view step.
  const auto swap = test::bind_op("transpose", {Shape{4, 6}}, {{"perm", {1, 0}}});
  CHECK_FALSE(is_view_step(*swap));
  // Columns 1..3 of [4, 6] merged into one axis of 12: the rows are no longer contiguous with each other.
  const auto slice = test::bind_op("slice", {Shape{4, 6}}, {{"starts", {1}}, {"ends", {4}}, {"axes", {1}}});
  const auto merge = test::bind_op("reshape", {Shape{4, 3}}, {{"shape", {12}}});
  const std::vector<const BoundOp*> chain{slice.get(), merge.get()};
  CHECK(compose_view_chain(chain) == nullptr);
  // Split into [2, 2, 3] it is one view (the rows' stride kept).
  const auto split = test::bind_op("reshape", {Shape{4, 3}}, {{"shape", {2, 2, 3}}});
  const std::vector<const BoundOp*> fine{slice.get(), split.get()};
  const auto one = compose_view_chain(fine);
  REQUIRE(one != nullptr);
  CHECK(one->reference(std::vector<HostTensor>{HostTensor{Shape{4, 6}, counting(Shape{4, 6})}})[0].data ==
        std::vector<float>{1, 2, 3, 7, 8, 9, 13, 14, 15, 19, 20, 21});
  CHECK(is_reinterpretation(*merge));
  CHECK_FALSE(is_reinterpretation(*slice));
}

TEST_CASE("a composed view chain copies on every core as its reference says", "[kernels][view_chain]") {
  // A transformer's q split: [6, 1, 96] -> columns 32..63 -> [6, 4, 8] -> heads first [4, 6, 8].
  const auto slice = test::bind_op("slice", {Shape{6, 1, 96}}, {{"starts", {32}}, {"ends", {64}}, {"axes", {2}}});
  const auto heads = test::bind_op("reshape", {Shape{6, 1, 32}}, {{"shape", {6, 4, 8}}});
  const auto order = test::bind_op("transpose", {Shape{6, 4, 8}}, {{"perm", {1, 0, 2}}});
  const std::vector<const BoundOp*> chain{slice.get(), heads.get(), order.get()};
  const std::shared_ptr<BoundOp> one = compose_view_chain(chain);
  REQUIRE(one != nullptr);
  for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    Machine m{test::small_arch()};
    const Shape x{6, 1, 96};
    std::vector<f16> h(x.elements());
    std::vector<float> values = counting(x);
    floats_to_halves(values, h);
    const DeviceTensor in = stage_in(m, "x", choose_plan(one->view(0), one->padding(0), p), h);
    const DeviceTensor out = allocate_tensor(m, "y", choose_plan(one->view(1), one->padding(1), p));
    one->run(m, std::vector<DeviceTensor>{in}, std::vector<DeviceTensor>{out}, "view");
    const std::vector<f16> got = stage_out(m, out);
    const auto want = one->reference(std::vector<HostTensor>{HostTensor{x, values}})[0].data;
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i, to_string(p));
      CHECK(static_cast<float>(got[i]) == want[i]);
    }
  }
}

TEST_CASE("a chain ending in a swap reads the swapped matrices in place", "[kernels][view_chain]") {
  // A transformer's k split: [6, 1, 96] -> columns 32..63 -> [6, 4, 8] -> Kt [4, 8, 6] (the last axis moves).
  const Shape x{6, 1, 96};
  const auto slice = test::bind_op("slice", {x}, {{"starts", {32}}, {"ends", {64}}, {"axes", {2}}});
  const auto heads = test::bind_op("reshape", {Shape{6, 1, 32}}, {{"shape", {6, 4, 8}}});
  const auto kt = test::bind_op("transpose", {Shape{6, 4, 8}}, {{"perm", {1, 2, 0}}});
  CHECK(is_swap_step(*kt));
  CHECK_FALSE(is_view_step(*kt));
  const std::vector<const BoundOp*> chain{slice.get(), heads.get(), kt.get()};
  const std::shared_ptr<BoundOp> one = compose_view_chain(chain);
  REQUIRE(one != nullptr);
  std::vector<HostTensor> data{HostTensor{x, counting(x)}};
  for (const BoundOp* op : chain) data = op->reference(data);
  const std::vector<float> want = one->reference(std::vector<HostTensor>{HostTensor{x, counting(x)}})[0].data;
  CHECK(want == data[0].data);
  for (StagingPolicy p : {StagingPolicy::kMethod, StagingPolicy::kNaive}) {
    CAPTURE(to_string(p));
    Machine m{test::small_arch()};
    std::vector<f16> h(x.elements());
    floats_to_halves(counting(x), h);
    const DeviceTensor in = stage_in(m, "x", choose_plan(one->view(0), one->padding(0), p), h);
    const DeviceTensor out = allocate_tensor(m, "y", choose_plan(one->view(1), one->padding(1), p));
    one->run(m, std::vector<DeviceTensor>{in}, std::vector<DeviceTensor>{out}, "view");
    const std::vector<f16> got = stage_out(m, out);
    REQUIRE(got.size() == want.size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) wrong += static_cast<float>(got[i]) == want[i] ? 0U : 1U;
    CHECK(wrong == 0);
  }
  // Columns read backwards are not runs of the input: no composition.
  const auto reversed = test::bind_op("slice", {x}, {{"starts", {63}}, {"ends", {31}}, {"axes", {2}}, {"steps", {-1}}});
  const std::vector<const BoundOp*> backwards{reversed.get(), heads.get(), kt.get()};
  CHECK(compose_view_chain(backwards) == nullptr);
}
