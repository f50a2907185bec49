// Per-layer figures of stats.json: ldm high-water read from the trace's core-exit markers, intensity, bandwidth
// and the roofline position against the arch's peaks.
#include "ldmsim/session/layer_metrics.hpp"

#include <catch2/catch.hpp>

#include "ldmsim/session/session.hpp"

using namespace ldmsim;

namespace {

/// A user's operator whose kernel takes exactly `bytes` of every core's ldm (and moves 4 bytes, so it runs).
class LdmUserOp final : public BoundOp {
 public:
  LdmUserOp(const Shape& x, std::size_t bytes) : BoundOp({x}, {x}), bytes_(bytes) {}
  PaddingSpec padding(std::size_t) const override { return {}; }
  void run(Machine& machine, std::span<const DeviceTensor> inputs, std::span<const DeviceTensor>,
           const std::string& label) const override {
    const DevicePtr<f16> from = inputs[0].ptr;
    const std::size_t halves = bytes_ / 2;
    machine
        .launch(LaunchSpec{{}, label},
                [from, halves](Core& core) {
                  auto buf = core.ldm().alloc<f16>(halves);
                  core.get(buf.first(2), DevicePtr<const f16>(from)).wait();
                })
        .join();
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> inputs) const override {
    return {inputs.begin(), inputs.end()};
  }
  OpCost cost() const override { return {}; }

 private:
  std::size_t bytes_;
};

class LdmUserKind final : public OperatorKind {
 public:
  LdmUserKind(std::string name, std::size_t bytes) : name_(std::move(name)), bytes_(bytes) {}
  std::string_view name() const override { return name_; }
  std::unique_ptr<BoundOp> bind(const JsonField&, std::span<const Shape> inputs) const override {
    return std::make_unique<LdmUserOp>(inputs[0], bytes_);
  }

 private:
  std::string name_;
  std::size_t bytes_;
};

const char* kWorkload = R"({
  "name": "ldm_users",
  "arch": "sw26010",
  "tensors": {"x": {"shape": [4, 64], "init": {"normal": [0, 1], "seed": 3}}},
  "ops": [{"type": "ldm_12k", "inputs": ["x"], "outputs": ["a"], "name": "big"},
          {"type": "ldm_4k", "inputs": ["a"], "outputs": ["b"], "name": "small"},
          {"type": "relu", "inputs": ["b"], "outputs": ["y"], "name": "act"}],
  "outputs": ["y"]
})";

RunResult run_workload(bool trace) {
  auto registry = std::make_shared<OperatorRegistry>(OperatorRegistry::builtin());
  registry->add(std::make_unique<LdmUserKind>("ldm_12k", 12288));
  registry->add(std::make_unique<LdmUserKind>("ldm_4k", 4096));
  RunConfig config;
  config.machine.trace = trace;
  Session session(config, registry);
  return session.run(session.load(nlohmann::json::parse(kWorkload)), RunRequest{});
}

}  // namespace

TEST_CASE("each layer's ldm high-water is its own launches' largest footprint, not the run's so far") {
  const RunResult result = run_workload(true);
  const nlohmann::json& ops = result.layers();
  REQUIRE(ops.size() == 3);
  CHECK(ops[0]["ldm_high_water"] == 12288);
  CHECK(ops[1]["ldm_high_water"] == 4096);  // after a bigger layer: a running maximum would say 12288
  const auto relu = ops[2]["ldm_high_water"].get<std::uint64_t>();
  CHECK(relu > 0);
  CHECK(std::max<std::uint64_t>(12288, relu) == result.stats["ldm_high_water"].get<std::uint64_t>());

  // Without a trace there is nothing to read it from: the field is left out, the other figures stay.
  const RunResult untraced = run_workload(false);
  for (const nlohmann::json& op : untraced.layers()) {
    CHECK_FALSE(op.contains("ldm_high_water"));
    CHECK(op.contains("roofline_fraction"));
  }
  CHECK(untraced.stats["cycles"] == result.stats["cycles"]);
}

TEST_CASE("the roofline: peak flops of every core and the timing model's bandwidth of every group") {
  const Arch sw = Arch::preset("sw26010");
  const Roofline roof = Roofline::of(sw);
  CHECK(roof.peak_flops_per_second ==
        Approx(sw.compute.peak_flops_per_cycle(DataType::kF32) * sw.total_cores() * sw.clock_hz));
  REQUIRE(roof.peak_dma_bytes_per_second.has_value());
  const double per_cycle = sw.dma.timing.at("bytes_per_cycle").get<double>();
  CHECK(*roof.peak_dma_bytes_per_second == Approx(per_cycle * sw.core_groups * sw.clock_hz).epsilon(1e-4));
  const nlohmann::json json = roof.to_json();
  CHECK(json["ridge_intensity"].get<double>() == Approx(roof.peak_flops_per_second / *roof.peak_dma_bytes_per_second));
  // The `ideal` model moves bytes in no time: no bandwidth roof.
  const Roofline ideal = Roofline::of(Arch::preset("tiny"));
  CHECK_FALSE(ideal.peak_dma_bytes_per_second.has_value());
  CHECK(ideal.to_json()["ridge_intensity"].is_null());
}

TEST_CASE("a layer's intensity, rates and roofline fraction follow from its flops, bytes and time") {
  Roofline roof;
  roof.peak_flops_per_second = 1e12;
  roof.peak_dma_bytes_per_second = 1e11;  // ridge at 10 flops per byte
  nlohmann::json dma_bound = {
      {"flops", 4000000}, {"dma_bytes", 2000000}, {"dma_remote_bytes", 500000}, {"seconds", 1e-4}};
  add_layer_metrics(dma_bound, roof);
  CHECK(dma_bound["dma_local_bytes"] == 1500000);
  CHECK(dma_bound["arithmetic_intensity"].get<double>() == Approx(2.0));
  CHECK(dma_bound["achieved_dma_bytes_per_second"].get<double>() == Approx(2e10));
  CHECK(dma_bound["achieved_flops_per_second"].get<double>() == Approx(4e10));
  CHECK(dma_bound["roofline_limit"] == "dma");
  CHECK(dma_bound["roofline_seconds"].get<double>() == Approx(2e-5));  // 2 MB at 100 GB/s
  CHECK(dma_bound["roofline_fraction"].get<double>() == Approx(0.2));  // = 4e10 / (2 flop/B * 1e11 B/s)

  nlohmann::json compute_bound = {
      {"flops", 50000000}, {"dma_bytes", 1000000}, {"dma_remote_bytes", 0}, {"seconds", 1e-4}};
  add_layer_metrics(compute_bound, roof);
  CHECK(compute_bound["roofline_limit"] == "compute");
  CHECK(compute_bound["roofline_fraction"].get<double>() == Approx(0.5));  // 5e11 of 1e12 flop/s

  nlohmann::json no_dma = {{"flops", 0}, {"dma_bytes", 0}, {"dma_remote_bytes", 0}, {"seconds", 0.0}};
  add_layer_metrics(no_dma, roof);
  CHECK(no_dma["arithmetic_intensity"].is_null());
  CHECK(no_dma["roofline_fraction"] == 0.0);
}

TEST_CASE("no layer of a real model beats the roofline") {
  RunConfig config;
  config.arch = "sw26010";  // priced DMA: both roofs bound
  Session session(config);
  const RunResult result =
      session.run(session.load(std::filesystem::path(LDMSIM_SOURCE_DIR) / "examples/cnn_block.json"), RunRequest{});
  for (const nlohmann::json& op : result.layers()) {
    INFO(op.dump());
    CHECK(op["roofline_fraction"].get<double>() >= 0);
    CHECK(op["roofline_fraction"].get<double>() <= 1.0);
    CHECK(op["ldm_high_water"].get<std::uint64_t>() <= Arch::preset("sw26010").ldm_bytes);
  }
  CHECK(result.stats["roofline"].contains("peak_flops_per_second"));
}
