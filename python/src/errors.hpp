// The module's exception classes and the translation of the library's C++ exceptions into them, so a Python
// caller catches ldmsim.Fault (with the fault's fields as attributes), ldmsim.ConfigError (a ValueError) or
// ldmsim.TraceFormatError (a ValueError naming the file and byte offset), never a bare RuntimeError.
#pragma once

#include <pybind11/pybind11.h>

namespace ldmsim::python {

/// Creates ldmsim.Error, Fault, ConfigError and TraceFormatError in `m` and registers the translator.
void bind_errors(pybind11::module_& m);

}  // namespace ldmsim::python
