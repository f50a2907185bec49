// The copies a BCAST or ROW get owes its other receivers (deferred_copies.hpp).
#include "ldmsim/dma/deferred_copies.hpp"

#include <cstring>

namespace ldmsim {

DeferredCopies::DeferredCopies(std::byte* ldm_base, std::uint64_t ldm_bytes, std::size_t cores)
    : ldm_base_(ldm_base), ldm_bytes_(ldm_bytes), owed_(cores), sourced_(cores, 0) {}

void DeferredCopies::owe(int core, int source, std::uint64_t begin, std::uint64_t end) {
  owed_[static_cast<std::size_t>(core)].push_back(Owed{source, begin, end});
  ++sourced_[static_cast<std::size_t>(source)];
  ++owed_count_;
}

void DeferredCopies::make(int core, const Owed& owed) {
  std::memcpy(stores(core) + owed.begin, stores(owed.source) + owed.begin, owed.end - owed.begin);
}

template <typename MustMake>
void DeferredCopies::settle(int core, std::uint64_t begin, std::uint64_t end, MustMake must_make) {
  std::vector<Owed>& list = owed_[static_cast<std::size_t>(core)];
  for (std::size_t i = 0; i < list.size();) {
    const Owed owed = list[i];
    if (owed.end <= begin || owed.begin >= end) {
      ++i;
      continue;
    }
    if (must_make(owed)) make(core, owed);
    forget(list, i);
  }
}

void DeferredCopies::forget(std::vector<Owed>& list, std::size_t i) {
  --sourced_[static_cast<std::size_t>(list[i].source)];
  --owed_count_;
  list[i] = list.back();  // order does not matter: owed ranges of one core never overlap
  list.pop_back();
}

void DeferredCopies::before_read(int core, std::uint64_t begin, std::uint64_t end) {
  if (owed_count_ == 0) return;
  settle(core, begin, end, [](const Owed&) { return true; });
}

void DeferredCopies::before_write(int core, std::uint64_t begin, std::uint64_t end) {
  if (owed_count_ == 0) return;
  // The part of an owed copy outside the written range must still arrive.
  settle(core, begin, end, [&](const Owed& owed) { return owed.begin < begin || owed.end > end; });
  if (sourced_[static_cast<std::size_t>(core)] == 0) return;
  for (std::size_t c = 0; c < owed_.size(); ++c) {
    if (sourced_[static_cast<std::size_t>(core)] == 0) break;
    std::vector<Owed>& list = owed_[c];
    for (std::size_t i = 0; i < list.size();) {
      const Owed owed = list[i];
      if (owed.source != core || owed.end <= begin || owed.begin >= end) {
        ++i;
        continue;
      }
      make(static_cast<int>(c), owed);
      forget(list, i);
    }
  }
}

void DeferredCopies::drop(std::uint64_t begin, std::uint64_t end) {
  if (owed_count_ == 0) return;
  // Receivers and their source hold a copy at the same offsets, so every copy read from the range goes too.
  for (std::size_t c = 0; c < owed_.size(); ++c)
    settle(static_cast<int>(c), begin, end, [](const Owed&) { return false; });
}

}  // namespace ldmsim
