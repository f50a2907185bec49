// Tests of the arch config: presets, the to_json/from_json round trip, every validation rule at its boundary
// (with the JSON path in the message), files, syntax errors and Arch::resolve.
#include "ldmsim/sim/arch.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ldmsim/sim/fault.hpp"

namespace {

using Catch::Matchers::Contains;
using nlohmann::json;

/// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device seed;
    path_ = std::filesystem::temp_directory_path() /
            ("ldmsim_arch_test_" + std::to_string(seed()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto file = path_ / name;
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Only the required keys: everything else takes the defaults of arch.hpp.
json minimal_tree() {
  return json::parse(R"({
    "name": "m",
    "clock_hz": 1e9,
    "core_groups": { "count": 1, "main_memory_bytes": 1048576, "cores": { "rows": 1, "cols": 1, "ldm_bytes": 4096 } }
  })");
}

/// The error message of from_json(tree), or "" if it loads.
std::string error_of(const json& tree) {
  try {
    ldmsim::Arch::from_json(tree, "t.json");
  } catch (const ldmsim::ConfigError& e) {
    return e.what();
  }
  return "";
}

/// minimal_tree() with one value replaced (pointer like "/core_groups/count").
json with(const std::string& pointer, const json& value) {
  json tree = minimal_tree();
  tree[json::json_pointer(pointer)] = value;
  return tree;
}

/// The tree with the member at `pointer` removed.
json without(json tree, const std::string& pointer) {
  const json::json_pointer ptr(pointer);
  tree[ptr.parent_pointer()].erase(ptr.back());
  return tree;
}

void check_accepts(const std::string& pointer, const json& value) {
  INFO(pointer << " = " << value.dump());
  CHECK(error_of(with(pointer, value)).empty());
}

void check_rejects(const std::string& pointer, const json& value, const std::string& message) {
  INFO(pointer << " = " << value.dump());
  const std::string error = error_of(with(pointer, value));
  CHECK_THAT(error, Contains("t.json: " + message));
}

}  // namespace

TEST_CASE("presets load with their documented values", "[arch]") {
  CHECK(ldmsim::Arch::preset_names() == std::vector<std::string>{"sw26010", "sw26010pro", "tiny"});

  SECTION("sw26010") {
    const auto a = ldmsim::Arch::preset("sw26010");
    CHECK(a.name == "sw26010");
    CHECK(a.clock_hz == 1.45e9);
    CHECK(a.core_groups == 4);
    CHECK(a.main_memory_bytes_per_cg == 8ull << 30);
    CHECK(a.rows == 8);
    CHECK(a.cols == 8);
    CHECK(a.cores_per_group() == 64);
    CHECK(a.total_cores() == 256);
    CHECK(a.ldm_bytes == 65536);
    CHECK(a.flops_per_cycle == 8.0);
    CHECK(a.barrier_cycles == 30);
    CHECK(a.register_comm == ldmsim::RegisterCommArch{true, 10, 1, 1, 4});
    CHECK(a.dma.granularity_bytes == 4);
    CHECK(a.dma.transaction_bytes == 128);
    CHECK(a.dma.fields == ldmsim::DmaFieldWidths{20, 20, 20});
    CHECK(a.node_barrier_cycles == 200);
    CHECK(a.dma.timing_model() == "fcfs-channels");  // calibrated against swCandle's STREAM runs
    CHECK(a.dma.timing == json{{"model", "fcfs-channels"},
                               {"issue_cycles", 10},
                               {"channels", 1},
                               {"request_overhead_cycles", 7.4},
                               {"block_cycles", 0.5},
                               {"realign_cycles", 0},
                               {"put_realign_cycles", 34},
                               {"strided_realign_cycles", 0},
                               {"shared_line_cycles", 0},
                               {"line_queue_cycles", 4.1},
                               {"partial_put_cycles", 19.1},
                               {"bytes_per_cycle", 19.6},
                               {"put_bytes_per_cycle", 11.8},
                               {"latency_cycles", 400},
                               {"broadcast_bytes_per_cycle", 6.54},
                               {"broadcast_block_cycles", 13.9},
                               {"broadcast_word_queue_cycles", 16.6}});
  }
  SECTION("sw26010pro") {
    const auto a = ldmsim::Arch::preset("sw26010pro");
    CHECK(a.name == "sw26010pro");
    CHECK(a.clock_hz == 2.25e9);
    CHECK(a.core_groups == 6);
    CHECK(a.main_memory_bytes_per_cg == 16ull << 30);
    CHECK(a.rows == 8);
    CHECK(a.cols == 8);
    CHECK(a.total_cores() == 384);
    CHECK(a.ldm_bytes == 262144);
    CHECK(a.flops_per_cycle == 16.0);
    CHECK(a.barrier_cycles == 30);
    CHECK(a.dma.granularity_bytes == 4);
    CHECK(a.dma.transaction_bytes == 128);
    CHECK(a.dma.fields == ldmsim::DmaFieldWidths{20, 20, 20});
    CHECK(a.dma.timing_model() == "fcfs-channels");  // estimated from public figures (docs/timing-model.md)
    CHECK(a.dma.timing["bytes_per_cycle"].get<double>() == 14.10);
    CHECK(a.dma.timing["issue_cycles"] == 10);
    CHECK(a.dma.timing["latency_cycles"] == 466);
    CHECK(a.dma.timing["request_overhead_cycles"] == 206);
    CHECK(a.dma.timing.size() == 7);
  }
  SECTION("tiny") {
    const auto a = ldmsim::Arch::preset("tiny");
    CHECK(a.name == "tiny");
    CHECK(a.clock_hz == 1e9);
    CHECK(a.core_groups == 1);
    CHECK(a.main_memory_bytes_per_cg == 64ull << 20);
    CHECK(a.rows == 2);
    CHECK(a.cols == 2);
    CHECK(a.ldm_bytes == 16384);
    CHECK(a.flops_per_cycle == 1.0);
    CHECK(a.barrier_cycles == 10);
    CHECK(a.dma.granularity_bytes == 4);
    CHECK(a.dma.transaction_bytes == 128);
    CHECK(a.dma.timing == json{{"model", "ideal"}});
    CHECK(a.dma.timing_model() == "ideal");
  }
  SECTION("an unknown preset names the known ones") {
    REQUIRE_THROWS_AS(ldmsim::Arch::preset("sw9"), ldmsim::ConfigError);
    REQUIRE_THROWS_WITH(ldmsim::Arch::preset("sw26010-pro"), Contains("unknown arch preset 'sw26010-pro'") &&
                                                                 Contains("sw26010, sw26010pro, tiny") &&
                                                                 Contains("did you mean sw26010pro?"));
  }
}

TEST_CASE("to_json writes the full tree and from_json reads it back equal", "[arch]") {
  for (const auto& name : ldmsim::Arch::preset_names()) {
    INFO("preset " << name);
    const auto arch = ldmsim::Arch::preset(name);
    const json tree = arch.to_json();
    CHECK(ldmsim::Arch::from_json(tree) == arch);
    CHECK(ldmsim::Arch::from_json(json::parse(tree.dump())) == arch);  // through text too
    CHECK(ldmsim::Arch::from_json(json::parse(tree.dump())).to_json() == tree);
  }

  SECTION("missing optional keys take the defaults of arch.hpp and to_json fills them in") {
    const auto arch = ldmsim::Arch::from_json(minimal_tree());
    const ldmsim::Arch defaults;
    CHECK(arch.flops_per_cycle == defaults.flops_per_cycle);
    CHECK(arch.barrier_cycles == defaults.barrier_cycles);
    CHECK(arch.dma == defaults.dma);
    CHECK(arch.dma.timing == json{{"model", "ideal"}});

    const json full = arch.to_json();
    for (const char* pointer :
         {"/name", "/clock_hz", "/core_groups/count", "/core_groups/main_memory_bytes", "/core_groups/cores/rows",
          "/core_groups/cores/cols", "/core_groups/cores/ldm_bytes", "/core_groups/cores/flops_per_cycle",
          "/core_groups/cores/barrier_cycles", "/dma/granularity_bytes", "/dma/transaction_bytes",
          "/dma/fields/length_bits", "/dma/fields/bsize_bits", "/dma/fields/stride_bits", "/dma/timing/model"}) {
      INFO(pointer);
      CHECK(full.contains(json::json_pointer(pointer)));
    }
    CHECK(ldmsim::Arch::from_json(full) == arch);
  }

  SECTION("timing parameters pass through untouched") {
    const json timing = {{"model", "future-model"}, {"nested", {{"a", {1, 2, 3}}}}, {"anything", "goes"}};
    const auto arch = ldmsim::Arch::from_json(with("/dma/timing", timing));
    CHECK(arch.dma.timing == timing);
    CHECK(arch.dma.timing_model() == "future-model");
    CHECK(arch.to_json()["dma"]["timing"] == timing);
  }
}

TEST_CASE("every rule is checked at its boundary and the error names the path", "[arch]") {
  SECTION("name") {
    check_rejects("/name", "", "name must be a non-empty string (got \"\")");
    check_rejects("/name", 5, "name must be a string (got 5)");
    check_accepts("/name", "x");
  }
  SECTION("clock_hz") {
    check_rejects("/clock_hz", 0, "clock_hz must be > 0 and finite (got 0)");
    check_rejects("/clock_hz", -1.0e9, "clock_hz must be > 0 and finite");
    check_rejects("/clock_hz", std::numeric_limits<double>::infinity(), "clock_hz must be > 0 and finite (got inf)");
    check_rejects("/clock_hz", std::nan(""), "clock_hz must be > 0 and finite (got nan)");
    check_rejects("/clock_hz", "1e9", "clock_hz must be a number (got \"1e9\")");
    check_accepts("/clock_hz", 1e-3);
  }
  SECTION("dma.remote") {
    check_rejects("/dma/remote/latency_cycles", -1, "dma.remote.latency_cycles must be in [0, 1e9] (got -1)");
    check_rejects("/dma/remote/bytes_per_cycle", "8", "dma.remote.bytes_per_cycle must be a number (got \"8\")");
    check_rejects("/dma/remote/bytes_per_cycle", 2e9, "dma.remote.bytes_per_cycle must be in [0, 1e9]");
    check_rejects("/dma/remote", 3, "dma.remote must be an object");
    check_accepts("/dma/remote/latency_cycles", 0);
    check_accepts("/dma/remote/bytes_per_cycle", 8.5);
    const ldmsim::Arch a =
        ldmsim::Arch::from_json(with("/dma/remote", {{"latency_cycles", 250}, {"bytes_per_cycle", 8}}));
    CHECK(a.dma.remote.latency_cycles == 250);
    CHECK(a.dma.remote.bytes_per_cycle == 8);
    CHECK(ldmsim::Arch::from_json(a.to_json()) == a);
    CHECK_THAT(error_of(with("/dma/remote/latency", 1)), Contains("latency"));
  }
  SECTION("core_groups.cores.register_communication") {
    check_rejects("/core_groups/cores/register_communication/buffer_entries", 0,
                  "core_groups.cores.register_communication.buffer_entries must be in 1..1024 (got 0)");
    check_rejects("/core_groups/cores/register_communication/latency_cycles", -1,
                  "core_groups.cores.register_communication.latency_cycles must be in 0..1000000000 (got -1)");
    check_rejects("/core_groups/cores/register_communication/latency", 3,
                  "unknown key core_groups.cores.register_communication.latency (allowed here: latency_cycles");
    check_accepts("/core_groups/cores/register_communication/get_cycles", 0);
    const auto arch = ldmsim::Arch::from_json(with("/core_groups/cores/register_communication", json::object()));
    CHECK(arch.register_comm == ldmsim::RegisterCommArch{true, 0, 1, 1, 4});  // present = available, defaults
    CHECK(ldmsim::Arch::from_json(arch.to_json()) == arch);
  }
  SECTION("core_groups.cores.rma") {
    check_rejects("/core_groups/cores/rma/cluster", 0, "core_groups.cores.rma.cluster must be in 1..32 (got 0)");
    check_rejects("/core_groups/cores/rma/bytes_per_cycle", 0, "core_groups.cores.rma.bytes_per_cycle");
    const auto arch = ldmsim::Arch::from_json(with("/core_groups/cores/rma", json{{"bytes_per_cycle", 8}}));
    CHECK(arch.rma == ldmsim::RmaArch{true, 0, 8, 8, 0, 0, 1});  // broadcast rate defaults to bytes_per_cycle
    CHECK(ldmsim::Arch::from_json(arch.to_json()) == arch);
    CHECK(ldmsim::Arch::preset("sw26010pro").rma == ldmsim::RmaArch{true, 61, 25.6, 15, 53, 4, 2});
    CHECK_FALSE(ldmsim::Arch::preset("sw26010").rma.available);
  }
  SECTION("core_groups.count") {
    check_rejects("/core_groups/count", 0, "core_groups.count must be in 1..64 (got 0)");
    check_rejects("/core_groups/count", -1, "core_groups.count must be in 1..64 (got -1)");
    check_accepts("/core_groups/count", 1);
    check_accepts("/core_groups/count", 64);
    check_rejects("/core_groups/count", 65, "core_groups.count must be in 1..64 (got 65)");
    check_rejects("/core_groups/count", 1.5, "core_groups.count must be an integer (got 1.5)");
    check_rejects("/core_groups/count", "4", "core_groups.count must be an integer (got \"4\")");
    check_rejects("/core_groups/count", true, "core_groups.count must be an integer (got true)");
    check_accepts("/core_groups/count", 4.0);  // an integral number is an integer
  }
  SECTION("core_groups.main_memory_bytes") {
    const std::uint64_t max = 1ull << 40;
    check_rejects("/core_groups/main_memory_bytes", 0,
                  "core_groups.main_memory_bytes must be a positive multiple of 4096 (got 0)");
    check_rejects("/core_groups/main_memory_bytes", 4095, "core_groups.main_memory_bytes must be a positive multiple");
    check_accepts("/core_groups/main_memory_bytes", 4096);
    check_rejects("/core_groups/main_memory_bytes", 4097, "core_groups.main_memory_bytes must be a positive multiple");
    check_accepts("/core_groups/main_memory_bytes", max);
    check_rejects("/core_groups/main_memory_bytes", max + 4096,
                  "core_groups.main_memory_bytes must be at most 2^40 (1099511627776) (got 1099511631872)");
    check_rejects("/core_groups/main_memory_bytes", -4096, "core_groups.main_memory_bytes must be a positive multiple");
    check_rejects("/core_groups/main_memory_bytes", 1e30, "core_groups.main_memory_bytes must be at most 2^40");
  }
  SECTION("core_groups.cores.rows and cols") {
    for (const std::string key : {"rows", "cols"}) {
      const std::string pointer = "/core_groups/cores/" + key;
      const std::string path = "core_groups.cores." + key;
      check_rejects(pointer, 0, path + " must be in 1..32 (got 0)");
      check_accepts(pointer, 1);
      check_accepts(pointer, 32);
      check_rejects(pointer, 33, path + " must be in 1..32 (got 33)");
      check_rejects(pointer, 2.5, path + " must be an integer (got 2.5)");
    }
  }
  SECTION("core_groups.cores.ldm_bytes") {
    check_rejects("/core_groups/cores/ldm_bytes", 0,
                  "core_groups.cores.ldm_bytes must be a positive multiple of 4 (got 0)");
    check_rejects("/core_groups/cores/ldm_bytes", 1026,
                  "core_groups.cores.ldm_bytes must be a positive multiple of 4 (got 1026)");
    check_rejects("/core_groups/cores/ldm_bytes", 1020,
                  "core_groups.cores.ldm_bytes must be in 1 KiB..16 MiB (1024..16777216) (got 1020)");
    check_accepts("/core_groups/cores/ldm_bytes", 1024);
    check_accepts("/core_groups/cores/ldm_bytes", 16 << 20);
    check_rejects("/core_groups/cores/ldm_bytes", (16 << 20) + 4,
                  "core_groups.cores.ldm_bytes must be in 1 KiB..16 MiB (1024..16777216) (got 16777220)");

    // The multiple follows dma.granularity_bytes.
    json tree = with("/dma/granularity_bytes", 64);
    tree["core_groups"]["cores"]["ldm_bytes"] = 1024 + 32;
    CHECK_THAT(error_of(tree), Contains("core_groups.cores.ldm_bytes must be a positive multiple of 64 (got 1056)"));
    tree["core_groups"]["cores"]["ldm_bytes"] = 1024 + 64;
    CHECK(error_of(tree).empty());
  }
  SECTION("core_groups.cores.flops_per_cycle") {
    check_rejects("/core_groups/cores/flops_per_cycle", 0,
                  "core_groups.cores.flops_per_cycle must be > 0 and finite (got 0)");
    check_rejects("/core_groups/cores/flops_per_cycle", -2, "core_groups.cores.flops_per_cycle must be > 0");
    check_rejects("/core_groups/cores/flops_per_cycle", "8", "core_groups.cores.flops_per_cycle must be a number");
    check_accepts("/core_groups/cores/flops_per_cycle", 0.001);
    check_rejects("/core_groups/cores/flops_per_cycle", 1e-300,
                  "core_groups.cores.flops_per_cycle must be in [1/4096, 1000000] per cycle (got 1e-300)");
    check_accepts("/core_groups/cores/flops_per_cycle", 16);
  }
  SECTION("core_groups.cores.context_switch_cycles") {
    check_rejects("/core_groups/cores/context_switch_cycles", -1,
                  "core_groups.cores.context_switch_cycles must be in 0..4294967295 (got -1)");
    check_rejects("/core_groups/cores/context_switch_cycles", "128",
                  "core_groups.cores.context_switch_cycles must be an integer");
    check_accepts("/core_groups/cores/context_switch_cycles", 0);
    const ldmsim::Arch a = ldmsim::Arch::from_json(with("/core_groups/cores/context_switch_cycles", 77));
    CHECK(a.context_switch_cycles == 77);
    CHECK(ldmsim::Arch::from_json(a.to_json()) == a);
    CHECK(ldmsim::Arch::preset("sw26010").context_switch_cycles == 128);
    CHECK(ldmsim::Arch::preset("sw26010pro").context_switch_cycles == 128);
    json absent = ldmsim::Arch::preset("tiny").to_json();
    absent["core_groups"]["cores"].erase("context_switch_cycles");
    CHECK(ldmsim::Arch::from_json(absent).context_switch_cycles == 0);
  }
  SECTION("core_groups.cores.barrier_cycles") {
    check_rejects("/core_groups/cores/barrier_cycles", -1,
                  "core_groups.cores.barrier_cycles must be in 0..4294967295 (got -1)");
    check_accepts("/core_groups/cores/barrier_cycles", 0);
    check_accepts("/core_groups/cores/barrier_cycles", 4294967295ull);
    check_rejects("/core_groups/cores/barrier_cycles", 4294967296ull,
                  "core_groups.cores.barrier_cycles must be in 0..4294967295 (got 4294967296)");
    check_rejects("/core_groups/cores/barrier_cycles", 0.5, "core_groups.cores.barrier_cycles must be an integer");
  }
  SECTION("dma.granularity_bytes") {
    check_rejects("/dma/granularity_bytes", 0, "dma.granularity_bytes must be a power of two in 1..64 (got 0)");
    check_accepts("/dma/granularity_bytes", 1);
    check_accepts("/dma/granularity_bytes", 2);
    check_rejects("/dma/granularity_bytes", 3, "dma.granularity_bytes must be a power of two in 1..64 (got 3)");
    check_accepts("/dma/granularity_bytes", 64);
    check_rejects("/dma/granularity_bytes", 128, "dma.granularity_bytes must be a power of two in 1..64 (got 128)");
    check_rejects("/dma/granularity_bytes", "4", "dma.granularity_bytes must be an integer");
  }
  SECTION("dma.transaction_bytes") {
    const std::string rule = "dma.transaction_bytes must be a power of two, at least dma.granularity_bytes (4)";
    check_rejects("/dma/transaction_bytes", 2, rule + " and at most 2^16 (got 2)");
    check_accepts("/dma/transaction_bytes", 4);
    check_rejects("/dma/transaction_bytes", 96, rule + " and at most 2^16 (got 96)");
    check_accepts("/dma/transaction_bytes", 1ull << 16);
    check_rejects("/dma/transaction_bytes", 1ull << 17, rule + " and at most 2^16 (got 131072)");
    check_rejects("/dma/transaction_bytes", 1ull << 31, rule);

    json tree = with("/dma/granularity_bytes", 16);
    tree["dma"]["transaction_bytes"] = 8;
    CHECK_THAT(error_of(tree), Contains("dma.transaction_bytes must be a power of two, at least dma.granularity_bytes "
                                        "(16) and at most 2^16 (got 8)"));
    tree["dma"]["transaction_bytes"] = 16;
    CHECK(error_of(tree).empty());
  }
  SECTION("dma.fields") {
    for (const std::string key : {"length_bits", "bsize_bits", "stride_bits"}) {
      const std::string pointer = "/dma/fields/" + key;
      const std::string path = "dma.fields." + key;
      check_rejects(pointer, 0, path + " must be in 1..32 (got 0)");
      check_accepts(pointer, 1);
      check_accepts(pointer, 32);
      check_rejects(pointer, 33, path + " must be in 1..32 (got 33)");
      check_rejects(pointer, nullptr, path + " must be an integer (got null)");
    }
    check_rejects("/dma/fields", 20, "dma.fields must be an object (got 20)");
  }
  SECTION("dma.timing") {
    check_rejects("/dma/timing", "ideal", "dma.timing must be an object with a string \"model\" (got \"ideal\")");
    check_rejects("/dma/timing", json::object(), "missing required key dma.timing.model");
    check_rejects("/dma/timing", json{{"model", 3}}, "dma.timing.model must be a string (got 3)");
    check_rejects("/dma/timing", json{{"model", ""}}, "dma.timing.model must be a non-empty string");
    check_accepts("/dma/timing", json{{"model", "ideal"}});
  }
  SECTION("objects") {
    CHECK_THAT(error_of(json::array()), Contains("t.json: the arch config must be a JSON object (got [])"));
    check_rejects("/core_groups", 4, "core_groups must be an object (got 4)");
    check_rejects("/core_groups/cores", json::array({8, 8}), "core_groups.cores must be an object (got [8,8])");
    check_rejects("/dma", nullptr, "dma must be an object (got null)");
    check_accepts("/dma", json::object());
  }
  SECTION("required keys") {
    for (const std::string path :
         {"name", "clock_hz", "core_groups", "core_groups.count", "core_groups.main_memory_bytes", "core_groups.cores",
          "core_groups.cores.rows", "core_groups.cores.cols", "core_groups.cores.ldm_bytes"}) {
      std::string pointer = "/" + path;
      std::replace(pointer.begin(), pointer.end(), '.', '/');
      INFO(path);
      CHECK_THAT(error_of(without(minimal_tree(), pointer)), Contains("t.json: missing required key " + path));
    }
  }
  SECTION("the origin prefixes every message") {
    REQUIRE_THROWS_WITH(ldmsim::Arch::from_json(with("/core_groups/cores/ldm_bytes", 0), "sw26010.json"),
                        "sw26010.json: core_groups.cores.ldm_bytes must be a positive multiple of 4 (got 0)");
    REQUIRE_THROWS_AS(ldmsim::Arch::from_json(with("/clock_hz", 0)), ldmsim::ConfigError);
  }
}

TEST_CASE("unknown keys are errors, with a did-you-mean when close", "[arch]") {
  json tree = minimal_tree();
  tree["dma"] = {{"timng", {{"model", "ideal"}}}};
  REQUIRE_THROWS_WITH(ldmsim::Arch::from_json(tree, "t.json"),
                      "t.json: unknown key dma.timng (did you mean dma.timing?)");

  CHECK_THAT(error_of(with("/Name", "x")), Contains("unknown key Name (did you mean name?)"));
  CHECK_THAT(error_of(with("/core_groups/cores/ldm_byte", 4096)),
             Contains("unknown key core_groups.cores.ldm_byte (did you mean core_groups.cores.ldm_bytes?)"));
  // A known key at the wrong level points at where it belongs.
  CHECK_THAT(error_of(with("/core_groups/ldm_bytes", 4096)),
             Contains("unknown key core_groups.ldm_bytes (did you mean core_groups.cores.ldm_bytes?)"));
  // Nothing close: the allowed keys are listed.
  CHECK_THAT(error_of(with("/dma/fields/frobnicate", 1)),
             Contains("unknown key dma.fields.frobnicate (allowed here: length_bits, bsize_bits, stride_bits)"));
  // Keys of the timing model are not ours to judge.
  check_accepts("/dma/timing", json{{"model", "ideal"}, {"frobnicate", 1}});
}

TEST_CASE("arch files: load, errors naming the file, JSON syntax errors with line and column", "[arch]") {
  const TempDir dir;

  SECTION("a valid file loads like the preset it copies") {
    const auto file = dir.write("copy.json", ldmsim::Arch::preset("sw26010pro").to_json().dump(2));
    CHECK(ldmsim::Arch::load(file) == ldmsim::Arch::preset("sw26010pro"));
  }
  SECTION("validation errors name the file") {
    const auto file = dir.write("bad.json", with("/core_groups/cores/rows", 0).dump(2));
    REQUIRE_THROWS_WITH(ldmsim::Arch::load(file), file.string() + ": core_groups.cores.rows must be in 1..32 (got 0)");
  }
  SECTION("syntax errors name the file, line and column") {
    const auto file = dir.write("syntax.json", "{\n  \"name\": \"x\",\n  \"clock_hz\": 1e9,\n}\n");
    REQUIRE_THROWS_AS(ldmsim::Arch::load(file), ldmsim::ConfigError);
    REQUIRE_THROWS_WITH(ldmsim::Arch::load(file),
                        Contains(file.string() + ": invalid JSON at line 4, column 1") && Contains("syntax error"));
    const auto empty = dir.write("empty.json", "");
    REQUIRE_THROWS_WITH(ldmsim::Arch::load(empty), Contains(empty.string() + ": invalid JSON at line 1, column 1"));
    const auto overflow = dir.write("overflow.json", R"({"name": "x", "clock_hz": 1e999})");
    REQUIRE_THROWS_WITH(ldmsim::Arch::load(overflow), Contains(overflow.string() + ": invalid JSON"));
  }
  SECTION("a missing file or a directory") {
    const auto missing = dir.path() / "missing.json";
    REQUIRE_THROWS_WITH(ldmsim::Arch::load(missing),
                        Contains(missing.string() + ": cannot open arch file") && Contains("No such file"));
    REQUIRE_THROWS_WITH(ldmsim::Arch::load(dir.path()), Contains(dir.path().string() + ": is a directory"));
  }
}

TEST_CASE("resolve: a preset name, else a file path", "[arch]") {
  const TempDir dir;
  CHECK(ldmsim::Arch::resolve("tiny") == ldmsim::Arch::preset("tiny"));

  json tree = ldmsim::Arch::preset("tiny").to_json();
  tree["name"] = "mine";
  tree["core_groups"]["count"] = 3;
  const auto file = dir.write("mine.json", tree.dump());
  const auto arch = ldmsim::Arch::resolve(file.string());
  CHECK(arch.name == "mine");
  CHECK(arch.core_groups == 3);

  REQUIRE_THROWS_WITH(ldmsim::Arch::resolve("nonsense"),
                      "unknown arch 'nonsense': not a preset (sw26010, sw26010pro, tiny) and no such file");
  REQUIRE_THROWS_WITH(ldmsim::Arch::resolve("Tiny"),
                      "unknown arch 'Tiny': not a preset (sw26010, sw26010pro, tiny) and no such file "
                      "(did you mean tiny?)");
  REQUIRE_THROWS_AS(ldmsim::Arch::resolve(""), ldmsim::ConfigError);
  REQUIRE_THROWS_WITH(ldmsim::Arch::resolve((dir.path() / "nope.json").string()), Contains("no such file"));
}

TEST_CASE("a DMA arch's channels: the timing model's when a number, at least 1, else 1", "[arch]") {
  CHECK(ldmsim::Arch::preset("sw26010pro").dma.channels() == 8);
  CHECK(ldmsim::Arch::preset("sw26010").dma.channels() == 1);
  ldmsim::DmaArch dma;  // the ideal model has no channels
  CHECK(dma.channels() == 1);
  dma.timing = {{"model", "custom"}, {"channels", 3}};
  CHECK(dma.channels() == 3);
  dma.timing["channels"] = 0;  // never fewer than one
  CHECK(dma.channels() == 1);
  dma.timing["channels"] = "many";  // a registered model may use the name for something else
  CHECK(dma.channels() == 1);
}
