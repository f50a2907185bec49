// Host mappings mirrored in simulated main memory (see host_memory.hpp).
#include "host_memory.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <span>
#include <sstream>
#include <string>

namespace ldmsim::athread {

namespace {
struct Range {
  std::uintptr_t lo;
  std::uintptr_t hi;
  bool writable;
};

// Readable mappings, adjacent ones with the same permission merged (.data and .bss can share an object).
std::vector<Range> read_maps() {
  std::vector<Range> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string span;
    std::string perms;
    in >> span >> perms;
    const auto dash = span.find('-');
    if (dash == std::string::npos || perms.size() < 2 || perms[0] != 'r') continue;
    if (line.find("[vvar]") != std::string::npos || line.find("[vsyscall]") != std::string::npos) continue;
    const auto lo = static_cast<std::uintptr_t>(std::stoull(span.substr(0, dash), nullptr, 16));
    const auto hi = static_cast<std::uintptr_t>(std::stoull(span.substr(dash + 1), nullptr, 16));
    const bool writable = perms[1] == 'w';
    if (!out.empty() && out.back().hi == lo && out.back().writable == writable) {
      out.back().hi = hi;
    } else {
      out.push_back({lo, hi, writable});
    }
  }
  return out;
}
}  // namespace

void HostMirror::refresh(MainMemory& memory) {
  const std::vector<Range> ranges = read_maps();
  std::vector<Mapping> next;
  next.reserve(ranges.size());
  for (const Range& r : ranges) {
    auto same = std::find_if(mappings_.begin(), mappings_.end(), [&](const Mapping& m) {
      return m.lo == r.lo && m.hi == r.hi && m.writable == r.writable;
    });
    if (same != mappings_.end()) {
      next.push_back(*same);
      same->device.reset();  // kept
      continue;
    }
    if (Mapping* old = stable_ ? holding(r.lo, r.hi, r.writable) : nullptr; old != nullptr) {
      // Its anchor keeps its device address: the mapping's other bytes move with their host addresses.
      Mapping kept = *old;
      kept.device = *old->device + (old->anchor - old->lo) - (old->anchor - r.lo);
      kept.lo = r.lo;
      kept.hi = r.hi;
      next.push_back(kept);
      old->device.reset();
      continue;
    }
    next.push_back({r.lo, r.hi, r.writable, std::nullopt, 0, 0, 0});
  }
  for (const Mapping& old : mappings_) {
    if (old.device) memory.free(old.region);
  }
  mappings_ = std::move(next);
}

HostMirror::Mapping* HostMirror::holding(std::uintptr_t lo, std::uintptr_t hi, bool writable) {
  for (Mapping& m : mappings_) {
    if (!m.device || m.writable != writable || m.anchor < lo || m.anchor >= hi) continue;
    const DeviceAddr anchor_device = *m.device + (m.anchor - m.lo);
    if (m.anchor - lo <= anchor_device - m.region && hi - m.anchor <= m.region + m.region_bytes - anchor_device) {
      return &m;
    }
  }
  return nullptr;
}

std::optional<DeviceAddr> HostMirror::to_device(std::uintptr_t host, MainMemory& memory) {
  const Mapping* found = by_host(host);
  if (found == nullptr) return std::nullopt;
  Mapping& m = mappings_[static_cast<std::size_t>(found - mappings_.data())];
  if (!m.device) mirror(m, host, memory);
  if (!m.device) return std::nullopt;  // no room for its mirror: the engine traps on the raw address
  return *m.device + (host - m.lo);
}

void HostMirror::mirror(Mapping& m, std::uintptr_t host, MainMemory& memory) {
  const std::uint64_t bytes = m.hi - m.lo;
  // Stable: the first-used address (16-byte aligned, as malloc's blocks are) lands `half` into a region of twice
  // `half`, which holds the mapping whichever part of it lies below that address.
  const std::uint64_t half = std::bit_ceil(std::max<std::uint64_t>(bytes, 4096));
  const std::uintptr_t anchor = host & ~std::uintptr_t{15};
  for (const bool stable : {stable_, false}) {  // no room for the stable layout: the mapping's size only
    for (int cg = 0; cg < static_cast<int>(memory.core_groups()); ++cg) {
      try {
        m.region_bytes = stable ? 2 * half : bytes;
        m.region = memory.allocate(m.region_bytes, 4096, cg, "host mapping");
        m.device = stable ? m.region + half - (anchor - m.lo) : m.region;
        m.anchor = stable ? anchor : m.lo;
        return;
      } catch (const std::exception&) {
        // this window is full; try the next core group's window
      }
    }
  }
}

bool HostMirror::within(std::uintptr_t host, std::uint64_t bytes) const {
  const Mapping* m = by_host(host);
  return m != nullptr && bytes <= m->hi - host;
}

std::optional<std::uintptr_t> HostMirror::to_host(DeviceAddr device) const {
  const Mapping* m = by_device(device);
  if (m == nullptr) return std::nullopt;
  return m->lo + (device - *m->device);
}

const HostMirror::Mapping* HostMirror::by_host(std::uintptr_t host) const {
  auto it = std::upper_bound(mappings_.begin(), mappings_.end(), host,
                             [](std::uintptr_t h, const Mapping& m) { return h < m.lo; });
  if (it == mappings_.begin()) return nullptr;
  --it;
  return host < it->hi ? &*it : nullptr;
}

const HostMirror::Mapping* HostMirror::by_device(DeviceAddr device) const {
  for (const Mapping& m : mappings_) {
    if (m.device && device >= *m.device && device < *m.device + (m.hi - m.lo)) return &m;
  }
  return nullptr;
}

bool HostMirror::writable(std::uintptr_t host, std::uint64_t bytes) const {
  const Mapping* m = by_host(host);
  return m != nullptr && m->writable && bytes <= m->hi - host;
}

void HostMirror::before_get(MainMemory& memory, const DmaRequest& request) const {
  const Mapping* m = by_device(request.main);
  if (m == nullptr || request.length == 0 || request.main_end() < request.main) return;
  const DeviceAddr mapping_end = *m->device + (m->hi - m->lo);
  const auto copy = [&](DeviceAddr at, std::uint64_t bytes) {
    if (at >= mapping_end) return;  // past the mapping: the engine traps the request as out of range
    const DeviceAddr end = std::min<DeviceAddr>(at + bytes, mapping_end);
    const auto* host = reinterpret_cast<const std::byte*>(m->lo + (at - *m->device));
    memory.write(at, std::span<const std::byte>(host, end - at));
  };
  // A strided get reads only its blocks: copying the gaps too costs more than a copy per block once a gap is
  // longer than a copy's fixed cost is worth in bytes (a 3-D stencil's halo planes skip whole rows).
  constexpr std::uint64_t kGapWorthSkipping = 512;
  if (request.block_count() <= 1 || request.stride < kGapWorthSkipping) {
    copy(request.main, request.main_end() - request.main);
    return;
  }
  for (std::uint64_t b = 0; b < request.block_count(); ++b) {
    copy(request.main + b * request.block_pitch(), request.block_bytes());
  }
}

void HostMirror::after_put(const MainMemory& memory, const DmaRequest& request) const {
  const Mapping* m = by_device(request.main);
  if (m == nullptr) return;
  for (std::uint64_t b = 0; b < request.block_count(); ++b) {
    const DeviceAddr at = request.main + b * request.block_pitch();
    auto* host = reinterpret_cast<std::byte*>(m->lo + (at - *m->device));
    memory.read(at, std::span<std::byte>(host, request.block_bytes()));
  }
}

}  // namespace ldmsim::athread
