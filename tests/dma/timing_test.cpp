// DMA timing models driven directly: fcfs-bandwidth's first-come-first-served schedule on hand-computed cases,
// count_transactions for aligned, misaligned and strided blocks, the ideal model, and configuration errors that
// name their JSON path (dma.timing.<key>).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "dma/timing_support.hpp"
#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/sim/fault.hpp"

using namespace ldmsim;
using ldmsim::testing::req;
using ldmsim::testing::with_timing;

namespace {

const nlohmann::json kFcfs = {{"model", "fcfs-bandwidth"},
                              {"issue_cycles", 10},
                              {"latency_cycles", 100},
                              {"bytes_per_cycle", 8},
                              {"request_overhead_cycles", 4}};

std::string config_error(const Arch& arch) {
  try {
    make_timing_model(arch);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("count_transactions counts every 128-byte line each block touches", "[timing]") {
  SECTION("contiguous") {
    CHECK(count_transactions(req(0, 128), 128) == 1);
    CHECK(count_transactions(req(0, 256), 128) == 2);
    CHECK(count_transactions(req(4, 4), 128) == 1);
    CHECK(count_transactions(req(124, 8), 128) == 2);    // crosses one boundary
    CHECK(count_transactions(req(4, 256), 128) == 3);    // misaligned: a partial line at each end
    CHECK(count_transactions(req(124, 132), 128) == 2);  // [124, 256): still two lines
    CHECK(count_transactions(req(124, 136), 128) == 3);  // [124, 260)
    CHECK(count_transactions(req(1'000'000 * 128ull, 128 * 10), 128) == 10);
  }
  SECTION("strided: each block separately") {
    // 4 blocks of 64 at 0, 128, 256, 384: one line each.
    CHECK(count_transactions(req(0, 256, 64, 64), 128) == 4);
    // 4 blocks of 64 at 0, 96, 192, 288: [96, 160) crosses 128, the others fit one line.
    CHECK(count_transactions(req(0, 256, 64, 32), 128) == 5);
    // Two blocks of 8 in the same line still cost one transaction each.
    CHECK(count_transactions(req(0, 16, 8, 8), 128) == 2);
    // A stride of 0 is one contiguous run (as athread treats it): [64, 320) touches 3 lines, not 2 per block.
    CHECK(count_transactions(req(0, 256, 128, 0), 128) == 2);
    CHECK(count_transactions(req(64, 256, 128, 0), 128) == 3);
  }
  SECTION("other transaction sizes") {
    CHECK(count_transactions(req(0, 256), 64) == 4);
    CHECK(count_transactions(req(60, 8), 64) == 2);
  }
}

TEST_CASE("fcfs-bandwidth serves four simultaneous 256-byte requests first-come-first-served", "[timing]") {
  auto model = make_timing_model(with_timing(kFcfs));
  CHECK(model->issue_cycles(req(0, 256)) == 10);
  // Service per request: overhead 4 + 2 transactions * 128 bytes / 8 bytes per cycle = 36 cycles; latency 100.
  const DmaTiming t0 = model->schedule(req(0x1000, 256), 10, 0);
  const DmaTiming t1 = model->schedule(req(0x1100, 256), 10, 1);
  const DmaTiming t2 = model->schedule(req(0x1200, 256), 10, 2);
  const DmaTiming t3 = model->schedule(req(0x1300, 256), 10, 3);
  CHECK(t0.start == 10);
  CHECK(t0.end == 146);  // engine busy [10, 46), +100
  CHECK(t1.start == 46);
  CHECK(t1.end == 182);  // [46, 82)
  CHECK(t2.start == 82);
  CHECK(t2.end == 218);  // [82, 118)
  CHECK(t3.start == 118);
  CHECK(t3.end == 254);  // [118, 154)
}

TEST_CASE("fcfs-bandwidth: an idle engine starts a request at its issue cycle", "[timing]") {
  auto model = make_timing_model(with_timing(kFcfs));
  const DmaTiming a = model->schedule(req(0, 128), 0, 0);  // 4 + 16 = 20: busy [0, 20), end 120
  CHECK(a.start == 0);
  CHECK(a.end == 120);
  const DmaTiming b = model->schedule(req(0, 128), 500, 1);  // idle since 20
  CHECK(b.start == 500);
  CHECK(b.end == 620);
  const DmaTiming c = model->schedule(req(64, 128), 510, 2);  // 2 lines: 4 + 32 = 36; queued behind b until 520
  CHECK(c.start == 520);
  CHECK(c.end == 656);
}

TEST_CASE("fcfs-bandwidth charges partial and misaligned blocks as whole transactions", "[timing]") {
  nlohmann::json t = kFcfs;
  t["request_overhead_cycles"] = 0;
  t["latency_cycles"] = 0;
  auto model = make_timing_model(with_timing(t));
  // 4 bytes cost a whole 128-byte line: 16 cycles.
  CHECK(model->schedule(req(0, 4), 0, 0).end == 16);
  // 16 strided blocks of 4 bytes, one per line: 16 lines = 256 cycles, following the first request.
  CHECK(model->schedule(req(0, 64, 4, 124), 16, 0).end == 16 + 256);
}

TEST_CASE("fcfs-bandwidth defaults and the ideal model", "[timing]") {
  SECTION("ideal with no parameters is free and instantaneous") {
    auto model = make_timing_model(with_timing({{"model", "ideal"}}));
    CHECK(model->issue_cycles(req(0, 4096)) == 0);
    const DmaTiming t = model->schedule(req(0, 4096), 77, 0);
    CHECK(t.start == 77);
    CHECK(t.end == 77);
  }
  SECTION("ideal with parameters: fixed latency, no contention") {
    auto model = make_timing_model(with_timing({{"model", "ideal"}, {"issue_cycles", 3}, {"latency_cycles", 50}}));
    CHECK(model->issue_cycles(req(0, 4)) == 3);
    for (int core = 0; core < 4; ++core) {
      const DmaTiming t = model->schedule(req(0, 1u << 16), 10, core);
      CHECK(t.start == 10);
      CHECK(t.end == 60);
    }
  }
  SECTION("fcfs-bandwidth defaults: issue 10, latency 100, 16 bytes per cycle, no overhead") {
    auto model = make_timing_model(with_timing({{"model", "fcfs-bandwidth"}}));
    CHECK(model->issue_cycles(req(0, 4)) == 10);
    const DmaTiming t = model->schedule(req(0, 256), 0, 0);  // 2 lines * 8 cycles
    CHECK(t.end == 116);
  }
  SECTION("the registry lists both") {
    const auto names = timing_model_names();
    CHECK(std::find(names.begin(), names.end(), "ideal") != names.end());
    CHECK(std::find(names.begin(), names.end(), "fcfs-bandwidth") != names.end());
    CHECK(std::is_sorted(names.begin(), names.end()));
  }
}

TEST_CASE("timing configuration errors name the JSON path", "[timing]") {
  SECTION("unknown model") {
    const std::string e = config_error(with_timing({{"model", "warp-drive"}}));
    CHECK_THAT(e, Catch::StartsWith("dma.timing.model"));
    CHECK_THAT(e, Catch::Contains("unknown timing model 'warp-drive'"));
    CHECK_THAT(e, Catch::Contains("fcfs-bandwidth"));
    CHECK_THAT(e, Catch::Contains("ideal"));
  }
  SECTION("model missing or not a string") {
    CHECK_THAT(config_error(with_timing(nlohmann::json::object())), Catch::Contains("dma.timing.model"));
    CHECK_THAT(config_error(with_timing({{"model", 3}})), Catch::Contains("dma.timing.model"));
  }
  SECTION("bytes_per_cycle must be > 0") {
    nlohmann::json t = kFcfs;
    t["bytes_per_cycle"] = 0;
    CHECK_THAT(config_error(with_timing(t)), Catch::Contains("dma.timing.bytes_per_cycle must be > 0"));
    t["bytes_per_cycle"] = -2.5;
    CHECK_THAT(config_error(with_timing(t)), Catch::Contains("dma.timing.bytes_per_cycle must be > 0"));
  }
  SECTION("negative cycles") {
    nlohmann::json t = kFcfs;
    t["latency_cycles"] = -1;
    CHECK_THAT(config_error(with_timing(t)), Catch::Contains("dma.timing.latency_cycles must be >= 0"));
    t = kFcfs;
    t["issue_cycles"] = -10;
    CHECK_THAT(config_error(with_timing(t)), Catch::Contains("dma.timing.issue_cycles must be >= 0"));
    t = kFcfs;
    t["request_overhead_cycles"] = -0.5;
    CHECK_THAT(config_error(with_timing(t)), Catch::Contains("dma.timing.request_overhead_cycles"));
    CHECK_THAT(config_error(with_timing({{"model", "ideal"}, {"latency_cycles", -3}})),
               Catch::Contains("dma.timing.latency_cycles must be >= 0"));
  }
  SECTION("not a number") {
    nlohmann::json t = kFcfs;
    t["issue_cycles"] = "ten";
    CHECK_THAT(config_error(with_timing(t)), Catch::Contains("dma.timing.issue_cycles must be a number"));
  }
  SECTION("unknown parameter") {
    nlohmann::json t = kFcfs;
    t["bandwidth"] = 8;
    const std::string e = config_error(with_timing(t));
    CHECK_THAT(e, Catch::Contains("unknown key dma.timing.bandwidth"));
    CHECK_THAT(e, Catch::Contains("bytes_per_cycle"));  // the known keys are listed
    CHECK_THAT(config_error(with_timing({{"model", "ideal"}, {"bytes_per_cycle", 8}})),
               Catch::Contains("unknown key dma.timing.bytes_per_cycle"));
  }
  SECTION("a valid config builds") {
    CHECK(config_error(with_timing(kFcfs)) == "no error");
  }
}

TEST_CASE("a registered model is picked by name", "[timing]") {
  struct Fixed final : TimingModel {
    Cycle issue_cycles(const DmaRequest&) const override { return 1; }
    DmaTiming schedule(const DmaRequest&, Cycle issue, int) override { return {issue, issue + 1000}; }
  };
  register_timing_model("test-fixed", [](const Arch&) { return std::make_unique<Fixed>(); });
  auto model = make_timing_model(with_timing({{"model", "test-fixed"}}));
  CHECK(model->schedule(req(0, 4), 5, 0).end == 1005);
}

TEST_CASE("transaction_shape counts lines per block and the blocks that start mid-line and cross one", "[timing]") {
  constexpr DeviceAddr kLine = 0x10'0000'0000ull;  // 128-byte aligned
  const auto aligned = transaction_shape(req(kLine, 256), 128);
  CHECK(aligned.transactions == 2);
  CHECK(aligned.realigned_blocks == 0);
  const auto crossing = transaction_shape(req(kLine + 80, 96), 128);  // bytes 80..175: two lines, mid-line start
  CHECK(crossing.transactions == 2);
  CHECK(crossing.realigned_blocks == 1);
  const auto inside = transaction_shape(req(kLine + 8, 32), 128);  // within one line: nothing to realign
  CHECK(inside.transactions == 1);
  CHECK(inside.realigned_blocks == 0);
  // Strided: 3 blocks of 64 bytes with a pitch of 96: offsets 8, 104 (crosses), 200 (crosses at 256).
  const auto strided = transaction_shape(req(kLine + 8, 192, 64, 32), 128);
  CHECK(strided.transactions == 5);
  CHECK(strided.realigned_blocks == 2);
  CHECK(count_transactions(req(kLine + 8, 192, 64, 32), 128) == strided.transactions);
}
