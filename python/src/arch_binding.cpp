// Arch presets as dicts: ldmsim.arch_presets() and ldmsim.arch(name, file or dict), the resolved tree of
// Arch::to_json with every default filled in; change a field and pass the dict back as a Session's arch.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "json_python.hpp"
#include "ldmsim/sim/arch.hpp"

namespace py = pybind11;

namespace ldmsim::python {

void bind_arch(py::module_& m) {
  m.def(
      "arch_presets",
      [] {
        py::dict presets;
        for (const std::string& name : Arch::preset_names())
          presets[py::str(name)] = to_python(Arch::preset(name).to_json());
        return presets;
      },
      "Every built-in arch preset: name -> its resolved tree (docs/arch-config.md).");
  m.def(
      "arch",
      [](const py::object& arch) {
        if (py::isinstance<py::str>(arch) || py::isinstance(arch, py::module_::import("os").attr("PathLike"))) {
          const std::string name = py::str(py::module_::import("os").attr("fspath")(arch));
          return to_python(Arch::resolve(name).to_json());
        }
        return to_python(Arch::from_json(from_python(arch, "arch"), "arch dict").to_json());
      },
      py::arg("arch"),
      "An arch as a dict: a preset name, an arch JSON file, or a dict (checked, every default filled in). "
      "ConfigError naming the problem.");
}

}  // namespace ldmsim::python
