// Logging set-up: named per-component loggers, the default level, set_log_level for existing and later loggers,
// and the escaping of every line's text.
#include "ldmsim/sim/logging.hpp"

#include <spdlog/spdlog.h>

#include <catch2/catch.hpp>

#include "support/stderr_capture.hpp"

TEST_CASE("each component gets one named logger, shared by every caller", "[logging]") {
  auto a = ldmsim::logger("test-component");
  auto b = ldmsim::logger("test-component");
  CHECK(a == b);
  CHECK(a->name() == "ldmsim.test-component");
  CHECK(spdlog::get("ldmsim.test-component") == a);
}

TEST_CASE("set_log_level reaches existing and later ldmsim loggers only", "[logging]") {
  auto before = ldmsim::logger("level-before");
  auto other = std::make_shared<spdlog::logger>("not-ldmsim");
  other->set_level(spdlog::level::critical);
  spdlog::register_logger(other);
  ldmsim::set_log_level(spdlog::level::debug);
  CHECK(before->level() == spdlog::level::debug);
  CHECK(ldmsim::logger("level-after")->level() == spdlog::level::debug);
  CHECK(other->level() == spdlog::level::critical);
  ldmsim::set_log_level(spdlog::level::warn);
  CHECK(before->level() == spdlog::level::warn);
  spdlog::drop("not-ldmsim");
}

TEST_CASE("log lines show the control characters of the names they quote escaped, as printed text does", "[logging]") {
  auto log = ldmsim::logger("escape-test");
  log->set_level(spdlog::level::warn);
  const std::string text = ldmsim::test::capture_stderr([&] {
    log->warn("op '{}' trapped", "a\x1b]0;owned\x07\x1b[2Jb\xc2\x9b\xff");
    log->flush();
  });
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
  // C1 controls escaped, a byte that is not UTF-8 replaced.
  CHECK_THAT(text, Catch::Contains("op 'a\\x1b]0;owned\\x07\\x1b[2Jb\\u009b\xef\xbf\xbd' trapped"));
  CHECK_THAT(text, Catch::Contains("[warning] ldmsim.escape-test: "));  // the pattern still applies
}
