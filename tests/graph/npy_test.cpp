// .npy round trips, a file laid out byte for byte as numpy writes it, and rejected files.
#include "ldmsim/frontends/npy.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "ldmsim/sim/fault.hpp"
#include "support/temp_dir.hpp"

using namespace ldmsim;

namespace {
/// Files in a per-process scratch directory, removed when the test program exits.
std::filesystem::path tmp(const char* name) {
  static const test::TempDir dir("npy");
  return dir / name;
}
}  // namespace

TEST_CASE("npy round trip of fp16 data", "[npy]") {
  std::vector<f16> data;
  for (int i = 0; i < 30; ++i) data.push_back(f16(static_cast<float>(i) * 0.25f - 3.0f));
  write_npy(tmp("ldmsim_rt.npy"), {2, 3, 5}, data);
  const NpyArray a = read_npy(tmp("ldmsim_rt.npy"));
  CHECK(a.dtype == "f2");
  CHECK(a.shape == std::vector<std::size_t>{2, 3, 5});
  CHECK(a.halves.to_vector() == data);  // held as fp16, not widened
  CHECK(a.data.empty());
  const std::vector<float> values = a.floats();
  REQUIRE(values.size() == 30);
  for (int i = 0; i < 30; ++i) CHECK(values[static_cast<std::size_t>(i)] == static_cast<float>(i) * 0.25f - 3.0f);
  std::ifstream in(tmp("ldmsim_rt.npy"), std::ios::binary | std::ios::ate);
  CHECK((static_cast<std::size_t>(in.tellg()) - 60) % 64 == 0);  // header padded to 64 bytes, then 60 data bytes
}

TEST_CASE("npy laid out byte for byte as np.save writes it, and rejected files", "[npy]") {
  auto write = [](const char* name, const std::string& header, const std::string& payload) {
    std::string h = header;
    h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
    h.push_back('\n');
    std::ofstream out(tmp(name), std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const char len[2] = {static_cast<char>(h.size()), 0};
    out.write(len, 2);
    out << h << payload;
  };
  write("ldmsim_np32.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
        std::string("\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x40", 12));
  const NpyArray a = read_npy(tmp("ldmsim_np32.npy"));
  CHECK(a.dtype == "f4");
  CHECK(a.shape == std::vector<std::size_t>{3});
  CHECK(a.data == std::vector<float>{0.0f, 1.0f, 2.0f});
  CHECK(a.floats() == a.data);
  write("ldmsim_np16.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }",
        std::string("\x00\x3c\x00\x40\x00\x42\x00\xb8", 8));
  const NpyArray b = read_npy(tmp("ldmsim_np16.npy"));
  CHECK(b.shape == std::vector<std::size_t>{2, 2});
  CHECK(b.floats() == std::vector<float>{1.0f, 2.0f, 3.0f, -0.5f});
  write("ldmsim_npi.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'));
  CHECK_THROWS_WITH(read_npy(tmp("ldmsim_npi.npy")), Catch::Contains("'<c8' is not supported"));
  // Integers and bools: int64 held as int32 (a value that does not fit is refused by index), bools as 0 and 1.
  write("ldmsim_npl.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
        std::string("\x05\0\0\0\0\0\0\0\xfd\xff\xff\xff\xff\xff\xff\xff", 16));
  const NpyArray l = read_npy(tmp("ldmsim_npl.npy"));
  CHECK(l.dtype == "i8");
  CHECK(l.integers == std::vector<std::int32_t>{5, -3});
  write("ldmsim_npw.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
        std::string("\0\0\0\0\0\0\0\0\0\0\0\0\x01\0\0\0", 16));
  CHECK_THROWS_WITH(read_npy(tmp("ldmsim_npw.npy")), Catch::Contains("int64 value 4294967296 at index 1"));
  write("ldmsim_npb.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", std::string("\x01\0\x02", 3));
  CHECK(read_npy(tmp("ldmsim_npb.npy")).integers == std::vector<std::int32_t>{1, 0, 1});
  write("ldmsim_npt.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }", std::string(4, '\0'));
  CHECK_THROWS_WITH(read_npy(tmp("ldmsim_npt.npy")), Catch::Contains("truncated"));
  // A well-formed array of rank 7: refused for its rank, not as a malformed header.
  write("ldmsim_np7.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 2), }",
        std::string(4, '\0'));
  CHECK_THROWS_WITH(
      read_npy(tmp("ldmsim_np7.npy")),
      Catch::Contains("more than 6 dimensions; ldmsim's tensors have at most 6") && !Catch::Contains("malformed"));
  CHECK_THROWS_AS(read_npy(tmp("ldmsim_does_not_exist.npy")), ConfigError);
}
