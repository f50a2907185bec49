// `ldmsim run`'s per-layer output as a user sees it: the slowest-layers table with ldm, intensity and roofline
// columns, `--layers-csv FILE` (written atomically, checked before the run, refused where it has no layers), and
// `ldmsim compare` of runs with and without fusion.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli_support.hpp"

#ifdef LDMSIM_CLI

using Catch::Contains;
using namespace ldmsim::testing;

namespace {

const std::string kCnnBlock = std::string(LDMSIM_SOURCE_DIR) + "/examples/cnn_block.json";

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, sep)) fields.push_back(field);
  if (!line.empty() && line.back() == sep) fields.emplace_back();
  return fields;
}

}  // namespace

TEST_CASE("run --layers-csv writes one row per layer with the figures of stats.json", "[cli][layers]") {
  const ScratchDir out("layers-csv");
  const std::string csv = out.str("layers.csv");
  const auto r =
      run_cli("run '" + kCnnBlock + "' --arch sw26010 --out '" + out.str("run") + "' --layers-csv '" + csv + "'");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("ldm") && Contains("flop/B") && Contains("roofline") && Contains("wrote " + csv));
  const nlohmann::json stats = nlohmann::json::parse(read_file(out.path / "run" / "stats.json"));
  const std::string text = read_file(csv);
  std::stringstream lines(text);
  std::string header;
  std::getline(lines, header);
  const std::vector<std::string> columns = split(header, ',');
  REQUIRE(columns.size() == 19);
  std::size_t row = 0;
  for (std::string line; std::getline(lines, line); ++row) {
    REQUIRE(row < stats["ops"].size());
    const nlohmann::json& op = stats["ops"][row];
    const std::vector<std::string> fields = split(line, ',');
    REQUIRE(fields.size() == columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) {
      INFO(columns[c] << " of " << line);
      REQUIRE(op.contains(columns[c]));  // every column is a field of stats.json's op
      const nlohmann::json& want = op[columns[c]];
      if (want.is_null()) {
        CHECK(fields[c].empty());
      } else if (want.is_string()) {
        CHECK(fields[c] == want.get<std::string>());
      } else if (want.is_number_float()) {
        CHECK(std::stod(fields[c]) == Approx(want.get<double>()).epsilon(1e-5));
      } else {
        CHECK(fields[c] == want.dump());
      }
    }
  }
  CHECK(row == stats["ops"].size());
  CHECK(row > 0);

  // The trace tools show the same figures per layer: summary text and JSON, and the report's table data.
  const auto summary = run_cli("trace summary '" + out.str("run") + "' --json", true);
  REQUIRE(summary.code == 0);
  const nlohmann::json layers = nlohmann::json::parse(summary.output)["layers"];
  REQUIRE(layers.size() == stats["ops"].size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    CHECK(layers[i]["ldm_high_water"] == stats["ops"][i]["ldm_high_water"]);
    CHECK(layers[i]["roofline_fraction"] == stats["ops"][i]["roofline_fraction"]);
    CHECK(layers[i]["roofline_limit"] == stats["ops"][i]["roofline_limit"]);
  }
  const auto summary_text = run_cli("trace summary '" + out.str("run") + "'", true);
  CHECK_THAT(summary_text.output, Contains("roofline") && Contains("% dma"));
  REQUIRE(run_cli("report '" + out.str("run") + "' -o '" + out.str("report.html") + "'").code == 0);
  CHECK_THAT(read_file(out.path / "report.html"), Contains("\"roofline_fraction\":") && Contains("\"flop/B\""));
}

TEST_CASE("run --layers-csv is checked before the run and refused without one workload", "[cli][layers]") {
  const ScratchDir out("layers-csv-bad");
  const auto missing_dir = run_cli("run '" + kCnnBlock + "' --out '" + out.str("run") + "' --layers-csv '" +
                                   out.str("no/such/dir.csv") + "'");
  CHECK(missing_dir.code == 2);
  CHECK_THAT(missing_dir.output, Contains("ldmsim: error:") && Contains("--layers-csv"));
  CHECK_FALSE(std::filesystem::exists(out.path / "run" / "stats.json"));  // nothing ran
  const auto demo = run_cli("run --out '" + out.str("demo") + "' --layers-csv '" + out.str("x.csv") + "'");
  CHECK(demo.code == 2);
  CHECK_THAT(demo.output, Contains("--layers-csv"));
  // Neither a file the run reads nor one it writes, existing yet or not.
  std::filesystem::create_directories(out.path / "run3");
  const auto own_stats = run_cli("run '" + kCnnBlock + "' --out '" + out.str("run3") + "' --layers-csv '" +
                                 out.str("run3/stats.json") + "'");
  CHECK(own_stats.code == 2);
  CHECK_THAT(own_stats.output, Contains("the run writes that file itself"));
  const std::string model_copy = out.str("model.json");
  std::filesystem::copy_file(kCnnBlock, model_copy);
  const auto model =
      run_cli("run '" + model_copy + "' --out '" + out.str("run4") + "' --layers-csv '" + model_copy + "'");
  CHECK(model.code == 2);
  CHECK(read_file(model_copy) == read_file(kCnnBlock));
  std::filesystem::create_directories(out.path / "a-directory.csv");
  const auto directory = run_cli("run '" + kCnnBlock + "' --out '" + out.str("run2") + "' --layers-csv '" +
                                 out.str("a-directory.csv") + "'");
  CHECK(directory.code == 2);
  CHECK(std::filesystem::is_directory(out.path / "a-directory.csv"));
}

TEST_CASE("compare lines up a fused and an unfused run by their source layers", "[cli][layers][compare]") {
  const ScratchDir out("compare");
  for (const std::string fusion : {"on", "off"}) {
    const auto r = run_cli("run '" + kCnnBlock + "' --fusion " + fusion + " --out '" + out.str(fusion) + "'");
    INFO(r.output);
    REQUIRE(r.code == 0);
  }
  const nlohmann::json on = nlohmann::json::parse(read_file(out.path / "on" / "stats.json"));
  const nlohmann::json off = nlohmann::json::parse(read_file(out.path / "off" / "stats.json"));
  REQUIRE(on["ops"].size() < off["ops"].size());  // something fused
  std::vector<std::string> sources_on, names_off;
  for (const auto& op : on["ops"]) {
    for (const auto& s : op["source_layers"]) sources_on.push_back(s.get<std::string>());
  }
  for (const auto& op : off["ops"]) {
    CHECK(op["source_layers"] == nlohmann::json::array({op["name"]}));  // unfused: each op is its own source
    names_off.push_back(op["name"].get<std::string>());
  }
  std::sort(sources_on.begin(), sources_on.end());
  std::sort(names_off.begin(), names_off.end());
  CHECK(sources_on == names_off);  // the fused run's ops stand for exactly the unfused run's layers

  const auto text = run_cli("compare '" + out.str("off") + "' '" + out.str("on") + "/stats.json' --html '" +
                            out.str("compare.html") + "'");
  INFO(text.output);
  REQUIRE(text.code == 0);
  CHECK_THAT(text.output, Contains("fusion off") && Contains("fusion on") && Contains("total") && Contains("B vs A"));
  const auto json = run_cli("compare '" + out.str("off") + "' '" + out.str("on") + "' --json", true);
  REQUIRE(json.code == 0);
  const nlohmann::json c = nlohmann::json::parse(json.output);
  std::uint64_t a = 0, b = 0;
  for (const auto& row : c["rows"]) {
    a += row["runs"][0]["cycles"].get<std::uint64_t>();
    b += row["runs"][1]["cycles"].get<std::uint64_t>();
    CHECK(row["runs"][0]["ops"].get<int>() >= 1);  // every row has ops in both runs
    CHECK(row["runs"][1]["ops"].get<int>() >= 1);
  }
  std::uint64_t op_cycles_off = 0, op_cycles_on = 0;
  for (const auto& op : off["ops"]) op_cycles_off += op["cycles"].get<std::uint64_t>();
  for (const auto& op : on["ops"]) op_cycles_on += op["cycles"].get<std::uint64_t>();
  CHECK(a == op_cycles_off);
  CHECK(b == op_cycles_on);
  const std::string html = read_file(out.path / "compare.html");
  CHECK_THAT(html, Contains("id=\"compare-table\"") && Contains("class=\"layer-row\""));

  const auto one = run_cli("compare '" + out.str("off") + "'");
  CHECK(one.code == 2);
  CHECK_THAT(one.output, Contains("ldmsim: error:"));
  std::filesystem::create_directories(out.path / "empty");
  const auto empty = run_cli("compare '" + out.str("off") + "' '" + out.str("empty") + "'");
  CHECK(empty.code == 2);
  CHECK_THAT(empty.output, Contains("stats.json"));
}

#endif
