// Every input kept in tests/fuzz/workload-regressions/ (by scripts/fuzz_workload.sh, or by hand from issue 11's
// hostile inputs) must go through its reader to a result or a ConfigError; nothing else may escape.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/user_file_input.hpp"
#include "support/temp_dir.hpp"

TEST_CASE("user-file fuzz regressions are read or refused with a ConfigError, never a crash", "[graph][fuzz]") {
  const std::filesystem::path dir = std::filesystem::path(LDMSIM_SOURCE_DIR) / "tests/fuzz/workload-regressions";
  ldmsim::test::TempDir scratch("user-file-corpus");
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename().string().front() == '.') continue;
    ++files;
    INFO(entry.path().string());
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    CHECK_NOTHROW(ldmsim::fuzz::read_user_file(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(),
                                               scratch.path()));
  }
  CHECK(files >= 4);  // the hand-made hostile inputs are always there
}
