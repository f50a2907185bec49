// JSON <-> Python conversion (see json_python.hpp).
#include "json_python.hpp"

#include <cmath>
#include <cstdint>
#include <string>

#include "ldmsim/sim/input_file.hpp"

namespace py = pybind11;

namespace ldmsim::python {

py::str utf8_text(std::string_view bytes) {
  PyObject* text = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "replace");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

py::object to_python(const nlohmann::json& tree) {
  switch (tree.type()) {
    case nlohmann::json::value_t::object: {
      py::dict d;
      for (const auto& [key, value] : tree.items()) d[utf8_text(key)] = to_python(value);
      return d;
    }
    case nlohmann::json::value_t::array: {
      py::list l(tree.size());
      for (std::size_t i = 0; i < tree.size(); ++i) l[i] = to_python(tree[i]);
      return l;
    }
    case nlohmann::json::value_t::string:
      return utf8_text(tree.get_ref<const std::string&>());
    case nlohmann::json::value_t::boolean:
      return py::bool_(tree.get<bool>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(tree.get<std::uint64_t>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(tree.get<std::int64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(tree.get<double>());
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded:
      break;
  }
  return py::none();
}

namespace {

nlohmann::json convert(py::handle value, const std::string& path, int depth) {
  if (depth > kMaxJsonDepth) {
    throw py::value_error(path + " is nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  }
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::float_>(value)) {
    const double v = value.cast<double>();
    if (!std::isfinite(v))
      throw py::value_error(path + " is " + py::str(value).cast<std::string>() + ", not a finite number");
    return v;
  }
  if (py::hasattr(value, "__index__") && !py::isinstance<py::sequence>(value)) {  // int, numpy integers
    const py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
    if (!i) throw py::error_already_set();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow == 0) return static_cast<std::int64_t>(v);
    const unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
    if (PyErr_Occurred() != nullptr) {
      PyErr_Clear();
      throw py::value_error(path + " = " + py::str(value).cast<std::string>() + " does not fit 64 bits");
    }
    return static_cast<std::uint64_t>(u);
  }
  if (py::isinstance<py::dict>(value)) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, item] : py::reinterpret_borrow<py::dict>(value)) {
      if (!py::isinstance<py::str>(key)) {
        throw py::type_error(path + " has a key of type " + std::string(py::str(key.get_type().attr("__name__"))) +
                             "; keys must be str");
      }
      const std::string name = key.cast<std::string>();
      object[name] = convert(item, path + "[\"" + name + "\"]", depth + 1);
    }
    return object;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    nlohmann::json array = nlohmann::json::array();
    std::size_t index = 0;
    for (py::handle item : value) array.push_back(convert(item, path + "[" + std::to_string(index++) + "]", depth + 1));
    return array;
  }
  if (py::hasattr(value, "dtype") && py::hasattr(value, "__float__") && !py::isinstance<py::sequence>(value)) {
    return convert(value.attr("__float__")(), path, depth);  // numpy floating scalars (float32, float16)
  }
  throw py::type_error(path + " is of type " + std::string(py::str(value.get_type().attr("__name__"))) +
                       ", which JSON cannot hold");
}

}  // namespace

nlohmann::json from_python(py::handle value, std::string_view what) {
  return convert(value, std::string(what), 0);
}

}  // namespace ldmsim::python
