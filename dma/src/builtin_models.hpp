// Factories of the built-in timing models, one per .cpp; the registry lists them explicitly so that no
// static-initialisation registration can be dropped by the linker.
#pragma once

#include <memory>

#include "ldmsim/dma/timing_model.hpp"

namespace ldmsim::detail {

std::unique_ptr<TimingModel> make_ideal_model(const Arch& arch);
std::unique_ptr<TimingModel> make_fcfs_bandwidth_model(const Arch& arch);
std::unique_ptr<TimingModel> make_fcfs_channels_model(const Arch& arch);

}  // namespace ldmsim::detail
