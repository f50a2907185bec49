// Hostile input against the output rules (docs/user-guide.md, "Output files"): no output of a command replaces one
// of its own inputs, a run directory has one owner at a time (its lock), a failed run leaves no directory it made,
// later runs remove what killed runs left, and bad input that used to pass (or be clamped) is exit 2.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_support.hpp"
#include "ldmsim/frontends/npy.hpp"
#include "ldmsim/session/directory_lock.hpp"
#include "support/onnx_wire.hpp"

using namespace ldmsim::testing;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

/// x [2, 3] from `init` (a {"file": ...} or seeded), relu, output `output`.
std::string relu_workload(const nlohmann::json& init, const std::string& output = "y") {
  return nlohmann::json{{"name", "own"},
                        {"tensors", {{"x", {{"shape", {2, 3}}, {"init", init}}}}},
                        {"ops", {{{"type", "relu"}, {"inputs", {"x"}}, {"outputs", {output}}}}},
                        {"outputs", {output}}}
      .dump();
}

const nlohmann::json kSeeded = {{"uniform", {-1, 1}}, {"seed", 3}};

}  // namespace

TEST_CASE("no output of a command replaces one of its inputs", "[cli][hostile][outputs]") {
  ScratchDir dir("own-inputs");
  const fs::path w = dir.path / "w.json";
  const std::string workload = relu_workload(kSeeded);
  write_text(w, workload);

  SECTION("run --trace onto the workload, plan --json-file onto it") {
    CliResult r = run_cli(fmt::format("run {} --out {} --trace {}", w.string(), dir.str("out"), w.string()));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("an input of this command"));
    CHECK(read_file(w) == workload);
    r = run_cli(fmt::format("plan {} --json-file {}", w.string(), w.string()));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("an input of this command"));
    CHECK(read_file(w) == workload);
    // A hard link is the same file under another name.
    fs::create_hard_link(w, dir.path / "link.json");
    r = run_cli(fmt::format("run {} --out {} --trace {}", w.string(), dir.str("out"), dir.str("link.json")));
    CHECK(r.code == 2);
    CHECK(read_file(w) == workload);
  }

  SECTION("a workload in --out named like a file the run writes") {
    fs::create_directories(dir.path / "out");
    for (const char* name : {"stats.json", "host_times.json", "y.npy", "RUN_INCOMPLETE"}) {
      const fs::path inside = dir.path / "out" / name;
      write_text(inside, workload);
      const CliResult r = run_cli(fmt::format("run {} --out {} --no-trace", inside.string(), dir.str("out")));
      INFO(name << ": " << r.output);
      CHECK(r.code == 2);
      CHECK_THAT(r.output, Contains("an input of this command"));
      CHECK(read_file(inside) == workload);
      fs::remove(inside);
    }
  }

  SECTION("an output named like a .npy the workload reads, in the same directory") {
    ldmsim::write_npy(dir.path / "in.npy", {2, 3}, std::vector<float>{1, -2, 3, -4, 5, -6});
    const std::string before = read_file(dir.path / "in.npy");
    nlohmann::json reads = nlohmann::json::parse(relu_workload({{"file", "in.npy"}}, "in"));
    reads["tensors"]["x"]["dtype"] = "f32";
    write_text(w, reads.dump());
    const CliResult r = run_cli(fmt::format("run {} --out {} --no-trace", w.string(), dir.str()));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("in.npy") && Contains("an input of this command"));
    CHECK(read_file(dir.path / "in.npy") == before);
  }

  SECTION("trace export and report onto the run's own trace or stats") {
    REQUIRE(run_cli(fmt::format("run {} --out {}", w.string(), dir.str("run"))).code == 0);
    const std::string trace = read_file(dir.path / "run" / "trace.ldmtrace");
    const std::string stats = read_file(dir.path / "run" / "stats.json");
    for (const std::string& command :
         {fmt::format("trace export {} -o {}", dir.str("run"), dir.str("run/trace.ldmtrace")),
          fmt::format("report {} -o {}", dir.str("run"), dir.str("run/trace.ldmtrace")),
          fmt::format("report {} -o {}", dir.str("run"), dir.str("run/stats.json")),
          fmt::format("trace filter {} -o {}", dir.str("run/trace.ldmtrace"), dir.str("run/trace.ldmtrace"))}) {
      const CliResult r = run_cli(command);
      INFO(command << ": " << r.output);
      CHECK(r.code == 2);
      CHECK_THAT(r.output, Contains("an input of this command"));
    }
    CHECK(read_file(dir.path / "run" / "trace.ldmtrace") == trace);
    CHECK(read_file(dir.path / "run" / "stats.json") == stats);
  }
}

TEST_CASE("a run directory has one owner: a second run is refused naming the first", "[cli][hostile][outputs]") {
  ScratchDir dir("own-lock");
  const fs::path w = dir.path / "w.json";
  write_text(w, relu_workload(kSeeded));
  const fs::path out = dir.path / "out";
  fs::create_directories(out);

  SECTION("a held lock refuses the run, which then leaves the directory as it was") {
    write_text(out / "RUN_INCOMPLETE", "{\"workload\": \"first\"}\n");  // the owner's marker
    const int fd = ::open((out / ".ldmsim-run.lock").c_str(), O_RDWR | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    const std::string holder = "pid 4242, workload first, since 2026-01-01 00:00:00 UTC\n";
    REQUIRE(::write(fd, holder.data(), holder.size()) == static_cast<ssize_t>(holder.size()));
    REQUIRE(::flock(fd, LOCK_EX) == 0);
    CliResult r = run_cli(fmt::format("run {} --out {}", w.string(), out.string()));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("another ldmsim process owns this directory") && Contains("pid 4242"));
    CHECK(read_file(out / "RUN_INCOMPLETE") == "{\"workload\": \"first\"}\n");
    CHECK_FALSE(fs::exists(out / "stats.json"));
    ::close(fd);  // the owner is gone: the directory is free again
    fs::remove(out / "RUN_INCOMPLETE");
    r = run_cli(fmt::format("run {} --out {}", w.string(), out.string()));
    CHECK(r.code == 0);
    CHECK(fs::exists(out / "stats.json"));
    CHECK_FALSE(fs::exists(out / "RUN_INCOMPLETE"));
  }

  SECTION("a run in progress names itself to a second one") {
    nlohmann::json ops = nlohmann::json::array();
    std::string prev = "x";
    for (int i = 0; i < 40; ++i) {
      ops.push_back(
          {{"type", i % 2 == 0 ? "relu" : "sigmoid"}, {"inputs", {prev}}, {"outputs", {fmt::format("t{}", i)}}});
      prev = fmt::format("t{}", i);
    }
    write_text(dir.path / "long.json",
               nlohmann::json{{"name", "long"},
                              {"tensors", {{"x", {{"shape", {16, 64, 56, 56}}, {"init", {{"value", 1}}}}}}},
                              {"ops", ops},
                              {"outputs", {prev}}}
                   .dump());
    // The first run starts in the background; once its marker exists it owns the directory.
    const CliResult r = shell(fmt::format(
        "'{0}' run {1} --out {2} --no-trace >/dev/null 2>&1 & pid=$!; "
        "for i in $(seq 1 2000); do [ -e {2}/RUN_INCOMPLETE ] && break; sleep 0.01; done; "
        "'{0}' run {3} --out {2} --no-trace 2>&1; echo \"second=$? first=$pid\"; kill -TERM $pid; wait $pid",
        LDMSIM_CLI, dir.str("long.json"), out.string(), w.string()));
    INFO(r.output);
    CHECK_THAT(r.output, Contains("another ldmsim process owns this directory") && Contains("workload long"));
    const auto first = r.output.find("first=");
    REQUIRE(first != std::string::npos);
    const std::string pid = r.output.substr(first + 6, r.output.find_first_not_of("0123456789", first + 6) - first - 6);
    CHECK_THAT(r.output, Contains("second=2") && Contains("pid " + pid));
  }
}

TEST_CASE("a command writing into a run directory takes the run's lock: none writes while a run owns it",
          "[cli][hostile][outputs]") {
  ScratchDir dir("own-lock-writers");
  const fs::path w = dir.path / "w.json";
  write_text(w, relu_workload(kSeeded));
  const fs::path run = dir.path / "run";
  REQUIRE(run_cli(fmt::format("run {} --out {}", w.string(), run.string())).code == 0);
  const fs::path lock_file = run / ".ldmsim-run.lock";
  REQUIRE(fs::exists(lock_file));
  const std::vector<std::pair<std::string, fs::path>> writers = {
      {fmt::format("report {} -o {}", run.string(), (run / "report.html").string()), run / "report.html"},
      {fmt::format("trace export {} -o {}", run.string(), (run / "t.json").string()), run / "t.json"},
      {fmt::format("trace filter {} -o {}", (run / "trace.ldmtrace").string(), (run / "f.ldmtrace").string()),
       run / "f.ldmtrace"},
      {fmt::format("plan {} --json-file {}", w.string(), (run / "plan.json").string()), run / "plan.json"}};

  SECTION("a run holding the lock refuses them, naming itself; once it is gone they write") {
    const int fd = ::open(lock_file.c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    const std::string holder = "pid 4242, workload first, since 2026-01-01 00:00:00 UTC\n";
    REQUIRE(::ftruncate(fd, 0) == 0);
    REQUIRE(::write(fd, holder.data(), holder.size()) == static_cast<ssize_t>(holder.size()));
    REQUIRE(::flock(fd, LOCK_EX) == 0);
    for (const auto& [command, output] : writers) {
      const CliResult r = run_cli(command);
      INFO(command << ": " << r.output);
      CHECK(r.code == 2);
      CHECK_THAT(r.output,
                 Contains("another ldmsim process owns this directory") && Contains("pid 4242, workload first"));
      CHECK_FALSE(fs::exists(output));
    }
    ::close(fd);  // the run is gone
    for (const auto& [command, output] : writers) {
      const CliResult r = run_cli(command);
      INFO(command << ": " << r.output);
      CHECK(r.code == 0);
      CHECK(fs::exists(output));
    }
    CHECK(read_file(lock_file).empty());  // each writer left no holder text behind
  }

  SECTION("while a writer holds the lock, a run is refused naming it") {
    {
      const ldmsim::DirectoryLock held = ldmsim::lock_run_directory_of(run / "report.html", "ldmsim report", "-o");
      REQUIRE(held.held());
      CHECK_THAT(read_file(lock_file), Contains(fmt::format("pid {}, ldmsim report, since ", ::getpid())));
      const CliResult r = run_cli(fmt::format("run {} --out {}", w.string(), run.string()));
      CHECK(r.code == 2);
      CHECK_THAT(r.output, Contains("another ldmsim process owns this directory") && Contains("ldmsim report"));
    }
    CHECK(read_file(lock_file).empty());
    CHECK(run_cli(fmt::format("run {} --out {}", w.string(), run.string())).code == 0);
  }

  SECTION("the lock file itself is never an output; a directory without one is not locked") {
    const CliResult r = run_cli(fmt::format("report {} -o {}", run.string(), lock_file.string()));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("the lock file of a run directory"));
    REQUIRE(run_cli(fmt::format("report {} -o {}", run.string(), dir.str("plain.html"))).code == 0);
    CHECK_FALSE(fs::exists(dir.path / ".ldmsim-run.lock"));
  }
}

TEST_CASE("a failed run leaves no directory it made, and later runs remove temporaries of killed ones",
          "[cli][hostile][outputs]") {
  ScratchDir dir("own-leftovers");
  // On tiny (64 MiB per core group) x and y fit alone (40 MB each) but not together: the run fails (exit 2) when
  // it allocates y, after the run directory was set up.
  const std::string too_big = nlohmann::json{
      {"name", "big"},
      {"arch", "tiny"},
      {"tensors", {{"x", {{"shape", {20000000}}, {"init", {{"value", 1}}}}}}},
      {"ops", {{{"type", "relu"}, {"inputs", {"x"}}, {"outputs", {"y"}}}}},
      {"outputs", {"y"}}}.dump();
  write_text(dir.path / "big.json", too_big);

  SECTION("fresh --out: removed again, with a message naming the tensor and the op") {
    const CliResult r = run_cli(fmt::format("run {} --out {}", dir.str("big.json"), dir.str("fresh")));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("cannot allocate") && Contains("'y'") && Contains("relu"));
    CHECK_FALSE(fs::exists(dir.path / "fresh"));
  }

  SECTION("an existing --out keeps the marker: its files are not this run's results") {
    fs::create_directories(dir.path / "old");
    write_text(dir.path / "old" / "keep.txt", "mine");
    const CliResult r = run_cli(fmt::format("run {} --out {}", dir.str("big.json"), dir.str("old")));
    CHECK(r.code == 2);
    CHECK(fs::exists(dir.path / "old" / "RUN_INCOMPLETE"));
    CHECK(read_file(dir.path / "old" / "keep.txt") == "mine");
  }

  SECTION("temporaries of a killed process are removed, a live process's kept") {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    REQUIRE(child > 0);
    REQUIRE(::waitpid(child, nullptr, 0) == child);  // now a pid of no process
    const fs::path out = dir.path / "out";
    fs::create_directories(out);
    const fs::path dead = out / fmt::format(".stats.json.tmp-{}-7", child);
    const fs::path live = out / fmt::format(".y.npy.tmp-{}-0", ::getpid());
    write_text(dead, "half");
    write_text(live, "being written");
    write_text(dir.path / "w.json", relu_workload(kSeeded));
    const CliResult r = run_cli(fmt::format("run {} --out {}", dir.str("w.json"), out.string()));
    CHECK(r.code == 0);
    CHECK_FALSE(fs::exists(dead));
    CHECK(fs::exists(live));
  }
}

TEST_CASE("bad input that passed or was clamped is exit 2", "[cli][hostile]") {
  ScratchDir dir("own-bad");
  write_text(dir.path / "w.json", relu_workload(kSeeded));

  SECTION("--trace '' and trace filter --to 2^64") {
    CliResult r = run_cli(fmt::format("run {} --out {} --trace ''", dir.str("w.json"), dir.str("out")));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("--trace: empty path"));
    REQUIRE(run_cli(fmt::format("run {} --out {}", dir.str("w.json"), dir.str("out"))).code == 0);
    r = run_cli(fmt::format("trace filter {} -o {} --to 18446744073709551616", dir.str("out/trace.ldmtrace"),
                            dir.str("f.ldmtrace")));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("18446744073709551616 is too large"));
    CHECK_FALSE(fs::exists(dir.path / "f.ldmtrace"));
  }

  SECTION("messages name the culprit: a trace header's types, a --stats that is a device") {
    const std::string damaged = std::string(LDMSIM_SOURCE_DIR) + "/tests/fuzz/corpus-regressions/header-arch-null";
    CliResult r = run_cli("trace summary " + damaged);
    CHECK(r.code == 2);
    CHECK_THAT(r.output,
               Contains("invalid header JSON at byte 16") && Contains("\"arch\" must be an object, not null"));
    REQUIRE(run_cli(fmt::format("run {} --out {}", dir.str("w.json"), dir.str("run"))).code == 0);
    r = run_cli(fmt::format("trace summary {} --stats /dev/zero", dir.str("run")));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("/dev/zero: is a character device"));
  }

  SECTION("plan refuses what run refuses") {
    const auto lstm = [](const nlohmann::json& attrs) {
      return nlohmann::json{
          {"name", "cell"},
          {"tensors",
           {{"x", {{"shape", {2, 1, 4}}, {"init", kSeeded}}},
            {"w", {{"shape", {1, 16, 4}}, {"init", kSeeded}}},
            {"r", {{"shape", {1, 16, 4}}, {"init", kSeeded}}}}},
          {"ops", {{{"type", "lstm"}, {"inputs", {"x", "w", "r"}}, {"outputs", {"y", "yh", "yc"}}, {"attrs", attrs}}}},
          {"outputs", {"y"}}}
          .dump();
    };
    const std::vector<std::pair<std::string, std::string>> cases = {
        {lstm({{"groups", 1000}}), "groups 1000 is more than the 4 core groups"},
        {lstm({{"ep", 1048576}}), "ep 1048576 is more than the 64 cores"},
        {nlohmann::json{{"name", "huge"},
                        {"tensors", {{"x", {{"shape", {40000000}}, {"init", {{"value", 1}}}}}}},
                        {"ops", {{{"type", "relu"}, {"inputs", {"x"}}, {"outputs", {"y"}}}}},
                        {"outputs", {"y"}}}
             .dump(),
         "more than the 67108864 bytes of main memory"},
    };
    for (const auto& [workload, message] : cases) {
      write_text(dir.path / "c.json", workload);
      const std::string arch = message.find("main memory") != std::string::npos ? "tiny" : "sw26010";
      for (const char* command : {"plan", "run"}) {
        const CliResult r = run_cli(fmt::format("{} {} --arch {} {}", command, dir.str("c.json"), arch,
                                                std::string(command) == "run" ? "--out " + dir.str("o") : ""));
        INFO(command << " " << message << ": " << r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Contains(message));
      }
    }
  }

  SECTION("ONNX: conv kernel_shape against its weights, an input declared twice, no outputs") {
    using ldmsim::test::Message;
    const auto save = [&](const std::string& name, const Message& graph) {
      write_text(dir.path / name, ldmsim::test::model(graph).bytes);
      return run_cli(fmt::format("import {} -o {}", dir.str(name), dir.str("imported")));
    };
    Message conv;
    conv.message(1,
                 ldmsim::test::node("Conv", {"x", "w"}, "y", {ldmsim::test::ints_attribute("kernel_shape", {5, 5})}));
    conv.bytes_field(2, "g");
    conv.message(5, ldmsim::test::zero_tensor("w", {2, 1, 3, 3}));
    conv.message(11, ldmsim::test::value_info("x", {1, 1, 8, 8}));
    conv.message(12, ldmsim::test::value_info("y", {1, 2, 6, 6}));
    CliResult r = save("conv.onnx", conv);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("kernel_shape [5, 5] disagrees with the weights 'w'"));

    // y = Relu(x) with the given graph inputs and outputs (GraphProto fields 11 and 12).
    const auto relu = [](const std::vector<Message>& inputs, const std::vector<Message>& outputs) {
      Message g;
      g.message(1, ldmsim::test::node("Relu", {"x"}, "y")).bytes_field(2, "g");
      for (const Message& i : inputs) g.message(11, i);
      for (const Message& o : outputs) g.message(12, o);
      return g;
    };
    const Message y = ldmsim::test::value_info("y", {1, 4});
    r = save("twice.onnx", relu({ldmsim::test::value_info("x", {1, 4}), ldmsim::test::value_info("x", {1, 8})}, {y}));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("graph input 'x' is declared twice"));
    r = save("none.onnx", relu({ldmsim::test::value_info("x", {1, 4})}, {}));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("the graph has no outputs"));
    r = save("messages.onnx",
             relu({ldmsim::test::value_info("x", {1, -5}), ldmsim::test::value_info("z", {1, 4}, 999)}, {y}));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("dimension 1 is -5 (dimensions must be positive)"));
    CHECK_THAT(r.output, Contains("element type 999 (not an ONNX element type)"));
  }
}

TEST_CASE("a trace spill that cannot be written is the host's error (exit 2), not a fault of the program",
          "[cli][hostile]") {
  ScratchDir dir("own-spill");
  // 40 relus one launch each on tiny, 2 MiB each: about 10,000 DMA requests, more than a 4096-event chunk.
  nlohmann::json ops = nlohmann::json::array();
  std::string prev = "x";
  for (int i = 0; i < 40; ++i) {
    ops.push_back({{"type", "relu"}, {"inputs", {prev}}, {"outputs", {fmt::format("t{}", i)}}});
    prev = fmt::format("t{}", i);
  }
  write_text(dir.path / "w.json", nlohmann::json{{"name", "spill"},
                                                 {"tensors", {{"x", {{"shape", {4, 64, 64, 64}}, {"init", kSeeded}}}}},
                                                 {"ops", ops},
                                                 {"outputs", {prev}}}
                                      .dump());
  fs::create_directories(dir.path / "spill");
  // A file-size limit below one spilled chunk (128 KiB) makes the first spill write fail as a full disk would.
  const CliResult r = shell(
      fmt::format("trap '' XFSZ; ulimit -f 64; '{}' run {} --arch tiny --fusion off --out {} --trace-spill-dir {} 2>&1",
                  LDMSIM_CLI, dir.str("w.json"), dir.str("out"), dir.str("spill")));
  INFO(r.output);
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("trace spill file in") && Contains("spill"));
  CHECK_THAT(r.output, !Contains("kernel-exception") && !Contains("trapped"));
  CHECK_FALSE(fs::exists(dir.path / "out" / "stats.json"));
}

TEST_CASE("host memory is bounded before anything large is allocated", "[cli][hostile]") {
  ScratchDir dir("own-memory");
  using ldmsim::test::Message;

  SECTION("a workload whose tensors would not fit the host's memory") {
    write_text(dir.path / "big.json",
               nlohmann::json{{"name", "big"},
                              {"tensors", {{"x", {{"shape", {2147483648u}}, {"init", {{"value", 1}}}}}}},
                              {"ops", {{{"type", "relu"}, {"inputs", {"x"}}, {"outputs", {"y"}}}}},
                              {"outputs", {"y"}}}
                   .dump());
    const CliResult r = shell(fmt::format("LDMSIM_HOST_MEMORY_BYTES=1000000000 '{}' run {} --out {} 2>&1", LDMSIM_CLI,
                                          dir.str("big.json"), dir.str("out")));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("workload 'big' needs up to") && Contains("LDMSIM_HOST_MEMORY_BYTES"));
    CHECK_FALSE(fs::exists(dir.path / "out"));
    // `plan` refuses it with the same message.
    const CliResult plan =
        shell(fmt::format("LDMSIM_HOST_MEMORY_BYTES=1000000000 '{}' plan {} 2>&1", LDMSIM_CLI, dir.str("big.json")));
    CHECK(plan.code == 2);
    CHECK(plan.output == r.output);
  }

  SECTION("ONNX: import, plan and run bound the parse of the model by the host's memory alike") {
    // 100000 empty nodes: 200 KB in the file, over 15 MB parsed.
    Message g;
    g.bytes_field(2, "g");
    for (int i = 0; i < 100000; ++i) g.bytes_field(1, "");
    g.message(11, ldmsim::test::value_info("x", {1, 4}));
    write_text(dir.path / "nodes.onnx", ldmsim::test::model(g).bytes);
    std::string first;
    for (const std::string& command : {fmt::format("import {} -o {}", dir.str("nodes.onnx"), dir.str("o")),
                                       fmt::format("plan {}", dir.str("nodes.onnx")),
                                       fmt::format("run {} --out {}", dir.str("nodes.onnx"), dir.str("o"))}) {
      const CliResult r = shell(fmt::format("LDMSIM_HOST_MEMORY_BYTES=10000000 '{}' {} 2>&1", LDMSIM_CLI, command));
      INFO(command);
      CHECK(r.code == 2);
      CHECK_THAT(r.output, Contains(dir.str("nodes.onnx") + ": parsed, this model would take up to") &&
                               Contains("allowed by LDMSIM_HOST_MEMORY_BYTES") &&
                               Contains("the largest part is graph 'g' node: 100000 messages"));
      if (first.empty()) first = r.output;
      CHECK(r.output == first);
    }
    CHECK_FALSE(fs::exists(dir.path / "o"));
  }

  SECTION("ONNX: packed integers and dims are counted before protobuf parses them") {
    const auto model_with = [](const Message& initializer) {
      Message g;
      g.message(1, ldmsim::test::node("Relu", {"x"}, "y"));
      g.bytes_field(2, "g");
      g.message(5, initializer);
      g.message(11, ldmsim::test::value_info("x", {1, 4}));
      g.message(12, ldmsim::test::value_info("y", {1, 4}));
      return ldmsim::test::model(g).bytes;
    };
    // An unused INT64 initializer of 2^25 + 1 zeros: 32 MiB in the file, 256 MiB and more once parsed (512 MiB
    // counting the capacity of a growing array): more than 4 times the file plus 256 MiB.
    Message ints;
    ints.varint_field(1, (std::uint64_t{1} << 25) + 1).varint_field(2, 7).bytes_field(8, "big");
    ints.bytes_field(7, std::string((std::size_t{1} << 25) + 1, '\0'));
    write_text(dir.path / "ints.onnx", model_with(ints));
    CliResult r = run_cli(fmt::format("import {} -o {}", dir.str("ints.onnx"), dir.str("o")));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("graph 'g' initializer 'big' int64_data: 33554433 values") &&
                             Contains("the most an import may take for a file of"));
    // Packed dims: a thousand of them, refused as a rank, not parsed.
    Message dims;
    dims.bytes_field(1, std::string(1000, '\x01')).varint_field(2, 1).bytes_field(8, "d");
    write_text(dir.path / "dims.onnx", model_with(dims));
    r = run_cli(fmt::format("import {} -o {}", dir.str("dims.onnx"), dir.str("o")));
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("initializer 0 has rank 1000 (at most 8)"));
  }
}

TEST_CASE("names from user files reach the terminal with their control characters escaped", "[cli][hostile]") {
  ScratchDir dir("own-escape");
  const std::string evil = "a\x1b]0;owned\x07\x1b[2Jb";
  write_text(dir.path / "w.json",
             nlohmann::json{{"name", "esc"},
                            {"tensors", {{"x", {{"shape", {2, 3}}, {"init", kSeeded}}}}},
                            {"ops", {{{"type", "relu"}, {"name", evil}, {"inputs", {"x"}}, {"outputs", {"y"}}}}},
                            {"outputs", {"y"}}}
                 .dump());
  CliResult r = run_cli(fmt::format("run {} --out {} --dump-graph", dir.str("w.json"), dir.str("out")));
  CHECK(r.code == 0);
  CHECK(r.output.find('\x1b') == std::string::npos);
  CHECK(r.output.find('\x07') == std::string::npos);
  CHECK_THAT(r.output, Contains("a\\x1b]0;owned\\x07\\x1b[2Jb"));
  // An error message quoting a name.
  write_text(dir.path / "bad.json",
             nlohmann::json{{"name", "esc"},
                            {"tensors", {{"x", {{"shape", {2, 3}}, {"init", kSeeded}}}}},
                            {"ops", {{{"type", "relu"}, {"inputs", {evil}}, {"outputs", {"y"}}}}},
                            {"outputs", {"y"}}}
                 .dump());
  r = run_cli(fmt::format("run {} --out {}", dir.str("bad.json"), dir.str("out2")));
  CHECK(r.code == 2);
  CHECK(r.output.find('\x1b') == std::string::npos);
  CHECK_THAT(r.output, Contains("\\x1b[2J"));
}
