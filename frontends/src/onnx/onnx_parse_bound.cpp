// The parse bound (see onnx_parse_bound.hpp): a walk of the wire format by ModelProto's descriptor that follows
// protobuf 3.21's parser where it decides what to allocate — which wire types a field accepts (a repeated scalar
// packed or not), when a field goes to the unknown fields (an unknown number, a wire type its field does not take, a
// value outside its enum), where the parse fails (a key or length that does not read, a field past the end of its
// message, a group that does not close, messages nested deeper than 100) — and counts more than it allocates where
// following it exactly would cost more (a singular field given twice, a oneof switched, a packed enum).
#include "onnx_parse_bound.hpp"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include <unordered_map>
#include <vector>

#include "ldmsim/sim/bytes_text.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/utf8.hpp"
#include "wire_cursor.hpp"

namespace ldmsim::onnx_import {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

/// protobuf's default recursion limit: a message (or group) nested deeper fails to parse.
constexpr int kMaxDepth = 100;
/// Bytes of a message's name kept for the error.
constexpr std::uint64_t kNameBytes = 60;

/// A heap block of `n` bytes as glibc's malloc hands it out: an 8-byte header, 16-byte granules, 32 bytes at
/// least; from its mmap threshold (128 KiB) on, whole pages.
std::uint64_t heap(std::uint64_t n) {
  if (n >= (std::uint64_t{128} << 10)) return (n + 16 + 4095) & ~std::uint64_t{4095};
  return std::max<std::uint64_t>(32, (n + 8 + 15) & ~std::uint64_t{15});
}

/// The characters of a std::string of `length`, beyond the 15 libstdc++ keeps inside the object (growing out of
/// them, it takes at least twice their capacity: 30).
std::uint64_t string_chars(std::uint64_t length) {
  return length > 15 ? heap(std::max<std::uint64_t>(length, 30) + 1) : 0;
}

/// The array of a repeated field (RepeatedField, RepeatedPtrField, the unknown fields' vector) of `count` elements
/// of `size` bytes: a header and a capacity that at least doubles as it grows (at most 2 * count + 16).
std::uint64_t array_heap(std::uint64_t size, std::uint64_t count) {
  return heap(8 + size * (2 * count + 16));
}

enum class Kind : std::uint8_t { kScalar, kScalars, kString, kStrings, kMessage, kMessages };

struct FieldInfo {
  const FieldDescriptor* field = nullptr;  ///< null: no such field (an unknown field)
  Kind kind = Kind::kScalar;
  std::uint32_t wire = 0;               ///< of one value
  std::uint32_t value_bytes = 0;        ///< in memory, of a scalar
  const Descriptor* message = nullptr;  ///< of a message field
  std::uint64_t object_bytes = 0;       ///< the heap block of one such message
  bool name = false;                    ///< its message's "name" (kept for errors)
};

/// A message type's fields by number.
struct TypeInfo {
  std::vector<FieldInfo> by_number;
};

std::uint32_t wire_of(FieldDescriptor::Type type) {
  switch (type) {
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      return kFixed64;
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
      return kFixed32;
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_MESSAGE:
      return kLengthDelimited;
    default:
      return kVarint;
  }
}

std::uint32_t value_bytes(FieldDescriptor::CppType type) {
  switch (type) {
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT64:
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return 8;
    case FieldDescriptor::CPPTYPE_BOOL:
      return 1;
    default:
      return 4;
  }
}

/// Values, strings, messages or unknown fields one field of one message holds, and the heap blocks of its
/// strings and messages.
struct Tally {
  std::uint64_t count = 0;
  std::uint64_t heap = 0;
};

/// A message being walked.
struct Frame {
  const TypeInfo* type = nullptr;  ///< null: an unknown group, all of whose fields are unknown
  std::uint64_t group = 0;         ///< an unknown group's field number, which its end key repeats
  std::string_view field;          ///< its field in the enclosing message
  std::uint64_t index = 0;         ///< among the values of that field (a repeated one)
  bool repeated = false;
  std::string name;            ///< its "name", as far as read
  std::uint64_t serial = 0;    ///< which message this frame holds (frames are reused)
  std::vector<Tally> tallies;  ///< by field number; the last one: the unknown fields
  std::uint64_t bytes = 0;     ///< the heap its fields take, the messages inside them included
};

/// A message on the path to the largest field, for the error.
struct Step {
  std::string_view field;
  std::uint64_t index = 0;
  bool repeated = false;
  std::string name;
  std::uint64_t serial = 0;
};

class BoundWalker {
 public:
  BoundWalker(int fd, std::uint64_t size) : in_(fd, size), frames_(kMaxDepth + 2) {}

  ParseBound walk(std::uint64_t size) {
    const Descriptor* model = onnx::ModelProto::descriptor();
    enter(0, &info(model), "", 0, false);
    result_.malformed = !message(0, size);
    result_.bytes = object_bytes(model) + frames_[0].bytes + transient_;
    for (const Step& s : largest_path_) {
      result_.largest += s.name.empty()
                             ? (s.repeated ? fmt::format("{} #{} ", s.field, s.index) : fmt::format("{} ", s.field))
                             : fmt::format("{} '{}' ", s.field, valid_utf8(s.name));
    }
    result_.largest += largest_leaf_;
    return std::move(result_);
  }

 private:
  static std::uint64_t object_bytes(const Descriptor* d) {
    return heap(google::protobuf::MessageFactory::generated_factory()->GetPrototype(d)->SpaceUsedLong());
  }

  const TypeInfo& info(const Descriptor* d) {
    const auto [it, added] = types_.try_emplace(d);
    TypeInfo& t = it->second;
    if (!added) return t;
    int top = 0;
    for (int i = 0; i < d->field_count(); ++i) top = std::max(top, d->field(i)->number());
    t.by_number.resize(static_cast<std::size_t>(top) + 1);
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      if (f->type() == FieldDescriptor::TYPE_GROUP) continue;  // none in ONNX: read as unknown groups
      FieldInfo& fi = t.by_number[static_cast<std::size_t>(f->number())];
      fi.field = f;
      fi.wire = wire_of(f->type());
      const bool repeated = f->is_repeated();
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {  // a map's entries too (there are none in ONNX)
        fi.kind = repeated ? Kind::kMessages : Kind::kMessage;
        fi.message = f->message_type();
        fi.object_bytes = object_bytes(f->message_type());
      } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        fi.kind = repeated ? Kind::kStrings : Kind::kString;
        fi.name = !repeated && f->name() == "name";
      } else {
        fi.kind = repeated ? Kind::kScalars : Kind::kScalar;
        fi.value_bytes = value_bytes(f->cpp_type());
      }
    }
    return t;
  }

  void enter(int depth, const TypeInfo* type, std::string_view field, std::uint64_t index, bool repeated) {
    Frame& f = frames_[static_cast<std::size_t>(depth)];
    f.type = type;
    f.group = 0;
    f.field = field;
    f.index = index;
    f.repeated = repeated;
    f.name.clear();
    f.serial = ++serials_;
    f.tallies.assign(type != nullptr ? type->by_number.size() + 1 : 1, Tally{});
    f.bytes = 0;
  }

  /// The message at `depth` up to file offset `end` (a group: up to its end key), then what its fields take;
  /// false where protobuf's parse fails.
  bool message(int depth, std::uint64_t end) {
    const bool ok = fields(depth, end);
    finish(depth);
    return ok;
  }

  bool fields(int depth, std::uint64_t end) {
    Frame& fr = frames_[static_cast<std::size_t>(depth)];
    while (in_.offset() < end) {
      std::uint64_t key = 0;
      if (!read_varint(key, 5) || in_.offset() > end) return false;
      key &= 0xFFFFFFFFu;  // protobuf reads a key as 32 bits
      const std::uint64_t number = key >> 3;
      const auto wire = static_cast<std::uint32_t>(key & 7);
      if (number == 0 || wire > kFixed32) return false;
      if (wire == kEndGroup) return fr.type == nullptr && number == fr.group;  // anywhere else, the parse fails
      const FieldInfo* f =
          fr.type != nullptr && number < fr.type->by_number.size() ? &fr.type->by_number[number] : nullptr;
      if (f != nullptr && f->field == nullptr) f = nullptr;
      // A wire type its field does not take makes it an unknown field; a repeated scalar is read packed or not.
      if (f != nullptr && wire != f->wire && !(f->kind == Kind::kScalars && wire == kLengthDelimited)) f = nullptr;
      const bool ok = f == nullptr ? unknown(depth, number, wire, end) : known(depth, *f, number, wire, end);
      if (!ok) return false;
    }
    return fr.type != nullptr;  // a group ends at its end key only
  }

  Tally& unknown_tally(int depth) { return frames_[static_cast<std::size_t>(depth)].tallies.back(); }

  bool known(int depth, const FieldInfo& f, std::uint64_t number, std::uint32_t wire, std::uint64_t end) {
    Frame& fr = frames_[static_cast<std::size_t>(depth)];
    Tally& t = fr.tallies[number];
    switch (f.kind) {
      case Kind::kScalar:
      case Kind::kScalars:
        return scalar(depth, f, t, wire, end);
      case Kind::kString:
      case Kind::kStrings: {
        std::uint64_t length = 0;
        if (!read_length(length, end)) return false;
        if (f.kind == Kind::kStrings || t.count == 0) t.heap += heap(sizeof(std::string));
        t.heap += string_chars(length);
        ++t.count;
        if (f.name) {  // the last one given is the one protobuf keeps
          fr.name.clear();
          const std::uint64_t kept = std::min(length, kNameBytes);
          if (!in_.copy(kept, fr.name)) return false;
          length -= kept;
        }
        return in_.skip_bytes(length);
      }
      case Kind::kMessage:
      case Kind::kMessages: {
        std::uint64_t length = 0;
        if (!read_length(length, end) || depth + 1 > kMaxDepth) return false;
        if (f.kind == Kind::kMessages || t.count == 0) t.heap += f.object_bytes;  // a singular one merges
        const std::uint64_t index = t.count++;
        enter(depth + 1, &info(f.message), f.field->name(), index, f.kind == Kind::kMessages);
        const bool ok = message(depth + 1, in_.offset() + length);
        fr.bytes += frames_[static_cast<std::size_t>(depth) + 1].bytes;
        return ok;
      }
    }
    return false;
  }

  bool scalar(int depth, const FieldInfo& f, Tally& t, std::uint32_t wire, std::uint64_t end) {
    const bool is_enum = f.field->enum_type() != nullptr;
    if (wire == kLengthDelimited) {  // packed
      std::uint64_t length = 0, values = 0;
      if (!read_length(length, end)) return false;
      if (f.wire == kVarint) {
        if (!in_.count_varint_ends(length, values)) return false;
      } else {
        const std::uint64_t size = f.wire == kFixed64 ? 8 : 4;
        values = (length + size - 1) / size;
        if (!in_.skip_bytes(length)) return false;
      }
      t.count += values;
      if (is_enum) unknown_tally(depth).count += values;  // those outside the enum become unknown fields
      return true;
    }
    std::uint64_t value = 0;
    if (!read_value(wire, value, end)) return false;
    // protobuf keeps a value outside its enum as an unknown varint field.
    if (is_enum && f.field->enum_type()->FindValueByNumber(static_cast<int>(value)) == nullptr) {
      ++unknown_tally(depth).count;
    } else {
      ++t.count;
    }
    return true;
  }

  bool unknown(int depth, std::uint64_t number, std::uint32_t wire, std::uint64_t end) {
    Tally& t = unknown_tally(depth);
    ++t.count;
    if (wire == kLengthDelimited) {
      std::uint64_t length = 0;
      if (!read_length(length, end)) return false;
      t.heap += heap(sizeof(std::string)) + string_chars(length);
      return in_.skip_bytes(length);
    }
    if (wire == kStartGroup) {
      if (depth + 1 > kMaxDepth) return false;
      t.heap += heap(sizeof(google::protobuf::UnknownFieldSet));
      enter(depth + 1, nullptr, "group", t.count - 1, true);
      frames_[static_cast<std::size_t>(depth) + 1].group = number;
      const bool ok = message(depth + 1, end);
      frames_[static_cast<std::size_t>(depth)].bytes += frames_[static_cast<std::size_t>(depth) + 1].bytes;
      return ok;
    }
    std::uint64_t value = 0;
    return read_value(wire, value, end);
  }

  /// What the fields of the message at `depth` take themselves, counted into its bytes.
  void finish(int depth) {
    Frame& fr = frames_[static_cast<std::size_t>(depth)];
    const std::size_t unknown_index = fr.tallies.size() - 1;
    for (std::size_t n = 0; n < fr.tallies.size(); ++n) {
      const Tally& t = fr.tallies[n];
      if (t.count == 0) continue;
      std::uint64_t bytes = t.heap;
      std::uint64_t element = 0;  // of an array that grows, whose old copy is freed only after the new one is made
      std::string leaf;
      if (n == unknown_index) {
        element = sizeof(google::protobuf::UnknownField);
        bytes += heap(sizeof(void*) + sizeof(google::protobuf::UnknownFieldSet)) + array_heap(element, t.count);
        leaf = fmt::format("unknown fields: {}", t.count);
      } else {
        const FieldInfo& f = fr.type->by_number[n];
        const std::string_view name = f.field->name();
        switch (f.kind) {
          case Kind::kScalar:
            continue;  // held in the message itself
          case Kind::kScalars:
            element = f.value_bytes;
            leaf = fmt::format("{}: {} values", name, t.count);
            break;
          case Kind::kStrings:
            element = sizeof(void*);
            leaf = fmt::format("{}: {} strings", name, t.count);
            break;
          case Kind::kMessages:
            element = sizeof(void*);
            leaf = fmt::format("{}: {} messages", name, t.count);
            break;
          case Kind::kString:
          case Kind::kMessage:
            leaf = std::string(name);
            break;
        }
        if (element != 0) bytes += array_heap(element, t.count);
      }
      transient_ = std::max(transient_, element * (t.count + 16));
      fr.bytes += bytes;
      if (bytes > result_.largest_bytes) {
        result_.largest_bytes = bytes;
        largest_path_.clear();
        for (int d = 1; d <= depth; ++d) {
          const Frame& p = frames_[static_cast<std::size_t>(d)];
          largest_path_.push_back(Step{p.field, p.index, p.repeated, p.name, p.serial});
        }
        largest_leaf_ = std::move(leaf);
      }
    }
    // A name read after the largest field: the path shows it.
    if (depth >= 1 && static_cast<std::size_t>(depth) <= largest_path_.size()) {
      Step& s = largest_path_[static_cast<std::size_t>(depth) - 1];
      if (s.serial == fr.serial) s.name = fr.name;
    }
  }

  /// A varint of at most `most` bytes (10: protobuf's limit for values, 5 for keys and lengths).
  bool read_varint(std::uint64_t& value, int most) {
    value = 0;
    for (int i = 0; i < most; ++i) {
      if (!in_.ensure(1)) return false;
      const auto byte = static_cast<unsigned char>(*in_.data());
      in_.skip(1);
      if (i < 10) value |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  /// A length-delimited field's length: at most 5 bytes and below 2^31 (as protobuf reads it), within `end`.
  bool read_length(std::uint64_t& length, std::uint64_t end) {
    return read_varint(length, 5) && length < (std::uint64_t{1} << 31) && in_.offset() <= end &&
           length <= end - in_.offset();
  }

  bool read_value(std::uint32_t wire, std::uint64_t& value, std::uint64_t end) {
    if (wire == kVarint) return read_varint(value, 10) && in_.offset() <= end;
    const std::uint64_t size = wire == kFixed64 ? 8 : 4;
    return in_.offset() <= end && size <= end - in_.offset() && in_.skip_bytes(size);
  }

  WireCursor in_;
  std::vector<Frame> frames_;  // by depth, reused
  std::unordered_map<const Descriptor*, TypeInfo> types_;
  std::uint64_t serials_ = 0;
  std::uint64_t transient_ = 0;  // the largest old array copy alive while its field grows
  std::vector<Step> largest_path_;
  std::string largest_leaf_;
  ParseBound result_;
};

}  // namespace

ParseBound parsed_model_bound(int fd, std::uint64_t size) {
  return BoundWalker(fd, size).walk(size);
}

void check_parse_bound(const ParseBound& bound, std::uint64_t file_bytes, const HostMemoryLimit& host,
                       const std::string& file) {
  const std::uint64_t allowance = kParseGrowth * file_bytes + kParseSlackBytes;
  const bool host_limits = host.bytes != 0 && host.bytes < allowance;
  if (bound.bytes <= (host_limits ? host.bytes : allowance)) return;
  const std::string limit =
      host_limits ? fmt::format("the {} {}", bytes_text(static_cast<double>(host.bytes)), host.source)
                  : fmt::format("{}, the most an import may take for a file of {} ({} times its size plus {})",
                                bytes_text(static_cast<double>(allowance)), bytes_text(static_cast<double>(file_bytes)),
                                kParseGrowth, bytes_text(static_cast<double>(kParseSlackBytes)));
  throw ConfigError(fmt::format(
      "{}: parsed, this model would take up to {} of host memory, more than {}; the largest part is {} ({}), "
      "refused before it is read",
      file, bytes_text(static_cast<double>(bound.bytes)), limit, bound.largest,
      bytes_text(static_cast<double>(bound.largest_bytes))));
}

}  // namespace ldmsim::onnx_import
