// `ldmsim bench stream`: STREAM over DMA on one simulated core group, one configuration or a sweep over the
// block sizes of a measurement file compared with the measured rates (the DMA timing calibration).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "ldmsim/session/run_config.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/stream/stream_bench.hpp"

namespace ldmsim::cli {

namespace {

struct StreamOptions {
  std::string arch = "sw26010";
  std::string kernel = "copy";
  std::string mode = "pe";
  std::string format = "table";
  std::string data;
  bench::StreamConfig config;
  bool sweep = false;
};

void print_run(const Arch& arch, const bench::StreamConfig& config, const bench::StreamResult& r) {
  std::cout << fmt::format("stream {} on {} (core group 0, {} of {} cores, {} mode{})\n", to_string(config.kernel),
                           arch.name, r.cores, arch.cores_per_group(), to_string(config.mode),
                           config.get_only ? ", gets only" : "");
  if (config.gap_bytes == 0) {
    std::cout << fmt::format("  request: {} B contiguous at offset {} B; {} requests per core and array\n",
                             r.request_bytes, config.offset_bytes, r.rounds);
  } else {
    std::cout << fmt::format(
        "  request: {} B as {} blocks of {} B, {} B skipped between blocks, offset {} B; {} "
        "requests per core and array\n",
        r.request_bytes, r.request_bytes / config.block_bytes, config.block_bytes, config.gap_bytes,
        config.offset_bytes, r.rounds);
  }
  std::cout << fmt::format("  simulated: {} cycles = {:.1f} us; DMA traffic {:.1f} MB/s\n", r.cycles, r.seconds * 1e6,
                           r.dma_mbps);
  std::cout << fmt::format("  {}: {:.1f} MB/s\n", to_string(config.kernel), r.mbps);
}

void print_sweep(const Arch& arch, const StreamOptions& o, const std::string& data,
                 const std::vector<bench::SweepRow>& rows) {
  double worst = 0;
  for (const auto& row : rows) worst = std::max(worst, std::abs(row.relative_error));
  if (o.format == "csv") {
    std::cout << "block_bytes,simulated_MBps,measured_MBps,relative_error\n";
    for (const auto& row : rows) {
      std::cout << fmt::format("{},{:.1f},{:.1f},{:.4f}\n", row.measured.block_bytes, row.simulated.mbps,
                               row.measured.mbps, row.relative_error);
    }
    return;
  }
  std::cout << fmt::format("stream {} on {} ({} cores, {} mode, offset {} B) vs {}\n", o.kernel, arch.name,
                           rows.empty() ? 0 : rows.front().simulated.cores, o.mode, o.config.offset_bytes, data);
  std::cout << fmt::format("{:>11}  {:>14}  {:>13}  {:>7}\n", "block_bytes", "simulated_MBps", "measured_MBps",
                           "error");
  for (const auto& row : rows) {
    std::cout << fmt::format("{:>11}  {:>14.1f}  {:>13.1f}  {:>+6.1f}%\n", row.measured.block_bytes, row.simulated.mbps,
                             row.measured.mbps, 100 * row.relative_error);
  }
  std::cout << fmt::format("largest |error|: {:.1f}% over {} points\n", 100 * worst, rows.size());
}

void run_stream_command(StreamOptions& o) {
  const Arch arch = resolve_arch(o.arch);
  const auto kernel = bench::parse_stream_kernel(o.kernel);
  if (!kernel) throw ConfigError(fmt::format("--kernel must be copy, scale, add or triad (got '{}')", o.kernel));
  const auto mode = bench::parse_stream_mode(o.mode);
  if (!mode) throw ConfigError(fmt::format("--mode must be pe, bcast or row (got '{}')", o.mode));
  o.config.kernel = *kernel;
  o.config.mode = *mode;
  if (!o.sweep) {
    try {
      print_run(arch, o.config, bench::run_stream(arch, o.config));
    } catch (const bench::StreamVerifyError& e) {
      throw CommandFailed(e.what());
    }
    return;
  }
  // The built-in SW26010 copy curve unless --data names another measurement.
  const std::string data = o.data.empty() ? "the built-in SW26010 copy curve" : o.data;
  const auto points = o.data.empty() ? bench::sw26010_copy_measurements() : bench::read_measurements(o.data);
  print_sweep(arch, o, data, bench::sweep(arch, o.config, points));
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks on the simulated machine");
  bench->require_subcommand(1);
  auto options = std::make_shared<StreamOptions>();
  auto* stream = bench->add_subcommand(
      "stream", "STREAM over DMA on one core group: each core gets a block into its ldm, computes, puts it back");
  auto& o = *options;
  stream->add_option("--arch", o.arch, "Preset name or arch JSON file")->capture_default_str();
  stream->add_option("--kernel", o.kernel, "copy | scale | add | triad")->capture_default_str();
  stream->add_option("--block-bytes", o.config.block_bytes, "Contiguous block per request (bsize when strided)")
      ->check(non_negative())
      ->capture_default_str();
  stream->add_option("--gap-bytes", o.config.gap_bytes, "Bytes skipped between blocks (> 0: strided requests)")
      ->check(non_negative())
      ->capture_default_str();
  stream
      ->add_option("--request-bytes", o.config.request_bytes,
                   "Bytes of one strided request (default: blocks filling 24 KiB)")
      ->check(non_negative());
  stream->add_option("--cores", o.config.cores, "Cores that stream (default: the whole group)")->check(non_negative());
  stream->add_option("--offset-bytes", o.config.offset_bytes, "Array offset from a 256-byte boundary")
      ->check(non_negative())
      ->capture_default_str();
  stream->add_option("--mode", o.mode, "pe | bcast | row (who issues the gets and who receives them)")
      ->capture_default_str();
  stream->add_flag("--get-only", o.config.get_only,
                   "Gets only, no puts or barriers; bcast/row: only the issuing cores run (swCandle's BCAST runs)");
  stream->add_option("--rounds", o.config.rounds, "Requests per core and array (default: ~256 KiB per core)")
      ->check(non_negative());
  stream->add_flag("--verify", o.config.verify, "Initialise the inputs and check every output element");
  stream->add_flag("--sweep", o.sweep, "Run every block size of the measurement file and compare");
  stream->add_option(
      "--data", o.data,
      "Measurement CSV for --sweep (default: the built-in SW26010 copy curve, stream/data/ of the repository)");
  stream->add_option("--format", o.format, "Sweep output: table | csv")
      ->check(CLI::IsMember({"table", "csv"}))
      ->capture_default_str();
  add_examples(stream,
               "Examples:\n  ldmsim bench stream --kernel triad --block-bytes 2048\n  ldmsim bench stream --sweep");
  stream->callback([options] { run_stream_command(*options); });
  // After the subcommand: it inherits the footer as it is when it is added.
  add_examples(bench, "Example: ldmsim bench stream --sweep");
}

}  // namespace ldmsim::cli
