// What a run is configured by, typed: the arch, staging, fusion, placement (split), convolution algorithm, host
// threads, tracing and alignment policy. The CLI parses its flags into one RunConfig; the Python bindings build one
// from keyword arguments. Nothing in it is parsed again later.
#pragma once

#include <optional>
#include <string>

#include "ldmsim/graph/split.hpp"
#include "ldmsim/kernels/padding.hpp"
#include "ldmsim/runtime/check.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/sim/arch.hpp"

namespace ldmsim {

/// The arch a run uses when neither the configuration nor the model names one.
inline constexpr const char* kDefaultArch = "sw26010";

struct RunConfig {
  /// Arch preset name or arch JSON file; empty: the model's preferred arch (a workload's "arch"), else kDefaultArch.
  std::string arch;
  /// An arch built in code (e.g. a preset's tree with fields changed); takes precedence over `arch`.
  std::optional<Arch> custom_arch;
  /// Empty: the model's preferred staging policy, else StagingPolicy::kMethod.
  std::optional<StagingPolicy> staging;
  /// Fuse memory-intensive subgraphs into one kernel each (docs/fusion.md).
  bool fusion = true;
  /// Placement of tensors and ops over core groups (docs/splitting.md).
  SplitOptions split;
  /// Take split's mode from the model instead (split_for): the cost-aware choice (`auto`) for an ONNX model, every op
  /// whole (`off`) for a workload JSON; split's rounding and packs still apply. The CLI and Python default.
  bool split_by_format = false;
  /// Convolution algorithm for every conv that does not set its own "algo"; empty: each conv's own.
  std::string conv_algo;
  /// Host threads, tracing (on/off, codec, spill directory), alignment policy, fiber stacks; local stores per host
  /// thread on (the operator library's kernels read no ldm byte they have not written).
  MachineOptions machine = MachineOptions{.thread_stores = true};
  /// Checking mode (docs/checking.md): the run's reports go to stats.json's `check`. Off by default.
  CheckSet check;
};

/// The placement a run of a model of `format` (Model::format) uses under `config`.
SplitOptions split_for(const RunConfig& config, std::string_view format);

/// Arch::resolve plus a check of the DMA timing model's parameters; ConfigError naming the origin and JSON path.
Arch resolve_arch(const std::string& name_or_file);

}  // namespace ldmsim
