// Batches of Perfetto packets compressed and written on a worker thread (see packet_batches.hpp).
#include "packet_batches.hpp"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "proto_writer.hpp"

namespace ldmsim {

namespace {

/// zstd's fastest regular level: at 1 the export spends about as long compressing as encoding, and the packets
/// still shrink about fivefold (docs/benchmarks.md).
constexpr int kZstdLevel = 1;
constexpr std::uint32_t kTracePacket = 1, kCompressedPackets = 50, kZstdCompressedPackets = 133;

}  // namespace

PacketBatches::PacketBatches(std::ostream& out, PerfettoCompression compression)
    : out_(out),
      compression_(compression),
      data_(new char[kBatchBytes]),
      capacity_(kBatchBytes),
      spare_(new char[kBatchBytes]),
      spare_capacity_(kBatchBytes) {
  if (compression_ == PerfettoCompression::kZstd) {
    zstd_ = ZSTD_createCCtx();
    if (zstd_ == nullptr) throw std::runtime_error("zstd: cannot create a compression context");
  }
  worker_ = std::thread([this] { work(); });
}

PacketBatches::~PacketBatches() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
  ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_));
}

void PacketBatches::append_packet(std::string_view packet) {
  char* at = reserve(packet.size() + 11);
  *at++ = static_cast<char>(kTracePacket << 3 | 2);
  at = proto::put_varint(at, packet.size());
  std::memcpy(at, packet.data(), packet.size());
  commit(at + packet.size());
}

void PacketBatches::make_room(std::size_t n) {
  if (size_ > 0) hand_off();
  if (n > capacity_) {  // one packet larger than a batch (a long list of interned names): a batch of its own
    data_.reset(new char[n]);
    capacity_ = n;
  }
}

void PacketBatches::wait_idle(std::unique_lock<std::mutex>& lock) {
  changed_.wait(lock, [this] { return !busy_; });
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

void PacketBatches::hand_off() {
  std::unique_lock lock(mutex_);
  wait_idle(lock);
  std::swap(data_, spare_);
  std::swap(capacity_, spare_capacity_);
  spare_size_ = std::exchange(size_, 0);
  busy_ = true;
  lock.unlock();
  changed_.notify_all();
}

void PacketBatches::finish() {
  if (size_ > 0) hand_off();
  std::unique_lock lock(mutex_);
  wait_idle(lock);
  out_.flush();
  if (!out_) throw std::runtime_error("writing the Perfetto trace failed");
}

void PacketBatches::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return busy_ || stop_; });
    if (!busy_) return;
    lock.unlock();
    std::exception_ptr failure;
    try {
      write_batch(spare_.get(), spare_size_);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (failure) failure_ = failure;
    busy_ = false;
    changed_.notify_all();
  }
}

void PacketBatches::write_batch(const char* data, std::size_t size) {
  if (compression_ == PerfettoCompression::kNone) {
    out_.write(data, static_cast<std::streamsize>(size));
    if (!out_) throw std::runtime_error("writing the Perfetto trace failed");
    return;
  }
  const std::size_t bound = compression_ == PerfettoCompression::kZstd
                                ? ZSTD_compressBound(size)
                                : static_cast<std::size_t>(compressBound(static_cast<uLong>(size)));
  if (bound > compressed_capacity_) {
    compressed_.reset(new char[bound]);
    compressed_capacity_ = bound;
  }
  std::size_t n = 0;
  std::uint32_t field = kZstdCompressedPackets;
  if (compression_ == PerfettoCompression::kZstd) {
    n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_), compressed_.get(), bound, data, size, kZstdLevel);
    if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(n));
  } else {
    field = kCompressedPackets;
    uLongf deflated = static_cast<uLongf>(bound);
    if (compress2(reinterpret_cast<Bytef*>(compressed_.get()), &deflated, reinterpret_cast<const Bytef*>(data),
                  static_cast<uLong>(size), Z_BEST_SPEED) != Z_OK) {
      throw std::runtime_error("deflating Perfetto packets failed");
    }
    n = deflated;
  }
  // Trace.packet { compressed field: bytes }
  char head[32];
  char* inner = proto::put_varint(head + 16, std::uint64_t{field} << 3 | 2);
  inner = proto::put_varint(inner, n);
  const std::size_t inner_head = static_cast<std::size_t>(inner - (head + 16));
  char* outer = proto::put_varint(head, kTracePacket << 3 | 2);
  outer = proto::put_varint(outer, inner_head + n);
  out_.write(head, outer - head);
  out_.write(head + 16, static_cast<std::streamsize>(inner_head));
  out_.write(compressed_.get(), static_cast<std::streamsize>(n));
  if (!out_) throw std::runtime_error("writing the Perfetto trace failed");
}

}  // namespace ldmsim
