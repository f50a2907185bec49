// Text from user files (names of models, layers, kernels) placed in HTML and SVG pages.
#pragma once

#include <string>
#include <string_view>

namespace ldmsim {

/// `s` with &, <, > and " escaped, for HTML and SVG text and attributes.
std::string html_escape(std::string_view s);

}  // namespace ldmsim
