// JSON trees to Python objects and back: dicts, lists, str, int, float, bool and None, as json.loads and
// json.dumps would map them, so stats, layers, headers and arch trees reach Python as plain data.
#pragma once

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>
#include <string_view>

namespace ldmsim::python {

/// A Python str of UTF-8 bytes; invalid sequences become U+FFFD (a trace marker's text may hold any bytes).
pybind11::str utf8_text(std::string_view bytes);
/// The tree as Python objects.
pybind11::object to_python(const nlohmann::json& tree);
/// A Python value (dict with str keys, list or tuple, str, int, float, bool, None, numpy scalars) as a tree;
/// TypeError naming `what` and the path to a value of another type, ValueError for one nested too deep.
nlohmann::json from_python(pybind11::handle value, std::string_view what);

}  // namespace ldmsim::python
