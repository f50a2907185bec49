// Vector work counted by the C++ simd.h types (ldmsim_simd_cxx.h) turned into simulated cycles: at every
// athread call and when the slave function returns, the instructions counted since the last look are charged
// to the running core through the arch's compute model (arithmetic and ldm pipes, dual issue).
#include "simd_charge.hpp"

#include "ldmsim/runtime/core.hpp"
#include "ldmsim/sim/compute_model.hpp"
#include "ldmsim_simd_cxx.h"

extern "C" {
thread_local struct ldmsim_simd_work_t __ldmsim_simd_work = {};
}

namespace ldmsim::athread {

void forget_simd_work() {
  __ldmsim_simd_work = {};
}

void charge_simd_work(Core& core) {
  ldmsim_simd_work_t& w = __ldmsim_simd_work;
  if (w.fmas[0] + w.fmas[1] + w.fmas[2] + w.ops[0] + w.ops[1] + w.ops[2] + w.ldm_accesses == 0) return;
  // 32-bit integer lanes run on the vector unit of f32 (the same lane count).
  KernelWork f64{.type = DataType::kF64, .vector_fmas = w.fmas[0], .vector_ops = w.ops[0]};
  KernelWork f32{.type = DataType::kF32, .vector_fmas = w.fmas[1] + w.fmas[2], .vector_ops = w.ops[1] + w.ops[2]};
  // The loads and stores overlap the arithmetic of the busier unit (one memory pipe).
  (f64.vector_fmas + f64.vector_ops >= f32.vector_fmas + f32.vector_ops ? f64 : f32).ldm_accesses = w.ldm_accesses;
  w = {};
  if (f64.vector_fmas + f64.vector_ops + f64.ldm_accesses != 0) core.compute(f64);
  if (f32.vector_fmas + f32.vector_ops + f32.ldm_accesses != 0) core.compute(f32);
}

}  // namespace ldmsim::athread
