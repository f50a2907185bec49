// Code sites of kernels on the C++ API (see code_site.hpp).
#include "code_site.hpp"

#include <fmt/format.h>

#include <bit>
#include <string_view>

namespace ldmsim::detail {
namespace {

// The project's source tree as the compiler names files in it (absolute, or relative when ccache rewrote the
// paths), found from this file's own name: the project's own kernels and tests are then named relative to it, the
// same in every checkout.
std::string_view project_root() {
  static const std::string root = [] {
    const std::string_view self = std::source_location::current().file_name();
    constexpr std::string_view tail = "runtime/src/code_site.cpp";
    return self.ends_with(tail) ? std::string(self.substr(0, self.size() - tail.size())) : std::string();
  }();
  return root;
}

}  // namespace

std::string code_site_text(std::uint64_t site) {
  const auto where = std::bit_cast<std::source_location>(site);
  std::string_view file = where.file_name();
  const std::string_view root = project_root();
  // A relative root ("../") also prefixes files outside the tree ("../../x"): those keep their name.
  if (!root.empty() && file.starts_with(root) && !file.substr(root.size()).starts_with("../")) {
    file.remove_prefix(root.size());
  }
  return fmt::format("kernel code at {}:{}", file, where.line());
}

}  // namespace ldmsim::detail
