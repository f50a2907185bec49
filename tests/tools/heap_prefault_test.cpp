// The CLI's heap prefault: memory the main thread allocates after it finds its pages already populated.
#include "heap_prefault.hpp"

#include <malloc.h>
#include <sys/resource.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

namespace {

long thread_minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

/// Minor faults this thread takes allocating and filling `bytes` of strings as protobuf does for initializers.
long faults_filling(std::size_t bytes) {
  const long before = thread_minor_faults();
  std::string a(bytes / 2, 'a'), b(bytes / 2, 'b');
  const long after = thread_minor_faults();
  REQUIRE(a.back() == 'a');
  REQUIRE(b.back() == 'b');
  return after - before;
}

}  // namespace

TEST_CASE("a heap prefault populates the pages the next allocations use", "[cli][prefault]") {
  constexpr std::size_t kBytes = std::size_t{24} << 20;
  const long pages = static_cast<long>(kBytes / 4096);
  // The free top of the heap cannot hold the strings yet: without the prefault they would fault in fresh pages.
  REQUIRE(mallinfo2().keepcost < kBytes);
  ldmsim::HeapPrefault prefault(kBytes);
  REQUIRE(prefault.populating() >= kBytes);  // glibc's heap on this platform
  prefault.finish();
  REQUIRE(prefault.populated() >= kBytes);  // MADV_POPULATE_WRITE: Linux 5.14 and later
  // (With transparent huge pages set to "always" the fault count below is low either way; the line above is the
  // check that holds there too.)
  CHECK(faults_filling(kBytes) < pages / 10);
  malloc_trim(0);  // give the populated heap back: the next test grows the heap afresh
}

TEST_CASE("a heap prefault of nothing does nothing", "[cli][prefault]") {
  ldmsim::HeapPrefault prefault(0);
  CHECK(prefault.populating() == 0);
}

TEST_CASE("a heap prefault populates what was asked, not the whole block it grew the heap by", "[cli][prefault]") {
  {
    ldmsim::HeapPrefault small(std::size_t{1} << 20);  // a small model: its pages fault in as it is read
    CHECK(small.populating() == 0);
  }
  constexpr std::size_t kBytes = std::size_t{3} << 20;  // the heap grows by one 16 MiB block
  ldmsim::HeapPrefault prefault(kBytes);
  prefault.finish();
  CHECK(prefault.populating() >= kBytes);
  CHECK(prefault.populating() <= kBytes + (std::size_t{2} << 20));
}

TEST_CASE("a heap prefault runs its follow-up on the helper and tells it when the import is over", "[cli][prefault]") {
  std::atomic<bool> started{false}, saw_stop{false};
  std::thread::id helper;
  {
    ldmsim::HeapPrefault prefault(0, [&](const std::atomic<bool>& stop) {
      helper = std::this_thread::get_id();
      started = true;
      while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      saw_stop = true;
    });
    for (int waited = 0; !started.load() && waited < 10000; ++waited)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(started.load());  // no helper thread within 10 s: fail, do not hang
    CHECK_FALSE(saw_stop.load());
  }  // the destructor sets the flag and joins
  CHECK(saw_stop.load());
  CHECK(helper != std::this_thread::get_id());
}
