// Logging set-up: named per-component loggers, the default level, and set_log_level for existing and
// later loggers.
#include "ldmsim/sim/logging.hpp"

#include <spdlog/spdlog.h>

#include <catch2/catch.hpp>

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
