// Written-byte bitmaps of tracked allocations and the range sets the launch keeps of its puts (device_init.hpp).
#include "device_init.hpp"

#include <algorithm>
#include <iterator>

namespace ldmsim::detail {

void RangeSet::add(DeviceAddr lo, DeviceAddr hi) {
  if (lo >= hi) return;
  auto it = ranges_.upper_bound(lo);
  if (it != ranges_.begin() && std::prev(it)->second >= lo) {
    --it;  // the range before reaches lo: grow it
    lo = it->first;
    hi = std::max(hi, it->second);
    it = ranges_.erase(it);
  }
  while (it != ranges_.end() && it->first <= hi) {  // swallow the ranges it reaches
    hi = std::max(hi, it->second);
    it = ranges_.erase(it);
  }
  ranges_.emplace(lo, hi);
}

void RangeSet::subtract_from(DeviceAddr lo, DeviceAddr hi, std::vector<std::pair<DeviceAddr, DeviceAddr>>& out) const {
  auto it = ranges_.upper_bound(lo);
  if (it != ranges_.begin()) --it;
  DeviceAddr at = lo;
  for (; it != ranges_.end() && it->first < hi && at < hi; ++it) {
    if (it->second <= at) continue;
    if (it->first > at) out.emplace_back(at, it->first);
    at = std::max(at, it->second);
  }
  if (at < hi) out.emplace_back(at, hi);
}

void DeviceInit::on_alloc(DeviceAddr base, std::uint64_t bytes) {
  allocs_[base] = Alloc{bytes, std::vector<std::uint64_t>((bytes + 63) / 64, 0)};
}

void DeviceInit::on_free(DeviceAddr base) {
  allocs_.erase(base);
}

void DeviceInit::mark(DeviceAddr lo, DeviceAddr hi) {
  auto it = allocs_.upper_bound(lo);
  if (it != allocs_.begin()) --it;
  for (; it != allocs_.end() && it->first < hi; ++it) {
    Alloc& a = it->second;
    const std::uint64_t from = lo > it->first ? lo - it->first : 0;
    const std::uint64_t to = std::min(hi - it->first, a.bytes);
    for (std::uint64_t i = from; i < to;) {
      if (i % 64 == 0 && i + 64 <= to) {
        a.bits[i / 64] = ~std::uint64_t{0};
        i += 64;
      } else {
        a.bits[i / 64] |= std::uint64_t{1} << (i % 64);
        ++i;
      }
    }
  }
}

void DeviceInit::unwritten(DeviceAddr lo, DeviceAddr hi, std::vector<std::pair<DeviceAddr, DeviceAddr>>& out) const {
  auto it = allocs_.upper_bound(lo);
  if (it != allocs_.begin()) --it;
  for (; it != allocs_.end() && it->first < hi; ++it) {
    const Alloc& a = it->second;
    if (it->first + a.bytes <= lo) continue;
    const std::uint64_t from = lo > it->first ? lo - it->first : 0;
    const std::uint64_t to = std::min(hi - it->first, a.bytes);
    std::uint64_t i = from;
    while (i < to) {
      if (i % 64 == 0 && i + 64 <= to && a.bits[i / 64] == ~std::uint64_t{0}) {
        i += 64;  // a whole written word
        continue;
      }
      if (((a.bits[i / 64] >> (i % 64)) & 1u) != 0) {
        ++i;
        continue;
      }
      const std::uint64_t start = i;
      while (i < to && ((a.bits[i / 64] >> (i % 64)) & 1u) == 0) ++i;
      if (!out.empty() && out.back().second == it->first + start) {
        out.back().second = it->first + i;
      } else {
        out.emplace_back(it->first + start, it->first + i);
      }
    }
  }
}

}  // namespace ldmsim::detail
