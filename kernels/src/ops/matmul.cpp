// fc, matmul (numpy / ONNX MatMul: A [..., M, K] x B [..., K, N], leading dims broadcast, a 1-D operand promoted
// and its axis dropped) and gemm (ONNX Gemm: Y = alpha * op(A) op(B) + beta * C, A and B 2-D, transA/transB, C
// broadcast to [M, N]). All run the tiled matrix multiply engine; fc is gemm with transB on X's
// [samples, c*h*w] matrix and its bias as C. Every operand is a 2-D class matrix view
// [matrices * rows, cols], so its rows start at even elements (add-a-column) or come in pairs (add-a-row). Each
// takes an optional "activation" (relu or clip, activation.hpp) applied to its outputs as they are stored.
#include "matrix_multiply.hpp"
#include "op_support.hpp"
#include "ops.hpp"

namespace ldmsim::ops {

namespace {

/// A stored matrix of `matrices` x [rows, cols].
struct MatrixShape {
  std::size_t matrices = 1, rows = 1, cols = 1;
  bool transposed = false;
  Shape4 view() const { return Shape4::from_dims({matrices * rows, cols}); }
};

/// A device tensor's address and layout: staged, or as the padding method would stage it.
struct Placed {
  DeviceAddr at;
  Layout layout;
};

/// The engine's view of a device tensor stored as `m` (run_matrix_multiply checks its layout).
StoredMatrix stored(const Placed& t, const MatrixShape& m) {
  return StoredMatrix{DevicePtr<const f16>(t.at), t.layout, m.rows, m.cols, m.transposed};
}

/// The fp32 reference of one logical element of a stored operand.
float element(const HostTensor& t, const MatrixShape& m, std::size_t matrix, std::size_t i, std::size_t j) {
  const std::size_t r = m.transposed ? j : i, c = m.transposed ? i : j;
  return t.data[(matrix * m.rows + r) * m.cols + c];
}

/// Operand shapes, batch maps and scalars of one bound matmul or gemm.
struct MatrixDims {
  MatrixShape a, b, c;
  std::vector<std::size_t> a_batch, b_batch;
  std::size_t m = 1, n = 1, k = 1;
  float alpha = 1.0f, beta = 1.0f;
  Shape out;
  Activation activation;
  /// matmul's folded bias (input 2, a vector over the output's columns): none, or the add's first / second operand.
  enum class Bias : std::uint8_t { kNone, kBefore, kAfter } bias = Bias::kNone;
};

/// What matmul and gemm share: operand shapes, batch maps, the output matrix and the kernel launch.
class MatrixOp final : public BoundOp {
 public:
  MatrixOp(std::span<const Shape> in, MatrixDims d, SplitGeometry split, bool is_matmul = false)
      : BoundOp({in.begin(), in.end()}, {d.out}), d_(std::move(d)), split_(split), is_matmul_(is_matmul) {}
  InputRole input_role(std::size_t i) const override { return i == 0 ? InputRole::kData : InputRole::kParameter; }
  bool folds_activation() const override { return !d_.activation; }
  bool folds_bias() const override { return is_matmul_ && d_.bias == MatrixDims::Bias::kNone && !d_.activation; }
  SplitGeometry split_geometry() const override { return split_; }
  PaddingSpec padding(std::size_t index) const override {
    // Y's rows start at even elements, so its blocks can split rows among cores (PaddingSpec::even_rows).
    return PaddingSpec{PaddingClass::kTwoD, Unit::kSample, Unit::kSample, index == input_shapes().size()};
  }
  Shape4 view(std::size_t index) const override {
    if (index == 0) return d_.a.view();
    if (index == 1) return d_.b.view();
    if (index == input_shapes().size()) return Shape4::from_dims({batches() * d_.m, d_.n});
    return d_.c.view();
  }
  void run(Machine& machine, std::span<const DeviceTensor> in, std::span<const DeviceTensor> out,
           const std::string& label) const override {
    std::vector<Placed> operands;
    for (const DeviceTensor& t : in) operands.push_back({t.ptr.addr(), t.layout()});
    metrics_ = {
        {"blocking", run_matrix_multiply(machine, label, job_of(operands, {out[0].ptr.addr(), out[0].layout()}))}};
    if (d_.activation) metrics_["activation"] = d_.activation.to_json();
  }
  /// The blocking search's estimate of the job as the padding method stages its operands (what the kernel searches
  /// before it launches).
  std::optional<double> kernel_estimate(const Arch& arch, KernelEstimates& memo) const override {
    // Addresses a transaction apart from nothing: the search prices reads by their offsets within transactions.
    const auto placed = [&](std::size_t i) {
      return Placed{DeviceAddr{(i + 1) << 30}, choose_plan(view(i), padding(i), StagingPolicy::kMethod).layout};
    };
    std::vector<Placed> operands;
    for (std::size_t i = 0; i < input_shapes().size(); ++i) operands.push_back(placed(i));
    return estimated_matrix_multiply(memo, arch, job_of(operands, placed(input_shapes().size())));
  }
  std::vector<HostTensor> reference(std::span<const HostTensor> in) const override {
    HostTensor y{output_shapes()[0], std::vector<float>(batches() * d_.m * d_.n)};
    for (std::size_t b = 0; b < batches(); ++b) {
      for (std::size_t i = 0; i < d_.m; ++i) {
        for (std::size_t j = 0; j < d_.n; ++j) {
          double sum = 0;
          for (std::size_t t = 0; t < d_.k; ++t) {
            sum += static_cast<double>(element(in[0], d_.a, d_.a_batch[b], i, t)) *
                   element(in[1], d_.b, d_.b_batch[b], t, j);
          }
          double v = d_.alpha * sum;
          if (in.size() == 3)
            v += static_cast<double>(d_.beta) * element(in[2], d_.c, 0, d_.c.rows == 1 ? 0 : i, d_.c.cols == 1 ? 0 : j);
          y.data[(b * d_.m + i) * d_.n + j] = static_cast<float>(d_.activation.reference(v));
        }
      }
    }
    return {y};
  }
  OpCost cost() const override {
    const std::uint64_t products = static_cast<std::uint64_t>(batches()) * d_.m * d_.n;
    return {2 * products * d_.k + (input_shapes().size() == 3 ? 2 * products : 0) + d_.activation.ops() * products, 0};
  }
  Tolerance tolerance() const override { return {2e-3, 1.0 / 512}; }
  nlohmann::json run_metrics() const override { return metrics_; }

 private:
  std::size_t batches() const { return d_.a_batch.size(); }

  /// The engine's job on these operands and this output.
  MatrixMultiply job_of(std::span<const Placed> in, const Placed& out) const {
    MatrixMultiply job{.a = stored(in[0], d_.a),
                       .b = stored(in[1], d_.b),
                       .a_batch = d_.a_batch,
                       .b_batch = d_.b_batch,
                       .m = d_.m,
                       .n = d_.n,
                       .k = d_.k,
                       .alpha = d_.alpha,
                       .has_addend = in.size() == 3,
                       .c = {},
                       .y = DevicePtr<f16>(out.at),
                       .yl = out.layout,
                       .activation = d_.activation};
    if (job.has_addend) job.c = Addend{stored(in[2], d_.c), d_.beta};
    job.addend_rounded = d_.bias != MatrixDims::Bias::kNone;
    job.addend_first = d_.bias == MatrixDims::Bias::kBefore;
    return job;
  }

  MatrixDims d_;
  SplitGeometry split_;
  bool is_matmul_;
  mutable nlohmann::json metrics_;  ///< the last run's blocking
};

MatrixDims infer_matmul(std::string_view name, std::span<const Shape> in) {
  const Shape& a = in[0];
  const Shape& b = in[1];
  if (a.rank() == 0 || b.rank() == 0) reject(name, fmt::format("A {} and B {} must have rank >= 1", a.str(), b.str()));
  MatrixDims d;
  const std::size_t kb = b.rank() == 1 ? b[0] : b[b.rank() - 2];
  d.k = a[a.rank() - 1];
  if (d.k != kb) {
    reject(name, fmt::format("A {} and B {} do not chain: A has {} columns, B {} rows", a.str(), b.str(), d.k, kb));
  }
  d.m = a.rank() == 1 ? 1 : a[a.rank() - 2];
  d.n = b.rank() == 1 ? 1 : b[b.rank() - 1];
  const Shape a_batch(a.rank() > 2 ? a.dims().first(a.rank() - 2) : std::span<const std::uint64_t>{}, "A's batch");
  const Shape b_batch(b.rank() > 2 ? b.dims().first(b.rank() - 2) : std::span<const std::uint64_t>{}, "B's batch");
  const Shape batch = broadcast_shapes(a_batch, b_batch);
  d.a_batch = broadcast_batches(a_batch, batch);
  d.b_batch = broadcast_batches(b_batch, batch);
  d.a = {a_batch.elements(), d.m, d.k, false};
  // A 1-D B is the column [K, 1]: stored as the row [1, K] and read transposed, so its elements stay contiguous.
  d.b = b.rank() == 1 ? MatrixShape{1, 1, d.k, true} : MatrixShape{b_batch.elements(), d.k, d.n, false};
  std::vector<std::uint64_t> dims(batch.dims().begin(), batch.dims().end());
  if (a.rank() > 1) dims.push_back(d.m);
  if (b.rank() > 1) dims.push_back(d.n);
  d.out = Shape(dims, fmt::format("{}: output", name));
  if (b_batch.elements() == 1 && a_batch.elements() > 1) {
    // One B for every matrix of A (a transformer's linear layer on [S, B, H]): A's matrices are consecutive rows of
    // one [batches * M, K] matrix, and Y's of one [batches * M, N]: one multiply reads B once, not once per matrix.
    d.m *= a_batch.elements();
    d.a = {1, d.m, d.k, false};
    d.a_batch = d.b_batch = {0};
  }
  return d;
}

MatrixDims infer_gemm(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"alpha", "beta", "transA", "transB", "activation"});
  MatrixDims d;
  d.alpha = static_cast<float>(num_attr(attrs, "alpha", 1.0));
  d.beta = static_cast<float>(num_attr(attrs, "beta", 1.0));
  const bool ta = int_attr(attrs, "transA", 0, 0, 1) == 1, tb = int_attr(attrs, "transB", 0, 0, 1) == 1;
  const Shape& a = in[0];
  const Shape& b = in[1];
  if (a.rank() != 2 || b.rank() != 2) reject(name, fmt::format("A {} and B {} must be 2-D", a.str(), b.str()));
  d.m = ta ? a[1] : a[0];
  d.k = ta ? a[0] : a[1];
  d.n = tb ? b[0] : b[1];
  const std::size_t kb = tb ? b[1] : b[0];
  if (kb != d.k) {
    reject(name, fmt::format("op(A) is [{}, {}] and op(B) [{}, {}] (transA {}, transB {}): inner sizes differ", d.m,
                             d.k, kb, d.n, ta ? 1 : 0, tb ? 1 : 0));
  }
  d.a = {1, a[0], a[1], ta};
  d.b = {1, b[0], b[1], tb};
  d.a_batch = d.b_batch = {0};
  if (in.size() == 3) {
    const Shape& c = in[2];
    const std::size_t rows = c.rank() == 2 ? c[0] : 1, cols = c.rank() >= 1 ? c[c.rank() - 1] : 1;
    if (c.rank() > 2 || (rows != 1 && rows != d.m) || (cols != 1 && cols != d.n)) {
      reject(name, fmt::format("C {} does not broadcast to [{}, {}]", c.str(), d.m, d.n));
    }
    d.c = {1, rows, cols, false};
  }
  d.out = Shape{d.m, d.n};
  return d;
}

/// fc: Y[n, k] = X[n, c*h*w] W[k, c*h*w]^T + b[k]: gemm with transB on X's [samples, c*h*w] matrix, the bias
/// as C broadcast over the rows.
MatrixDims infer_fc(std::string_view name, std::span<const Shape> in) {
  const Shape& x = in[0];
  const Shape& w = in[1];
  if (x.rank() < 1 || x.rank() > 4) reject(name, fmt::format("X {} must have 1 to 4 dims (NCHW)", x.str()));
  const std::uint64_t chw = x.product(1, x.rank());
  if (w.rank() != 2 || w[1] != chw) {
    reject(name, fmt::format("W {} must be [k, {}] (c*h*w of X {})", w.str(), chw, x.str()));
  }
  if (in.size() == 3 && !(in[2] == Shape{w[0]})) reject(name, fmt::format("bias {} must be [{}]", in[2].str(), w[0]));
  MatrixDims d;
  d.m = x[0];
  d.k = chw;
  d.n = w[0];
  d.a = {1, d.m, d.k, false};
  d.b = {1, d.n, d.k, true};
  d.c = {1, 1, d.n, false};
  d.a_batch = d.b_batch = {0};
  d.out = Shape{d.m, d.n};
  return d;
}

std::unique_ptr<BoundOp> bind_fc(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"activation"});
  MatrixDims d = infer_fc(name, in);
  d.activation = Activation::parse(name, attrs);
  return std::make_unique<MatrixOp>(in, std::move(d), SplitGeometry{.trans_b = true, .flattens_a = true});
}

/// matmul's attribute "bias" ("before" or "after": the folded add's order) and its input 2, a vector [..., N] of
/// N elements added to every output row.
MatrixDims::Bias parse_bias(std::string_view name, const JsonField& attrs, std::span<const Shape> in, std::size_t n) {
  const auto v = attrs.find("bias");
  std::string order;
  if (v) {
    order = v->json().is_string() ? v->string() : "";
    if (order != "before" && order != "after") v->fail("must be \"after\" (Y = A B + bias) or \"before\" (bias + A B)");
  }
  if (order.empty() != (in.size() == 2)) {
    reject(name, in.size() == 2 ? "attribute bias needs a third input (the bias vector)"
                                : "a third input is a bias vector: give attribute bias (\"before\" or \"after\")");
  }
  if (order.empty()) return MatrixDims::Bias::kNone;
  const Shape& c = in[2];
  if (c.rank() == 0 || c[c.rank() - 1] != n || c.elements() != n) {
    reject(name, fmt::format("the bias {} must be a vector of the output's {} columns", c.str(), n));
  }
  return order == "before" ? MatrixDims::Bias::kBefore : MatrixDims::Bias::kAfter;
}

std::unique_ptr<BoundOp> bind_matmul(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  check_attrs(attrs, {"activation", "bias"});
  MatrixDims d = infer_matmul(name, in.first(2));
  d.bias = parse_bias(name, attrs, in, d.n);
  if (d.bias != MatrixDims::Bias::kNone) d.c = {1, 1, d.n, false};
  d.activation = Activation::parse(name, attrs);
  const bool batched = in[0].rank() != 2 || in[1].rank() != 2;  // the split rule cuts one [M, K] x [K, N] only
  return std::make_unique<MatrixOp>(in, std::move(d), SplitGeometry{.batched = batched}, true);
}

std::unique_ptr<BoundOp> bind_gemm(std::string_view name, const JsonField& attrs, std::span<const Shape> in) {
  MatrixDims d = infer_gemm(name, attrs, in);
  d.activation = Activation::parse(name, attrs);
  const SplitGeometry split{.trans_a = d.a.transposed, .trans_b = d.b.transposed};
  return std::make_unique<MatrixOp>(in, std::move(d), split);
}

}  // namespace

void add_matmul_kinds(OperatorRegistry& registry) {
  registry.add(
      std::make_unique<FunctionKind>("matmul", Arity{2, 3, 1}, bind_matmul, OperatorTraits{SplitRule::kMatrix}));
  registry.add(std::make_unique<FunctionKind>("gemm", Arity{2, 3, 1}, bind_gemm, OperatorTraits{SplitRule::kMatrix}));
  registry.add(std::make_unique<FunctionKind>("fc", Arity{2, 3, 1}, bind_fc, OperatorTraits{SplitRule::kMatrix}));
}

}  // namespace ldmsim::ops
