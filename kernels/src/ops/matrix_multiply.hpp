// Private: the tiled matrix multiply engine behind matmul and gemm (and the GEMM step of conv's im2col):
// Y[b] = alpha * op(A[b]) op(B[b]) + beta * C, over a batch of output matrices whose A and B may be broadcast.
// Output rows of all batches form one [rows, n] matrix cut into blocks (whole rows in pairs when its pitch is
// odd, so each block is one even range); blocks are dealt round-robin to every core of every group. A block
// streams k in chunks: the next chunk's A and B tiles are read (get_block) while this one is multiplied, and the
// multiply is charged as the register-blocked micro-kernel the compute model describes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "activation.hpp"
#include "ldmsim/kernels/constant_pack.hpp"
#include "ldmsim/kernels/kernel_estimates.hpp"
#include "ldmsim/kernels/matrix_block.hpp"
#include "op_support.hpp"
#include "tile_floats.hpp"

namespace ldmsim::ops {

/// One stored operand: a row-major [batches * rows, cols] matrix view of a device tensor (pitch = layout's
/// chw_pitch). The logical operand is the stored matrix, or its transpose when `transposed`.
struct StoredMatrix {
  DevicePtr<const f16> base;
  Layout layout;
  std::size_t rows = 0, cols = 0;  ///< of one stored matrix
  bool transposed = false;
};

/// The addend of gemm: a [rows, cols] matrix broadcast to [m, n] (rows 1 or m, cols 1 or n).
struct Addend {
  StoredMatrix matrix;
  float beta = 1.0f;
};

/// Reads issued for one B tile: their handles and, per run of the tile, where it starts in the ldm buffer.
struct PendingTile {
  std::vector<DmaHandle> handles;
  std::vector<std::size_t> starts;
};

/// How panel_cost prices the reads a source merges as it issues them (conv's row blocks of consecutive channels of
/// a small image, read as one block): apart for ranking blockings, as issued for the chosen blocking's reported
/// estimate. Ranked with the merged price, the search favoured blockings that re-read B more often, which the
/// estimate underprices (docs/operators.md).
enum class MergedReads : std::uint8_t { kApart, kAsIssued };

/// Supplies B tiles that are not read from a stored matrix (conv's image tiles, built from the input by DMA).
class TileSource {
 public:
  virtual ~TileSource() = default;
  /// ldm elements the reads of a kc x nb tile need.
  virtual std::size_t buffer_elements(std::size_t kc, std::size_t nb) const = 0;
  /// k chunks are a multiple of this (direct conv reads whole channels).
  virtual std::size_t chunk_unit() const { return 1; }
  /// Engine cycles of reading a whole k x nb panel of B in chunks of kc (as `price` prices reads), for ranking
  /// blockings.
  virtual double panel_cost(std::size_t k, std::size_t kc, std::size_t nb, const tiling::ReadPricer& price,
                            MergedReads merged) const = 0;
  /// Cycles a core is charged for building a whole k x nb panel of B from its reads (and addressing them), for
  /// ranking blockings.
  virtual double build_cycles(std::size_t k, std::size_t nb, const ComputeModel& model) const = 0;
  /// Appends everything the blocking search may read of this source (geometry, layout, options; no device
  /// address): a search is reused for a job whose description is equal.
  virtual void describe(std::vector<std::uint64_t>& key) const = 0;
  /// ldm elements a core keeps for the whole kernel (a table read once); 0: none.
  virtual std::size_t resident_elements() const { return 0; }
  /// Fills the resident buffer; called once per core before the first issue.
  virtual void load_resident(Core& /*core*/, LdmSpan<f16> /*resident*/) const {}
  /// Issues the reads of B[batch] rows [k0, k1) x columns [j0, j1) into buf as `mode` says (and charges their
  /// address work; kPlan only lays them out, for a row neighbour that receives them in ROW mode) into `pending`,
  /// which arrives empty (its storage is reused: a core issues a tile per chunk).
  virtual void issue(Core& core, tiling::ReadMode mode, LdmSpan<f16> buf, LdmSpan<f16> resident, std::size_t batch,
                     std::size_t k0, std::size_t k1, std::size_t j0, std::size_t j1, PendingTile& pending) const = 0;
  /// After the reads completed: the tile as (k1 - k0) x (j1 - j0) row-major floats, rows b_pitch_for(j1 - j0)
  /// apart (tile_math.hpp; zeros where masked and in the padding), built in `out` (valid until the thread's next
  /// unpack) or a TileMemo's tile, built on this host thread from the same inputs (tile_memo.hpp). A tile not in
  /// `out` must stay as it is until the memo's next insert (TileMemo::insert, which runs the host products queued on
  /// it first): the matrix multiply queues products of a few rows by such a tile (product_queue.hpp).
  virtual const float* unpack(Core& core, LdmSpan<f16> buf, const PendingTile& reads, std::size_t batch, std::size_t k0,
                              std::size_t k1, std::size_t j0, std::size_t j1, TileFloats& out) const = 0;
};

/// Appends a layout's every field to a blocking search key (TileSource::describe).
void describe(std::vector<std::uint64_t>& key, const Layout& layout);

struct MatrixMultiply {
  StoredMatrix a, b;
  const TileSource* b_source = nullptr;       ///< when set, B tiles come from it (b is unused)
  std::vector<std::size_t> a_batch, b_batch;  ///< stored matrix index of A and B for each output batch
  std::size_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  bool has_addend = false;
  Addend c;
  /// The addend is added to the value the product would have stored (fp16), in add's arithmetic (add_value;
  /// `addend_first`: C was the add's first operand), as a folded bias add; beta is 1.
  bool addend_rounded = false;
  bool addend_first = false;
  bool has_row_bias = false;
  StoredMatrix row_bias;  ///< [1, count]: output row g gets row_bias[g % count] (conv's bias per channel)
  /// Constant packs (docs/splitting.md): when set, each core fetches its pack by one DMA and takes the row bias
  /// (entry of input `pack_bias_input`) and b_source's resident data (entry of input `pack_resident_input`) from
  /// it instead of reading them itself.
  const packing::StagedPacks* packs = nullptr;
  std::uint32_t pack_bias_input = 0, pack_resident_input = 0;
  DevicePtr<f16> y;
  Layout yl;  ///< [batches * m, n]
  /// False when Y is a box of a larger buffer (DeviceTensor::owns_padding): the store writes each row's n columns
  /// only, never the padding after them.
  bool y_owns_padding = true;
  /// A residual connection folded into the store: Y = activation(fp16(result) + R), the sum in add's arithmetic
  /// (add_value; `residual_first`: R was the add's first operand). R is stored as Y's [batches * m, n] matrix.
  bool has_residual = false;
  bool residual_first = false;
  StoredMatrix residual;
  Activation activation;  ///< applied to each output as it is stored (conv and gemm's attribute)
};

/// Chooses the blocking on the control core and runs the kernel on every core of every group under `label`.
/// Returns the blocking as JSON (block rows and columns, k chunk, how blocks were dealt, the estimate) for the
/// op's run_metrics.
nlohmann::json run_matrix_multiply(Machine& machine, const std::string& label, const MatrixMultiply& job);

/// The cycles the blocking search estimates for `job` on `arch` (the blocking it would choose), searched once per job
/// description and arch in `memo`. The job's device addresses are not read.
double estimated_matrix_multiply(KernelEstimates& memo, const Arch& arch, const MatrixMultiply& job);

/// Whether the smallest blocking of `job` (one or two rows, 8 columns, the B source's smallest k chunk) may fit a
/// core's local store on `arch`: false only when its buffers certainly do not (the kernel would trap ldm-overflow
/// at any blocking); near the store's size the launch itself finds out.
bool matrix_multiply_fits(const Arch& arch, const MatrixMultiply& job);

/// Blocking searches run on `machine` (and its group views) so far: run_matrix_multiply reuses the blocking of an
/// earlier job on the machine whose description (search_key: every field but device addresses) and arch are equal.
/// The searches, their read prices and the chosen blockings are the machine's host state (Machine::host_state).
std::uint64_t blocking_searches(const Machine& machine);

/// How `machine`'s blocking searches run. kCached (the default): a job whose description was searched before
/// reuses that blocking, and a search leaves out the prices of candidates that cannot win. For tests: kPruned
/// searches every job afresh the same way; kFull searches every job afresh pricing every candidate in full. All
/// three must choose the same blockings with the same estimates.
enum class BlockingSearch { kCached, kPruned, kFull };
void set_blocking_search(Machine& machine, BlockingSearch mode);

/// Stored matrix index of input `input_batch` (shape of its leading dims) for each batch of `output_batch`
/// (numpy broadcasting).
std::vector<std::size_t> broadcast_batches(const Shape& input_batch, const Shape& output_batch);

}  // namespace ldmsim::ops
