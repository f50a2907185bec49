// A compute core shared by contexts (see physical_core.hpp).
#include "physical_core.hpp"

#include <algorithm>

namespace ldmsim::detail {

Cycle PhysicalCore::take(std::uint32_t context, Cycle ready, Cycle switch_cycles) {
  Cycle start = std::max(ready, free_at_);
  const int who = static_cast<int>(context);
  if (last_ >= 0 && last_ != who) {
    add_span({start, start + switch_cycles, kSwitchSpan});
    start += switch_cycles;
    stats_.switch_cycles += switch_cycles;
    ++stats_.switches;
  }
  holder_ = who;
  last_ = who;
  held_since_ = start;
  return start;
}

void PhysicalCore::release(Cycle now) {
  if (now > held_since_) {
    add_span({held_since_, now, static_cast<std::uint32_t>(holder_)});
  }
  holder_ = -1;
  free_at_ = std::max(free_at_, now);
  released_.notify_all();
}

void PhysicalCore::idle(Cycle from, Cycle to) {
  if (from > held_since_) {
    add_span({held_since_, from, static_cast<std::uint32_t>(holder_)});
  }
  held_since_ = std::max(held_since_, to);
}

void PhysicalCore::add_span(ScheduleSpan span) {
  if (span.end <= span.start) return;
  if (!spans_.empty() && spans_.back().context == span.context && spans_.back().end == span.start) {
    spans_.back().end = span.end;  // the same context went on without a gap
    return;
  }
  if (spans_.size() == kMaxSpans) {
    for (std::size_t i = 0; i < kMaxSpans / 2; ++i) {
      const ScheduleSpan& a = spans_[2 * i];
      const ScheduleSpan& b = spans_[2 * i + 1];
      spans_[i] = {a.start, b.end, a.end - a.start >= b.end - b.start ? a.context : b.context};
    }
    spans_.resize(kMaxSpans / 2);
    ++stats_.schedule_compactions;
  }
  spans_.push_back(span);
}

}  // namespace ldmsim::detail
