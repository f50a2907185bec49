// The run's heap retention: blocks a launch frees stay with the process for the next launch, and glibc's defaults
// come back once the last holder is gone; a Session holds one from its first run until it ends.
#include "heap_retention.hpp"

#include <malloc.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "ldmsim/session/session.hpp"

namespace {

constexpr std::size_t kBlock = std::size_t{4} << 20;  // over glibc's default mmap threshold (128 KiB)

/// Whether freeing a block of kBlock bytes (from the heap's free top when it holds enough) gives it back.
bool freed_block_is_trimmed() {
  void* block = std::malloc(kBlock);
  REQUIRE(block != nullptr);
  std::memset(block, 1, kBlock);
  std::free(block);
  return mallinfo2().keepcost < kBlock;
}

/// Whether a fresh block of kBlock bytes came from its own mapping rather than the heap.
bool block_is_mapped() {
  const std::size_t before = mallinfo2().hblks;
  void* block = std::malloc(kBlock);
  REQUIRE(block != nullptr);
  std::memset(block, 1, kBlock);
  const bool mapped = mallinfo2().hblks > before;
  std::free(block);
  return mapped;
}

}  // namespace

TEST_CASE("a heap retention serves large blocks from the heap and keeps them once freed", "[cli][prefault]") {
  {
    const ldmsim::HeapRetention retention(std::size_t{64} << 20);
    REQUIRE(retention.active());  // glibc on this platform
    CHECK_FALSE(block_is_mapped());
    CHECK(mallinfo2().keepcost >= kBlock);  // the freed block is the heap's free top, not trimmed
  }
  CHECK(freed_block_is_trimmed());  // glibc's default thresholds again
  malloc_trim(0);
  CHECK(block_is_mapped());
}

TEST_CASE("a heap retention lasts as long as its longest holder", "[cli][prefault]") {
  const ldmsim::HeapRetention outer(std::size_t{64} << 20);
  REQUIRE(outer.active());
  {
    const ldmsim::HeapRetention inner(std::size_t{1} << 20);
    CHECK(inner.active());
  }
  CHECK_FALSE(block_is_mapped());
  CHECK(mallinfo2().keepcost >= kBlock);  // the trim threshold is still the outer holder's
  CHECK_FALSE(freed_block_is_trimmed());
  malloc_trim(0);  // leave the heap as the other tests expect it
}

TEST_CASE("a heap retention leaves thresholds the user set alone", "[cli][prefault]") {
  // The thresholds as the user's settings would have set them (and glibc's dynamic threshold off, as after them).
  REQUIRE(mallopt(M_MMAP_THRESHOLD, 128 * 1024) == 1);
  malloc_trim(0);
  for (const auto& [name, value] : {std::pair{"MALLOC_TRIM_THRESHOLD_", "131072"},
                                    std::pair{"GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=131072"}}) {
    INFO(name);
    REQUIRE(setenv(name, value, 1) == 0);
    {
      const ldmsim::HeapRetention retention(std::size_t{64} << 20);
      CHECK_FALSE(retention.active());
      CHECK(block_is_mapped());  // glibc's threshold, not the retention's
    }
    REQUIRE(unsetenv(name) == 0);
  }
  const ldmsim::HeapRetention retention(std::size_t{64} << 20);
  CHECK(retention.active());
  malloc_trim(0);
}

TEST_CASE("a session keeps the heap from its first run until it ends", "[cli][prefault]") {
  malloc_trim(0);
  {
    ldmsim::Session session;
    const ldmsim::Model model = session.load(nlohmann::json::parse(R"({
      "name": "relu",
      "tensors": {"x": {"shape": [1, 4, 8, 8], "init": {"normal": [0, 1], "seed": 1}}},
      "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["y"]}],
      "outputs": ["y"]})"));
    CHECK(block_is_mapped());  // glibc's defaults before the first run
    session.run(model);
    CHECK_FALSE(block_is_mapped());  // between runs: a warm run finds what the last one freed
    CHECK_FALSE(freed_block_is_trimmed());
    session.run(model);
    CHECK_FALSE(block_is_mapped());
  }
  malloc_trim(0);
  CHECK(block_is_mapped());  // the session's end sets glibc's defaults back
}
