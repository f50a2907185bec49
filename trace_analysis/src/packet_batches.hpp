// The Perfetto export's output stream: serialized Trace.packet fields are appended to a batch, and each full batch
// is compressed into one TracePacket.zstd_compressed_packets (or compressed_packets for deflate) and written by a
// worker thread, so encoding the next batch overlaps compressing and writing this one. The bytes written depend
// only on what was appended.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <ostream>
#include <string_view>
#include <thread>

#include "ldmsim/trace_analysis/perfetto_export.hpp"

namespace ldmsim {

class PacketBatches {
 public:
  /// Uncompressed bytes per batch: Perfetto wants each compressed packet under 512 KiB, which the export's
  /// packets (about 60 bytes per request before compression) stay far below.
  static constexpr std::size_t kBatchBytes = std::size_t{1} << 20;

  PacketBatches(std::ostream& out, PerfettoCompression compression);
  PacketBatches(const PacketBatches&) = delete;
  PacketBatches& operator=(const PacketBatches&) = delete;
  ~PacketBatches();

  /// Room for `n` more bytes at the end of the batch (a full batch is handed to the worker first); write there,
  /// then commit() what was written.
  char* reserve(std::size_t n) {
    if (size_ + n > capacity_) [[unlikely]]
      make_room(n);
    return data_.get() + size_;
  }
  void commit(char* end) { size_ = static_cast<std::size_t>(end - data_.get()); }
  /// Appends one Trace.packet field holding `packet`.
  void append_packet(std::string_view packet);
  /// Compresses and writes what is left, waits for the worker and flushes the stream. Rethrows a failure of the
  /// worker (here or at the next reserve() after it happened).
  void finish();

 private:
  void make_room(std::size_t n);
  void hand_off();
  void wait_idle(std::unique_lock<std::mutex>& lock);
  void work();
  void write_batch(const char* data, std::size_t size);

  std::ostream& out_;
  PerfettoCompression compression_;
  std::unique_ptr<char[]> data_;  ///< the batch being filled
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::unique_ptr<char[]> spare_;  ///< the worker's batch
  std::size_t spare_size_ = 0;
  std::size_t spare_capacity_ = 0;
  std::unique_ptr<char[]> compressed_;
  std::size_t compressed_capacity_ = 0;
  void* zstd_ = nullptr;  ///< ZSTD_CCtx, reused across batches

  std::mutex mutex_;
  std::condition_variable changed_;
  bool busy_ = false;  ///< the worker holds spare_
  bool stop_ = false;
  std::exception_ptr failure_;
  std::thread worker_;
};

}  // namespace ldmsim
