// The bound of what protobuf's parse of an ONNX model takes (frontends/src/onnx/onnx_parse_bound.hpp), counted
// from the wire format before the parse: for every shape of field that grows once parsed it covers what protobuf
// holds (SpaceUsedLong), names the field, stays close for ordinary models, fails exactly where protobuf fails, and
// refuses a model over its limits before protobuf reads it. Models are written byte by byte in the wire format.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "fuzz/user_file_input.hpp"
#include "ldmsim/sim/fault.hpp"
#include "support/onnx_wire.hpp"
#include "support/temp_dir.hpp"

using namespace ldmsim;

namespace {

using Catch::Matchers::Contains;
using ldmsim::test::Message;

/// A model whose graph, named 'g', holds `content` (GraphProto fields) beside one Relu node.
std::string model_with(const Message& content) {
  Message g;
  g.message(1, ldmsim::test::node("Relu", {"x"}, "y"));
  g.bytes_field(2, "g");
  g.raw(content.bytes);
  g.message(11, ldmsim::test::value_info("x", {1, 4}));
  g.message(12, ldmsim::test::value_info("y", {1, 4}));
  return ldmsim::test::model(g).bytes;
}

/// A node named `name` (NodeProto name 3) of `op` with `attribute` (5).
Message node_with(const std::string& name, const std::string& op, const Message& attribute) {
  return Message().bytes_field(3, name).bytes_field(4, op).message(5, attribute);
}

/// `n` protobuf keys of `field` with wire type `wire`, each followed by `value`.
std::string repeated(std::uint64_t field, std::uint64_t wire, const std::string& value, std::size_t n) {
  Message key;
  key.key(field, wire);
  std::string out;
  out.reserve(n * (key.bytes.size() + value.size()));
  for (std::size_t i = 0; i < n; ++i) out += key.bytes + value;
  return out;
}

struct GrowingShape {
  const char* what;
  std::string model;
  std::string largest;  ///< the field the bound names
  bool grows = true;    ///< parsed, it takes more than twice its file's size
};

std::vector<GrowingShape> amplifying_shapes() {
  constexpr std::size_t n = 100000;
  const std::string zeros(n, '\0');
  std::vector<GrowingShape> shapes;
  shapes.push_back(
      {"packed int64 zeros in an initializer",
       model_with(Message().message(
           5, Message().varint_field(1, n).varint_field(2, 7).bytes_field(8, "big").bytes_field(7, zeros))),
       "graph 'g' initializer 'big' int64_data: 100000 values"});
  // The node's name comes after the attribute: the path shows it all the same.
  shapes.push_back(
      {"a node attribute's ints, not packed",
       model_with(Message().message(
           1, Message()
                  .bytes_field(4, "Transpose")
                  .message(5, Message().bytes_field(1, "perm").raw(repeated(8, 0, "\x01", n)).varint_field(20, 7))
                  .bytes_field(3, "X"))),
       "graph 'g' node 'X' attribute 'perm' ints: 100000 values"});
  shapes.push_back(
      {"a node attribute's floats, packed",
       model_with(Message().message(
           1, node_with("R", "Resize", Message().bytes_field(1, "scales").bytes_field(7, std::string(4 * n, '\0'))))),
       "graph 'g' node 'R' attribute 'scales' floats: 100000 values", false});
  shapes.push_back(
      {"a Constant node's tensor (attribute t) of packed int64",
       model_with(Message().message(
           1, node_with("c", "Constant",
                        Message()
                            .bytes_field(1, "value")
                            .message(5, Message().varint_field(1, n).varint_field(2, 7).bytes_field(7, zeros))))),
       "graph 'g' node 'c' attribute 'value' t int64_data: 100000 values"});
  shapes.push_back({"a Constant node's tensors, empty",
                    model_with(Message().message(
                        1, node_with("c", "Constant",
                                     Message().bytes_field(1, "many").raw(repeated(10, 2, std::string(1, '\0'), n))))),
                    "graph 'g' node 'c' attribute 'many' tensors: 100000 messages"});
  shapes.push_back({"a node attribute's strings, empty",
                    model_with(Message().message(
                        1, node_with("s", "Custom",
                                     Message().bytes_field(1, "names").raw(repeated(9, 2, std::string(1, '\0'), n))))),
                    "graph 'g' node 's' attribute 'names' strings: 100000 strings"});
  shapes.push_back(
      {"an input's shape of empty dims",
       model_with(Message().message(
           11, Message().bytes_field(1, "z").message(
                   2, Message().message(1, Message().varint_field(1, 1).message(
                                               2, Message().raw(repeated(1, 2, std::string(1, '\0'), n))))))),
       "graph 'g' input 'z' type tensor_type shape dim: 100000 messages"});
  shapes.push_back({"a sparse initializer's packed dims",
                    model_with(Message().message(15, Message().bytes_field(3, zeros))),
                    "graph 'g' sparse_initializer #0 dims: 100000 values"});
  shapes.push_back({"an initializer's string_data, empty",
                    model_with(Message().message(5, Message().varint_field(2, 8).bytes_field(8, "str").raw(
                                                        repeated(6, 2, std::string(1, '\0'), n)))),
                    "graph 'g' initializer 'str' string_data: 100000 strings"});
  shapes.push_back({"empty nodes", model_with(Message().raw(repeated(1, 2, std::string(1, '\0'), n))),
                    "graph 'g' node: 100001 messages"});  // and the Relu
  shapes.push_back({"unknown varint fields", model_with(Message().raw(repeated(99, 0, std::string(1, '\0'), n))),
                    "graph 'g' unknown fields: 100000"});
  shapes.push_back({"a known field in a wire type it does not take (node inputs as varints)",
                    model_with(Message().message(1, Message().bytes_field(3, "X").bytes_field(4, "Relu").raw(
                                                        repeated(1, 0, std::string(1, '\0'), n)))),
                    "graph 'g' node 'X' unknown fields: 100000"});
  shapes.push_back({"an attribute type outside its enum, given again and again",
                    model_with(Message().message(
                        1, node_with("X", "Custom", Message().bytes_field(1, "a").raw(repeated(20, 0, "\x67", n))))),
                    "graph 'g' node 'X' attribute 'a' unknown fields: 100000"});
  {
    Message group;
    group.key(99, 3);
    group.raw(repeated(1, 0, std::string(1, '\0'), n));
    group.key(99, 4);
    shapes.push_back({"an unknown group", model_with(group), "graph 'g' group #0 unknown fields: 100000"});
  }
  {
    Message m;
    m.varint_field(1, 8).message(8, Message().varint_field(2, 13));
    m.raw(repeated(14, 2, std::string(1, '\0'), n));
    shapes.push_back({"the model's metadata_props, empty", m.bytes, "metadata_props: 100000 messages"});
  }
  return shapes;
}

}  // namespace

TEST_CASE("the parse bound covers what protobuf holds, for every shape that grows once parsed", "[onnx][hostile]") {
  const test::TempDir dir("parse-bound");
  for (const GrowingShape& shape : amplifying_shapes()) {
    INFO(shape.what);
    const auto file = dir.write("m.onnx", shape.model);
    const fuzz::BoundBeside b = fuzz::bound_beside_parse(file);
    REQUIRE(b.parsed);
    CHECK_FALSE(b.bound.malformed);
    CHECK(b.bound.bytes >= b.used);
    CHECK(b.bound.largest == shape.largest);
    // Each of these takes several times its file's size once parsed: the reason they are counted.
    if (shape.grows) CHECK(b.used > 2 * shape.model.size());
  }
}

TEST_CASE("the parse bound of an ordinary model is close to what protobuf holds", "[onnx]") {
  const test::TempDir dir("parse-bound-plain");
  // A chain of 2000 named Relu nodes with their value infos, and a weight left to protobuf (raw data).
  Message g;
  g.bytes_field(2, "chain");
  std::string prev = "x";
  for (int i = 0; i < 2000; ++i) {
    const std::string out = fmt::format("relu_{}_output", i);
    g.message(1, ldmsim::test::node("Relu", {prev}, out).bytes_field(3, fmt::format("relu_{}", i)));
    g.message(13, ldmsim::test::value_info(out, {1, 64, 28, 28}));
    prev = out;
  }
  g.message(5, ldmsim::test::zero_tensor("w", {64, 64}));
  g.message(11, ldmsim::test::value_info("x", {1, 64, 28, 28}));
  g.message(12, ldmsim::test::value_info(prev, {1, 64, 28, 28}));
  const std::string model = ldmsim::test::model(g).bytes;
  const fuzz::BoundBeside b = fuzz::bound_beside_parse(dir.write("chain.onnx", model));
  REQUIRE(b.parsed);
  CHECK(b.bound.bytes >= b.used);
  // The bound adds the allocator's headers and a doubling array's spare capacity to protobuf's own count.
  CHECK(b.bound.bytes <= 2 * b.used);
  onnx_import::check_parse_bound(b.bound, model.size(), HostMemoryLimit{}, "chain.onnx");  // not refused
}

TEST_CASE("the parse bound's walk fails exactly where protobuf's parse fails", "[onnx][hostile]") {
  const test::TempDir dir("parse-bound-malformed");
  const auto check = [&](const std::string& what, const std::string& model) {
    INFO(what);
    const fuzz::BoundBeside b = fuzz::bound_beside_parse(dir.write("m.onnx", model));
    CHECK(b.bound.malformed == !b.parsed);
    CHECK(b.covers());
    return b.parsed;
  };
  // Unknown groups nested in the graph (itself nested in the model): protobuf parses 100 levels below the model.
  for (int levels = 97; levels <= 102; ++levels) {
    Message nested;
    for (int i = 0; i < levels; ++i) nested.key(99, 3);
    nested.varint_field(1, 5);
    for (int i = 0; i < levels; ++i) nested.key(99, 4);
    CHECK(check(fmt::format("{} nested groups", levels), model_with(nested)) == (levels + 1 <= 100));
  }
  const std::string good = model_with(Message());
  CHECK(check("a whole model", good));
  CHECK_FALSE(check("the model cut short", good.substr(0, good.size() - 1)));
  CHECK_FALSE(check("a field numbered 0", model_with(Message().varint_field(0, 1))));
  CHECK_FALSE(check("wire type 7", model_with(Message().raw("\x0f"))));
  CHECK_FALSE(check("a group closed by another number",
                    model_with(Message().raw("\x9b\x06").varint_field(1, 1).raw("\xa4\x06"))));
  CHECK_FALSE(check("an end key outside any group", model_with(Message().raw("\x9c\x06"))));
  CHECK_FALSE(check("a length past the message", model_with(Message().raw("\x0a\x7f"))));
  CHECK_FALSE(check("a varint of 11 bytes", model_with(Message().raw("\x98\x06" + std::string(10, '\x80') + "\x01"))));
  CHECK(check("a varint of 10 bytes whose last holds more than the top bit",
              model_with(Message().raw("\x98\x06" + std::string(9, '\x80') + "\x7f"))));
  CHECK(check("a key of 5 bytes", model_with(Message().raw("\xf8\xff\xff\xff\x0f\x01"))));
}

TEST_CASE("a model whose parse would not fit is refused before protobuf reads it, naming the field and the limit",
          "[onnx][hostile]") {
  const test::TempDir dir("parse-bound-refused");
  SECTION("the host's memory (LDMSIM_HOST_MEMORY_BYTES or MemAvailable)") {
    const std::string model = model_with(Message().raw(repeated(1, 2, std::string(1, '\0'), 100000)));
    const fuzz::BoundBeside b = fuzz::bound_beside_parse(dir.write("nodes.onnx", model));
    REQUIRE(b.bound.bytes > (std::uint64_t{1} << 20));
    CHECK_THROWS_WITH(onnx_import::check_parse_bound(
                          b.bound, model.size(),
                          HostMemoryLimit{std::uint64_t{1} << 20, "allowed by LDMSIM_HOST_MEMORY_BYTES"}, "nodes.onnx"),
                      Contains("nodes.onnx: parsed, this model would take up to") &&
                          Contains("more than the 1 MiB allowed by LDMSIM_HOST_MEMORY_BYTES") &&
                          Contains("the largest part is graph 'g' node: 100001 messages"));
    // What the host offers beyond the bound: not refused.
    onnx_import::check_parse_bound(b.bound, model.size(), HostMemoryLimit{b.bound.bytes, "x"}, "nodes.onnx");
  }
  SECTION("kParseGrowth times the file's size plus kParseSlackBytes, whatever the host offers") {
    // 2.5 million empty nodes: 5 MB in the file, hundreds of MiB parsed. Only counted here, never parsed.
    const std::string model = model_with(Message().raw(repeated(1, 2, std::string(1, '\0'), 2500000)));
    const auto file = dir.write("many.onnx", model);
    const InputFileDescriptor fd(file, "ONNX model", kMaxOnnxFileBytes);
    const onnx_import::ParseBound bound = onnx_import::parsed_model_bound(fd.fd(), fd.size());
    const std::uint64_t allowance = onnx_import::kParseGrowth * model.size() + onnx_import::kParseSlackBytes;
    REQUIRE(bound.bytes > allowance);
    for (const std::uint64_t host : {std::uint64_t{0}, std::uint64_t{1} << 40}) {
      CHECK_THROWS_WITH(onnx_import::check_parse_bound(bound, model.size(), HostMemoryLimit{host, "x"}, "many.onnx"),
                        Contains("the most an import may take for a file of") &&
                            Contains("(4 times its size plus 256 MiB)") &&
                            Contains("graph 'g' node: 2500001 messages"));
    }
    // import_onnx refuses it the same way, before protobuf parses anything.
    CHECK_THROWS_WITH(import_onnx(file),
                      Contains("the most an import may take") && Contains("refused before it is read"));
  }
}
