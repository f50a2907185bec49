// The timing-model registry (a function-local static, no static-init-order traps) and transaction counting.
#include "ldmsim/dma/timing_model.hpp"

#include <fmt/format.h>

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

std::uint64_t count_transactions(const DmaRequest& request, std::uint32_t transaction_bytes) {
  const std::uint64_t t = transaction_bytes;
  const std::uint64_t block = request.block_bytes();
  const std::uint64_t pitch = request.block_pitch();
  std::uint64_t total = 0;
  const std::uint64_t blocks = request.block_count();
  // Blocks whose offset modulo t repeats cost the same; the loop is bounded by the block count, which the
  // descriptor width keeps small.
  for (std::uint64_t i = 0; i < blocks; ++i) {
    const std::uint64_t first = request.main + i * pitch;
    total += (first + block - 1) / t - first / t + 1;
  }
  return total;
}

}  // namespace ldmsim
