// The native Perfetto export: protoc decodes it against the proto subset kept in the repository
// (trace_analysis/proto/perfetto_trace_subset.proto) into the tracks, interned names and slices the sample trace
// holds, and the deflated batches inflate to exactly the uncompressed packets.
#include "ldmsim/trace_analysis/perfetto_export.hpp"

#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <regex>
#include <sstream>

#include "trace_tools_support.hpp"

using namespace trace_tools_test;

namespace {

std::uint64_t read_varint(const std::string& s, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0; at < s.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(s[at++]);
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return v;
  }
  FAIL("truncated varint");
  return 0;
}

/// The length-delimited fields `field` of a message, in order.
std::vector<std::string> fields(const std::string& message, std::uint64_t field) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < message.size();) {
    const std::uint64_t key = read_varint(message, at);
    REQUIRE((key & 7) == 2);  // the export writes only length-delimited fields at these levels
    const std::uint64_t n = read_varint(message, at);
    REQUIRE(at + n <= message.size());
    if (key >> 3 == field) out.push_back(message.substr(at, n));
    at += n;
  }
  return out;
}

std::string inflate(const std::string& deflated) {
  z_stream z{};
  REQUIRE(inflateInit(&z) == Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(deflated.data()));
  z.avail_in = static_cast<uInt>(deflated.size());
  std::string out;
  char buffer[1 << 14];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
  }
  inflateEnd(&z);
  REQUIRE(rc == Z_STREAM_END);
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("protoc decodes the Perfetto export into tracks, interned names and DMA slices", "[trace-export]") {
  TempDir dir;
  write_sample(dir / "t.ldmtrace");
  const std::vector<ldmsim::LayerSpan> layers = {{"conv1", "conv", "dma", 0, 600, 4096, 0.5, {}, {}, {}, {}}};
  {
    std::ofstream out(dir / "t.pb", std::ios::binary);
    const auto counts = ldmsim::export_perfetto(dir / "t.ldmtrace", out, layers, {.compress = false});
    CHECK(counts.requests == 4);
  }
  const std::string command = "protoc --proto_path='" + std::string(LDMSIM_SOURCE_DIR) +
                              "/trace_analysis/proto' --decode=perfetto.protos.Trace perfetto_trace_subset.proto < '" +
                              (dir / "t.pb").string() + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string text;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
  INFO(text);
  REQUIRE(pclose(pipe) == 0);  // protoc is installed by scripts/install-deps.sh --test
  // Interned once: the event names and the annotation names.
  CHECK(std::regex_search(text, std::regex(R"(event_names \{\s*iid: 1\s*name: "get")")));
  CHECK(std::regex_search(text, std::regex(R"(debug_annotation_names \{\s*iid: 1\s*name: "bytes")")));
  // A track per group, per core, and a second lane where core 0's two gets overlap.
  for (const char* track :
       {"process_name: \"cg 0\"", "process_name: \"cg 1\"", "name: \"core 0,0\"", "name: \"core 0,0 dma 1\"",
        "name: \"core 1,1\"", "name: \"core 0,1\"", "process_name: \"layers\""}) {
    CHECK(count(text, track) == 1);
  }
  CHECK(count(text, "name: \"launches\"") == 2);              // one per group
  CHECK(count(text, "type: TYPE_SLICE_BEGIN") == 4 + 2 + 1);  // requests, launches, the layer
  CHECK(count(text, "type: TYPE_SLICE_END") == 4 + 2 + 1);
  CHECK(count(text, "uint_value: 4096") == 1);  // the overlapping get's bytes
  CHECK(std::regex_search(text, std::regex(R"(timestamp: 200\s*trusted_packet_sequence_id: 1)")));  // ns at 1 GHz
  CHECK(count(text, "name: \"conv1\"") == 1);

  // Deflated: every batch inflates, and together they are the packets above byte for byte.
  std::ostringstream compressed;
  ldmsim::export_perfetto(dir / "t.ldmtrace", compressed, layers);
  std::string inflated;
  for (const std::string& packet : fields(compressed.str(), 1)) {
    for (const std::string& batch : fields(packet, 50)) inflated += inflate(batch);
  }
  CHECK(inflated == read_text(dir / "t.pb"));
}
