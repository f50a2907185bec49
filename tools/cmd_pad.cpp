// `ldmsim pad --op OP --shape N,C,H,W`: the padding plan the method picks for each tensor of an operator, its
// overhead, and the naive per-dimension plan beside it.
#include <fmt/format.h>

#include <memory>
#include <sstream>

#include "commands.hpp"
#include "ldmsim/kernels/operator.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim::cli {

namespace {

struct PadOptions {
  std::string op;
  std::string shape;
};

Shape parse_dims(const std::string& text) {
  std::vector<std::uint64_t> dims;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    try {
      std::size_t used = 0;
      const long long v = std::stoll(part, &used);
      if (used != part.size() || v <= 0) throw std::invalid_argument(part);
      dims.push_back(static_cast<std::uint64_t>(v));
    } catch (const std::exception&) {
      throw ConfigError(fmt::format("--shape {}: expected positive integers such as 1,3,7,7", text));
    }
  }
  if (dims.empty() || dims.size() > 4) throw ConfigError(fmt::format("--shape {}: give 1 to 4 dimensions", text));
  return Shape(dims, fmt::format("--shape {}", text));  // checked: an element count beyond 2^48 is refused
}

void pad_command(const PadOptions& o) {
  const OperatorRegistry registry = OperatorRegistry::builtin();
  if (registry.find(o.op) == nullptr) {
    throw ConfigError(fmt::format("--op {}: unknown op (known: {})", o.op, fmt::join(registry.names(), ", ")));
  }
  const Shape x = parse_dims(o.shape);
  const Shape4 x4 = Shape4::view_of(x);
  const std::vector<Shape> in = typical_inputs(o.op, x);
  const nlohmann::json no_attrs;
  const auto op = registry.bind(o.op, JsonField(no_attrs, "--op " + o.op, "attrs"), in);
  std::size_t method_total = 0, naive_total = 0;
  fmt::print("{} on {}: padding plans per tensor (fp16, 2 bytes per element)\n", o.op, x4.str());
  const std::size_t count = op->input_shapes().size() + op->output_shapes().size();
  for (std::size_t i = 0; i < count; ++i) {
    const PaddingSpec spec = op->padding(i);
    const Shape4 view = op->view(i);
    const char* cls = spec.cls == PaddingClass::kOneD ? "1-D" : spec.cls == PaddingClass::kTwoD ? "2-D" : "3-D";
    const PaddingPlan m = choose_plan(view, spec, StagingPolicy::kMethod);
    const PaddingPlan n = choose_plan(view, spec, StagingPolicy::kNaive);
    fmt::print("  {} {} [{}] class {}\n", i < in.size() ? "input " : "output", i < in.size() ? i : i - in.size(),
               view.str(), cls);
    for (const PaddingPlan& c : method_candidates(view, spec)) fmt::print("      candidate {}\n", c.describe());
    fmt::print("    method:  {}\n    naive:   {}\n", m.describe(), n.describe());
    method_total += m.added_bytes();
    naive_total += n.added_bytes();
  }
  fmt::print("total bytes added: method {} vs naive {}", method_total, naive_total);
  if (method_total > 0)
    fmt::print(" ({:.2f}x less with the method)", static_cast<double>(naive_total) / static_cast<double>(method_total));
  fmt::print("\n");
}

}  // namespace

void add_pad_command(CLI::App& app) {
  auto options = std::make_shared<PadOptions>();
  CLI::App* pad = app.add_subcommand("pad", "Show the padding plan of an operator for a shape, next to naive padding");
  pad->add_option("--op", options->op, "Operator name (relu, fc, max_pool, spatialbn, ...)")->required();
  pad->add_option("--shape", options->shape, "Input shape N,C,H,W (1 to 4 dims)")->required();
  add_examples(pad, "Example: ldmsim pad --op spatialbn --shape 1,3,5,5");
  pad->callback([options] { pad_command(*options); });
}

}  // namespace ldmsim::cli
