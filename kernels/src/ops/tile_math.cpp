// The host arithmetic of ldm tiles (see tile_math.hpp; kernels/CMakeLists.txt sets this file's flags).
#include "tile_math.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LDMSIM_TILE_CLONES [[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
#define LDMSIM_TILE_WIDE [[gnu::target("arch=x86-64-v4")]]
#define LDMSIM_HAS_WIDE_TILES 1
#else
#define LDMSIM_TILE_CLONES
#define LDMSIM_HAS_WIDE_TILES 0
#endif

#if defined(__GNUC__)
#define LDMSIM_INLINE [[gnu::always_inline]] inline  // into each clone, so every clone vectorises it for its level
#else
#define LDMSIM_INLINE inline
#endif

namespace ldmsim::ops {
namespace {

// A copy of a few floats, inline: a call to memmove per tail row or panel row cost more than the copy (the file is
// compiled without -ftree-loop-distribute-patterns, which would turn this loop back into that call).
LDMSIM_INLINE void copy_floats(const float* from, std::size_t n, float* to) {
  for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
}

/// The x86 default NaN ("real indefinite": what an invalid operation such as inf - inf or 0 x inf gives).
constexpr std::uint32_t kDefaultNan = 0xffc00000u;

// v, or the default NaN for any NaN: a block's results as it stores them. Which of two NaNs a multiply-add keeps
// depends on the instruction (a fused multiply-add prefers its factors', an add its first operand's) and on the
// compiler's order of a sum's operands, so a NaN's sign and payload would differ from host to host; they mean
// nothing to the simulated machine. A sum without NaN operands is exact either way (the products of fp16 values are).
LDMSIM_INLINE float settled(float v) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
  return std::bit_cast<float>((u & 0x7fffffffu) > 0x7f800000u ? kDefaultNan : u);
}

// sum + x * y. Operands are fp16 values (tile_math.hpp), so the product is exact in fp32 and a fused multiply-add
// rounds once, exactly as the add after an exact multiply does: kFused only picks the cheaper instruction.
template <bool kFused>
LDMSIM_INLINE float add_product(float sum, float x, float y) {
  if constexpr (kFused) {
    return __builtin_fmaf(x, y, sum);
  } else {
    return sum + x * y;
  }
}

// A register block: R rows x C columns of acc stay in registers over the whole depth, so each b element loaded
// feeds R products (the plain loop reloads and stores acc for every product). Fixed sizes let the compiler keep
// the block in vector registers; each element still gains its products one by one in k order.
template <std::size_t R, std::size_t C, bool kFused>
LDMSIM_INLINE void multiply_add_block(const float* a, const float* b, float* acc, std::size_t b_pitch,
                                      std::size_t depth, std::size_t acc_pitch) {
  float block[R][C];
  for (std::size_t r = 0; r < R; ++r) {
    for (std::size_t j = 0; j < C; ++j) block[r][j] = acc[r * acc_pitch + j];
  }
  for (std::size_t t = 0; t < depth; ++t) {
    const float* row = b + t * b_pitch;
    for (std::size_t r = 0; r < R; ++r) {
      const float x = a[r * depth + t];
      for (std::size_t j = 0; j < C; ++j) block[r][j] = add_product<kFused>(block[r][j], x, row[j]);
    }
  }
  for (std::size_t r = 0; r < R; ++r) {
    for (std::size_t j = 0; j < C; ++j) acc[r * acc_pitch + j] = settled(block[r][j]);
  }
}

// A block of V x 8 columns in GCC vector extensions (the fixed-size loop does not vectorise below 32 columns): one
// 8-float vector per row and V; same products in the same k order as the loop.
using Float8 = float __attribute__((vector_size(32)));

template <std::size_t R, std::size_t V>
LDMSIM_INLINE void multiply_add_vectors(const float* a, const float* b, float* acc, std::size_t b_pitch,
                                        std::size_t depth, std::size_t acc_pitch) {
  Float8 block[R][V];
  for (std::size_t r = 0; r < R; ++r) std::memcpy(&block[r], acc + r * acc_pitch, sizeof(block[r]));
  for (std::size_t t = 0; t < depth; ++t) {
    Float8 row[V];
    std::memcpy(&row, b + t * b_pitch, sizeof(row));
    for (std::size_t r = 0; r < R; ++r) {
      const float x = a[r * depth + t];
      for (std::size_t v = 0; v < V; ++v) block[r][v] += x * row[v];
    }
  }
  for (std::size_t r = 0; r < R; ++r) {
    float row[V * 8];
    std::memcpy(row, &block[r], sizeof(row));
    for (std::size_t j = 0; j < V * 8; ++j) acc[r * acc_pitch + j] = settled(row[j]);
  }
}

/// Columns the last block of a row computes for the `cols % 32` columns after the 64- and 32-column blocks.
constexpr std::size_t tail_width(std::size_t rest) {
  return rest == 0 ? 0 : rest <= 8 ? 8 : rest <= 16 ? 16 : 32;
}

// R rows of acc, every column: blocks of 64 and 32 columns (sizes that vectorise at every x86-64 level), then the
// last < 32 columns as one block of 8, 16 or 32 over `tail` (b's last columns and padding, rows `tail_pitch`
// apart): padding columns only feed products that are thrown away. One or two rows first take blocks of `kWide`
// columns (64, or 128 where AVX-512's 32 vector registers hold their 16 accumulators): with so few rows each B
// element loaded feeds only one or two products, and a 64-column block streams B from the cache at about half the
// speed four rows reach; 128 columns read each B row in longer runs.
template <std::size_t R, std::size_t kWide, bool kFused>
LDMSIM_INLINE void multiply_add_rows(const float* a, const float* b, std::size_t b_pitch, const float* tail,
                                     std::size_t tail_pitch, float* acc, std::size_t cols, std::size_t depth,
                                     std::size_t acc_pitch, std::size_t j = 0) {
  if constexpr (R <= 2 && kWide > 64) {
    for (; j + kWide <= cols; j += kWide) {
      multiply_add_block<R, kWide, kFused>(a, b + j, acc + j, b_pitch, depth, acc_pitch);
    }
  }
  if constexpr (R <= 4) {  // 8 rows take 32 columns at a time (multiply_add_all)
    for (; j + 64 <= cols; j += 64) multiply_add_block<R, 64, kFused>(a, b + j, acc + j, b_pitch, depth, acc_pitch);
  }
  for (; j + 32 <= cols; j += 32) multiply_add_block<R, 32, kFused>(a, b + j, acc + j, b_pitch, depth, acc_pitch);
  if (j == cols) return;
  const std::size_t rest = cols - j, width = tail_width(rest);
  float block[R * 32] = {};
  for (std::size_t r = 0; r < R; ++r) copy_floats(acc + r * acc_pitch + j, rest, block + r * width);
  if (width == 8) {
    multiply_add_vectors<R, 1>(a, tail, block, tail_pitch, depth, width);
  } else if (width == 16) {
    multiply_add_vectors<R, 2>(a, tail, block, tail_pitch, depth, width);
  } else {
    multiply_add_block<R, 32, kFused>(a, tail, block, tail_pitch, depth, width);
  }
  for (std::size_t r = 0; r < R; ++r) copy_floats(block + r * width, rest, acc + r * acc_pitch + j);
}

constexpr std::size_t kDotLanes = 16;

LDMSIM_INLINE float dot(const float* x, const float* y, std::size_t n) {
  float lanes[kDotLanes] = {};
  std::size_t k = 0;
  for (; k + kDotLanes <= n; k += kDotLanes) {
    for (std::size_t j = 0; j < kDotLanes; ++j) lanes[j] += x[k + j] * y[k + j];
  }
  for (std::size_t j = 0; k + j < n; ++j) lanes[j] += x[k + j] * y[k + j];
  for (std::size_t width = kDotLanes / 2; width > 0; width /= 2) {
    for (std::size_t j = 0; j < width; ++j) lanes[j] += lanes[j + width];
  }
  return lanes[0];
}

}  // namespace

LDMSIM_TILE_CLONES void multiply_add_dots(const float* a, const float* v, float* acc, std::size_t rows,
                                          std::size_t vectors, std::size_t depth, std::size_t acc_pitch) {
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < vectors; ++c) {
      acc[r * acc_pitch + c] = settled(acc[r * acc_pitch + c] + dot(a + r * depth, v + c * depth, depth));
    }
  }
}

std::size_t b_pitch_for(std::size_t cols) {
  return cols / 32 * 32 + tail_width(cols % 32);
}

void zero_padding(float* tile, std::size_t rows, std::size_t cols, std::size_t pitch) {
  for (std::size_t r = 0; pitch > cols && r < rows; ++r)
    std::fill(tile + r * pitch + cols, tile + (r + 1) * pitch, 0.0f);
}

namespace {

/// Rows from which B's 64-column panels are first copied into one contiguous run each. B's rows lie `b_pitch`
/// floats apart, often a multiple of 512 bytes, so a 64-column block reading 256 bytes of every row leaves most of
/// L1's sets unused and streams B from L2 again for every 4 rows; a packed panel stays in L1. From 8 rows each copy
/// serves at least two blocks.
constexpr std::size_t kPackFromRows = 8;

/// The first float of `p` on a 64-byte cache line (the storage holds 16 floats more than it is used for): a panel row
/// then fills one line, and no vector load of it straddles two.
inline float* aligned_line(float* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  return p + ((64 - at % 64) % 64) / sizeof(float);
}

/// acc[rows, 64] += a[rows, depth] panel[depth, 64], the panel's rows 64 floats apart.
template <bool kFused>
LDMSIM_INLINE void multiply_add_panel(const float* a, const float* panel, float* acc, std::size_t rows,
                                      std::size_t depth, std::size_t acc_pitch) {
  std::size_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    multiply_add_block<4, 64, kFused>(a + i * depth, panel, acc + i * acc_pitch, 64, depth, acc_pitch);
  }
  a += i * depth;
  acc += i * acc_pitch;
  if (rows - i == 3) {
    multiply_add_block<3, 64, kFused>(a, panel, acc, 64, depth, acc_pitch);
  } else if (rows - i == 2) {
    multiply_add_block<2, 64, kFused>(a, panel, acc, 64, depth, acc_pitch);
  } else if (rows - i == 1) {
    multiply_add_block<1, 64, kFused>(a, panel, acc, 64, depth, acc_pitch);
  }
}

template <std::size_t kWide, bool kFused>
LDMSIM_INLINE void multiply_add_all(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols,
                                    std::size_t depth, std::size_t acc_pitch, std::size_t b_pitch) {
  // The last cols % 32 columns as one narrower block: in place when b's rows are padded that far, else from a
  // zero-padded copy.
  thread_local std::vector<float> padded;
  const std::size_t tail_from = cols / 32 * 32, width = tail_width(cols - tail_from);
  const float* tail = b + tail_from;
  std::size_t tail_pitch = b_pitch;
  if (width > 0 && tail_from + width > b_pitch) {
    padded.assign(depth * width, 0.0f);
    for (std::size_t t = 0; t < depth; ++t)
      std::copy(b + t * b_pitch + tail_from, b + t * b_pitch + cols, padded.data() + t * width);
    tail = padded.data();
    tail_pitch = width;
  }
  // Whole 64-column panels first, packed, every row over each; the columns after them row block by row block.
  std::size_t j = 0;
  if (rows >= kPackFromRows) {
    thread_local std::vector<float> storage;
    if (storage.size() < depth * 64 + 16) storage.resize(depth * 64 + 16);
    float* panel = aligned_line(storage.data());
    for (; j + 64 <= cols; j += 64) {
      for (std::size_t t = 0; t < depth; ++t) copy_floats(b + t * b_pitch + j, 64, panel + t * 64);
      multiply_add_panel<kFused>(a, panel, acc + j, rows, depth, acc_pitch);
    }
  }
  std::size_t i = 0;
  if constexpr (kWide > 64) {
    // AVX-512's 32 registers hold 8 rows x 32 columns: twice the independent sums of a 4-row block, which on a
    // narrow tile (a conv's 28 or 42 output columns) waits on its multiply-adds' latency.
    for (; rows >= kPackFromRows && i + 8 <= rows; i += 8) {
      multiply_add_rows<8, kWide, kFused>(a + i * depth, b, b_pitch, tail, tail_pitch, acc + i * acc_pitch, cols, depth,
                                          acc_pitch, j);
    }
  }
  for (; i + 4 <= rows; i += 4) {
    multiply_add_rows<4, kWide, kFused>(a + i * depth, b, b_pitch, tail, tail_pitch, acc + i * acc_pitch, cols, depth,
                                        acc_pitch, j);
  }
  if (rows - i == 3) {
    multiply_add_rows<3, kWide, kFused>(a + i * depth, b, b_pitch, tail, tail_pitch, acc + i * acc_pitch, cols, depth,
                                        acc_pitch, j);
  } else if (rows - i == 2) {
    multiply_add_rows<2, kWide, kFused>(a + i * depth, b, b_pitch, tail, tail_pitch, acc + i * acc_pitch, cols, depth,
                                        acc_pitch, j);
  } else if (rows - i == 1) {
    multiply_add_rows<1, kWide, kFused>(a + i * depth, b, b_pitch, tail, tail_pitch, acc + i * acc_pitch, cols, depth,
                                        acc_pitch, j);
  }
}

#if LDMSIM_HAS_WIDE_TILES
LDMSIM_TILE_WIDE void multiply_add_wide(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols,
                                        std::size_t depth, std::size_t acc_pitch, std::size_t b_pitch) {
  multiply_add_all<128, true>(a, b, acc, rows, cols, depth, acc_pitch, b_pitch);
}

[[gnu::target("arch=x86-64-v3")]] void multiply_add_v3(const float* a, const float* b, float* acc, std::size_t rows,
                                                       std::size_t cols, std::size_t depth, std::size_t acc_pitch,
                                                       std::size_t b_pitch) {
  multiply_add_all<64, true>(a, b, acc, rows, cols, depth, acc_pitch, b_pitch);
}
#endif

}  // namespace

void multiply_add_unfused(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols,
                          std::size_t depth, std::size_t acc_pitch, std::size_t b_pitch) {
  multiply_add_all<64, false>(a, b, acc, rows, cols, depth, acc_pitch, b_pitch);
}

void multiply_add_portable(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols,
                           std::size_t depth, std::size_t acc_pitch, std::size_t b_pitch) {
#if LDMSIM_HAS_WIDE_TILES
  static const bool fused = __builtin_cpu_supports("x86-64-v3");
  if (fused) return multiply_add_v3(a, b, acc, rows, cols, depth, acc_pitch, b_pitch);
#endif
  multiply_add_unfused(a, b, acc, rows, cols, depth, acc_pitch, b_pitch);
}

// The blocks differ between hosts, the sums do not: every element still gains its products one by one in k order.
void multiply_add(const float* a, const float* b, float* acc, std::size_t rows, std::size_t cols, std::size_t depth,
                  std::size_t acc_pitch, std::size_t b_pitch) {
#if LDMSIM_HAS_WIDE_TILES
  static const bool wide = __builtin_cpu_supports("x86-64-v4");
  if (wide) return multiply_add_wide(a, b, acc, rows, cols, depth, acc_pitch, b_pitch);
#endif
  multiply_add_portable(a, b, acc, rows, cols, depth, acc_pitch, b_pitch);
}

}  // namespace ldmsim::ops
