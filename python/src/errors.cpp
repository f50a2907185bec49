// C++ exceptions -> the module's exception classes (see errors.hpp).
#include "errors.hpp"

#include <exception>
#include <new>
#include <string>

#include "json_python.hpp"
#include "ldmsim/sim/fault.hpp"
#include "ldmsim/trace/file.hpp"

namespace py = pybind11;

namespace ldmsim::python {

namespace {

// Created once per interpreter by bind_errors; the classes live as long as the module.
PyObject* g_error = nullptr;
PyObject* g_fault = nullptr;
PyObject* g_config_error = nullptr;
PyObject* g_trace_format_error = nullptr;

PyObject* new_class(py::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = "ldmsim." + std::string(name);
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(type));  // the module keeps a reference; g_* borrow it
  return type;
}

// Raises `type(message)` with extra attributes.
void raise_with(PyObject* type, const char* message, const py::dict& attributes) {
  py::object error = py::reinterpret_borrow<py::object>(type)(utf8_text(message));
  for (const auto& [name, value] : attributes) py::setattr(error, name, value);
  PyErr_SetObject(type, error.ptr());
}

void translate(std::exception_ptr thrown) {
  try {
    std::rethrow_exception(thrown);
  } catch (const Fault& f) {
    py::dict fields;
    fields["kind"] = std::string(to_string(f.kind()));
    fields["kernel"] = utf8_text(f.kernel());
    fields["cg"] = f.cg();
    fields["core"] = f.core();
    fields["cycle"] = f.cycle();
    fields["detail"] = utf8_text(f.detail());
    fields["field"] = f.field() ? py::object(py::str(f.field()->name)) : py::object(py::none());
    fields["value"] = f.field() ? py::object(py::int_(f.field()->value)) : py::object(py::none());
    raise_with(g_fault, f.what(), fields);
  } catch (const TraceFormatError& e) {
    py::dict fields;
    fields["file"] = e.file().string();
    fields["offset"] = e.offset();
    raise_with(g_trace_format_error, e.what(), fields);
  } catch (const ConfigError& e) {
    PyErr_SetObject(g_config_error, utf8_text(e.what()).ptr());
  } catch (const std::bad_alloc&) {
    PyErr_SetString(PyExc_MemoryError, "the host has not enough memory for this");
  }
}

}  // namespace

py::object exception_object(std::exception_ptr thrown) {
  try {
    translate(thrown);  // sets the error indicator for the library's own exceptions, rethrows any other
  } catch (const std::exception& e) {
    PyErr_SetObject(PyExc_RuntimeError, utf8_text(e.what()).ptr());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "an exception that is not a std::exception");
  }
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  return py::reinterpret_steal<py::object>(value);
}

void bind_errors(py::module_& m) {
  g_error = new_class(m, "Error", PyExc_Exception, "Base of ldmsim's own exceptions.");
  const py::tuple fault_bases = py::make_tuple(py::handle(g_error), py::handle(PyExc_RuntimeError));
  g_fault = new_class(m, "Fault", fault_bases.ptr(),
                      "A trap of the simulated machine. Attributes: kind (e.g. 'dma-misaligned'), kernel, cg, core "
                      "(-1: not on a core), cycle, field and value (the request field the trap is about, e.g. "
                      "'length' and 6; None when it names none), detail (the message without its location).");
  const py::tuple value_bases = py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError));
  g_config_error = new_class(m, "ConfigError", value_bases.ptr(),
                             "Bad configuration or input: an arch, a model, a workload, an input array, a file.");
  g_trace_format_error = new_class(m, "TraceFormatError", value_bases.ptr(),
                                   "A trace file that is truncated, corrupted or of an unknown version. Attributes: "
                                   "file, offset (the byte where the problem is).");
  py::register_exception_translator(translate);
}

}  // namespace ldmsim::python
