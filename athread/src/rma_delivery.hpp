// Applies the RMA effects that have landed on the running core (see rma_api.cpp).
#pragma once

namespace ldmsim::athread {

struct SlaveContext;

/// Writes the data and raises the reply words of every RMA whose landing cycle the core's clock has reached.
void deliver_due_rma(SlaveContext& ctx);

}  // namespace ldmsim::athread
