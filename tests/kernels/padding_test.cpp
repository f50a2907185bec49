// The padding planner: hand-computed plans of the method for each class, the naive baseline, and the
// method never adding more bytes than naive.
#include "ldmsim/kernels/padding.hpp"

#include <catch2/catch.hpp>

#include "ldmsim/sim/fault.hpp"

using namespace ldmsim;

namespace {
const PaddingSpec k1d{PaddingClass::kOneD};
const PaddingSpec kFc{PaddingClass::kTwoD, Unit::kSample, Unit::kSample};
const PaddingSpec kBn{PaddingClass::kTwoD, Unit::kPlane, Unit::kPlane};
const PaddingSpec kPool{PaddingClass::kTwoD, Unit::kPlane, Unit::kRow};
const PaddingSpec k3d{PaddingClass::kThreeD};
const Shape4 kPrime{3, 5, 7, 9};  // 945 elements, chw 315, hw 63
}  // namespace

TEST_CASE("1-D plan appends one zero when n*c*h*w is odd", "[padding]") {
  auto p = choose_plan(kPrime, k1d, StagingPolicy::kMethod);
  CHECK(p.kind == PlanKind::kOneD);
  CHECK(p.layout.total == 946);
  CHECK(p.added_bytes() == 2);
  CHECK(choose_plan(Shape4{1, 1, 1, 1}, k1d, StagingPolicy::kMethod).layout.total == 2);
  CHECK(choose_plan(Shape4{2, 3, 5, 7}, k1d, StagingPolicy::kMethod).kind == PlanKind::kNone);
}

TEST_CASE("2-D fc/softmax plans: a zero row of c*h*w or a zero after every c*h*w", "[padding]") {
  const auto row = plan_row(kPrime, Unit::kSample);
  CHECK(row.layout.total == 4 * 315);
  CHECK(row.added_elements() == 315);
  const auto col = plan_column(kPrime, Unit::kSample);
  CHECK(col.layout.chw_pitch == 316);
  CHECK(col.layout.hw_pitch == 63);
  CHECK(col.layout.total == 948);
  const auto chosen = choose_plan(kPrime, kFc, StagingPolicy::kMethod);
  CHECK(chosen.kind == PlanKind::kColumn);
  CHECK(chosen.added_bytes() == 6);
  // Many samples of one odd element: the zero row is cheaper.
  const auto tall = choose_plan(Shape4::from_dims({33, 1}), kFc, StagingPolicy::kMethod);
  CHECK(tall.kind == PlanKind::kRow);
  CHECK(tall.layout.total == 34);
  // An even number of odd rows moves in aligned pairs: nothing to add.
  CHECK(choose_plan(Shape4{2, 3, 5, 7}, kFc, StagingPolicy::kMethod).kind == PlanKind::kNone);
}

TEST_CASE("2-D spatialbn plans: a zero plane or a zero after every h*w", "[padding]") {
  const auto p = choose_plan(kPrime, kBn, StagingPolicy::kMethod);
  CHECK(p.kind == PlanKind::kColumn);
  CHECK(p.layout.hw_pitch == 64);
  CHECK(p.layout.chw_pitch == 320);
  CHECK(p.layout.total == 960);
  CHECK(plan_row(kPrime, Unit::kPlane).added_elements() == 63);
  const auto q = choose_plan(Shape4{5, 7, 1, 1}, kBn, StagingPolicy::kMethod);
  CHECK(q.kind == PlanKind::kRow);
  CHECK(q.layout.total == 36);
}

TEST_CASE("2-D pool plans: a zero plane or a zero after every w", "[padding]") {
  const auto col = plan_column(kPrime, Unit::kRow);
  CHECK(col.layout.w_pitch == 10);
  CHECK(col.layout.hw_pitch == 70);
  CHECK(col.layout.chw_pitch == 350);
  CHECK(col.layout.total == 1050);
  CHECK(choose_plan(kPrime, kPool, StagingPolicy::kMethod).kind == PlanKind::kRow);  // +63 < +105
  const auto small = choose_plan(Shape4{1, 3, 3, 5}, kPool, StagingPolicy::kMethod);
  CHECK(small.kind == PlanKind::kColumn);  // +9 (w 5 -> 6) < +15 (a zero plane)
  CHECK(small.layout.total == 54);
  CHECK(choose_plan(Shape4{1, 2, 7, 9}, kPool, StagingPolicy::kMethod).kind == PlanKind::kNone);
}

TEST_CASE("3-D spatialbn training plan: h*w and c both even", "[padding]") {
  const auto p = plan_three_d(kPrime);
  CHECK(p.layout.hw_pitch == 64);
  CHECK(p.layout.chw_pitch == 6 * 64);
  CHECK(p.layout.total == 3 * 384);
  CHECK(p.added_elements() == 1152 - 945);
  // The h*w column alone is legal for the per-plane kernel and cheaper, so it is chosen.
  const auto chosen = choose_plan(kPrime, k3d, StagingPolicy::kMethod);
  CHECK(chosen.kind == PlanKind::kColumn);
  CHECK(chosen.added_elements() == 15);
  CHECK(choose_plan(Shape4{2, 3, 4, 4}, k3d, StagingPolicy::kMethod).kind == PlanKind::kNone);
}

TEST_CASE("naive pads every dimension of the tensor's rank to even", "[padding]") {
  const auto p = plan_naive(kPrime);
  CHECK(p.layout.w_pitch == 10);
  CHECK(p.layout.hw_pitch == 80);
  CHECK(p.layout.chw_pitch == 480);
  CHECK(p.layout.total == 1920);
  CHECK(plan_naive(Shape4::from_dims({3, 5})).layout.total == 24);
  CHECK(plan_naive(Shape4{1, 1, 1, 1}).layout.total == 16);
}

TEST_CASE("none keeps the natural layout and says when it is illegal", "[padding]") {
  CHECK(choose_plan(kPrime, k1d, StagingPolicy::kNone).kind == PlanKind::kUnpadded);
  CHECK(choose_plan(Shape4{2, 3, 5, 7}, kFc, StagingPolicy::kNone).kind == PlanKind::kNone);
  CHECK(choose_plan(kPrime, k1d, StagingPolicy::kNone).layout.total == 945);
}

TEST_CASE("the method adds strictly fewer bytes than naive whenever naive pads", "[padding]") {
  for (const PaddingSpec& spec : {k1d, kFc, kBn, kPool, k3d}) {
    for (std::size_t n : {1u, 2u, 3u}) {
      for (std::size_t c : {1u, 2u, 3u, 5u}) {
        for (std::size_t h : {1u, 2u, 7u}) {
          for (std::size_t w : {1u, 4u, 9u}) {
            const Shape4 s{n, c, h, w};
            const auto m = choose_plan(s, spec, StagingPolicy::kMethod);
            const auto nv = choose_plan(s, spec, StagingPolicy::kNaive);
            INFO(s.str());
            CHECK(m.layout.total >= s.elements());
            if (nv.added_elements() > 0) CHECK(m.added_elements() < nv.added_elements());
          }
        }
      }
    }
  }
}

TEST_CASE("policies and shapes parse with named errors", "[padding]") {
  CHECK(parse_staging_policy("naive") == StagingPolicy::kNaive);
  CHECK_THROWS_WITH(parse_staging_policy("fast"), Catch::Contains("method, naive or none"));
  CHECK_THROWS_AS(Shape4::from_dims({1, 2, 3, 4, 5}), ConfigError);
  CHECK(Shape4::from_dims({7}).rank == 1);
}
