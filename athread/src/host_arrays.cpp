// Host arrays by symbol (see host_arrays.hpp), through dladdr1's symbol entry.
#include "host_arrays.hpp"

#include <dlfcn.h>
#include <link.h>

namespace ldmsim::athread {

std::optional<HostArray> host_array_at(std::uintptr_t at) {
  // dladdr scans an object's symbol table; a loop's requests mostly fall in the array the previous one did. The
  // cache holds facts of the process (a symbol's place), the same for every fiber of the thread.
  thread_local HostArray last;
  if (at >= last.start && at < last.end()) return last;
  Dl_info info{};
  ElfW(Sym)* symbol = nullptr;  // dladdr1 hands out a pointer to const data through void**
  const auto lookup = [&](std::uintptr_t address) {
    return dladdr1(reinterpret_cast<void*>(address), &info, reinterpret_cast<void**>(&symbol), RTLD_DL_SYMENT) != 0 &&
           info.dli_sname != nullptr && symbol != nullptr;
  };
  if (!lookup(at)) return std::nullopt;
  // A zero-size marker at the same address (a section's __start_ symbol) can win over the array starting there;
  // one byte further on only a symbol with a size matches.
  if (symbol->st_size == 0 && !lookup(at + 1)) return std::nullopt;
  const int type = ELF64_ST_TYPE(symbol->st_info);
  if (type != STT_OBJECT && type != STT_COMMON) return std::nullopt;
  HostArray array{reinterpret_cast<std::uintptr_t>(info.dli_saddr), symbol->st_size, info.dli_sname};
  if (at < array.start || at >= array.end()) return std::nullopt;  // past the nearest object: in none we know
  last = array;
  return array;
}

}  // namespace ldmsim::athread
