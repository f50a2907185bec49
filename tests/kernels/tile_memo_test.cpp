// TileMemo, the host's reuse of built B tiles: a tile is found only for a key equal in every integer, the newest
// eight tiles are kept, and source ids are never reused; PlanMemo keeps 32 layouts; thread_cache hands an exited
// thread's instance to the next thread and never one instance to two live threads.
#include "../../kernels/src/ops/tile_memo.hpp"  // white box: the memo behind conv's tile builds

#include <catch2/catch.hpp>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "../../kernels/src/ops/thread_cache.hpp"

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
