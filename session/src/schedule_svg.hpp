// The picture of a multi-model run (`ldmsim run A B --concurrent`): one row per physical core, simulated time to
// the right, each model's time on the core in its colour, context switches in grey, time in which no model held the
// core but one waited for its DMA in the DMA-wait colour; idle time stays white.
#pragma once

#include <string>
#include <vector>

#include "ldmsim/runtime/concurrent.hpp"

namespace ldmsim {

using CoreSpans = std::vector<std::vector<std::vector<ScheduleSpan>>>;  ///< [cg][core] spans

/// `schedule` is ConcurrentMachine::schedule(), `dma_waits` its dma_waits(); `names` the models, by context.
std::string schedule_svg(const CoreSpans& schedule, const CoreSpans& dma_waits, Cycle makespan,
                         const std::vector<std::string>& names, const std::string& title);

}  // namespace ldmsim
