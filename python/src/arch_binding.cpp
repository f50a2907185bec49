// Arch presets as dicts: ldmsim.arch_presets() and ldmsim.arch(name, file or dict), the resolved tree of
// Arch::to_json with every default filled in; change a field and pass the dict back as a Session's arch.
#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "json_python.hpp"
#include "ldmsim/dma/timing_model.hpp"
#include "ldmsim/session/run_config.hpp"
#include "ldmsim/sim/arch.hpp"
#include "ldmsim/sim/fault.hpp"

namespace py = pybind11;

namespace ldmsim::python {

std::optional<std::filesystem::path> as_path(const py::handle& value) {
  if (py::isinstance<py::str>(value)) return std::filesystem::path(value.cast<std::string>());
  if (py::hasattr(value, "__fspath__")) {
    return std::filesystem::path(py::str(py::module_::import("os").attr("fspath")(value)).cast<std::string>());
  }
  return std::nullopt;
}

Arch arch_from_dict(const py::handle& tree) {
  const std::string origin = "the arch dict";
  Arch arch = Arch::from_json(from_python(tree, "arch"), origin);
  try {
    (void)make_timing_model(arch);  // as resolve_arch does for a preset or file: dma.timing.* checked now
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", origin, e.what()));
  }
  return arch;
}

Arch arch_argument(const py::handle& arch) {
  if (const auto path = as_path(arch)) return resolve_arch(path->string());
  if (py::isinstance<py::dict>(arch)) return arch_from_dict(arch);
  throw py::type_error("arch must be a preset name, an arch JSON file or a dict, not " +
                       std::string(py::str(arch.get_type().attr("__name__"))));
}

void bind_arch(py::module_& m) {
  m.def(
      "arch_presets",
      [] {
        py::dict presets;
        for (const std::string& name : Arch::preset_names()) {
          presets[py::str(name)] = to_python(Arch::preset(name).to_json());
        }
        return presets;
      },
      "Every built-in arch preset: name -> its resolved tree (docs/arch-config.md).");
  m.def(
      "arch", [](const py::object& arch) { return to_python(arch_argument(arch).to_json()); }, py::arg("arch"),
      "An arch as a dict: a preset name, an arch JSON file, or a dict (checked, every default filled in). "
      "ConfigError naming the problem.");
}

}  // namespace ldmsim::python
