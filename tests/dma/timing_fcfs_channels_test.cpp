// The fcfs-channels timing model driven directly on hand-computed cases: per-request setup, the realignment
// cost of misaligned blocks spanning several 128-byte lines, the channels' share of the bandwidth, first-free
// channel choice, strided blocks, and parameter validation naming dma.timing.<key>.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "dma/timing_support.hpp"
#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/sim/fault.hpp"

using namespace ldmsim;
using ldmsim::testing::req;
using ldmsim::testing::with_timing;

namespace {

constexpr DeviceAddr kBase = 0x10'0000'0000ull;  // 128-byte aligned

// Two channels at 16 bytes per cycle: each channel moves a 128-byte line in 128 * 2 / 16 = 16 cycles.
const nlohmann::json kChannels = {{"model", "fcfs-channels"},      {"issue_cycles", 5},    {"channels", 2},
                                  {"request_overhead_cycles", 10}, {"realign_cycles", 20}, {"bytes_per_cycle", 16},
                                  {"latency_cycles", 100}};

std::string config_error(const nlohmann::json& timing) {
  try {
    make_timing_model(with_timing(timing));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("fcfs-channels: setup, lines at the channel's share of the bandwidth, then latency", "[timing]") {
  auto model = make_timing_model(with_timing(kChannels));
  CHECK(model->issue_cycles(req(kBase, 8)) == 5);
  SECTION("an aligned 128-byte block is one line: 10 + 16, done 100 later") {
    const DmaTiming t = model->schedule(req(kBase, 128), 1000, 0);
    CHECK(t.start == 1000);
    CHECK(t.end == 1000 + 10 + 16 + 100);
  }
  SECTION("8 bytes inside one line cost the same as a full line") {
    CHECK(model->schedule(req(kBase + 80, 8), 0, 0).end == 126);
  }
  SECTION("a misaligned block spanning two lines pays both lines and the realignment") {
    CHECK(model->schedule(req(kBase + 80, 128), 0, 0).end == 10 + 20 + 2 * 16 + 100);
  }
  SECTION("a misaligned 1 KiB block: 9 lines, realigned once") {
    CHECK(model->schedule(req(kBase + 80, 1024), 0, 0).end == 10 + 20 + 9 * 16 + 100);
  }
  SECTION("aligned blocks need no realignment, whatever their end") {
    CHECK(model->schedule(req(kBase, 256), 0, 0).end == 10 + 2 * 16 + 100);
    CHECK(model->schedule(req(kBase + 128, 200), 0, 0).end == 10 + 2 * 16 + 100);
  }
}

TEST_CASE("fcfs-channels: requests take the first free channel, first come first served", "[timing]") {
  auto model = make_timing_model(with_timing(kChannels));
  const DmaTiming a = model->schedule(req(kBase, 128), 0, 0);       // channel 0 busy until 26
  const DmaTiming b = model->schedule(req(kBase + 80, 128), 0, 1);  // channel 1 busy until 62
  const DmaTiming c = model->schedule(req(kBase, 128), 10, 2);      // waits for channel 0: 26..52
  const DmaTiming d = model->schedule(req(kBase, 128), 30, 3);      // channel 0 again: 52..78
  const DmaTiming e = model->schedule(req(kBase, 128), 200, 4);     // both idle: starts at issue
  CHECK(a.start == 0);
  CHECK(a.end == 126);
  CHECK(b.start == 0);
  CHECK(b.end == 162);
  CHECK(c.start == 26);
  CHECK(c.end == 152);
  CHECK(d.start == 52);
  CHECK(d.end == 178);
  CHECK(e.start == 200);
  CHECK(e.end == 326);
}

TEST_CASE("fcfs-channels: each block of a strided request is counted and realigned on its own", "[timing]") {
  auto model = make_timing_model(with_timing(kChannels));
  SECTION("four 64-byte blocks, one per line: four lines, no realignment") {
    CHECK(model->schedule(req(kBase, 256, 64, 64), 0, 0).end == 10 + 4 * 16 + 100);
  }
  SECTION("the same blocks shifted by 96 bytes all cross a line: eight lines, four realignments") {
    CHECK(model->schedule(req(kBase + 96, 256, 64, 64), 0, 0).end == 10 + 4 * 20 + 8 * 16 + 100);
  }
  SECTION("two 8-byte blocks in one line are two transactions") {
    CHECK(model->schedule(req(kBase, 16, 8, 8), 0, 0).end == 10 + 2 * 16 + 100);
  }
}

TEST_CASE("fcfs-channels: fractional service times accumulate without rounding drift", "[timing]") {
  // One channel at 3 bytes per cycle: a line is 42.67 cycles; the engine keeps the fraction.
  auto model = make_timing_model(
      with_timing({{"model", "fcfs-channels"}, {"channels", 1}, {"bytes_per_cycle", 3}, {"latency_cycles", 0}}));
  CHECK(model->schedule(req(kBase, 128), 0, 0).end == 43);
  const DmaTiming second = model->schedule(req(kBase, 128), 0, 1);
  CHECK(second.start == 43);  // ceil(42.67)
  CHECK(second.end == 86);    // ceil(85.33)
  CHECK(model->schedule(req(kBase, 128), 0, 2).end == 128);
}

TEST_CASE("fcfs-channels: registered, with defaults and validated parameters", "[timing]") {
  const auto names = timing_model_names();
  CHECK(std::find(names.begin(), names.end(), "fcfs-channels") != names.end());
  SECTION("defaults: issue 10, one channel, 16 bytes per cycle, latency 100, no setup or realignment cost") {
    auto model = make_timing_model(with_timing({{"model", "fcfs-channels"}}));
    CHECK(model->issue_cycles(req(kBase, 8)) == 10);
    CHECK(model->schedule(req(kBase + 80, 128), 0, 0).end == 2 * 8 + 100);
  }
  SECTION("errors name the key") {
    auto t = kChannels;
    t["channels"] = 1.5;
    CHECK_THAT(config_error(t), Catch::Contains("dma.timing.channels must be an integer"));
    t["channels"] = 0;
    CHECK_THAT(config_error(t), Catch::Contains("dma.timing.channels must be an integer in 1..1024 (got 0)"));
    t = kChannels;
    t["realign_cycles"] = -1;
    CHECK_THAT(config_error(t), Catch::Contains("dma.timing.realign_cycles must be >= 0"));
    t = kChannels;
    t["bytes_per_cycle"] = 0;
    CHECK_THAT(config_error(t), Catch::Contains("dma.timing.bytes_per_cycle must be > 0"));
    t = kChannels;
    t["transaction_cycles"] = 3;
    const std::string e = config_error(t);
    CHECK_THAT(e, Catch::Contains("unknown key dma.timing.transaction_cycles"));
    CHECK_THAT(e, Catch::Contains("fcfs-channels"));
    CHECK_THAT(e, Catch::Contains("realign_cycles"));
  }
}

TEST_CASE("service_cycles prices a request as schedule serves it, without scheduling it", "[timing]") {
  auto model = make_timing_model(with_timing(kChannels));
  // A strided request: 3 blocks of 100 bytes, 156 apart, starting 80 into a line: each block touches 2 lines and
  // is realigned.
  const DmaRequest strided = req(kBase + 80, 300, 100, 156);
  CHECK(model->service_cycles(strided) == Approx(10 + 3 * (20 + 2 * 16)));
  CHECK(model->service_cycles(strided) == Approx(10 + 3 * (20 + 2 * 16)));  // no state changed
  const DmaTiming t = model->schedule(strided, 0, 0);
  CHECK(t.end - t.start == 10 + 3 * (20 + 2 * 16) + 100);

  auto bandwidth = make_timing_model(with_timing(
      {{"model", "fcfs-bandwidth"}, {"request_overhead_cycles", 4}, {"bytes_per_cycle", 8}, {"latency_cycles", 0}}));
  CHECK(bandwidth->service_cycles(req(kBase + 64, 256)) == Approx(4 + 3 * 128 / 8));
  // A model without a price says 0.
  CHECK(make_timing_model(with_timing({{"model", "ideal"}}))->service_cycles(req(kBase, 256)) == 0);
}

TEST_CASE("fcfs-channels: puts at their own bandwidth, partly written lines and strided blocks cost extra",
          "[timing]") {
  // Gets: 16 cycles per line (2 channels, 16 B/cycle); puts: 128 * 2 / 8 = 32 cycles per line, 7 per partly
  // written line (read-modify-write), and every block after a strided request's first costs 3.
  nlohmann::json timing = kChannels;
  timing["put_bytes_per_cycle"] = 8;
  timing["partial_put_cycles"] = 7;
  timing["block_cycles"] = 3;
  auto model = make_timing_model(with_timing(timing));
  SECTION("a full-line get is unchanged; the same put pays the write bandwidth") {
    CHECK(model->schedule(req(kBase, 128), 0, 0).end == 10 + 16 + 100);
    CHECK(model->schedule(req(kBase, 128, 0, 0, DmaOp::kPut), 0, 1).end == 10 + 32 + 100);
  }
  SECTION("an 8-byte put writes part of one line") {
    CHECK(model->schedule(req(kBase + 80, 8, 0, 0, DmaOp::kPut), 0, 0).end == 10 + 32 + 7 + 100);
  }
  SECTION("a misaligned 1 KiB put: 9 lines, the first and last partly written, realigned once") {
    CHECK(model->schedule(req(kBase + 80, 1024, 0, 0, DmaOp::kPut), 0, 0).end == 10 + 20 + 9 * 32 + 2 * 7 + 100);
  }
  SECTION("a strided get of four 64-byte blocks: three extra blocks") {
    CHECK(model->schedule(req(kBase, 256, 64, 64), 0, 0).end == 10 + 3 * 3 + 4 * 16 + 100);
  }
  SECTION("the same strided put: every block writes half a line") {
    CHECK(model->schedule(req(kBase, 256, 64, 64, DmaOp::kPut), 0, 0).end == 10 + 3 * 3 + 4 * 32 + 4 * 7 + 100);
  }
  SECTION("a BCAST get reads memory once, like a PE get") {
    DmaRequest r = req(kBase, 128);
    r.mode = DmaMode::kBcast;
    CHECK(model->schedule(r, 0, 0).end == 10 + 16 + 100);
  }
}

TEST_CASE("fcfs-channels: strided realignment, blocks sharing a line and the broadcast channel", "[timing]") {
  nlohmann::json timing = kChannels;  // realign 20 for contiguous requests
  timing["strided_realign_cycles"] = 5;
  timing["shared_line_cycles"] = 2;
  timing["broadcast_bytes_per_cycle"] = 32;  // its own channel: a line in 4 cycles
  auto model = make_timing_model(with_timing(timing));
  SECTION("a contiguous misaligned block pays realign_cycles, a strided one strided_realign_cycles") {
    CHECK(model->schedule(req(kBase + 80, 128), 0, 0).end == 10 + 20 + 2 * 16 + 100);
    // Blocks at 96..159 and 224..287: both realigned, the second starts in line 1, where the first ended.
    CHECK(model->schedule(req(kBase + 96, 128, 64, 64), 100, 1).end == 100 + 10 + 2 * 5 + 2 + 4 * 16 + 100);
  }
  SECTION("8-byte blocks with 8-byte gaps: seven of eight start in the line the previous one ended in") {
    CHECK(model->schedule(req(kBase, 64, 8, 8), 0, 0).end == 10 + 7 * 2 + 8 * 16 + 100);
  }
  SECTION("blocks one line apart share nothing") {
    CHECK(model->schedule(req(kBase, 256, 64, 64), 0, 0).end == 10 + 4 * 16 + 100);
  }
  SECTION("BCAST gets queue on the broadcast channel at its rate, beside the PE channels") {
    DmaRequest b = req(kBase, 256);
    b.mode = DmaMode::kBcast;
    const DmaTiming first = model->schedule(b, 0, 0);
    CHECK(first.end == 10 + 2 * 4 + 100);
    const DmaTiming second = model->schedule(b, 0, 1);  // waits for the first: one broadcast channel
    CHECK(second.start == 18);
    CHECK(model->schedule(req(kBase, 256), 0, 2).start == 0);  // a PE get is not delayed by them
    DmaRequest row = req(kBase, 256);
    row.mode = DmaMode::kRow;
    CHECK(model->schedule(row, 0, 3).end == 10 + 2 * 16 + 100);  // a ROW get is priced and queued as a PE get
  }
}

TEST_CASE("fcfs-channels: the line queue, put realignment and the broadcast channel's max form and word queue",
          "[timing]") {
  nlohmann::json timing = kChannels;  // realign 20 for contiguous gets
  timing["line_queue_cycles"] = 3;
  timing["put_realign_cycles"] = 7;
  SECTION("8-byte blocks 16 bytes apart in one line wait for 0 + 1 + ... + 7 earlier blocks") {
    auto model = make_timing_model(with_timing(timing));
    CHECK(model->schedule(req(kBase, 64, 8, 8), 0, 0).end == 10 + 28 * 3 + 8 * 16 + 100);
  }
  SECTION("blocks with no gap between them are priced as one contiguous block") {
    auto model = make_timing_model(with_timing(timing));
    CHECK(model->schedule(req(kBase, 1024, 8, 0), 0, 0).end == model->schedule(req(kBase, 1024), 0, 1).end);
    CHECK(model->schedule(req(kBase, 1024, 8, 0), 0, 0).end == 10 + 8 * 16 + 100 + 10 + 8 * 16);  // queued behind
  }
  SECTION("a block starting in the line the previous one ended in waits for that one") {
    timing["strided_realign_cycles"] = 5;
    auto model = make_timing_model(with_timing(timing));
    // Blocks at 96..159 and 224..287: the second starts in line 1, where one earlier block ended.
    CHECK(model->schedule(req(kBase + 96, 128, 64, 64), 0, 0).end == 10 + 2 * 5 + 1 * 3 + 4 * 16 + 100);
  }
  SECTION("a contiguous misaligned put pays put_realign_cycles, a get realign_cycles") {
    auto model = make_timing_model(with_timing(timing));
    CHECK(model->schedule(req(kBase + 80, 128, 0, 0, DmaOp::kPut), 0, 0).end == 10 + 7 + 2 * 16 + 100);
    CHECK(model->schedule(req(kBase + 80, 128), 0, 1).end == 10 + 20 + 2 * 16 + 100);
  }
  timing["broadcast_bytes_per_cycle"] = 32;
  timing["broadcast_block_cycles"] = 6;
  const auto bcast = [](std::uint64_t length, std::uint64_t bsize) {
    DmaRequest b = req(kBase, length, bsize, bsize);
    b.mode = DmaMode::kBcast;
    return b;
  };
  SECTION("a broadcast get costs the larger of its blocks' and its bytes' time") {
    auto model = make_timing_model(with_timing(timing));
    CHECK(model->schedule(bcast(256, 8), 0, 0).end == 10 + 32 * 6 + 100);          // 32 blocks: 192 > 256 / 32
    CHECK(model->schedule(bcast(4096, 0), 1000, 0).end == 1000 + 10 + 128 + 100);  // 4096 / 32 > one block's 6
  }
  SECTION("blocks narrower than an ldm word delay the reply, not the channel") {
    timing["broadcast_word_queue_cycles"] = 2;
    auto model = make_timing_model(with_timing(timing));
    const DmaTiming eight = model->schedule(bcast(256, 8), 0, 0);
    CHECK(eight.end == 202 + 100 + 2 * 32 * 3 / 2);             // 32 blocks, 3 earlier blocks per word on average / 2
    CHECK(model->schedule(bcast(256, 16), 0, 1).start == 202);  // the channel was free at 202
    CHECK(model->schedule(bcast(256, 16), 1000, 0).end == 1000 + 10 + 16 * 6 + 100 + 2 * 16 * 1 / 2);
    CHECK(model->schedule(bcast(256, 32), 2000, 0).end == 2000 + 10 + 8 * 6 + 100);  // whole words: no wait
  }
}

TEST_CASE("fcfs-channels: broadcast terms need the broadcast channel", "[timing]") {
  nlohmann::json timing = kChannels;
  timing["broadcast_block_cycles"] = 6;
  CHECK_THAT(config_error(timing), Catch::Contains("broadcast_block_cycles"));
  CHECK_THAT(config_error(timing), Catch::Contains("broadcast_bytes_per_cycle > 0"));
}
