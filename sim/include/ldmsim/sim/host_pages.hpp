// Committing host pages ahead of their first touch: on the VMs measured a first touch costs ~0.4 ms per MB
// (docs/benchmarks.md), so pages the simulation will soon write are better populated by a thread that would
// otherwise idle. Contents never change.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

namespace ldmsim {

/// Populates the whole pages of [begin, begin + bytes) writable, contents unchanged (MADV_POPULATE_WRITE, else a
/// read and write back of one byte per page), a page range at a time, returning early once `stop` is set. No
/// other thread may write the range meanwhile.
void populate_pages(std::byte* begin, std::size_t bytes, const std::atomic<bool>& stop);

/// Zeroes [begin, begin + bytes) of a private anonymous mapping, skipping whole pages the process has never
/// touched (neither present nor swapped out, per /proc/self/pagemap): those read as zero already, and writing
/// zeros into them would only fault them in. Where pagemap cannot be read, zeroes everything.
void zero_touched(std::byte* begin, std::size_t bytes);

/// A fresh buffer of `bytes` (contents unset), 2 MiB-aligned and advised into transparent huge pages where the host
/// grants them: a buffer written once from start to end otherwise takes a page fault per 4 KiB (3.4 MiB cost
/// 10-13 ms of first touches on a VM, about 1 ms in huge pages). Freed when the last owner lets go.
std::shared_ptr<std::byte> fresh_huge_buffer(std::size_t bytes);

}  // namespace ldmsim
