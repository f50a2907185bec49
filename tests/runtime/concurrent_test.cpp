// Several models' contexts on one machine (ConcurrentMachine): one context behaves exactly like a plain Machine;
// pipelined contexts give the same results as sequential ones with fewer idle core-cycles; each context owns its
// share of the ldm; the coarse-grained switch is charged as documented; a deadlock in one model becomes its fault
// while the other finishes; runs are identical for any host thread count; bad setups are refused.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/runtime/schedule_waits.hpp"

using namespace ldmsim;

namespace {

constexpr std::size_t kTile = 256;  // elements per core per step

/// Each core streams `steps` tiles of `in`: get, wait, compute, scale by (k + 2), put. A DMA-bound loop: the core
/// idles while its tiles land.
void stream_kernel(Core& core, DevicePtr<const float> in, DevicePtr<float> out, std::size_t steps, int k) {
  auto buf = core.ldm().alloc<float>(kTile);
  const std::size_t cores = static_cast<std::size_t>(core.group_size());
  for (std::size_t s = 0; s < steps; ++s) {
    const std::size_t at = (s * cores + static_cast<std::size_t>(core.id())) * kTile;
    core.wait(core.get(buf, in + at));
    for (auto& v : buf) v *= static_cast<float>(k + 2);
    core.compute({.cycles = 300});
    core.wait(core.put(out + at, buf));
  }
}

struct Buffers {
  DevicePtr<float> in, out;
  std::size_t elements;
};

Buffers stage(Machine& m, std::size_t steps, int k) {
  const std::size_t n = steps * static_cast<std::size_t>(m.arch().cores_per_group()) * kTile;
  Buffers b{m.alloc<float>(n), m.alloc<float>(n), n};
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i % 97) + static_cast<float>(k);
  m.upload(b.in, values);
  return b;
}

std::vector<float> run_stream(Machine& m, std::size_t steps, int k) {
  const Buffers b = stage(m, steps, k);
  m.launch(LaunchSpec{.name = "stream"}, stream_kernel, DevicePtr<const float>(b.in.addr()), b.out, steps, k).join();
  std::vector<float> out(b.elements);
  m.download(std::span<float>(out), DevicePtr<const float>(b.out.addr()));
  return out;
}

std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("ldmsim_concurrent_" + std::to_string(getpid()) + "_" + name);
}

struct ModelRun {
  std::vector<std::vector<float>> outputs;
  ConcurrentStats stats;
  std::vector<std::exception_ptr> outcome;
  std::string trace;
  Cycle held_cycles = 0;  // the schedule's spans of the contexts (switches excluded)
};

ModelRun run_models(const Arch& arch, const std::vector<std::size_t>& steps, ContextSchedule schedule,
                    unsigned threads = 0) {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < steps.size(); ++k) names.push_back("m" + std::to_string(k));
  ConcurrentMachine node(arch, names, MachineOptions{.threads = threads});
  ModelRun run;
  run.outputs.resize(steps.size());
  std::vector<std::function<void(Machine&)>> programs;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    programs.emplace_back(
        [&run, &steps, k](Machine& m) { run.outputs[k] = run_stream(m, steps[k], static_cast<int>(k)); });
  }
  run.outcome = node.run(programs, schedule);
  run.stats = node.stats();
  for (const auto& group : node.schedule())
    for (const auto& core : group)
      for (const ScheduleSpan& span : core) run.held_cycles += span.context == kSwitchSpan ? 0 : span.end - span.start;
  const auto file = temp_file("models.ldmtrace");
  node.write_trace(file);
  run.trace = read_all(file);
  std::filesystem::remove(file);
  return run;
}

Arch one_core_arch() {
  Arch a = Arch::preset("tiny");
  a.rows = 1;
  a.cols = 1;
  return a;
}

}  // namespace

TEST_CASE("one context runs exactly like a plain Machine: results, cycles, stats and trace bytes", "[concurrent]") {
  const Arch arch = Arch::preset("sw26010");
  Machine plain(arch);
  const std::vector<float> expected = run_stream(plain, 3, 0);
  const auto plain_file = temp_file("plain.ldmtrace");
  plain.write_trace(plain_file);

  const ModelRun shared = run_models(arch, {3}, ContextSchedule::kPipelined);
  REQUIRE_FALSE(shared.outcome[0]);
  CHECK(shared.outputs[0] == expected);
  CHECK(shared.stats.makespan == plain.stats().cycles);
  CHECK(shared.stats.switches() == 0);
  CHECK(shared.trace == read_all(plain_file));
  std::filesystem::remove(plain_file);
}

TEST_CASE("pipelined models give the sequential results with fewer idle core-cycles", "[concurrent]") {
  const Arch arch = Arch::preset("sw26010");
  const std::vector<std::size_t> steps = {2, 3, 2};
  const ModelRun sequential = run_models(arch, steps, ContextSchedule::kSequential);
  const ModelRun pipelined = run_models(arch, steps, ContextSchedule::kPipelined);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    REQUIRE_FALSE(sequential.outcome[k]);
    REQUIRE_FALSE(pipelined.outcome[k]);
    CHECK(pipelined.outputs[k] == sequential.outputs[k]);
    // and the values are right: (i % 97 + k) * (k + 2)
    for (std::size_t i = 0; i < pipelined.outputs[k].size(); i += 1009) {
      CHECK(pipelined.outputs[k][i] ==
            (static_cast<float>(i % 97) + static_cast<float>(k)) * static_cast<float>(k + 2));
    }
  }
  // The same work: every core-cycle of compute and DMA issue is charged once in both schedules.
  CHECK(pipelined.stats.busy_cycles() == sequential.stats.busy_cycles());
  // The physical cores' record agrees: a context holds a core exactly for its charged work.
  CHECK(pipelined.held_cycles == pipelined.stats.busy_cycles());
  CHECK(sequential.held_cycles == sequential.stats.busy_cycles());
  CHECK(pipelined.stats.makespan < sequential.stats.makespan);
  CHECK(pipelined.stats.idle_core_cycles() < sequential.stats.idle_core_cycles());
  CHECK(pipelined.stats.switches() > sequential.stats.switches());
  // Sequential: each model starts when the previous one ended.
  CHECK(sequential.stats.context_end[0] < sequential.stats.context_end[1]);
  CHECK(sequential.stats.context_end[1] < sequential.stats.context_end[2]);
  CHECK(sequential.stats.makespan == sequential.stats.context_end[2]);
}

TEST_CASE("a core switches context only at a stall, and each switch costs context_switch_cycles", "[concurrent]") {
  Arch arch = one_core_arch();  // tiny: context_switch_cycles 10
  REQUIRE(arch.context_switch_cycles == 10);
  ConcurrentMachine node(arch, {"a", "b"});
  std::vector<Cycle> ends(2);
  const auto outcome =
      node.run({[&](Machine& m) {
                  m.launch(LaunchSpec{.name = "long"}, [](Core& core) {
                     core.compute({.cycles = 100});
                     core.wait_until(core.cycle() + 1000);  // a stall: the core is free for b
                     core.compute({.cycles = 100});
                   }).join();
                  ends[0] = m.stats().cycles;
                },
                [&](Machine& m) {
                  m.launch(LaunchSpec{.name = "short"}, [](Core& core) { core.compute({.cycles = 50}); }).join();
                  ends[1] = m.stats().cycles;
                }},
               ContextSchedule::kPipelined);
  REQUIRE_FALSE(outcome[0]);
  REQUIRE_FALSE(outcome[1]);
  // a holds the core [0, 100); b waits for a's stall, switches in at 100 and runs [110, 160); a's wait ends at 1100,
  // it switches back in: [1110, 1210).
  CHECK(ends[1] == 160);
  CHECK(ends[0] == 1210);
  const ConcurrentStats s = node.stats();
  CHECK(s.makespan == 1210);
  CHECK(s.switches() == 2);
  CHECK(s.switch_cycles() == 20);
  CHECK(s.busy_cycles() == 250);
  CHECK(s.idle_core_cycles() == 1210 - 250 - 20);
  CHECK(node.context(1).stats().groups[0].cores[0].context_wait_cycles == 110);
  const auto spans = node.schedule()[0][0];
  REQUIRE(spans.size() == 5);
  CHECK((spans[0].start == 0 && spans[0].end == 100 && spans[0].context == 0));
  CHECK((spans[1].start == 100 && spans[1].end == 110 && spans[1].context == kSwitchSpan));
  CHECK((spans[2].start == 110 && spans[2].end == 160 && spans[2].context == 1));
  CHECK((spans[4].start == 1110 && spans[4].end == 1210 && spans[4].context == 0));
}

TEST_CASE("each core records its models' DMA waits, which the schedule tells apart from idle time", "[concurrent]") {
  const Arch arch = Arch::preset("sw26010");
  ConcurrentMachine node(arch, {"m0", "m1"});
  std::vector<std::function<void(Machine&)>> programs;
  for (int k = 0; k < 2; ++k)
    programs.emplace_back([k](Machine& m) { run_stream(m, 2 + static_cast<std::size_t>(k), k); });
  for (const auto& e : node.run(programs, ContextSchedule::kPipelined)) REQUIRE_FALSE(e);
  const auto waits = dma_waits(node);
  REQUIRE(waits.size() == static_cast<std::size_t>(arch.core_groups));
  REQUIRE(node.stats().schedule_compactions() == 0);
  Cycle total = 0;
  for (std::size_t g = 0; g < waits.size(); ++g) {
    REQUIRE(waits[g].size() == static_cast<std::size_t>(arch.cores_per_group()));
    for (std::size_t c = 0; c < waits[g].size(); ++c) {
      // Per core and model, the waits add up to the model's own count of DMA-wait cycles on that core.
      for (std::uint32_t k = 0; k < 2; ++k) {
        Cycle sum = 0;
        for (const ScheduleSpan& w : waits[g][c]) sum += w.context == k ? w.end - w.start : 0;
        CHECK(sum == node.context(k).stats().groups[g].cores[c].dma_wait_cycles);
        total += sum;
      }
      for (std::size_t i = 1; i < waits[g][c].size(); ++i) CHECK(waits[g][c][i - 1].start <= waits[g][c][i].start);
    }
  }
  CHECK(total > 0);  // a DMA-bound stream: its cores wait
}

TEST_CASE("each context owns its share of every core's ldm", "[concurrent]") {
  const Arch arch = Arch::preset("tiny");  // 16 KiB ldm
  ConcurrentMachine node(arch, {"a", "b", "c"});
  CHECK(node.arch().ldm_bytes == 16384);
  for (std::size_t k = 0; k < 3; ++k) CHECK(node.context(k).arch().ldm_bytes == 5120);  // 16 KiB / 3, to 1 KiB

  // Both fill ldm offset 0 with their own values, stall, and write them back: neither sees the other's bytes.
  std::vector<std::vector<std::uint32_t>> back(2);
  std::vector<std::function<void(Machine&)>> programs;
  for (std::uint32_t k = 0; k < 2; ++k) {
    programs.emplace_back([&back, k](Machine& m) {
      auto in = m.alloc<std::uint32_t>(4 * 256);
      auto out = m.alloc<std::uint32_t>(4 * 256);
      std::vector<std::uint32_t> values(4 * 256);
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = k * 100000 + static_cast<std::uint32_t>(i);
      m.upload(in, values);
      m.launch(LaunchSpec{.name = "keep"}, [in, out](Core& core) {
         CHECK(core.ldm().capacity() == 5120);
         auto buf = core.ldm().alloc<std::uint32_t>(256);
         CHECK(buf.ldm_addr() == 0);
         const std::size_t at = static_cast<std::size_t>(core.id()) * 256;
         core.wait(core.get(buf, DevicePtr<const std::uint32_t>((in + at).addr())));
         core.wait_until(core.cycle() + 5000);  // the other context runs meanwhile
         core.wait(core.put(out + at, buf));
       }).join();
      back[k].resize(values.size());
      m.download(std::span<std::uint32_t>(back[k]), DevicePtr<const std::uint32_t>(out.addr()));
      CHECK(back[k] == values);
    });
  }
  programs.emplace_back([](Machine& m) {
    auto buf = m.alloc<std::uint32_t>(1024);
    // A DMA past the context's share traps, naming the share.
    try {
      m.launch(LaunchSpec{.name = "past"}, [buf](Core& core) {
         core.wait(core.dma(DmaRequest{.op = DmaOp::kGet, .main = buf.addr(), .ldm = 5120 - 8, .length = 64}));
       }).join();
      FAIL("the DMA past the share did not trap");
    } catch (const Fault& f) {
      CHECK(f.kind() == FaultKind::kDmaOutOfBounds);
      CHECK_THAT(f.what(), Catch::Contains("outside the 5120-byte local store"));
      CHECK_THAT(f.what(), Catch::Contains("kernel 'c:past'"));
    }
  });
  const auto outcome = node.run(programs, ContextSchedule::kPipelined);
  for (const auto& e : outcome) CHECK_FALSE(e);
}

TEST_CASE("a deadlocked model is reported as its fault, the other model finishes", "[concurrent][fault]") {
  const Arch arch = Arch::preset("tiny");
  ConcurrentMachine node(arch, {"stuck", "fine"});
  std::vector<float> fine;
  const auto outcome = node.run({[](Machine& m) {
                                   m.launch(LaunchSpec{.name = "skip"}, [](Core& core) {
                                      core.compute({.cycles = 40});
                                      if (core.id() != 0) core.barrier();  // core 0 never arrives
                                    }).join();
                                 },
                                 [&](Machine& m) { fine = run_stream(m, 4, 1); }},
                                ContextSchedule::kPipelined);
  REQUIRE(outcome[0]);
  CHECK_FALSE(outcome[1]);
  try {
    std::rethrow_exception(outcome[0]);
  } catch (const Fault& f) {
    CHECK(f.kind() == FaultKind::kDeadlock);
    CHECK_THAT(f.what(), Catch::Contains("kernel 'stuck:skip'"));
    CHECK_THAT(f.what(), Catch::Contains("core 0 (row 0, col 0): exited at cycle"));
    CHECK_THAT(f.what(), Catch::Contains("waiting at a group barrier"));
  }
  Machine alone(arch);
  CHECK(fine == run_stream(alone, 4, 1));
}

TEST_CASE("models that all deadlock end in faults, not a hang", "[concurrent][fault]") {
  ConcurrentMachine node(Arch::preset("tiny"), {"a", "b"});
  const auto stuck = [](Machine& m) {
    m.launch(LaunchSpec{.name = "get"}, [](Core& core) {
       if (core.id() == 1) core.block_until([] { return false; }, "a flag no core sets");
     }).join();
  };
  const auto outcome = node.run({stuck, stuck}, ContextSchedule::kPipelined);
  for (const auto& e : outcome) {
    REQUIRE(e);
    try {
      std::rethrow_exception(e);
    } catch (const Fault& f) {
      CHECK(f.kind() == FaultKind::kDeadlock);
      CHECK_THAT(f.what(), Catch::Contains("a flag no core sets"));
    }
  }
}

TEST_CASE("pipelined runs are identical for any host thread count", "[concurrent][determinism]") {
  const Arch arch = Arch::preset("sw26010");
  const ModelRun one = run_models(arch, {2, 3}, ContextSchedule::kPipelined, 1);
  const ModelRun four = run_models(arch, {2, 3}, ContextSchedule::kPipelined, 4);
  CHECK(one.outputs == four.outputs);
  CHECK(one.stats.to_json() == four.stats.to_json());
  CHECK(one.trace == four.trace);
  CHECK(run_models(arch, {2, 3}, ContextSchedule::kPipelined, 2).trace == one.trace);
}

TEST_CASE("impossible context setups are refused with a clear error", "[concurrent]") {
  CHECK_THROWS_WITH(ConcurrentMachine(Arch::preset("tiny"), {}), Catch::Contains("at least one context"));
  CHECK_THROWS_WITH(ConcurrentMachine(Arch::preset("tiny"), {"a", "a"}), Catch::Contains("two contexts are named 'a'"));
  std::vector<std::string> seventeen;
  for (int k = 0; k < 17; ++k) seventeen.push_back("m" + std::to_string(k));
  CHECK_THROWS_WITH(ConcurrentMachine(Arch::preset("tiny"), seventeen), Catch::Contains("at most 16 contexts fit"));
  ConcurrentMachine node(Arch::preset("tiny"), {"a", "b"});
  CHECK_THROWS_WITH(node.run({[](Machine&) {}}, ContextSchedule::kPipelined), Catch::Contains("1 programs for 2"));
}

TEST_CASE("a launch a program leaves unjoined ends with the program, also when it deadlocks", "[concurrent][fault]") {
  ConcurrentMachine node(Arch::preset("tiny"), {"a", "b"});
  std::optional<Launch> finished, stuck;
  const auto outcome =
      node.run({[&](Machine& m) {
                  finished.emplace(m.launch(LaunchSpec{.name = "k"}, [](Core& c) { c.compute({.cycles = 10}); }));
                },
                [&](Machine& m) {
                  stuck.emplace(m.launch(LaunchSpec{.name = "stuck"}, [](Core& c) {
                    if (c.id() != 0) c.barrier();  // core 0 never arrives
                  }));
                }},
               ContextSchedule::kPipelined);
  CHECK_FALSE(outcome[0]);
  CHECK_FALSE(outcome[1]);
  CHECK(node.context(0).stats().cycles == 10);
  finished->join();  // already ended with its program: nothing left to run
  try {
    stuck->join();  // its handle keeps the deadlock
    FAIL("the deadlock was lost");
  } catch (const Fault& f) {
    CHECK(f.kind() == FaultKind::kDeadlock);
    CHECK_THAT(f.what(), Catch::Contains("kernel 'b:stuck'"));
  }
}

TEST_CASE("a context launches only from its own program inside run()", "[concurrent]") {
  ConcurrentMachine node(Arch::preset("tiny"), {"a", "b"});
  const auto nothing = [](Core&) {};
  CHECK_THROWS_WITH(node.context(0).launch(LaunchSpec{}, nothing), Catch::Contains("outside its program"));
  const auto outcome =
      node.run({[&](Machine& m) {
                  m.launch(LaunchSpec{}, nothing).join();
                  node.context(1).launch(LaunchSpec{}, nothing).join();  // another context's machine: refused
                },
                [&](Machine& m) { m.launch(LaunchSpec{}, nothing).join(); }},
               ContextSchedule::kSequential);
  REQUIRE(outcome[0]);
  CHECK_THROWS_WITH(std::rethrow_exception(outcome[0]), Catch::Contains("context 'b' launched a kernel outside"));
  CHECK_FALSE(outcome[1]);
  // Pipelined too: a program may not launch on another context.
  const auto pipelined = node.run({[&](Machine&) { node.context(1).launch(LaunchSpec{}, nothing).join(); },
                                   [&](Machine& m) { m.launch(LaunchSpec{}, nothing).join(); }},
                                  ContextSchedule::kPipelined);
  REQUIRE(pipelined[0]);
  CHECK_THROWS_WITH(std::rethrow_exception(pipelined[0]), Catch::Contains("context 'b' launched a kernel outside"));
  CHECK_FALSE(pipelined[1]);
}

TEST_CASE("contexts on one core queue on its RMA engine", "[concurrent]") {
  const Arch arch = Arch::preset("sw26010pro");  // RMA 25.6 bytes per cycle
  const auto kernel = [](Core& core) {
    if (core.id() != 0) return;
    auto buf = core.ldm().alloc<std::uint32_t>(2048);  // 8 KiB: the link is busy for 320 cycles
    core.wait_until(core.rma(RmaRequest{.peer = 1, .local = buf.ldm_addr(), .remote = buf.ldm_addr(), .bytes = 8192}));
  };
  Machine alone(arch);
  alone.launch(LaunchSpec{.groups = {0}}, kernel).join();
  const Cycle one = alone.stats().cycles;
  ConcurrentMachine node(arch, {"a", "b"});
  std::vector<Cycle> ends(2);
  std::vector<std::function<void(Machine&)>> programs;
  for (std::size_t k = 0; k < 2; ++k) {
    programs.emplace_back([&, k](Machine& m) {
      m.launch(LaunchSpec{.groups = {0}}, kernel).join();
      ends[k] = m.stats().cycles;
    });
  }
  for (const auto& e : node.run(programs, ContextSchedule::kPipelined)) CHECK_FALSE(e);
  CHECK(ends[0] == one + arch.context_switch_cycles);  // a's wait let b in; a switches back afterwards
  CHECK(ends[1] >= one + 320);                         // b's put waits for a's on the shared link
}

TEST_CASE("register communication between contexts: values arrive and busy time equals the cores' held time",
          "[concurrent]") {
  ConcurrentMachine node(Arch::preset("sw26010"), {"a", "b"});
  std::vector<int> errors(2, -1);
  std::vector<std::function<void(Machine&)>> programs;
  for (std::uint32_t k = 0; k < 2; ++k) {
    programs.emplace_back([k, &errors](Machine& m) {
      int bad = 0;
      m.launch(LaunchSpec{.groups = {0}, .name = "reg"}, [&](Core& core) {
         for (std::uint32_t round = 0; round < 4; ++round) {
           if (core.col() == 0) {
             core.compute({.cycles = 1000});
             RegValue v;
             const std::uint32_t x = k * 100 + round;
             std::memcpy(v.bytes.data(), &x, 4);
             core.reg_put(RegBus::kRow, 1, v);
           } else if (core.col() == 1) {
             const RegValue v = core.reg_get(RegBus::kRow);
             std::uint32_t x = 0;
             std::memcpy(&x, v.bytes.data(), 4);
             bad += x == k * 100 + round ? 0 : 1;
           }
         }
       }).join();
      errors[k] = bad;
    });
  }
  for (const auto& e : node.run(programs, ContextSchedule::kPipelined)) CHECK_FALSE(e);
  CHECK(errors == std::vector<int>{0, 0});
  Cycle held = 0;
  for (const auto& group : node.schedule())
    for (const auto& core : group)
      for (const ScheduleSpan& span : core) held += span.context == kSwitchSpan ? 0 : span.end - span.start;
  CHECK(held == node.stats().busy_cycles());
  CHECK(node.stats().schedule_compactions() == 0);
}
