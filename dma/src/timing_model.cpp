// The timing-model registry (a function-local static, no static-init-order traps) and transaction counting.
#include "ldmsim/dma/timing_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "builtin_models.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace {
struct Registry {
  std::mutex mutex;
  std::map<std::string, TimingModelFactory> factories{
      {"ideal", detail::make_ideal_model},
      {"fcfs-bandwidth", detail::make_fcfs_bandwidth_model},
      {"fcfs-channels", detail::make_fcfs_channels_model},
  };
};
Registry& registry() {
  static Registry instance;
  return instance;
}
}  // namespace

bool register_timing_model(const std::string& name, TimingModelFactory factory) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  r.factories[name] = std::move(factory);
  return true;
}

std::vector<std::string> timing_model_names() {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, factory] : r.factories) names.push_back(name);
  return names;
}

std::unique_ptr<TimingModel> make_timing_model(const Arch& arch) {
  const auto& timing = arch.dma.timing;
  if (!timing.is_object() || !timing.contains("model") || !timing.at("model").is_string()) {
    throw ConfigError("dma.timing.model must be a string naming a timing model");
  }
  const auto name = timing.at("model").get<std::string>();
  TimingModelFactory factory;
  {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.factories.find(name);
    if (it == r.factories.end()) {
      std::string names;
      for (const auto& [known, f] : r.factories) names += (names.empty() ? "" : ", ") + known;
      throw ConfigError(fmt::format("dma.timing.model: unknown timing model '{}' (known: {})", name, names));
    }
    factory = it->second;
  }
  return factory(arch);
}

TransactionShape transaction_shape(const DmaRequest& request, std::uint64_t transaction_bytes) {
  TransactionShape shape;
  const std::uint64_t t = transaction_bytes;
  const std::uint64_t blocks = priced_blocks(request);
  const std::uint64_t block = blocks == 1 ? request.length : request.block_bytes();
  // The loop is bounded by the block count, which the descriptor's field widths keep small.
  std::uint64_t previous_last_line = ~std::uint64_t{0};
  std::uint64_t ending_there = 0;  // blocks so far whose last line is previous_last_line (last lines never decrease)
  for (std::uint64_t i = 0; i < blocks; ++i) {
    const std::uint64_t first = request.main + i * request.block_pitch();
    if (first / t == previous_last_line) {
      ++shape.shared_line_blocks;
      shape.line_queue += ending_there;
    }
    const std::uint64_t last_line = (first + block - 1) / t;
    ending_there = last_line == previous_last_line ? ending_there + 1 : 1;
    previous_last_line = last_line;
    const std::uint64_t lines = (first + block - 1) / t - first / t + 1;
    shape.transactions += lines;
    if (lines > 1 && first % t != 0) ++shape.realigned_blocks;
    const bool head_partial = first % t != 0;
    const bool tail_partial = (first + block) % t != 0;
    const unsigned partial =
        lines == 1 ? (head_partial || tail_partial ? 1u : 0u) : (head_partial ? 1u : 0u) + (tail_partial ? 1u : 0u);
    shape.partial_transactions += partial;
  }
  shape.blocks = blocks;
  return shape;
}

std::uint64_t count_transactions(const DmaRequest& request, std::uint32_t transaction_bytes) {
  return transaction_shape(request, transaction_bytes).transactions;
}

DmaTiming to_cycles(double start, double service_end, double latency) {
  const auto start_cycle = static_cast<Cycle>(std::ceil(start));
  const auto end_cycle = static_cast<Cycle>(std::ceil(service_end + latency));
  return {start_cycle, std::max(end_cycle, start_cycle)};
}

}  // namespace ldmsim
