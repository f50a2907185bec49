// Private: a protobuf file read forward through one buffer with pread, for the walks of a model's wire format that
// run before protobuf parses it (onnx_skeleton.cpp, onnx_parse_bound.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "ldmsim/sim/input_file.hpp"

namespace ldmsim::onnx_import {

/// Wire types of protobuf's encoding.
inline constexpr std::uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kStartGroup = 3, kEndGroup = 4,
                               kFixed32 = 5;

/// The file read forward through one buffer with pread (the descriptor's offset stays put).
class WireCursor {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{256} << 10;

  WireCursor(int fd, std::uint64_t size) : fd_(fd), size_(size), buffer_(new char[kChunkBytes]) {}

  /// File offset of the next unread byte.
  std::uint64_t offset() const { return file_at_ - (end_ - at_); }
  const char* data() const { return buffer_.get() + at_; }
  std::size_t available() const { return end_ - at_; }
  void skip(std::size_t n) { at_ += n; }

  /// At least `n` (at most kChunkBytes) bytes available; false at the end of the file or on a read error.
  bool ensure(std::size_t n) {
    if (available() >= n) return true;
    std::memmove(buffer_.get(), data(), available());
    end_ -= at_;
    at_ = 0;
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes - end_, size_ - file_at_));
    const std::size_t got = read_at(fd_, file_at_, buffer_.get() + end_, want);
    end_ += got;
    file_at_ += got;
    return end_ >= n;
  }

  /// Moves past `n` bytes without reading them; false when that is past the end of the file.
  bool skip_bytes(std::uint64_t n) {
    if (n <= available()) {
      skip(static_cast<std::size_t>(n));
      return true;
    }
    if (n > size_ - offset()) return false;
    file_at_ = offset() + n;
    at_ = end_ = 0;
    return true;
  }

  /// A varint of at most 10 bytes (protobuf's limit), its bytes appended to `raw` when given.
  bool varint(std::uint64_t& value, std::string* raw = nullptr) {
    value = 0;
    for (int i = 0; i < 10; ++i) {
      if (!ensure(1)) return false;
      const auto byte = static_cast<unsigned char>(*data());
      skip(1);
      if (raw != nullptr) raw->push_back(static_cast<char>(byte));
      value |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) return i < 9 || byte <= 1;  // a 10th byte may only hold the top bit
    }
    return false;
  }

  /// How many varints end (bytes without the continuation bit) among the next `n` bytes, which are consumed;
  /// false when the file ends first.
  bool count_varint_ends(std::uint64_t n, std::uint64_t& count) {
    count = 0;
    while (n > 0) {
      if (!ensure(1)) return false;
      const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, available()));
      for (std::size_t i = 0; i < k; ++i) count += (static_cast<unsigned char>(data()[i]) & 0x80) == 0 ? 1u : 0u;
      skip(k);
      n -= k;
    }
    return true;
  }

  /// Appends the next `n` bytes to `out`.
  bool copy(std::uint64_t n, std::string& out) {
    while (n > 0) {
      if (!ensure(1)) return false;
      const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, available()));
      out.append(data(), k);
      skip(k);
      n -= k;
    }
    return true;
  }

 private:
  int fd_;
  std::uint64_t size_;
  std::unique_ptr<char[]> buffer_;
  std::size_t at_ = 0, end_ = 0;  // unread bytes: buffer_[at_, end_)
  std::uint64_t file_at_ = 0;     // file offset of buffer_[end_]
};

}  // namespace ldmsim::onnx_import
