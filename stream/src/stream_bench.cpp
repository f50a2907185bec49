// STREAM over DMA on a simulated core group (see stream_bench.hpp): plan, kernel, byte counting and the
// measurement file.
#include "ldmsim/stream/stream_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "ldmsim/ldmsim.hpp"
#include "ldmsim/sim/enum_names.hpp"
#include "ldmsim/sim/input_file.hpp"

namespace ldmsim::bench {

namespace {

constexpr std::uint64_t kElementBytes = sizeof(double);
constexpr double kScalar = 3.0;  // STREAM's scalar
// Default strided request: as many blocks as fit in the measurement's largest block (3072 doubles).
constexpr std::uint64_t kDefaultStridedRequestBytes = 24576;
// Default run length per core and array, and its bounds in requests.
constexpr std::uint64_t kDefaultBytesPerCore = 256 * 1024;
constexpr std::uint64_t kMinRounds = 16;
constexpr std::uint64_t kMaxRounds = 2048;

// The compute of the measured kernels' local loops on a CPE: one 32-byte vector load or store per cycle (the
// single ldm port of the in-order pipeline; the vector multiply/add of scale and triad issue on the other
// pipeline in the same cycle) plus the loop's own bookkeeping (index, compare, branch).
constexpr Cycle kLdmAccessCycles = 1;
constexpr Cycle kLoopOverheadCycles = 2;

/// Cycles of the local loop over `elements` doubles: copy/scale move 32 doubles per iteration (8 vector loads,
/// 8 vector stores), add/triad 16 doubles (8 loads from two inputs, 4 stores); the loop runs at least once.
Cycle compute_cycles(StreamKernel kernel, std::uint64_t elements) {
  const bool two_inputs = kernel == StreamKernel::kAdd || kernel == StreamKernel::kTriad;
  const std::uint64_t per_iteration = two_inputs ? 16 : 32;
  const std::uint64_t accesses = two_inputs ? 12 : 16;
  const std::uint64_t iterations = std::max<std::uint64_t>(1, (elements + per_iteration - 1) / per_iteration);
  return iterations * (accesses * kLdmAccessCycles + kLoopOverheadCycles);
}

/// swCandle's get-only (broadcast) scale, add and triad loops are not unrolled: one 4-double vector per
/// iteration, about 4 cycles with its loads, store and bookkeeping (its runs give 0.97 cycles per double for
/// scale and 1.08 for add over copy): one cycle per double.
Cycle get_only_loop_cycles(std::uint64_t elements) {
  return std::max<std::uint64_t>(elements, 4);
}

bool has_two_inputs(StreamKernel kernel) {
  return kernel == StreamKernel::kAdd || kernel == StreamKernel::kTriad;
}

double expected(StreamKernel kernel, double in0, double in1) {
  switch (kernel) {
    case StreamKernel::kCopy:
      return in0;
    case StreamKernel::kScale:
      return kScalar * in0;
    case StreamKernel::kAdd:
      return in0 + in1;
    case StreamKernel::kTriad:
      return in0 + kScalar * in1;
  }
  return 0;
}

/// Everything a core needs: the request geometry and where the arrays are.
struct Plan {
  StreamKernel kernel = StreamKernel::kCopy;
  StreamMode mode = StreamMode::kPe;
  std::uint64_t block = 0;
  std::uint64_t gap = 0;
  std::uint64_t request = 0;  // ldm bytes of one request
  std::uint64_t pitch = 0;    // main-memory distance between consecutive requests
  std::uint64_t rounds = 0;
  int cores = 0;
  int rows = 0;  // rows of the group (ROW mode: one input block per row and round)
  bool get_only = false;
  DeviceAddr in0 = 0;  // first input array (+ offset)
  DeviceAddr in1 = 0;  // second input (add, triad)
  DeviceAddr out = 0;  // output array (+ offset)
};

DmaRequest make_request(const Plan& plan, DmaOp op, DmaMode mode, DeviceAddr main, LdmAddr ldm) {
  DmaRequest r;
  r.op = op;
  r.mode = mode;
  r.main = main;
  r.ldm = ldm;
  r.length = plan.request;
  r.bsize = plan.gap != 0 ? plan.block : 0;
  r.stride = plan.gap;
  r.api = op == DmaOp::kGet ? "stream get" : "stream put";
  return r;
}

void local_loop(const Plan& plan, LdmSpan<double> in0, LdmSpan<double> io1, Core& core) {
  for (std::size_t i = 0; i < in0.size(); ++i) io1[i] = expected(plan.kernel, in0[i], io1[i]);
  // swCandle's get-only (broadcast) copy has no local loop: the data is only received.
  if (plan.get_only && plan.kernel == StreamKernel::kCopy) return;
  core.compute({.cycles = plan.get_only ? get_only_loop_cycles(in0.size()) : compute_cycles(plan.kernel, in0.size())});
}

/// The core that issues the gets a core's inputs arrive by: itself (PE), core 0 (BCAST) or its row's first core.
bool issues_gets(const Core& core, StreamMode mode) {
  return mode == StreamMode::kPe || (mode == StreamMode::kBcast ? core.id() == 0 : core.col() == 0);
}

void stream_kernel(Core& core, const Plan& plan) {
  const auto n = static_cast<std::size_t>(plan.request / kElementBytes);
  auto in0 = core.ldm().alloc<double>(n);
  auto io1 = core.ldm().alloc<double>(n);  // second input, then the result
  const bool two = has_two_inputs(plan.kernel);
  const auto id = static_cast<std::uint64_t>(core.id());
  const bool streams = core.id() < plan.cores;
  const bool shared_input = plan.mode != StreamMode::kPe;
  const Scope scope = plan.mode == StreamMode::kRow ? Scope::kRow : Scope::kGroup;
  const bool issuer = issues_gets(core, plan.mode);
  // PE cores outside --cores, and with get_only every core but the issuers, have nothing to do (broadcast rounds
  // with puts need every core at the barriers).
  if ((plan.mode == StreamMode::kPe && !streams) || (plan.get_only && !issuer)) return;
  const DmaMode get_mode = plan.mode == StreamMode::kPe      ? DmaMode::kPe
                           : plan.mode == StreamMode::kBcast ? DmaMode::kBcast
                                                             : DmaMode::kRow;
  for (std::uint64_t k = 0; k < plan.rounds; ++k) {
    const std::uint64_t out_at = (k * static_cast<std::uint64_t>(plan.cores) + id) * plan.pitch;
    // PE: each core its own block; BCAST/ROW: one block per round (and row), into every receiver's ldm.
    const std::uint64_t in_at =
        plan.mode == StreamMode::kPe ? out_at
        : plan.mode == StreamMode::kBcast
            ? k * plan.pitch
            : (k * static_cast<std::uint64_t>(plan.rows) + static_cast<std::uint64_t>(core.row())) * plan.pitch;
    if (issuer) {
      auto a = core.dma(make_request(plan, DmaOp::kGet, get_mode, plan.in0 + in_at, in0.ldm_addr()));
      if (two) {
        auto b = core.dma(make_request(plan, DmaOp::kGet, get_mode, plan.in1 + in_at, io1.ldm_addr()));
        core.wait(b);
      }
      core.wait(a);
    }
    if (shared_input && !plan.get_only) core.barrier(scope);  // publishes the round's input
    if (streams) {
      local_loop(plan, in0, io1, core);
      if (!plan.get_only) {
        core.wait(core.dma(make_request(plan, DmaOp::kPut, DmaMode::kPe, plan.out + out_at, io1.ldm_addr())));
      }
    }
    if (shared_input && !plan.get_only) core.barrier(scope);  // nobody overwrites a buffer another core still reads
  }
}

/// Input value of element `i` of array `which` (distinct, exactly representable).
double input_value(int which, std::uint64_t i) {
  return static_cast<double>(which * 1000 + static_cast<int>(i % 997));
}

void fill_inputs(Machine& m, const Plan& plan, DeviceAddr base0, DeviceAddr base1, std::uint64_t bytes) {
  for (int which = 0; which < (has_two_inputs(plan.kernel) ? 2 : 1); ++which) {
    std::vector<double> host(bytes / kElementBytes);
    for (std::uint64_t i = 0; i < host.size(); ++i) host[i] = input_value(which, i);
    m.write_bytes(which == 0 ? base0 : base1, std::as_bytes(std::span<const double>(host)));
  }
}

/// Checks every element of every block each streaming core wrote.
void verify_outputs(Machine& m, const Plan& plan, DeviceAddr out_base, std::uint64_t bytes) {
  const std::uint64_t cores_per_group = m.arch().cores_per_group();
  std::vector<double> out(bytes / kElementBytes);
  m.read_bytes(out_base, std::as_writable_bytes(std::span<double>(out)));
  const std::uint64_t offset = plan.out - out_base;  // the arrays share this offset from their bases
  const auto cores = static_cast<std::uint64_t>(plan.cores);
  for (std::uint64_t k = 0; k < plan.rounds; ++k) {
    for (std::uint64_t c = 0; c < cores; ++c) {
      const std::uint64_t out_at = offset + (k * cores + c) * plan.pitch;
      const auto rows = static_cast<std::uint64_t>(plan.rows);
      const std::uint64_t row = c / (cores_per_group / rows);
      const std::uint64_t in_at = plan.mode == StreamMode::kPe      ? out_at
                                  : plan.mode == StreamMode::kBcast ? offset + k * plan.pitch
                                                                    : offset + (k * rows + row) * plan.pitch;
      for (std::uint64_t b = 0; b < plan.request / plan.block; ++b) {
        for (std::uint64_t e = 0; e < plan.block; e += kElementBytes) {
          const std::uint64_t rel = b * (plan.block + plan.gap) + e;
          const std::uint64_t in_element = (in_at + rel) / kElementBytes;
          const double want = expected(plan.kernel, input_value(0, in_element), input_value(1, in_element));
          const double got = out[(out_at + rel) / kElementBytes];
          if (got != want) {
            throw StreamVerifyError(fmt::format("stream {}: output byte {} (round {}, core {}) is {}, want {}",
                                                to_string(plan.kernel), out_at + rel, k, c, got, want));
          }
        }
      }
    }
  }
}

/// Main-memory blocks each array holds per round: one per streaming core, and in ROW mode at least one per row.
std::uint64_t blocks_per_round(const Plan& plan) {
  const auto cores = static_cast<std::uint64_t>(plan.cores);
  return plan.mode == StreamMode::kRow ? std::max(cores, static_cast<std::uint64_t>(plan.rows)) : cores;
}

Plan make_plan(const Arch& arch, const StreamConfig& config) {
  Plan plan;
  plan.kernel = config.kernel;
  plan.mode = config.mode;
  plan.get_only = config.get_only;
  plan.rows = static_cast<int>(arch.rows);
  if (plan.get_only && config.verify) {
    throw ConfigError("--verify checks the outputs, which --get-only does not write; give one of them");
  }
  plan.block = config.block_bytes;
  plan.gap = config.gap_bytes;
  const std::uint64_t g = arch.dma.granularity_bytes;
  if (plan.block == 0 || plan.block % kElementBytes != 0) {
    throw ConfigError(fmt::format("--block-bytes must be a positive multiple of 8 (doubles), got {}", plan.block));
  }
  if (plan.block > arch.ldm_bytes / 2) {
    throw ConfigError(fmt::format("--block-bytes {} is larger than half the {}-byte local store of '{}'", plan.block,
                                  arch.ldm_bytes, arch.name));
  }
  if (config.offset_bytes > arch.main_memory_bytes_per_cg) {
    throw ConfigError(fmt::format("--offset-bytes {} is larger than the core group's {}-byte main memory",
                                  config.offset_bytes, arch.main_memory_bytes_per_cg));
  }
  if (plan.gap > arch.main_memory_bytes_per_cg) {
    throw ConfigError(fmt::format("--gap-bytes {} is larger than the core group's {}-byte main memory", plan.gap,
                                  arch.main_memory_bytes_per_cg));
  }
  if (plan.gap % kElementBytes != 0) {
    throw ConfigError(fmt::format("--gap-bytes must be a multiple of 8 (doubles), got {}", plan.gap));
  }
  if (config.offset_bytes % g != 0 || config.offset_bytes % kElementBytes != 0) {
    throw ConfigError(fmt::format("--offset-bytes must be a multiple of 8, got {}", config.offset_bytes));
  }
  if (plan.gap == 0) {
    plan.request = plan.block;
  } else if (config.request_bytes != 0) {
    plan.request = config.request_bytes;
    if (plan.request % plan.block != 0) {
      throw ConfigError(
          fmt::format("--request-bytes ({}) must be a multiple of --block-bytes ({})", plan.request, plan.block));
    }
  } else {
    plan.request = plan.block * std::max<std::uint64_t>(1, kDefaultStridedRequestBytes / plan.block);
  }
  plan.pitch = plan.request / plan.block * (plan.block + plan.gap);
  if (plan.request > arch.ldm_bytes / 2 || 2 * ((plan.request + 31) / 32 * 32) > arch.ldm_bytes) {
    throw ConfigError(fmt::format("two {}-byte ldm buffers do not fit the {}-byte local store of '{}'", plan.request,
                                  arch.ldm_bytes, arch.name));
  }
  const int group = static_cast<int>(arch.cores_per_group());
  plan.cores = config.cores == 0 ? group : config.cores;
  if (plan.cores < 1 || plan.cores > group) {
    throw ConfigError(fmt::format("--cores must be in 1..{} for '{}', got {}", group, arch.name, config.cores));
  }
  plan.rounds = config.rounds != 0
                    ? config.rounds
                    : std::clamp((kDefaultBytesPerCore + plan.request - 1) / plan.request, kMinRounds, kMaxRounds);
  // Each array holds rounds x blocks-per-round requests at the pitch (ROW mode reads one block per row and round,
  // whatever --cores); it must fit the group's main memory with the others.
  const std::uint64_t arrays = has_two_inputs(plan.kernel) ? 3 : 2;
  std::uint64_t array_bytes = 0;
  if (__builtin_mul_overflow(plan.rounds, blocks_per_round(plan), &array_bytes) ||
      __builtin_mul_overflow(array_bytes, plan.pitch, &array_bytes) ||
      array_bytes > arch.main_memory_bytes_per_cg / arrays) {
    throw ConfigError(
        fmt::format("--rounds {} x {} cores x {}-byte requests do not fit {} arrays in the core "
                    "group's {}-byte main memory",
                    plan.rounds, plan.cores, plan.pitch, arrays, arch.main_memory_bytes_per_cg));
  }
  return plan;
}

}  // namespace

constexpr auto kStreamKernelNames = enum_names<StreamKernel>({
    {StreamKernel::kCopy, "copy"},
    {StreamKernel::kScale, "scale"},
    {StreamKernel::kAdd, "add"},
    {StreamKernel::kTriad, "triad"},
});

std::string_view to_string(StreamKernel kernel) noexcept {
  return kStreamKernelNames.name(kernel);
}

constexpr auto kStreamModeNames =
    enum_names<StreamMode>({{StreamMode::kPe, "pe"}, {StreamMode::kBcast, "bcast"}, {StreamMode::kRow, "row"}});

std::string_view to_string(StreamMode mode) noexcept {
  return kStreamModeNames.name(mode);
}

std::optional<StreamKernel> parse_stream_kernel(std::string_view name) {
  return kStreamKernelNames.parse(name);
}

std::optional<StreamMode> parse_stream_mode(std::string_view name) {
  return kStreamModeNames.parse(name);
}

StreamResult run_stream(const Arch& arch, const StreamConfig& config) {
  Plan plan = make_plan(arch, config);
  MachineOptions options;
  options.trace = false;
  options.threads = 1;
  Machine m{arch, options};
  const std::uint64_t requests = plan.rounds * static_cast<std::uint64_t>(plan.cores);
  const std::uint64_t bytes =
      config.offset_bytes + plan.rounds * blocks_per_round(plan) * plan.pitch + arch.dma.transaction_bytes;
  const DeviceAddr base0 = m.allocate_bytes(bytes, {.name = "stream-in0"});
  const DeviceAddr base1 = has_two_inputs(plan.kernel) ? m.allocate_bytes(bytes, {.name = "stream-in1"}) : 0;
  const DeviceAddr out_base = m.allocate_bytes(bytes, {.name = "stream-out"});
  plan.in0 = base0 + config.offset_bytes;
  plan.in1 = base1 != 0 ? base1 + config.offset_bytes : 0;
  plan.out = out_base + config.offset_bytes;
  if (config.verify) fill_inputs(m, plan, base0, base1, bytes);

  m.launch(LaunchSpec{.groups = {0}, .name = fmt::format("stream-{}", to_string(plan.kernel))}, stream_kernel, plan)
      .join();

  const RunStats stats = m.stats();
  StreamResult r;
  r.request_bytes = plan.request;
  r.rounds = plan.rounds;
  r.cores = plan.cores;
  r.cycles = stats.groups.at(0).cycles;
  r.seconds = static_cast<double>(r.cycles) / arch.clock_hz;
  const std::uint64_t inputs = has_two_inputs(plan.kernel) ? 2 : 1;
  const std::uint64_t per_element = (plan.get_only ? inputs : inputs + 1) * kElementBytes;
  // With get_only, every ldm a get fills counts (swCandle's broadcast count): per round a broadcast fills the
  // whole group and the rows' gets every row, whatever --cores.
  const std::uint64_t receivers =
      !plan.get_only || plan.mode == StreamMode::kPe ? requests : plan.rounds * arch.cores_per_group();
  r.stream_bytes = receivers * (plan.request / kElementBytes) * per_element;
  r.dma_bytes = stats.groups.at(0).dma_bytes();
  r.mbps = r.seconds > 0 ? static_cast<double>(r.stream_bytes) / r.seconds / 1e6 : 0;
  r.dma_mbps = r.seconds > 0 ? static_cast<double>(r.dma_bytes) / r.seconds / 1e6 : 0;
  if (config.verify) verify_outputs(m, plan, out_base, bytes);
  return r;
}

std::vector<MeasuredPoint> read_measurements(const std::filesystem::path& csv) {
  // A bounded read of a regular file: /dev/zero or a huge file is refused before anything is read.
  return parse_measurements(read_input_file(csv, "measurement file", std::uint64_t{16} << 20), csv.string());
}

std::vector<MeasuredPoint> sw26010_copy_measurements() {
  return parse_measurements(sw26010_copy_csv(), "stream/data/sw26010_dma_stream_copy.csv (built in)");
}

std::vector<MeasuredPoint> parse_measurements(std::string_view csv_text, const std::string& origin) {
  std::istringstream in{std::string(csv_text)};
  std::vector<MeasuredPoint> points;
  std::string line;
  int block_col = -1;
  int rate_col = -1;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    if (block_col < 0) {  // the header
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (cells[i] == "block_bytes") block_col = static_cast<int>(i);
        if (cells[i].size() > 5 && cells[i].ends_with("_MBps")) rate_col = static_cast<int>(i);
      }
      if (block_col < 0 || rate_col < 0) {
        throw ConfigError(fmt::format("{}:{}: the header must name a block_bytes and a *_MBps column", origin, number));
      }
      continue;
    }
    const auto need = static_cast<std::size_t>(std::max(block_col, rate_col));
    try {
      if (cells.size() <= need) throw std::invalid_argument("missing column");
      MeasuredPoint p;
      p.block_bytes = std::stoull(cells[static_cast<std::size_t>(block_col)]);
      p.mbps = std::stod(cells[static_cast<std::size_t>(rate_col)]);
      if (p.block_bytes == 0 || !(p.mbps > 0)) throw std::invalid_argument("non-positive value");
      points.push_back(p);
    } catch (const std::exception& e) {
      throw ConfigError(fmt::format("{}:{}: cannot read '{}' ({})", origin, number, line, e.what()));
    }
  }
  if (points.empty()) throw ConfigError(fmt::format("{}: no measured points", origin));
  return points;
}

std::vector<SweepRow> sweep(const Arch& arch, const StreamConfig& base, const std::vector<MeasuredPoint>& points) {
  std::vector<SweepRow> rows;
  for (const auto& point : points) {
    StreamConfig config = base;
    config.block_bytes = point.block_bytes;
    config.gap_bytes = 0;
    SweepRow row;
    row.measured = point;
    row.simulated = run_stream(arch, config);
    row.relative_error = row.simulated.mbps / point.mbps - 1.0;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace ldmsim::bench
