// Arch: reading, validating and writing the arch config tree. Every rule is checked at load and every error
// names its source and JSON path ("tiny.json: core_groups.cores.rows must be in 1..32 (got 0)").
#include "ldmsim/sim/arch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <system_error>

#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/input_file.hpp"
#include "ldmsim/sim/json_checked.hpp"
#include "preset_sources.hpp"

namespace ldmsim {
namespace {

using nlohmann::json;

// Limits of the rules (docs/arch-config.md lists them with the rest).
constexpr std::uint64_t kPageBytes = 4096;
constexpr std::uint64_t kMaxMainMemoryBytes = std::uint64_t{1} << 40;
constexpr std::uint64_t kMinLdmBytes = 1024;
constexpr std::uint64_t kMaxLdmBytes = 16 * 1024 * 1024;
constexpr std::uint64_t kMaxGranularityBytes = 64;
// Host memory: the read pricer keeps a cost per 2-byte offset within a transaction (kernels/matrix_block.hpp), so a
// transaction much larger than any machine's (128 to 256 bytes) would cost memory, not realism.
constexpr std::uint64_t kMaxTransactionBytes = std::uint64_t{1} << 16;
constexpr std::uint64_t kMaxFieldBits = 32;  // trace events store length, bsize and stride in 32 bits
constexpr std::uint64_t kMaxUint32 = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kMaxArchFileBytes = std::uint64_t{1} << 20;  // presets are < 1 KiB
constexpr std::uint64_t kMaxSimdLanes = 4096;
constexpr double kMaxIssueRate = 1024;   // instructions per cycle
constexpr double kMinRate = 1.0 / 4096;  // the least work per cycle a rate may describe (as the DMA timing's)
constexpr double kMaxFlopsPerCycle = 1e6;
constexpr std::uint64_t kMaxTimingCycles = 1'000'000'000;  // a cost beyond it would overflow the clock
constexpr std::string_view kCyclesRule = "must be in 0..1000000000";

/// Every key of the tree by full path; an object's allowed keys are its children here. dma.timing's keys other
/// than "model" belong to the timing model and are not listed.
constexpr std::array<std::string_view, 50> kSchema = {
    "name",
    "clock_hz",
    "core_groups",
    "core_groups.count",
    "core_groups.main_memory_bytes",
    "core_groups.cores",
    "core_groups.cores.rows",
    "core_groups.cores.cols",
    "core_groups.cores.ldm_bytes",
    "core_groups.cores.flops_per_cycle",
    "core_groups.cores.barrier_cycles",
    "core_groups.cores.node_barrier_cycles",
    "core_groups.cores.context_switch_cycles",
    "core_groups.cores.compute",
    "core_groups.cores.compute.f16",
    "core_groups.cores.compute.f16.simd_lanes",
    "core_groups.cores.compute.f16.fma_per_cycle",
    "core_groups.cores.compute.f32",
    "core_groups.cores.compute.f32.simd_lanes",
    "core_groups.cores.compute.f32.fma_per_cycle",
    "core_groups.cores.compute.f64",
    "core_groups.cores.compute.f64.simd_lanes",
    "core_groups.cores.compute.f64.fma_per_cycle",
    "core_groups.cores.compute.vector_registers",
    "core_groups.cores.compute.ldm_accesses_per_cycle",
    "core_groups.cores.compute.dual_issue",
    "core_groups.cores.compute.loop_overhead_cycles",
    "core_groups.cores.register_communication",
    "core_groups.cores.register_communication.latency_cycles",
    "core_groups.cores.register_communication.put_cycles",
    "core_groups.cores.register_communication.get_cycles",
    "core_groups.cores.register_communication.buffer_entries",
    "core_groups.cores.rma",
    "core_groups.cores.rma.issue_cycles",
    "core_groups.cores.rma.bytes_per_cycle",
    "core_groups.cores.rma.broadcast_bytes_per_cycle",
    "core_groups.cores.rma.latency_cycles",
    "core_groups.cores.rma.hop_cycles",
    "core_groups.cores.rma.cluster",
    "dma",
    "dma.granularity_bytes",
    "dma.transaction_bytes",
    "dma.fields",
    "dma.fields.length_bits",
    "dma.fields.bsize_bits",
    "dma.fields.stride_bits",
    "dma.timing",
    "dma.remote",
    "dma.remote.latency_cycles",
    "dma.remote.bytes_per_cycle",
};

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

std::string_view leaf(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

std::string join_path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string{key} : fmt::format("{}.{}", parent, key);
}

/// Keys allowed directly under `parent` ("" is the root).
std::vector<std::string> children(std::string_view parent) {
  std::vector<std::string> keys;
  for (std::string_view path : kSchema) {
    const bool under =
        parent.empty() || (path.size() > parent.size() + 1 && path.starts_with(parent) && path[parent.size()] == '.');
    if (!under) continue;
    const std::string_view rest = parent.empty() ? path : path.substr(parent.size() + 1);
    if (rest.find('.') == std::string_view::npos) keys.emplace_back(rest);
  }
  return keys;
}

/// Where errors go: prefixes every message with the origin (file name or preset).
struct Context {
  std::string_view origin;

  [[noreturn]] void fail(std::string_view message) const { throw ConfigError(fmt::format("{}: {}", origin, message)); }
  [[noreturn]] void fail(std::string_view path, std::string_view rule, const json& value) const {
    fail(fmt::format("{} {} (got {})", path, rule, describe_json(value)));
  }
};

/// One object of the tree: checked to be an object with only known keys; members are looked up by key.
class Object {
 public:
  Object(const Context& ctx, const json& value, std::string path) : ctx_(ctx), value_(value), path_(std::move(path)) {
    if (!value_.is_object()) {
      if (path_.empty())
        ctx_.fail(fmt::format("the arch config must be a JSON object (got {})", describe_json(value_)));
      ctx_.fail(path_, "must be an object", value_);
    }
    const std::vector<std::string> allowed = children(path_);
    for (const auto& item : value_.items()) {
      if (std::find(allowed.begin(), allowed.end(), item.key()) != allowed.end()) continue;
      ctx_.fail(unknown_key_message(item.key(), allowed));
    }
  }

  std::string path_of(std::string_view key) const { return join_path(path_, key); }
  const json* find(std::string_view key) const {
    const auto it = value_.find(key);
    return it == value_.end() ? nullptr : &*it;
  }
  const json& require(std::string_view key) const {
    const json* member = find(key);
    if (member == nullptr) ctx_.fail(fmt::format("missing required key {}", path_of(key)));
    return *member;
  }
  const Context& ctx() const { return ctx_; }

 private:
  std::string unknown_key_message(const std::string& key, const std::vector<std::string>& allowed) const {
    std::optional<std::string> suggestion;
    if (auto sibling = closest_match(key, allowed)) {
      suggestion = path_of(*sibling);
    } else {
      // A known key at another level of the tree ("ldm_bytes" directly under core_groups).
      for (std::string_view path : kSchema) {
        if (edit_distance(leaf(path), key) == 0) {
          suggestion = std::string{path};
          break;
        }
      }
    }
    if (suggestion) return fmt::format("unknown key {} (did you mean {}?)", path_of(key), *suggestion);
    return fmt::format("unknown key {} (allowed here: {})", path_of(key), join(allowed, ", "));
  }

  const Context& ctx_;
  const json& value_;
  std::string path_;
};

/// A non-negative integer value; nullopt if it is a negative integer. Integral floats (1e9) count as integers.
std::optional<std::uint64_t> as_unsigned(const Context& ctx, const json& value, std::string_view path) {
  switch (value.type()) {
    case json::value_t::number_unsigned:
      return value.get<std::uint64_t>();
    case json::value_t::number_integer: {
      const auto signed_value = value.get<std::int64_t>();
      if (signed_value < 0) return std::nullopt;
      return static_cast<std::uint64_t>(signed_value);
    }
    case json::value_t::number_float: {
      const double d = value.get<double>();
      if (!std::isfinite(d) || std::trunc(d) != d) break;
      if (d < 0) return std::nullopt;
      if (d >= 0x1p64) return std::numeric_limits<std::uint64_t>::max();
      return static_cast<std::uint64_t>(d);
    }
    default:
      break;
  }
  ctx.fail(path, "must be an integer", value);
}

/// An integer in [lo, hi]; anything else fails with `rule`.
std::uint64_t integer_in(const Object& object, std::string_view key, const json& value, std::uint64_t lo,
                         std::uint64_t hi, std::string_view rule) {
  const std::string path = object.path_of(key);
  const std::optional<std::uint64_t> number = as_unsigned(object.ctx(), value, path);
  if (!number || *number < lo || *number > hi) object.ctx().fail(path, rule, value);
  return *number;
}

/// A finite number > 0.
double positive_number(const Object& object, std::string_view key, const json& value) {
  const std::string path = object.path_of(key);
  if (!value.is_number()) object.ctx().fail(path, "must be a number", value);
  const double number = value.get<double>();
  if (!(number > 0) || !std::isfinite(number)) object.ctx().fail(path, "must be > 0 and finite", value);
  return number;
}

std::string non_empty_string(const Context& ctx, std::string_view path, const json& value) {
  if (!value.is_string()) ctx.fail(path, "must be a string", value);
  if (value.get_ref<const std::string&>().empty()) ctx.fail(path, "must be a non-empty string", value);
  return value.get<std::string>();
}

std::uint32_t to_u32(std::uint64_t value) {
  return static_cast<std::uint32_t>(value);
}

void read_dma(const Object& dma, DmaArch& out) {
  if (const json* v = dma.find("granularity_bytes")) {
    const std::uint64_t g =
        integer_in(dma, "granularity_bytes", *v, 1, kMaxGranularityBytes, "must be a power of two in 1..64");
    if (!std::has_single_bit(g)) {
      dma.ctx().fail(dma.path_of("granularity_bytes"), "must be a power of two in 1..64", *v);
    }
    out.granularity_bytes = to_u32(g);
  }
  if (const json* v = dma.find("transaction_bytes")) {
    const std::string rule = fmt::format("must be a power of two, at least dma.granularity_bytes ({}) and at most 2^16",
                                         out.granularity_bytes);
    const std::uint64_t t = integer_in(dma, "transaction_bytes", *v, out.granularity_bytes, kMaxTransactionBytes, rule);
    if (!std::has_single_bit(t)) dma.ctx().fail(dma.path_of("transaction_bytes"), rule, *v);
    out.transaction_bytes = to_u32(t);
  }
  if (const json* v = dma.find("fields")) {
    const Object fields(dma.ctx(), *v, dma.path_of("fields"));
    const auto bits = [&](std::string_view key, std::uint32_t& field) {
      if (const json* b = fields.find(key)) {
        field = to_u32(integer_in(fields, key, *b, 1, kMaxFieldBits, "must be in 1..32"));
      }
    };
    bits("length_bits", out.fields.length_bits);
    bits("bsize_bits", out.fields.bsize_bits);
    bits("stride_bits", out.fields.stride_bits);
  }
  if (const json* v = dma.find("remote")) {
    const Object remote(dma.ctx(), *v, dma.path_of("remote"));
    const auto non_negative = [&](std::string_view key, double& field) {
      const json* n = remote.find(key);
      if (n == nullptr) return;
      const std::string path = remote.path_of(key);
      if (!n->is_number()) remote.ctx().fail(path, "must be a number", *n);
      const double value = n->get<double>();
      if (!(value >= 0) || !std::isfinite(value) || value > 1e9) remote.ctx().fail(path, "must be in [0, 1e9]", *n);
      field = value;
    };
    non_negative("latency_cycles", out.remote.latency_cycles);
    non_negative("bytes_per_cycle", out.remote.bytes_per_cycle);
  }
  if (const json* v = dma.find("timing")) {
    const std::string path = dma.path_of("timing");
    if (!v->is_object()) dma.ctx().fail(path, "must be an object with a string \"model\"", *v);
    const auto model = v->find("model");
    if (model == v->end()) dma.ctx().fail(fmt::format("missing required key {}.model", path));
    non_empty_string(dma.ctx(), path + ".model", *model);
    out.timing = *v;  // the model's own parameters are validated by the model
  }
}

/// A rate in [kMinRate, hi]: a rate of 1e-300 per cycle would turn work into more cycles than a counter holds.
double bounded_rate(const Object& object, std::string_view key, const json& value, double hi) {
  const double number = positive_number(object, key, value);
  if (number < kMinRate || number > hi) {
    object.ctx().fail(object.path_of(key), fmt::format("must be in [1/4096, {}] per cycle", hi), value);
  }
  return number;
}

/// core_groups.cores.compute: every member optional, defaults from ComputeModel::scalar(flops_per_cycle).
ComputeModel read_compute(const Object& compute, double flops_per_cycle) {
  ComputeModel model = ComputeModel::scalar(flops_per_cycle);
  for (const DataType type : {DataType::kF16, DataType::kF32, DataType::kF64}) {
    const json* v = compute.find(to_string(type));
    if (v == nullptr) continue;
    const Object unit(compute.ctx(), *v, compute.path_of(to_string(type)));
    VectorUnit& out = model.unit(type);
    if (const json* lanes = unit.find("simd_lanes")) {
      out.simd_lanes = to_u32(integer_in(unit, "simd_lanes", *lanes, 1, kMaxSimdLanes, "must be in 1..4096"));
    }
    if (const json* rate = unit.find("fma_per_cycle")) {
      out.fma_per_cycle = bounded_rate(unit, "fma_per_cycle", *rate, kMaxIssueRate);
    }
  }
  if (const json* v = compute.find("vector_registers")) {
    model.vector_registers = to_u32(integer_in(compute, "vector_registers", *v, 3, 1024, "must be in 3..1024"));
  }
  if (const json* v = compute.find("ldm_accesses_per_cycle")) {
    model.ldm_accesses_per_cycle = bounded_rate(compute, "ldm_accesses_per_cycle", *v, kMaxIssueRate);
  }
  if (const json* v = compute.find("dual_issue")) {
    if (!v->is_boolean()) compute.ctx().fail(compute.path_of("dual_issue"), "must be true or false", *v);
    model.dual_issue = v->get<bool>();
  }
  if (const json* v = compute.find("loop_overhead_cycles")) {
    model.loop_overhead_cycles =
        to_u32(integer_in(compute, "loop_overhead_cycles", *v, 0, 1000000, "must be in 0..1000000"));
  }
  return model;
}

json compute_to_json(const ComputeModel& model) {
  json tree = json::object();
  for (const DataType type : {DataType::kF16, DataType::kF32, DataType::kF64}) {
    const VectorUnit& u = model.unit(type);
    tree[std::string{to_string(type)}] = {{"simd_lanes", u.simd_lanes}, {"fma_per_cycle", u.fma_per_cycle}};
  }
  tree["vector_registers"] = model.vector_registers;
  tree["ldm_accesses_per_cycle"] = model.ldm_accesses_per_cycle;
  tree["dual_issue"] = model.dual_issue;
  tree["loop_overhead_cycles"] = model.loop_overhead_cycles;
  return tree;
}

/// An optional cycle count of an object (0..1e9) into `field`.
void read_cycles(const Object& object, std::string_view key, std::uint32_t& field) {
  if (const json* v = object.find(key)) field = to_u32(integer_in(object, key, *v, 0, kMaxTimingCycles, kCyclesRule));
}

RegisterCommArch read_register_comm(const Object& comm) {
  RegisterCommArch r;
  r.available = true;
  read_cycles(comm, "latency_cycles", r.latency_cycles);
  read_cycles(comm, "put_cycles", r.put_cycles);
  read_cycles(comm, "get_cycles", r.get_cycles);
  if (const json* v = comm.find("buffer_entries")) {
    r.buffer_entries = to_u32(integer_in(comm, "buffer_entries", *v, 1, 1024, "must be in 1..1024"));
  }
  return r;
}

RmaArch read_rma(const Object& rma) {
  RmaArch r;
  r.available = true;
  read_cycles(rma, "issue_cycles", r.issue_cycles);
  read_cycles(rma, "latency_cycles", r.latency_cycles);
  read_cycles(rma, "hop_cycles", r.hop_cycles);
  if (const json* v = rma.find("bytes_per_cycle")) r.bytes_per_cycle = bounded_rate(rma, "bytes_per_cycle", *v, 1e6);
  r.broadcast_bytes_per_cycle = r.bytes_per_cycle;
  if (const json* v = rma.find("broadcast_bytes_per_cycle")) {
    r.broadcast_bytes_per_cycle = bounded_rate(rma, "broadcast_bytes_per_cycle", *v, 1e6);
  }
  if (const json* v = rma.find("cluster")) {
    r.cluster = to_u32(integer_in(rma, "cluster", *v, 1, kMaxRowsCols, "must be in 1..32"));
  }
  return r;
}

void read_cores(const Object& cores, const DmaArch& dma, Arch& out) {
  const std::string rows_cols_rule = fmt::format("must be in 1..{}", kMaxRowsCols);
  out.rows = to_u32(integer_in(cores, "rows", cores.require("rows"), 1, kMaxRowsCols, rows_cols_rule));
  out.cols = to_u32(integer_in(cores, "cols", cores.require("cols"), 1, kMaxRowsCols, rows_cols_rule));

  const json& ldm = cores.require("ldm_bytes");
  const std::string multiple_rule = fmt::format("must be a positive multiple of {}", dma.granularity_bytes);
  const std::uint64_t ldm_bytes =
      integer_in(cores, "ldm_bytes", ldm, 1, std::numeric_limits<std::uint64_t>::max(), multiple_rule);
  if (ldm_bytes % dma.granularity_bytes != 0) cores.ctx().fail(cores.path_of("ldm_bytes"), multiple_rule, ldm);
  if (ldm_bytes < kMinLdmBytes || ldm_bytes > kMaxLdmBytes) {
    cores.ctx().fail(cores.path_of("ldm_bytes"), "must be in 1 KiB..16 MiB (1024..16777216)", ldm);
  }
  out.ldm_bytes = ldm_bytes;

  if (const json* v = cores.find("flops_per_cycle")) {
    out.flops_per_cycle = bounded_rate(cores, "flops_per_cycle", *v, kMaxFlopsPerCycle);
  }
  const json* compute = cores.find("compute");
  out.compute = compute == nullptr
                    ? ComputeModel::scalar(out.flops_per_cycle)
                    : read_compute(Object(cores.ctx(), *compute, cores.path_of("compute")), out.flops_per_cycle);
  const auto read_u32 = [&cores](std::string_view key, std::uint32_t& field) {
    if (const json* v = cores.find(key))
      field = to_u32(integer_in(cores, key, *v, 0, kMaxUint32, "must be in 0..4294967295"));
  };
  read_u32("barrier_cycles", out.barrier_cycles);
  out.node_barrier_cycles = out.barrier_cycles;  // absent: as cheap as a group barrier
  read_u32("node_barrier_cycles", out.node_barrier_cycles);
  read_u32("context_switch_cycles", out.context_switch_cycles);
  if (const json* reg = cores.find("register_communication")) {
    out.register_comm = read_register_comm(Object(cores.ctx(), *reg, cores.path_of("register_communication")));
  }
  if (const json* rma = cores.find("rma")) out.rma = read_rma(Object(cores.ctx(), *rma, cores.path_of("rma")));
}

void read_core_groups(const Object& groups, const DmaArch& dma, Arch& out) {
  out.core_groups = to_u32(integer_in(groups, "count", groups.require("count"), 1, kMaxCoreGroups,
                                      fmt::format("must be in 1..{}", kMaxCoreGroups)));
  const json& memory = groups.require("main_memory_bytes");
  const std::string multiple_rule = fmt::format("must be a positive multiple of {}", kPageBytes);
  const std::uint64_t bytes =
      integer_in(groups, "main_memory_bytes", memory, 1, std::numeric_limits<std::uint64_t>::max(), multiple_rule);
  if (bytes > kMaxMainMemoryBytes) {
    groups.ctx().fail(groups.path_of("main_memory_bytes"), "must be at most 2^40 (1099511627776)", memory);
  }
  if (bytes % kPageBytes != 0) groups.ctx().fail(groups.path_of("main_memory_bytes"), multiple_rule, memory);
  out.main_memory_bytes_per_cg = bytes;
  read_cores(Object(groups.ctx(), groups.require("cores"), groups.path_of("cores")), dma, out);
}

}  // namespace

Arch Arch::from_json(const nlohmann::json& tree, std::string_view origin) {
  const Context ctx{origin};
  const Object root(ctx, tree, "");
  Arch arch;
  arch.name = non_empty_string(ctx, "name", root.require("name"));
  arch.clock_hz = positive_number(root, "clock_hz", root.require("clock_hz"));
  if (const json* dma = root.find("dma")) read_dma(Object(ctx, *dma, "dma"), arch.dma);
  read_core_groups(Object(ctx, root.require("core_groups"), "core_groups"), arch.dma, arch);
  return arch;
}

nlohmann::json Arch::to_json() const {
  json cores = json::object();
  cores["rows"] = rows;
  cores["cols"] = cols;
  cores["ldm_bytes"] = ldm_bytes;
  cores["flops_per_cycle"] = flops_per_cycle;
  cores["barrier_cycles"] = barrier_cycles;
  cores["node_barrier_cycles"] = node_barrier_cycles;
  cores["context_switch_cycles"] = context_switch_cycles;
  if (rma.available) {
    cores["rma"] = {{"issue_cycles", rma.issue_cycles},
                    {"bytes_per_cycle", rma.bytes_per_cycle},
                    {"broadcast_bytes_per_cycle", rma.broadcast_bytes_per_cycle},
                    {"latency_cycles", rma.latency_cycles},
                    {"hop_cycles", rma.hop_cycles},
                    {"cluster", rma.cluster}};
  }
  if (register_comm.available) {
    cores["register_communication"] = {{"latency_cycles", register_comm.latency_cycles},
                                       {"put_cycles", register_comm.put_cycles},
                                       {"get_cycles", register_comm.get_cycles},
                                       {"buffer_entries", register_comm.buffer_entries}};
  }
  cores["compute"] = compute_to_json(compute);

  json groups = json::object();
  groups["count"] = core_groups;
  groups["main_memory_bytes"] = main_memory_bytes_per_cg;
  groups["cores"] = std::move(cores);

  json fields = json::object();
  fields["length_bits"] = dma.fields.length_bits;
  fields["bsize_bits"] = dma.fields.bsize_bits;
  fields["stride_bits"] = dma.fields.stride_bits;

  json dma_tree = json::object();
  dma_tree["granularity_bytes"] = dma.granularity_bytes;
  dma_tree["transaction_bytes"] = dma.transaction_bytes;
  dma_tree["fields"] = std::move(fields);
  dma_tree["remote"] = {{"latency_cycles", dma.remote.latency_cycles}, {"bytes_per_cycle", dma.remote.bytes_per_cycle}};
  dma_tree["timing"] = dma.timing;

  json tree = json::object();
  tree["name"] = name;
  tree["clock_hz"] = clock_hz;
  tree["core_groups"] = std::move(groups);
  tree["dma"] = std::move(dma_tree);
  return tree;
}

std::vector<std::string> Arch::preset_names() {
  std::vector<std::string> names;
  for (const auto& entry : detail::preset_sources()) names.push_back(entry.first);
  return names;
}

Arch Arch::preset(std::string_view name) {
  const auto& sources = detail::preset_sources();
  const auto it = sources.find(std::string{name});
  if (it == sources.end()) {
    const std::vector<std::string> names = preset_names();
    const std::optional<std::string> suggestion = closest_match(name, names);
    throw ConfigError(fmt::format("unknown arch preset '{}' (presets: {}){}", name, join(names, ", "),
                                  suggestion ? fmt::format("; did you mean {}?", *suggestion) : std::string{}));
  }
  const std::string origin = fmt::format("sim/presets/{}.json", it->first);
  return from_json(parse_json(it->second, origin), origin);
}

Arch Arch::load(const std::filesystem::path& file) {
  const std::string origin = file.string();
  return from_json(read_json_file(file, "arch file", kMaxArchFileBytes), origin);
}

Arch Arch::resolve(std::string_view name_or_file) {
  if (detail::preset_sources().contains(std::string{name_or_file})) return preset(name_or_file);
  const std::filesystem::path path{name_or_file};
  std::error_code ec;
  if (!name_or_file.empty() && std::filesystem::exists(path, ec)) return load(path);
  const std::vector<std::string> names = preset_names();
  const std::optional<std::string> suggestion = closest_match(name_or_file, names);
  throw ConfigError(fmt::format("unknown arch '{}': not a preset ({}) and no such file{}", name_or_file,
                                join(names, ", "), suggestion ? fmt::format(" (did you mean {}?)", *suggestion) : ""));
}

}  // namespace ldmsim
