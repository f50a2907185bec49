// Umbrella header: everything a user needs to drive a simulated machine from C++.
#pragma once

#include "ldmsim/dma/request.hpp"
#include "ldmsim/runtime/concurrent.hpp"
#include "ldmsim/runtime/core.hpp"
#include "ldmsim/runtime/device_ptr.hpp"
#include "ldmsim/runtime/ldm_span.hpp"
#include "ldmsim/runtime/machine.hpp"
#include "ldmsim/runtime/stats.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/fp16.hpp"
#include "ldmsim/sim/main_memory.hpp"
#include "ldmsim/trace/recorder.hpp"
