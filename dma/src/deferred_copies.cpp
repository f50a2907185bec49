// The copies a BCAST or ROW get owes its other receivers (deferred_copies.hpp).
#include "ldmsim/dma/deferred_copies.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>
#include <stdexcept>

namespace ldmsim {

namespace {

/// Calls each(c) for every set bit c of `mask`, lowest first.
template <typename Each>
void for_each_bit(std::uint64_t mask, Each&& each) {
  while (mask != 0) {
    each(std::countr_zero(mask));
    mask &= mask - 1;
  }
}

}  // namespace

std::size_t DeferredCopies::first_overlap(const std::vector<Owed>& list, std::uint64_t begin) {
  // Entries never overlap and are in address order, so their ends are ordered too.
  return static_cast<std::size_t>(
      std::partition_point(list.begin(), list.end(), [begin](const Owed& o) { return o.end <= begin; }) - list.begin());
}

DeferredCopies::DeferredCopies(std::byte* ldm_base, std::uint64_t ldm_bytes, std::size_t cores)
    : ldm_base_(ldm_base), ldm_bytes_(ldm_bytes), cores_(cores) {
  if (!can_defer()) return;
  owed_.resize(cores);
  sources_.assign(cores, 0);
  count_.assign(cores * cores, 0);
}

void DeferredCopies::use_stores(std::byte* ldm_base) {
  if (entries_ != 0) throw std::logic_error("DeferredCopies::use_stores while copies are owed");
  ldm_base_ = ldm_base;
}

void DeferredCopies::owe(std::uint64_t receivers, int source, std::uint64_t begin, std::uint64_t end) {
  receivers &= ~(std::uint64_t{1} << source);
  if (receivers == 0 || begin >= end) return;
  std::vector<Owed>& list = owed_[static_cast<std::size_t>(source)];
  // Kept in address order: a get usually lands after the source's last owed range, so this mostly appends.
  auto at = list.end();
  while (at != list.begin() && std::prev(at)->begin > begin) --at;
  list.insert(at, Owed{begin, end, receivers});
  ++entries_;
  for_each_bit(receivers, [&](int r) {
    ++count_[static_cast<std::size_t>(r) * cores_ + static_cast<std::size_t>(source)];
    sources_[static_cast<std::size_t>(r)] |= std::uint64_t{1} << source;
  });
}

void DeferredCopies::make(int core, int source, const Owed& owed) {
  std::memcpy(ldm_base_ + static_cast<std::size_t>(core) * ldm_bytes_ + owed.begin,
              ldm_base_ + static_cast<std::size_t>(source) * ldm_bytes_ + owed.begin, owed.end - owed.begin);
}

bool DeferredCopies::settle(int source, Owed& owed, std::uint64_t cores) {
  const std::uint64_t cleared = owed.receivers & cores;
  owed.receivers &= ~cleared;
  for_each_bit(cleared, [&](int r) {
    std::uint32_t& n = count_[static_cast<std::size_t>(r) * cores_ + static_cast<std::size_t>(source)];
    if (--n == 0) sources_[static_cast<std::size_t>(r)] &= ~(std::uint64_t{1} << source);
  });
  return owed.receivers != 0;
}

template <typename Visit>
void DeferredCopies::sweep(int source, std::uint64_t begin, std::uint64_t end, Visit&& visit) {
  std::vector<Owed>& list = owed_[static_cast<std::size_t>(source)];
  const std::size_t first = first_overlap(list, begin);
  std::size_t i = first;
  std::size_t kept = first;  // entries [first, kept) are the ones still owed, in order
  for (; i < list.size() && list[i].begin < end; ++i) {
    if (visit(list[i])) {
      if (kept != i) list[kept] = list[i];
      ++kept;
    }
  }
  entries_ -= i - kept;
  list.erase(list.begin() + static_cast<std::ptrdiff_t>(kept), list.begin() + static_cast<std::ptrdiff_t>(i));
}

int DeferredCopies::sole_source(int core, std::uint64_t begin, std::uint64_t end) const {
  if (entries_ == 0 || begin >= end) return -1;
  const std::uint64_t bit = std::uint64_t{1} << core;
  std::uint64_t sources = sources_[static_cast<std::size_t>(core)];
  // A core's owed ranges never overlap, so at most one source owes the range's first byte.
  while (sources != 0) {
    const int source = std::countr_zero(sources);
    sources &= sources - 1;
    const std::vector<Owed>& list = owed_[static_cast<std::size_t>(source)];
    std::uint64_t covered = begin;  // [begin, covered) is owed from this source
    for (std::size_t i = first_overlap(list, begin); i < list.size() && list[i].begin <= covered; ++i) {
      if ((list[i].receivers & bit) != 0) covered = list[i].end;
      if (covered >= end) return source;
    }
  }
  return -1;
}

void DeferredCopies::before_read(int core, std::uint64_t begin, std::uint64_t end) {
  if (entries_ == 0) return;
  const std::uint64_t bit = std::uint64_t{1} << core;
  for_each_bit(sources_[static_cast<std::size_t>(core)], [&](int source) {
    sweep(source, begin, end, [&](Owed& owed) {
      if ((owed.receivers & bit) == 0) return true;
      make(core, source, owed);
      return settle(source, owed, bit);
    });
  });
}

void DeferredCopies::before_write(std::uint64_t cores, std::uint64_t begin, std::uint64_t end) {
  if (entries_ == 0) return;
  // Copies owed to these cores: dropped, but the part outside the written range must still arrive.
  std::uint64_t sources = 0;
  for_each_bit(cores, [&](int c) { sources |= sources_[static_cast<std::size_t>(c)]; });
  for_each_bit(sources, [&](int source) {
    sweep(source, begin, end, [&](Owed& owed) {
      const std::uint64_t hit = owed.receivers & cores;
      if (hit == 0) return true;
      if (owed.begin < begin || owed.end > end) for_each_bit(hit, [&](int c) { make(c, source, owed); });
      return settle(source, owed, hit);
    });
  });
  // Copies other cores are owed from these cores' ranges: made while the ranges still hold their bytes.
  for_each_bit(cores, [&](int source) {
    sweep(source, begin, end, [&](Owed& owed) {
      for_each_bit(owed.receivers, [&](int c) { make(c, source, owed); });
      return settle(source, owed, owed.receivers);
    });
  });
}

void DeferredCopies::drop(std::uint64_t begin, std::uint64_t end) {
  if (entries_ == 0) return;
  // Receivers and their source hold a copy at the same offsets, so every copy read from the range goes too.
  for (std::size_t source = 0; source < owed_.size(); ++source) {
    const int s = static_cast<int>(source);
    sweep(s, begin, end, [&](Owed& owed) { return settle(s, owed, owed.receivers); });
  }
}

}  // namespace ldmsim
