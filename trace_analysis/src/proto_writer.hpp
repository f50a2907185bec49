// Hand-written protobuf encoding for the Perfetto export: varints and length-delimited fields appended to a
// message under construction, and the raw varint writer the per-request fast path uses on a plain buffer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ldmsim::proto {

/// Writes `v` as a varint at `at`; returns the byte after it (at most 10 bytes are written).
inline char* put_varint(char* at, std::uint64_t v) {
  while (v >= 0x80) {
    *at++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *at++ = static_cast<char>(v);
  return at;
}

/// Bytes `v` takes as a varint.
inline std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

/// A protobuf message being written: fields appended in any order.
class Message {
 public:
  void varint(std::uint64_t v) {
    char buffer[10];
    bytes_.append(buffer, static_cast<std::size_t>(put_varint(buffer, v) - buffer));
  }
  void uint_field(std::uint32_t field, std::uint64_t v) {
    varint(std::uint64_t{field} << 3);
    varint(v);
  }
  void bytes_field(std::uint32_t field, std::string_view v) {
    varint(std::uint64_t{field} << 3 | 2);
    varint(v.size());
    bytes_.append(v);
  }
  void message_field(std::uint32_t field, const Message& m) { bytes_field(field, m.bytes_); }
  const std::string& bytes() const { return bytes_; }
  bool empty() const { return bytes_.empty(); }
  void clear() { bytes_.clear(); }

 private:
  std::string bytes_;
};

}  // namespace ldmsim::proto
