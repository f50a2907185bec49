/* The Sunway SIMD vector types as C++ classes, for slave files (ldmsim_add_athread_program compiles .c slave
 * files as C++, see docs/athread.md): what lets unmodified kernels write `doublev4 v = 0;`, `v = 1.0;`,
 * `(doublev4)x` and `(doublev4)some_floatv4` as the Sunway compilers accept them, and what charges every
 * vector instruction to the running core's simulated clock. Not a Sunway header: include simd.h. */
#ifndef LDMSIM_SIMD_CXX_H
#define LDMSIM_SIMD_CXX_H

#ifdef __cplusplus

#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C++" { /* also when the includer wraps this header in extern "C" */
#include <type_traits>
}

/* Vector work of the running core since the runtime last looked: instructions by element type (0 f64, 1 f32,
 * 2 integer), vector ldm accesses. The layer turns it into cycles through the arch's compute model at the next
 * athread call and when the slave function returns (athread/src/simd_charge.cpp). */
extern "C" {
struct ldmsim_simd_work_t {
  unsigned long long fmas[3];
  unsigned long long ops[3];
  unsigned long long ldm_accesses;
};
extern thread_local struct ldmsim_simd_work_t __ldmsim_simd_work; /* per host thread: host code is not charged */
void __ldmsim_athread_simd_misaligned(const char* api, const void* addr, size_t alignment);
}

extern "C++" {
namespace ldmsim_simd {

/* A divide or square root is charged as this many vector instructions: the SW26010 CPE does not pipeline
 * them (an estimate, docs/athread.md "SIMD work"). */
constexpr unsigned kLongOpInstructions = 16;

template <class T>
constexpr int type_index() {
  return std::is_same_v<T, double> ? 0 : std::is_same_v<T, float> ? 1 : 2;
}

/* Lanes of element type T, `Bits` true for the raw 256/512-bit integer types (int256, uint512, ...), whose
 * casts always keep the bits. */
template <class T, int Lanes, bool Bits = false>
struct Vec {
  typedef T raw_type __attribute__((vector_size(sizeof(T) * Lanes)));
  typedef T element_type;
  static constexpr int lanes = Lanes;
  static constexpr bool bits = Bits;

  raw_type v;

  Vec() = default;
  constexpr Vec(raw_type r) : v(r) {}
  /* A scalar splats to every lane (the Sunway compilers' scalar-to-vector rule). */
  template <class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>
  constexpr Vec(S s) : v(raw_type{} + static_cast<T>(s)) {}
  /* Brace initialisation with several values, lane i = value i, the remaining lanes 0 (`doublev4 v = {1, 2, 3,
   * 4};`); one value splats, as above. */
  template <
      class S0, class S1, class... S,
      std::enable_if_t<std::is_arithmetic_v<S0> && std::is_arithmetic_v<S1> && sizeof...(S) + 2 <= Lanes, int> = 0>
  constexpr Vec(S0 s0, S1 s1, S... rest) : v{static_cast<T>(s0), static_cast<T>(s1), static_cast<T>(rest)...} {}
  /* Between vector types: equal lane counts convert values (doublev4 <-> floatv4, intv8 <-> floatv8 ...);
   * otherwise, and to or from the raw integer types, the bits are kept (the sizes must match). */
  template <class U, int M, bool B>
  explicit Vec(const Vec<U, M, B>& o) {
    if constexpr (M == Lanes && !B && !Bits) {
      v = __builtin_convertvector(o.v, raw_type);
      count_op();
    } else {
      static_assert(sizeof(o) == sizeof(*this), "a cast between vector types of different sizes");
      memcpy(&v, &o.v, sizeof(v));
    }
  }

  T& operator[](int i) { return reinterpret_cast<T*>(&v)[i]; }
  T operator[](int i) const { return v[i]; }

  static void count_op() { ++__ldmsim_simd_work.ops[type_index<T>()]; }
  static void count_long_op() { __ldmsim_simd_work.ops[type_index<T>()] += kLongOpInstructions; }
  static void count_fma() { ++__ldmsim_simd_work.fmas[type_index<T>()]; }

#define LDMSIM_SIMD_BINARY(op, counter)                \
  friend Vec operator op(const Vec& a, const Vec& b) { \
    counter();                                         \
    return Vec(a.v op b.v);                            \
  }                                                    \
  Vec& operator op##=(const Vec& b) {                  \
    counter();                                         \
    v = v op b.v;                                      \
    return *this;                                      \
  }
  LDMSIM_SIMD_BINARY(+, count_op)
  LDMSIM_SIMD_BINARY(-, count_op)
  LDMSIM_SIMD_BINARY(/, count_long_op)
#undef LDMSIM_SIMD_BINARY
  Vec& operator*=(const Vec& b) {
    count_op();
    v = v * b.v;
    return *this;
  }
  friend Vec operator-(const Vec& a) {
    count_op();
    return Vec(-a.v);
  }
  friend Vec operator+(const Vec& a) {
    return a;
  }
};

/* A product a * b: a vector (the multiply is counted) that remembers it is one, so that adding or subtracting it
 * counts one FMA instead (the Sunway compilers contract a * b + c into vmad, and kernels write FMAs that way). */
template <class V>
struct Product : V {
  explicit Product(const V& value) : V(value) {}
  mutable bool fused = false;  // a product used twice is one FMA and then a plain add
};
template <class T, int L, bool B>
Product<Vec<T, L, B>> operator*(const Vec<T, L, B>& a, const Vec<T, L, B>& b) {
  Vec<T, L, B>::count_op();
  return Product<Vec<T, L, B>>(Vec<T, L, B>(a.v * b.v));
}
template <class V>
inline void fuse(const Product<V>& p) {  // the multiply becomes part of an FMA
  if (p.fused) {
    V::count_op();
    return;
  }
  p.fused = true;
  // The multiply may already have been charged (an athread call in between flushes the counts): then the
  // FMA is counted on top of it rather than the count going below zero.
  unsigned long long& ops = __ldmsim_simd_work.ops[type_index<typename V::element_type>()];
  if (ops > 0) --ops;
  V::count_fma();
}
template <class T, int L, bool B>
Vec<T, L, B> operator+(const Product<Vec<T, L, B>>& p, const Vec<T, L, B>& c) {
  fuse(p);
  return Vec<T, L, B>(p.v + c.v);
}
template <class T, int L, bool B>
Vec<T, L, B> operator+(const Vec<T, L, B>& c, const Product<Vec<T, L, B>>& p) {
  fuse(p);
  return Vec<T, L, B>(c.v + p.v);
}
template <class T, int L, bool B>
Vec<T, L, B> operator+(const Product<Vec<T, L, B>>& p, const Product<Vec<T, L, B>>& q) {
  fuse(q);
  return Vec<T, L, B>(p.v + q.v);
}
template <class T, int L, bool B>
Vec<T, L, B>& operator+=(Vec<T, L, B>& acc, const Product<Vec<T, L, B>>& p) {
  fuse(p);
  acc.v = acc.v + p.v;
  return acc;
}
template <class T, int L, bool B>
Vec<T, L, B> operator-(const Product<Vec<T, L, B>>& p, const Vec<T, L, B>& c) {
  fuse(p);
  return Vec<T, L, B>(p.v - c.v);
}
template <class T, int L, bool B>
Vec<T, L, B> operator-(const Vec<T, L, B>& c, const Product<Vec<T, L, B>>& p) {
  fuse(p);
  return Vec<T, L, B>(c.v - p.v);
}
template <class T, int L, bool B>
Vec<T, L, B> operator-(const Product<Vec<T, L, B>>& p, const Product<Vec<T, L, B>>& q) {
  fuse(q);
  return Vec<T, L, B>(p.v - q.v);
}
template <class T, int L, bool B>
Vec<T, L, B>& operator-=(Vec<T, L, B>& acc, const Product<Vec<T, L, B>>& p) {
  fuse(p);
  acc.v = acc.v - p.v;
  return acc;
}

/* Bitwise operators and shifts, for the integer vector types only. */
template <class T, int L, bool B, std::enable_if_t<std::is_integral_v<T>, int> = 0>
Vec<T, L, B> operator&(const Vec<T, L, B>& a, const Vec<T, L, B>& b) {
  Vec<T, L, B>::count_op();
  return Vec<T, L, B>(a.v & b.v);
}
template <class T, int L, bool B, std::enable_if_t<std::is_integral_v<T>, int> = 0>
Vec<T, L, B> operator|(const Vec<T, L, B>& a, const Vec<T, L, B>& b) {
  Vec<T, L, B>::count_op();
  return Vec<T, L, B>(a.v | b.v);
}
template <class T, int L, bool B, std::enable_if_t<std::is_integral_v<T>, int> = 0>
Vec<T, L, B> operator^(const Vec<T, L, B>& a, const Vec<T, L, B>& b) {
  Vec<T, L, B>::count_op();
  return Vec<T, L, B>(a.v ^ b.v);
}
template <class T, int L, bool B, std::enable_if_t<std::is_integral_v<T>, int> = 0>
Vec<T, L, B> operator~(const Vec<T, L, B>& a) {
  Vec<T, L, B>::count_op();
  return Vec<T, L, B>(~a.v);
}
template <class T, int L, bool B, std::enable_if_t<std::is_integral_v<T>, int> = 0>
Vec<T, L, B> operator<<(const Vec<T, L, B>& a, int n) {
  Vec<T, L, B>::count_op();
  return Vec<T, L, B>(a.v << n);
}
template <class T, int L, bool B, std::enable_if_t<std::is_integral_v<T>, int> = 0>
Vec<T, L, B> operator>>(const Vec<T, L, B>& a, int n) {
  Vec<T, L, B>::count_op();
  return Vec<T, L, B>(a.v >> n);
}

/* Compound bitwise assignments (`r.i64v8 &= mask.i64v8;`). */
template <class T, int L, bool B, std::enable_if_t<std::is_integral_v<T>, int> = 0>
Vec<T, L, B>& operator&=(Vec<T, L, B>& a, const Vec<T, L, B>& b) {
  return a = a & b;
}
template <class T, int L, bool B, std::enable_if_t<std::is_integral_v<T>, int> = 0>
Vec<T, L, B>& operator|=(Vec<T, L, B>& a, const Vec<T, L, B>& b) {
  return a = a | b;
}
template <class T, int L, bool B, std::enable_if_t<std::is_integral_v<T>, int> = 0>
Vec<T, L, B>& operator^=(Vec<T, L, B>& a, const Vec<T, L, B>& b) {
  return a = a ^ b;
}
template <class T, int L, bool B, std::enable_if_t<std::is_integral_v<T>, int> = 0>
Vec<T, L, B>& operator<<=(Vec<T, L, B>& a, int n) {
  return a = a << n;
}
template <class T, int L, bool B, std::enable_if_t<std::is_integral_v<T>, int> = 0>
Vec<T, L, B>& operator>>=(Vec<T, L, B>& a, int n) {
  return a = a >> n;
}

/* Logical right shift of integer lanes (simd_vsrlw): the bits shift in as zeros whatever the lane's sign. */
template <class T, int L, bool B>
Vec<T, L, B> shift_right_logical(const Vec<T, L, B>& a, int n) {
  Vec<T, L, B>::count_op();
  Vec<T, L, B> r;
  for (int i = 0; i < L; ++i) r.v[i] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(a.v[i]) >> n);
  return r;
}

/* Mixed vector-scalar arithmetic (v * 2.0, 1.0 - v): the scalar splats. */
#define LDMSIM_SIMD_MIXED(op)                                                                    \
  template <class T, int L, bool B, class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0> \
  auto operator op(const Vec<T, L, B>& a, S s) {                                                 \
    return a op Vec<T, L, B>(s);                                                                 \
  }                                                                                              \
  template <class T, int L, bool B, class S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0> \
  auto operator op(S s, const Vec<T, L, B>& a) {                                                 \
    return Vec<T, L, B>(s) op a;                                                                 \
  }
LDMSIM_SIMD_MIXED(+)
LDMSIM_SIMD_MIXED(-)
LDMSIM_SIMD_MIXED(*)
LDMSIM_SIMD_MIXED(/)
#undef LDMSIM_SIMD_MIXED

/* An access not aligned to the vector size spans two aligned vectors: one more ldm access. simd_load / simd_store
 * report it (a lint warning, once per core per spawn); simd_loadu / simd_storeu are meant for it. These three are
 * always inlined (also at -O0), as the C API's functions are: the report's code address then lies in the program's
 * own function, whose line the layer finds by walking out of the inlined scopes. */
template <class V>
__attribute__((always_inline)) inline void check_aligned(const void* addr, const char* api, bool aligned) {
  if (reinterpret_cast<uintptr_t>(addr) % sizeof(V) == 0) return;
  if (aligned) {
    __ldmsim_athread_simd_misaligned(api, addr, sizeof(V));  // counts the second access
  } else {
    ++__ldmsim_simd_work.ldm_accesses;
  }
}
/* Loads and stores between ldm and a vector register (one ldm access each, two when misaligned). */
template <class V, class P>
__attribute__((always_inline)) inline void load(V& var, const P* addr, const char* api, bool aligned) {
  check_aligned<V>(addr, api, aligned);
  memcpy(&var, static_cast<const void*>(addr), sizeof(V));
  ++__ldmsim_simd_work.ldm_accesses;
}
template <class V, class P>
__attribute__((always_inline)) inline void store(const V& var, P* addr, const char* api, bool aligned) {
  check_aligned<V>(addr, api, aligned);
  memcpy(static_cast<void*>(addr), &var, sizeof(V));
  ++__ldmsim_simd_work.ldm_accesses;
}
/* simd_loade: one element broadcast to every lane. */
template <class V, class P>
inline void load_broadcast(V& var, const P* addr) {
  var = V(static_cast<typename V::element_type>(*addr));
  ++__ldmsim_simd_work.ldm_accesses;
}
template <class V>
inline V fma(const V& a, const V& b, const V& c, bool negate_product, bool negate_addend) {
  V::count_fma();
  const auto product = negate_product ? -(a.v * b.v) : a.v * b.v;
  return V(negate_addend ? product - c.v : product + c.v);
}
/* Shuffles, lane extraction and insertion: one vector instruction each. */
template <class V>
inline void count_shuffle() {
  V::count_op();
}
template <class V, class F>
inline V lanewise(const V& a, const V& b, F f) {
  V::count_op();
  V r;
  for (int i = 0; i < V::lanes; ++i) r.v[i] = f(a.v[i], b.v[i]);
  return r;
}
/* A horizontal sum: log2(lanes) shuffle + add steps. */
template <class V>
inline typename V::element_type reduce_sum(const V& a) {
  typename V::element_type s = 0;
  for (int i = 0; i < V::lanes; ++i) s += a.v[i];
  for (int n = V::lanes; n > 1; n /= 2) {
    V::count_op();
    V::count_op();
  }
  return s;
}
template <class V, class... S>
inline V set(S... s) {
  static_assert(sizeof...(S) == V::lanes, "one value per lane");
  V r;
  int i = 0;
  ((r.v[i++] = static_cast<typename V::element_type>(s)), ...);
  __ldmsim_simd_work.ops[type_index<typename V::element_type>()] += V::lanes; /* one insert per lane */
  return r;
}

}  // namespace ldmsim_simd
}  // extern "C++"

#endif /* __cplusplus */
#endif
