// The compute timing model of a compute core: a vector unit per data type (SIMD lanes, vector FMA instructions
// per cycle), a memory pipe between ldm and the vector registers (vector loads/stores per cycle), whether the
// two pipes issue in the same cycle (SW26010's CPE has two pipelines: floating point and memory), and a loop
// overhead. Kernels describe their work as the instructions a well-written micro-kernel would issue
// (KernelWork); the model turns that into cycles. docs/timing-model.md ("Compute") derives the presets' values.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace ldmsim {

/// The element type a vector instruction works on.
enum class DataType : std::uint8_t { kF16, kF32, kF64 };

/// Bytes of one element.
constexpr std::uint32_t element_bytes(DataType type) {
  return type == DataType::kF16 ? 2 : type == DataType::kF32 ? 4 : 8;
}

/// The vector unit for one data type.
struct VectorUnit {
  std::uint32_t simd_lanes = 1;  ///< elements per vector register
  double fma_per_cycle = 0.5;    ///< vector FMA (or other arithmetic) instructions issued per cycle

  friend bool operator==(const VectorUnit&, const VectorUnit&) = default;
};

/// Instructions of a kernel's computation on ldm data, as a micro-kernel would issue them.
struct KernelWork {
  DataType type = DataType::kF32;
  std::uint64_t vector_fmas = 0;   ///< vector fused multiply-adds (2 flops per lane)
  std::uint64_t vector_ops = 0;    ///< other vector arithmetic instructions (1 flop per lane)
  std::uint64_t ldm_accesses = 0;  ///< vector loads and stores between ldm and registers
  std::uint64_t loops = 0;         ///< loop nests entered (each costs loop_overhead_cycles)
};

/// A register-blocked tile matrix multiply: rows x cols of C held in registers (cols in vectors).
struct RegisterBlock {
  std::uint32_t rows = 1;
  std::uint32_t vectors = 1;
};

struct ComputeModel {
  std::array<VectorUnit, 3> units{};  ///< by DataType
  std::uint32_t vector_registers = 32;
  double ldm_accesses_per_cycle = 1.0;
  bool dual_issue = true;  ///< arithmetic and ldm accesses issue in the same cycle
  std::uint32_t loop_overhead_cycles = 0;

  const VectorUnit& unit(DataType type) const { return units[static_cast<std::size_t>(type)]; }
  VectorUnit& unit(DataType type) { return units[static_cast<std::size_t>(type)]; }
  /// Peak flops per cycle of one core for `type` (2 per lane per vector FMA).
  double peak_flops_per_cycle(DataType type) const;
  /// Cycles of `work`: arithmetic and ldm access pipes (overlapped when dual_issue), plus loop overheads.
  std::uint64_t cycles(const KernelWork& work) const;

  /// The register block that maximises FMAs per ldm access for an m x n tile, within the vector registers
  /// (accumulators rows*vectors, plus one register per A element broadcast and per B vector).
  RegisterBlock register_block(DataType type, std::uint64_t m, std::uint64_t n) const;
  /// The work of C[m, n] (+)= A[m, k] B[k, n] on ldm tiles: per register block and k step, `rows` broadcast
  /// loads of A, `vectors` loads of B and rows*vectors FMAs; C loaded (when `accumulate`) and stored once per
  /// block; one loop per block. Edge blocks are charged whole (idle lanes cost what they cost on hardware).
  KernelWork matmul_tile(DataType type, std::uint64_t m, std::uint64_t n, std::uint64_t k, bool accumulate) const;
  /// The work of an element-wise pass over `elements`: `ops` arithmetic instructions, `loads` loads and `stores`
  /// stores per vector of elements, one loop.
  KernelWork elementwise(DataType type, std::uint64_t elements, std::uint32_t ops, std::uint32_t loads,
                         std::uint32_t stores) const;

  /// A model whose every data type does `flops_per_cycle` (one lane, flops_per_cycle / 2 FMAs per cycle): the
  /// default of an arch file without a "compute" object.
  static ComputeModel scalar(double flops_per_cycle);

  friend bool operator==(const ComputeModel&, const ComputeModel&) = default;
};

/// "f16" | "f32" | "f64".
std::string_view to_string(DataType type) noexcept;

}  // namespace ldmsim
