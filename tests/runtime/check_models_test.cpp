// Races between models run at the same time (ConcurrentMachine, pipelined; docs/checking.md): requests of different
// contexts that overlap in main memory with at least one put are a dma-race naming both models, whatever their
// times; reads of the same bytes, disjoint buffers and a sequential schedule are not.
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/runtime/check.hpp"
#include "ldmsim/runtime/concurrent.hpp"

using namespace ldmsim;

namespace {

constexpr CheckSet kAll{true, true, true};

/// Two models on one node: "writer" puts `shared` from core 0, "reader" gets it (or, `disjoint`, its own buffer)
/// from core 0; both read `common`. Returns each model's reports, formatted.
std::vector<std::string> run_models(ContextSchedule schedule, bool reader_writes, bool disjoint) {
  ConcurrentMachine node(Arch::preset("tiny"), {"writer", "reader"});
  Machine& first = node.context(0);
  auto shared = first.alloc<float>(64, AllocOptions{.name = "shared"});
  auto common = first.alloc<float>(64, AllocOptions{.name = "common"});
  auto own = first.alloc<float>(64, AllocOptions{.name = "own"});
  first.upload(shared, std::vector<float>(64, 1.0f));
  first.upload(common, std::vector<float>(64, 1.0f));
  first.upload(own, std::vector<float>(64, 1.0f));
  for (std::size_t k = 0; k < 2; ++k) enable_checks(node.context(k), kAll);
  std::vector<std::function<void(Machine&)>> programs;
  programs.emplace_back([&](Machine& m) {
    m.launch_kernel(LaunchSpec{.name = "produce"}, [&](Core& core) {
       auto buf = core.ldm().alloc<float>(64);
       core.get(buf, common).wait();
       if (core.id() == 0) core.put(shared, LdmSpan<const float>(buf)).wait();
     }).join();
  });
  programs.emplace_back([&](Machine& m) {
    m.launch_kernel(LaunchSpec{.name = "consume"}, [&](Core& core) {
       auto buf = core.ldm().alloc<float>(64);
       core.get(buf, common).wait();
       if (core.id() != 0) return;
       const DevicePtr<float> target = disjoint ? own : shared;
       if (reader_writes) {
         core.put(target, LdmSpan<const float>(buf)).wait();
       } else {
         core.get(buf, target).wait();
       }
     }).join();
  });
  for (const auto& e : node.run(programs, schedule)) REQUIRE_FALSE(e);
  std::vector<std::string> out;
  for (std::size_t k = 0; k < 2; ++k) {
    for (const auto& r : check_reports(node.context(k))) out.push_back(format_check_report(r));
  }
  return out;
}

}  // namespace

TEST_CASE("a model's put and another model's get of the same bytes at the same time race", "[check][concurrent]") {
  const auto reports = run_models(ContextSchedule::kPipelined, false, false);
  REQUIRE(reports.size() == 1);
  CHECK_THAT(reports[0], Catch::StartsWith("check dma-race (1 time): kernel"));
  CHECK_THAT(reports[0], Catch::Contains("model writer kernel") && Catch::Contains("model reader") &&
                             Catch::Contains("in 'shared'") && Catch::Contains("share no barrier"));
  // Two puts race too.
  const auto puts = run_models(ContextSchedule::kPipelined, true, false);
  REQUIRE(puts.size() == 1);
  CHECK_THAT(puts[0], Catch::Contains("Core::put") && Catch::Contains("in 'shared'"));
}

TEST_CASE("models reading the same bytes, writing their own or run one after another do not race",
          "[check][concurrent]") {
  CHECK(run_models(ContextSchedule::kPipelined, true, true).empty());    // the reader puts its own buffer
  CHECK(run_models(ContextSchedule::kSequential, true, false).empty());  // the programs are ordered
}
