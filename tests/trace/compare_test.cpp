// `ldmsim compare`'s alignment: layers lined up by their source names, a fused op and its unfused members on one
// row, sums, ratios and totals; bad stats trees named.
#include "ldmsim/trace_analysis/compare.hpp"

#include <catch2/catch.hpp>

#include "ldmsim/sim/fault.hpp"

using namespace ldmsim;

namespace {

nlohmann::json op(const std::string& name, std::vector<std::string> sources, std::uint64_t cycles, std::uint64_t bytes,
                  const std::string& bound = "dma") {
  nlohmann::json entry = {{"name", name},
                          {"cycles", cycles},
                          {"dma_bytes", bytes},
                          {"bound", bound},
                          {"seconds", static_cast<double>(cycles) * 1e-9},
                          {"roofline_seconds", static_cast<double>(cycles) * 0.5e-9},
                          {"ldm_high_water", cycles}};
  if (!sources.empty()) entry["source_layers"] = std::move(sources);
  return entry;
}

nlohmann::json run(std::vector<nlohmann::json> ops, bool fusion) {
  std::uint64_t cycles = 0, bytes = 0;
  for (const auto& o : ops) cycles += o["cycles"].get<std::uint64_t>(), bytes += o["dma_bytes"].get<std::uint64_t>();
  return {{"workload", "net"},    {"arch", "sw26010"},      {"cycles", cycles},
          {"dma_bytes", bytes},   {"ldm_high_water", 4096}, {"fusion", {{"enabled", fusion}}},
          {"ops", std::move(ops)}};
}

}  // namespace

TEST_CASE("a fused op and the unfused ops it stands for share one row") {
  // Unfused: conv, relu#1, max_pool#2, fc. Fused: the relu folds into the conv, and the fused graph's unnamed
  // max_pool is max_pool#1 (its index changed) but its source layer is still max_pool#2.
  const nlohmann::json off = run({op("conv", {"conv"}, 1000, 400), op("relu#1", {"relu#1"}, 300, 200),
                                  op("max_pool#2", {"max_pool#2"}, 200, 100), op("fc", {"fc"}, 500, 300, "compute")},
                                 false);
  const nlohmann::json on = run({op("conv+relu#1", {"conv", "relu#1"}, 1100, 400),
                                 op("max_pool#1", {"max_pool#2"}, 200, 100), op("fc", {}, 400, 300, "compute")},
                                true);
  const Comparison c = compare_runs({off, on}, {"off", "on"});
  REQUIRE(c.rows.size() == 3);
  CHECK(c.rows[0].layers == std::vector<std::string>{"conv", "relu#1"});
  CHECK(c.rows[0].runs[0].ops == 2);
  CHECK(c.rows[0].runs[0].cycles == 1300);
  CHECK(c.rows[0].runs[0].dma_bytes == 600);
  CHECK(c.rows[0].runs[0].bound == "dma");           // of its slowest op
  CHECK(c.rows[0].runs[0].ldm_high_water == 1000u);  // the larger of its ops'
  CHECK(c.rows[0].runs[1].ops == 1);
  CHECK(c.rows[0].runs[1].cycles == 1100);
  CHECK(c.rows[1].layers == std::vector<std::string>{"max_pool#2"});
  CHECK(c.rows[1].runs[1].names == std::vector<std::string>{"max_pool#1"});
  CHECK(c.rows[2].layers == std::vector<std::string>{"fc"});  // older stats: the name is the source layer
  CHECK(c.rows[2].runs[1].cycles == 400);
  CHECK(c.rows[0].runs[1].roofline_fraction() == Approx(0.5));
  CHECK(c.runs[0].cycles == 2000);
  CHECK(c.runs[1].cycles == 1700);
  CHECK(c.runs[1].fusion);

  const std::string text = format_comparison(c);
  CHECK_THAT(text, Catch::Contains("A: off (net on sw26010, fusion off, 4 ops)"));
  CHECK_THAT(text, Catch::Contains("conv+relu#1"));
  CHECK_THAT(text, Catch::Contains("x0.846"));  // 1100 / 1300
  CHECK_THAT(text, Catch::Contains("x0.800"));  // fc: 400 / 500
  CHECK_THAT(text, Catch::Contains("B vs A: -300 cycles (-15.0%)"));
  const std::string top = format_comparison(c, 1);
  CHECK_THAT(top, Catch::Contains("the 1 of 3 rows whose cycles changed most"));
  CHECK_THAT(top, Catch::Contains("conv+relu#1"));
  CHECK_THAT(top, !Catch::Contains("max_pool#2"));
  const nlohmann::json json = to_json(c);
  CHECK(json["rows"][0]["runs"][0]["cycles"] == 1300);
  CHECK(json["rows"][1]["runs"][1]["names"][0] == "max_pool#1");
}

TEST_CASE("a layer only one run has gets a row with the other run's cell empty") {
  const Comparison c = compare_runs(
      {run({op("a", {}, 10, 4)}, false), run({op("a", {}, 10, 4), op("b", {}, 5, 4)}, false)}, {"one", "two"});
  REQUIRE(c.rows.size() == 2);
  CHECK(c.rows[1].runs[0].ops == 0);
  CHECK(c.rows[1].runs[1].ops == 1);
  CHECK_THAT(format_comparison(c), Catch::Contains("new"));
}

TEST_CASE("compare refuses what is not two runs' stats, naming the file") {
  const nlohmann::json good = run({op("a", {}, 10, 4)}, false);
  CHECK_THROWS_AS(compare_runs({good}, {"only"}), ConfigError);
  CHECK_THROWS_WITH(compare_runs({good, nlohmann::json{{"cycles", 3}}}, {"a", "b.json"}),
                    Catch::Contains("b.json") && Catch::Contains("\"ops\""));
  CHECK_THROWS_WITH(compare_runs({good, nlohmann::json{{"ops", {{{"cycles", "x"}}}}}}, {"a", "c.json"}),
                    Catch::Contains("c.json") && Catch::Contains("op 0"));
  CHECK_THROWS_AS(compare_runs({good, nlohmann::json::array()}, {"a", "d"}), ConfigError);
}
