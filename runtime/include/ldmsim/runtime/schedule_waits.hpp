// The DMA waits of a ConcurrentMachine's cores, beside ConcurrentMachine::schedule(): what a schedule picture needs
// to tell time a model spent waiting for its DMA from idle time (schedule.svg of `ldmsim run A B --concurrent`).
#pragma once

#include <vector>

#include "ldmsim/runtime/concurrent.hpp"

namespace ldmsim {

/// Each physical core's DMA waits, [cg][core], by start: spans in which `context` waited for its DMA requests on the
/// core (having given the core up, or kept it through a short stall). They may overlap other contexts' spans of
/// schedule() (the core ran another model meanwhile) and one another; a context's waits that touch are joined. A
/// core keeps at most PhysicalCore's 4096 of them; beyond that, neighbours merge in pairs (a schedule compaction).
std::vector<std::vector<std::vector<ScheduleSpan>>> dma_waits(ConcurrentMachine& node);

}  // namespace ldmsim
