// .npy reader and writer: parses the header dict ('descr', 'fortran_order', 'shape') and the raw data.
#include "ldmsim/frontends/npy.hpp"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <regex>

#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

NpyArray read_npy(const std::filesystem::path& file) {
  auto fail = [&](const std::string& why) { return ConfigError(fmt::format("{}: {}", file.string(), why)); };
  std::ifstream in(file, std::ios::binary);
  if (!in) throw fail("cannot open .npy file");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw fail("not a .npy file (bad magic)");
  std::size_t header_len = 0;
  const auto major = static_cast<unsigned char>(magic[6]);
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) throw fail("truncated header");
    header_len = static_cast<std::size_t>(b[0] | (b[1] << 8));
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) throw fail("truncated header");
    header_len = static_cast<std::size_t>(b[0]) | (static_cast<std::size_t>(b[1]) << 8) |
                 (static_cast<std::size_t>(b[2]) << 16) | (static_cast<std::size_t>(b[3]) << 24);
  } else {
    throw fail(fmt::format("unsupported .npy version {}", major));
  }
  std::string header(header_len, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header_len))) throw fail("truncated header");
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')"))) throw fail("header has no 'descr'");
  const std::string descr = m[1];
  NpyArray out;
  if (descr == "<f2" || descr == "|f2") {
    out.dtype = "f2";
  } else if (descr == "<f4") {
    out.dtype = "f4";
  } else {
    throw fail(fmt::format("dtype '{}' is not supported (expected '<f2' or '<f4')", descr));
  }
  if (std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*True)")))
    throw fail("Fortran order is not supported");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))"))) throw fail("header has no 'shape'");
  const std::string dims = m[1];
  std::size_t count = 1;
  const std::regex number(R"(\d+)");
  for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it) {
    out.shape.push_back(std::stoull(it->str()));
    count *= out.shape.back();
  }
  const std::size_t width = out.dtype == "f2" ? 2 : 4;
  std::vector<char> raw(count * width);
  if (!in.read(raw.data(), static_cast<std::streamsize>(raw.size()))) {
    throw fail(fmt::format("truncated data: expected {} bytes", raw.size()));
  }
  out.data.resize(count);
  if (width == 2) {
    std::vector<f16> h(count);
    std::memcpy(h.data(), raw.data(), raw.size());
    halves_to_floats(h, out.data);
  } else {
    std::memcpy(out.data.data(), raw.data(), raw.size());
  }
  return out;
}

void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape, const std::vector<f16>& data) {
  std::string dims;
  for (std::size_t d : shape) dims += fmt::format("{},", d);
  if (shape.size() > 1) dims.pop_back();
  std::string header = fmt::format("{{'descr': '<f2', 'fortran_order': False, 'shape': ({}), }}", dims);
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(file, std::ios::binary);
  if (!out) throw ConfigError(fmt::format("{}: cannot write .npy file", file.string()));
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(f16)));
}

}  // namespace ldmsim
