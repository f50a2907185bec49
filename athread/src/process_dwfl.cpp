// The process's Dwfl (see process_dwfl.hpp).
#include "process_dwfl.hpp"

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
  return module;
}

}  // namespace ldmsim::athread
