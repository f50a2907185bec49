// The load and store callbacks GCC emits into slave code built with CHECK (-fsanitize=thread with function entry and
// exit left out, docs/checking.md): each hands the access to the athread layer's checker. Thread-sanitizer
// instrumentation is used (not address-sanitizer's) because it reports every access, also the direct accesses to
// globals such as a __thread_local reply counter, which address-sanitizer leaves out when they are in bounds.
// Linked only into programs built with CHECK; nothing of libtsan is used.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "../src/check_hooks.hpp"

namespace {
// Pulled in with the callbacks: tells the athread layer that the slave code reports its accesses.
[[maybe_unused]] const bool kReported = (ldmsim::athread::g_slave_accesses_reported = true);

inline std::uintptr_t caller(void* return_address) {
  return reinterpret_cast<std::uintptr_t>(return_address);
}
}  // namespace

#define LDMSIM_ACCESS(size)                                                            \
  extern "C" void __tsan_read##size(void* addr) {                                      \
    ldmsim::athread::check_access(reinterpret_cast<std::uintptr_t>(addr), size, false, \
                                  caller(__builtin_return_address(0)));                \
  }                                                                                    \
  extern "C" void __tsan_write##size(void* addr) {                                     \
    ldmsim::athread::check_access(reinterpret_cast<std::uintptr_t>(addr), size, true,  \
                                  caller(__builtin_return_address(0)));                \
  }                                                                                    \
  extern "C" void __tsan_unaligned_read##size(void* addr) {                            \
    ldmsim::athread::check_access(reinterpret_cast<std::uintptr_t>(addr), size, false, \
                                  caller(__builtin_return_address(0)));                \
  }                                                                                    \
  extern "C" void __tsan_unaligned_write##size(void* addr) {                           \
    ldmsim::athread::check_access(reinterpret_cast<std::uintptr_t>(addr), size, true,  \
                                  caller(__builtin_return_address(0)));                \
  }

LDMSIM_ACCESS(1)
LDMSIM_ACCESS(2)
LDMSIM_ACCESS(4)
LDMSIM_ACCESS(8)
LDMSIM_ACCESS(16)

extern "C" void __tsan_read_range(void* addr, std::size_t size) {
  ldmsim::athread::check_access(reinterpret_cast<std::uintptr_t>(addr), size, false,
                                caller(__builtin_return_address(0)));
}
extern "C" void __tsan_write_range(void* addr, std::size_t size) {
  ldmsim::athread::check_access(reinterpret_cast<std::uintptr_t>(addr), size, true,
                                caller(__builtin_return_address(0)));
}
// The module constructor's call, and the vtable-pointer hooks of C++ slave code: nothing to do (no shadow state).
extern "C" void __tsan_init() {}
extern "C" void __tsan_vptr_update(void**, void*) {}
extern "C" void __tsan_vptr_read(void**) {}
// Fences (`__atomic_thread_fence`, which the sw_64 `memb` idiom becomes, and `__atomic_signal_fence`) access no
// memory: nothing to check, only the fence itself to keep.
extern "C" void __tsan_atomic_thread_fence(int /*order*/) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
extern "C" void __tsan_atomic_signal_fence(int /*order*/) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
}
