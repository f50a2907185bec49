// The module's exception classes and the translation of the library's C++ exceptions into them, so a Python
// caller catches ldmsim.Fault (with the fault's fields as attributes), ldmsim.ConfigError (a ValueError) or
// ldmsim.TraceFormatError (a ValueError naming the file and byte offset), never a bare RuntimeError.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>

namespace ldmsim::python {

/// Creates ldmsim.Error, Fault, ConfigError and TraceFormatError in `m` and registers the translator.
void bind_errors(pybind11::module_& m);

/// The Python exception object a C++ exception becomes when raised (ldmsim.Fault with its fields, ConfigError, ...;
/// RuntimeError for any other), for results that hold errors rather than raise them. Needs the GIL.
pybind11::object exception_object(std::exception_ptr thrown);

}  // namespace ldmsim::python
