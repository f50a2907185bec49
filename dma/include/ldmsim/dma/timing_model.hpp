// The DMA timing model interface and its registry. A model is (close to) a pure function of the request,
// the issue cycle and the engine's own state; models are picked by name from the arch config
// (dma.timing.model) and validate their own parameters, naming the JSON path in errors.
#pragma once

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
};

using TimingModelFactory = std::function<std::unique_ptr<TimingModel>(const Arch&)>;

/// Creates the model named by arch.dma.timing["model"]; throws ConfigError naming the JSON path.
std::unique_ptr<TimingModel> make_timing_model(const Arch& arch);
/// Registered model names, sorted.
std::vector<std::string> timing_model_names();
/// Registers a model (used by each model's .cpp and by tests); returns true.
bool register_timing_model(const std::string& name, TimingModelFactory factory);

/// Number of transaction_bytes-sized memory transactions the main-memory side of a request touches
/// (each block counted separately; partial and misaligned blocks cost whole transactions).
std::uint64_t count_transactions(const DmaRequest& request, std::uint32_t transaction_bytes);

}  // namespace ldmsim
