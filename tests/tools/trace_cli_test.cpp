// `ldmsim trace` and `ldmsim report` run as a user runs them: on traces of the built-in demo (clean and trapped),
// exit codes (2 for malformed traces, 1 for differing diffs), and the HTML report rendered in headless chromium.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "ldmsim/trace/file.hpp"
#include "ldmsim/trace/recorder.hpp"
#include "tools/cli_support.hpp"

#ifdef LDMSIM_CLI

namespace fs = std::filesystem;
using Catch::Contains;
using namespace ldmsim::testing;

namespace {

using Result = CliResult;
using Scratch = ScratchDir;
Result cli(const std::string& args, bool stdout_only = false) {
  return run_cli(args, stdout_only);
}

/// The demo on the tiny arch, once per test program (clean run in "ok", trapped run in "trap", a run with a checking
/// report in "race").
const Scratch& demo_runs() {
  static const Scratch dir("runs");
  static const bool done = [] {
    REQUIRE(cli("run --arch tiny -q --out " + dir.str("ok")).code == 0);
    REQUIRE(cli("run --arch tiny -q --demo-fault --out " + dir.str("trap")).code == 3);
    REQUIRE(cli("run --arch tiny -q --demo-race --check races --out " + dir.str("race")).code == 4);
    return true;
  }();
  (void)done;
  return dir;
}

}  // namespace

TEST_CASE("trace summary of a demo run: text and JSON, with stats.json merged", "[cli][trace]") {
  const auto& runs = demo_runs();
  const Result text = cli("trace summary " + runs.str("ok/trace.ldmtrace"));
  REQUIRE(text.code == 0);
  CHECK_THAT(text.output, Contains("arch tiny") && Contains("trace: complete") && Contains("slowest"));
  const Result json = cli("trace summary --json --top 3 " + runs.str("ok"), true);
  REQUIRE(json.code == 0);
  const auto j = nlohmann::json::parse(json.output);
  CHECK(j["requests"].get<std::uint64_t>() > 0);
  CHECK(j["run_stats"] == true);
  CHECK(j["slowest"].size() == 3);
  CHECK(j["groups"][0]["cores"].size() == 4);
  CHECK(j["groups"][0]["cores"][0]["busy_fraction"].is_number());
  CHECK(j["run"]["workload"] == "demo");
}

TEST_CASE("trace summary of a trapped run says it is complete up to the fault", "[cli][trace]") {
  const auto& runs = demo_runs();
  const Result r = cli("trace summary " + runs.str("trap/trace.ldmtrace"));
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("TRAPPED") && Contains("complete up to the fault") && Contains("fault dma-misaligned"));
}

TEST_CASE("trace summary --json of a fault marker whose text is not UTF-8 replaces the bytes",
          "[cli][trace][hostile]") {
  // The format allows any bytes in a marker's text; JSON needs UTF-8.
  Scratch dir("marker-bytes");
  ldmsim::TraceRecorder group(0, true);
  group.mark({ldmsim::MarkerKind::kLaunchBegin, 0, -1, 0, "k"});
  group.mark({ldmsim::MarkerKind::kFault, 5, 0, 0, std::string("bad \xFF\xFE byte")});
  group.mark({ldmsim::MarkerKind::kLaunchEnd, 10, -1, 0, "k"});
  const nlohmann::json header = {
      {"arch",
       {{"name", "t"}, {"clock_hz", 1e9}, {"core_groups", {{"count", 1}, {"cores", {{"rows", 1}, {"cols", 2}}}}}}},
      {"cycles", 10},
      {"seconds", 1e-8},
      {"fault", nullptr},
      {"run", {{"workload", "unit"}}}};
  const ldmsim::TraceRecorder* groups[] = {&group};
  ldmsim::write_trace(dir.path / "t.ldmtrace", header, groups);
  const Result r = cli("trace summary --json " + dir.str("t.ldmtrace"), true);
  INFO(r.output);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.output);
  CHECK_THAT(j.dump(), Contains("bad \xEF\xBF\xBD"));  // U+FFFD in place of the bad bytes
}

TEST_CASE("trace export writes chrome JSON and CSV", "[cli][trace]") {
  const auto& runs = demo_runs();
  Scratch dir("export");
  const std::string trace = runs.str("ok/trace.ldmtrace");
  const auto summary = nlohmann::json::parse(cli("trace summary --json " + trace, true).output);
  const auto requests = summary["requests"].get<std::size_t>();
  REQUIRE(cli("trace export " + trace + " --format chrome -o " + dir.str("t.json")).code == 0);
  const auto j = nlohmann::json::parse(read_file(dir.path / "t.json"));
  std::size_t dma = 0;
  for (const auto& e : j["traceEvents"]) dma += e["ph"] == "X" && e["cat"] == "dma";
  CHECK(dma == requests);
  REQUIRE(cli("trace export " + trace + " --format csv -o " + dir.str("t.csv")).code == 0);
  const std::string csv = read_file(dir.path / "t.csv");
  CHECK(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')) == requests + 1);
  CHECK(cli("trace export " + trace + " --format xml -o " + dir.str("t.xml")).code == 2);
}

TEST_CASE("trace filter writes a valid trace, diff compares runs", "[cli][trace]") {
  const auto& runs = demo_runs();
  Scratch dir("filter");
  const std::string trace = runs.str("ok/trace.ldmtrace");
  REQUIRE(cli("trace filter " + trace + " --op get --core 1 -o " + dir.str("f.ldmtrace")).code == 0);
  const auto j = nlohmann::json::parse(cli("trace summary --json " + dir.str("f.ldmtrace"), true).output);
  CHECK(j["requests"].get<std::uint64_t>() > 0);
  CHECK(j["groups"][0]["put_bytes"] == 0);
  for (const auto& c : j["groups"][0]["cores"]) {
    if (c["core"] != 1) CHECK(c["requests"] == 0);
  }
  const Result same = cli("trace diff " + trace + " " + trace);
  CHECK(same.code == 0);
  CHECK_THAT(same.output, Contains("identical"));
  const Result differ = cli("trace diff " + trace + " " + dir.str("f.ldmtrace"));
  CHECK(differ.code == 1);
  CHECK_THAT(differ.output, Contains("first divergence"));
}

TEST_CASE("every trace subcommand exits 2 on a truncated trace, naming the byte offset", "[cli][trace]") {
  const auto& runs = demo_runs();
  Scratch dir("bad");
  const std::string good = read_file(runs.path / "ok/trace.ldmtrace");
  const fs::path bad = dir.path / "bad.ldmtrace";
  std::ofstream(bad, std::ios::binary) << good.substr(0, good.size() - 40);
  const std::string b = bad.string();
  for (const std::string& args : {"trace summary " + b, "trace export " + b + " -o " + dir.str("x.json"),
                                  "trace export " + b + " --format csv -o " + dir.str("x.csv"),
                                  "trace filter " + b + " -o " + dir.str("x.ldmtrace"), "trace diff " + b + " " + b,
                                  "report " + b + " -o " + dir.str("x.html")}) {
    INFO(args);
    const Result r = cli(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("at byte"));
  }
  CHECK(cli("trace summary " + dir.str("missing.ldmtrace")).code == 2);
}

namespace {

/// Checks the rendered report's pictures from inside the page and writes what is wrong into div#layout-check:
/// charts sized by a viewBox at the page's width, every label inside its chart and clear of the others, no text
/// over the bandwidth plot, one line and one legend entry per distinct bandwidth series, a heat-map colour scale,
/// a full core grid for every group, round tick values (at most two significant digits), a roofline point for every
/// layer with flops and DMA, none over the roof, and for an MPI run a rank timeline with every call drawn inside its
/// chart and each wait inside its call.
constexpr const char* kLayoutCheck = R"JS(<script>
(function () {
  const problems = [];
  const S = JSON.parse(document.getElementById("summary-data").textContent);
  const inside = (b, vb) => b.x >= -0.5 && b.y >= -0.5 && b.x + b.width <= vb.width + 0.5 && b.y + b.height <= vb.height + 0.5;
  const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  document.querySelectorAll("svg.chart").forEach(s => {
    if (s.getAttribute("width") !== "100%" || !s.getAttribute("viewBox")) problems.push(s.id + ": fixed size");
    const vb = s.viewBox.baseVal;
    const texts = Array.from(s.querySelectorAll("text"));
    const boxes = texts.map(t => t.getBBox());
    texts.forEach((t, i) => {
      if (!inside(boxes[i], vb)) problems.push(s.id + ": '" + t.textContent + "' outside the chart");
      for (let j = 0; j < i; j++) {
        if (overlap(boxes[i], boxes[j])) problems.push(s.id + ": '" + t.textContent + "' over '" + texts[j].textContent + "'");
      }
    });
  });
  const bw = document.getElementById("bandwidth-chart");
  bw.querySelectorAll("text").forEach(t => {
    if (t.getAttribute("class") !== "tick") problems.push("bandwidth chart: text over the data: " + t.textContent);
  });
  const distinct = new Set(S.groups.map(g => g.bandwidth_over_time.join(","))).size;
  if (bw.querySelectorAll("polyline").length !== distinct) problems.push("bandwidth lines are not one per series");
  if (document.querySelectorAll("#bandwidth-legend .key").length !== distinct) problems.push("legend entries");
  if (!document.querySelector("#heatmap-scale linearGradient")) problems.push("no heat-map colour scale");
  S.groups.forEach(g => {
    const n = document.querySelectorAll("#heatmap-cg" + g.cg + " rect").length;
    if (n !== S.core_grid.rows * S.core_grid.cols) problems.push("cg " + g.cg + " grid has " + n + " cells");
  });
  document.querySelectorAll("text.tick").forEach(t => {
    const v = parseFloat(t.textContent.replace(/,/g, ""));
    if (!(Number(v.toPrecision(2)) === v)) problems.push("unrounded tick " + t.textContent);
  });
  // Layers with flops and DMA: a roofline point for each, none above the roof line.
  const placed = (S.layers || []).filter(l => l.arithmetic_intensity > 0 && l.cycles > 0).length;
  if (S.roofline && S.roofline.peak_flops_per_second > 0 && placed > 0) {
    const rf = document.getElementById("roofline-chart");
    if (!rf) {
      problems.push("no roofline picture");
    } else {
      const line = rf.querySelector("polyline.roof-line").points;
      const roofY = x => {
        for (let i = 1; i < line.numberOfItems; i++) {
          const a = line.getItem(i - 1), b = line.getItem(i);
          if (x >= a.x - 0.01 && x <= b.x + 0.01) return a.y + (b.y - a.y) * (x - a.x) / Math.max(b.x - a.x, 1e-9);
        }
        return NaN;
      };
      const points = rf.querySelectorAll("circle.roof-point");
      if (points.length !== placed) problems.push("roofline: " + points.length + " points for " + placed + " layers");
      points.forEach(c => {
        if (!(c.cy.baseVal.value >= roofY(c.cx.baseVal.value) - 0.5)) problems.push("roofline: a point over the roof");
      });
    }
  }
  // An MPI run: the rank timeline draws every bar of the data inside its chart, each wait inside its call.
  if (S.ranks) {
    const tl = document.getElementById("rank-timeline-chart");
    if (!tl) {
      problems.push("no rank timeline");
    } else {
      const vb = tl.viewBox.baseVal;
      const want = S.ranks.ranks.reduce((n, r) => n + r.timeline.length, 0);
      const calls = tl.querySelectorAll("rect.mpi-call");
      if (calls.length !== want) problems.push("rank timeline: " + calls.length + " bars for " + want + " calls");
      tl.querySelectorAll("rect").forEach(r => {
        if (!inside(r.getBBox(), vb)) problems.push("rank timeline: a bar outside the chart");
      });
      tl.querySelectorAll("rect.mpi-wait").forEach(w => {
        const c = w.previousElementSibling, a = w.getBBox(), b = c.getBBox();
        if (c.getAttribute("class") !== "mpi-call" || a.x < b.x - 0.01 || a.x + a.width > b.x + b.width + 0.01 ||
            a.y !== b.y) {
          problems.push("rank timeline: a wait outside its call");
        }
      });
    }
  }
  const d = document.createElement("div");
  d.id = "layout-check";
  d.setAttribute("data-problems", String(problems.length));
  d.setAttribute("data-layer-labels", String(document.querySelectorAll("text.layer-label").length));
  d.textContent = problems.join(" | ");
  document.body.appendChild(d);
})();
</script>)JS";

/// Checks a schedule picture (OUT/schedule.svg of models run together) inlined in a page: every label inside the
/// picture and clear of the others, legend keys for DMA wait and idle in different colours, and how many bars of
/// the rows are DMA waits (div#schedule-check).
constexpr const char* kScheduleCheck = R"JS(<script>
(function () {
  const problems = [];
  const s = document.querySelector("svg");
  const W = Number(s.getAttribute("width")), H = Number(s.getAttribute("height"));
  const texts = Array.from(s.querySelectorAll("text")), boxes = texts.map(t => t.getBBox());
  const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  texts.forEach((t, i) => {
    const b = boxes[i];
    if (b.x < 0 || b.y < 0 || b.x + b.width > W || b.y + b.height > H) problems.push("'" + t.textContent + "' outside");
    for (let j = 0; j < i; j++) {
      if (overlap(b, boxes[j])) problems.push("'" + t.textContent + "' over '" + texts[j].textContent + "'");
    }
  });
  const fillOf = id => { const k = document.getElementById(id); return k ? k.previousElementSibling.getAttribute("fill") : null; };
  const wait = fillOf("key-dma-wait"), idle = fillOf("key-idle");
  if (!wait || !idle) problems.push("no DMA-wait or idle key");
  if (wait === idle) problems.push("DMA wait and idle look alike");
  const rows = Array.from(s.querySelectorAll("rect")).filter(r => Number(r.getAttribute("y")) >= 50);
  const d = document.createElement("div");
  d.id = "schedule-check";
  d.setAttribute("data-problems", String(problems.length));
  d.setAttribute("data-wait-bars", String(rows.filter(r => r.getAttribute("fill") === wait).length));
  d.textContent = problems.join(" | ");
  document.body.appendChild(d);
})();
</script>)JS";

/// The DOM of the page `name` in `dir` rendered by headless chromium; empty (with a warning) when chromium is
/// missing and cannot be installed.
std::string dump_dom(const Scratch& dir, const std::string& name) {
  if (shell("command -v chromium >/dev/null 2>&1").code != 0) {
    shell("(apt-get install -y chromium || (apt-get update && apt-get install -y chromium)) >/dev/null 2>&1");
  }
  if (shell("command -v chromium >/dev/null 2>&1").code != 0) {
    WARN("chromium is not installed and could not be installed: skipping the headless rendering check");
    return {};
  }
  const std::string command =
      "chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
      "--disable-sync --no-first-run --user-data-dir='" +
      dir.str("profile") + "' --enable-logging=stderr --v=0 --window-size=700,900 --dump-dom 'file://" + dir.str(name) +
      "' 2>'" + dir.str(name + ".log") + "'";
  const Result r = shell(command);
  const std::string log = read_file(dir.path / (name + ".log"));
  INFO(log);
  REQUIRE(r.code == 0);
  CHECK(log.find("Uncaught") == std::string::npos);
  return r.output;
}

/// The DOM of `html` rendered by headless chromium after the layout check ran (empty: see dump_dom).
std::string render_checked(const Scratch& dir, const std::string& html, const std::string& name) {
  std::string page = read_file(dir.path / html);
  const auto body = page.rfind("</body>");
  REQUIRE(body != std::string::npos);
  page.insert(body, kLayoutCheck);
  {
    std::ofstream out(dir.path / name);
    out << page;
  }
  return dump_dom(dir, name);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report renders in headless chromium without script errors", "[cli][report]") {
  const auto& runs = demo_runs();
  Scratch dir("report");
  REQUIRE(cli("report " + runs.str("trap") + " -o " + dir.str("r.html")).code == 0);
  const std::string html = read_file(dir.path / "r.html");
  CHECK_THAT(html, Contains("id=\"heatmap\""));
  CHECK(html.find("<script src") == std::string::npos);  // self-contained
  CHECK(html.find("<link") == std::string::npos);

  const std::string dom = render_checked(dir, "r.html", "r-checked.html");
  if (dom.empty()) return;
  CHECK_THAT(dom, Contains("id=\"report-rendered\""));
  CHECK_THAT(dom, Contains("id=\"heatmap-cg0\"") && Contains("class=\"heat-cell\""));
  CHECK_THAT(dom, Contains("id=\"bandwidth-chart\"") && Contains("id=\"histogram-chart\""));
  CHECK_THAT(dom, Contains("id=\"summary-table\"") && Contains("id=\"fault-banner\""));
  CHECK_THAT(dom, Contains("data-problems=\"0\""));
  // The trapped core is outlined in the heat map, and only it.
  CHECK(count_of(dom, "class=\"heat-cell trapped\"") + count_of(dom, "class=\"heat-cell idle trapped\"") == 1);
  CHECK(dom.find("id=\"check-table\"") == std::string::npos);  // checking was off
}

TEST_CASE("trace summary and report show a run's checking reports and mark the core", "[cli][report][check]") {
  const auto& runs = demo_runs();
  // The trace header carries the reports: the text and JSON summaries list them.
  const Result text = cli("trace summary " + runs.str("race/trace.ldmtrace"));
  REQUIRE(text.code == 0);
  CHECK_THAT(text.output, Contains("check: 1 report (1 occurrence)") &&
                              Contains("check put-source (1 time): kernel scale, core group 0, core 1"));
  const Result json = cli("trace summary --json " + runs.str("race"), true);
  REQUIRE(json.code == 0);
  const auto j = nlohmann::json::parse(json.output);
  REQUIRE(j["check"].size() == 1);
  CHECK(j["check"][0]["kind"] == "put-source");
  CHECK(j["check"][0]["core"] == 1);
  CHECK(j["check"][0]["count"] == 1);
  // A run without checking has no "check" at all (not an empty list that would say "checked, found nothing").
  const Result plain = cli("trace summary " + runs.str("ok/trace.ldmtrace"));
  CHECK(plain.output.find("check:") == std::string::npos);

  Scratch dir("report-check");
  REQUIRE(cli("report " + runs.str("race") + " -o " + dir.str("r.html")).code == 0);
  CHECK_THAT(read_file(dir.path / "r.html"), Contains("put-source"));
  const std::string dom = render_checked(dir, "r.html", "r-checked.html");
  if (dom.empty()) return;
  CHECK_THAT(dom, Contains("id=\"report-rendered\""));
  CHECK_THAT(dom, Contains("id=\"check-banner\"") && Contains("Checking found 1 bug site (1 occurrence)"));
  CHECK_THAT(dom, Contains("id=\"check-table\"") && Contains(">put-source</td>"));
  CHECK(count_of(dom, "class=\"heat-cell checked\"") == 1);  // core 1, where the report occurred
  CHECK(dom.find("heat-cell trapped\"") == std::string::npos);
  CHECK_THAT(dom, Contains("data-problems=\"0\""));
}

TEST_CASE(
    "report pictures: layer labels, a roofline, an athread run's name, idle groups' grids, equal groups' one line",
    "[cli][report]") {
  Scratch dir("report-pictures");
  // A model with layers: the timeline names the layers wide enough to hold their name.
  REQUIRE(cli("run " + std::string(LDMSIM_SOURCE_DIR) + "/examples/cnn_block.json --arch sw26010 -q --out " +
              dir.str("cnn"))
              .code == 0);
  REQUIRE(cli("report " + dir.str("cnn") + " -o " + dir.str("cnn.html")).code == 0);
  // The machine's roof for the roofline picture, from the run's stats.json.
  CHECK_THAT(read_file(dir.path / "cnn.html"), Contains(R"("roofline":{"peak_dma_bytes_per_second":)"));
  const std::string cnn = render_checked(dir, "cnn.html", "cnn-checked.html");
  if (cnn.empty()) return;
  CHECK_THAT(cnn, Contains("data-problems=\"0\""));
  CHECK_THAT(cnn, !Contains("data-layer-labels=\"0\""));
  CHECK_THAT(cnn, Contains("id=\"roofline-chart\"") && Contains("class=\"roof-line\""));
  CHECK(count_of(cnn, "class=\"roof-point\"") > 0);

  // Models run together: a bar and a row per model.
  REQUIRE(cli("run " + std::string(LDMSIM_SOURCE_DIR) + "/examples/pipeline/*.json --concurrent -q --out " +
              dir.str("pipe"))
              .code == 0);
  REQUIRE(cli("report " + dir.str("pipe") + " -o " + dir.str("pipe.html")).code == 0);
  const std::string pipe = render_checked(dir, "pipe.html", "pipe-checked.html");
  CHECK_THAT(pipe, Contains("data-problems=\"0\""));
  CHECK_THAT(pipe, Contains("id=\"models-table\"") && Contains("lstm_a") && Contains("lstm_c"));
  CHECK(count_of(pipe, "class=\"model-bar\"") == 3);
  // Its schedule picture: labels inside and apart, DMA waiting drawn apart from idle (the LSTMs' staging waits).
  {
    std::ofstream out(dir.path / "schedule.html");
    out << "<!DOCTYPE html><html><body>" << read_file(dir.path / "pipe" / "schedule.svg") << kScheduleCheck
        << "</body></html>";
  }
  const std::string schedule = dump_dom(dir, "schedule.html");
  CHECK_THAT(schedule, Contains("id=\"schedule-check\" data-problems=\"0\""));
  CHECK_THAT(schedule, !Contains("data-wait-bars=\"0\""));
  CHECK_THAT(schedule, Contains(">waiting for DMA</text>") && Contains(">idle</text>"));

  // An athread program's trace (no workload name) on 4 groups, of which 1-3 moved nothing, and 2 groups whose
  // bandwidth series are equal.
  const auto traffic = [](int cg) {
    ldmsim::TraceRecorder g(cg, true);
    g.mark({ldmsim::MarkerKind::kLaunchBegin, 0, -1, 0, "slave_fun"});
    if (cg <= 1) {
      for (std::uint16_t core = 0; core < 4; ++core) {
        ldmsim::DmaEvent e;
        e.core = core;
        e.length = 4096;
        e.issue = 100 * core;
        e.start = e.issue;
        e.end = e.issue + 90;
        e.main = 0x1000;
        g.record(e);
      }
    }
    g.mark({ldmsim::MarkerKind::kLaunchEnd, 1000, -1, 0, "slave_fun"});
    return g;
  };
  std::vector<ldmsim::TraceRecorder> groups;
  for (int cg = 0; cg < 4; ++cg) groups.push_back(traffic(cg));
  std::vector<const ldmsim::TraceRecorder*> ptrs;
  for (const auto& g : groups) ptrs.push_back(&g);
  const nlohmann::json header = {
      {"arch",
       {{"name", "t"}, {"clock_hz", 1e9}, {"core_groups", {{"count", 4}, {"cores", {{"rows", 2}, {"cols", 2}}}}}}},
      {"cycles", 1000},
      {"fault", nullptr},
      {"run", {{"program", "athread"}}}};
  ldmsim::write_trace(dir.path / "athread.ldmtrace", header, ptrs);
  REQUIRE(cli("report " + dir.str("athread.ldmtrace") + " -o " + dir.str("athread.html")).code == 0);
  const std::string athread = render_checked(dir, "athread.html", "athread-checked.html");
  CHECK_THAT(athread, Contains("data-problems=\"0\""));
  const auto line = athread.find("id=\"run-line\">");
  REQUIRE(line != std::string::npos);
  const std::string run_line = athread.substr(line, athread.find('<', line + 1) - line);
  CHECK_THAT(run_line, Contains("athread program") && !Contains("workload"));
  CHECK_THAT(athread, Contains("cg 0-1") && Contains("cg 2-3"));  // one legend entry per distinct series
}

TEST_CASE("trace export --format perfetto writes a native trace of a run at most 16 bytes per request",
          "[cli][trace][perfetto]") {
  const Scratch out("perfetto-export");
  REQUIRE(run_cli("run --arch sw26010 --out '" + out.str("run") + "'").code == 0);
  const Result r = run_cli("trace export '" + out.str("run") + "' --format perfetto -o '" + out.str("t.pftrace") + "'");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("12292 DMA requests"));  // the demo's requests on sw26010
  const auto bytes = fs::file_size(out.path / "t.pftrace");
  CHECK(bytes <= 16 * 12292);
  REQUIRE(run_cli("trace export '" + out.str("run") + "' -o '" + out.str("t.json") + "'").code == 0);
  CHECK(bytes * 10 < fs::file_size(out.path / "t.json"));  // the Chrome JSON spends 200+ bytes on a request
  // Deflate, for Perfetto readers older than zstd batches, also stays within 16 bytes per request.
  REQUIRE(run_cli("trace export '" + out.str("run") + "' --format perfetto --compression deflate -o '" +
                  out.str("d.pftrace") + "'")
              .code == 0);
  CHECK(fs::file_size(out.path / "d.pftrace") <= 16 * 12292);
  const Result wrong =
      run_cli("trace export '" + out.str("run") + "' --compression zstd -o '" + out.str("c.json") + "'");
  CHECK(wrong.code == 2);
  CHECK_THAT(wrong.output, Contains("--compression applies to --format perfetto only"));
}

TEST_CASE("trace export of an MPI run directory writes every rank into one Perfetto trace", "[cli][trace][perfetto]") {
  const Scratch dir("mpi-export");
  fs::create_directories(dir.path / "run");
  for (int rank = 0; rank < 3; ++rank) {
    ldmsim::TraceRecorder group(0, true);
    group.mark({ldmsim::MarkerKind::kLaunchBegin, 0, -1, 0, "slave_fun"});
    ldmsim::DmaEvent e;
    e.length = 256;
    e.issue = 10;
    e.start = 10;
    e.end = 50;
    e.main = 0x1000;
    group.record(e);
    group.mark({ldmsim::MarkerKind::kLaunchEnd, 100, -1, 0, "slave_fun"});
    const nlohmann::json header = {
        {"arch",
         {{"name", "t"}, {"clock_hz", 1e9}, {"core_groups", {{"count", 1}, {"cores", {{"rows", 1}, {"cols", 2}}}}}}},
        {"cycles", 200},
        {"fault", nullptr},
        {"run", {{"program", "athread"}}},
        {"mpi",
         {{"calls_made", 2},
          {"calls_columns", {"name", "begin", "end", "peer", "bytes", "wait_begin", "wait_end"}},
          {"calls",
           {{"MPI_Send", 60, 70, (rank + 1) % 3, 64, 70, 70},
            {"MPI_Allreduce", 120, 180, -1, 64, 120, 140 + 10 * rank}}}}}};
    std::vector<const ldmsim::TraceRecorder*> ptrs{&group};
    ldmsim::write_trace(dir.path / "run" / ("trace.rank" + std::to_string(rank) + ".ldmtrace"), header, ptrs);
  }
  const Result r = cli("trace export " + dir.str("run") + " --format perfetto -o " + dir.str("ranks.pftrace"));
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("3 ranks, 3 DMA requests"));
  CHECK(fs::file_size(dir.path / "ranks.pftrace") > 0);
  // Chrome and CSV exports take one rank's file; the directory is refused with what to do instead.
  const Result chrome = cli("trace export " + dir.str("run") + " -o " + dir.str("ranks.json"));
  CHECK(chrome.code == 2);
  CHECK_THAT(chrome.output, Contains("export them with --format perfetto"));
  CHECK_FALSE(fs::exists(dir.path / "ranks.json"));

  // The report: a row per rank with its split, and the slowest rank in the sections below.
  const Result report = cli("report " + dir.str("run") + " -o " + dir.str("ranks.html"));
  INFO(report.output);
  REQUIRE(report.code == 0);
  CHECK_THAT(report.output, Contains("3 ranks, makespan 200 cycles"));
  // Each rank's calls with their waiting parts, as the page's data.
  CHECK_THAT(read_file(dir.path / "ranks.html"),
             Contains(R"("timeline":[["MPI_Send",60,70,70,70,1],["MPI_Allreduce",120,180,120,140,1]])"));
  const std::string dom = render_checked(dir, "ranks.html", "ranks-checked.html");
  if (dom.empty()) return;
  CHECK_THAT(dom, Contains("data-problems=\"0\""));
  CHECK_THAT(dom, Contains("id=\"ranks-table\"") && Contains("rank 2") && Contains("class=\"rank-bar\""));
  CHECK_THAT(dom, Contains("id=\"report-rendered\""));
  // The MPI timeline: each call a bar on its rank's row, the allreduces' waits apart; the tooltip names the call.
  CHECK(count_of(dom, "class=\"mpi-call\"") == 6);
  CHECK(count_of(dom, "class=\"mpi-wait\"") == 3);
  CHECK_THAT(dom, Contains("rank 2: MPI_Allreduce, cycles 120 to 180, 40 waiting"));
  CHECK_THAT(dom, Contains("rank 0: MPI_Send, cycles 60 to 70</title>"));
}

#endif  // LDMSIM_CLI
