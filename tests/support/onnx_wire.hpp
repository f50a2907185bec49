// ONNX models written byte by byte in protobuf's wire format, for tests that need models no exporter writes (and
// that must not depend on python3-onnx): the messages and fields the importer reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ldmsim::test {

/// A protobuf message in wire format.
struct Message {
  std::string bytes;

  Message& varint_field(std::uint64_t field, std::uint64_t value) {
    key(field, 0);
    varint(value);
    return *this;
  }
  Message& bytes_field(std::uint64_t field, const std::string& value) {
    key(field, 2);
    varint(value.size());
    bytes += value;
    return *this;
  }
  Message& message(std::uint64_t field, const Message& m) { return bytes_field(field, m.bytes); }
  Message& raw(const std::string& b) {
    bytes += b;
    return *this;
  }

  void key(std::uint64_t field, std::uint64_t wire) { varint(field << 3 | wire); }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      bytes.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    bytes.push_back(static_cast<char>(v));
  }
};

/// A ValueInfoProto of a tensor of element type `elem` (1: FLOAT): name 1, type 2 -> tensor_type 1 ->
/// {elem_type 1, shape 2 -> dim 1 -> dim_value 1}. Dims are int64 on the wire (a negative one as its two's complement).
inline Message value_info(const std::string& name, const std::vector<std::int64_t>& dims, std::uint64_t elem = 1) {
  Message shape;
  for (const std::int64_t d : dims) shape.message(1, Message().varint_field(1, static_cast<std::uint64_t>(d)));
  const Message tensor_type = Message().varint_field(1, elem).message(2, shape);
  return Message().bytes_field(1, name).message(2, Message().message(1, tensor_type));
}

/// NodeProto: input 1, output 2, op_type 4, attribute 5 (given whole).
inline Message node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
                    const std::vector<Message>& attributes = {}) {
  Message n;
  for (const std::string& in : inputs) n.bytes_field(1, in);
  n.bytes_field(2, output);
  n.bytes_field(4, op);
  for (const Message& a : attributes) n.message(5, a);
  return n;
}

/// AttributeProto of type INTS: name 1, ints 8, type 20 (7).
inline Message ints_attribute(const std::string& name, const std::vector<std::int64_t>& values) {
  Message a;
  a.bytes_field(1, name);
  for (const std::int64_t v : values) a.varint_field(8, static_cast<std::uint64_t>(v));
  a.varint_field(20, 7);
  return a;
}

/// A FLOAT TensorProto of zeros (dims 1, data_type 2, name 8, raw_data 9).
inline Message zero_tensor(const std::string& name, const std::vector<std::uint64_t>& dims) {
  Message t;
  std::uint64_t n = 1;
  for (const std::uint64_t d : dims) t.varint_field(1, d), n *= d;
  t.varint_field(2, 1);
  t.bytes_field(8, name);
  t.bytes_field(9, std::string(n * 4, '\0'));
  return t;
}

/// ModelProto: ir_version 1 (8), graph 7, opset_import 8 (version 13).
inline Message model(const Message& graph) {
  return Message().varint_field(1, 8).message(8, Message().varint_field(2, 13)).message(7, graph);
}

}  // namespace ldmsim::test
