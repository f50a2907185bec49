// The `ideal` timing model: no contention and no bandwidth limit; a request completes a fixed latency after
// it is issued. Parameters: issue_cycles (default 0), latency_cycles (default 0).
#include <cmath>

#include "builtin_models.hpp"
#include "timing_params.hpp"

namespace ldmsim::detail {

namespace {
class IdealModel final : public TimingModel {
 public:
  explicit IdealModel(const Arch& arch) {
    TimingParams params(arch.dma.timing);
    issue_ = static_cast<Cycle>(std::llround(params.number("issue_cycles", 0, 0)));
    latency_ = static_cast<Cycle>(std::llround(params.number("latency_cycles", 0, 0)));
    params.reject_unknown();
  }
  Cycle issue_cycles(const DmaRequest&) const override { return issue_; }
  DmaTiming schedule(const DmaRequest&, Cycle issue, int) override { return {issue, issue + latency_}; }

 private:
  Cycle issue_ = 0;
  Cycle latency_ = 0;
};
}  // namespace

std::unique_ptr<TimingModel> make_ideal_model(const Arch& arch) {
  return std::make_unique<IdealModel>(arch);
}

}  // namespace ldmsim::detail
