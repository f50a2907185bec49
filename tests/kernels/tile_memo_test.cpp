// TileMemo, the host's reuse of built B tiles: a tile is found only for a key equal in every header integer and
// every ldm value, the newest eight tiles are kept, and source ids are never reused; PlanMemo keeps 32 layouts;
// thread_cache hands an exited thread's instance to the next thread and never one instance to two live threads.
#include "../../kernels/src/ops/tile_memo.hpp"  // white box: the memo behind conv's tile builds

#include <catch2/catch.hpp>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "../../kernels/src/ops/thread_cache.hpp"

using ldmsim::f16;
using ldmsim::ops::TileKey;
using ldmsim::ops::TileMemo;

namespace {

void fill_key(TileKey& key, std::uint64_t tile, float value) {
  key.header = {7, tile, 0, 64};
  key.values = {f16(1.0f), f16(value), f16(-2.0f)};
}

void build(TileMemo& memo, std::uint64_t tile, float value) {
  fill_key(memo.scratch_key(), tile, value);
  std::vector<float>& out = memo.insert(4);
  out.assign(4, static_cast<float>(tile));
}

}  // namespace

TEST_CASE("TileMemo finds a tile only for equal headers and equal ldm values") {
  TileMemo memo;
  build(memo, 1, 0.5f);
  fill_key(memo.scratch_key(), 1, 0.5f);
  const std::vector<float>* found = memo.find();
  REQUIRE(found != nullptr);
  CHECK((*found)[0] == 1.0f);

  fill_key(memo.scratch_key(), 1, 0.25f);  // one ldm value differs
  CHECK(memo.find() == nullptr);
  fill_key(memo.scratch_key(), 2, 0.5f);  // another tile
  CHECK(memo.find() == nullptr);
  TileKey& longer = memo.scratch_key();
  fill_key(longer, 1, 0.5f);
  longer.values.push_back(f16(0.0f));  // one more value
  CHECK(memo.find() == nullptr);
}

TEST_CASE("TileMemo keeps the newest eight tiles") {
  TileMemo memo;
  for (std::uint64_t tile = 1; tile <= 9; ++tile) build(memo, tile, 0.5f);
  fill_key(memo.scratch_key(), 1, 0.5f);
  CHECK(memo.find() == nullptr);  // the oldest was replaced by the ninth
  for (std::uint64_t tile = 2; tile <= 9; ++tile) {
    fill_key(memo.scratch_key(), tile, 0.5f);
    const std::vector<float>* found = memo.find();
    REQUIRE(found != nullptr);
    CHECK((*found)[0] == static_cast<float>(tile));
  }
  CHECK(TileMemo::next_source_id() != TileMemo::next_source_id());
}

TEST_CASE("TileMemo compares values added by reference where they are, and stores copies of them") {
  TileMemo memo;
  std::vector<f16> ldm{f16(1.0f), f16(2.0f), f16(3.0f), f16(4.0f)};
  TileKey& first = memo.scratch_key();
  first.header = {3};
  first.add_values(ldm.data(), 3);  // stored as two runs of 3 and 1
  first.add_values(ldm.data() + 3, 1);
  memo.insert(1)[0] = 42.0f;
  ldm[1] = f16(-2.0f);  // the stored key kept copies: it no longer matches the changed ldm
  TileKey& changed = memo.scratch_key();
  changed.header = {3};
  changed.add_values(ldm.data(), 4);
  CHECK(memo.find() == nullptr);
  ldm[1] = f16(2.0f);  // equal again, cut into other runs
  TileKey& again = memo.scratch_key();
  again.header = {3};
  again.add_values(ldm.data(), 1);
  again.add_values(ldm.data() + 1, 3);
  const std::vector<float>* found = memo.find();
  REQUIRE(found != nullptr);
  CHECK((*found)[0] == 42.0f);
  TileKey& shorter = memo.scratch_key();
  shorter.header = {3};
  shorter.add_values(ldm.data(), 3);
  CHECK(memo.find() == nullptr);

  TileKey a, b;  // two keys by reference compare by their values
  a.header = b.header = {1};
  a.add_values(ldm.data(), 4);
  b.add_values(ldm.data(), 2);
  b.add_values(ldm.data() + 2, 2);
  CHECK(a == b);
  std::vector<f16> other = ldm;
  other[3] = f16(0.0f);
  b.runs.back().first = other.data() + 2;
  CHECK_FALSE(a == b);
}

TEST_CASE("PlanMemo keeps the newest 32 layouts") {
  ldmsim::ops::PlanMemo memo;
  for (std::uint64_t tile = 1; tile <= 33; ++tile) {
    memo.scratch_key().header = {tile};
    memo.insert() = {tile, tile + 1};
  }
  memo.scratch_key().header = {1};
  CHECK(memo.find() == nullptr);
  memo.scratch_key().header = {2};
  const std::vector<std::size_t>* found = memo.find();
  REQUIRE(found != nullptr);
  CHECK(*found == std::vector<std::size_t>{2, 3});
}

TEST_CASE("a thread cache passes from an exited thread to the next, and is never shared by two live threads") {
  struct Cache {
    std::vector<float> buffer;
  };
  Cache* first = nullptr;
  std::thread([&] {
    first = &ldmsim::ops::thread_cache<Cache>();
    first->buffer.assign(1000, 1.0f);
  }).join();
  Cache* second = nullptr;
  std::size_t kept = 0;
  std::thread([&] {
    second = &ldmsim::ops::thread_cache<Cache>();
    kept = second->buffer.size();
  }).join();
  CHECK(second == first);  // the exited thread's instance, warm
  CHECK(kept == 1000);
  // Two threads alive at once get two instances.
  Cache* a = nullptr;
  Cache* b = nullptr;
  std::mutex m;
  std::condition_variable both;
  int arrived = 0;
  const auto take = [&](Cache*& out) {
    out = &ldmsim::ops::thread_cache<Cache>();
    std::unique_lock lock(m);
    ++arrived;
    both.notify_all();
    both.wait(lock, [&] { return arrived == 2; });
  };
  std::thread ta(take, std::ref(a)), tb(take, std::ref(b));
  ta.join();
  tb.join();
  CHECK(a != b);
  CHECK((a == first || b == first));
}
