// Rounding parts of fp32 initializers on helper threads (see rounding_helpers.hpp).
#include "rounding_helpers.hpp"

#include <algorithm>

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

void RoundingHelpers::add(std::uint64_t offset, std::uint64_t count, f16* out) {
  {
    const std::lock_guard lock(mutex_);
    parts_.push_back({offset, count, out});
  }
  if (threads_.empty()) {
    for (unsigned i = 0; i < helpers_; ++i) threads_.emplace_back([this] { work(); });
  }
  changed_.notify_one();
}

bool RoundingHelpers::round(const Part& part, std::vector<char>& buffer) const {
  buffer.resize(WireCursor::kChunkBytes);
  constexpr std::size_t kPerRead = WireCursor::kChunkBytes / sizeof(float);
  for (std::uint64_t done = 0; done < part.count;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kPerRead, part.count - done));
    if (read_at(fd_, part.offset + done * sizeof(float), buffer.data(), n * sizeof(float)) != n * sizeof(float)) {
      return false;
    }
    float_bytes_to_halves(buffer.data(), n, part.out + done);
    done += n;
  }
  return true;
}

void RoundingHelpers::work() {
  std::vector<char> buffer;
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !parts_.empty(); });
    if (stop_) return;
    const Part part = parts_.front();
    parts_.pop_front();
    ++running_;
    lock.unlock();
    const bool read = round(part, buffer);
    lock.lock();
    --running_;
    failed_ = failed_ || !read;
    changed_.notify_all();
  }
}

bool RoundingHelpers::finish() {
  std::vector<char> buffer;
  std::unique_lock lock(mutex_);
  while (!parts_.empty()) {  // the caller takes parts too rather than wait idle
    const Part part = parts_.front();
    parts_.pop_front();
    lock.unlock();
    const bool read = round(part, buffer);
    lock.lock();
    failed_ = failed_ || !read;
  }
  changed_.wait(lock, [&] { return running_ == 0; });
  return !failed_;
}

}  // namespace ldmsim::onnx_import
