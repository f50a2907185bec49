// The parts of the `ldmsim` module, each bound by its own file; module.cpp calls them in order.
#pragma once

#include <pybind11/pybind11.h>

#include <filesystem>
#include <optional>

#include "ldmsim/sim/arch.hpp"

namespace ldmsim::python {

/// A str or os.PathLike as a path; nullopt for anything else.
std::optional<std::filesystem::path> as_path(const pybind11::handle& value);
/// An arch tree given as a dict, checked as a preset is (timing model included); ConfigError naming the field.
Arch arch_from_dict(const pybind11::handle& tree);
/// A preset name, an arch JSON file or a dict, resolved; TypeError for anything else.
Arch arch_argument(const pybind11::handle& arch);

void bind_arch(pybind11::module_& m);
void bind_trace(pybind11::module_& m);
void bind_session(pybind11::module_& m);
void bind_stream(pybind11::module_& m);

}  // namespace ldmsim::python
