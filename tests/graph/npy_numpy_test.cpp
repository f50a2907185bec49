// .npy interoperability with the real numpy (python3-numpy is installed by scripts/install-deps.sh): numpy
// reads what ldmsim writes, and ldmsim reads what numpy writes.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ldmsim/frontends/npy.hpp"

using namespace ldmsim;

namespace {
/// Per-process and per-call names: ctest runs these tests in parallel, and other test runs may share /tmp.
std::filesystem::path scratch(const std::string& name) {
  static int calls = 0;
  return std::filesystem::temp_directory_path() /
         (std::to_string(::getpid()) + "_" + std::to_string(++calls) + "_" + name);
}

int run_python(const std::string& code) {
  const auto script = scratch("ldmsim_npy_check.py");
  std::ofstream(script) << code;
  // Debian's interpreter, where python3-numpy installs (a python3 earlier on PATH may lack numpy).
  const int status = std::system(("/usr/bin/python3 " + script.string()).c_str());
  std::filesystem::remove(script);
  return status;
}
}  // namespace

TEST_CASE("numpy loads an fp16 .npy written by ldmsim with the same shape and values", "[npy]") {
  std::vector<f16> data;
  for (int i = 0; i < 24; ++i) data.push_back(f16(static_cast<float>(i) * 0.5f - 4.0f));
  const auto file = scratch("ldmsim_for_numpy.npy");
  write_npy(file, {2, 3, 4}, data);
  const int status = run_python(
      "import numpy as np, sys\n"
      "a = np.load('" +
      file.string() +
      "')\n"
      "ok = a.dtype == np.float16 and a.shape == (2, 3, 4) and "
      "np.array_equal(a.ravel(), np.arange(24, dtype=np.float32) * 0.5 - 4.0)\n"
      "sys.exit(0 if ok else 1)\n");
  CHECK(status == 0);
  std::filesystem::remove(file);
}

TEST_CASE("ldmsim reads .npy files written by numpy's np.save", "[npy]") {
  const auto f2 = scratch("ldmsim_from_numpy_f2.npy");
  const auto f4 = scratch("ldmsim_from_numpy_f4.npy");
  REQUIRE(run_python("import numpy as np\n"
                     "np.save('" +
                     f2.string() +
                     "', (np.arange(15, dtype=np.float16) - 7).reshape(3, 5) / 4)\n"
                     "np.save('" +
                     f4.string() + "', np.array([[0.1, -2.5, 3e4]], dtype=np.float32))\n") == 0);
  const NpyArray a = read_npy(f2);
  CHECK(a.dtype == "f2");
  CHECK(a.shape == std::vector<std::size_t>{3, 5});
  const std::vector<float> values = a.floats();
  REQUIRE(values.size() == 15);
  for (int i = 0; i < 15; ++i) CHECK(values[static_cast<std::size_t>(i)] == (static_cast<float>(i) - 7.0f) / 4.0f);
  const NpyArray b = read_npy(f4);
  CHECK(b.dtype == "f4");
  CHECK(b.shape == std::vector<std::size_t>{1, 3});
  CHECK(b.data == std::vector<float>{0.1f, -2.5f, 3e4f});
  std::filesystem::remove(f2);
  std::filesystem::remove(f4);
}
