// The run's statistics file of an athread program (LDMSIM_STATS, docs/athread.md): the machine's stats as `ldmsim run`
// writes them (cycles, DMA per group and per core), plus, for MPI programs, the rank's MPI time and calls.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ldmsim/runtime/stats.hpp"

namespace ldmsim::athread {

/// The split of one rank's (or the program's) cycles: time outside MPI and, for the core that was active longest,
/// its compute (busy) and DMA / barrier waits; `mpi` (the MPI layer's section, or null) adds the MPI time.
nlohmann::json stats_document(const RunStats& stats, Cycle cycles, double clock_hz, const std::string& arch,
                              const char* when, bool complete, const nlohmann::json& mpi);

/// Writes `document` to `path` atomically; the error text when it could not be written (empty on success).
std::string write_stats_file(const std::string& path, const nlohmann::json& document);

}  // namespace ldmsim::athread
