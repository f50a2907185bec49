// The model skeleton (see onnx_skeleton.hpp): a walk of the protobuf wire format over ModelProto -> graph ->
// initializer, copying every other field as it is. The walk is stricter than protobuf (it gives up where protobuf
// might read the bytes differently), never laxer: protobuf then reads the whole file itself.
#include "onnx_skeleton.hpp"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <span>

#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/fp16_saturated.hpp"
#include "ldmsim/sim/input_file.hpp"
#include "onnx_nodes.hpp"
#include "rounding_helpers.hpp"
#include "wire_cursor.hpp"

namespace ldmsim::onnx_import {

namespace {

constexpr std::size_t kChunkBytes = WireCursor::kChunkBytes;
constexpr std::uint64_t kFloatType = onnx::TensorProto::FLOAT;
/// An initializer of at least this many fp32 values (1 MiB) is rounded in parts on the import's threads: a part
/// handed to another thread costs a wake-up (tens of microseconds), the first touches of its fp16 values hundreds.
constexpr std::uint64_t kSharedRoundingFloats = std::uint64_t{1} << 18;

/// The next `count` fp32 values of `in` rounded to fp16 into `out`, values beyond fp16's range counted into
/// `saturated`.
bool round_floats(WireCursor& in, std::uint64_t count, f16* out, std::uint64_t& saturated) {
  while (count > 0) {
    if (!in.ensure(sizeof(float))) return false;
    const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(count, in.available() / sizeof(float)));
    saturated += float_bytes_to_halves_saturated(in.data(), k, out);
    in.skip(k * sizeof(float));
    out += k;
    count -= k;
  }
  return true;
}

void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

/// A field's key (and, length-delimited, its length) as read; `tag` keeps the key's bytes.
struct Field {
  std::string tag;
  std::uint64_t number = 0;
  std::uint32_t wire = 0;
  std::uint64_t length = 0;  // of a length-delimited field's contents
};

class SkeletonReader {
 public:
  SkeletonReader(int fd, std::uint64_t size, std::uint64_t min_bytes, const std::string& file, unsigned threads)
      : in_(fd, size),
        fd_(fd),
        size_(size),
        min_(min_bytes),
        file_(file),
        rounding_(fd, threads > 1 ? threads - 1 : 0) {}

  std::optional<ModelSkeleton> read() {
    if (!model() || !rounding_.finish()) return std::nullopt;
    return std::move(out_);
  }

 private:
  /// The next field's key within a message ending at `end`; false unless it is one the walk can copy.
  bool header(std::uint64_t end, Field& f) {
    f.tag.clear();
    std::uint64_t key = 0;
    if (!in_.varint(key, &f.tag) || f.tag.size() > 5 || key > 0xFFFFFFFFu || in_.offset() > end) return false;
    f.number = key >> 3;
    f.wire = static_cast<std::uint32_t>(key & 7);
    if (f.number == 0) return false;
    if (f.wire == kLengthDelimited) {
      // A length is written back in its shortest form, so it must be one protobuf reads at all: at most 5 bytes.
      std::string length_bytes;
      return in_.varint(f.length, &length_bytes) && length_bytes.size() <= 5 && in_.offset() <= end &&
             f.length <= end - in_.offset();
    }
    return f.wire == kVarint || f.wire == kFixed64 || f.wire == kFixed32;  // not groups (deprecated) or invalid
  }

  /// Counts `n` more bytes into the skeleton; false past kMaxSkeletonBytes (checked before anything is copied).
  bool spend(std::uint64_t n) {
    if (n > kMaxSkeletonBytes - copied_) return false;
    copied_ += n;
    return true;
  }

  /// Copies the rest of field `f` (its key already read) to `out` as it is.
  bool copy_field(const Field& f, std::uint64_t end, std::string& out) {
    if (!spend(f.tag.size() + 10)) return false;  // the key, a varint's or length's bytes (at most 10)
    out += f.tag;
    switch (f.wire) {
      case kVarint: {
        std::uint64_t value = 0;
        return in_.varint(value, &out) && in_.offset() <= end;
      }
      case kFixed64:
        return in_.offset() + 8 <= end && in_.copy(8, out);
      case kFixed32:
        return in_.offset() + 4 <= end && in_.copy(4, out);
      default:
        append_varint(out, f.length);
        return spend(f.length) && in_.copy(f.length, out);
    }
  }

  /// Appends a length-delimited field of key `tag` holding `contents` (counted already) to `out`.
  bool put_message(std::string& out, const std::string& tag, const std::string& contents) {
    if (!spend(tag.size() + 10)) return false;
    out += tag;
    append_varint(out, contents.size());
    out += contents;
    return true;
  }

  bool model() {
    std::string& out = out_.bytes;
    bool graph_seen = false;
    while (in_.offset() < size_) {
      Field f;
      if (!header(size_, f)) return false;
      if (f.number == onnx::ModelProto::kGraphFieldNumber && f.wire == kLengthDelimited) {
        if (graph_seen) return false;  // protobuf would merge the two: not followed here
        graph_seen = true;
        std::string graph;
        if (!graph_message(in_.offset() + f.length, graph) || !put_message(out, f.tag, graph)) return false;
      } else if (!copy_field(f, size_, out)) {
        return false;
      }
    }
    return true;
  }

  bool graph_message(std::uint64_t end, std::string& out) {
    while (in_.offset() < end) {
      Field f;
      if (!header(end, f)) return false;
      if (f.number == onnx::GraphProto::kInitializerFieldNumber && f.wire == kLengthDelimited) {
        std::string tensor;
        if (!tensor_message(in_.offset() + f.length, tensor) || !put_message(out, f.tag, tensor)) return false;
        ++initializers_;
      } else if (!copy_field(f, end, out)) {
        return false;
      }
    }
    return in_.offset() == end;
  }

  bool tensor_message(std::uint64_t end, std::string& out) {
    std::uint64_t data_type = 0;
    bool raw_seen = false;
    while (in_.offset() < end) {
      Field f;
      if (!header(end, f)) return false;
      if (f.number == onnx::TensorProto::kDataTypeFieldNumber && f.wire == kVarint) {
        if (!spend(f.tag.size() + 10)) return false;
        out += f.tag;
        if (!in_.varint(data_type, &out) || in_.offset() > end) return false;
        data_type &= 0xFFFFFFFFu;  // protobuf reads an int32 field's varint truncated to 32 bits
        continue;
      }
      if (f.wire == kLengthDelimited) refuse_amplified(f, data_type);
      if (f.number == onnx::TensorProto::kRawDataFieldNumber && f.wire == kLengthDelimited) {
        if (raw_seen) return false;  // the last would win: not followed here
        raw_seen = true;
        if (data_type == kFloatType && f.length % sizeof(float) == 0 && f.length >= min_) {
          if (!stream_weight(f.length)) return false;
          continue;
        }
      }
      if (!copy_field(f, end, out)) return false;
    }
    return in_.offset() == end;
  }

  /// An initializer no import can use is refused before protobuf parses it (what the parse takes is bounded before
  /// this walk, onnx_parse_bound.hpp): dims beyond the largest rank, or integer values beyond what the import can
  /// ever fold (integer tensors are only read as folded constants). ConfigError naming the initializer.
  void refuse_amplified(const Field& f, std::uint64_t data_type) {
    using T = onnx::TensorProto;
    const bool dims = f.number == T::kDimsFieldNumber;
    const bool integers = f.number == T::kInt64DataFieldNumber || f.number == T::kUint64DataFieldNumber ||
                          (f.number == T::kInt32DataFieldNumber && data_type == T::INT32);
    if (!dims && !integers) return;
    const std::uint64_t most = dims ? kMaxConstantRank : kMaxFoldedTotalElements;
    if (f.length <= most) return;  // a value takes at least one byte
    const std::uint64_t values = count_varints(in_.offset(), f.length);
    if (values <= most) return;
    throw ConfigError(
        dims ? fmt::format("{}: initializer {} has rank {} (at most {})", file_, initializers_, values, most)
             : fmt::format("{}: initializer {} packs {} integer values in {} bytes; integer tensors are read only as "
                           "constants folded at import, at most {} values in all (parsed, these would take {} bytes "
                           "of host memory)",
                           file_, initializers_, values, f.length, most, values * 8));
  }

  /// Varints (bytes without the continuation bit) among the `n` bytes of the file at `offset`; the cursor stays.
  std::uint64_t count_varints(std::uint64_t offset, std::uint64_t n) const {
    std::unique_ptr<char[]> block(new char[kChunkBytes]);
    std::uint64_t count = 0;
    while (n > 0) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(n, kChunkBytes));
      const std::size_t got = read_at(fd_, offset, block.get(), want);
      if (got == 0) break;
      for (std::size_t i = 0; i < got; ++i) count += (static_cast<unsigned char>(block[i]) & 0x80) == 0 ? 1u : 0u;
      offset += got;
      n -= got;
    }
    return count;
  }

  bool stream_weight(std::uint64_t bytes) {
    StreamedWeight w;
    w.initializer = initializers_;
    w.offset = in_.offset();
    w.bytes = bytes;
    w.fd = fd_;
    w.file = &file_;
    const std::uint64_t count = bytes / sizeof(float);
    // Raw bytes, not f16s, whose constructor would zero them: every value is written below as bytes (the file is
    // at most 1 GiB, so is this). f16 is trivially copyable, so the bytes hold its objects once written.
    std::shared_ptr<std::byte[]> storage(new std::byte[static_cast<std::size_t>(count) * sizeof(f16)]);
    f16* halves = std::launder(reinterpret_cast<f16*>(storage.get()));
    if (!round(count, halves, storage, w.saturated)) return false;
    w.halves = SharedHalves(std::move(storage), halves, static_cast<std::size_t>(count));
    out_.weights.push_back(std::move(w));
    return true;
  }

  /// The next `count` fp32 values rounded into `out`: a large initializer's first part here and the others on the
  /// rounding helpers, while the walk reads on past them (read() waits for them).
  bool round(std::uint64_t count, f16* out, const std::shared_ptr<const void>& owner,
             const std::shared_ptr<std::atomic<std::uint64_t>>& saturated) {
    std::uint64_t mine = 0;
    if (rounding_.helpers() == 0 || count < kSharedRoundingFloats) {
      const bool read = round_floats(in_, count, out, mine);
      *saturated += mine;
      return read;
    }
    const std::uint64_t parts = rounding_.helpers() + 1, own = count / parts;
    if (!round_floats(in_, own, out, mine)) return false;
    *saturated += mine;
    const std::uint64_t rest_at = in_.offset();
    if (!in_.skip_bytes((count - own) * sizeof(float))) return false;
    for (std::uint64_t at = own, p = 1; p < parts; ++p) {
      const std::uint64_t n = p + 1 == parts ? count - at : own;
      rounding_.add(rest_at + (at - own) * sizeof(float), n, out + at, owner, saturated);
      at += n;
    }
    return true;
  }

  WireCursor in_;
  int fd_;
  std::uint64_t size_, min_;
  const std::string& file_;
  std::size_t initializers_ = 0;
  std::uint64_t copied_ = 0;  // bytes counted into the skeleton (spend)
  ModelSkeleton out_;
  RoundingHelpers rounding_;  // after out_: its threads stop before the buffers they write into are freed
};

}  // namespace

void read_streamed_floats(const StreamedWeight& w, const std::function<void(std::size_t, float)>& f) {
  constexpr std::size_t kBlock = 4096;
  float block[kBlock];
  const std::uint64_t count = w.bytes / sizeof(float);
  for (std::uint64_t i = 0; i < count;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, count - i));
    const std::uint64_t at = w.offset + i * sizeof(float);
    if (read_at(w.fd, at, block, n * sizeof(float)) != n * sizeof(float)) {
      throw ConfigError(fmt::format("{}: the model file changed while it was read (its bytes from offset {} are gone)",
                                    w.file != nullptr ? *w.file : "ONNX model", at));
    }
    for (std::size_t k = 0; k < n; ++k) f(static_cast<std::size_t>(i + k), block[k]);
    i += n;
  }
}

std::optional<ModelSkeleton> read_model_skeleton(int fd, std::uint64_t size, std::uint64_t min_bytes,
                                                 const std::string& file, unsigned threads) {
  return SkeletonReader(fd, size, min_bytes, file, threads).read();
}

}  // namespace ldmsim::onnx_import
