// The compute timing model (see compute_model.hpp and docs/timing-model.md, "Compute").
#include "ldmsim/sim/compute_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "ldmsim/sim/enum_names.hpp"

namespace ldmsim {
namespace {

constexpr auto kDataTypeNames =
    enum_names<DataType>({{DataType::kF16, "f16"}, {DataType::kF32, "f32"}, {DataType::kF64, "f64"}});

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

std::uint64_t ceil_cycles(double count, double per_cycle) {
  return static_cast<std::uint64_t>(std::ceil(count / per_cycle));
}

/// The register block of most FMAs per ldm access with at most `max_rows` rows and `max_vectors` vectors of
/// `registers` registers (ComputeModel::register_block).
RegisterBlock best_register_block(std::uint64_t registers, std::uint64_t max_rows, std::uint64_t max_vectors) {
  RegisterBlock best{};
  double best_ratio = 0;
  for (std::uint64_t rows = 1; rows <= max_rows; ++rows) {
    // FMAs per ldm access of one k step, rows*v / (rows + v), grows with v: each row count's best block has the
    // most vectors that fit (rows*v + rows + v registers). Ties go to the fewer rows (fewer wasted edge lanes).
    const std::uint64_t fit = rows < registers ? (registers - rows) / (rows + 1) : 0;
    const std::uint64_t vectors = std::min(max_vectors, fit);
    if (vectors == 0) break;  // fit only falls as rows grow: no larger row count fits a vector either
    const double ratio = static_cast<double>(rows * vectors) / static_cast<double>(rows + vectors);
    if (ratio > best_ratio + 1e-12) {
      best = {static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(vectors)};
      best_ratio = ratio;
    }
  }
  return best;
}

}  // namespace

std::string_view to_string(DataType type) noexcept {
  return kDataTypeNames.name(type);
}

double ComputeModel::peak_flops_per_cycle(DataType type) const {
  const VectorUnit& u = unit(type);
  return 2.0 * u.simd_lanes * u.fma_per_cycle;
}

std::uint64_t ComputeModel::cycles(const KernelWork& work) const {
  const VectorUnit& u = unit(work.type);
  const std::uint64_t arithmetic =
      ceil_cycles(static_cast<double>(work.vector_fmas) + static_cast<double>(work.vector_ops), u.fma_per_cycle);
  const std::uint64_t memory = ceil_cycles(static_cast<double>(work.ldm_accesses), ldm_accesses_per_cycle);
  const std::uint64_t body = dual_issue ? std::max(arithmetic, memory) : arithmetic + memory;
  return body + work.loops * loop_overhead_cycles;
}

RegisterBlock ComputeModel::register_block(DataType type, std::uint64_t m, std::uint64_t n) const {
  const std::uint64_t lanes = unit(type).simd_lanes;
  const std::uint64_t max_rows = std::min<std::uint64_t>(std::max<std::uint64_t>(m, 1), vector_registers);
  const std::uint64_t max_vectors =
      std::min<std::uint64_t>(ceil_div(std::max<std::uint64_t>(n, 1), lanes), vector_registers);
  // Called per tile multiply and per blocking the search prices; the answer depends on three small numbers, so
  // each thread keeps its last answers (direct-mapped).
  struct Answer {
    std::uint64_t registers = 0, rows = 0, vectors = 0;  // registers 0: empty
    RegisterBlock block{};
  };
  thread_local std::array<Answer, 256> answers;
  Answer& a = answers[((vector_registers * 31 + max_rows) * 37 + max_vectors) % answers.size()];
  if (a.registers != vector_registers || a.rows != max_rows || a.vectors != max_vectors) {
    a = {vector_registers, max_rows, max_vectors, best_register_block(vector_registers, max_rows, max_vectors)};
  }
  return a.block;
}

KernelWork ComputeModel::matmul_tile(DataType type, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                                     bool accumulate) const {
  KernelWork work{.type = type};
  if (m == 0 || n == 0 || k == 0) return work;
  const RegisterBlock block = register_block(type, m, n);
  const std::uint64_t vectors_per_row = ceil_div(n, unit(type).simd_lanes);
  const std::uint64_t blocks = ceil_div(m, block.rows) * ceil_div(vectors_per_row, block.vectors);
  const std::uint64_t accumulators = std::uint64_t{block.rows} * block.vectors;
  work.vector_fmas = blocks * k * accumulators;
  work.ldm_accesses = blocks * (k * (block.rows + block.vectors) + accumulators * (accumulate ? 2 : 1));
  work.loops = blocks;
  return work;
}

KernelWork ComputeModel::elementwise(DataType type, std::uint64_t elements, std::uint32_t ops, std::uint32_t loads,
                                     std::uint32_t stores) const {
  const std::uint64_t vectors = ceil_div(elements, unit(type).simd_lanes);
  return KernelWork{.type = type,
                    .vector_fmas = 0,
                    .vector_ops = vectors * ops,
                    .ldm_accesses = vectors * (loads + stores),
                    .loops = elements == 0 ? 0u : 1u};
}

ComputeModel ComputeModel::scalar(double flops_per_cycle) {
  ComputeModel model;
  for (VectorUnit& u : model.units) u = VectorUnit{.simd_lanes = 1, .fma_per_cycle = flops_per_cycle / 2};
  model.ldm_accesses_per_cycle = std::max(1.0, flops_per_cycle);
  return model;
}

}  // namespace ldmsim
