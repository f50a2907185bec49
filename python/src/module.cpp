// The `ldmsim._ldmsim` extension module; python/ldmsim/__init__.py re-exports it as `ldmsim`.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "ldmsim/session/session.hpp"

PYBIND11_MODULE(_ldmsim, m) {
  m.doc() = "ldmsim: a simulated Sunway-like local-store many-core processor, numpy in and out (docs/python.md)";
  m.attr("__version__") = ldmsim::version();
  ldmsim::python::bind_errors(m);
  ldmsim::python::bind_arch(m);
  ldmsim::python::bind_trace(m);
  ldmsim::python::bind_session(m);
  ldmsim::python::bind_stream(m);
}
