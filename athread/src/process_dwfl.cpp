// The process's Dwfl (see process_dwfl.hpp).
#include "process_dwfl.hpp"

#include <link.h>
#include <unistd.h>

namespace ldmsim::athread {

namespace {

struct State {
  std::mutex mutex;
  Dwfl_Callbacks callbacks{};
  char* debuginfo_path = nullptr;
  Dwfl* dwfl = nullptr;

  // (Re)reads the process's mappings.
  bool report_modules() {
    if (dwfl == nullptr) {
      callbacks.find_elf = dwfl_linux_proc_find_elf;
      callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
      callbacks.debuginfo_path = &debuginfo_path;
      dwfl = dwfl_begin(&callbacks);
      if (dwfl == nullptr) return false;
    }
    dwfl_report_begin(dwfl);
    const int failed = dwfl_linux_proc_report(dwfl, getpid());
    return dwfl_report_end(dwfl, nullptr, nullptr) == 0 && failed == 0;
  }
};

// The start of the first loadable segment of the object whose segments (with their zero-filled tails: .bss) hold
// `at`; 0 when none does. libdw knows a module by its file's mappings, which end where .bss leaves the file.
std::uintptr_t object_start(std::uintptr_t at) {
  struct Search {
    std::uintptr_t at;
    std::uintptr_t start;
  } search{at, 0};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& s = *static_cast<Search*>(data);
        std::uintptr_t first = 0;
        bool holds = false;
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          if (segment.p_type != PT_LOAD) continue;
          const std::uintptr_t lo = info->dlpi_addr + segment.p_vaddr;
          if (first == 0) first = lo;
          holds = holds || (s.at >= lo && s.at < lo + segment.p_memsz);
        }
        if (holds) s.start = first;
        return holds ? 1 : 0;
      },
      &search);
  return search.start;
}

State& state() {
  static auto* s = new State();  // never destroyed (see process_dwfl.hpp)
  return *s;
}

}  // namespace

ProcessDwfl::ProcessDwfl() : lock_(state().mutex) {}

Dwfl_Module* ProcessDwfl::module_at(std::uintptr_t at, bool code) {
  State& s = state();
  if (s.dwfl == nullptr && !s.report_modules()) return nullptr;
  Dwfl_Module* module = dwfl_addrmodule(s.dwfl, at);
  if (module == nullptr && code && s.report_modules()) module = dwfl_addrmodule(s.dwfl, at);
  if (module == nullptr && !code) {  // data past the file's mappings (.bss): the module whose segments hold it
    if (const std::uintptr_t start = object_start(at); start != 0) module = dwfl_addrmodule(s.dwfl, start);
  }
  return module;
}

}  // namespace ldmsim::athread
