// Host arrays by symbol (see host_arrays.hpp), through dladdr1's symbol entry, else libdw's view of the symbol table
// of the object dladdr1 finds holding the address.
#include "host_arrays.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <array>
#include <map>
#include <mutex>

#include "process_dwfl.hpp"

namespace ldmsim::athread {

namespace {
// The data object of the full symbol table of the module loaded at `base` that holds `at`. libdw knows a module by
// its file's mappings, which end where .bss leaves the file: the module is found by its first page.
std::optional<HostArray> symtab_object_at(std::uintptr_t at, std::uintptr_t base) {
  ProcessDwfl dwfl;
  Dwfl_Module* module = dwfl.module_at(base, false);
  if (module == nullptr) return std::nullopt;
  GElf_Off offset = 0;
  GElf_Sym symbol{};
  const char* name = dwfl_module_addrinfo(module, at, &offset, &symbol, nullptr, nullptr, nullptr);
  if (name == nullptr || GELF_ST_TYPE(symbol.st_info) != STT_OBJECT || offset >= symbol.st_size) return std::nullopt;
  return HostArray{at - offset, symbol.st_size, name};
}

// The heap blocks the program allocated (by start), filled only in programs built with CHECK. Facts of the process,
// touched from any thread (and from inside malloc): never destroyed, so frees at exit still find it.
struct HeapBlocks {
  std::mutex mutex;
  std::map<std::uintptr_t, std::size_t> blocks;
};
HeapBlocks& heap_blocks() {
  static auto* blocks = new HeapBlocks();
  return *blocks;
}

std::optional<HostArray> heap_block_at(std::uintptr_t at) {
  HeapBlocks& heap = heap_blocks();
  const std::lock_guard lock(heap.mutex);
  auto it = heap.blocks.upper_bound(at);
  if (it == heap.blocks.begin()) return std::nullopt;
  --it;
  if (at >= it->first + it->second) return std::nullopt;
  return HostArray{it->first, it->second, fmt::format("malloc'ed block at {:#x}", it->first)};
}
}  // namespace

void note_heap_block(void* block, std::size_t bytes) {
  if (block == nullptr) return;
  HeapBlocks& heap = heap_blocks();
  const std::lock_guard lock(heap.mutex);
  heap.blocks[reinterpret_cast<std::uintptr_t>(block)] = bytes;
}

void forget_heap_block(void* block) {
  if (block == nullptr) return;
  HeapBlocks& heap = heap_blocks();
  const std::lock_guard lock(heap.mutex);
  heap.blocks.erase(reinterpret_cast<std::uintptr_t>(block));
}

std::optional<HostArray> host_array_at(std::uintptr_t at) {
  // dladdr scans an object's symbol table, libdw its full one; a loop's requests mostly fall in the few arrays the
  // previous ones did. The cache holds facts of the process (a symbol's place), the same for every fiber of the
  // thread.
  constexpr std::size_t kCached = 16;
  thread_local std::array<HostArray, kCached> cache;
  thread_local std::size_t next = 0;
  for (const HostArray& a : cache) {
    if (at >= a.start && at < a.end()) return a;
  }
  if (std::optional<HostArray> block = heap_block_at(at)) return block;  // not cached: blocks come and go
  Dl_info info{};
  ElfW(Sym)* symbol = nullptr;  // dladdr1 hands out a pointer to const data through void**
  bool in_object = false;       // some loaded object's segments (their .bss too) hold the address
  const auto lookup = [&](std::uintptr_t address) {
    in_object =
        dladdr1(reinterpret_cast<void*>(address), &info, reinterpret_cast<void**>(&symbol), RTLD_DL_SYMENT) != 0;
    return in_object && info.dli_sname != nullptr && symbol != nullptr;
  };
  std::optional<HostArray> found;
  // A zero-size marker at the same address (a section's __start_ symbol) can win over the array starting there;
  // one byte further on only a symbol with a size matches.
  if (lookup(at) && (symbol->st_size != 0 || lookup(at + 1))) {
    const int type = ELF64_ST_TYPE(symbol->st_info);
    HostArray array{reinterpret_cast<std::uintptr_t>(info.dli_saddr), symbol->st_size, info.dli_sname};
    if ((type == STT_OBJECT || type == STT_COMMON) && at >= array.start && at < array.end()) found = array;
  }
  if (!found) {  // not exported (a file-local static, or no -rdynamic): the full symbol table of its object, if any
    lookup(at);
    if (in_object) found = symtab_object_at(at, reinterpret_cast<std::uintptr_t>(info.dli_fbase));
  }
  if (found) {
    cache[next] = *found;
    next = (next + 1) % kCached;
  }
  return found;
}

}  // namespace ldmsim::athread
