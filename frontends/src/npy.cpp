// .npy reader and writer. The reader trusts nothing in the file: it is a regular file (input_file.hpp), the
// header length is at most numpy's own limit, the header dict is parsed by a bounded scanner (no regex, no
// recursion), every dimension and the element count are checked before anything is allocated, and the data
// must be exactly as long as the shape says.
#include "ldmsim/frontends/npy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>

#include "ldmsim/sim/fault.hpp"
#include "ldmsim/sim/input_file.hpp"
#include "ldmsim/sim/output_file.hpp"

namespace ldmsim {

namespace {

/// numpy refuses headers longer than this by default (np.load's max_header_size, numpy >= 1.24).
constexpr std::size_t kMaxHeaderBytes = 10000;
/// Dimensions a tensor may have (Shape::kMaxRank).
constexpr std::size_t kMaxDims = 6;
/// Largest element count of any simulated tensor.
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 48;

/// The header dict: {'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), } in any key order.
struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::size_t> shape;
};

/// A scanner over the header text; every error says what was expected where.
class HeaderScanner {
 public:
  explicit HeaderScanner(std::string_view text) : text_(text) {}

  Header parse() {
    Header h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        h.descr = quoted();
        seen_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        seen_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        seen_shape = true;
      } else {
        fail(fmt::format("unknown header key '{}'", key));
      }
      skip_space();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}'");
    }
    ++at_;
    if (!seen_descr) throw ConfigError("header has no 'descr'");
    if (!seen_order) throw ConfigError("header has no 'fortran_order'");
    if (!seen_shape) throw ConfigError("header has no 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(fmt::format("malformed header at byte {}: {}", at_, what));
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n')) ++at_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(fmt::format("expected '{}'", c));
    ++at_;
  }
  std::string quoted() {
    skip_space();
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    const std::size_t end = text_.find(q, at_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(at_ + 1, end - at_ - 1));
    at_ = end + 1;
    return s;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{std::string_view("True"), true}, {std::string_view("False"), false}}) {
      if (text_.substr(at_, word.size()) == word) {
        at_ += word.size();
        return value;
      }
    }
    fail("expected True or False");
  }
  std::vector<std::size_t> tuple() {
    expect('(');
    std::vector<std::size_t> dims;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') fail("a dimension must be a non-negative integer");
      std::uint64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        v = v * 10 + static_cast<std::uint64_t>(peek() - '0');
        if (v > kMaxElements) fail(fmt::format("dimension {} is larger than 2^48", dims.size()));
        ++at_;
      }
      if (dims.size() == kMaxDims) {
        // A well-formed header, but an array no tensor can hold: said as such, not as a malformed header.
        throw ConfigError(
            fmt::format("the array has more than {} dimensions; ldmsim's tensors have at most {}", kMaxDims, kMaxDims));
      }
      dims.push_back(static_cast<std::size_t>(v));
      skip_space();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
    ++at_;
    return dims;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

std::uint32_t little_endian(const unsigned char* b, std::size_t n) {
  std::uint32_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | b[i];
  return v;
}

/// The integer or bool data of `count` elements (its size checked against the file): int32 values, an i8 value
/// outside int32 refused by index.
template <typename Fail>
std::vector<std::int32_t> read_integers(std::ifstream& in, const std::string& dtype, std::uint64_t count, Fail& fail) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(count));
  if (dtype == "i4") {
    if (!in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(count * 4)))
      throw fail("truncated data");
    return out;
  }
  constexpr std::size_t kBlock = 1 << 16;
  const std::size_t width = dtype == "i8" ? 8 : 1;
  std::vector<unsigned char> block(kBlock * width);
  for (std::uint64_t at = 0; at < count;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, count - at));
    if (!in.read(reinterpret_cast<char*>(block.data()), static_cast<std::streamsize>(n * width)))
      throw fail("truncated data");
    for (std::size_t i = 0; i < n; ++i, ++at) {
      if (width == 1) {
        out[at] = block[i] != 0 ? 1 : 0;
        continue;
      }
      std::int64_t v = 0;
      std::memcpy(&v, block.data() + i * 8, 8);
      if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) {
        throw fail(fmt::format("int64 value {} at index {} does not fit in int32 (integers are held as int32)", v, at));
      }
      out[at] = static_cast<std::int32_t>(v);
    }
  }
  return out;
}

}  // namespace

NpyArray read_npy(const std::filesystem::path& file) {
  auto fail = [&](const std::string& why) { return ConfigError(fmt::format("{}: {}", file.string(), why)); };
  // The size bound is what a tensor can be (2^48 fp32 elements), so any regular file passes here; the shape
  // below decides how much is read.
  const std::uint64_t file_size = check_input_file(file, ".npy file", ~std::uint64_t{0});
  std::ifstream in(file, std::ios::binary);
  if (!in) throw fail("cannot open .npy file");
  unsigned char prefix[12];
  if (!in.read(reinterpret_cast<char*>(prefix), 8) || std::memcmp(prefix, "\x93NUMPY", 6) != 0)
    throw fail("not a .npy file (bad magic)");
  const unsigned major = prefix[6];
  if (major < 1 || major > 3) throw fail(fmt::format("unsupported .npy version {}", major));
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  if (!in.read(reinterpret_cast<char*>(prefix + 8), static_cast<std::streamsize>(length_bytes)))
    throw fail("truncated header");
  const std::size_t header_len = little_endian(prefix + 8, length_bytes);
  const std::uint64_t data_offset = 8 + length_bytes + header_len;
  if (header_len > kMaxHeaderBytes) {
    throw fail(fmt::format("header of {} bytes is longer than numpy's limit of {}", header_len, kMaxHeaderBytes));
  }
  if (data_offset > file_size) throw fail("truncated header");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header_len))) throw fail("truncated header");
  Header h;
  try {
    h = HeaderScanner(header).parse();
  } catch (const ConfigError& e) {
    throw fail(e.what());
  }
  NpyArray out;
  if (h.descr == "<f2" || h.descr == "|f2") {
    out.dtype = "f2";
  } else if (h.descr == "<f4") {
    out.dtype = "f4";
  } else if (h.descr == "<i4" || h.descr == "<i8" || h.descr == "|b1") {
    out.dtype = h.descr.substr(1);
  } else {
    throw fail(fmt::format("dtype '{}' is not supported (expected '<f2', '<f4', '<i4', '<i8' or '|b1')", h.descr));
  }
  if (h.fortran_order) throw fail("Fortran order is not supported");
  std::uint64_t count = 1;
  for (std::size_t d : h.shape) {
    if (d != 0 && count > kMaxElements / d) throw fail("the shape has more than 2^48 elements");
    count *= d;
  }
  out.shape = h.shape;
  const std::uint64_t width = out.dtype == "f2" ? 2 : out.dtype == "i8" ? 8 : out.dtype == "b1" ? 1 : 4;
  const std::uint64_t have = file_size - data_offset;
  if (have != count * width) {
    throw fail(fmt::format("{}: the shape needs {} bytes of data, the file has {}",
                           have < count * width ? "truncated data" : "trailing bytes after the data", count * width,
                           have));
  }
  if (out.is_integral()) {
    out.integers = read_integers(in, out.dtype, count, fail);
    return out;
  }
  // Read straight into the values (the size was checked against the file above).
  char* values = nullptr;
  std::vector<f16> halves;
  if (width == 2) {
    halves.resize(static_cast<std::size_t>(count));
    values = reinterpret_cast<char*>(halves.data());
  } else {
    out.data.resize(static_cast<std::size_t>(count));
    values = reinterpret_cast<char*>(out.data.data());
  }
  if (!in.read(values, static_cast<std::streamsize>(count * width))) {
    throw fail(fmt::format("truncated data: expected {} bytes", count * width));
  }
  if (width == 2) out.halves = SharedHalves(std::move(halves));
  return out;
}

std::vector<float> NpyArray::floats() const {
  if (is_integral()) return {integers.begin(), integers.end()};
  if (dtype != "f2") return data;
  std::vector<float> out(halves.size());
  halves_to_floats(halves.span(), out);
  return out;
}

namespace {

void write_npy_bytes(const std::filesystem::path& file, const std::vector<std::size_t>& shape, std::string_view descr,
                     const void* data, std::size_t bytes) {
  std::string dims;
  for (std::size_t d : shape) dims += fmt::format("{},", d);
  if (shape.size() > 1) dims.pop_back();
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  AtomicFile out(file, ".npy file");
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out.write(header.data(), header.size());
  out.write(data, bytes);
  out.commit();
}

}  // namespace

void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape, DType type,
               std::span<const f16> units) {
  if (type == DType::kF16) return write_npy(file, shape, units);
  const std::vector<std::int32_t> words = units_to_words(units);
  if (type == DType::kI32) return write_npy_bytes(file, shape, "<i4", words.data(), words.size() * 4);
  std::vector<std::uint8_t> bytes(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) bytes[i] = words[i] != 0 ? 1 : 0;
  write_npy_bytes(file, shape, "|b1", bytes.data(), bytes.size());
}

void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape, std::span<const f16> data) {
  write_npy_bytes(file, shape, "<f2", data.data(), data.size() * sizeof(f16));
}

void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape,
               const std::vector<float>& data) {
  write_npy_bytes(file, shape, "<f4", data.data(), data.size() * sizeof(float));
}

}  // namespace ldmsim
