// Private: planning state kept per arch. A machine's control core plans for its own arch and, in split runs, for
// its group views' (fewer core groups), so a cache of its host state keeps a few arches' worth side by side
// instead of starting afresh whenever the arch changes.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "ldmsim/sim/arch.hpp"

namespace ldmsim::ops {

/// One T per arch, made from (a copy of) the arch on first use, the oldest dropped past `Arches` of them.
template <typename T, std::size_t Arches = 4>
class PerArch {
 public:
  /// The T of an arch equal to `arch`; it may keep a reference to the arch it was made from (kept beside it).
  /// Valid until the next call of `of`.
  T& of(const Arch& arch) {
    for (Entry& entry : entries_) {
      if (*entry.arch == arch) return *entry.value;
    }
    if (entries_.size() == Arches) entries_.erase(entries_.begin());
    auto copy = std::make_unique<Arch>(arch);
    auto value = std::make_unique<T>(*copy);
    entries_.push_back({std::move(copy), std::move(value)});
    return *entries_.back().value;
  }

 private:
  struct Entry {
    std::unique_ptr<Arch> arch;
    std::unique_ptr<T> value;  // destroyed before its arch
  };
  std::vector<Entry> entries_;
};

}  // namespace ldmsim::ops
