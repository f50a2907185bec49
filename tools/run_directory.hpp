// The output directory of one `ldmsim run`: every target is checked before the simulation starts, every file is
// written atomically, and the directory is marked incomplete (RUN_INCOMPLETE) from the start of the run until
// its last file is written, so a run killed half-way is recognisable (docs/user-guide.md, "Output files").
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ldmsim/sim/fault.hpp"

namespace ldmsim::cli {

/// The marker file of a run in progress (or killed).
inline constexpr const char* kIncompleteMarker = "RUN_INCOMPLETE";

class RunDirectory {
 public:
  /// Creates `out` (and the trace file's directory), checks that every output — stats.json, NAME.npy for each
  /// of `npy_outputs` (whose names must be safe file names), the trace unless `trace_option` is null — may be
  /// written, then marks the directory incomplete. Throws ConfigError before anything is written otherwise.
  RunDirectory(const std::string& out, const std::filesystem::path* trace_option,
               const std::vector<std::string>& npy_outputs, const nlohmann::json& run_info);

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path stats() const { return dir_ / "stats.json"; }
  /// Host-side times of a workload run (not deterministic, so not in stats.json).
  std::filesystem::path host_times() const { return dir_ / "host_times.json"; }
  std::filesystem::path npy(const std::string& name) const { return dir_ / (name + ".npy"); }
  /// Empty when tracing is off.
  const std::filesystem::path& trace() const { return trace_; }

  /// Removes NAME.npy of the outputs a trapped run did not produce (left from an earlier run, they would look
  /// like this run's results).
  void remove_stale_outputs(const std::vector<std::string>& npy_outputs) const;
  /// The run's files are all written: removes the incomplete marker.
  void complete() const;

 private:
  /// ConfigError when the trace would be written where the run writes `file` (its `what`).
  void check_not_trace(const std::filesystem::path& file, const std::string& what) const;

  std::filesystem::path dir_;
  std::filesystem::path trace_;
};

/// Whether two paths name the same file once symlinks and "..", "." are resolved (the file need not exist).
bool same_file_path(const std::filesystem::path& a, const std::filesystem::path& b);
/// Whether `file` lies inside directory `dir` (resolved the same way).
bool path_inside(const std::filesystem::path& file, const std::filesystem::path& dir);

/// A fault as stats.json and the trace header record it.
nlohmann::json fault_json(const Fault& fault);

}  // namespace ldmsim::cli
