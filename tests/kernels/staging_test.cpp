// Staging: padding puts logical elements at the planned offsets with zeros elsewhere; stripping inverts it.
#include "ldmsim/kernels/staging.hpp"

#include <catch2/catch.hpp>

using namespace ldmsim;

TEST_CASE("pad and strip invert each other for every plan kind", "[staging]") {
  const Shape4 s{3, 5, 7, 9};
  std::vector<f16> logical(s.elements());
  for (std::size_t i = 0; i < logical.size(); ++i) logical[i] = f16(static_cast<float>(i % 1000) + 1.0f);
  for (const PaddingPlan& p :
       {plan_one_d(s), plan_row(s, Unit::kSample), plan_column(s, Unit::kSample), plan_column(s, Unit::kPlane),
        plan_column(s, Unit::kRow), plan_three_d(s), plan_naive(s)}) {
    INFO(p.describe());
    const auto padded = pad(p.layout, logical);
    REQUIRE(padded.size() == p.layout.total);
    std::size_t zeros = 0;
    for (const f16 v : padded) zeros += v.bits == 0 ? 1 : 0;
    CHECK(zeros == p.added_elements());
    CHECK(padded[p.layout.offset(2, 4, 6, 8)] == logical.back());
    CHECK(padded[p.layout.offset(1, 2, 3, 4)] == logical[((1 * 5 + 2) * 7 + 3) * 9 + 4]);
    CHECK(strip(p.layout, padded) == logical);
  }
}

TEST_CASE("stage_in and stage_out move padded tensors through device memory", "[staging]") {
  Machine m{Arch::preset("tiny")};
  const Shape4 s{1, 3, 3, 5};
  std::vector<f16> logical(s.elements(), f16(2.0f));
  StagingStats stats;
  const auto plan = plan_column(s, Unit::kRow);
  const DeviceTensor t = stage_in(m, "x", plan, logical, &stats);
  CHECK(stats.bytes_added == 18);
  CHECK(stats.bytes_staged == 108);
  CHECK(stage_out(m, t, &stats) == logical);
  CHECK(t.ptr.addr() % 4 == 0);
}

TEST_CASE("stage_in lends shared values to an unpadded tensor and copies a padded one", "[staging]") {
  Machine m{Arch::preset("tiny")};
  const Shape4 s{1, 3, 3, 5};
  std::vector<f16> logical(s.elements());
  for (std::size_t i = 0; i < logical.size(); ++i) logical[i] = f16(static_cast<float>(i));
  const SharedHalves shared(logical);
  StagingStats stats;
  const DeviceTensor natural = stage_in(m, "lent", plan_unpadded(s, PaddingSpec{}), shared, &stats);
  CHECK(m.memory().lent_regions() == 1);
  CHECK(stats.bytes_staged == logical.size() * sizeof(f16));
  CHECK(stage_out(m, natural) == logical);
  const DeviceTensor padded = stage_in(m, "copied", plan_column(s, Unit::kRow), shared, &stats);
  CHECK(m.memory().lent_regions() == 1);  // padding needs a copy
  CHECK(stage_out(m, padded) == logical);
  m.upload(natural.ptr, std::vector<f16>(logical.size(), f16(7.0f)));  // a write takes the region's own copy
  CHECK(m.memory().lent_regions() == 0);
  CHECK(stage_out(m, natural) == std::vector<f16>(logical.size(), f16(7.0f)));
  CHECK(shared.span()[5] == f16(5.0f));  // the lent values never change
}
