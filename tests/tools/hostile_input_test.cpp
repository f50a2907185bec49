// Hostile input, one test per class of issue 11: malformed .npy files (crash, blow-up, negative and wrapped
// shapes), output names that would leave --out, writers asked to replace what is not a regular file, a trapped
// run, an interrupted run, an export of a bad trace over a good file, and messages that name the culprit.
#include <fmt/format.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.hpp"
#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/trace/file.hpp"

using namespace ldmsim::testing;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

/// A .npy of version `major` with `header` as its dict (padded to 64 bytes) and `data_bytes` zero bytes.
std::string npy_bytes(const std::string& header, std::size_t data_bytes, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string h = header;
  while ((prefix + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((h.size() >> (8 * i)) & 0xff);
  return out + h + std::string(data_bytes, '\0');
}

void write_bytes(const fs::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary) << bytes;
}

/// A workload whose tensor x comes from `npy` and whose relu output is called `output`.
std::string workload_reading(const std::string& npy, const std::string& output = "y") {
  return nlohmann::json{{"name", "hostile"},
                        {"tensors", {{"x", {{"shape", {2, 3}}, {"init", {{"file", npy}}}}}}},
                        {"ops", {{{"type", "relu"}, {"inputs", {"x"}}, {"outputs", {output}}}}},
                        {"outputs", {output}}}
      .dump();
}

CliResult run_workload(const ScratchDir& dir, const std::string& workload, const std::string& extra = "") {
  write_bytes(dir.path / "w.json", workload);
  return run_cli(fmt::format("run {} --out {} {}", dir.str("w.json"), dir.str("out"), extra));
}

}  // namespace

TEST_CASE("malformed .npy headers are exit 2 naming the file, never a crash or a huge allocation", "[cli][hostile]") {
  ScratchDir dir("hostile-npy");
  struct Case {
    const char* name;
    std::string bytes;
    const char* message;
  };
  const std::string spaces =
      "{'descr': '<f2', 'fortran_order': False, 'shape': (2" + std::string(60000, ' ') + ",3), }";
  std::string huge_length = "\x93NUMPY\x02";
  huge_length += '\0';
  huge_length += "\xf0\xff\xff\xff{}";
  const std::vector<Case> cases = {
      {"spaces.npy", npy_bytes(spaces, 12, 2), "longer than numpy's limit of 10000"},
      {"huge.npy", huge_length, "longer than numpy's limit"},
      {"negative.npy", npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (-2, 3), }", 12),
       "a dimension must be a non-negative integer"},
      {"wrapped.npy", npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0),
       "more than 2^48 elements"},
      {"short.npy", npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", 10), "truncated data"},
      {"long.npy", npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", 14), "trailing bytes"},
      {"nodescr.npy", npy_bytes("{'fortran_order': False, 'shape': (2, 3), }", 12), "no 'descr'"},
      {"unclosed.npy", npy_bytes("{'descr': '<f2', 'shape': (2, 3", 12), "malformed header"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    write_bytes(dir.path / c.name, c.bytes);
    CHECK_THROWS_WITH(ldmsim::read_npy(dir.path / c.name), Contains(c.name) && Contains(c.message));
    const CliResult r = run_workload(dir, workload_reading(c.name), "--no-trace");
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("tensor 'x'") && Contains(c.message));
  }
  // A .npy where a regular file is expected: a directory and a FIFO are refused, not read.
  fs::create_directory(dir.path / "dir.npy");
  REQUIRE(mkfifo((dir.path / "fifo.npy").c_str(), 0600) == 0);
  for (const char* name : {"dir.npy", "fifo.npy"}) {
    INFO(name);
    const CliResult r = run_workload(dir, workload_reading(name), "--no-trace");
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("not a regular file"));
  }
}

TEST_CASE("output names that would leave --out are refused before anything is written", "[cli][hostile]") {
  ScratchDir dir("hostile-names");
  const std::vector<std::string> names = {"../escape", "/tmp/abs", "a/b", ".hidden", std::string("nul\0x", 5),
                                          "tab\tname"};
  for (const std::string& name : names) {
    INFO(name);
    const CliResult r =
        run_workload(dir, nlohmann::json{{"name", "names"},
                                         {"tensors", {{"x", {{"shape", {2, 2}}, {"init", {{"value", 1}}}}}}},
                                         {"ops", {{{"type", "relu"}, {"inputs", {"x"}}, {"outputs", {name}}}}},
                                         {"outputs", {name}}}
                              .dump());
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("cannot name an output file"));
    CHECK_FALSE(fs::exists(dir.path / "escape.npy"));
    CHECK_FALSE(fs::exists(dir.path / "out" / "stats.json"));
  }
}

TEST_CASE("writers refuse to replace anything but a regular file, and leave it as it was", "[cli][hostile]") {
  ScratchDir dir("hostile-clobber");
  REQUIRE(mkfifo((dir.path / "fifo").c_str(), 0600) == 0);
  fs::create_directory(dir.path / "adir");
  std::ofstream(dir.path / "victim") << "keep me";
  fs::create_symlink(dir.path / "victim", dir.path / "link");
  for (const char* target : {"fifo", "adir", "link"}) {
    INFO(target);
    CliResult r = run_cli(fmt::format("run --out {} --trace {}", dir.str("out"), dir.str(target)));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("refusing to replace") && Contains("not a regular file"));
    CHECK_FALSE(fs::exists(dir.path / "out" / "stats.json"));  // checked before the run, nothing written
    REQUIRE(run_cli(fmt::format("run --out {}", dir.str("run"))).code == 0);
    for (const char* command : {"export", "filter"}) {
      r = run_cli(fmt::format("trace {} {} -o {}", command, dir.str("run/trace.ldmtrace"), dir.str(target)));
      CHECK(r.code == 2);
      CHECK_THAT(r.output, Contains("refusing to replace"));
    }
  }
  CHECK(fs::is_fifo(dir.path / "fifo"));
  CHECK(fs::is_directory(dir.path / "adir"));
  CHECK(fs::is_symlink(dir.path / "link"));
  CHECK(read_file(dir.path / "victim") == "keep me");
}

TEST_CASE("an export of a bad trace leaves an existing output untouched", "[cli][hostile]") {
  ScratchDir dir("hostile-export");
  REQUIRE(run_cli(fmt::format("run --out {}", dir.str("run"))).code == 0);
  REQUIRE(run_cli(fmt::format("trace export {} --format csv -o {}", dir.str("run/trace.ldmtrace"), dir.str("good.csv")))
              .code == 0);
  const std::string good = read_file(dir.path / "good.csv");
  REQUIRE(good.size() > 100);
  // The same trace cut near its end: the export fails and good.csv is still the whole export.
  const std::string trace = read_file(dir.path / "run" / "trace.ldmtrace");
  write_bytes(dir.path / "cut.ldmtrace", trace.substr(0, trace.size() - 20));
  const CliResult r =
      run_cli(fmt::format("trace export {} --format csv -o {}", dir.str("cut.ldmtrace"), dir.str("good.csv")));
  CHECK(r.code == 2);
  CHECK(read_file(dir.path / "good.csv") == good);
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);  // no temporary left behind
  }
}

TEST_CASE("a trapped workload run leaves stats.json and a trace that record the fault, and no stale outputs",
          "[cli][hostile]") {
  ScratchDir dir("hostile-trap");
  const std::string workload = nlohmann::json{
      {"name", "trap"},
      {"tensors", {{"x", {{"shape", {3, 5}}, {"init", {{"value", 1}}}}}}},
      {"ops", {{{"type", "relu"}, {"inputs", {"x"}}, {"outputs", {"y"}}}}},
      {"outputs", {"y"}}}.dump();
  REQUIRE(run_workload(dir, workload).code == 0);  // a good run first: y.npy and stats.json exist
  REQUIRE(fs::exists(dir.path / "out" / "y.npy"));
  const CliResult r = run_workload(dir, workload, "--staging none");  // 15 fp16 elements: a misaligned DMA
  REQUIRE(r.code == 3);
  const auto stats = nlohmann::json::parse(read_file(dir.path / "out" / "stats.json"));
  CHECK(stats["fault"]["kind"] == "dma-misaligned");
  CHECK(stats["workload"] == "trap");
  CHECK_FALSE(fs::exists(dir.path / "out" / "y.npy"));  // the earlier run's result is not left as this run's
  CHECK_FALSE(fs::exists(dir.path / "out" / "RUN_INCOMPLETE"));
  ldmsim::TraceReader reader(dir.path / "out" / "trace.ldmtrace");
  CHECK(reader.header()["fault"]["kind"] == "dma-misaligned");
  const CliResult summary = run_cli("trace summary " + dir.str("out"));
  CHECK_THAT(summary.output, Contains("TRAPPED"));
}

TEST_CASE("a run killed half-way leaves the directory marked incomplete and earlier files whole", "[cli][hostile]") {
  ScratchDir dir("hostile-kill");
  nlohmann::json ops = nlohmann::json::array();
  std::string prev = "x";
  for (int i = 0; i < 20; ++i) {
    ops.push_back(
        {{"type", i % 2 == 0 ? "relu" : "sigmoid"}, {"inputs", {prev}}, {"outputs", {fmt::format("t{}", i)}}});
    prev = fmt::format("t{}", i);
  }
  const std::string workload = nlohmann::json{
      {"name", "long"},
      {"tensors", {{"x", {{"shape", {32, 64, 56, 56}}, {"init", {{"uniform", {-1, 1}}, {"seed", 1}}}}}}},
      {"ops", ops},
      {"outputs", {prev}}}.dump();
  REQUIRE(run_workload(dir, workload, "--no-trace").code == 0);
  const fs::path out = dir.path / "out";
  CHECK_FALSE(fs::exists(out / "RUN_INCOMPLETE"));
  const std::string before = read_file(out / "t19.npy");
  // Run again and kill it as soon as it has started simulating (the marker is written just before).
  const CliResult r =
      shell(fmt::format("'{}' run {} --out {} --no-trace >/dev/null 2>&1 & pid=$!; "
                        "for i in $(seq 1 1000); do [ -e {}/RUN_INCOMPLETE ] && break; sleep 0.01; done; kill -TERM "
                        "$pid; wait $pid 2>/dev/null; "
                        "echo $?",
                        LDMSIM_CLI, dir.str("w.json"), out.string(), out.string()));
  CHECK(r.output.find("143") != std::string::npos);  // 128 + SIGTERM: it was killed, not finished
  CHECK(fs::exists(out / "RUN_INCOMPLETE"));
  CHECK(read_file(out / "t19.npy") == before);  // the earlier result is whole (and readable)
  CHECK(ldmsim::read_npy(out / "t19.npy").floats().size() == 32u * 64 * 56 * 56);
  const auto marker = nlohmann::json::parse(read_file(out / "RUN_INCOMPLETE"));
  CHECK(marker["workload"] == "long");
}

TEST_CASE("bad arguments are exit 2 with a message about the argument", "[cli][hostile]") {
  CliResult r = run_cli("frobnicate");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("unknown command 'frobnicate'"));
  r = run_cli("bench stream --block-bytes -8");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("--block-bytes") && Contains("non-negative"));
  r = run_cli("bench stream --rounds 18446744073709551615");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("--rounds") && Contains("do not fit"));
  r = run_cli("bench stream --gap-bytes 18446744073709551608");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("--gap-bytes"));
  r = run_cli("bench stream --sweep --data /dev/zero");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("not a regular file"));
  r = run_cli("run /tmp");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("is a directory"));
  r = run_cli("trace summary /dev/zero");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("/dev/zero: is a character device"));
  // JSON nested 100,000 deep (a stack overflow for a recursive parser) in a workload and in a run's stats.json.
  ScratchDir dir("hostile-deep");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  write_bytes(dir.path / "deep.json", "{\"name\": \"d\", \"ops\": " + deep + "}");
  r = run_cli("run " + dir.str("deep.json"));
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("nested more than 256 levels"));
  REQUIRE(run_cli(fmt::format("run --out {}", dir.str("run"))).code == 0);
  write_bytes(dir.path / "run" / "stats.json", deep);
  r = run_cli(fmt::format("trace summary {} --stats {}", dir.str("run"), dir.str("run/stats.json")));
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("nested more than 256 levels"));
}

TEST_CASE("repeated workload runs give byte-identical stats.json, host times go to host_times.json", "[cli][hostile]") {
  ScratchDir dir("hostile-repeat");
  std::vector<std::string> stats;
  for (const char* threads : {"1", "2"}) {
    const CliResult r = run_cli(fmt::format("run {}/examples/cnn_block.json --no-trace --threads {} --out {}",
                                            LDMSIM_SOURCE_DIR, threads, dir.str(threads)));
    REQUIRE(r.code == 0);
    stats.push_back(read_file(dir.path / threads / "stats.json"));
    const auto host = nlohmann::json::parse(read_file(dir.path / threads / "host_times.json"));
    CHECK(host["staging_host_seconds"].get<double>() >= 0);
    CHECK(host["placement_host_seconds"].get<double>() >= 0);
    CHECK(host["ops"].size() == nlohmann::json::parse(stats.back())["ops"].size());  // one per op that ran
    CHECK(host["ops"].size() == 4);  // cnn_block's 5 ops, its relu fused into the spatialbn before it
    double ops_seconds = 0;
    for (const auto& op : host["ops"]) {  // each op's whole host time contains its staging
      REQUIRE(op.contains("host_seconds"));
      CHECK(op["host_seconds"].get<double>() + 1e-9 >= op["staging_host_seconds"].get<double>());
      ops_seconds += op["host_seconds"].get<double>();
    }
    CHECK(ops_seconds > 0);
    // Where a run's host time went: every phase of a workload JSON's run, the ops inside execute.
    for (const char* phase : {"load_seconds", "fusion_seconds", "execute_seconds", "write_outputs_seconds"}) {
      INFO(phase);
      REQUIRE(host["phases"].contains(phase));
      CHECK(host["phases"][phase].get<double>() >= 0);
    }
    CHECK_FALSE(host["phases"].contains("import_seconds"));  // only an ONNX model is imported
    CHECK(host["phases"]["execute_seconds"].get<double>() >= ops_seconds);
  }
  CHECK(stats[0] == stats[1]);
  CHECK(stats[0].find("host_seconds") == std::string::npos);
}

TEST_CASE("arch values the simulator cannot honour are exit 2 at load, not a crash or a wrong clock",
          "[cli][hostile]") {
  ScratchDir dir("hostile-arch");
  const CliResult shown = run_cli("arch show sw26010", true);
  REQUIRE(shown.code == 0);
  const auto base = nlohmann::json::parse(shown.output);
  struct Case {
    const char* pointer;
    nlohmann::json value;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"/dma/timing/bytes_per_cycle", 1e-300, "dma.timing.bytes_per_cycle must be at least"},
      {"/dma/timing/latency_cycles", 18446744073709551615.0, "dma.timing.latency_cycles must be at most"},
  };
  for (const Case& c : cases) {
    INFO(c.pointer);
    nlohmann::json arch = base;
    arch[nlohmann::json::json_pointer(c.pointer)] = c.value;
    write_bytes(dir.path / "arch.json", arch.dump());
    const CliResult r = run_cli(fmt::format("run --arch {} --no-trace --out {}", dir.str("arch.json"), dir.str("o")));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains(c.message));
  }
  // 64 groups of 32x32 cores: more fiber stacks (2 memory maps each) than the default map limit allows.
  nlohmann::json big = base;
  big["core_groups"]["count"] = 64;
  big["core_groups"]["cores"]["rows"] = 32;
  big["core_groups"]["cores"]["cols"] = 32;
  write_bytes(dir.path / "big.json", big.dump());
  std::size_t map_limit = 65530;
  if (std::ifstream in("/proc/sys/vm/max_map_count"); in) in >> map_limit;
  if (map_limit < 2 * 65536 + 4096) {  // Debian's default (65530) and CI's
    const CliResult r = run_cli(fmt::format("run --arch {} --no-trace --out {}", dir.str("big.json"), dir.str("o")));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("65536 cores") && Contains("vm.max_map_count"));
  } else {
    WARN("vm.max_map_count is " << map_limit << ": this host runs 65536 cores, the refusal is not exercised");
  }
}
