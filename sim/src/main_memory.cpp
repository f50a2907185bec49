// Device main memory: lazily committed chunks (mmap'd on first write, so even a touched chunk costs only
// its touched pages) and a deterministic first-fit region allocator per core-group window.
#include "ldmsim/sim/main_memory.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/host_pages.hpp"

namespace ldmsim {

namespace {
bool is_power_of_two(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}
std::uint64_t align_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) & ~(a - 1);
}
}  // namespace

MainMemory::MainMemory(std::uint32_t core_groups, std::uint64_t bytes_per_cg)
    : core_groups_(core_groups), bytes_per_cg_(bytes_per_cg), free_lists_(core_groups), allocated_in_cg_(core_groups) {
  const std::uint64_t total = bytes_per_cg_ * core_groups_;
  chunk_count_ = (total + kChunkBytes - 1) / kChunkBytes;
  const std::size_t table_bytes = std::max<std::size_t>(chunk_count_, 1) * sizeof(std::byte*);
  void* table = mmap(nullptr, table_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (table == MAP_FAILED) throw std::bad_alloc();
  chunk_table_ =
      std::unique_ptr<std::byte*[], TableMapping>(static_cast<std::byte**>(table), TableMapping{table_bytes});
  for (std::uint32_t cg = 0; cg < core_groups_; ++cg)
    free_lists_[cg].emplace(kBase + cg * bytes_per_cg_, bytes_per_cg_);
}

std::shared_lock<std::shared_mutex> MainMemory::read_lock() const {
  if (!concurrent_.load(std::memory_order_relaxed)) return {};
  return std::shared_lock(maps_mutex_);
}

std::unique_lock<std::shared_mutex> MainMemory::write_lock() {
  if (!concurrent_.load(std::memory_order_relaxed)) return {};
  return std::unique_lock(maps_mutex_);
}

MainMemory::~MainMemory() {
  for (std::byte* chunk : committed_) munmap(chunk, kChunkBytes);
}

void MainMemory::TableMapping::operator()(std::byte** table) const {
  munmap(table, bytes);
}

DeviceAddr MainMemory::allocate(std::uint64_t bytes, std::uint64_t alignment, int cg, std::string name, Fill fill) {
  const auto lock = write_lock();
  if (bytes == 0) throw ConfigError("main memory: cannot allocate 0 bytes");
  if (!is_power_of_two(alignment) || alignment < 4) {
    throw ConfigError(fmt::format("main memory: alignment {} must be a power of two >= 4", alignment));
  }
  if (cg < 0 || static_cast<std::uint32_t>(cg) >= core_groups_) {
    throw ConfigError(fmt::format("main memory: core group {} does not exist (the arch has {})", cg, core_groups_));
  }
  auto& free_list = free_lists_[static_cast<std::size_t>(cg)];
  for (auto it = free_list.begin(); it != free_list.end(); ++it) {
    const DeviceAddr start = align_up(it->first, alignment);
    const DeviceAddr hole_end = it->first + it->second;
    if (start > hole_end || hole_end - start < bytes) continue;
    const DeviceAddr hole_start = it->first;
    free_list.erase(it);
    if (start > hole_start) free_list.emplace(hole_start, start - hole_start);
    if (start + bytes < hole_end) free_list.emplace(start + bytes, hole_end - (start + bytes));
    clean(start, bytes, fill);
    regions_.emplace(start, Region{start, bytes, cg, std::move(name)});
    allocated_bytes_ += bytes;
    allocated_in_cg_[static_cast<std::size_t>(cg)] += bytes;
    return start;
  }
  throw ConfigError(
      fmt::format("main memory: cannot allocate {} bytes{} in core group {} (no free block that large; {} of "
                  "the group's {} bytes in use)",
                  bytes, name.empty() ? std::string() : fmt::format(" for '{}'", name), cg,
                  allocated_in_cg_[static_cast<std::size_t>(cg)], bytes_per_cg_));
}

void MainMemory::free(DeviceAddr base) {
  const auto lock = write_lock();
  auto it = regions_.find(base);
  if (it == regions_.end())
    throw ConfigError(fmt::format("main memory: 0x{:x} is not the base of a live region", base));
  drop_loans(base);
  // A replicated region, or a copy of one: the replication ends (the other copies stay live regions).
  replicas_.erase(base);
  std::erase_if(replicas_, [base](const auto& entry) {
    return std::find(entry.second.copies.begin(), entry.second.copies.end(), base) != entry.second.copies.end();
  });
  replicated_.store(!replicas_.empty(), std::memory_order_relaxed);
  const Region region = it->second;
  regions_.erase(it);
  allocated_bytes_ -= region.bytes;
  allocated_in_cg_[static_cast<std::size_t>(region.cg)] -= region.bytes;
  release(region.base, region.bytes);
  auto& free_list = free_lists_[static_cast<std::size_t>(region.cg)];
  auto [pos, inserted] = free_list.emplace(region.base, region.bytes);
  // Coalesce with the neighbouring holes.
  if (auto next = std::next(pos); next != free_list.end() && pos->first + pos->second == next->first) {
    pos->second += next->second;
    free_list.erase(next);
  }
  if (pos != free_list.begin()) {
    auto prev = std::prev(pos);
    if (prev->first + prev->second == pos->first) {
      prev->second += pos->second;
      free_list.erase(pos);
    }
  }
}

const Region* MainMemory::find_region(DeviceAddr addr, std::uint64_t bytes) const {
  const auto lock = read_lock();
  auto it = regions_.upper_bound(addr);
  if (it == regions_.begin()) return nullptr;
  --it;
  const Region& r = it->second;
  if (addr < r.base || addr - r.base > r.bytes || bytes > r.bytes - (addr - r.base)) return nullptr;
  return &r;
}

std::optional<Region> MainMemory::nearest_region(DeviceAddr addr) const {
  const auto lock = read_lock();
  if (regions_.empty()) return std::nullopt;
  auto it = regions_.upper_bound(addr);
  if (it == regions_.begin()) return it->second;
  auto prev = std::prev(it);
  if (it == regions_.end()) return prev->second;
  const std::uint64_t dist_prev = addr >= prev->second.end() ? addr - prev->second.end() : 0;
  const std::uint64_t dist_next = it->second.base - addr;
  return dist_prev <= dist_next ? prev->second : it->second;
}

std::vector<Region> MainMemory::regions() const {
  const auto lock = read_lock();
  std::vector<Region> out;
  out.reserve(regions_.size());
  for (const auto& [base, region] : regions_) out.push_back(region);
  return out;
}

std::byte* MainMemory::chunk_for_write(std::uint64_t index) {
  std::byte* chunk = chunk_slot(index).load(std::memory_order_acquire);
  if (chunk != nullptr) return chunk;
  void* fresh = mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (fresh == MAP_FAILED) throw std::bad_alloc();
  const std::lock_guard lock(committed_mutex_);
  try {
    committed_.reserve(committed_.size() + 1);  // before the chunk is published: then listing it cannot fail
  } catch (...) {
    munmap(fresh, kChunkBytes);
    throw;
  }
  std::byte* expected = nullptr;
  if (chunk_slot(index).compare_exchange_strong(expected, static_cast<std::byte*>(fresh), std::memory_order_acq_rel)) {
    committed_.push_back(static_cast<std::byte*>(fresh));
    return static_cast<std::byte*>(fresh);
  }
  munmap(fresh, kChunkBytes);  // another thread committed it first
  return expected;
}

void MainMemory::lend(DeviceAddr base, std::shared_ptr<const void> owner, std::span<const std::byte> bytes) {
  const auto lock = write_lock();
  const auto it = regions_.find(base);
  if (it == regions_.end() || it->second.bytes != bytes.size()) {
    throw std::logic_error(
        fmt::format("main memory: lending {} bytes to 0x{:x}, which is not the base of a live "
                    "region of that size",
                    bytes.size(), base));
  }
  // Replaces the region's contents, as an upload of the bytes would: an earlier loan of it goes, and whatever its
  // chunks hold is hidden until the first write copies the new bytes over it.
  drop_loans(base);
  auto loan = std::make_unique<Loan>();
  loan->base = base;
  loan->bytes = bytes;
  loan->owner = std::move(owner);
  loans_.emplace(base, std::move(loan));
}

void MainMemory::add_replica(DeviceAddr base, int cg, DeviceAddr copy) {
  const auto lock = write_lock();
  const auto from = regions_.find(base), to = regions_.find(copy);
  if (from == regions_.end() || to == regions_.end() || from->second.bytes != to->second.bytes || cg < 0 ||
      static_cast<std::uint32_t>(cg) >= core_groups_ || to->second.cg != cg || base == copy) {
    throw std::logic_error(fmt::format(
        "main memory: 0x{:x} cannot be core group {}'s copy of 0x{:x} (both live regions of one size, the copy in "
        "that group's memory)",
        copy, cg, base));
  }
  Replicas& r = replicas_[base];
  r.bytes = from->second.bytes;
  r.copies.resize(core_groups_, 0);
  r.copies[static_cast<std::size_t>(cg)] = copy;
  replicated_.store(true, std::memory_order_relaxed);
}

std::optional<DeviceAddr> MainMemory::replica_of(DeviceAddr addr, std::uint64_t bytes, int cg) const {
  const auto lock = read_lock();
  auto it = replicas_.upper_bound(addr);
  if (it == replicas_.begin()) return std::nullopt;
  --it;
  const auto& [base, r] = *it;
  if (addr - base >= r.bytes || bytes > r.bytes - (addr - base)) return std::nullopt;
  const DeviceAddr copy = r.copies[static_cast<std::size_t>(cg)];
  return copy == 0 ? addr : copy + (addr - base);
}

void MainMemory::drop_loans(DeviceAddr base) {
  std::erase_if(loans_, [base](const auto& entry) {
    return entry.first == base || entry.second->copied.load(std::memory_order_relaxed);
  });
}

std::optional<MainMemory::LentBytes> MainMemory::lent_bytes(DeviceAddr base) const {
  const auto lock = read_lock();
  const auto it = loans_.find(base);
  if (it == loans_.end() || it->second->copied.load(std::memory_order_acquire)) return std::nullopt;
  return LentBytes{it->second->owner, it->second->bytes};
}

std::size_t MainMemory::lent_regions() const {
  const auto lock = read_lock();
  return static_cast<std::size_t>(std::count_if(loans_.begin(), loans_.end(), [](const auto& entry) {
    return !entry.second->copied.load(std::memory_order_acquire);
  }));
}

void MainMemory::read_chunk(std::uint64_t offset, std::byte* out, std::size_t n) const {
  const std::byte* chunk = chunk_slot(offset / kChunkBytes).load(std::memory_order_acquire);
  if (chunk != nullptr) {
    std::memcpy(out, chunk + offset % kChunkBytes, n);
  } else {
    std::memset(out, 0, n);
  }
}

std::map<DeviceAddr, std::unique_ptr<MainMemory::Loan>>::const_iterator MainMemory::first_loan_from(
    DeviceAddr addr) const {
  auto it = loans_.upper_bound(addr);
  return it == loans_.begin() ? it : std::prev(it);
}

void MainMemory::read_lent(std::uint64_t offset, std::byte* out, std::size_t n) const {
  for (auto it = first_loan_from(kBase + offset); it != loans_.end() && it->first - kBase < offset + n; ++it) {
    const Loan* loan = it->second.get();
    const std::uint64_t from = loan->base - kBase, to = from + loan->bytes.size();
    if (to <= offset || from >= offset + n || loan->copied.load(std::memory_order_acquire)) continue;
    // Loans never overlap (one per region): the pieces before and after this one hold no part of it.
    const std::uint64_t lo = std::max(offset, from), hi = std::min(offset + n, to);
    if (lo > offset) read_lent(offset, out, lo - offset);
    std::memcpy(out + (lo - offset), loan->bytes.data() + (lo - from), hi - lo);
    if (hi < offset + n) read_lent(hi, out + (hi - offset), offset + n - hi);
    return;
  }
  read_chunk(offset, out, n);
}

void MainMemory::read(DeviceAddr addr, std::span<std::byte> out) const {
  const auto lock = read_lock();
  std::uint64_t offset = addr - kBase;
  std::size_t done = 0;
  while (done < out.size()) {
    const std::size_t n = std::min<std::size_t>(out.size() - done, kChunkBytes - offset % kChunkBytes);
    if (loans_.empty()) {
      read_chunk(offset, out.data() + done, n);
    } else {
      read_lent(offset, out.data() + done, n);
    }
    done += n;
    offset += n;
  }
}

void MainMemory::copy_loans(DeviceAddr addr, std::uint64_t bytes) {
  for (auto it = first_loan_from(addr); it != loans_.end() && it->first < addr + bytes; ++it) {
    Loan* loan = it->second.get();
    if (loan->base + loan->bytes.size() <= addr || loan->base >= addr + bytes) continue;
    if (loan->copied.load(std::memory_order_acquire)) continue;
    const std::lock_guard lock(copy_mutex_);
    if (loan->copied.load(std::memory_order_relaxed)) continue;  // another thread's write copied it meanwhile
    write_chunks(loan->base, loan->bytes);
    loan->copied.store(true, std::memory_order_release);  // readers see the copy complete, or the lent bytes
  }
}

void MainMemory::write(DeviceAddr addr, std::span<const std::byte> in) {
  if (in.empty()) return;
  const auto lock = read_lock();  // the loans are read; the chunks commit lock-free
  if (!loans_.empty()) copy_loans(addr, in.size());
  write_chunks(addr, in);
}

void MainMemory::write_chunks(DeviceAddr addr, std::span<const std::byte> in) {
  std::uint64_t offset = addr - kBase;
  std::size_t done = 0;
  while (done < in.size()) {
    const std::uint64_t index = offset / kChunkBytes;
    const std::uint64_t within = offset % kChunkBytes;
    const std::size_t n = std::min<std::size_t>(in.size() - done, kChunkBytes - within);
    std::memcpy(chunk_for_write(index) + within, in.data() + done, n);
    done += n;
    offset += n;
  }
}

void MainMemory::prefault(DeviceAddr addr, std::uint64_t bytes, const std::atomic<bool>& stop) {
  std::uint64_t offset = addr - kBase;
  const std::uint64_t end = std::min(offset + bytes, chunk_count_ * kChunkBytes);
  while (offset < end && !stop.load(std::memory_order_relaxed)) {
    const std::uint64_t within = offset % kChunkBytes;
    const std::uint64_t n = std::min(end - offset, kChunkBytes - within);
    populate_pages(chunk_for_write(offset / kChunkBytes) + within, n, stop);
    offset += n;
  }
}

void MainMemory::release(DeviceAddr addr, std::uint64_t bytes) {
  std::uint64_t offset = addr - kBase;
  const std::uint64_t end = offset + bytes;
  while (offset < end) {
    const std::uint64_t index = offset / kChunkBytes;
    const std::uint64_t n = std::min(end - offset, kChunkBytes - offset % kChunkBytes);
    // Zeroed when allocated again (clean), not when a run ends. Whole chunks too: their pages stay committed, since
    // zeroing them at reallocation costs a fraction of faulting them in again (split runs free and reallocate
    // every op's pieces in six windows: returning the pages doubled ResNet-50's host time).
    if (chunk_slot(index).load(std::memory_order_acquire) != nullptr) mark_dirty(kBase + offset, n);
    offset += n;
  }
}

void MainMemory::mark_dirty(DeviceAddr addr, std::uint64_t bytes) {
  const auto chunk_of = [](DeviceAddr a) { return (a - kBase) / kChunkBytes; };
  auto [it, added] = dirty_.emplace(addr, bytes);
  // Merged with dirty neighbours in the same chunk, so the map stays as small as the holes.
  if (auto next = std::next(it);
      next != dirty_.end() && next->first == addr + bytes && chunk_of(next->first) == chunk_of(addr)) {
    it->second += next->second;
    dirty_.erase(next);
  }
  if (it != dirty_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == addr && chunk_of(prev->first) == chunk_of(addr)) {
      prev->second += it->second;
      dirty_.erase(it);
    }
  }
}

void MainMemory::clean(DeviceAddr addr, std::uint64_t bytes, Fill fill) {
  const DeviceAddr end = addr + bytes;
  auto it = dirty_.upper_bound(addr);
  if (it != dirty_.begin()) --it;  // a piece starting before addr may reach into it
  while (it != dirty_.end() && it->first < end) {
    const DeviceAddr piece = it->first, piece_end = piece + it->second;
    if (piece_end <= addr) {
      ++it;
      continue;
    }
    const DeviceAddr from = std::max(piece, addr), to = std::min(piece_end, end);
    const std::uint64_t offset = from - kBase;  // one chunk: release records pieces within a chunk
    std::byte* chunk = chunk_slot(offset / kChunkBytes).load(std::memory_order_acquire);
    if (chunk != nullptr && fill == Fill::kZeroed) {
      zero_touched(chunk + offset % kChunkBytes, to - from);
    }
    it = dirty_.erase(it);
    if (piece < from) dirty_.emplace(piece, from - piece);
    if (to < piece_end) it = dirty_.emplace(to, piece_end - to).first;
  }
}

std::uint64_t MainMemory::committed_bytes() const {
  const std::lock_guard lock(committed_mutex_);
  return committed_.size() * kChunkBytes;
}

}  // namespace ldmsim
