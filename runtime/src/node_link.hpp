// A context machine's way back to the node it shares (ConcurrentMachine): a HostState of each context's control core,
// set when the ConcurrentMachine is made, read by free functions over it (dma_waits, schedule_waits.hpp).
#pragma once

namespace ldmsim::detail {

struct NodeState;

struct NodeLink {
  const NodeState* node = nullptr;
};

}  // namespace ldmsim::detail
