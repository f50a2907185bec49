// The generic fused kernel: one launch that runs a group of memory-intensive ops (a FusedProgram, built by the
// graph layer's fusion pass) on ldm tiles. The group iterates over a frame [rows | reduced K | inner I] of its
// backbone; every value of the program is, per row, a block of K x I, 1 x I, K x 1 or one element (the index
// propagation: which elements a core needs for its rows). A core loads the rows of its tile of every external
// input, runs the steps in ldm (fp32), and writes its rows of every external output. A mapping either splices
// several rows onto one core or cuts a row's K across a team of cores of one core group whose partial reductions
// meet in main memory behind a group barrier, inside the same launch. See docs/fusion.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ldmsim/kernels/fusion_form.hpp"
#include "ldmsim/kernels/operator.hpp"
#include "ldmsim/kernels/padding.hpp"
#include "ldmsim/sim/arch.hpp"

namespace ldmsim {

/// The iteration space of a fused group: axes [0, k_begin) are rows, [k_begin, k_end) the reduced block K,
/// [k_end, rank) the inner block I (either block may be empty).
struct FusionFrame {
  Shape shape;
  std::size_t k_begin = 0, k_end = 0;
  std::uint64_t rows() const { return shape.product(0, k_begin); }
  std::uint64_t k() const { return shape.product(k_begin, k_end); }
  std::uint64_t i() const { return shape.product(k_end, shape.rank()); }
  /// "[rows 128 | K 768 | I 1]".
  std::string str() const;
};

/// One value of a program: its dims aligned to the frame (each 1 or the frame's), full or not on K and on I.
struct FusedValue {
  std::string name;
  std::vector<std::uint64_t> dims;
  bool k = false, i = false;
  /// Elements per row: K x I, K, I or 1.
  std::uint64_t row_elements(const FusionFrame& frame) const;
  /// Distinct rows the value has (the product of its row dims; 1: the same block serves every row).
  std::uint64_t rows(const FusionFrame& frame) const;
  /// Its pattern for --dump-graph: "[o, k, i]", "[o, 1, 1]", "[1, k, 1]", ...
  std::string pattern(const FusionFrame& frame) const;
};

struct FusedStep {
  enum class Kind : std::uint8_t { kPointwise, kReduce };
  Kind kind = Kind::kPointwise;
  std::function<float(float, float)> fn;  ///< kPointwise
  /// kPointwise, optional: fn over a run of elements (an op's FusionForm::run, or the lowering's loop for its own
  /// arithmetic steps); used instead of fn when set.
  std::function<void(const float*, std::size_t, const float*, std::size_t, float*, std::size_t)> run;
  std::uint64_t flops = 1;             ///< per result element
  ReduceMode mode = ReduceMode::kSum;  ///< kReduce, over the frame's K
  std::vector<std::size_t> args;       ///< value ids: one or two (pointwise), one (reduce)
  std::size_t result = 0;
};

struct FusedProgram {
  FusionFrame frame;
  std::vector<FusedValue> values;
  std::vector<std::size_t> inputs;   ///< the value each external input (op input k) loads into
  std::vector<std::size_t> outputs;  ///< the value each external output (op output k) is written from
  std::vector<FusedStep> steps;
  std::size_t reductions() const;
};

/// How a program's rows go onto cores.
struct FusedMapping {
  std::uint64_t tile_rows = 1;  ///< rows a core holds in ldm at once (team == 1)
  std::uint32_t team = 1;       ///< cores of one core group sharing each row's K (partials meet in main memory)
  std::uint32_t workers = 1;    ///< cores that get rows
  bool row_pairs = false;       ///< rows go to cores in pairs (an output row has an odd element count)
  std::vector<bool> resident;   ///< per external input: read whole into ldm once per core (small, shared by rows)
  std::uint64_t ldm_bytes = 0;  ///< per core, planned
  /// The rows run on the first core group's cores (its reads local, the other groups free) instead of dealt to the
  /// groups in turn: for a team-1 mapping of at most a group's worth of workers, where the fusion pass prices it
  /// cheaper (with_one_group).
  bool on_one_group = false;
  bool one_group(std::uint64_t cores_per_group) const {
    return on_one_group && team == 1 && workers <= cores_per_group;
  }
  /// Workers that get rows (team 1): rows, or pairs of rows, up to the workers.
  std::uint64_t busy_workers(std::uint64_t rows) const {
    return std::min<std::uint64_t>(workers, row_pairs ? (rows + 1) / 2 : rows);
  }
  std::string str() const;
};

/// The cheapest mapping that fits ldm on `arch`: rows spliced onto cores, or a row's K cut across a team when rows
/// are fewer than idle cores (or one row does not fit one core). `cores` limits the cores used (0: all);
/// `want_team` (0: any) asks for teams of that size, which fixes the order of every reduction's partial sums;
/// nullopt when even a row cut across a whole core group does not fit, or the wanted team does not.
std::optional<FusedMapping> choose_fused_mapping(const FusedProgram& program, const Arch& arch, StagingPolicy policy,
                                                 std::uint32_t cores = 0, std::uint32_t want_team = 0);

/// Cycles a point-wise fused kernel (no reduction; `mapping` of team 1) is estimated to take on `arch`: its busiest
/// core's tiles priced by the arch's DMA timing model, queued on the group's channels and link, plus its arithmetic.
/// For comparing frames of one group, not a prediction of the simulation.
double estimate_pointwise_cycles(const FusedProgram& program, const FusedMapping& mapping, const Arch& arch);

/// The bound op of a fused group: the program, its mapping (chosen under `policy` for the arch named `arch`: run()
/// refuses another), the shapes of its external tensors, and a reference (the members' references composed) with
/// its tolerance.
std::shared_ptr<const BoundOp> make_fused_op(
    FusedProgram program, FusedMapping mapping, std::vector<Shape> inputs, std::vector<Shape> outputs,
    std::function<std::vector<HostTensor>(std::span<const HostTensor>)> reference, Tolerance tolerance,
    std::uint64_t flops, std::string arch, StagingPolicy policy);

/// The program of a fused op; nullptr for any other op.
const FusedProgram* fused_program(const BoundOp& op);

/// True when a fused op can be cut along its frame's row axis `axis`: every external tensor either holds that
/// axis whole (its dims are its shape, right-aligned to the frame) or broadcasts along it.
bool fused_rows_cut(const FusedProgram& program, std::span<const Shape> tensors, std::size_t axis);

/// The axis of `tensor` that frame axis `axis` is (right-aligned), or nullopt when the tensor broadcasts along it.
std::optional<std::size_t> fused_tensor_axis(const FusedProgram& program, const Shape& tensor, std::size_t value,
                                             std::size_t axis);

/// Rows [begin, end) of a fused op's frame axis `axis` (fused_rows_cut) as an op of its own, mapped for `arch` (a
/// core group's, for a piece of a split run); its reference evaluates the program on the host. nullptr when no
/// mapping fits.
std::shared_ptr<const BoundOp> fused_rows(const BoundOp& op, std::size_t axis, std::uint64_t begin, std::uint64_t end,
                                          const Arch& arch);

/// Runs a program on the host in fp32, its external inputs given as tensors of its values' dims.
std::vector<HostTensor> evaluate_program(const FusedProgram& program, std::span<const HostTensor> inputs,
                                         std::span<const Shape> output_shapes);

}  // namespace ldmsim
