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

void PhysicalCore::dma_wait(std::uint32_t context, Cycle from, Cycle to) {
  if (to <= from) return;
  // A context's waits follow each other in time; join one that overlaps or touches its latest.
  for (auto it = waits_.rbegin(); it != waits_.rend() && it->end >= from; ++it) {
    if (it->context == context) {
      it->end = std::max(it->end, to);
      return;
    }
  }
  append_bounded(waits_, {from, to, context});
}

void PhysicalCore::add_span(ScheduleSpan span) {
  if (span.end <= span.start) return;
  if (!spans_.empty() && spans_.back().context == span.context && spans_.back().end == span.start) {
    spans_.back().end = span.end;  // the same context went on without a gap
    return;
  }
  append_bounded(spans_, span);
}

void PhysicalCore::append_bounded(std::vector<ScheduleSpan>& list, ScheduleSpan span) {
  if (list.size() == kMaxSpans) {
    for (std::size_t i = 0; i < kMaxSpans / 2; ++i) {
      const ScheduleSpan& a = list[2 * i];
      const ScheduleSpan& b = list[2 * i + 1];
      list[i] = {std::min(a.start, b.start), std::max(a.end, b.end),
                 a.end - a.start >= b.end - b.start ? a.context : b.context};
    }
    list.resize(kMaxSpans / 2);
    ++stats_.schedule_compactions;
  }
  list.push_back(span);
}

}  // namespace ldmsim::detail
