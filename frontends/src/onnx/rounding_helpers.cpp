// Rounding parts of fp32 initializers on helper threads (see rounding_helpers.hpp).
#include "rounding_helpers.hpp"

#include <algorithm>
#include <system_error>

#include "ldmsim/sim/fp16_saturated.hpp"
#include "ldmsim/sim/input_file.hpp"
#include "wire_cursor.hpp"

namespace ldmsim::onnx_import {

RoundingHelpers::~RoundingHelpers() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
    parts_.clear();
  }
  changed_.notify_all();
  threads_.clear();  // joins: a part being rounded ends first
}

void RoundingHelpers::start_threads() {
  started_ = true;
  try {
    for (unsigned i = 0; i < helpers_; ++i) threads_.emplace_back([this] { work(); });
  } catch (const std::system_error&) {  // no more threads (a process limit): the caller rounds the rest
  }
  helpers_ = static_cast<unsigned>(threads_.size());
}

void RoundingHelpers::add(std::uint64_t offset, std::uint64_t count, f16* out, std::shared_ptr<const void> owner,
                          std::shared_ptr<std::atomic<std::uint64_t>> saturated) {
  {
    const std::lock_guard lock(mutex_);
    parts_.push_back({offset, count, out, std::move(owner), std::move(saturated)});
  }
  if (!started_) start_threads();
  changed_.notify_one();
}

bool RoundingHelpers::round(const Part& part, char* buffer, std::uint64_t& saturated) const {
  constexpr std::size_t kPerRead = WireCursor::kChunkBytes / sizeof(float);
  for (std::uint64_t done = 0; done < part.count;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kPerRead, part.count - done));
    if (read_at(fd_, part.offset + done * sizeof(float), buffer, n * sizeof(float)) != n * sizeof(float)) return false;
    saturated += float_bytes_to_halves_saturated(buffer, n, part.out + done);
    done += n;
  }
  return true;
}

void RoundingHelpers::work() {
  const std::unique_ptr<char[]> buffer(new (std::nothrow) char[WireCursor::kChunkBytes]);
  std::unique_lock lock(mutex_);
  if (!buffer) return;  // the caller rounds the parts
  ++live_;
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !parts_.empty(); });
    if (stop_) return;
    Part part = std::move(parts_.front());
    parts_.pop_front();
    ++running_;
    lock.unlock();
    std::uint64_t saturated = 0;
    const bool read = round(part, buffer.get(), saturated);
    *part.saturated += saturated;
    part.owner.reset();
    lock.lock();
    --running_;
    failed_ = failed_ || !read;
    changed_.notify_all();
  }
}

void RoundingHelpers::drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return (parts_.empty() || live_ == 0) && running_ == 0; });
}

bool RoundingHelpers::finish() {
  std::unique_ptr<char[]> buffer;
  std::unique_lock lock(mutex_);
  while (!parts_.empty()) {  // the caller takes parts too rather than wait idle
    if (!buffer) buffer.reset(new char[WireCursor::kChunkBytes]);
    Part part = std::move(parts_.front());
    parts_.pop_front();
    lock.unlock();
    std::uint64_t saturated = 0;
    const bool read = round(part, buffer.get(), saturated);
    *part.saturated += saturated;
    lock.lock();
    failed_ = failed_ || !read;
  }
  changed_.wait(lock, [&] { return running_ == 0; });
  return !failed_;
}

}  // namespace ldmsim::onnx_import
