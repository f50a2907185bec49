// Padding method vs naive per-dimension padding over real CNN layer shapes: bytes added and host staging time
// (pad + upload into a simulated sw26010pro), printed as the markdown table of docs/benchmarks.md.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "ldmsim/kernels/operator.hpp"
#include "ldmsim/kernels/staging.hpp"
#include "ldmsim/ldmsim.hpp"

using namespace ldmsim;

namespace {

struct Layer {
  const char* net;
  const char* op;
  Shape4 shape;
};

double stage_seconds(Machine& m, const PaddingPlan& plan, const std::vector<f16>& data) {
  std::vector<double> t;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    const DeviceTensor d = stage_in(m, "x", plan, data);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    m.free(d.ptr);
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

}  // namespace

int main() {
  const OperatorRegistry registry = OperatorRegistry::builtin();
  const std::vector<Layer> layers = {
      {"AlexNet", "max_pool", {32, 96, 55, 55}},
      {"AlexNet", "max_pool", {32, 256, 27, 27}},
      {"AlexNet", "relu", {32, 384, 13, 13}},
      {"AlexNet", "max_pool", {32, 256, 13, 13}},
      {"AlexNet", "fc", {32, 256, 6, 6}},
      {"AlexNet", "softmax", {Shape4::from_dims({32, 1000})}},
      {"VGG-16", "max_pool", {16, 64, 224, 224}},
      {"VGG-16", "spatialbn", {16, 128, 112, 112}},
      {"VGG-16", "max_pool", {16, 512, 14, 14}},
      {"VGG-16", "fc", {16, 512, 7, 7}},
      {"ResNet-50", "max_pool", {32, 64, 112, 112}},
      {"ResNet-50", "spatialbn", {32, 64, 56, 56}},
      {"ResNet-50", "spatialbn_train", {32, 256, 56, 56}},
      {"ResNet-50", "spatialbn", {32, 512, 28, 28}},
      {"ResNet-50", "spatialbn_train", {32, 1024, 14, 14}},
      {"ResNet-50", "spatialbn", {32, 2048, 7, 7}},
      {"ResNet-50", "avg_pool", {32, 2048, 7, 7}},
      {"ResNet-50", "fc", {32, 2048, 1, 1}},
      {"YOLOv2 head", "spatialbn", {1, 1024, 13, 13}},
      {"YOLOv2 head", "relu", {1, 125, 13, 13}},
      {"YOLOv3 head", "sigmoid", {1, 255, 13, 13}},
      {"YOLOv3 head", "sigmoid", {1, 255, 27, 27}},
      {"SSD head", "softmax", {Shape4::from_dims({1, 8732 * 21})}},
      {"SqueezeNet", "avg_pool", {1, 1000, 13, 13}},
      {"Inception", "max_pool", {1, 192, 35, 35}},
      {"odd", "spatialbn_train", {3, 5, 27, 27}},
  };
  Arch arch = Arch::preset("sw26010pro");
  Machine m{arch, MachineOptions{.trace = false}};
  fmt::print(
      "| net | op | shape | method plan | method +bytes | naive +bytes | naive/method | method stage ms | naive stage "
      "ms |\n");
  fmt::print("|---|---|---|---|---:|---:|---:|---:|---:|\n");
  for (const Layer& l : layers) {
    const nlohmann::json no_attrs;
    const auto op =
        registry.bind(l.op, JsonField(no_attrs, "padding_bench", l.op), typical_inputs(l.op, Shape(l.shape.dims())));
    const PaddingPlan pm = choose_plan(l.shape, op->padding(0), StagingPolicy::kMethod);
    const PaddingPlan pn = choose_plan(l.shape, op->padding(0), StagingPolicy::kNaive);
    const std::vector<f16> data(l.shape.elements(), f16(1.0f));
    const double tm = stage_seconds(m, pm, data), tn = stage_seconds(m, pn, data);
    const std::string ratio =
        pm.added_bytes() == 0
            ? (pn.added_bytes() == 0 ? "-" : "inf")
            : fmt::format("{:.1f}x", static_cast<double>(pn.added_bytes()) / static_cast<double>(pm.added_bytes()));
    fmt::print("| {} | {} | {} | {} | {} | {} | {} | {:.2f} | {:.2f} |\n", l.net, l.op, l.shape.str(),
               to_string(pm.kind), pm.added_bytes(), pn.added_bytes(), ratio, tm * 1e3, tn * 1e3);
    if (pn.added_bytes() > 0 && pm.added_bytes() >= pn.added_bytes()) {
      fmt::print(stderr, "method does not beat naive on {}\n", l.shape.str());
      return 1;
    }
  }
  return 0;
}
