// The DMA timing calibration, pinned: the sw26010 preset reproduces every point of the measured STREAM copy
// curve (stream/data/sw26010_dma_stream_copy.csv) within 15%, through the same runner as
// `ldmsim bench stream --sweep`; plus the runner's kernels computing the right values in every mode, and the
// command itself.
#include <fmt/format.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/stream/stream_bench.hpp"

using namespace ldmsim;
using namespace ldmsim::bench;

namespace {

/// The measurement file: $LDMSIM_CALIBRATION_DATA, else the repository's copy (stream/data/).
std::filesystem::path measurements() {
  if (const char* env = std::getenv("LDMSIM_CALIBRATION_DATA")) return env;
  return std::filesystem::path(LDMSIM_SOURCE_DIR) / "stream" / "data" / "sw26010_dma_stream_copy.csv";
}

}  // namespace

TEST_CASE("the built-in copy curve is the repository's measurement file", "[calibration]") {
  const auto built_in = sw26010_copy_measurements();
  const auto file =
      read_measurements(std::filesystem::path(LDMSIM_SOURCE_DIR) / "stream" / "data" / "sw26010_dma_stream_copy.csv");
  REQUIRE(built_in.size() == file.size());
  for (std::size_t i = 0; i < file.size(); ++i) {
    CHECK(built_in[i].block_bytes == file[i].block_bytes);
    CHECK(built_in[i].mbps == file[i].mbps);
  }
  CHECK_THROWS_WITH(parse_measurements("block_bytes,copy_MBps\n8,-1\n", "x.csv"), Catch::Contains("x.csv:2"));
}

TEST_CASE("sw26010 reproduces every measured STREAM copy point within 15%", "[calibration]") {
  const auto file = measurements();
  INFO("measurement file: " << file.string() << " (set LDMSIM_CALIBRATION_DATA to use another copy)");
  REQUIRE(std::filesystem::is_regular_file(file));
  const auto points = read_measurements(file);
  REQUIRE(points.size() >= 10);
  const auto rows = sweep(Arch::preset("sw26010"), StreamConfig{}, points);
  REQUIRE(rows.size() == points.size());
  for (const auto& row : rows) {
    INFO(fmt::format("{} B blocks: simulated {:.1f} MB/s, measured {:.1f} MB/s ({:+.1f}%)", row.measured.block_bytes,
                     row.simulated.mbps, row.measured.mbps, 100 * row.relative_error));
    CHECK(std::abs(row.relative_error) <= 0.15);
    CHECK(row.simulated.cores == 64);
  }
}

TEST_CASE("the copy curve keeps its shape: rising with the block size, bounded by the peak", "[calibration]") {
  const Arch arch = Arch::preset("sw26010");
  double previous = 0;
  for (std::uint64_t block : {8u, 32u, 128u, 512u, 2048u, 8192u, 24576u}) {
    StreamConfig c;
    c.block_bytes = block;
    c.rounds = 16;
    const double mbps = run_stream(arch, c).mbps;
    INFO(block << " B: " << mbps << " MB/s");
    CHECK(mbps > previous);
    previous = mbps;
  }
  // Copy reads and writes every byte once: its peak is the harmonic mean of the read and write line rates.
  const double get_rate = arch.dma.timing.at("bytes_per_cycle").get<double>();
  const double put_rate = arch.dma.timing.at("put_bytes_per_cycle").get<double>();
  const double peak_mbps = 2 / (1 / get_rate + 1 / put_rate) * arch.clock_hz / 1e6;
  CHECK(previous < peak_mbps);
  CHECK(previous > 0.9 * peak_mbps);
}

TEST_CASE("stream kernels compute STREAM's results in every mode and layout", "[calibration]") {
  const Arch arch = Arch::preset("sw26010");
  for (auto kernel : {StreamKernel::kCopy, StreamKernel::kScale, StreamKernel::kAdd, StreamKernel::kTriad}) {
    StreamConfig c;
    c.kernel = kernel;
    c.verify = true;
    c.rounds = 3;
    SECTION(fmt::format("{} pe, 8 cores", to_string(kernel))) {
      c.block_bytes = 200;
      c.cores = 8;
      const StreamResult r = run_stream(arch, c);
      const std::uint64_t per_element = kernel == StreamKernel::kAdd || kernel == StreamKernel::kTriad ? 24 : 16;
      CHECK(r.stream_bytes == 8 * 3 * 25 * per_element);
      CHECK(r.dma_bytes == r.stream_bytes);
      CHECK(r.mbps > 0);
    }
    SECTION(fmt::format("{} strided", to_string(kernel))) {
      c.block_bytes = 24;
      c.gap_bytes = 40;
      c.request_bytes = 240;
      c.cores = 5;
      CHECK(run_stream(arch, c).request_bytes == 240);
    }
    SECTION(fmt::format("{} broadcast", to_string(kernel))) {
      c.block_bytes = 64;
      c.mode = StreamMode::kBcast;
      const StreamResult r = run_stream(arch, c);
      const std::uint64_t inputs = kernel == StreamKernel::kAdd || kernel == StreamKernel::kTriad ? 2 : 1;
      CHECK(r.dma_bytes == 3 * 64 * (inputs + 64));  // one broadcast per input and round, 64 puts per round
    }
    SECTION(fmt::format("{} row", to_string(kernel))) {
      c.block_bytes = 64;
      c.mode = StreamMode::kRow;
      const StreamResult r = run_stream(arch, c);
      const std::uint64_t inputs = kernel == StreamKernel::kAdd || kernel == StreamKernel::kTriad ? 2 : 1;
      CHECK(r.dma_bytes == 3 * 64 * (8 * inputs + 64));  // one row get per input, row and round; 64 puts
    }
    SECTION(fmt::format("{} broadcast, gets only", to_string(kernel))) {
      c.verify = false;
      c.block_bytes = 64;
      c.mode = StreamMode::kBcast;
      c.get_only = true;
      const StreamResult r = run_stream(arch, c);
      const std::uint64_t inputs = kernel == StreamKernel::kAdd || kernel == StreamKernel::kTriad ? 2 : 1;
      CHECK(r.dma_bytes == 3 * 64 * inputs);      // core 0's gets, nothing else
      CHECK(r.stream_bytes == 64 * r.dma_bytes);  // swCandle's count: every ldm the broadcast fills
    }
  }
}

TEST_CASE("stream configurations that cannot run are ConfigErrors", "[calibration]") {
  const Arch arch = Arch::preset("sw26010");
  StreamConfig c;
  c.block_bytes = 12;
  CHECK_THROWS_AS(run_stream(arch, c), ConfigError);
  c.block_bytes = 40000;  // two buffers do not fit 64 KiB
  CHECK_THROWS_AS(run_stream(arch, c), ConfigError);
  c.block_bytes = 64;
  c.cores = 65;
  CHECK_THROWS_AS(run_stream(arch, c), ConfigError);
  c.cores = 0;
  c.gap_bytes = 36;  // not whole doubles
  CHECK_THROWS_AS(run_stream(arch, c), ConfigError);
  c.gap_bytes = 64;
  c.request_bytes = 96;
  CHECK_THROWS_AS(run_stream(arch, c), ConfigError);
  CHECK(parse_stream_kernel("triad") == StreamKernel::kTriad);
  CHECK_FALSE(parse_stream_kernel("copy2"));
  CHECK(parse_stream_mode("bcast") == StreamMode::kBcast);
  CHECK(parse_stream_mode("row") == StreamMode::kRow);
  c.request_bytes = 0;
  c.get_only = true;
  c.verify = true;  // get_only writes no outputs to verify
  CHECK_THROWS_AS(run_stream(arch, c), ConfigError);
}

#ifdef LDMSIM_CLI
namespace {
/// Runs `ldmsim ARGS` and returns (exit code, stdout + stderr).
std::pair<int, std::string> run_cli(const std::string& args) {
  FILE* pipe = popen((std::string("'") + LDMSIM_CLI + "' " + args + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[4096];
  for (std::size_t n = 0; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}
}  // namespace

TEST_CASE("ldmsim bench stream prints the simulated rate and the sweep table", "[calibration][cli]") {
  auto [code, out] = run_cli("bench stream --arch sw26010 --kernel triad --block-bytes 256 --cores 8 --rounds 4");
  INFO(out);
  CHECK(code == 0);
  CHECK_THAT(out, Catch::Contains("8 of 64 cores") && Catch::Contains("triad: ") && Catch::Contains(" MB/s"));

  std::tie(code, out) = run_cli("bench stream --sweep --format csv --data '" + measurements().string() + "'");
  INFO(out);
  CHECK(code == 0);
  std::istringstream lines(out);
  std::string line;
  std::getline(lines, line);
  CHECK(line == "block_bytes,simulated_MBps,measured_MBps,relative_error");
  int rows = 0;
  while (std::getline(lines, line)) ++rows;
  CHECK(rows == static_cast<int>(read_measurements(measurements()).size()));
  // Without --data, the curve compiled into the tool: the same rows, so an installed binary needs no file.
  const std::string with_file = out;
  std::tie(code, out) = run_cli("bench stream --sweep --format csv");
  CHECK(code == 0);
  CHECK(out == with_file);

  std::tie(code, out) = run_cli("bench stream --kernel copy2");
  CHECK(code == 2);
  CHECK_THAT(out, Catch::Contains("--kernel must be copy, scale, add or triad"));
  std::tie(code, out) = run_cli("bench stream --block-bytes 12");
  CHECK(code == 2);
  CHECK_THAT(out, Catch::Contains("--block-bytes must be a positive multiple of 8"));
}
#endif
