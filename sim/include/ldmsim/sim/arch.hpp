// The simulated machine's architecture: one JSON tree (core groups -> cores -> ldm; dma -> timing model),
// validated at load. Presets (sw26010, sw26010pro, tiny) are stored in the same format as user files.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ldmsim/sim/compute_model.hpp"

namespace ldmsim {

/// Descriptor field widths of the DMA engine (a value must be < 2^bits).
struct DmaFieldWidths {
  std::uint32_t length_bits = 20;
  std::uint32_t bsize_bits = 20;
  std::uint32_t stride_bits = 20;

  friend bool operator==(const DmaFieldWidths&, const DmaFieldWidths&) = default;
};

/// The DMA engine of one core group.
/// What a DMA to another core group's memory costs on top of the same request to local memory: after the local
/// engine, the bytes cross the group's link to the other groups at `bytes_per_cycle`, requests one after another,
/// then `latency_cycles`. Deterministic by construction: each group has its own link and the remote group's
/// engine is not charged (no contention between groups, which run on separate host threads).
struct DmaRemoteArch {
  double latency_cycles = 0;   ///< extra cycles before a remote request completes
  double bytes_per_cycle = 0;  ///< rate of the inter-group network per request; 0: no bandwidth cost
  friend bool operator==(const DmaRemoteArch&, const DmaRemoteArch&) = default;
};

struct DmaArch {
  std::uint32_t granularity_bytes = 4;    ///< every address, length, bsize and stride must be a multiple
  std::uint32_t transaction_bytes = 128;  ///< memory transaction size (partial blocks cost whole ones)
  DmaFieldWidths fields;
  DmaRemoteArch remote;
  /// The timing model: {"model": NAME, ...model parameters}. Parameters are validated by the model.
  nlohmann::json timing = nlohmann::json{{"model", "ideal"}};

  std::string timing_model() const { return timing.value("model", std::string{"ideal"}); }
  /// Requests the timing model serves at once: its "channels" parameter when that is a number (at least 1), else 1.
  /// Tiling cuts big reads into that many pieces and prices them so.
  std::size_t channels() const {
    const auto it = timing.find("channels");
    return it != timing.end() && it->is_number() ? static_cast<std::size_t>(std::max(1.0, it->get<double>())) : 1;
  }

  friend bool operator==(const DmaArch&, const DmaArch&) = default;
};

/// Most core groups an arch may have, and most rows (and columns) of a group's core mesh (a BCAST row mask has
/// 32 bits). Readers of traces size their per-group and per-core tables from these.
inline constexpr std::uint32_t kMaxCoreGroups = 64;
inline constexpr std::uint32_t kMaxRowsCols = 32;
inline constexpr std::uint32_t kMaxCoresPerGroup = kMaxRowsCols * kMaxRowsCols;

/// Register communication (SW26010): the cores of a row (or column) exchange 256-bit values over the row (or
/// column) bus. A put costs the sender put_cycles and makes the value receivable latency_cycles later; a get
/// blocks until a value is there and costs get_cycles; each core buffers buffer_entries values per bus and a
/// put into a full buffer blocks until the receiver takes one.
struct RegisterCommArch {
  bool available = false;  ///< false: the arch has none (SW26010-Pro uses RMA between local stores instead)
  std::uint32_t latency_cycles = 0;
  std::uint32_t put_cycles = 1;
  std::uint32_t get_cycles = 1;
  std::uint32_t buffer_entries = 4;

  friend bool operator==(const RegisterCommArch&, const RegisterCommArch&) = default;
};

/// RMA between the local stores of one core group (SW26010-Pro): a core's RMA engine takes issue_cycles per
/// operation, then streams its bytes at bytes_per_cycle (broadcast_bytes_per_cycle for a row or column
/// broadcast); the data lands latency_cycles + hop_cycles per hop later, where a hop is a step between clusters
/// of cluster x cluster cores in the mesh.
struct RmaArch {
  bool available = false;  ///< false: the arch has none (SW26010 uses register communication instead)
  std::uint32_t issue_cycles = 0;
  double bytes_per_cycle = 1.0;
  double broadcast_bytes_per_cycle = 1.0;
  std::uint32_t latency_cycles = 0;
  std::uint32_t hop_cycles = 0;
  std::uint32_t cluster = 1;

  friend bool operator==(const RmaArch&, const RmaArch&) = default;
};

/// A whole simulated node.
struct Arch {
  std::string name;
  double clock_hz = 1.0e9;
  std::uint32_t core_groups = 1;
  std::uint64_t main_memory_bytes_per_cg = 1ull << 30;
  std::uint32_t rows = 1;
  std::uint32_t cols = 1;
  std::uint64_t ldm_bytes = 64 * 1024;
  double flops_per_cycle = 1.0;  ///< per compute core, for work charged as plain flops (Cost::flops)
  ComputeModel compute = ComputeModel::scalar(1.0);  ///< vector work (KernelWork): matmul tiles, conv
  std::uint32_t barrier_cycles = 0;                  ///< cost of a barrier once the last participant arrives
  /// The same for a barrier across core groups (Scope::kNode). The JSON reader defaults it to barrier_cycles; an
  /// Arch built in code starts at 0 like every other cost.
  std::uint32_t node_barrier_cycles = 0;
  /// What a core pays to switch from one model's context to another's (several models pipelined on one machine:
  /// ConcurrentMachine, `ldmsim run A B --concurrent`).
  std::uint32_t context_switch_cycles = 0;
  RegisterCommArch register_comm;  ///< "register_communication" of the cores
  RmaArch rma;                     ///< "rma" of the cores
  DmaArch dma;

  std::uint32_t cores_per_group() const { return rows * cols; }
  std::uint32_t total_cores() const { return core_groups * rows * cols; }

  /// A built-in preset by name; throws ConfigError naming the known presets.
  static Arch preset(std::string_view name);
  /// Names of the built-in presets, sorted.
  static std::vector<std::string> preset_names();
  /// Validates and converts a JSON tree; errors name the JSON path. `origin` names the source in messages.
  static Arch from_json(const nlohmann::json& tree, std::string_view origin = "arch");
  /// Parses and validates an arch file.
  static Arch load(const std::filesystem::path& file);
  /// A preset name or a path to a JSON file.
  static Arch resolve(std::string_view name_or_file);
  /// The full resolved tree (every default filled in), loadable again by from_json.
  nlohmann::json to_json() const;

  /// Field-by-field equality (the timing tree compares as JSON values).
  friend bool operator==(const Arch&, const Arch&) = default;
};

}  // namespace ldmsim
