// The executor's typed records: stats.json is made from them (to_json), the callbacks see each op's record as it
// is made, and the records say what the JSON says, split or not.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "kernels/op_harness.hpp"
#include "ldmsim/frontends/workload_json.hpp"
#include "ldmsim/graph/executor.hpp"

using namespace ldmsim;
using nlohmann::json;

namespace {

Graph conv_block() {
  const std::filesystem::path file = std::filesystem::path(LDMSIM_SOURCE_DIR) / "examples/cnn_block.json";
  std::ifstream in(file);
  return workload_from_json(json::parse(in), file.string(), file.parent_path().string(), test::registry());
}

}  // namespace

TEST_CASE("stats.json is the typed records as JSON, and the callbacks see each record", "[graph][records]") {
  const bool split = GENERATE(false, true);
  CAPTURE(split);
  const Graph g = conv_block();
  Machine m(Arch::preset("sw26010"));
  ExecuteOptions options;
  options.split.enabled = split;
  std::vector<std::size_t> seen;
  std::vector<json> progress;
  options.on_op = [&](const OpNode& op, const OpRecord& r) {
    CHECK(r.index == op.index);
    seen.push_back(r.index);
  };
  options.progress = [&](const OpNode&, const json& entry) { progress.push_back(entry); };
  const ExecutionResult result = execute(g, m, options);

  CHECK(result.stats == to_json(result.summary, result.ops));
  CHECK(result.host_times == host_times_json(result.summary, result.ops));
  REQUIRE(result.ops.size() == g.ops().size());
  REQUIRE(seen.size() == result.ops.size());
  REQUIRE(progress.size() == result.ops.size());
  Cycle last_end = 0;
  std::size_t split_ops = 0;
  for (std::size_t i = 0; i < result.ops.size(); ++i) {
    const OpRecord& r = result.ops[i];
    CAPTURE(i);
    CHECK(seen[i] == r.index);
    CHECK(progress[i] == to_json(r));
    CHECK(r.cycles == r.end_cycle - r.start_cycle);
    CHECK(r.end_cycle >= last_end);
    CHECK(r.groups.size() == m.arch().core_groups);
    std::uint64_t bytes = 0;
    for (const GroupDmaRecord& gr : r.groups) bytes += gr.dma_bytes;
    CHECK(bytes == r.dma_bytes);
    if (r.split) ++split_ops;
    last_end = r.end_cycle;
  }
  CHECK(result.summary.cycles == m.stats().cycles);
  REQUIRE(result.summary.split.has_value() == split);
  if (split) {
    CHECK(split_ops > 0);
    CHECK(result.summary.split->ops_split == split_ops);
  } else {
    CHECK(split_ops == 0);
  }
}
