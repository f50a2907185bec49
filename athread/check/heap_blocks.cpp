// The host heap's blocks for `bounds` (docs/checking.md): programs built with CHECK are linked with
// --wrap=malloc (and calloc, realloc, free, posix_memalign, aligned_alloc, memalign), so each block their own code
// allocates is recorded with its size, and a request starting in one is checked against its end like a host array's.
// Allocations inside shared libraries (libstdc++'s operator new, libc's own) are not seen.
#include <cstddef>

#include "../src/host_arrays.hpp"

extern "C" {
void* __real_malloc(std::size_t bytes);
void* __real_calloc(std::size_t count, std::size_t bytes);
void* __real_realloc(void* block, std::size_t bytes);
void __real_free(void* block);
int __real_posix_memalign(void** block, std::size_t alignment, std::size_t bytes);
void* __real_aligned_alloc(std::size_t alignment, std::size_t bytes);
void* __real_memalign(std::size_t alignment, std::size_t bytes);

void* __wrap_malloc(std::size_t bytes) {
  void* block = __real_malloc(bytes);
  ldmsim::athread::note_heap_block(block, bytes);
  return block;
}
void* __wrap_calloc(std::size_t count, std::size_t bytes) {
  void* block = __real_calloc(count, bytes);
  ldmsim::athread::note_heap_block(block, count * bytes);  // calloc refused an overflowing product: block is null
  return block;
}
void* __wrap_realloc(void* block, std::size_t bytes) {
  void* moved = __real_realloc(block, bytes);
  if (moved != nullptr || bytes == 0) ldmsim::athread::forget_heap_block(block);
  ldmsim::athread::note_heap_block(moved, bytes);
  return moved;
}
void __wrap_free(void* block) {
  ldmsim::athread::forget_heap_block(block);
  __real_free(block);
}
int __wrap_posix_memalign(void** block, std::size_t alignment, std::size_t bytes) {
  const int status = __real_posix_memalign(block, alignment, bytes);
  if (status == 0) ldmsim::athread::note_heap_block(*block, bytes);
  return status;
}
void* __wrap_aligned_alloc(std::size_t alignment, std::size_t bytes) {
  void* block = __real_aligned_alloc(alignment, bytes);
  ldmsim::athread::note_heap_block(block, bytes);
  return block;
}
void* __wrap_memalign(std::size_t alignment, std::size_t bytes) {
  void* block = __real_memalign(alignment, bytes);
  ldmsim::athread::note_heap_block(block, bytes);
  return block;
}
}
