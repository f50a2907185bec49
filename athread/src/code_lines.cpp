// Source lines of slave code through libdw (see code_lines.hpp).
#include "code_lines.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "process_dwfl.hpp"

namespace ldmsim::athread {

namespace {

// The code at pc was inlined from ldmsim's headers (athread_get calling into the layer, or simd_load's helpers
// calling one another): walk the inlined instances from the innermost out to the first call site in the program's
// own files.
void step_out_of_headers(Dwfl_Module* module, std::uintptr_t pc, CodeLine& here) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* unit = dwfl_module_addrdie(module, pc, &bias);
  Dwarf_Files* files = nullptr;
  std::size_t file_count = 0;
  if (unit == nullptr || dwarf_getsrcfiles(unit, &files, &file_count) != 0) return;
  // dwarf_getscopes continues past the innermost inlined instance with the scopes of the inlined function's own
  // definition; the instances it was inlined into (a header helper inlined into another) are its parents in the
  // DIE tree, which dwarf_getscopes_die lists.
  Dwarf_Die* found = nullptr;
  const int found_count = dwarf_getscopes(unit, pc - bias, &found);
  Dwarf_Die* scopes = nullptr;
  int count = 0;
  for (int i = 0; i < found_count; ++i) {
    if (dwarf_tag(&found[i]) == DW_TAG_inlined_subroutine) {
      count = dwarf_getscopes_die(&found[i], &scopes);
      break;
    }
  }
  std::free(found);  // NOLINT(cppcoreguidelines-no-malloc): libdw allocates it with malloc
  for (int i = 0; i < count && is_athread_header(here.file); ++i) {
    if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
    Dwarf_Attribute call_file;
    Dwarf_Attribute call_line;
    Dwarf_Word file_index = 0;
    Dwarf_Word line = 0;
    if (dwarf_attr(&scopes[i], DW_AT_call_file, &call_file) == nullptr ||
        dwarf_attr(&scopes[i], DW_AT_call_line, &call_line) == nullptr ||
        dwarf_formudata(&call_file, &file_index) != 0 || dwarf_formudata(&call_line, &line) != 0 ||
        file_index >= file_count) {
      break;
    }
    const char* name = dwarf_filesrc(files, file_index, nullptr, nullptr);
    if (name == nullptr) break;
    here.file = name;
    here.line = static_cast<int>(line);
  }
  std::free(scopes);  // NOLINT(cppcoreguidelines-no-malloc): libdw allocates it with malloc
}

std::optional<CodeLine> resolve(std::uintptr_t pc) {
  ProcessDwfl dwfl;
  Dwfl_Module* module = dwfl.module_at(pc, true);
  if (module == nullptr) return std::nullopt;
  Dwfl_Line* entry = dwfl_module_getsrc(module, pc);
  int number = 0;
  const char* file = entry == nullptr ? nullptr : dwfl_lineinfo(entry, nullptr, &number, nullptr, nullptr, nullptr);
  if (file == nullptr) return std::nullopt;
  const char* function = dwfl_module_addrname(module, pc);  // also a symbol only .symtab holds (no -rdynamic)
  CodeLine here{file, number, function != nullptr ? function : ""};
  if (is_athread_header(here.file)) step_out_of_headers(module, pc, here);
  return here;
}

}  // namespace

bool is_athread_header(const std::string& file) {
  // The headers of athread/include, installed under include/ldmsim/athread.
  static constexpr std::array<std::string_view, 10> kHeaders = {"athread.h",
                                                                "slave.h",
                                                                "crts.h",
                                                                "dma.h",
                                                                "simd.h",
                                                                "swperf.h",
                                                                "ldmsim_athread_common.h",
                                                                "ldmsim_simd_cxx.h",
                                                                "ldmsim_simd_cxx_ops.h",
                                                                "ldmsim_slave_prelude.h"};
  const std::filesystem::path path(file);
  const std::string name = path.filename().string();
  if (std::find(kHeaders.begin(), kHeaders.end(), name) == kHeaders.end()) return false;
  const std::filesystem::path folder = path.parent_path();
  // Source tree: .../athread/include/slave.h; installed: .../ldmsim/athread/slave.h.
  return folder.filename() == "athread" ||
         (folder.filename() == "include" && folder.parent_path().filename() == "athread");
}

std::optional<CodeLine> code_line(std::uintptr_t pc) {
  // A loop's report asks for the same address again and again. Facts of the process, like the Dwfl; never destroyed.
  static auto* mutex = new std::mutex();
  static auto* cache = new std::unordered_map<std::uintptr_t, std::optional<CodeLine>>();
  {
    const std::lock_guard lock(*mutex);
    if (auto it = cache->find(pc); it != cache->end()) return it->second;
  }
  std::optional<CodeLine> line = resolve(pc);
  const std::lock_guard lock(*mutex);
  cache->emplace(pc, line);
  return line;
}

}  // namespace ldmsim::athread
