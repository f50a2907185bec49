// Launches in flight on a shared node (see context_session.hpp).
#include "context_session.hpp"

#include <algorithm>

#include "launch_state.hpp"

namespace ldmsim::detail {

void ContextSession::remove(LaunchState& launch) {
  launches_.erase(std::remove(launches_.begin(), launches_.end(), &launch), launches_.end());
}

bool ContextSession::declare_deadlocks() {
  bool any = false;
  for (LaunchState* launch : launches_) any = launch->declare_deadlock() || any;
  return any;
}

}  // namespace ldmsim::detail
