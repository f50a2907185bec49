// The host arithmetic of ldm tiles (see tile_math.hpp; kernels/CMakeLists.txt sets this file's flags).
#include "tile_math.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LDMSIM_TILE_CLONES [[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
#else
#define LDMSIM_TILE_CLONES
#endif

namespace ldmsim::ops {

// Row i of acc gains a[i, t] * (row t of b) for t in order: the j loop vectorises, the k order is kept.
LDMSIM_TILE_CLONES void multiply_add(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols,
                                     std::size_t depth, std::size_t acc_pitch) {
  for (std::size_t i = 0; i < rows; ++i) {
    float* __restrict out = acc + i * acc_pitch;
    for (std::size_t t = 0; t < depth; ++t) {
      const float x = a[i * depth + t];
      const float* __restrict row = b + t * cols;
      for (std::size_t j = 0; j < cols; ++j) out[j] += x * row[j];
    }
  }
}

}  // namespace ldmsim::ops
