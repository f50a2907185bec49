// get_block's choice between a strided read and one read of the whole span (gaps included), read_runs' between a
// block read and a request per run, and ReadPricer,
// which prices those reads for the control core: on sw26010pro's fcfs-channels model small misaligned runs cost a
// realignment each, so their span is cheaper; long aligned runs far apart are cheaper strided. The pricer must
// agree with what the engine charged, request by request.
#include "ldmsim/kernels/matrix_block.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/runtime/check.hpp"

using namespace ldmsim;

namespace {

struct Outcome {
  std::vector<DmaEvent> requests;
  bool data_ok = false;
  double priced = 0;
};

/// Reads `block` of a device matrix holding 0, 1, 2, ... on one core of sw26010pro into a buffer of `buffer`
/// elements; checks every element it read and records the requests.
Outcome read_block(const tiling::BlockShape& block, std::size_t buffer) {
  const Arch arch = Arch::preset("sw26010pro");
  Machine m{arch};
  const std::size_t total = block.first + (block.rows - 1) * block.pitch + block.count + 2;
  std::vector<f16> values(total);
  for (std::size_t i = 0; i < total; ++i) values[i] = f16(static_cast<float>(i % 2048));
  const DevicePtr<f16> x = m.alloc<f16>(total, {.alignment = 128});
  m.upload(x, values);
  Outcome out;
  m.launch(LaunchSpec{.name = "block"}, [&](Core& core) {
     if (core.id() != 0 || core.cg() != 0) return;
     auto buf = core.ldm().alloc<f16>(buffer);
     tiling::BlockRead read = tiling::get_block(core, buf, DevicePtr<const f16>(x), total, block);
     read.wait();
     out.data_ok = true;
     for (std::size_t r = 0; r < block.rows; ++r) {
       for (std::size_t i = 0; i < block.count; ++i) {
         const float want = static_cast<float>((block.first + r * block.pitch + i) % 2048);
         if (static_cast<float>(buf[read.start(r) + i]) != want) out.data_ok = false;
       }
     }
   }).join();
  m.trace()[0]->for_each_dma([&](const DmaEvent& e) { out.requests.push_back(e); });
  out.priced = tiling::ReadPricer(arch).block(block.rows, block.count, block.pitch, buffer, block.first);
  return out;
}

/// The engine time the requests were charged: completion minus start minus the model's latency.
double charged(const std::vector<DmaEvent>& requests) {
  const double latency = Arch::preset("sw26010pro").dma.timing.value("latency_cycles", 0.0);
  double sum = 0;
  for (const DmaEvent& e : requests) sum += static_cast<double>(e.end - e.start) - latency;
  return sum;
}

}  // namespace

TEST_CASE("get_block reads small runs with gaps as their span when the engine charges less for it", "[kernels]") {
  // Every other row of 56-element rows, 55 elements each (a 1x1 stride-2 conv's row block): 110-byte runs, most
  // realigned, against one contiguous read of 11 rows.
  const tiling::BlockShape block{.first = 6, .pitch = 112, .rows = 6, .count = 55};
  SECTION("a buffer that holds the span: one contiguous read") {
    const Outcome o = read_block(block, tiling::block_or_span_elements(6, 55, 112));
    CHECK(o.data_ok);
    REQUIRE_FALSE(o.requests.empty());
    for (const DmaEvent& e : o.requests) CHECK(e.bsize == 0);
    CHECK(o.priced == Approx(charged(o.requests)).margin(static_cast<double>(o.requests.size())));
  }
  SECTION("a buffer of the runs only: one strided read") {
    const Outcome o = read_block(block, tiling::block_buffer_elements(6, 55));
    CHECK(o.data_ok);
    REQUIRE(o.requests.size() == 1);
    CHECK(o.requests[0].bsize == 56 * 2);
    CHECK(o.priced == Approx(charged(o.requests)).margin(1));
  }
}

TEST_CASE("get_block keeps long aligned runs far apart strided, and the pricer charges what the engine did",
          "[kernels]") {
  // 64-element (128-byte) aligned runs 1024 elements apart: one line each, against 80 lines of span.
  const tiling::BlockShape block{.first = 0, .pitch = 1024, .rows = 6, .count = 64};
  const Outcome o = read_block(block, 6 * 1024);
  CHECK(o.data_ok);
  REQUIRE(o.requests.size() == 1);
  CHECK(o.requests[0].bsize == 128);
  CHECK(o.priced == Approx(charged(o.requests)).margin(1));
}

TEST_CASE("block_or_span_elements makes room for the span only when it is at most 4 times the runs", "[kernels]") {
  CHECK(tiling::block_or_span_elements(1, 55, 112) == tiling::block_buffer_elements(1, 55));
  CHECK(tiling::block_or_span_elements(6, 55, 112) == 5 * 112 + 56 + 2);
  CHECK(tiling::block_or_span_elements(6, 55, 1024) == tiling::block_buffer_elements(6, 55));
}

TEST_CASE("the pricer prices a block by where it starts within a transaction, as the engine charges it", "[kernels]") {
  const Arch pro = Arch::preset("sw26010pro");
  const tiling::ReadPricer price(pro);
  const std::size_t transaction = price.transaction_elements();
  // The 1x1 stride-2 row block above, shifted by whole transactions: the pricer's memo serves all of them from
  // one price, which must still be what the engine charges for each.
  for (const std::size_t shift : {std::size_t{0}, transaction, 7 * transaction}) {
    const tiling::BlockShape block{.first = 6 + shift, .pitch = 112, .rows = 6, .count = 55};
    const Outcome o = read_block(block, tiling::block_buffer_elements(6, 55));
    REQUIRE(o.requests.size() == 1);
    CHECK(price.block(6, 55, 112, tiling::block_buffer_elements(6, 55), block.first) ==
          Approx(charged(o.requests)).margin(1));
  }
  // A shift that is not whole transactions changes the runs' alignment and the price.
  CHECK(price.block(6, 55, 112, 6 * 56, 6) != price.block(6, 55, 112, 6 * 56, 6 + transaction / 2));
}

TEST_CASE("transactions of 1 and 2 bytes are priced", "[kernels]") {
  for (const std::uint32_t bytes : {1u, 2u}) {
    INFO("transaction_bytes " << bytes);
    nlohmann::json tree = Arch::preset("sw26010pro").to_json();
    tree["dma"]["granularity_bytes"] = 1;
    tree["dma"]["transaction_bytes"] = bytes;
    const Arch arch = Arch::from_json(tree);
    const tiling::ReadPricer price(arch);
    CHECK(price.transaction_elements() == 1);
    // Starts two elements apart keep the runs' parity and (at most 2-byte transactions) their alignment.
    CHECK(price.block(6, 55, 112, 6 * 56, 6) == price.block(6, 55, 112, 6 * 56, 8));
    CHECK(price.block(6, 55, 112, 6 * 56, 6) > 0);
    // Every even start is aligned to such transactions: an unknown start costs what a known one does.
    CHECK(price.block(6, 55, 112, 6 * 56) == price.block(6, 55, 112, 6 * 56, 6));
  }
}

TEST_CASE("the pricer prices blocks past its memo's 32-bit fields as it prices the same block within them",
          "[kernels][tiling]") {
  // A pitch whose difference is a whole number of transactions keeps every run's alignment, hence the price.
  const tiling::ReadPricer price(Arch::preset("sw26010pro"));
  const std::size_t wide = std::size_t{1} << 32;  // a multiple of any transaction in elements
  REQUIRE(wide % price.transaction_elements() == 0);
  for (const std::size_t first : {std::size_t{0}, std::size_t{6}}) {
    CHECK(price.block(6, 55, 112 + wide, 6 * 56, first) == price.block(6, 55, 112, 6 * 56, first));
  }
  CHECK(price.block(6, 55, 112 + wide, 6 * 56) == price.block(6, 55, 112, 6 * 56));
  // A buffer past 32 bits holds the whole span, as a buffer of 1,000 elements does; cut to 32 bits it would be one
  // of 330, which holds the rows only (the span is 615 elements), and the read would be priced otherwise.
  REQUIRE(price.block(6, 55, 112, 330, 6) != price.block(6, 55, 112, 1000, 6));
  CHECK(price.block(6, 55, 112, wide + 330, 6) == price.block(6, 55, 112, 1000, 6));
}

namespace {

struct RunsOutcome {
  bool data_ok = false, block_cheaper = false;
  std::size_t requests = 0;
};

/// Reads `runs` runs of `count` elements `pitch` apart from element `first`, then one run of 6 (which breaks the
/// stretch), with read_runs on one core of `arch` through a buffer of `buffer` elements (0: what a strided read of
/// the runs needs); checks every element and counts the requests.
RunsOutcome read_some_runs(const Arch& arch, std::size_t first, std::size_t pitch, std::size_t rows, std::size_t count,
                           std::size_t buffer = 0) {
  Machine m{arch};
  const std::size_t total = first + rows * pitch + 8;
  std::vector<f16> values(total);
  for (std::size_t i = 0; i < total; ++i) values[i] = f16(static_cast<float>(i % 2048));
  const DevicePtr<f16> x = m.alloc<f16>(total, {.alignment = 128});
  m.upload(x, values);
  std::vector<tiling::Run> runs;
  for (std::size_t r = 0; r < rows; ++r) runs.push_back({first + r * pitch, count});
  runs.push_back({first + rows * pitch, 6});
  RunsOutcome o;
  m.launch(LaunchSpec{.name = "runs"}, [&](Core& core) {
     if (core.id() != 0 || core.cg() != 0) return;
     auto buf = core.ldm().alloc<f16>(buffer != 0 ? buffer : tiling::block_buffer_elements(rows, count));
     auto out = core.ldm().alloc<f16>(rows * count + 6);
     std::vector<f16*> to;
     for (std::size_t r = 0; r <= rows; ++r) to.push_back(out.data() + r * count);
     const DevicePtr<const f16> base(x);
     double separate = 0;
     for (std::size_t r = 0; r < rows; ++r) {
       const std::size_t from = tiling::floor_even(runs[r].offset);
       const std::size_t end = tiling::ceil_even(runs[r].offset + count);
       separate += core.get_service_cycles((base + from).addr(), (end - from) * sizeof(f16));
     }
     o.block_cheaper = tiling::block_read_cost(core, base, total, {first, pitch, rows, count}, buf.size()) < separate;
     tiling::read_runs(core, buf, base, total, runs, to);
     o.data_ok = true;
     for (std::size_t r = 0; r <= rows; ++r) {
       for (std::size_t i = 0; i < runs[r].count; ++i) {
         if (static_cast<float>(to[r][i]) != static_cast<float>((runs[r].offset + i) % 2048)) o.data_ok = false;
       }
     }
   }).join();
  m.trace()[0]->for_each_dma([&](const DmaEvent&) { ++o.requests; });
  return o;
}

}  // namespace

TEST_CASE("read_runs reads evenly spaced runs as one block where that costs the engine less than a request each",
          "[kernels]") {
  // A channel's halo row, channel after channel: 16 runs of 14 elements 56 apart, then a run of 6 that is read
  // alone. On both presets one block read costs the engine less than 16 requests.
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    INFO(preset);
    const RunsOutcome o = read_some_runs(Arch::preset(preset), 4, 56, 16, 14);
    CHECK(o.data_ok);
    CHECK(o.block_cheaper);
    CHECK(o.requests == 2);
  }
  // An engine that charges dearly for each block of a strided request, runs too far apart for their span: a
  // request each.
  Arch dear = Arch::preset("sw26010");
  dear.name = "dear-blocks";
  dear.dma.timing["block_cycles"] = 100000.0;
  const RunsOutcome o = read_some_runs(dear, 4, 1024, 16, 14);
  CHECK(o.data_ok);
  CHECK_FALSE(o.block_cheaper);
  CHECK(o.requests == 17);
}

TEST_CASE("read_runs reads a column of an odd pitch in spans as long as its buffer holds", "[kernels]") {
  // 2000 one-element runs 13 apart (a 13-wide plane's last column): one request per run would be 2000; spans of
  // what 1024 elements hold are 26. Nothing is read twice, so host time stays linear in the runs.
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    INFO(preset);
    const RunsOutcome o = read_some_runs(Arch::preset(preset), 12, 13, 2000, 1, 1024);
    CHECK(o.data_ok);
    CHECK(o.requests <= 2000 * 13 / 1000 + 2);
  }
}

TEST_CASE("read_runs never reads across the gaps between runs that belong to another writer", "[kernels]") {
  // Runs of 6 elements 8 apart, as a box's rows inside a larger buffer: one read of their span, gaps included,
  // costs the engine less than a strided request, so read_runs takes it unless the gaps are not its to read. Only
  // the runs are written: the span read is an uninit-device-read for the init check, the runs alone are not.
  constexpr std::size_t first = 4, pitch = 8, rows = 16, count = 6, total = first + rows * pitch + 8;
  for (const bool gaps_readable : {true, false}) {
    INFO(gaps_readable);
    Machine m{Arch::preset("sw26010")};
    enable_checks(m, CheckSet{.init = true});
    const DevicePtr<f16> x = m.alloc<f16>(total, {.alignment = 128});
    std::vector<tiling::Run> runs;
    for (std::size_t r = 0; r < rows; ++r) {
      runs.push_back({first + r * pitch, count});
      m.upload(x + first + r * pitch, std::vector<f16>(count, f16(static_cast<float>(r))));
    }
    bool data_ok = true;
    double span = 0, strided = 0;
    m.launch(LaunchSpec{.name = "runs"}, [&](Core& core) {
       if (core.id() != 0 || core.cg() != 0) return;
       auto buf = core.ldm().alloc<f16>(rows * pitch + 8);
       auto out = core.ldm().alloc<f16>(rows * count);
       std::vector<f16*> to;
       for (std::size_t r = 0; r < rows; ++r) to.push_back(out.data() + r * count);
       const DevicePtr<const f16> base(x);
       span = tiling::block_read_cost(core, base, total, {first, pitch, rows, count}, buf.size());
       strided = tiling::block_read_cost(core, base, total, {first, pitch, rows, count, false}, buf.size());
       tiling::read_runs(core, buf, base, total, runs, to, gaps_readable);
       for (std::size_t r = 0; r < rows; ++r) {
         for (std::size_t i = 0; i < count; ++i)
           data_ok = data_ok && static_cast<float>(to[r][i]) == static_cast<float>(r);
       }
     }).join();
    REQUIRE(span < strided);  // the span is the cheaper read where it may be taken
    CHECK(data_ok);
    CHECK(check_reports(m).empty() == !gaps_readable);
  }
}
