// The picture of a multi-model run (`ldmsim run A B --concurrent`): one row per physical core, simulated time to
// the right, each model's time on the core in its colour and context switches in grey; idle time stays white.
#pragma once

#include <string>
#include <vector>

#include "ldmsim/runtime/concurrent.hpp"

namespace ldmsim {

/// `schedule` is ConcurrentMachine::schedule() ([cg][core] spans); `names` the models, by context.
std::string schedule_svg(const std::vector<std::vector<std::vector<ScheduleSpan>>>& schedule, Cycle makespan,
                         const std::vector<std::string>& names, const std::string& title);

}  // namespace ldmsim
