// The `fcfs-bandwidth` timing model: one engine per core group serves requests first-come-first-served.
// A request occupies the engine for request_overhead_cycles plus its 128-byte transactions at
// bytes_per_cycle (partial and misaligned blocks cost whole transactions), then completes latency_cycles
// later. The issuing core pays issue_cycles before the request reaches the engine.
#include <algorithm>
#include <cmath>

#include "builtin_models.hpp"
#include "timing_params.hpp"

namespace ldmsim::detail {

namespace {
class FcfsBandwidthModel final : public TimingModel {
 public:
  explicit FcfsBandwidthModel(const Arch& arch) : transaction_bytes_(arch.dma.transaction_bytes) {
    TimingParams params(arch.dma.timing);
    issue_ = static_cast<Cycle>(std::llround(params.number("issue_cycles", 10, 0)));
    latency_ = params.number("latency_cycles", 100, 0);
    overhead_ = params.number("request_overhead_cycles", 0, 0);
    bytes_per_cycle_ = params.bytes_per_cycle("bytes_per_cycle", 16);
    params.reject_unknown();
  }

  Cycle issue_cycles(const DmaRequest&) const override { return issue_; }

  double service_cycles(const DmaRequest& request) const override {
    const double transactions = static_cast<double>(count_transactions(request, transaction_bytes_));
    return overhead_ + transactions * transaction_bytes_ / bytes_per_cycle_;
  }

  DmaTiming schedule(const DmaRequest& request, Cycle issue, int) override {
    const double service = service_cycles(request);
    const double start = std::max(static_cast<double>(issue), busy_until_);
    busy_until_ = start + service;
    return to_cycles(start, busy_until_, latency_);
  }

 private:
  std::uint32_t transaction_bytes_;
  Cycle issue_ = 0;
  double latency_ = 0;
  double overhead_ = 0;
  double bytes_per_cycle_ = 1;
  double busy_until_ = 0;  // the engine is serving earlier requests until this cycle
};
}  // namespace

std::unique_ptr<TimingModel> make_fcfs_bandwidth_model(const Arch& arch) {
  return std::make_unique<FcfsBandwidthModel>(arch);
}

}  // namespace ldmsim::detail
