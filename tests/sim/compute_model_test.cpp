// The compute timing model: peaks of the presets, cycles of hand-computed work (dual issue and not, loop
// overheads), the register block a tile matmul gets and its instruction counts, and the arch file's "compute"
// object (defaults, errors that name the JSON path).
#include "ldmsim/sim/compute_model.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/fault.hpp"

using namespace ldmsim;
using Catch::Matchers::Contains;

namespace {

std::string error_of(const nlohmann::json& tree) {
  try {
    Arch::from_json(tree, "t.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

nlohmann::json with_compute(const nlohmann::json& compute) {
  nlohmann::json tree = Arch::preset("tiny").to_json();
  tree["core_groups"]["cores"]["compute"] = compute;
  return tree;
}

}  // namespace

TEST_CASE("preset peaks follow from lanes and FMA rates", "[compute]") {
  const ComputeModel sw = Arch::preset("sw26010").compute;
  CHECK(sw.peak_flops_per_cycle(DataType::kF64) == 8.0);  // 4 lanes x 1 FMA x 2: 742.4 GFLOPS per group
  CHECK(sw.peak_flops_per_cycle(DataType::kF32) == 8.0);
  const ComputeModel pro = Arch::preset("sw26010pro").compute;
  CHECK(pro.peak_flops_per_cycle(DataType::kF64) == 16.0);
  CHECK(pro.peak_flops_per_cycle(DataType::kF32) == 32.0);
  CHECK(pro.peak_flops_per_cycle(DataType::kF16) == 64.0);
  // tiny has no "compute" object: every type does flops_per_cycle (1).
  CHECK(Arch::preset("tiny").compute == ComputeModel::scalar(1.0));
  CHECK(Arch::preset("tiny").compute.peak_flops_per_cycle(DataType::kF16) == 1.0);
}

TEST_CASE("cycles: the arithmetic and ldm pipes overlap under dual issue, plus loop overheads", "[compute]") {
  ComputeModel m = Arch::preset("sw26010").compute;  // 1 vector FMA and 1 ldm access per cycle, 10 per loop
  const KernelWork w{.type = DataType::kF32, .vector_fmas = 100, .vector_ops = 20, .ldm_accesses = 150, .loops = 2};
  CHECK(m.cycles(w) == 150 + 20);  // max(120, 150) + 2 x 10
  m.dual_issue = false;
  CHECK(m.cycles(w) == 120 + 150 + 20);
  m.ldm_accesses_per_cycle = 2;
  m.unit(DataType::kF32).fma_per_cycle = 0.5;
  CHECK(m.cycles(w) == 240 + 75 + 20);
  CHECK(m.cycles(KernelWork{}) == 0);
}

TEST_CASE("a tile matmul is charged as its register-blocked micro-kernel", "[compute]") {
  const ComputeModel m = Arch::preset("sw26010").compute;  // 32 registers, 4 f32 lanes
  // rows x vectors accumulators + rows + vectors registers <= 32; 4 x 5 (and 5 x 4) give 20 FMAs per 9
  // accesses, the best ratio; the first found (fewer rows) is kept.
  const RegisterBlock big = m.register_block(DataType::kF32, 64, 64);
  CHECK(big.rows == 4);
  CHECK(big.vectors == 5);
  const RegisterBlock one_row = m.register_block(DataType::kF32, 1, 64);
  CHECK(one_row.rows == 1);
  CHECK(one_row.vectors == 15);  // 15 + 1 + 15 = 31 registers
  // C[5, 16] = A[5, 10] B[10, 16]: 4 vectors per row, so the block is 5 x 4: one block, 10 k steps of 20 FMAs and 9
  // loads, 20 stores of C.
  const KernelWork w = m.matmul_tile(DataType::kF32, 5, 16, 10, false);
  CHECK(w.vector_fmas == 200);
  CHECK(w.ldm_accesses == 110);
  CHECK(w.loops == 1);
  CHECK(m.cycles(w) == 210);
  // Accumulating loads C too; a 6 x 17 tile (5 vectors per row) is two 4 x 5 blocks (the edge charged whole).
  CHECK(m.matmul_tile(DataType::kF32, 5, 16, 10, true).ldm_accesses == 130);
  const KernelWork edge = m.matmul_tile(DataType::kF32, 6, 17, 10, false);
  CHECK(edge.loops == 2);
  CHECK(edge.vector_fmas == 2 * 10 * 20);
  // Element-wise: 10 elements are 3 vectors of 4.
  const KernelWork e = m.elementwise(DataType::kF32, 10, 2, 1, 1);
  CHECK(e.vector_ops == 6);
  CHECK(e.ldm_accesses == 6);
  CHECK(m.cycles(e) == 6 + 10);
}

TEST_CASE("the arch file's compute object: defaults, round trip and errors", "[compute][arch]") {
  const Arch pro = Arch::preset("sw26010pro");
  CHECK(Arch::from_json(pro.to_json(), "round trip") == pro);
  nlohmann::json partial = with_compute({{"f32", {{"simd_lanes", 8}}}, {"dual_issue", false}});
  const Arch a = Arch::from_json(partial, "t.json");
  CHECK(a.compute.unit(DataType::kF32).simd_lanes == 8);
  CHECK(a.compute.unit(DataType::kF32).fma_per_cycle == 0.5);  // from flops_per_cycle 1
  CHECK_FALSE(a.compute.dual_issue);
  CHECK(a.compute.unit(DataType::kF64) == VectorUnit{1, 0.5});
  CHECK_THAT(error_of(with_compute({{"f32", {{"simd_lanes", 0}}}})),
             Contains("t.json: core_groups.cores.compute.f32.simd_lanes must be in 1..4096 (got 0)"));
  CHECK_THAT(error_of(with_compute({{"f16", {{"simd_lane", 4}}}})),
             Contains("unknown key core_groups.cores.compute.f16.simd_lane (did you mean "
                      "core_groups.cores.compute.f16.simd_lanes?)"));
  CHECK_THAT(error_of(with_compute({{"f64", {{"fma_per_cycle", -1}}}})),
             Contains("core_groups.cores.compute.f64.fma_per_cycle must be > 0"));
  CHECK_THAT(error_of(with_compute({{"f64", {{"fma_per_cycle", 1e9}}}})),
             Contains("core_groups.cores.compute.f64.fma_per_cycle must be in [1/4096, 1024] per cycle"));
  // A rate near zero would make cycles overflow their counter: refused, not silently wrapped.
  CHECK_THAT(error_of(with_compute({{"f32", {{"fma_per_cycle", 1e-300}}}})),
             Contains("core_groups.cores.compute.f32.fma_per_cycle must be in [1/4096, 1024] per cycle (got 1e-300)"));
  CHECK_THAT(error_of(with_compute({{"ldm_accesses_per_cycle", 1e-9}})),
             Contains("core_groups.cores.compute.ldm_accesses_per_cycle must be in [1/4096, 1024]"));
  CHECK_THAT(error_of(with_compute({{"dual_issue", "yes"}})),
             Contains("core_groups.cores.compute.dual_issue must be true or false"));
  CHECK_THAT(error_of(with_compute({{"vector_registers", 2}})),
             Contains("core_groups.cores.compute.vector_registers must be in 3..1024 (got 2)"));
  CHECK_THAT(error_of(with_compute({{"loop_overhead_cycles", -1}})),
             Contains("core_groups.cores.compute.loop_overhead_cycles must be in 0..1000000"));
  CHECK_THAT(error_of(with_compute(5)), Contains("core_groups.cores.compute must be an object"));
  CHECK_THAT(error_of(with_compute({{"f128", {}}})), Contains("unknown key core_groups.cores.compute.f128"));
}

TEST_CASE("the register block is the one an exhaustive search over every block shape finds", "[compute]") {
  // The search as first written: every rows x vectors block that fits, in order, keeping strict improvements.
  const auto exhaustive = [](const ComputeModel& m, DataType type, std::uint64_t rows_max, std::uint64_t n) {
    const std::uint64_t lanes = m.unit(type).simd_lanes, regs = m.vector_registers;
    const std::uint64_t max_rows = std::min<std::uint64_t>(std::max<std::uint64_t>(rows_max, 1), regs);
    const std::uint64_t max_vectors =
        std::min<std::uint64_t>((std::max<std::uint64_t>(n, 1) + lanes - 1) / lanes, regs);
    RegisterBlock best{};
    double best_ratio = 0;
    for (std::uint64_t r = 1; r <= max_rows; ++r) {
      for (std::uint64_t v = 1; v <= max_vectors; ++v) {
        if (r * v + r + v > regs) break;
        const double ratio = static_cast<double>(r * v) / static_cast<double>(r + v);
        if (ratio > best_ratio + 1e-12)
          best = {static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(v)}, best_ratio = ratio;
      }
    }
    return best;
  };
  std::size_t compared = 0;
  for (const char* preset : {"sw26010", "sw26010pro", "tiny"}) {
    ComputeModel m = Arch::preset(preset).compute;
    for (const std::uint32_t registers : {8u, 16u, 31u, 32u, 64u}) {
      m.vector_registers = registers;
      for (const DataType type : {DataType::kF32, DataType::kF16}) {
        for (std::uint64_t rows = 0; rows <= 70; ++rows) {
          for (std::uint64_t n = 0; n <= 600; n += (n < 64 ? 1 : 7)) {
            const RegisterBlock fast = m.register_block(type, rows, n), slow = exhaustive(m, type, rows, n);
            INFO(preset << " registers " << registers << " rows " << rows << " n " << n);
            REQUIRE(fast.rows == slow.rows);
            REQUIRE(fast.vectors == slow.vectors);
            ++compared;
          }
        }
      }
    }
  }
  CHECK(compared > 100000);
}
