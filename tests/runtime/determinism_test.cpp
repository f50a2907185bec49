// Determinism: a seeded randomized multi-kernel stress (random 4-byte-multiple tiles; PE, strided, BCAST and ROW
// transfers; compute; barriers of every scope; several launches over 4 core groups) gives identical cycle counts,
// stats JSON, trace events and markers, memory contents and trace files with 1, 2 and 4 host threads and across runs.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

constexpr std::uint64_t kRegion = 256 * 1024;  // each group's main-memory region
constexpr std::uint64_t kBuf = 4096;           // each core's main ldm buffer (allocated first: offset 0 everywhere)

/// 4 groups of 4 x 4 cores with a contended fcfs-bandwidth engine.
Arch stress_arch() {
  Arch a = Arch::preset("tiny");
  a.core_groups = 4;
  a.rows = 4;
  a.cols = 4;
  a.main_memory_bytes_per_cg = 16ull << 20;
  a.barrier_cycles = 12;
  a.flops_per_cycle = 4;
  a.dma.timing = {{"model", "fcfs-bandwidth"},
                  {"issue_cycles", 7},
                  {"latency_cycles", 90},
                  {"bytes_per_cycle", 6.5},
                  {"request_overhead_cycles", 3}};
  return Arch::from_json(a.to_json(), "stress");
}

enum class OpKind : std::uint8_t {
  kGet,
  kPut,
  kGetStrided,
  kPutStrided,
  kBcast,
  kRow,
  kCompute,
  kWaitAll,
  kAlloc,
  kFree
};

struct Op {
  OpKind kind = OpKind::kCompute;
  std::uint64_t main = 0;  // offset in the group's region
  std::uint64_t ldm = 0;   // offset in the core's buffer
  std::uint64_t length = 0;
  std::uint64_t bsize = 0;
  std::uint64_t stride = 0;
  std::uint32_t mask = 0;
  std::uint64_t flops = 0;
  Cycle cycles = 0;
  std::uint64_t align = 4;
  bool wait_now = true;
};

struct Phase {
  std::vector<std::vector<std::vector<Op>>> ops;  // [cg][core]
  Scope scope = Scope::kGroup;
};

struct Plan {
  std::vector<int> groups;
  std::string name;
  std::vector<Phase> phases;
};

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  /// Uniform in [lo, hi] (modulo bias is irrelevant here; the point is a fixed sequence).
  std::uint64_t in(std::uint64_t lo, std::uint64_t hi) { return lo + gen_() % (hi - lo + 1); }

 private:
  std::mt19937_64 gen_;
};

Op random_op(Rng& rng) {
  Op op;
  const std::uint64_t pick = rng.in(0, 99);
  op.wait_now = rng.in(0, 1) == 0;
  if (pick < 35) {
    op.kind = pick < 20 ? OpKind::kGet : OpKind::kPut;
    op.length = 4 * rng.in(1, 256);
    op.ldm = 4 * rng.in(0, (kBuf - op.length) / 4);
    op.main = 4 * rng.in(0, (kRegion - op.length) / 4);
  } else if (pick < 55) {
    op.kind = pick < 45 ? OpKind::kGetStrided : OpKind::kPutStrided;
    op.bsize = 4 * rng.in(1, 32);
    const std::uint64_t blocks = rng.in(1, 8);
    op.stride = 4 * rng.in(0, 32);
    op.length = op.bsize * blocks;
    const std::uint64_t span = blocks * op.bsize + (blocks - 1) * op.stride;
    op.ldm = 4 * rng.in(0, (kBuf - op.length) / 4);
    op.main = 4 * rng.in(0, (kRegion - span) / 4);
  } else if (pick < 65) {
    op.kind = pick < 60 ? OpKind::kBcast : OpKind::kRow;
    op.length = 4 * rng.in(1, 128);
    op.ldm = 4 * rng.in(0, (kBuf - op.length) / 4);
    op.main = 4 * rng.in(0, (kRegion - op.length) / 4);
    op.mask = static_cast<std::uint32_t>(rng.in(1, 15));
  } else if (pick < 85) {
    op.kind = OpKind::kCompute;
    op.flops = rng.in(0, 4000);
    op.cycles = rng.in(0, 150);
  } else if (pick < 90) {
    op.kind = OpKind::kWaitAll;
  } else if (pick < 95) {
    op.kind = OpKind::kAlloc;
    op.length = 4 * rng.in(1, 512);
    op.align = std::uint64_t{1} << rng.in(2, 7);
  } else {
    op.kind = OpKind::kFree;
  }
  return op;
}

std::vector<Plan> make_plans(std::uint64_t seed, const Arch& arch) {
  Rng rng(seed);
  const std::vector<std::vector<int>> groups = {{}, {1, 3}, {0, 1, 2, 3}, {2}, {0, 2, 3}};
  std::vector<Plan> plans;
  for (std::size_t l = 0; l < groups.size(); ++l) {
    Plan plan;
    plan.groups = groups[l];
    plan.name = "stress" + std::to_string(l);
    const std::uint64_t phases = rng.in(1, 4);
    for (std::uint64_t p = 0; p < phases; ++p) {
      Phase phase;
      phase.scope = static_cast<Scope>(rng.in(0, 2));
      phase.ops.resize(arch.core_groups);
      for (auto& cg : phase.ops) {
        cg.resize(arch.cores_per_group());
        for (auto& core : cg) {
          const std::uint64_t n = rng.in(0, 10);
          for (std::uint64_t i = 0; i < n; ++i) core.push_back(random_op(rng));
        }
      }
      plan.phases.push_back(std::move(phase));
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

void run_ops(Core& core, const std::vector<Op>& ops, DeviceAddr region, std::vector<LdmAddr>& extras,
             std::vector<DmaHandle>& pending) {
  for (const Op& op : ops) {
    DmaRequest r;
    r.main = region + op.main;
    r.ldm = op.ldm;
    r.length = op.length;
    r.api = "stress";
    switch (op.kind) {
      case OpKind::kCompute:
        core.compute({.flops = op.flops, .cycles = op.cycles});
        continue;
      case OpKind::kWaitAll:
        core.wait_all();
        pending.clear();
        continue;
      case OpKind::kAlloc:
        if (extras.size() < 4) extras.push_back(core.ldm().alloc_bytes(op.length, op.align));  // stays < 16 KiB
        continue;
      case OpKind::kFree:
        if (!extras.empty()) {
          core.ldm().free_at(extras.back());
          extras.pop_back();
        }
        continue;
      case OpKind::kGet:
        break;
      case OpKind::kPut:
        r.op = DmaOp::kPut;
        break;
      case OpKind::kGetStrided:
      case OpKind::kPutStrided:
        r.op = op.kind == OpKind::kGetStrided ? DmaOp::kGet : DmaOp::kPut;
        r.bsize = op.bsize;
        r.stride = op.stride;
        break;
      case OpKind::kBcast:
        r.mode = DmaMode::kBcast;
        r.row_mask = op.mask;
        break;
      case OpKind::kRow:
        r.mode = DmaMode::kRow;
        break;
    }
    DmaHandle h = core.dma(r);
    if (op.wait_now) {
      h.wait();
    } else {
      pending.push_back(h);
    }
  }
}

/// Everything observable about one run.
struct Outcome {
  Cycle cycles = 0;
  nlohmann::json stats;
  std::vector<std::vector<DmaEvent>> events;
  std::vector<std::vector<Marker>> markers;
  std::vector<std::vector<std::byte>> memory;
  std::string trace_file;
};

Outcome run_stress(std::uint64_t seed, unsigned threads) {
  const Arch arch = stress_arch();
  const auto plans = make_plans(seed, arch);
  Machine m{arch, MachineOptions{.threads = threads}};
  REQUIRE(m.threads() == std::min<unsigned>(threads, 4));
  std::vector<DeviceAddr> regions;
  for (int cg = 0; cg < 4; ++cg) {
    const DeviceAddr r = m.allocate_bytes(kRegion, {.cg = cg, .name = "region" + std::to_string(cg)});
    std::vector<std::byte> init(kRegion);
    for (std::size_t i = 0; i < init.size(); ++i)
      init[i] = static_cast<std::byte>((i * 131 + seed + 17 * static_cast<std::size_t>(cg)) & 0xFF);
    m.write_bytes(r, init);
    regions.push_back(r);
  }
  for (const Plan& plan : plans) {
    m.launch(LaunchSpec{.groups = plan.groups, .name = plan.name}, [&plan, &regions](Core& core) {
       const auto cg = static_cast<std::size_t>(core.cg());
       const auto id = static_cast<std::size_t>(core.id());
       const LdmAddr buf = core.ldm().alloc_bytes(kBuf, 64);
       std::vector<LdmAddr> extras;
       std::vector<DmaHandle> pending;
       for (const Phase& phase : plan.phases) {
         std::vector<Op> ops = phase.ops[cg][id];
         for (Op& op : ops) op.ldm += buf;
         run_ops(core, ops, regions[cg], extras, pending);
         core.barrier(phase.scope);
       }
       core.wait_all();
     }).join();
  }
  Outcome out;
  const RunStats s = m.stats();
  out.cycles = s.cycles;
  out.stats = s.to_json(true);
  for (const TraceRecorder* t : m.trace()) {
    std::vector<DmaEvent> events;
    t->for_each_dma([&](const DmaEvent& e) { events.push_back(e); });
    out.events.push_back(std::move(events));
    out.markers.push_back(t->markers());
  }
  for (DeviceAddr r : regions) {
    std::vector<std::byte> bytes(kRegion);
    m.read_bytes(r, bytes);
    out.memory.push_back(std::move(bytes));
  }
  const auto file = std::filesystem::temp_directory_path() /
                    ("ldmsim_determinism_" + std::to_string(::getpid()) + "_" + std::to_string(threads) + ".ldmtrace");
  m.write_trace(file, {{"workload", "stress"}});
  std::ifstream in(file, std::ios::binary);
  out.trace_file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  in.close();
  std::filesystem::remove(file);
  return out;
}

void require_same(const Outcome& a, const Outcome& b) {
  CHECK(a.cycles == b.cycles);
  CHECK(a.stats == b.stats);
  REQUIRE(a.events.size() == b.events.size());
  for (std::size_t g = 0; g < a.events.size(); ++g) {
    INFO("core group " << g);
    REQUIRE(a.events[g].size() == b.events[g].size());
    for (std::size_t i = 0; i < a.events[g].size(); ++i) {
      INFO("event " << i);
      REQUIRE(a.events[g][i] == b.events[g][i]);
    }
    CHECK(a.markers[g] == b.markers[g]);
    CHECK(a.memory[g] == b.memory[g]);
  }
  CHECK(a.trace_file.size() == b.trace_file.size());
  CHECK(a.trace_file == b.trace_file);
}

}  // namespace

TEST_CASE("a seeded random stress is identical for 1, 2 and 4 host threads and across runs", "[determinism]") {
  constexpr std::uint64_t kSeed = 20240611;
  const Outcome one = run_stress(kSeed, 1);
  // The stress must really exercise the machine, or the comparisons below prove nothing.
  REQUIRE(one.stats["dma_requests"].get<std::uint64_t>() > 1000);
  REQUIRE(one.cycles > 1000);
  std::size_t barriers = 0;
  std::size_t bcasts = 0;
  for (const auto& g : one.markers)
    for (const Marker& mk : g) barriers += mk.kind == MarkerKind::kBarrier ? 1 : 0;
  for (const auto& g : one.events)
    for (const DmaEvent& e : g) bcasts += e.mode == DmaMode::kBcast ? 1 : 0;
  CHECK(barriers > 20);
  CHECK(bcasts > 20);
  for (const auto& g : one.markers)
    for (const Marker& mk : g) REQUIRE(mk.kind != MarkerKind::kFault);
  CHECK(one.trace_file.size() > 1000);

  SECTION("2 threads") {
    require_same(one, run_stress(kSeed, 2));
  }
  SECTION("4 threads") {
    require_same(one, run_stress(kSeed, 4));
  }
  SECTION("repeated runs") {
    require_same(one, run_stress(kSeed, 1));
    require_same(run_stress(kSeed, 2), run_stress(kSeed, 2));
  }
  SECTION("a different seed gives a different run (the comparison is sensitive)") {
    const Outcome other = run_stress(kSeed + 1, 1);
    CHECK(other.stats != one.stats);
    CHECK(other.trace_file != one.trace_file);
  }
}
