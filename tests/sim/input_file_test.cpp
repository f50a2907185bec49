// Tests of the bounded input reader and depth-limited JSON parsing: hostile paths and texts fail with a
// ConfigError naming the file, before anything large is allocated.
#include "ldmsim/sim/input_file.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <string>

#include "ldmsim/sim/fault.hpp"
#include "support/temp_dir.hpp"

using Catch::Matchers::Contains;
using ldmsim::ConfigError;

TEST_CASE("read_input_file reads a regular file and refuses everything else") {
  const ldmsim::test::TempDir dir("input_file");
  const auto file = dir.write("a.json", "{\"k\": [1, 2]}");
  CHECK(ldmsim::read_input_file(file, "test input", 1024) == "{\"k\": [1, 2]}");
  CHECK(ldmsim::read_json_file(file, "test input")["k"][1] == 2);

  SECTION("missing") {
    CHECK_THROWS_WITH(ldmsim::read_input_file(dir / "nope", "arch file", 1024),
                      Contains("nope: cannot open arch file") && Contains("No such file"));
  }
  SECTION("directory") {
    CHECK_THROWS_WITH(ldmsim::read_input_file(dir.path(), "workload", 1024),
                      Contains("is a directory, not a regular file (expected workload)"));
  }
  SECTION("character device, read until gigabytes before") {
    CHECK_THROWS_WITH(ldmsim::read_input_file("/dev/zero", "arch file", 1024),
                      Contains("/dev/zero: is a character device"));
  }
  SECTION("FIFO: refused without blocking") {
    const auto fifo = dir / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_WITH(ldmsim::read_input_file(fifo, "arch file", 1024), Contains("is a FIFO"));
  }
  SECTION("larger than the cap: refused before reading") {
    CHECK_THROWS_WITH(ldmsim::read_input_file(file, "arch file", 4), Contains("13 bytes, more than the 4 bytes"));
  }
}

TEST_CASE("parse_json bounds nesting and names the origin and position") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_THROWS_WITH(ldmsim::parse_json(deep, "w.json"), Contains("w.json: invalid JSON: nested more than 256"));
  const std::string ok = std::string(256, '[') + std::string(256, ']');
  CHECK(ldmsim::parse_json(ok, "w.json").is_array());
  // Brackets inside strings do not count.
  CHECK(ldmsim::parse_json("{\"s\": \"" + std::string(1000, '[') + "\"}", "w.json")["s"].get<std::string>().size() ==
        1000);
  CHECK_THROWS_WITH(ldmsim::parse_json("{\n  \"a\": ,\n}", "w.json"), Contains("w.json: invalid JSON at line 2"));
  CHECK_THROWS_AS(ldmsim::parse_json("", "w.json"), ConfigError);
}

TEST_CASE("read_at reads at an offset and stops short only at the end of the file") {
  const ldmsim::test::TempDir dir("read-at");
  const auto file = dir.write("f.bin", "0123456789");
  const ldmsim::InputFileDescriptor fd(file, "test file", 100);
  char buf[8] = {};
  CHECK(ldmsim::read_at(fd.fd(), 3, buf, 4) == 4);
  CHECK(std::string(buf, 4) == "3456");
  CHECK(ldmsim::read_at(fd.fd(), 7, buf, 8) == 3);  // the last three bytes
  CHECK(std::string(buf, 3) == "789");
  CHECK(ldmsim::read_at(fd.fd(), 10, buf, 8) == 0);
  CHECK(ldmsim::read_at(-1, 0, buf, 8) == 0);  // a read error reads nothing
}
