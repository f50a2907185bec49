// TileMemo, the host's reuse of built B tiles: a tile is found only for a key equal in every integer, the newest
// eight tiles are kept, and source ids are never reused; PlanMemo keeps 32 layouts; PerArch, which keeps a machine's
// planning per arch, makes one value per arch from its own copy of it and drops the oldest past its bound.
#include "../../kernels/src/ops/tile_memo.hpp"  // white box: the memo behind conv's tile builds

#include <catch2/catch.hpp>
#include <vector>

#include "../../kernels/src/ops/per_arch.hpp"

using ldmsim::ops::TileMemo;

namespace {

void build(TileMemo& memo, std::uint64_t tile) {
  memo.scratch_key() = {7, tile, 0, 64};
  std::vector<float>& out = memo.insert(4);
  out.assign(4, static_cast<float>(tile));
}

}  // namespace

TEST_CASE("TileMemo finds a tile only for a key equal in every integer") {
  TileMemo memo;
  build(memo, 1);
  memo.scratch_key() = {7, 1, 0, 64};
  const std::vector<float>* found = memo.find();
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
    const std::vector<float>* found = memo.find();
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
