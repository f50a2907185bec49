// Source lines of slave code (docs/checking.md "Sites"): a code address of the running program resolved to the file
// and line it was compiled from, in-process through elfutils' libdw (the program's own DWARF, with the load bias of
// its module, so position-independent executables work). Calls into ldmsim's own inline header functions
// (athread_get, CRTS_dma_iget, dma, ...) are given as the line that calls them in the program's code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ldmsim::athread {

/// A place in the program's source.
struct CodeLine {
  std::string file;  ///< as the compiler recorded it (absolute for the project's builds)
  int line = 0;
  std::string function;  ///< the function holding the code, from the full symbol table (empty when none names it)
};

/// The source line of the code at address `pc` (an instruction address: a call's return address minus one); none
/// when the code has no line information (built without -g) or the address lies in no module.
std::optional<CodeLine> code_line(std::uintptr_t pc);

/// Whether `file` is one of ldmsim's athread headers (slave.h, crts.h, dma.h, ... under an athread include folder):
/// the line a program sees for a call into them is the calling line.
bool is_athread_header(const std::string& file);

}  // namespace ldmsim::athread
