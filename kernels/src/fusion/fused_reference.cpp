// A fused program evaluated on the host in fp32, value by value: the reference of a fused op cut from a larger one
// (whose members' references were bound for the whole op's shapes).
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "ldmsim/kernels/fused_kernel.hpp"

namespace ldmsim {

namespace {

/// Row-major strides of `dims`, 0 on axes of size 1 (broadcast when read at a larger index space).
std::vector<std::uint64_t> broadcast_strides(const std::vector<std::uint64_t>& dims) {
  std::vector<std::uint64_t> s(dims.size(), 0);
  std::uint64_t step = 1;
  for (std::size_t a = dims.size(); a-- > 0;) {
    s[a] = dims[a] == 1 ? 0 : step;
    step *= dims[a];
  }
  return s;
}

std::uint64_t elements(const std::vector<std::uint64_t>& dims) {
  std::uint64_t n = 1;
  for (const std::uint64_t d : dims) n *= d;
  return n;
}

/// Calls f(flat index in `dims`, multi-index) for every element of `dims`, in row-major order.
template <typename F>
void for_each_index(const std::vector<std::uint64_t>& dims, F&& f) {
  const std::uint64_t n = elements(dims);
  std::vector<std::uint64_t> at(dims.size(), 0);
  for (std::uint64_t flat = 0; flat < n; ++flat) {
    f(flat, at);
    for (std::size_t a = dims.size(); a-- > 0;) {
      if (++at[a] < dims[a]) break;
      at[a] = 0;
    }
  }
}

std::uint64_t offset(const std::vector<std::uint64_t>& at, const std::vector<std::uint64_t>& strides) {
  std::uint64_t o = 0;
  for (std::size_t a = 0; a < at.size(); ++a) o += at[a] * strides[a];
  return o;
}

void pointwise(const FusedProgram& p, const FusedStep& step, std::vector<std::vector<float>>& data) {
  const auto& dims = p.values[step.result].dims;
  const std::vector<float>& a = data[step.args[0]];
  const auto sa = broadcast_strides(p.values[step.args[0]].dims);
  const bool binary = step.args.size() == 2;
  const std::vector<float>* b = binary ? &data[step.args[1]] : nullptr;
  const auto sb = binary ? broadcast_strides(p.values[step.args[1]].dims) : sa;
  std::vector<float> y(elements(dims));
  for_each_index(dims, [&](std::uint64_t flat, const std::vector<std::uint64_t>& at) {
    y[flat] = step.fn(a[offset(at, sa)], binary ? (*b)[offset(at, sb)] : 0.0f);
  });
  data[step.result] = std::move(y);
}

/// Reduces over the frame's K block as the kernel does: sums in double, a value constant along K counted K times,
/// a mean divided by K.
void reduce(const FusedProgram& p, const FusedStep& step, std::vector<std::vector<float>>& data) {
  const auto& dims = p.values[step.result].dims;
  const FusedValue& arg = p.values[step.args[0]];
  const std::vector<float>& x = data[step.args[0]];
  const auto sx = broadcast_strides(arg.dims);
  std::vector<std::uint64_t> block(arg.dims.size(), 1);
  for (std::size_t a = p.frame.k_begin; a < p.frame.k_end; ++a) block[a] = arg.dims[a];
  const bool sums = step.mode == ReduceMode::kSum || step.mode == ReduceMode::kMean;
  const auto k = static_cast<float>(p.frame.k());
  std::vector<float> y(elements(dims));
  for_each_index(dims, [&](std::uint64_t flat, const std::vector<std::uint64_t>& at) {
    float acc = step.mode == ReduceMode::kMax   ? -std::numeric_limits<float>::infinity()
                : step.mode == ReduceMode::kMin ? std::numeric_limits<float>::infinity()
                                                : 0.0f;
    double sum = 0.0;
    std::vector<std::uint64_t> here = at;
    for_each_index(block, [&](std::uint64_t, const std::vector<std::uint64_t>& kk) {
      for (std::size_t a = p.frame.k_begin; a < p.frame.k_end; ++a) here[a] = kk[a];
      const float v = x[offset(here, sx)];
      if (sums) {
        sum += v;
      } else {
        acc = step.mode == ReduceMode::kMax ? std::max(acc, v) : std::min(acc, v);
      }
    });
    if (sums) acc = arg.k ? static_cast<float>(sum) : static_cast<float>(sum) * k;
    y[flat] = step.mode == ReduceMode::kMean ? acc / k : acc;
  });
  data[step.result] = std::move(y);
}

}  // namespace

std::vector<HostTensor> evaluate_program(const FusedProgram& program, std::span<const HostTensor> inputs,
                                         std::span<const Shape> output_shapes) {
  if (inputs.size() != program.inputs.size() || output_shapes.size() != program.outputs.size()) {
    throw ConfigError(fmt::format("evaluate_program: {} inputs and {} outputs given, the program has {} and {}",
                                  inputs.size(), output_shapes.size(), program.inputs.size(), program.outputs.size()));
  }
  std::vector<std::vector<float>> data(program.values.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::size_t v = program.inputs[k];
    if (inputs[k].data.size() != elements(program.values[v].dims)) {
      throw ConfigError(fmt::format("evaluate_program: input {} has {} elements, its value '{}' {}", k,
                                    inputs[k].data.size(), program.values[v].name, elements(program.values[v].dims)));
    }
    data[v] = inputs[k].data;
  }
  for (const FusedStep& step : program.steps) {
    if (step.kind == FusedStep::Kind::kReduce) {
      reduce(program, step, data);
    } else {
      pointwise(program, step, data);
    }
  }
  std::vector<HostTensor> out;
  for (std::size_t k = 0; k < program.outputs.size(); ++k) out.push_back({output_shapes[k], data[program.outputs[k]]});
  return out;
}

}  // namespace ldmsim
