// The output directory of one run (see run_directory.hpp).
#include "run_directory.hpp"

#include <fmt/format.h>

#include <system_error>

#include "ldmsim/sim/output_file.hpp"

namespace ldmsim::cli {

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

RunDirectory::RunDirectory(const std::string& out, const fs::path* trace_option,
                           const std::vector<std::string>& npy_outputs, const nlohmann::json& run_info)
    : dir_(out) {
  for (const auto& name : npy_outputs) check_output_name(name, "output tensor");
  if (trace_option != nullptr) {
    trace_ = trace_option->empty() ? dir_ / "trace.ldmtrace" : *trace_option;
    // Before any directory is made: a refused run creates nothing.
    check_not_trace(stats(), "stats file");
    check_not_trace(host_times(), "host times file");
    check_not_trace(dir_ / kIncompleteMarker, "run marker");
    for (const auto& name : npy_outputs) check_not_trace(npy(name), "output " + name + ".npy");
  }
  make_directory(dir_, "--out");
  if (!trace_.empty()) {
    if (trace_.has_parent_path()) make_directory(trace_.parent_path(), "--trace");
    check_output_target(trace_, "trace file");
  }
  check_output_target(stats(), "stats file");
  check_output_target(host_times(), "host times file");
  for (const auto& name : npy_outputs) check_output_target(npy(name), "output .npy file");
  check_output_target(dir_ / kIncompleteMarker, "run marker");
  write_file_atomically(dir_ / kIncompleteMarker, run_info.dump(2) + "\n", "run marker");
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

void RunDirectory::remove_stale_outputs(const std::vector<std::string>& npy_outputs) const {
  for (const auto& name : npy_outputs) {
    std::error_code error;
    if (fs::is_regular_file(fs::symlink_status(npy(name), error))) fs::remove(npy(name), error);
  }
}

void RunDirectory::complete() const {
  std::error_code error;
  fs::remove(dir_ / kIncompleteMarker, error);
}

nlohmann::json fault_json(const Fault& fault) {
  return {{"kind", std::string(to_string(fault.kind()))},
          {"cg", fault.cg()},
          {"core", fault.core()},
          {"cycle", fault.cycle()},
          {"kernel", fault.kernel()},
          {"message", fault.detail()}};
}

}  // namespace ldmsim::cli
