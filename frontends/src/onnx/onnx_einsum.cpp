// Einsum as ops the device already runs: each operand's indices that nothing else reads are summed away
// (reduce_sum), operands are contracted two at a time by one matmul between transposes and reshapes (shared kept
// indices its batch, shared summed ones its inner dimension), and the result is transposed to the output's order.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <optional>
#include <string_view>

#include "onnx_translator.hpp"

namespace ldmsim::onnx_import {
namespace {

/// An index of the equation: a letter's code, or kEllipsis + k for the k-th axis an ellipsis covers.
using Label = int;
constexpr Label kEllipsis = 256;

/// One term of the equation as written: its letters, and where its ellipsis stands (if it has one).
struct Term {
  std::vector<Label> letters;
  std::optional<std::size_t> ellipsis_at;
};

/// An operand during the lowering: the tensor, its axes' labels and sizes.
struct Operand {
  std::string name;
  std::vector<Label> labels;
  std::vector<std::uint64_t> dims;
};

std::string label_text(Label l) {
  return l >= kEllipsis ? fmt::format("...[{}]", l - kEllipsis) : std::string(1, static_cast<char>(l));
}

/// Parses one term ("bij", "...ij", "B G H I D"); nullopt with a problem on anything else.
std::optional<Term> parse_term(NodeTranslator& t, const std::string& equation, std::string_view text) {
  Term term;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c)) != 0) continue;
    if (std::isalpha(static_cast<unsigned char>(c)) != 0) {
      term.letters.push_back(static_cast<unsigned char>(c));
    } else if (c == '.' && text.substr(i, 3) == "..." && !term.ellipsis_at) {
      term.ellipsis_at = term.letters.size();
      i += 2;
    } else {
      t.problem(fmt::format("equation '{}': '{}' is not an index letter or a single '...'", equation, c));
      return std::nullopt;
    }
  }
  return term;
}

/// A term's labels for an operand of `rank` axes whose ellipsis covers `covered` axes of the widest one's `widest`
/// (right-aligned, as numpy broadcasts).
std::vector<Label> expand(const Term& term, std::size_t covered, std::size_t widest) {
  std::vector<Label> labels(term.letters.begin(), term.letters.end());
  if (term.ellipsis_at) {
    std::vector<Label> axes;
    for (std::size_t k = widest - covered; k < widest; ++k) axes.push_back(kEllipsis + static_cast<Label>(k));
    labels.insert(labels.begin() + static_cast<std::ptrdiff_t>(*term.ellipsis_at), axes.begin(), axes.end());
  }
  return labels;
}

bool contains(const std::vector<Label>& labels, Label l) {
  return std::find(labels.begin(), labels.end(), l) != labels.end();
}

std::uint64_t product(const std::vector<std::uint64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), std::uint64_t{1}, std::multiplies<>());
}

/// Emits the ops; the last one is renamed to the node's output at the end.
class EinsumLowering {
 public:
  EinsumLowering(NodeTranslator& t, std::string output) : t_(t), output_(std::move(output)) {}

  /// `op` with its axes in `order` (labels of op): a transpose unless they already are.
  void permute(Operand& op, const std::vector<Label>& order) {
    if (order == op.labels) return;
    std::vector<std::int64_t> perm;
    std::vector<std::uint64_t> dims;
    for (const Label l : order) {
      const auto at = std::find(op.labels.begin(), op.labels.end(), l) - op.labels.begin();
      perm.push_back(at);
      dims.push_back(op.dims[static_cast<std::size_t>(at)]);
    }
    op.name = emit("transpose", {op.name}, {{"perm", perm}});
    op.labels = order;
    op.dims = std::move(dims);
  }

  /// The same elements as `dims` (a reshape unless they already are).
  std::string reshaped(const std::string& name, const std::vector<std::uint64_t>& from,
                       const std::vector<std::uint64_t>& dims) {
    if (dims == from) return name;
    return emit("reshape", {name}, {{"shape", dims}});
  }

  /// Sums `op` over `summed` (labels of op): moved last, reduced as one block of axes.
  void sum_away(Operand& op, const std::vector<Label>& summed) {
    if (summed.empty()) return;
    std::vector<Label> order;
    for (const Label l : op.labels) {
      if (!contains(summed, l)) order.push_back(l);
    }
    const std::size_t kept = order.size();
    order.insert(order.end(), summed.begin(), summed.end());
    permute(op, order);
    std::vector<std::int64_t> axes(summed.size());
    std::iota(axes.begin(), axes.end(), static_cast<std::int64_t>(kept));
    op.name = emit("reduce_sum", {op.name}, {{"axes", axes}, {"keepdims", 0}});
    op.labels.resize(kept);
    op.dims.resize(kept);
  }

  /// a x b over their shared labels that `needed` lacks; shared labels in `needed` are the batch.
  Operand contract(Operand a, Operand b, const std::vector<Label>& needed) {
    std::vector<Label> batch, inner, rows, cols;
    for (const Label l : a.labels) {
      if (!contains(b.labels, l)) {
        rows.push_back(l);
      } else {
        (contains(needed, l) ? batch : inner).push_back(l);
      }
    }
    for (const Label l : b.labels) {
      if (!contains(a.labels, l)) cols.push_back(l);
    }
    const auto sizes = [](const Operand& op, const std::vector<Label>& labels) {
      std::vector<std::uint64_t> dims;
      for (const Label l : labels) {
        dims.push_back(
            op.dims[static_cast<std::size_t>(std::find(op.labels.begin(), op.labels.end(), l) - op.labels.begin())]);
      }
      return dims;
    };
    const auto joined = [](std::vector<Label> x, const std::vector<Label>& y, const std::vector<Label>& z) {
      x.insert(x.end(), y.begin(), y.end());
      x.insert(x.end(), z.begin(), z.end());
      return x;
    };
    permute(a, joined(batch, rows, inner));
    permute(b, joined(batch, inner, cols));
    const std::vector<std::uint64_t> batch_dims = sizes(a, batch), row_dims = sizes(a, rows), col_dims = sizes(b, cols);
    const std::uint64_t m = product(row_dims), k = product(sizes(a, inner)), n = product(col_dims);
    std::vector<std::uint64_t> lead;
    if (!batch.empty()) lead.push_back(product(batch_dims));  // one batch axis: ranks stay within the device's 6
    const auto with = [&lead](std::uint64_t x, std::uint64_t y) {
      std::vector<std::uint64_t> dims = lead;
      dims.push_back(x);
      dims.push_back(y);
      return dims;
    };
    const std::string left = reshaped(a.name, a.dims, with(m, k)), right = reshaped(b.name, b.dims, with(k, n));
    const std::string product_name = emit("matmul", {left, right});
    Operand out;
    out.labels = joined(batch, rows, cols);
    out.dims = batch_dims;
    out.dims.insert(out.dims.end(), row_dims.begin(), row_dims.end());
    out.dims.insert(out.dims.end(), col_dims.begin(), col_dims.end());
    out.name = reshaped(product_name, with(m, n), out.dims);
    return out;
  }

  /// Makes `result` (with `dims`) the node's output: the op that produced it is renamed, or a reshape is added where
  /// that op is not the last; false when no op was emitted (the output is an operand as it is).
  bool finish(const std::string& result, const std::vector<std::uint64_t>& dims) {
    if (ops_.empty()) return false;
    if (ops_.back()["outputs"][0].get<std::string>() != result) emit("reshape", {result}, {{"shape", dims}});
    ops_.back()["outputs"] = nlohmann::json::array({output_});
    for (nlohmann::json& op : ops_) {
      t_.add_op(op["type"].get<std::string>(), op["inputs"].get<std::vector<std::string>>(),
                op["outputs"].get<std::vector<std::string>>(), op["attrs"]);
    }
    return true;
  }

 private:
  std::string emit(const std::string& type, const std::vector<std::string>& inputs,
                   nlohmann::json attrs = nlohmann::json::object()) {
    const std::string name = t_.fresh_name(fmt::format("{}/einsum_{}", output_, ops_.size()));
    ops_.push_back({{"type", type}, {"inputs", inputs}, {"outputs", {name}}, {"attrs", std::move(attrs)}});
    return name;
  }

  NodeTranslator& t_;
  std::string output_;
  nlohmann::json ops_ = nlohmann::json::array();
};

}  // namespace

void translate_einsum(const onnx::NodeProto& node, NodeTranslator& t, Context& ctx) {
  const Attributes a(node, t.problems(), {"equation"});
  if (!t.arity(1, 64, 1)) return;
  if (!a.has("equation")) {
    t.problem("attribute 'equation' is required");
    return;
  }
  const std::string equation = a.text("equation", "");
  const std::size_t arrow = equation.find("->");
  if (arrow != std::string::npos && equation.find("->", arrow + 2) != std::string::npos) {
    t.problem(fmt::format("equation '{}' has more than one '->'", equation));
    return;
  }
  const std::string lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (std::size_t from = 0;;) {
    const std::size_t comma = lhs.find(',', from);
    const auto term = parse_term(t, equation, std::string_view(lhs).substr(from, comma - from));
    if (!term) return;
    terms.push_back(*term);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  const auto inputs = static_cast<std::size_t>(node.input_size());
  if (terms.size() != inputs) {
    t.problem(fmt::format("equation '{}' has {} operand term(s) for {} input(s)", equation, terms.size(), inputs));
    return;
  }
  // Each operand's axes: its letters and the axes its ellipsis covers.
  std::vector<Operand> operands(inputs);
  std::vector<std::size_t> covered(inputs, 0);
  std::size_t widest = 0;
  for (std::size_t i = 0; i < inputs; ++i) {
    const int index = static_cast<int>(i);
    const auto* dims = t.input_shape(index);
    if (dims == nullptr) return;
    if (tensor_dtype(ctx, t.input(index)) != DType::kF16) {
      t.problem(fmt::format("input {} ('{}') is not a float tensor (Einsum computes in fp16)", i, node.input(index)));
      return;
    }
    const std::size_t letters = terms[i].letters.size();
    if (dims->size() < letters || (!terms[i].ellipsis_at && dims->size() != letters)) {
      t.problem(fmt::format("input {} ('{}') has rank {}, its term in '{}' names {} ax{}", i, node.input(index),
                            dims->size(), equation, letters, letters == 1 ? "is" : "es"));
      return;
    }
    covered[i] = dims->size() - letters;
    widest = std::max(widest, covered[i]);
    operands[i].name = t.input(index);
    operands[i].dims = *dims;
  }
  std::map<Label, std::uint64_t> size;  // each label's size, broadcast over operands where it is 1
  std::map<Label, int> uses;
  for (std::size_t i = 0; i < inputs; ++i) {
    operands[i].labels = expand(terms[i], covered[i], widest);
    for (std::size_t d = 0; d < operands[i].labels.size(); ++d) {
      const Label l = operands[i].labels[d];
      if (std::count(operands[i].labels.begin(), operands[i].labels.end(), l) > 1) {
        t.problem(fmt::format("equation '{}' repeats index '{}' within input {} (a diagonal): not supported", equation,
                              label_text(l), i));
        return;
      }
      const std::uint64_t n = operands[i].dims[d];
      auto [it, fresh] = size.emplace(l, n);
      if (!fresh && it->second != n && it->second != 1 && n != 1) {
        t.problem(fmt::format("equation '{}': index '{}' is {} in one input and {} in input {}", equation,
                              label_text(l), it->second, n, i));
        return;
      }
      if (n != 1) it->second = n;
      ++uses[l];
    }
  }
  std::vector<Label> output;
  if (arrow != std::string::npos) {
    const auto term = parse_term(t, equation, std::string_view(equation).substr(arrow + 2));
    if (!term) return;
    if (!term->ellipsis_at && widest > 0) {
      t.problem(fmt::format("equation '{}': the inputs have '...' axes the output leaves out", equation));
      return;
    }
    output = expand(*term, widest, widest);
  } else {  // implicit: the ellipsis' axes, then the letters used once, alphabetically
    for (std::size_t k = 0; k < widest; ++k) output.push_back(kEllipsis + static_cast<Label>(k));
    for (const auto& [l, count] : uses) {
      if (l < kEllipsis && count == 1) output.push_back(l);
    }
  }
  for (const Label l : output) {
    if (!size.contains(l)) {
      t.problem(fmt::format("equation '{}': output index '{}' is in no input", equation, label_text(l)));
      return;
    }
    if (std::count(output.begin(), output.end(), l) > 1) {
      t.problem(fmt::format("equation '{}' repeats output index '{}'", equation, label_text(l)));
      return;
    }
  }
  if (!t.problems().empty()) return;

  EinsumLowering lowering(t, node.output(0));
  // An axis of size 1 where the index is larger elsewhere broadcasts: the operand is reshaped without it.
  for (Operand& op : operands) {
    Operand kept{op.name, {}, {}};
    for (std::size_t d = 0; d < op.labels.size(); ++d) {
      if (op.dims[d] == 1 && size.at(op.labels[d]) != 1) continue;
      kept.labels.push_back(op.labels[d]);
      kept.dims.push_back(op.dims[d]);
    }
    kept.name = lowering.reshaped(op.name, op.dims, kept.dims);
    op = std::move(kept);
  }
  const auto sum_unneeded = [&](Operand& op, const std::vector<Label>& other, const std::vector<Label>& needed) {
    std::vector<Label> summed;
    for (const Label l : op.labels) {
      if (!contains(other, l) && !contains(needed, l)) summed.push_back(l);
    }
    lowering.sum_away(op, summed);
  };
  const auto shares = [](const Operand& x, const Operand& y) {
    return std::any_of(x.labels.begin(), x.labels.end(), [&](Label l) { return contains(y.labels, l); });
  };
  // Two operands at a time into one, until one is left: the first pair that shares an index (outer products wait,
  // so an intermediate does not outgrow the device's 6 axes before an index is summed), else the first two.
  while (operands.size() > 1) {
    std::size_t first = 0, second = 1;
    for (std::size_t i = 0, found = 0; i < operands.size() && found == 0; ++i) {
      for (std::size_t j = i + 1; j < operands.size(); ++j) {
        if (shares(operands[i], operands[j])) {
          first = i, second = j, found = 1;
          break;
        }
      }
    }
    std::vector<Label> needed = output;  // what the output and the other operands read
    for (std::size_t k = 0; k < operands.size(); ++k) {
      if (k != first && k != second) needed.insert(needed.end(), operands[k].labels.begin(), operands[k].labels.end());
    }
    Operand left = std::move(operands[first]), right = std::move(operands[second]);
    operands.erase(operands.begin() + static_cast<std::ptrdiff_t>(second));
    sum_unneeded(left, right.labels, needed);
    sum_unneeded(right, left.labels, needed);
    operands[first] = lowering.contract(std::move(left), std::move(right), needed);
  }
  Operand result = std::move(operands[0]);
  sum_unneeded(result, {}, output);
  lowering.permute(result, output);
  if (!lowering.finish(result.name, result.dims)) ctx.aliases[node.output(0)] = result.name;  // "ij->ij": as it is
}

}  // namespace ldmsim::onnx_import
