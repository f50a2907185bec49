// numpy arrays <-> fp16 tensors (see numpy_tensors.hpp).
#include "numpy_tensors.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "json_python.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace py = pybind11;

namespace ldmsim::python {

namespace {

/// An integer or bool array as the int32 words the device holds (an int64 value outside int32 refused by index).
TensorValues integral_tensor(const std::string& name, py::array array, std::vector<std::size_t> shape, bool boolean) {
  py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> wide(array);
  std::vector<std::int32_t> words(static_cast<std::size_t>(wide.size()));
  const std::int64_t* v = wide.data();
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (v[i] < INT32_MIN || v[i] > INT32_MAX) {
      throw py::value_error("input '" + name + "': value " + std::to_string(v[i]) + " at index " + std::to_string(i) +
                            " does not fit in int32 (integers are held as int32)");
    }
    words[i] = boolean ? (v[i] != 0 ? 1 : 0) : static_cast<std::int32_t>(v[i]);
  }
  return TensorValues{std::move(shape), SharedHalves(words_to_units(words)), boolean ? DType::kBool : DType::kI32};
}

TensorValues to_tensor(const std::string& name, const py::handle& value) {
  py::array array = py::array::ensure(value);
  if (!array) throw py::type_error("input '" + name + "' is not an array (numpy.ndarray expected)");
  const py::dtype dtype = array.dtype();
  std::vector<std::size_t> shape(static_cast<std::size_t>(array.ndim()));
  for (std::size_t i = 0; i < shape.size(); ++i) {
    shape[i] = static_cast<std::size_t>(array.shape(static_cast<py::ssize_t>(i)));
  }
  if (dtype.kind() == 'b') return integral_tensor(name, array, std::move(shape), true);
  if (dtype.kind() == 'i' || dtype.kind() == 'u') return integral_tensor(name, array, std::move(shape), false);
  if (dtype.kind() != 'f' || (dtype.itemsize() != 2 && dtype.itemsize() != 4)) {
    throw py::type_error("input '" + name + "' has dtype " + py::str(py::object(dtype)).cast<std::string>() +
                         "; give float32 or float16 (it is rounded to fp16 as a .npy input is), an integer type "
                         "(ids, indices) or bool (masks), e.g. x.astype(numpy.float32)");
  }
  // Native byte order, C order: numpy converts exactly (no rounding) when the array is otherwise laid out.
  const py::object native = dtype.attr("newbyteorder")("=");
  array = py::array::ensure(array.attr("astype")(native, py::arg("copy") = false), py::array::c_style);
  if (!array) throw py::error_already_set();
  std::vector<f16> values(static_cast<std::size_t>(array.size()));
  if (dtype.itemsize() == 2) {
    std::memcpy(values.data(), array.data(), values.size() * sizeof(f16));
  } else {
    floats_to_halves({static_cast<const float*>(array.data()), values.size()}, values);
  }
  return TensorValues{std::move(shape), SharedHalves(std::move(values)), DType::kF16, dtype.itemsize() == 4};
}

}  // namespace

std::map<std::string, TensorValues> input_tensors(const py::handle& inputs) {
  if (!py::isinstance<py::dict>(inputs)) {
    throw py::type_error("inputs must be a dict of input name -> numpy array, not " +
                         std::string(py::str(inputs.get_type().attr("__name__"))));
  }
  std::map<std::string, TensorValues> tensors;
  for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(inputs)) {
    if (!py::isinstance<py::str>(key)) throw py::type_error("input names must be str");
    const std::string name = key.cast<std::string>();
    tensors.emplace(name, to_tensor(name, value));
  }
  return tensors;
}

py::array to_numpy(const TensorValues& tensor, bool as_float16) {
  std::vector<py::ssize_t> shape(tensor.shape.begin(), tensor.shape.end());
  if (tensor.dtype != DType::kF16) {
    const std::vector<std::int32_t> words = units_to_words(tensor.values.span());
    if (tensor.dtype == DType::kI32) {
      py::array_t<std::int32_t> ints(shape);
      std::copy(words.begin(), words.end(), ints.mutable_data());
      return ints;
    }
    py::array_t<bool> mask(shape);
    std::transform(words.begin(), words.end(), mask.mutable_data(), [](std::int32_t w) { return w != 0; });
    return mask;
  }
  if (as_float16) {
    // The array shares the run's values (its base owns a reference to them), read-only: they may be the model's.
    auto owner = std::make_unique<SharedHalves>(tensor.values);
    py::capsule base(owner.get(), [](void* p) { delete static_cast<SharedHalves*>(p); });
    const f16* data = owner.release()->data();
    py::array shared(py::dtype("float16"), shape, static_cast<const void*>(data), base);
    shared.attr("flags").attr("writeable") = false;
    return shared;
  }
  py::array_t<float> widened(shape);
  halves_to_floats(tensor.values.span(), {widened.mutable_data(), static_cast<std::size_t>(widened.size())});
  return widened;
}

}  // namespace ldmsim::python
