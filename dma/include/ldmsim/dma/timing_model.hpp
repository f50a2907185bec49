// The DMA timing model interface and its registry. A model is (close to) a pure function of the request,
// the issue cycle and the engine's own state; models are picked by name from the arch config
// (dma.timing.model) and validate their own parameters, naming the JSON path in errors.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ldmsim/dma/request.hpp"
#include "ldmsim/sim/arch.hpp"

namespace ldmsim {

/// When a request's data starts moving and when it is complete.
struct DmaTiming {
  Cycle start = 0;
  Cycle end = 0;
};

/// One instance per core group. Requests arrive in nondecreasing issue cycle (the scheduler guarantees it).
class TimingModel {
 public:
  virtual ~TimingModel() = default;
  /// Cycles the issuing core spends issuing the request (charged before `schedule`).
  virtual Cycle issue_cycles(const DmaRequest& request) const = 0;
  /// Schedules a validated request issued (after its issue cost) at `issue` by cg-local core `core`.
  virtual DmaTiming schedule(const DmaRequest& request, Cycle issue, int core) = 0;
  /// Engine time the request would occupy (a channel's service, no queueing, nothing scheduled): kernels compare
  /// ways of moving the same data with it. 0 for a model that does not price requests.
  virtual double service_cycles(const DmaRequest& /*request*/) const { return 0; }
};

using TimingModelFactory = std::function<std::unique_ptr<TimingModel>(const Arch&)>;

/// Creates the model named by arch.dma.timing["model"]; throws ConfigError naming the JSON path.
std::unique_ptr<TimingModel> make_timing_model(const Arch& arch);
/// Registered model names, sorted.
std::vector<std::string> timing_model_names();
/// Registers a model (used by each model's .cpp and by tests); returns true.
bool register_timing_model(const std::string& name, TimingModelFactory factory);

/// How a request's main-memory side falls on memory transactions.
struct TransactionShape {
  std::uint64_t transactions = 0;          ///< transaction_bytes-sized transactions touched, each block separately
  std::uint64_t realigned_blocks = 0;      ///< blocks that start inside a transaction and cross into the next
  std::uint64_t partial_transactions = 0;  ///< transactions a block touches without covering them whole
  std::uint64_t shared_line_blocks = 0;    ///< blocks that start in the transaction the previous block ended in
  /// Sum over blocks of how many earlier blocks of the request ended in the transaction this block starts in
  /// (8-byte blocks 16 bytes apart: 0, 1, 2, ... 7 within each 128-byte line).
  std::uint64_t line_queue = 0;
  std::uint64_t blocks = 0;  ///< blocks of the request (1 when contiguous)
};
/// Blocks a timing model prices a request as: blocks with a stride of 0 touch each other, so such a request is
/// one contiguous block.
inline std::uint64_t priced_blocks(const DmaRequest& request) {
  return request.stride == 0 ? 1 : std::max<std::uint64_t>(request.block_count(), 1);
}
/// The transaction shape of a request (partial and misaligned blocks cost whole transactions), its blocks as
/// priced_blocks counts them.
TransactionShape transaction_shape(const DmaRequest& request, std::uint64_t transaction_bytes);
/// transaction_shape(...).transactions.
std::uint64_t count_transactions(const DmaRequest& request, std::uint32_t transaction_bytes);
/// Rounds a request's fractional start and service end (plus latency) up to whole cycles.
DmaTiming to_cycles(double start, double service_end, double latency);

}  // namespace ldmsim
