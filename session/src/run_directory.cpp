// The output directory of one run (see run_directory.hpp).
#include "ldmsim/session/run_directory.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <system_error>

#include "ldmsim/sim/output_file.hpp"

namespace ldmsim {

namespace fs = std::filesystem;

namespace {

void make_directory(const fs::path& dir, std::string_view option) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir)) {
    throw ConfigError(fmt::format("{} {}: cannot create the directory{}", option, dir.string(),
                                  error ? ": " + error.message() : std::string{}));
  }
}

}  // namespace

void check_not_input(const fs::path& target, const std::vector<fs::path>& inputs, std::string_view what) {
  struct stat t {};
  if (::stat(target.c_str(), &t) != 0) return;  // missing: it cannot be an input
  for (const fs::path& input : inputs) {
    struct stat i {};
    if (::stat(input.c_str(), &i) == 0 && i.st_dev == t.st_dev && i.st_ino == t.st_ino) {
      throw ConfigError(
          fmt::format("refusing to write the {} '{}': it is {}, an input of this command; choose "
                      "another output path",
                      what, target.string(), input.string()));
    }
  }
}

RunDirectory::RunDirectory(const std::string& out, const fs::path* trace_option,
                           const std::vector<std::string>& npy_outputs, const nlohmann::json& run_info,
                           const std::vector<fs::path>& inputs, bool lock)
    : dir_(out), npy_outputs_(npy_outputs), inputs_(inputs) {
  for (const auto& name : npy_outputs) check_output_name(name, "output tensor");
  if (trace_option != nullptr) {
    trace_ = trace_option->empty() ? dir_ / "trace.ldmtrace" : *trace_option;
    // Before any directory is made: a refused run creates nothing.
    check_not_trace(stats(), "stats file");
    check_not_trace(host_times(), "host times file");
    check_not_trace(dir_ / kIncompleteMarker, "run marker");
    check_not_trace(dir_ / kLockFile, "lock file");
    for (const auto& name : npy_outputs) check_not_trace(npy(name), "output " + name + ".npy");
    check_output(trace_, "trace file");
  }
  check_output(stats(), "stats file");
  check_output(host_times(), "host times file");
  check_output(dir_ / kIncompleteMarker, "run marker");
  check_output(dir_ / kLockFile, "lock file");
  for (const auto& name : npy_outputs) check_output(npy(name), "output " + name + ".npy");

  std::error_code no_dir;
  created_ = !fs::exists(fs::symlink_status(dir_, no_dir));
  make_directory(dir_, "--out");
  if (lock) {
    const std::string workload = run_info.contains("workload") && run_info["workload"].is_string()
                                     ? run_info["workload"].get<std::string>()
                                     : std::string("?");
    lock_ = DirectoryLock(dir_, "workload " + workload, true, "--out");  // released by lock_'s destructor
  }
  if (!trace_.empty()) {
    if (trace_.has_parent_path()) make_directory(trace_.parent_path(), "--trace");
    check_output_target(trace_, "trace file");
  }
  check_output_target(stats(), "stats file");
  check_output_target(host_times(), "host times file");
  for (const auto& name : npy_outputs) check_output_target(npy(name), "output .npy file");
  check_output_target(dir_ / kIncompleteMarker, "run marker");
  if (lock) remove_dead_temporaries(dir_);  // only the owner may: no other run writes here
  write_file_atomically(dir_ / kIncompleteMarker, run_info.dump(2) + "\n", "run marker");
}

RunDirectory::~RunDirectory() {
  std::error_code ignored;
  if (!completed_ && created_) {
    // A failed run in a directory it made: nothing in it is a result. Remove what this run wrote, then the
    // directory if it is empty (the trace elsewhere and anything another process put here stay).
    for (const auto& name : npy_outputs_) {
      if (fs::is_regular_file(fs::symlink_status(npy(name), ignored))) fs::remove(npy(name), ignored);
    }
    for (const fs::path& file : {stats(), host_times(), trace_, dir_ / kIncompleteMarker}) {
      if (!file.empty() && file.parent_path() == dir_ && fs::is_regular_file(fs::symlink_status(file, ignored))) {
        fs::remove(file, ignored);
      }
    }
    if (lock_.held()) fs::remove(dir_ / kLockFile, ignored);  // still ours: lock_ is released after this
    fs::remove(dir_, ignored);                                // only if empty
  }
}

void RunDirectory::check_output(const fs::path& file, std::string_view what) const {
  check_not_input(file, inputs_, what);
}

void RunDirectory::check_not_trace(const fs::path& file, const std::string& what) const {
  if (same_file_path(trace_, file)) {
    throw ConfigError(fmt::format("--trace {}: that is where the run writes its {}; choose another trace path",
                                  trace_.string(), what));
  }
}

namespace {
/// `p` absolute, symlinks of its existing part resolved, "." and ".." folded (the rest need not exist).
fs::path resolved(const fs::path& p, std::error_code& error) {
  const fs::path absolute = fs::absolute(p, error);
  return error ? fs::path() : fs::weakly_canonical(absolute, error).lexically_normal();
}
}  // namespace

bool same_file_path(const fs::path& a, const fs::path& b) {
  std::error_code ea, eb;
  const fs::path x = resolved(a, ea), y = resolved(b, eb);
  return !ea && !eb && x == y;
}

bool path_inside(const fs::path& file, const fs::path& dir) {
  std::error_code ea, eb;
  const fs::path x = resolved(file, ea), y = resolved(dir, eb);
  if (ea || eb) return false;
  const fs::path relative = x.lexically_relative(y);
  return !relative.empty() && *relative.begin() != "..";
}

void remove_dead_temporaries(const fs::path& dir) {
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    // ".NAME.tmp-PID-N" (output_file.cpp)
    const auto tmp = name.rfind(".tmp-");
    if (name.size() < 2 || name[0] != '.' || tmp == std::string::npos || tmp == 0) continue;
    const std::string rest = name.substr(tmp + 5);
    const auto dash = rest.find('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == rest.size()) continue;
    if (rest.find_first_not_of("0123456789-") != std::string::npos || rest.find('-', dash + 1) != std::string::npos ||
        dash > 9) {
      continue;
    }
    const long pid = std::stol(rest.substr(0, dash));
    if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    if (fs::is_regular_file(it->symlink_status(ignored))) fs::remove(it->path(), ignored);
  }
}

void RunDirectory::remove_stale_outputs(const std::vector<std::string>& npy_outputs) const {
  for (const auto& name : npy_outputs) {
    std::error_code error;
    if (fs::is_regular_file(fs::symlink_status(npy(name), error))) fs::remove(npy(name), error);
  }
}

void RunDirectory::complete() {
  std::error_code error;
  fs::remove(dir_ / kIncompleteMarker, error);
  completed_ = true;
}

nlohmann::json fault_json(const Fault& fault) {
  nlohmann::json out = {{"kind", std::string(to_string(fault.kind()))},
                        {"cg", fault.cg()},
                        {"core", fault.core()},
                        {"cycle", fault.cycle()},
                        {"kernel", fault.kernel()},
                        {"message", fault.detail()}};
  if (fault.field()) {
    out["field"] = fault.field()->name;
    out["value"] = fault.field()->value;
  }
  return out;
}

}  // namespace ldmsim
