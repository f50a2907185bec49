// TileMemo, the host's reuse of built B tiles: a tile is found only for a key equal in every integer, the newest
// eight tiles are kept, and source ids are never reused; PlanMemo keeps 32 layouts; PerArch, which keeps a machine's
// planning per arch, makes one value per arch from its own copy of it and drops the oldest past its bound.
#include "../../kernels/src/ops/tile_memo.hpp"  // white box: the memo behind conv's tile builds

#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "../../kernels/src/ops/per_arch.hpp"
#include "../../kernels/src/ops/tile_math.hpp"

using ldmsim::ops::TileMemo;

namespace {

void build(TileMemo& memo, std::uint64_t tile) {
  ldmsim::ops::ProductQueue products;
  memo.scratch_key() = {7, tile, 0, 64};
  ldmsim::ops::TileFloats& out = memo.insert(products, 4);
  out.assign(4, static_cast<float>(tile));
}

}  // namespace

TEST_CASE("TileMemo finds a tile only for a key equal in every integer") {
  TileMemo memo;
  build(memo, 1);
  memo.scratch_key() = {7, 1, 0, 64};
  const ldmsim::ops::TileFloats* found = memo.find();
  REQUIRE(found != nullptr);
  CHECK((*found)[0] == 1.0f);

  memo.scratch_key() = {7, 1, 0, 32};  // one coordinate differs
  CHECK(memo.find() == nullptr);
  memo.scratch_key() = {8, 1, 0, 64};  // another source
  CHECK(memo.find() == nullptr);
  memo.scratch_key() = {7, 1, 0, 64, 0};  // one more integer
  CHECK(memo.find() == nullptr);
  memo.scratch_key() = {7, 1, 0};  // one fewer
  CHECK(memo.find() == nullptr);
  CHECK(memo.scratch_key().empty());  // a scratch key comes cleared
}

TEST_CASE("TileMemo keeps the newest eight tiles") {
  TileMemo memo;
  for (std::uint64_t tile = 1; tile <= 9; ++tile) build(memo, tile);
  memo.scratch_key() = {7, 1, 0, 64};
  CHECK(memo.find() == nullptr);  // the oldest was replaced by the ninth
  for (std::uint64_t tile = 2; tile <= 9; ++tile) {
    memo.scratch_key() = {7, tile, 0, 64};
    const ldmsim::ops::TileFloats* found = memo.find();
    REQUIRE(found != nullptr);
    CHECK((*found)[0] == static_cast<float>(tile));
  }
  CHECK(TileMemo::next_source_id() != TileMemo::next_source_id());
}

TEST_CASE("PlanMemo keeps the newest 32 layouts") {
  ldmsim::ops::PlanMemo memo;
  for (std::uint64_t tile = 1; tile <= 33; ++tile) {
    memo.scratch_key() = {tile};
    memo.insert() = {tile, tile + 1};
  }
  memo.scratch_key() = {1};
  CHECK(memo.find() == nullptr);
  memo.scratch_key() = {2};
  const std::vector<std::size_t>* found = memo.find();
  REQUIRE(found != nullptr);
  CHECK(*found == std::vector<std::size_t>{2, 3});
}

TEST_CASE("PerArch keeps one value per arch, made from its own copy, and drops the oldest past its bound") {
  struct Made {
    explicit Made(const ldmsim::Arch& from) : arch(&from), groups(from.core_groups) {}
    const ldmsim::Arch* arch;
    unsigned groups;
  };
  ldmsim::ops::PerArch<Made, 2> per_arch;
  ldmsim::Arch pro = ldmsim::Arch::preset("sw26010pro");
  Made& first = per_arch.of(pro);
  CHECK(first.arch != &pro);  // its own copy, which outlives the caller's
  CHECK(*first.arch == pro);
  CHECK(&per_arch.of(ldmsim::Arch::preset("sw26010pro")) == &first);  // an equal arch
  ldmsim::Arch one_group = pro;
  one_group.core_groups = 1;
  Made& second = per_arch.of(one_group);
  CHECK(&second != &first);
  CHECK(second.groups == 1);
  CHECK(&per_arch.of(pro) == &first);            // both kept
  per_arch.of(ldmsim::Arch::preset("sw26010"));  // a third: the oldest (pro's) is dropped
  CHECK(&per_arch.of(one_group) == &second);
  CHECK(per_arch.of(pro).groups == pro.core_groups);  // made again
}

TEST_CASE("a queued product that reads a memo's tile runs before the memo overwrites that tile") {
  // Products of a group team's members wait in the host thread's queue and read B where the memo keeps it; an
  // insert that reuses the slot (another team's tile, another kernel's on the same thread) must not change it first.
  const std::size_t depth = 4, cols = 8, pitch = ldmsim::ops::b_pitch_for(cols);
  TileMemo memo;
  ldmsim::ops::ProductQueue products;
  const auto insert = [&](std::uint64_t tile, float value) {
    memo.scratch_key() = {9, tile};
    ldmsim::ops::TileFloats& out = memo.insert(products, depth * pitch);
    out.assign(depth * pitch, 0.0f);
    for (std::size_t t = 0; t < depth; ++t) std::fill_n(out.begin() + static_cast<long>(t * pitch), cols, value);
    return out.data();
  };
  const float* oldest = insert(1, 2.0f);
  const std::vector<float> a(depth, 1.0f);
  std::vector<float> acc(cols, 0.0f), other_acc(cols, 0.0f);
  products.add(a.data(), oldest, acc.data(), 1, cols, depth, cols, pitch);
  const float* second = insert(2, 3.0f);  // reuses another slot: the queue waits
  products.add(a.data(), second, other_acc.data(), 1, cols, depth, cols, pitch);
  for (std::uint64_t tile = 3; tile <= 8; ++tile) insert(tile, 5.0f);
  CHECK_FALSE(products.empty());
  insert(9, 7.0f);  // the ninth overwrites tile 1's slot: its product runs first, on tile 1's values
  CHECK(products.empty());
  CHECK(acc == std::vector<float>(cols, 8.0f));         // 4 products of 1 x 2
  CHECK(other_acc == std::vector<float>(cols, 12.0f));  // the whole queue ran: 4 x 3
}
