// The native Perfetto export: protoc decodes it against the proto subset kept in the repository
// (trace_analysis/proto/perfetto_trace_subset.proto) into the tracks, interned names and slices the sample trace
// holds, each DMA slice carries its bytes, layer and kernel as interned annotations, and the zstd and deflate
// batches decompress to exactly the uncompressed packets.
#include "ldmsim/trace_analysis/perfetto_export.hpp"

#include <zlib.h>
#include <zstd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <regex>
#include <set>
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

std::string unzstd(const std::string& frame) {
  const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  REQUIRE(size != ZSTD_CONTENTSIZE_ERROR);
  REQUIRE(size != ZSTD_CONTENTSIZE_UNKNOWN);
  std::string out(static_cast<std::size_t>(size), '\0');
  REQUIRE(ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size()) == size);
  return out;
}

/// The packets of an export, decompressed: batches of `field` (50 deflate, 133 zstd) expanded in place.
std::string decompressed(const std::string& exported, std::uint64_t field) {
  std::string packets;
  for (const std::string& packet : fields(exported, 1)) {
    const std::vector<std::string> batches = fields(packet, field);
    REQUIRE(batches.size() == 1);  // nothing is written outside a batch
    packets += field == 50 ? inflate(batches[0]) : unzstd(batches[0]);
  }
  return packets;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// The text format of a Perfetto trace file, decoded by protoc against the proto subset kept in the repository
/// (protoc is installed by scripts/install-deps.sh --test); fails the test when protoc does.
std::string decode_with_protoc(const std::filesystem::path& file) {
  const std::string command = "protoc --proto_path='" + std::string(LDMSIM_SOURCE_DIR) +
                              "/trace_analysis/proto' --decode=perfetto.protos.Trace perfetto_trace_subset.proto < '" +
                              file.string() + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string text;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
  INFO(text);
  REQUIRE(pclose(pipe) == 0);
  return text;
}

}  // namespace

TEST_CASE("protoc decodes the Perfetto export into tracks, interned names and DMA slices", "[trace-export]") {
  TempDir dir;
  write_sample(dir / "t.ldmtrace");
  const std::vector<ldmsim::LayerSpan> layers = {{"conv1", "conv", "dma", 0, 600, 4096, 0.5, {}, {}, {}, {}}};
  {
    std::ofstream out(dir / "t.pb", std::ios::binary);
    const auto counts =
        ldmsim::export_perfetto(dir / "t.ldmtrace", out, layers, {.compression = ldmsim::PerfettoCompression::kNone});
    CHECK(counts.requests == 4);
    CHECK(counts.markers == 4);  // each group's launch begin and end
  }
  const std::string text = decode_with_protoc(dir / "t.pb");
  INFO(text);
  // Interned once: event names and annotation strings share ids (get 1, put 2, kernel "k" 3, layer "conv1" 4).
  CHECK(std::regex_search(text, std::regex(R"(event_names \{\s*iid: 1\s*name: "get")")));
  CHECK(std::regex_search(text, std::regex(R"(event_names \{\s*iid: 3\s*name: "k")")));
  CHECK(std::regex_search(text, std::regex(R"(event_names \{\s*iid: 4\s*name: "conv1")")));
  CHECK(std::regex_search(text, std::regex(R"(debug_annotation_string_values \{\s*iid: 4\s*str: "conv1")")));
  for (const char* name : {R"(iid: 1\s*name: "bytes")", R"(iid: 3\s*name: "layer")", R"(iid: 4\s*name: "kernel")"}) {
    CHECK(std::regex_search(text, std::regex(std::string(R"(debug_annotation_names \{\s*)") + name)));
  }
  CHECK(count(text, "name: \"conv1\"") == 1);
  // A track per group, per core, and a second lane where core 0's two gets overlap.
  for (const char* track :
       {"process_name: \"cg 0\"", "process_name: \"cg 1\"", "name: \"core 0,0\"", "name: \"core 0,0 dma 1\"",
        "name: \"core 1,1\"", "name: \"core 0,1\"", "process_name: \"layers\""}) {
    CHECK(count(text, track) == 1);
  }
  CHECK(count(text, "name: \"launches\"") == 2);              // one per group
  CHECK(count(text, "type: TYPE_SLICE_BEGIN") == 4 + 2 + 1);  // requests, launches, the layer
  CHECK(count(text, "type: TYPE_SLICE_END") == 4 + 2 + 1);
  CHECK(std::regex_search(text, std::regex(R"(type: TYPE_SLICE_BEGIN\s*name_iid: 4\s*track_uuid: 2\b)")));  // layer
  // Every request: its direction as its name, its bytes, its layer and its kernel.
  // (protoc prints fields in field-number order: annotations 4, type 9, name_iid 10, track_uuid 11.)
  const std::regex request(
      R"(debug_annotations \{\s*name_iid: 1\s*uint_value: (\d+)\s*\}\s*debug_annotations \{\s*name_iid: 3\s*)"
      R"(string_value_iid: 4\s*\}\s*debug_annotations \{\s*name_iid: 4\s*string_value_iid: 3\s*\}\s*)"
      R"(type: TYPE_SLICE_BEGIN\s*name_iid: ([12])\s*track_uuid: \d+)");
  std::multiset<std::string> seen;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), request); it != std::sregex_iterator(); ++it) {
    seen.insert((*it)[2].str() + " " + (*it)[1].str());
  }
  CHECK(seen == std::multiset<std::string>{"1 100", "1 4096", "2 8", "1 64"});
  CHECK(std::regex_search(text, std::regex(R"(timestamp: 200\s*trusted_packet_sequence_id: 1)")));  // ns at 1 GHz

  // Compressed: every batch decompresses, and together they are the packets above byte for byte.
  for (const auto& [compression, field] : {std::pair{ldmsim::PerfettoCompression::kZstd, std::uint64_t{133}},
                                           std::pair{ldmsim::PerfettoCompression::kDeflate, std::uint64_t{50}}}) {
    std::ostringstream compressed;
    ldmsim::export_perfetto(dir / "t.ldmtrace", compressed, layers, {.compression = compression});
    CHECK(decompressed(compressed.str(), field) == read_text(dir / "t.pb"));
  }
}

TEST_CASE("a Perfetto export larger than one batch splits into batches that decompress to the whole export",
          "[trace-export]") {
  TempDir dir;
  std::vector<ldmsim::TraceRecorder> groups;
  groups.emplace_back(0, true);
  // 40,000 requests with a 4-lane overlap pattern: about 2.4 MB of packets, so several 1 MiB batches.
  for (ldmsim::Cycle i = 0; i < 40000; ++i) {
    groups[0].record(event(static_cast<std::uint16_t>(i % 4), ldmsim::DmaOp::kGet, 256, i * 10, i * 10, i * 10 + 35));
  }
  groups[0].mark({ldmsim::MarkerKind::kLaunchBegin, 0, -1, 0, "big"});
  groups[0].mark({ldmsim::MarkerKind::kLaunchEnd, 400000, -1, 0, "big"});
  std::vector<const ldmsim::TraceRecorder*> ptrs{&groups[0]};
  ldmsim::write_trace(dir / "big.ldmtrace", header(400000, nullptr, 1), ptrs);
  std::ostringstream plain, zstd;
  CHECK(ldmsim::export_perfetto(dir / "big.ldmtrace", plain, {}, {.compression = ldmsim::PerfettoCompression::kNone})
            .requests == 40000);
  ldmsim::export_perfetto(dir / "big.ldmtrace", zstd, {});
  CHECK(fields(zstd.str(), 1).size() >= 2);
  CHECK(decompressed(zstd.str(), 133) == plain.str());
  CHECK(zstd.str().size() < 16 * 40000);
}

TEST_CASE("an MPI run's ranks export as one Perfetto trace: a process per rank with its groups and MPI calls",
          "[trace-export]") {
  TempDir dir;
  std::vector<ldmsim::RankTrace> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    nlohmann::json h = header(1000, nullptr, 2);
    h["run"] = {{"program", "athread"}};
    // Rank 0's header in the first layout, rank 1's with the calls' waiting parts (ignored by the export).
    h["mpi"] = {{"calls_made", 2},
                {"calls_columns", {"name", "begin", "end", "peer", "bytes"}},
                {"calls",
                 {{"MPI_Send", 100, 300, 1 - rank, 4096},
                  {"MPI_Barrier", 400, 450 + 100 * rank, -1, 0},
                  {"not a call"}}}};  // a malformed row is skipped
    if (rank == 1) {
      h["mpi"]["calls_columns"] = {"name", "begin", "end", "peer", "bytes", "wait_begin", "wait_end"};
      h["mpi"]["calls"] = {{"MPI_Send", 100, 300, 0, 4096, 300, 300}, {"MPI_Barrier", 400, 550, -1, 0, 400, 500}};
    }
    const auto groups = sample_groups();
    std::vector<const ldmsim::TraceRecorder*> ptrs{&groups[0], &groups[1]};
    const auto file = dir / ("trace.rank" + std::to_string(rank) + ".ldmtrace");
    ldmsim::write_trace(file, h, ptrs);
    ranks.push_back({rank, file});
  }
  {
    std::ofstream out(dir / "ranks.pb", std::ios::binary);
    const auto counts = ldmsim::export_perfetto_ranks(ranks, out, {.compression = ldmsim::PerfettoCompression::kNone});
    CHECK(counts.requests == 8);
  }
  const std::string text = decode_with_protoc(dir / "ranks.pb");
  INFO(text);
  CHECK(count(text, "process_name: \"rank 0\"") == 1);
  CHECK(count(text, "process_name: \"rank 1\"") == 1);
  CHECK(count(text, "process_name: \"cg") == 0);  // groups are tracks under their rank
  CHECK(count(text, "name: \"cg 0\"") == 2);      // one per rank
  CHECK(count(text, "name: \"MPI\"") == 2);       // one per rank
  CHECK(count(text, "name: \"core 0,0 dma 1\"") == 2);
  // Rank 1's group 0 hangs under rank 1's process (uuid (1 + 1) << 32), its MPI track right after it.
  CHECK(std::regex_search(text, std::regex(R"(uuid: 8589934608\s*name: "cg 0"\s*parent_uuid: 8589934592)")));
  CHECK(std::regex_search(text, std::regex(R"(uuid: 8589934593\s*name: "MPI"\s*parent_uuid: 8589934592)")));
  CHECK(std::regex_search(text, std::regex(R"(event_names \{\s*iid: \d+\s*name: "MPI_Send")")));
  // Each call a slice with its peer and bytes: 2 ranks x 2 calls, plus 8 requests and 4 launches.
  CHECK(count(text, "type: TYPE_SLICE_BEGIN") == 4 + 8 + 4);
  CHECK(count(text, "type: TYPE_SLICE_END") == 4 + 8 + 4);
  CHECK(std::regex_search(text, std::regex(R"(name_iid: 5\s*int_value: 1\s*\}\s*debug_annotations \{\s*name_iid: 1\s*)"
                                           R"(uint_value: 4096)")));
  CHECK(count(text, "int_value: -1") == 2);  // the barriers have no peer
  CHECK(std::regex_search(text, std::regex(R"(timestamp: 550\s*trusted_packet_sequence_id: 1)")));  // rank 1's end
}
