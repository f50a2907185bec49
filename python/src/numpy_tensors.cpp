// numpy arrays <-> fp16 tensors (see numpy_tensors.hpp).
#include "numpy_tensors.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "json_python.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace py = pybind11;

namespace ldmsim::python {

namespace {

TensorValues to_tensor(const std::string& name, const py::handle& value) {
  py::array array = py::array::ensure(value);
  if (!array) throw py::type_error("input '" + name + "' is not an array (numpy.ndarray expected)");
  const py::dtype dtype = array.dtype();
  if (dtype.kind() != 'f' || (dtype.itemsize() != 2 && dtype.itemsize() != 4)) {
    throw py::type_error("input '" + name + "' has dtype " + py::str(py::object(dtype)).cast<std::string>() +
                         "; give float32 or float16 (it is rounded to fp16 as a .npy input is), e.g. "
                         "x.astype(numpy.float32)");
  }
  std::vector<std::size_t> shape(static_cast<std::size_t>(array.ndim()));
  for (std::size_t i = 0; i < shape.size(); ++i) {
    shape[i] = static_cast<std::size_t>(array.shape(static_cast<py::ssize_t>(i)));
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
  return TensorValues{std::move(shape), SharedHalves(std::move(values)), dtype.itemsize() == 4};
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
