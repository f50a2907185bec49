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
  make_directory(dir_, "--out");
  if (trace_option != nullptr) {
    trace_ = trace_option->empty() ? dir_ / "trace.ldmtrace" : *trace_option;
    if (trace_.has_parent_path()) make_directory(trace_.parent_path(), "--trace");
    check_output_target(trace_, "trace file");
  }
  check_output_target(stats(), "stats file");
  check_output_target(host_times(), "host times file");
  for (const auto& name : npy_outputs) check_output_target(npy(name), "output .npy file");
  check_output_target(dir_ / kIncompleteMarker, "run marker");
  write_file_atomically(dir_ / kIncompleteMarker, run_info.dump(2) + "\n", "run marker");
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
