// ONNX weights rounded to fp16 while the model file is read (frontends/src/onnx/onnx_skeleton.hpp): the import's
// outcome is the same as protobuf's parse of the whole file, for well-formed models and for the wire-format corners
// the walk must leave to protobuf. Models are written here byte by byte in protobuf's wire format.
#include <fmt/format.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "../../frontends/src/onnx/onnx_skeleton.hpp"
#include "../../frontends/src/onnx/rounding_helpers.hpp"
#include "cli_support.hpp"
#include "fuzz/user_file_input.hpp"
#include "ldmsim/frontends/onnx_import.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/input_file.hpp"
#include "support/onnx_wire.hpp"
#include "support/temp_dir.hpp"

using namespace ldmsim;

namespace {

using ldmsim::test::Message;
using ldmsim::test::model;
using ldmsim::test::node;
using ldmsim::test::value_info;

std::string float_bytes(const std::vector<float>& values) {
  std::string out(values.size() * sizeof(float), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

/// TensorProto fields: dims 1, data_type 2, name 8, raw_data 9 (left out when `with_data` is false).
Message float_tensor(const std::string& name, const std::vector<std::uint64_t>& dims, const std::vector<float>& values,
                     bool with_data = true) {
  Message t;
  for (const std::uint64_t d : dims) t.varint_field(1, d);
  t.varint_field(2, 1);  // FLOAT
  t.bytes_field(8, name);
  if (with_data) t.bytes_field(9, float_bytes(values));
  return t;
}

constexpr std::uint64_t kWidth = 64;

/// GraphProto (node 1, name 2, initializer 5, input 11, output 12) of z = x + w * c + v: w * c folds at import
/// (from w's exact fp32 values), v is a weight as it is. `w` and `v` are given as TensorProto messages so that a
/// test can write them in unusual ways.
Message graph(const Message& w, const Message& v) {
  Message g;
  g.message(1, node("Mul", {"w", "c"}, "wc"));
  g.message(1, node("Add", {"x", "wc"}, "y"));
  g.message(1, node("Add", {"y", "v"}, "z"));
  g.bytes_field(2, "g");
  g.message(5, w);
  g.message(5, float_tensor("c", {1}, {1.5f}));
  g.message(5, v);
  g.message(11, value_info("x", {1, kWidth}));
  g.message(12, value_info("z", {1, kWidth}));
  return g;
}

/// w's values: 1 + 2^-11 lies halfway between two fp16 values (rounded alone it is 1), and times 1.5 it is 1.5 +
/// 0.75 * 2^-10 (rounded: 1.5 + 2^-10): the fold must read the exact fp32 value.
std::vector<float> w_values() {
  std::vector<float> w(kWidth);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0f + std::ldexp(1.0f, -11) + static_cast<float>(i);
  return w;
}

std::vector<float> v_values() {
  std::vector<float> v(kWidth);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * static_cast<float>(i) - 3.0f;
  return v;
}

Message w_tensor() {
  return float_tensor("w", {1, kWidth}, w_values());
}
Message v_tensor() {
  return float_tensor("v", {1, kWidth}, v_values());
}

std::filesystem::path write(const test::TempDir& dir, const std::string& name, const std::string& bytes) {
  return dir.write(name, bytes);
}

OnnxImportOptions streaming(std::uint64_t min_bytes) {
  OnnxImportOptions o;
  o.streamed_weight_min_bytes = min_bytes;
  return o;
}

/// The import's outcome with every fp32 weight streamed, with the default's, and with none: the same; returns it.
std::string require_same_outcomes(const std::filesystem::path& file) {
  const std::string parsed = fuzz::import_outcome(file, streaming(kNoStreamedWeights));
  CHECK(fuzz::import_outcome(file, streaming(0)) == parsed);
  CHECK(fuzz::import_outcome(file, streaming(4)) == parsed);
  CHECK(fuzz::import_outcome(file, OnnxImportOptions{}) == parsed);
  return parsed;
}

bool imported(const std::string& outcome) {
  return outcome.rfind("error: ", 0) != 0;
}

std::vector<f16> array_of(const ImportedModel& m, const std::string& name) {
  const NpyArray& a = m.arrays.at(name + ".npy");
  return {a.halves.data(), a.halves.data() + a.halves.size()};
}

}  // namespace

TEST_CASE("streamed weights import to the same bits as protobuf's parse, and folds read their exact fp32 values",
          "[onnx][import]") {
  const test::TempDir dir("onnx-streamed");
  const auto file = write(dir, "m.onnx", model(graph(w_tensor(), v_tensor())).bytes);
  require_same_outcomes(file);
  const ImportedModel m = import_onnx(file, streaming(0));
  CHECK(m.streamed_weights == 3);  // w, c and v: the walk, not protobuf, read them
  CHECK(import_onnx(file, streaming(16)).streamed_weights == 2);
  CHECK(import_onnx(file, streaming(kNoStreamedWeights)).streamed_weights == 0);
  const std::vector<f16> v = array_of(m, "v");
  const std::vector<f16> wc = array_of(m, "wc");
  REQUIRE(v.size() == kWidth);
  REQUIRE(wc.size() == kWidth);
  for (std::size_t i = 0; i < kWidth; ++i) {
    CHECK(v[i].bits == f16(v_values()[i]).bits);
    CHECK(wc[i].bits == f16(static_cast<float>(static_cast<double>(w_values()[i]) * 1.5)).bits);
  }
  // What the fold would give from w's rounded values: different, so the check above can fail.
  CHECK(f16(1.5f + std::ldexp(1.0f, -10)).bits != f16(static_cast<float>(f16(w_values()[0])) * 1.5f).bits);
}

TEST_CASE("the model skeleton leaves out the large fp32 weights and keeps everything else", "[onnx][import]") {
  const test::TempDir dir("onnx-skeleton");
  const std::string bytes = model(graph(w_tensor(), v_tensor())).bytes;
  const auto file = write(dir, "m.onnx", bytes);
  const InputFileDescriptor fd(file, "ONNX model", kMaxOnnxFileBytes);
  const std::string name = file.string();
  SECTION("above the size limit: w and v (c is 4 bytes)") {
    const auto skeleton = onnx_import::read_model_skeleton(fd.fd(), fd.size(), 16, name);
    REQUIRE(skeleton);
    REQUIRE(skeleton->weights.size() == 2);
    CHECK(skeleton->weights[0].initializer == 0);
    CHECK(skeleton->weights[1].initializer == 2);
    const Message w_out = float_tensor("w", {1, kWidth}, {}, false), v_out = float_tensor("v", {1, kWidth}, {}, false);
    CHECK(skeleton->bytes == model(graph(w_out, v_out)).bytes);
    const std::vector<float> v = v_values();
    const auto& w1 = skeleton->weights[1];
    CHECK(w1.bytes == kWidth * sizeof(float));
    CHECK(bytes.compare(w1.offset, w1.bytes, float_bytes(v)) == 0);
    for (std::size_t i = 0; i < kWidth; ++i) CHECK(w1.halves.data()[i].bits == f16(v[i]).bits);
    std::vector<float> reread(kWidth);
    onnx_import::read_streamed_floats(w1, [&](std::size_t i, float x) { reread.at(i) = x; });
    CHECK(reread == v);
  }
  SECTION("a limit above every weight streams nothing") {
    const auto skeleton = onnx_import::read_model_skeleton(fd.fd(), fd.size(), 1 << 20, name);
    REQUIRE(skeleton);
    CHECK(skeleton->weights.empty());
    CHECK(skeleton->bytes == bytes);
  }
  SECTION("a file cut short is left to protobuf") {
    const auto cut = write(dir, "cut.onnx", bytes.substr(0, bytes.size() - 100));
    const InputFileDescriptor cut_fd(cut, "ONNX model", kMaxOnnxFileBytes);
    CHECK_FALSE(onnx_import::read_model_skeleton(cut_fd.fd(), cut_fd.size(), 0, name));
    CHECK_THROWS_WITH(import_onnx(cut), Catch::Contains("the protobuf does not parse"));
  }
}

TEST_CASE("a large weight rounded in parts on several threads gives the same bits", "[onnx][import]") {
  // 1 MiB of fp32 and more is rounded in parts on the import's threads; a count that no part count divides.
  constexpr std::uint64_t kLarge = 3 * (std::uint64_t{1} << 18) + 7;
  std::vector<float> large(kLarge);
  for (std::size_t i = 0; i < large.size(); ++i) {
    large[i] = std::ldexp(1.0f + static_cast<float>(i % 4093) / 4096.0f, static_cast<int>(i % 29) - 14);
  }
  // The large weight last in the file, so that a cut inside it is seen by its parts' reads alone.
  Message g = graph(w_tensor(), v_tensor());
  g.message(5, float_tensor("big", {1, kLarge}, large));
  const std::string bytes = model(g).bytes;
  const test::TempDir dir("onnx-parts");
  const auto file = write(dir, "m.onnx", bytes);
  const InputFileDescriptor fd(file, "ONNX model", kMaxOnnxFileBytes);
  const std::string name = file.string();
  const auto one = onnx_import::read_model_skeleton(fd.fd(), fd.size(), 16, name, 1);
  REQUIRE(one);
  REQUIRE(one->weights.size() == 3);
  REQUIRE(one->weights[2].halves.size() == kLarge);
  for (const unsigned threads : {2U, 3U, 4U}) {
    INFO(threads << " threads");
    const auto parts = onnx_import::read_model_skeleton(fd.fd(), fd.size(), 16, name, threads);
    REQUIRE(parts);
    CHECK(parts->bytes == one->bytes);
    REQUIRE(parts->weights.size() == 3);
    const SharedHalves& h = parts->weights[2].halves;
    REQUIRE(h.size() == kLarge);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kLarge; ++i) wrong += h.data()[i].bits != f16(large[i]).bits ? 1U : 0U;
    CHECK(wrong == 0);
  }
  // The file shorter than its size when opened (cut while the import runs) inside the last part: the walk's own
  // reads all succeed, and the part's short read must fail it, as on one thread.
  const auto cut = write(dir, "cut.onnx", bytes.substr(0, bytes.size() - 1000));
  const InputFileDescriptor cut_fd(cut, "ONNX model", kMaxOnnxFileBytes);
  for (const unsigned threads : {1U, 2U, 3U}) {
    INFO(threads << " threads");
    CHECK_FALSE(onnx_import::read_model_skeleton(cut_fd.fd(), bytes.size(), 16, name, threads));
  }
  OnnxImportOptions two;
  two.threads = 2;
  CHECK_THROWS_WITH(import_onnx(cut, two), Catch::Contains("the protobuf does not parse"));
}

TEST_CASE("a part of a weight that a helper thread cannot read fails the walk", "[onnx][import]") {
  const test::TempDir dir("onnx-helper-read");
  std::vector<float> values(1000, 0.5f);
  values[100] = -1e9f, values[700] = 1e9f;  // one in each part: saturated to -+65504 and counted
  const auto file = write(dir, "floats.bin", float_bytes(values));
  const InputFileDescriptor fd(file, "floats", kMaxOnnxFileBytes);
  const auto out = std::make_shared<std::vector<f16>>(2000);
  for (const bool helper_reads : {false, true}) {  // the caller's finish or the helper thread reads the parts
    INFO((helper_reads ? "the helper" : "finish") << " reads");
    const auto saturated = std::make_shared<std::atomic<std::uint64_t>>(0);
    onnx_import::RoundingHelpers whole(fd.fd(), 1);
    whole.add(0, 600, out->data(), out, saturated);
    whole.add(600 * sizeof(float), 400, out->data() + 600, out, saturated);
    if (helper_reads) whole.drain();
    CHECK(whole.finish());
    CHECK((*out)[999].bits == f16(0.5f).bits);
    CHECK(static_cast<float>((*out)[100]) == -65504.0f);
    CHECK(static_cast<float>((*out)[700]) == 65504.0f);
    CHECK(saturated->load() == 2);
    onnx_import::RoundingHelpers past_end(fd.fd(), 1);
    past_end.add(0, 500, out->data(), out, saturated);
    past_end.add(500 * sizeof(float), 501, out->data() + 500, out, saturated);  // one value past the end of the file
    if (helper_reads) past_end.drain();
    CHECK_FALSE(past_end.finish());
  }
}

TEST_CASE("a streamed weight whose bytes vanish from the file names the file instead of reading garbage",
          "[onnx][import]") {
  const test::TempDir dir("onnx-vanish");
  const auto file = write(dir, "m.onnx", model(graph(w_tensor(), v_tensor())).bytes);
  const InputFileDescriptor fd(file, "ONNX model", kMaxOnnxFileBytes);
  const std::string name = file.string();
  auto skeleton = onnx_import::read_model_skeleton(fd.fd(), fd.size(), 16, name);
  REQUIRE(skeleton);
  std::filesystem::resize_file(file, skeleton->weights[1].offset + 8);  // truncated while the import runs
  CHECK_THROWS_WITH(onnx_import::read_streamed_floats(skeleton->weights[1], [](std::size_t, float) {}),
                    Catch::Contains(name) && Catch::Contains("changed while it was read"));
}

TEST_CASE("wire-format corners import the same with streamed weights as parsed by protobuf", "[onnx][import]") {
  const test::TempDir dir("onnx-corners");
  const std::string v_raw = float_bytes(v_values());
  SECTION("data_type after raw_data (not streamed)") {
    Message v;
    v.varint_field(1, 1).varint_field(1, kWidth).bytes_field(8, "v").bytes_field(9, v_raw).varint_field(2, 1);
    CHECK(imported(require_same_outcomes(write(dir, "late_type.onnx", model(graph(w_tensor(), v)).bytes))));
  }
  SECTION("raw_data twice (protobuf keeps the last)") {
    Message v;
    v.varint_field(1, 1).varint_field(1, kWidth).varint_field(2, 1).bytes_field(8, "v");
    v.bytes_field(9, float_bytes(w_values())).bytes_field(9, v_raw);
    CHECK(imported(require_same_outcomes(write(dir, "twice.onnx", model(graph(w_tensor(), v)).bytes))));
  }
  SECTION("data_type changed to int32 after the raw data") {
    Message v;
    v.varint_field(1, 1).varint_field(1, kWidth).varint_field(2, 1).bytes_field(8, "v").bytes_field(9, v_raw);
    v.varint_field(2, 6);  // INT32: the same bytes, other values
    // An int32 tensor added to a float one: refused alike both ways, naming the node and the element type.
    const std::string outcome = require_same_outcomes(write(dir, "retyped.onnx", model(graph(w_tensor(), v)).bytes));
    CHECK_FALSE(imported(outcome));
    CHECK_THAT(outcome, Catch::Contains("(Add)") && Catch::Contains("is int32"));
  }
  SECTION("data_type FLOAT as an over-long varint (2^32 + 1, read as 1)") {
    Message v;
    v.varint_field(1, 1).varint_field(1, kWidth).raw(std::string("\x10\x81\x80\x80\x80\x10", 6));
    v.bytes_field(8, "v").bytes_field(9, v_raw);
    CHECK(imported(require_same_outcomes(write(dir, "long_type.onnx", model(graph(w_tensor(), v)).bytes))));
  }
  SECTION("raw data of a length that is not a multiple of 4") {
    Message v;
    v.varint_field(1, 1).varint_field(1, kWidth).varint_field(2, 1).bytes_field(8, "v").bytes_field(9, v_raw + "xy");
    CHECK_THAT(require_same_outcomes(write(dir, "odd.onnx", model(graph(w_tensor(), v)).bytes)),
               Catch::Contains("initializer 'v' holds 64 values but its dims need 64"));
  }
  SECTION("two graph fields (protobuf merges them)") {
    Message second;
    second.message(5, float_tensor("extra", {kWidth}, v_values()));
    const std::string bytes = model(graph(w_tensor(), v_tensor())).bytes + Message().message(7, second).bytes;
    CHECK(imported(require_same_outcomes(write(dir, "two_graphs.onnx", bytes))));
  }
  SECTION("a fixed64 and a fixed32 field inside a tensor, and a group tag") {
    Message v = v_tensor();
    v.raw(std::string("\x59", 1) + std::string(8, '\x01'));  // field 11 (uint64_data), wire type 1
    v.raw(std::string("\x6d", 1) + std::string(4, '\x02'));  // field 13, wire type 5
    CHECK(imported(require_same_outcomes(write(dir, "fixed.onnx", model(graph(w_tensor(), v)).bytes))));
    Message grouped = v_tensor();
    grouped.raw(std::string("\x7b\x7c", 2));  // field 15: start group, end group
    CHECK(imported(require_same_outcomes(write(dir, "group.onnx", model(graph(w_tensor(), grouped)).bytes))));
  }
  SECTION("model fields after the graph") {
    Message m = model(graph(w_tensor(), v_tensor()));
    m.bytes_field(6, "documented after the graph")
        .message(8, Message().bytes_field(1, "ai.onnx.ml").varint_field(2, 3));
    const auto file = write(dir, "after.onnx", m.bytes);
    CHECK(imported(require_same_outcomes(file)));
    CHECK(import_onnx(file, streaming(0)).streamed_weights == 3);
  }
  SECTION("lengths padded to 5 bytes (protobuf reads them) and to 6 (it refuses them)") {
    const std::string v_bytes = v_tensor().bytes;
    for (const std::size_t pad : {std::size_t{5}, std::size_t{6}}) {
      // v as an initializer (key 0x2a) whose length takes `pad` bytes: 7 bits a byte, then zero continuations.
      std::string length;
      std::uint64_t n = v_bytes.size();
      for (std::size_t i = 0; i + 1 < pad; ++i, n >>= 7) length.push_back(static_cast<char>((n & 0x7f) | 0x80));
      length.push_back(static_cast<char>(n));
      Message g = graph(w_tensor(), float_tensor("unused", {1}, {0.0f}));
      g.raw("\x2a" + length + v_bytes);  // v, read by the last Add
      const std::string outcome = require_same_outcomes(write(dir, fmt::format("pad{}.onnx", pad), model(g).bytes));
      CHECK(imported(outcome) == (pad == 5));
    }
  }
  SECTION("a tensor whose length runs past its graph") {
    Message g = graph(w_tensor(), v_tensor());
    g.raw(std::string("\x2a\x7f\x08\x01\x10", 5));  // an initializer of 127 bytes, 3 of them in the graph
    const std::string bytes = model(g).bytes;
    CHECK_FALSE(imported(require_same_outcomes(write(dir, "overrun.onnx", bytes))));
  }
}

TEST_CASE("names that are not UTF-8 are replaced, so the workload, stats.json and trace can hold them", "[onnx][cli]") {
  const test::TempDir dir("onnx-utf8");
  // A Relu whose node name ends in a lone 0xE9 (Latin-1's e-acute), an input name with a stray continuation byte.
  Message g;
  g.message(1, node("Relu", {"x\x80"}, "y").bytes_field(3, "relu_\xE9"));
  g.message(11, value_info("x\x80", {1, kWidth}));
  g.message(12, value_info("y", {1, kWidth}));
  const auto file = write(dir, "names.onnx", model(g).bytes);
  const ImportedModel m = import_onnx(file);
  CHECK(m.workload["ops"][0]["name"] == "relu_\xEF\xBF\xBD");
  REQUIRE_FALSE(m.notes.empty());
  CHECK_THAT(m.notes[0].text, Catch::StartsWith("input 'x\xEF\xBF\xBD'"));
  CHECK_NOTHROW(m.workload.dump());
  const auto r = testing::run_cli(fmt::format("run '{}' --out '{}'", file.string(), (dir / "out").string()));
  INFO(r.output);
  REQUIRE(r.code == 0);
  const auto stats = nlohmann::json::parse(testing::read_file(dir / "out" / "stats.json"));
  CHECK(stats["ops"][0]["name"] == "relu_\xEF\xBF\xBD");
  // Two models, one of a file name that is not UTF-8: the run's records name the files.
  const auto odd_file = write(dir, "na\xE9mes.onnx", model(g).bytes);
  const auto two = testing::run_cli(
      fmt::format("run '{}' '{}' --no-trace --out '{}'", file.string(), odd_file.string(), (dir / "two").string()));
  INFO(two.output);
  REQUIRE(two.code == 0);
  const auto summary = nlohmann::json::parse(testing::read_file(dir / "two" / "stats.json"));
  CHECK(summary["models"][1]["workload"] == (dir / "na\xEF\xBF\xBDmes.onnx").string());
}
