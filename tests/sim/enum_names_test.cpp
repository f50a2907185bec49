// Enum name tables: both directions from one table, the fallback for values outside it, and the joined list.
#include "ldmsim/sim/enum_names.hpp"

#include <catch2/catch.hpp>

namespace {
enum class Color : int { kRed, kGreen, kBlue };
constexpr auto kColorNames = ldmsim::enum_names<Color>({{Color::kRed, "red"}, {Color::kGreen, "green"}});
}  // namespace

TEST_CASE("enum name tables map both ways and list their names", "[sim]") {
  STATIC_REQUIRE(kColorNames.name(Color::kGreen) == "green");
  CHECK(kColorNames.name(Color::kRed) == "red");
  CHECK(kColorNames.name(Color::kBlue) == "?");
  CHECK(kColorNames.name(Color::kBlue, "unknown") == "unknown");
  CHECK(kColorNames.parse("green") == Color::kGreen);
  CHECK_FALSE(kColorNames.parse("Green").has_value());
  CHECK_FALSE(kColorNames.parse("").has_value());
  CHECK(kColorNames.list() == "red, green");
  CHECK(kColorNames.list(", ", " or ") == "red or green");
}
