// The parts of the `ldmsim` module, each bound by its own file; module.cpp calls them in order.
#pragma once

#include <pybind11/pybind11.h>

namespace ldmsim::python {

void bind_arch(pybind11::module_& m);
void bind_trace(pybind11::module_& m);
void bind_session(pybind11::module_& m);

}  // namespace ldmsim::python
