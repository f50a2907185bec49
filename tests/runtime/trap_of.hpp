// Test helper: join a launch and hand back the fault it trapped, if any.
#pragma once

#include <optional>

#include "ldmsim/ldmsim.hpp"

namespace ldmsim::testing {

/// Joins `launch`; returns the Fault join() rethrew, or nullopt when the launch finished cleanly.
inline std::optional<Fault> trap_of(Launch launch) {
  try {
    launch.join();
  } catch (const Fault& f) {
    return f;
  }
  return std::nullopt;
}

}  // namespace ldmsim::testing
