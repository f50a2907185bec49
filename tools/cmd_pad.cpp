// `ldmsim pad --op OP --shape N,C,H,W`: the padding plan the method picks for each tensor of an operator, its
// overhead, and the naive per-dimension plan beside it.
#include <fmt/format.h>

#include <memory>
#include <sstream>

#include "commands.hpp"
#include "ldmsim/kernels/operators.hpp"
#include "ldmsim/runtime/operator.hpp"
#include "ldmsim/sim/fault.hpp"

namespace ldmsim::cli {

namespace {

struct PadOptions {
  std::string op;
  std::string shape;
};

Shape4 parse_dims(const std::string& text) {
  std::vector<std::size_t> dims;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    try {
      std::size_t used = 0;
      const long long v = std::stoll(part, &used);
      if (used != part.size() || v <= 0) throw std::invalid_argument(part);
      dims.push_back(static_cast<std::size_t>(v));
    } catch (const std::exception&) {
      throw ConfigError(fmt::format("--shape {}: expected positive integers such as 1,3,7,7", text));
    }
  }
  return Shape4::from_dims(dims);
}

void pad_command(const PadOptions& o) {
  kernels::register_builtin_operators(operator_registry());
  const Operator* op = operator_registry().find(o.op);
  if (op == nullptr) {
    throw ConfigError(
        fmt::format("--op {}: unknown op (known: {})", o.op, fmt::join(operator_registry().names(), ", ")));
  }
  const Shape4 x = parse_dims(o.shape);
  // Typical companions of the main input: fc gets W [1000, c*h*w] + b, the bn ops per-channel vectors.
  std::vector<Shape4> in{x};
  if (o.op == "add" || o.op == "mul") in.push_back(x);
  if (o.op == "fc") in = {x, Shape4::from_dims({1000, x.chw()}), Shape4::from_dims({1000})};
  if (o.op == "spatialbn") in.insert(in.end(), 4, Shape4::from_dims({x.c}));
  if (o.op == "spatialbn_train") in.insert(in.end(), 2, Shape4::from_dims({x.c}));
  std::vector<Shape4> all = in;
  for (const Shape4& s : op->infer(in, {})) all.push_back(s);
  std::size_t method_total = 0, naive_total = 0;
  fmt::print("{} on {}: padding plans per tensor (fp16, 2 bytes per element)\n", o.op, x.str());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const PaddingSpec spec = op->padding(i);
    const char* cls = spec.cls == PaddingClass::kOneD ? "1-D" : spec.cls == PaddingClass::kTwoD ? "2-D" : "3-D";
    const PaddingPlan m = choose_plan(all[i], spec, StagingPolicy::kMethod);
    const PaddingPlan n = choose_plan(all[i], spec, StagingPolicy::kNaive);
    fmt::print("  {} {} [{}] class {}\n", i < in.size() ? "input " : "output", i < in.size() ? i : i - in.size(),
               all[i].str(), cls);
    for (const PaddingPlan& c : method_candidates(all[i], spec)) fmt::print("      candidate {}\n", c.describe());
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
  pad->callback([options] { pad_command(*options); });
}

}  // namespace ldmsim::cli
