// The Python reader printed in docs/trace-format.md works: run verbatim with Debian's python3 (numpy and
// zstandard come from python3-numpy and python3-zstandard, installed by `scripts/install-deps.sh --test`) on a raw
// and a zstd trace, it recovers every event's issue cycle, core, main address, ldm address, op and length.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "ldmsim/trace/file.hpp"

using namespace ldmsim;

namespace {

std::string doc_python() {
  std::ifstream in(std::filesystem::path(LDMSIM_SOURCE_DIR) / "docs" / "trace-format.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto begin = doc.find("```python\n");
  REQUIRE(begin != std::string::npos);
  const auto end = doc.find("```", begin + 10);
  REQUIRE(end != std::string::npos);
  return doc.substr(begin + 10, end - begin - 10);
}

/// A group whose events are easy to check from Python: sums and extremes of every decoded column.
TraceRecorder sample() {
  TraceRecorder rec(3, true);
  for (std::uint64_t i = 0; i < 9000; ++i) {
    DmaEvent e;
    e.issue = 1'000'000'000'000ull + i * 17;
    e.start = e.issue + i % 5;
    e.end = e.start + 100;
    e.core = static_cast<std::uint16_t>(i % 64);
    e.main = (std::uint64_t{1} << 47) + i * 4096;
    e.ldm = static_cast<std::uint32_t>((i * 64) % (1u << 20));
    e.length = 4 * static_cast<std::uint32_t>(1 + i % 7);
    e.op = i % 3 == 0 ? DmaOp::kPut : DmaOp::kGet;
    rec.record(e);
  }
  return rec;
}

}  // namespace

TEST_CASE("the Python reader in docs/trace-format.md decodes raw and zstd traces", "[trace][docs]") {
  const TraceRecorder rec = sample();
  std::uint64_t length_sum = 0, main_sum = 0, core_sum = 0, ldm_sum = 0, puts = 0, issue_max = 0;
  rec.for_each_dma([&](const DmaEvent& e) {
    length_sum += e.length;
    main_sum += e.main;
    core_sum += e.core;
    ldm_sum += e.ldm;
    puts += e.op == DmaOp::kPut ? 1 : 0;
    issue_max = std::max(issue_max, e.issue);
  });
  const auto dir = std::filesystem::temp_directory_path();
  const std::string code = doc_python();
  for (const TraceCodec codec : {TraceCodec::kRaw, TraceCodec::kZstd}) {
    INFO("codec " << to_string(codec));
    const auto trace = dir / ("ldmsim_doc_" + std::to_string(::getpid()) + std::string(to_string(codec)) + ".ldmtrace");
    const TraceRecorder* groups[] = {&rec};
    write_trace(trace, {{"fault", nullptr}}, groups, codec);
    // Instrument the doc's loop: after each DMA block's columns are decoded, accumulate them.
    std::string instrumented = std::regex_replace(code, std::regex("    off \\+= nbytes"),
                                                  "        acc(n, main, core, ldm, op, cols)\n    off += nbytes");
    const std::string script =
        "import sys\n"
        "tot = dict(n=0, length=0, main=0, core=0, ldm=0, puts=0, issue_max=0)\n"
        "def acc(n, main, core, ldm, op, cols):\n"
        "    tot['n'] += int(n); tot['length'] += int(cols['length'].sum()); tot['main'] += int(main.sum())\n"
        "    tot['core'] += int(core.sum()); tot['ldm'] += int(ldm.sum()); tot['puts'] += int(op.sum())\n"
        "    tot['issue_max'] = max(tot['issue_max'], int(cols['issue'].max()))\n" +
        std::regex_replace(instrumented, std::regex("\"run\\.ldmtrace\""), "'" + trace.string() + "'") +
        "want = dict(n=" + std::to_string(rec.dma_count()) + ", length=" + std::to_string(length_sum) +
        ", main=" + std::to_string(main_sum) + ", core=" + std::to_string(core_sum) +
        ", ldm=" + std::to_string(ldm_sum) + ", puts=" + std::to_string(puts) +
        ", issue_max=" + std::to_string(issue_max) +
        ")\n"
        "print(tot, file=sys.stderr) if tot != want else None\n"
        "sys.exit(0 if tot == want else 1)\n";
    const auto file = dir / ("ldmsim_doc_" + std::to_string(::getpid()) + ".py");
    std::ofstream(file) << script;
    // Debian's interpreter, where python3-numpy and python3-zstandard install (a python3 earlier on PATH may
    // lack them).
    CHECK(std::system(("/usr/bin/python3 " + file.string()).c_str()) == 0);
    std::filesystem::remove(file);
    std::filesystem::remove(trace);
  }
}
