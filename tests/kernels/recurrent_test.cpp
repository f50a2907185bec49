// lstm and gru against the fp32 reference (ONNX semantics) on odd sizes, batches, sequences, directions and
// initial states; the combined gate matrix layout hand-checked; the EP/VP search within its bounds; the errors.
#include "ldmsim/kernels/recurrent.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "op_harness.hpp"

using namespace ldmsim;
using ldmsim::test::run_op;

namespace {

/// Input shapes of a cell: X, W, R, then B, initial_h, initial_c as `optional` asks (0 to 3).
std::vector<Shape> cell_shapes(CellKind kind, std::size_t seq, std::size_t batch, std::size_t input, std::size_t hidden,
                               std::size_t dirs, std::size_t optional) {
  const std::size_t g = onnx_gates(kind);
  std::vector<Shape> s{Shape{seq, batch, input}, Shape{dirs, g * hidden, input}, Shape{dirs, g * hidden, hidden}};
  if (optional >= 1) s.push_back(Shape{dirs, 2 * g * hidden});
  if (optional >= 2) s.push_back(Shape{dirs, batch, hidden});
  if (optional >= 3 && kind == CellKind::kLstm) s.push_back(Shape{dirs, batch, hidden});
  return s;
}

}  // namespace

TEST_CASE("lstm and gru match the reference on odd sizes", "[kernels][recurrent]") {
  struct Case {
    std::size_t seq, batch, input, hidden;
  };
  for (const Case c : {Case{1, 1, 3, 1}, Case{17, 3, 3, 7}, Case{5, 1, 63, 95}, Case{3, 3, 63, 7}}) {
    for (const int variant : {0, 1, 2}) {  // lstm, gru with linear_before_reset 0 and 1
      const CellKind kind = variant == 0 ? CellKind::kLstm : CellKind::kGru;
      for (const char* dir : {"forward", "bidirectional"}) {
        const std::size_t dirs = std::string(dir) == "bidirectional" ? 2 : 1;
        nlohmann::json attrs = {{"direction", dir}};
        if (variant > 0) attrs["linear_before_reset"] = variant - 1;
        const std::string op = kind == CellKind::kLstm ? "lstm" : "gru";
        INFO(op << " variant " << variant << " seq " << c.seq << " batch " << c.batch << " input " << c.input
                << " hidden " << c.hidden << " " << dir);
        const auto r = run_op(op, cell_shapes(kind, c.seq, c.batch, c.input, c.hidden, dirs, 3), attrs,
                              StagingPolicy::kMethod, -0.5f, 0.5f);
        INFO(r.fault);
        REQUIRE_FALSE(r.trapped);
        CHECK(r.max_excess <= 0);
      }
    }
  }
}

TEST_CASE("initial states, reverse and an explicit zero bias", "[kernels][recurrent]") {
  for (const std::size_t optional : {0u, 1u, 2u, 3u}) {
    for (const char* dir : {"forward", "reverse"}) {
      for (const char* op : {"lstm", "gru"}) {
        const CellKind kind = std::string(op) == "lstm" ? CellKind::kLstm : CellKind::kGru;
        INFO(op << " " << dir << " optional inputs " << optional);
        const auto r = run_op(op, cell_shapes(kind, 4, 3, 5, 6, 1, optional), {{"direction", dir}},
                              StagingPolicy::kMethod, -0.8f, 0.8f, 11);
        INFO(r.fault);
        REQUIRE_FALSE(r.trapped);
        CHECK(r.max_excess <= 0);
      }
    }
  }
}

TEST_CASE("every ep gives the reference's result, streamed weights too", "[kernels][recurrent]") {
  // An ep is a number of column partitions of a group's cores: more than the cores (4 on the test arch) is refused,
  // not clamped (an ep larger than the columns need is still taken as what the columns allow).
  for (const int ep : {8, 16}) {
    INFO("ep " << ep);
    CHECK_THROWS_WITH(run_op("lstm", cell_shapes(CellKind::kLstm, 3, 2, 9, 13, 2, 3),
                             {{"ep", ep}, {"direction", "bidirectional"}}, StagingPolicy::kMethod, -0.5f, 0.5f),
                      Catch::Contains(fmt::format("ep {} is more than the 4 cores of a core group", ep)));
  }
  for (const int ep : {1, 2, 4}) {
    INFO("ep " << ep);
    const auto r = run_op("lstm", cell_shapes(CellKind::kLstm, 3, 2, 9, 13, 2, 3),
                          {{"ep", ep}, {"direction", "bidirectional"}}, StagingPolicy::kMethod, -0.5f, 0.5f);
    INFO(r.fault);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
    CHECK(r.metrics["ep"].get<int>() <= ep);
    CHECK(r.metrics["candidates"].size() == 1);
  }
  // tiny's 16 KiB ldm cannot hold a core's block of a 200-unit GRU: it is streamed, with the same result.
  Arch tiny = Arch::preset("tiny");
  const auto r = run_op("gru", cell_shapes(CellKind::kGru, 3, 1, 150, 200, 1, 2), {{"ep", 1}}, StagingPolicy::kMethod,
                        -0.2f, 0.2f, 5, {}, tiny);
  INFO(r.fault);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.metrics["weights"] == "streamed");
  CHECK(r.max_excess <= 0);
}

TEST_CASE("naive staging runs too, unpadded odd rows trap as misaligned DMA", "[kernels][recurrent]") {
  const auto naive =
      run_op("gru", cell_shapes(CellKind::kGru, 3, 3, 7, 5, 2, 2),
             {{"linear_before_reset", 1}, {"direction", "bidirectional"}}, StagingPolicy::kNaive, -0.5f, 0.5f);
  INFO(naive.fault);
  REQUIRE_FALSE(naive.trapped);
  CHECK(naive.max_excess <= 0);
  const auto none = run_op("lstm", cell_shapes(CellKind::kLstm, 3, 3, 7, 5, 1, 0), nullptr, StagingPolicy::kNone);
  CHECK(none.trapped);
  CHECK_THAT(none.fault, Catch::Contains("lstm"));
}

TEST_CASE("unpadded odd rows under lint: the step kernel stays inside its tensors and agrees", "[kernels][recurrent]") {
  // --staging none --lint: X's rows of an odd input size have no pad column (the gate matrix's), and Y's rows of an
  // odd hidden size no pad element. Reads and writes of whole padded rows ran past the tensors' ends (an
  // out-of-bounds trap) or into the next row; misaligned lengths are lint warnings here, not faults.
  for (const auto& [input, hidden] : {std::pair<std::size_t, std::size_t>{5, 6}, {6, 7}, {5, 7}}) {
    CAPTURE(input, hidden);
    for (const char* op : {"lstm", "gru"}) {
      CAPTURE(op);
      const CellKind kind = std::string(op) == "lstm" ? CellKind::kLstm : CellKind::kGru;
      Machine m{test::small_arch(), MachineOptions{.alignment = AlignmentPolicy::kLint}};
      const auto r = test::run_op_on(m, op, cell_shapes(kind, 4, 2, input, hidden, 2, 3),
                                     {{"direction", "bidirectional"}}, StagingPolicy::kNone, -0.5f, 0.5f);
      INFO(r.fault);
      REQUIRE_FALSE(r.trapped);
      CHECK(r.max_excess <= 0);
    }
  }
}

TEST_CASE("the combined gate matrix for lh = 2, lx = 3, by hand", "[kernels][recurrent]") {
  // LSTM: W row g*2 + u is [100g + 10u + 1, +2, +3]; R row g*2 + u is [-(100g + 10u + 1), -(...+2)];
  // B = [Wb | Rb] with Wb[g*2+u] = g*2+u and Rb[g*2+u] = 0.5.
  const GateMatrixLayout gl{3, 2};
  REQUIRE(gl.x_pitch() == 4);
  REQUIRE(gl.h_pitch() == 2);
  REQUIRE(gl.row_pitch() == 6);
  REQUIRE(gl.rows() == 8);
  std::vector<float> w(4 * 2 * 3), r(4 * 2 * 2), b(16);
  for (std::size_t g = 0; g < 4; ++g) {
    for (std::size_t u = 0; u < 2; ++u) {
      const auto value = [&](std::size_t k) { return static_cast<float>(100 * g + 10 * u + k + 1); };
      for (std::size_t k = 0; k < 3; ++k) w[(g * 2 + u) * 3 + k] = value(k);
      for (std::size_t k = 0; k < 2; ++k) r[(g * 2 + u) * 2 + k] = -value(k);
      b[g * 2 + u] = static_cast<float>(g * 2 + u);
      b[8 + g * 2 + u] = 0.5f;
    }
  }
  const CombinedGates lstm = combine_gates(CellKind::kLstm, gl, 0, w, r, b);
  // Row 4u + k is gate k (i, o, f, c) of unit u: [W row | pad | R row].
  const std::vector<float> expected = {
      1,   2,   3,   0, -1,   -2,    // u0 i
      101, 102, 103, 0, -101, -102,  // u0 o
      201, 202, 203, 0, -201, -202,  // u0 f
      301, 302, 303, 0, -301, -302,  // u0 c
      11,  12,  13,  0, -11,  -12,   // u1 i
      111, 112, 113, 0, -111, -112,  // u1 o
      211, 212, 213, 0, -211, -212,  // u1 f
      311, 312, 313, 0, -311, -312,  // u1 c
  };
  CHECK(lstm.matrix == expected);
  CHECK(lstm.bias == std::vector<float>{0.5f, 2.5f, 4.5f, 6.5f, 1.5f, 3.5f, 5.5f, 7.5f});

  // GRU (gates z, r, h): slots z, r, then W_h with zeros under h and zeros under x with R_h; Wb_h and Rb_h apart.
  const std::vector<float> gw(w.begin(), w.begin() + 18), gr(r.begin(), r.begin() + 12);
  std::vector<float> gb(12);
  for (int i = 0; i < 6; ++i) {
    gb[static_cast<std::size_t>(i)] = static_cast<float>(i);
    gb[static_cast<std::size_t>(6 + i)] = 0.5f;
  }
  const CombinedGates gru = combine_gates(CellKind::kGru, gl, 0, gw, gr, gb);
  const std::vector<float> gru_expected = {
      1,   2,   3,   0, -1,   -2,    // u0 z
      101, 102, 103, 0, -101, -102,  // u0 r
      201, 202, 203, 0, 0,    0,     // u0 h, input part
      0,   0,   0,   0, -201, -202,  // u0 h, recurrent part
      11,  12,  13,  0, -11,  -12,   // u1 z
      111, 112, 113, 0, -111, -112,  // u1 r
      211, 212, 213, 0, 0,    0,     // u1 h, input part
      0,   0,   0,   0, -211, -212,  // u1 h, recurrent part
  };
  CHECK(gru.matrix == gru_expected);
  CHECK(gru.bias == std::vector<float>{0.5f, 2.5f, 4.f, 0.5f, 1.5f, 3.5f, 5.f, 0.5f});
}

TEST_CASE("the EP/VP search stays within its bounds and stops past the minimum", "[kernels][recurrent]") {
  for (const char* preset : {"sw26010", "sw26010pro"}) {
    const Arch arch = Arch::preset(preset);
    const auto r = run_op("lstm", cell_shapes(CellKind::kLstm, 2, 1, 64, 64, 1, 0), nullptr, StagingPolicy::kMethod,
                          -0.5f, 0.5f, 3, {}, arch);
    INFO(preset << " " << r.fault);
    REQUIRE_FALSE(r.trapped);
    CHECK(r.max_excess <= 0);
    const auto& m = r.metrics;
    const std::size_t npe = m["npe"].get<std::size_t>();
    CHECK(npe == arch.cores_per_group() * arch.compute.unit(DataType::kF32).simd_lanes);
    const auto& candidates = m["candidates"];
    REQUIRE(!candidates.empty());
    CHECK(candidates[0]["ep"] == 1);  // greedy from ep = 1, on one group first
    CHECK(candidates[0]["groups"] == 1);
    double best = 1e300;
    std::size_t chosen_ep = 0, chosen_groups = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const auto& c = candidates[i];
      const std::size_t ep = c["ep"].get<std::size_t>(), vp = c["vp"].get<std::size_t>();
      const std::size_t groups = c["groups"].get<std::size_t>();
      CHECK(groups <= arch.core_groups);
      CHECK(vp <= 4 * 64);
      CHECK(vp * ep <= npe * groups);  // the lanes of the groups the task spans
      const double cycles = c["cycles_per_step"].get<double>();
      CHECK(cycles > 0);
      // On one group (the greedy run from ep = 1), every candidate but the last improved on the one before.
      const bool last_greedy = i + 1 == candidates.size() || candidates[i + 1]["groups"] != 1;
      if (groups == 1 && i > 0 && !last_greedy) CHECK(cycles < candidates[i - 1]["cycles_per_step"].get<double>());
      if (cycles < best) best = cycles, chosen_ep = ep, chosen_groups = groups;
    }
    CHECK(m["ep"].get<std::size_t>() == chosen_ep);  // the fastest of all
    CHECK(m["groups"].get<std::size_t>() == chosen_groups);
    CHECK(m["explain"].size() == candidates.size());
  }
}

TEST_CASE("a task spread over several core groups (node barriers) gives the reference's result",
          "[kernels][recurrent]") {
  // small_arch has 2 groups: one direction's units split over both, odd sizes, both cells, every ep.
  for (const char* op : {"lstm", "gru"}) {
    const CellKind kind = std::string(op) == "lstm" ? CellKind::kLstm : CellKind::kGru;
    for (const int ep : {1, 2, 4}) {
      INFO(op << " ep " << ep);
      const auto r = run_op(op, cell_shapes(kind, 5, 3, 7, 13, 1, 2), {{"groups", 2}, {"ep", ep}},
                            StagingPolicy::kMethod, -0.5f, 0.5f, 9);
      INFO(r.fault);
      REQUIRE_FALSE(r.trapped);
      CHECK(r.max_excess <= 0);
      CHECK(r.metrics["groups"] == 2);
    }
  }
  // A bidirectional layer cannot give each direction two of two groups.
  CHECK_THROWS_WITH(run_op("lstm", cell_shapes(CellKind::kLstm, 2, 1, 3, 4, 2, 0),
                           {{"groups", 2}, {"direction", "bidirectional"}}, StagingPolicy::kMethod),
                    Catch::Contains("groups 2 is more than the 1 core groups a direction can have"));
}

TEST_CASE("lstm and gru reject bad shapes and attributes by name", "[kernels][recurrent]") {
  using test::bind_op;
  CHECK_THROWS_WITH(bind_op("lstm", {Shape{2, 3}, Shape{1, 8, 3}, Shape{1, 8, 2}}), Catch::Contains("X must be"));
  CHECK_THROWS_WITH(bind_op("lstm", {Shape{2, 1, 3}, Shape{1, 6, 3}, Shape{1, 6, 2}}), Catch::Contains("W must be"));
  CHECK_THROWS_WITH(bind_op("gru", {Shape{2, 1, 3}, Shape{1, 6, 3}, Shape{1, 6, 3}}), Catch::Contains("R must be"));
  CHECK_THROWS_WITH(bind_op("gru", {Shape{2, 1, 3}, Shape{1, 6, 3}, Shape{1, 6, 2}, Shape{1, 6}}),
                    Catch::Contains("B must be"));
  CHECK_THROWS_WITH(bind_op("lstm", {Shape{2, 1, 3}, Shape{1, 8, 3}, Shape{1, 8, 2}}, {{"direction", "sideways"}}),
                    Catch::Contains("direction 'sideways'"));
  CHECK_THROWS_WITH(bind_op("lstm", {Shape{2, 1, 3}, Shape{1, 8, 3}, Shape{1, 8, 2}}, {{"hidden_size", 3}}),
                    Catch::Contains("hidden_size 3"));
  CHECK_THROWS_WITH(bind_op("lstm", {Shape{2, 1, 3}, Shape{1, 8, 3}, Shape{1, 8, 2}}, {{"linear_before_reset", 1}}),
                    Catch::Contains("GRU's"));
  CHECK_THROWS_WITH(bind_op("gru", {Shape{2, 1, 3}, Shape{1, 6, 3}, Shape{1, 6, 2}}, {{"clip", 1}}),
                    Catch::Contains("clip"));
  CHECK_THROWS_WITH(bind_op("lstm", {Shape{2, 1, 3}, Shape{2, 8, 3}, Shape{2, 8, 2}}),
                    Catch::Contains("W must be [1,"));
}

TEST_CASE("rows wider than the local store and searches where some ep do not fit", "[kernels][recurrent]") {
  const Arch tiny = Arch::preset("tiny");  // 16 KiB of ldm
  // A 40000-column row of W(n) (80 KB, more than sw26010's 64 KiB ldm) is staged in pieces; ep 64 gives every core
  // a narrow block.
  auto r = run_op("lstm", cell_shapes(CellKind::kLstm, 2, 1, 39999, 2, 1, 1), {{"ep", 64}}, StagingPolicy::kMethod,
                  -0.01f, 0.01f, 3, {}, Arch::preset("sw26010"));
  INFO(r.fault);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  // 130 units, batch 3: ep 1 fits tiny's ldm, ep 2 does not; the search keeps ep 1 instead of refusing.
  r = run_op("gru", cell_shapes(CellKind::kGru, 2, 3, 7, 130, 1, 0), nullptr, StagingPolicy::kMethod, -0.2f, 0.2f, 3,
             {}, tiny);
  INFO(r.fault);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  CHECK(r.metrics["ep"] == 1);
  // Nothing fits: a clear error naming the op and the ldm it would need.
  CHECK_THROWS_WITH(run_op("lstm", cell_shapes(CellKind::kLstm, 2, 64, 2000, 2000, 1, 0), {{"ep", 1}},
                           StagingPolicy::kMethod, -0.1f, 0.1f, 3, {}, tiny),
                    Catch::Contains("lstm: a core's share at ep 1") && Catch::Contains("bytes of ldm"));
}

TEST_CASE("recurrent runs are the same bits and cycles on any number of host threads", "[kernels][recurrent]") {
  const std::vector<Shape> shapes = cell_shapes(CellKind::kLstm, 4, 5, 9, 13, 2, 3);
  for (const int groups : {1, 2}) {  // 2: each direction's units over two groups (node barriers)
    const auto op = test::bind_op("lstm", shapes, {{"direction", "bidirectional"}, {"groups", groups}});
    std::vector<std::vector<f16>> results;
    std::vector<Cycle> cycles;
    for (const unsigned threads : {1u, 4u}) {
      Machine m(Arch::preset("sw26010"), MachineOptions{.threads = threads, .trace = false});
      std::vector<DeviceTensor> in, out;
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        std::vector<f16> values(shapes[i].elements());
        for (std::size_t k = 0; k < values.size(); ++k)
          values[k] = f16(static_cast<float>((k * 7 + i) % 11) / 20.0f - 0.25f);
        in.push_back(stage_in(m, "in", choose_plan(op->view(i), op->padding(i), StagingPolicy::kMethod), values));
      }
      for (std::size_t j = 0; j < op->output_shapes().size(); ++j) {
        const std::size_t index = shapes.size() + j;
        out.push_back(
            allocate_tensor(m, "out", choose_plan(op->view(index), op->padding(index), StagingPolicy::kMethod)));
      }
      op->run(m, in, out, "lstm");
      std::vector<f16> all;
      for (const auto& o : out) {
        const auto v = stage_out(m, o);
        all.insert(all.end(), v.begin(), v.end());
      }
      results.push_back(std::move(all));
      cycles.push_back(m.stats().cycles);
    }
    INFO("groups " << groups);
    CHECK(cycles[0] == cycles[1]);
    CHECK(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(f16)) == 0);
  }
}

TEST_CASE("the search measures a candidate as a forced run does, and a forced ep may need more groups",
          "[kernels][recurrent]") {
  // Groups the trials had not used yet used to start behind the others, so their weight load counted as a step.
  const Arch pro = Arch::preset("sw26010pro");
  const auto shapes = cell_shapes(CellKind::kLstm, 2, 1, 160, 160, 1, 0);
  const auto searched = run_op("lstm", shapes, nullptr, StagingPolicy::kMethod, -0.5f, 0.5f, 3, {}, pro);
  REQUIRE_FALSE(searched.trapped);
  const auto& candidates = searched.metrics["candidates"];
  REQUIRE(candidates.size() >= 3);
  for (const std::size_t i : {std::size_t{0}, candidates.size() / 2, candidates.size() - 1}) {
    const auto& c = candidates[i];
    const auto forced = run_op("lstm", shapes, {{"groups", c["groups"]}, {"ep", c["ep"]}}, StagingPolicy::kMethod,
                               -0.5f, 0.5f, 3, {}, pro);
    INFO("groups " << c["groups"] << " ep " << c["ep"]);
    CHECK(forced.metrics["candidates"][0]["cycles_per_step"] == c["cycles_per_step"]);
  }
  // 200 units on tiny's 16 KiB ldm: ep 4 does not fit one group, it fits two; the forced ep finds them.
  Arch tiny4 = Arch::preset("tiny");
  tiny4.core_groups = 4;
  const auto r = run_op("lstm", cell_shapes(CellKind::kLstm, 2, 1, 4, 200, 1, 0), {{"ep", 4}}, StagingPolicy::kMethod,
                        -0.2f, 0.2f, 3, {}, tiny4);
  INFO(r.fault);
  REQUIRE_FALSE(r.trapped);
  CHECK(r.max_excess <= 0);
  CHECK(r.metrics["groups"].get<int>() >= 2);
}
