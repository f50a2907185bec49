// The output directory of one `ldmsim run`: it is owned by one run at a time (a lock), every target is checked
// before the simulation starts (never an input of the run, never anything but a regular file), every file is
// written atomically, and the directory is marked incomplete (RUN_INCOMPLETE) from the start of the run until its
// last file is written, so a run killed half-way is recognisable (docs/user-guide.md, "Output files").
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/session/directory_lock.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

/// The marker file of a run in progress (or killed).
inline constexpr const char* kIncompleteMarker = "RUN_INCOMPLETE";

/// ConfigError naming `what` when `target` is one of `inputs` (the same file: compared by device and inode, so
/// another spelling, a symlink or a hard link of an input is caught); nothing when `target` does not exist.
void check_not_input(const std::filesystem::path& target, const std::vector<std::filesystem::path>& inputs,
                     std::string_view what);

class RunDirectory {
 public:
  /// Creates `out` (and the trace file's directory), takes its lock unless `lock` is false (ConfigError naming
  /// the holder when another run has it), checks that every output — stats.json, host_times.json, NAME.npy for
  /// each of `npy_outputs` (whose names must be safe file names), the trace unless `trace_option` is null, the
  /// marker — may be written and is none of `inputs`, removes temporaries that killed runs left in `out`, then
  /// marks the directory incomplete. Throws ConfigError before anything is written otherwise.
  RunDirectory(const std::string& out, const std::filesystem::path* trace_option,
               const std::vector<std::string>& npy_outputs, const nlohmann::json& run_info,
               const std::vector<std::filesystem::path>& inputs, bool lock = true);
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;
  /// Releases the lock. A run that did not complete() in a directory it created removes what it wrote there
  /// (its outputs, the marker, the lock) and the directory if that leaves it empty; in a directory that existed,
  /// the marker stays.
  ~RunDirectory();

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path stats() const { return dir_ / "stats.json"; }
  /// Host-side times of a workload run (not deterministic, so not in stats.json).
  std::filesystem::path host_times() const { return dir_ / "host_times.json"; }
  std::filesystem::path npy(const std::string& name) const { return dir_ / (name + ".npy"); }
  /// Empty when tracing is off.
  const std::filesystem::path& trace() const { return trace_; }
  /// ConfigError when `file` (another output of the run) is one of its inputs.
  void check_output(const std::filesystem::path& file, std::string_view what) const;

  /// Removes NAME.npy of the outputs a trapped run did not produce (left from an earlier run, they would look
  /// like this run's results).
  void remove_stale_outputs(const std::vector<std::string>& npy_outputs) const;
  /// The run's files are all written: removes the incomplete marker.
  void complete();

 private:
  /// ConfigError when the trace would be written where the run writes `file` (its `what`).
  void check_not_trace(const std::filesystem::path& file, const std::string& what) const;

  std::filesystem::path dir_;
  std::filesystem::path trace_;
  std::vector<std::string> npy_outputs_;
  std::vector<std::filesystem::path> inputs_;
  DirectoryLock lock_;
  bool created_ = false;    ///< the run created dir_
  bool completed_ = false;  ///< complete() was called
};

/// Whether two paths name the same file once symlinks and "..", "." are resolved (the file need not exist).
bool same_file_path(const std::filesystem::path& a, const std::filesystem::path& b);
/// Whether `file` lies inside directory `dir` (resolved the same way).
bool path_inside(const std::filesystem::path& file, const std::filesystem::path& dir);

/// Removes the ".NAME.tmp-PID-N" temporaries in `dir` whose process no longer runs (left by a killed writer).
void remove_dead_temporaries(const std::filesystem::path& dir);

/// A fault as stats.json and the trace header record it.
nlohmann::json fault_json(const Fault& fault);

}  // namespace ldmsim
