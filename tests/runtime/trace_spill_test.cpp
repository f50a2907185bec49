// A machine's traces spill full chunks and marker lists to temporary files: long runs keep bounded host memory,
// nothing recorded is lost (events and markers read back in order), the trace file is byte-identical for 1 and 2
// host threads and for a raw or zstd codec once decoded, and a bad spill directory is a clear ConfigError.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/trace/file.hpp"

using namespace ldmsim;

namespace {

constexpr int kGetsPerCore = 6000;      // 4 cores: 24000 events per group, 5 full chunks spilled
constexpr int kBarriersPerCore = 2100;  // 4200 row-barrier markers per group: one markers block spilled

Arch two_groups() {
  Arch a = Arch::preset("tiny");
  a.core_groups = 2;
  a.dma.timing = {{"model", "fcfs-bandwidth"}, {"issue_cycles", 3}, {"latency_cycles", 20}, {"bytes_per_cycle", 8}};
  return Arch::from_json(a.to_json(), "spill-test");
}

std::filesystem::path scratch_file(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("ldmsim_spill_" + std::to_string(::getpid()) + "_" + name + ".ldmtrace");
}

std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Every core: many small gets from its own slot of `src` (addresses vary per request), a row barrier every few.
void many_gets(Core& core, DevicePtr<const std::uint32_t> src) {
  auto buf = core.ldm().alloc<std::uint32_t>(16);
  for (int i = 0; i < kGetsPerCore; ++i) {
    const auto offset = static_cast<std::size_t>(core.rank() * 64 + (i % 48));
    core.get(buf.first(1 + static_cast<std::size_t>(i % 16)), src + offset).wait();
    if (i % 2 == 0 && i / 2 < kBarriersPerCore) core.barrier(Scope::kRow);
  }
}

struct Run {
  std::vector<std::uint64_t> events;
  std::vector<std::uint64_t> markers;
  std::vector<std::size_t> memory;
  std::vector<std::uint64_t> spilled;
  std::string file;
};

Run run(unsigned threads, TraceCodec codec) {
  Machine m{two_groups(), MachineOptions{.threads = threads, .trace_codec = codec}};
  std::vector<DevicePtr<std::uint32_t>> src;
  for (int cg = 0; cg < 2; ++cg) {
    src.push_back(m.alloc<std::uint32_t>(1024, AllocOptions{.cg = cg}));
    m.upload(src.back(), std::vector<std::uint32_t>(1024, 7));
  }
  m.launch(LaunchSpec{.name = "many-gets"}, [&](Core& core) {
     many_gets(core, DevicePtr<const std::uint32_t>(src[static_cast<std::size_t>(core.cg())]));
   }).join();
  Run r;
  for (const TraceRecorder* t : m.trace()) {
    r.events.push_back(t->dma_count());
    r.markers.push_back(t->marker_count());
    r.memory.push_back(t->memory_bytes());
    r.spilled.push_back(t->spilled_bytes());
  }
  const auto file = scratch_file(std::to_string(threads) + std::string(to_string(codec)));
  m.write_trace(file);
  r.file = slurp(file);
  std::filesystem::remove(file);
  return r;
}

}  // namespace

TEST_CASE("a long run spills its trace and keeps only the open chunk in memory", "[trace][spill]") {
  const Run r = run(2, TraceCodec::kZstd);
  for (std::size_t g = 0; g < 2; ++g) {
    INFO("core group " << g);
    CHECK(r.events[g] == 4u * kGetsPerCore);
    // launch begin/end, 4 core exits, one barrier marker per row release (2 rows x kBarriersPerCore)
    CHECK(r.markers[g] == 2u + 4u + 2u * kBarriersPerCore);
    CHECK(r.spilled[g] > 0);
    // One 4096-event chunk (128 KiB of columns) plus the spill's index, buffers and zstd contexts.
    CHECK(r.memory[g] < 2u * 1024 * 1024);
  }
}

TEST_CASE("spilled events and markers read back in record order, identical to the written file", "[trace][spill]") {
  Machine m{two_groups(), MachineOptions{.threads = 1}};
  auto src = m.alloc<std::uint32_t>(1024);
  m.upload(src, std::vector<std::uint32_t>(1024, 3));
  m.launch(LaunchSpec{.groups = {0}, .name = "many-gets"}, many_gets, DevicePtr<const std::uint32_t>(src)).join();
  const TraceRecorder& t = *m.trace()[0];
  std::vector<DmaEvent> events;
  t.for_each_dma([&](const DmaEvent& e) { events.push_back(e); });
  REQUIRE(events.size() == 4u * kGetsPerCore);
  std::vector<int> per_core(4, 0);
  for (std::size_t i = 0; i < events.size(); ++i) {
    INFO("event " << i);
    if (i > 0) REQUIRE(events[i].issue >= events[i - 1].issue);  // record order is issue order
    REQUIRE(events[i].length == 4u * (1u + static_cast<unsigned>(per_core[events[i].core] % 16)));
    ++per_core[events[i].core];
  }
  CHECK(per_core == std::vector<int>(4, kGetsPerCore));
  const std::vector<Marker> markers = t.markers();
  REQUIRE(markers.size() == t.marker_count());
  CHECK(markers.front().kind == MarkerKind::kLaunchBegin);
  CHECK(markers.back().kind == MarkerKind::kLaunchEnd);

  const auto file = scratch_file("readback");
  m.write_trace(file);
  const auto groups = TraceReader::read_all(file);
  std::filesystem::remove(file);
  REQUIRE(groups.size() == 2);
  std::vector<DmaEvent> from_file;
  groups[0].for_each_dma([&](const DmaEvent& e) { from_file.push_back(e); });
  CHECK(from_file == events);
  CHECK(groups[0].markers() == markers);
}

TEST_CASE("spilled traces are byte-identical for 1 and 2 host threads, and raw and zstd hold the same events",
          "[trace][spill]") {
  const Run one = run(1, TraceCodec::kZstd);
  const Run two = run(2, TraceCodec::kZstd);
  CHECK(one.file.size() == two.file.size());
  CHECK(one.file == two.file);
  const Run raw = run(1, TraceCodec::kRaw);
  CHECK(raw.file.size() > 4 * one.file.size());  // zstd earns its keep on a real trace
  CHECK(raw.events == one.events);
  CHECK(raw.markers == one.markers);
}

TEST_CASE("a trace spill directory that is not a directory is a ConfigError naming it", "[trace][spill]") {
  const auto missing = std::filesystem::temp_directory_path() / "ldmsim-no-such-dir" / "deeper";
  try {
    Machine m{Arch::preset("tiny"), MachineOptions{.trace_spill_dir = missing}};
    FAIL("no ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains(missing.string()) && Catch::Contains("trace_spill_dir"));
  }
  // Without tracing there is nothing to spill, so the directory is not checked.
  CHECK_NOTHROW(Machine{Arch::preset("tiny"), MachineOptions{.trace = false, .trace_spill_dir = missing}});
}
