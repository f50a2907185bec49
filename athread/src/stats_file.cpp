// The statistics file of an athread program (stats_file.hpp).
#include "stats_file.hpp"

#include <algorithm>
#include <exception>

#include "ldmsim/sim/output_file.hpp"

namespace ldmsim::athread {

nlohmann::json stats_document(const RunStats& stats, Cycle cycles, double clock_hz, const std::string& arch,
                              const char* when, bool complete, const nlohmann::json& mpi) {
  nlohmann::json out = stats.to_json();
  // The summary line's cycles (with MPI: the control core's clock included), so that the trace header agrees.
  out["cycles"] = cycles;
  out["seconds"] = clock_hz > 0 ? static_cast<double>(cycles) / clock_hz : 0.0;
  out["program"] = "athread";
  out["arch"] = arch;
  out["written_at"] = when;
  out["complete"] = complete;
  // The core that was active longest stands for the chip: its compute and its waits, beside the rank's MPI time.
  const CoreStats* longest = nullptr;
  for (const GroupStats& group : stats.groups) {
    for (const CoreStats& core : group.cores) {
      const Cycle active = core.busy_cycles + core.waiting_cycles();
      if (longest == nullptr || active > longest->busy_cycles + longest->waiting_cycles()) longest = &core;
    }
  }
  const Cycle mpi_cycles = mpi.is_object() ? mpi.value("mpi_cycles", Cycle{0}) : 0;
  nlohmann::json split = {{"cycles", cycles},
                          {"outside_mpi_cycles", cycles - std::min(cycles, mpi_cycles)},
                          {"compute_cycles", longest != nullptr ? longest->busy_cycles : 0},
                          {"dma_wait_cycles", longest != nullptr ? longest->dma_wait_cycles : 0},
                          {"barrier_wait_cycles", longest != nullptr ? longest->barrier_wait_cycles : 0},
                          {"mpi_cycles", mpi_cycles},
                          {"mpi_wait_cycles", mpi.is_object() ? mpi.value("wait_cycles", Cycle{0}) : 0}};
  out["split"] = std::move(split);
  out["mpi"] = mpi;
  return out;
}

std::string write_stats_file(const std::string& path, const nlohmann::json& document) {
  try {
    AtomicFile file(path, "stats file (LDMSIM_STATS)");
    file.write(document.dump(2) + "\n");
    file.commit();
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace ldmsim::athread
