// Reading ONNX TensorProto values (see onnx_nodes.hpp): sizes are checked against the dims before anything is
// allocated, so a hostile initializer cannot make the importer allocate more than the file holds.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>

#include "ldmsim/sim/fp16.hpp"
#include "ldmsim/sim/fp16_saturated.hpp"
#include "onnx_nodes.hpp"

namespace ldmsim::onnx_import {
namespace {

/// Element count of `dims`, or nullopt when one is negative or the product overflows 2^48.
std::optional<std::uint64_t> element_count(const onnx::TensorProto& tensor, std::vector<std::uint64_t>& dims) {
  std::uint64_t count = 1;
  for (const std::int64_t d : tensor.dims()) {
    if (d < 0) return std::nullopt;
    const auto u = static_cast<std::uint64_t>(d);
    if (u != 0 && count > (std::uint64_t{1} << 48) / u) return std::nullopt;
    count *= u;
    dims.push_back(u);
  }
  return count;
}

template <typename T>
T load(const std::string& raw, std::size_t i) {
  T v;
  std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
  return v;
}

/// Calls f(i, value) for every value of a checked tensor (type and size as read_tensor verified).
template <typename F>
void for_each_value(const onnx::TensorProto& tensor, std::uint64_t count, F&& f) {
  using DT = onnx::TensorProto;
  const bool raw = tensor.has_raw_data();
  const std::string& bytes = tensor.raw_data();
  for (std::size_t i = 0; i < count; ++i) {
    const int at = static_cast<int>(i);
    switch (tensor.data_type()) {
      case DT::FLOAT:
        f(i, raw ? load<float>(bytes, i) : tensor.float_data(at));
        break;
      case DT::FLOAT16: {
        const auto bits = raw ? load<std::uint16_t>(bytes, i) : static_cast<std::uint16_t>(tensor.int32_data(at));
        f(i, static_cast<double>(static_cast<float>(f16::from_bits(bits))));
        break;
      }
      case DT::DOUBLE:
        f(i, raw ? load<double>(bytes, i) : tensor.double_data(at));
        break;
      case DT::INT32:
        f(i, raw ? load<std::int32_t>(bytes, i) : tensor.int32_data(at));
        break;
      case DT::BOOL:
      case DT::UINT8:
        f(i, raw ? load<std::uint8_t>(bytes, i) : tensor.int32_data(at));
        break;
      case DT::INT8:
        f(i, raw ? load<std::int8_t>(bytes, i) : tensor.int32_data(at));
        break;
      default:
        f(i, static_cast<double>(raw ? load<std::int64_t>(bytes, i) : tensor.int64_data(at)));
        break;
    }
  }
}

std::uint64_t product(const std::vector<std::uint64_t>& dims) {
  std::uint64_t n = 1;
  for (const std::uint64_t d : dims) n *= d;  // checked against 2^48 when read
  return n;
}

}  // namespace

std::optional<std::int64_t> exact_integer(double v) {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  if (!std::isfinite(v) || v != std::trunc(v) || v >= kLimit || v <= -kLimit) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

bool decode(Constant& c) {
  if (c.source == nullptr) return true;
  const std::uint64_t count = product(c.dims);
  if (count > kMaxFoldedElements) return false;
  c.values.resize(count);
  if (c.streamed != nullptr) {  // the exact fp32 values, not the rounded ones
    read_streamed_floats(*c.streamed, [&](std::size_t i, float v) { c.values[i] = v; });
  } else {
    for_each_value(*c.source, count, [&](std::size_t i, double v) { c.values[i] = v; });
  }
  c.source = nullptr;
  c.streamed = nullptr;
  return true;
}

namespace {

bool raw_fp32(const Constant& c) {
  return c.source != nullptr && c.source->data_type() == onnx::TensorProto::FLOAT && c.source->has_raw_data();
}

/// The streamed weight's fp16 values, which nothing has taken yet.
const SharedHalves& untaken_halves(const Constant& c) {
  if (c.streamed->taken) {
    throw std::logic_error(fmt::format("ONNX import: the data of a constant of {} elements was taken before",
                                       c.streamed->bytes / sizeof(float)));
  }
  return c.streamed->halves;
}

}  // namespace

SharedHalves take_fp16(Constant& c, std::uint64_t& saturated) {
  if (c.streamed != nullptr) {  // rounded while the model was read
    SharedHalves halves = untaken_halves(c);
    saturated += c.streamed->saturated->load();
    c.streamed->taken = true;
    c.streamed->halves = {};
    c.source = nullptr;
    c.streamed = nullptr;
    c.values.clear();
    return halves;
  }
  if (!raw_fp32(c)) {
    std::vector<f16> out;
    append_fp16(c, out, saturated);
    return SharedHalves(std::move(out));
  }
  // The source lies in the importer's own model, which nothing reads after this: its bytes become the values.
  auto* source = const_cast<onnx::TensorProto*>(c.source);
  const std::uint64_t count = product(c.dims);
  if (source->raw_data().size() != count * sizeof(float)) {  // read_tensor checked it: another taker consumed it
    throw std::logic_error(fmt::format("ONNX import: the data of a constant of {} elements was taken before", count));
  }
  auto owner = std::make_shared<std::string>(std::move(*source->mutable_raw_data()));
  source->mutable_raw_data()->clear();  // a moved-from string's contents are unspecified: make the take visible
  c.source = nullptr;
  c.values.clear();
  saturated += float_bytes_to_halves_saturated(owner->data(), count, owner->data());
  const auto* values = reinterpret_cast<const f16*>(owner->data());
  return SharedHalves(std::move(owner), values, count);
}

void append_fp16(const Constant& c, std::vector<f16>& out, std::uint64_t& saturated) {
  if (c.streamed != nullptr) {
    const std::span<const f16> halves = untaken_halves(c).span();
    out.insert(out.end(), halves.begin(), halves.end());
    saturated += c.streamed->saturated->load();
    return;
  }
  if (raw_fp32(c)) {  // a model's fp32 weights, rounded by the vector conversion
    const std::uint64_t count = product(c.dims);
    const std::size_t at = out.size();
    out.resize(at + count);
    saturated += float_bytes_to_halves_saturated(c.source->raw_data().data(), count, out.data() + at);
    return;
  }
  const auto push = [&out, &saturated](std::size_t, double v) { out.push_back(saturated_half(v, saturated)); };
  if (c.source == nullptr) {
    out.reserve(out.size() + c.values.size());
    for (std::size_t i = 0; i < c.values.size(); ++i) push(i, c.values[i]);
    return;
  }
  const std::uint64_t count = product(c.dims);
  out.reserve(out.size() + count);
  for_each_value(*c.source, count, push);
}

std::optional<Constant> read_tensor(const onnx::TensorProto& tensor, std::string& problem, StreamedWeight* streamed) {
  Constant c;
  const auto count = element_count(tensor, c.dims);
  if (!count) {
    problem = "has a negative dimension or more than 2^48 elements";
    return std::nullopt;
  }
  if (c.dims.size() > kMaxConstantRank) {
    problem = fmt::format("has rank {} (at most {})", c.dims.size(), kMaxConstantRank);
    return std::nullopt;
  }
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    problem = "keeps its data in an external file (not supported: save the model with its weights inside)";
    return std::nullopt;
  }
  using DT = onnx::TensorProto;
  const int type = tensor.data_type();
  std::size_t width = 0;
  int typed_size = 0;
  switch (type) {
    case DT::FLOAT:
      width = 4, typed_size = tensor.float_data_size();
      break;
    case DT::FLOAT16:
      width = 2, typed_size = tensor.int32_data_size();
      break;
    case DT::DOUBLE:
      width = 8, typed_size = tensor.double_data_size();
      break;
    case DT::INT32:
      width = 4, typed_size = tensor.int32_data_size(), c.integer = true;
      break;
    case DT::INT64:
      width = 8, typed_size = tensor.int64_data_size(), c.integer = true;
      break;
    case DT::BOOL:  // masks: 0 and 1
      width = 1, typed_size = tensor.int32_data_size(), c.integer = true, c.boolean = true;
      break;
    case DT::INT8:
    case DT::UINT8:
      width = 1, typed_size = tensor.int32_data_size(), c.integer = true;
      break;
    default:
      problem = fmt::format("has data type {} (supported: float, float16, double, int32, int64, bool, int8, uint8)",
                            DT::DataType_Name(static_cast<DT::DataType>(type)));
      return std::nullopt;
  }
  // A streamed tensor's raw data is its fp32 bytes (the skeleton keeps only FLOAT tensors' data out).
  const bool raw = streamed != nullptr || tensor.has_raw_data();
  const std::uint64_t raw_bytes = streamed != nullptr ? streamed->bytes : tensor.raw_data().size();
  const std::uint64_t have = raw ? raw_bytes / width : static_cast<std::uint64_t>(typed_size);
  if (have != *count || (raw && raw_bytes % width != 0)) {
    problem = fmt::format("holds {} values but its dims need {}", have, *count);
    return std::nullopt;
  }
  c.source = &tensor;
  c.streamed = streamed;
  if (*count <= kEagerElements) decode(c);
  return c;
}

}  // namespace ldmsim::onnx_import
