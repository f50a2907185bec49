// valid_utf8: text from binary files made valid UTF-8 for JSON.
#include "ldmsim/sim/utf8.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using ldmsim::valid_utf8;

namespace {
const std::string kReplacement = "\xEF\xBF\xBD";
}

TEST_CASE("valid UTF-8 is kept as it is", "[utf8]") {
  const std::string text = "conv_1 \xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xEF\xBF\xBF \xF4\x8F\xBF\xBF";
  CHECK(valid_utf8(text) == text);
  CHECK(valid_utf8("") == "");
  CHECK(valid_utf8(std::string("a\0b", 3)) == std::string("a\0b", 3));
}

TEST_CASE("each byte that starts no valid sequence becomes U+FFFD", "[utf8]") {
  CHECK(valid_utf8("the_softma\xE9") == "the_softma" + kReplacement);               // truncated
  CHECK(valid_utf8("\x80x") == kReplacement + "x");                                 // stray continuation
  CHECK(valid_utf8("\xC0\xAF") == kReplacement + kReplacement);                     // overlong '/'
  CHECK(valid_utf8("\xE0\x80\xAF") == kReplacement + kReplacement + kReplacement);  // overlong
  CHECK(valid_utf8("\xED\xA0\x80") == kReplacement + kReplacement + kReplacement);  // surrogate U+D800
  CHECK(valid_utf8("\xF4\x90\x80\x80") == kReplacement + kReplacement + kReplacement + kReplacement);  // > U+10FFFF
  CHECK(valid_utf8("\xF5\xFF") == kReplacement + kReplacement);
  CHECK(valid_utf8("\xE2\x82x") == kReplacement + kReplacement + "x");  // cut short by 'x'
}

TEST_CASE("whatever the bytes, the result is JSON-dumpable", "[utf8]") {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  for (int b = 0; b < 256; ++b) all += std::string("\xE2") + static_cast<char>(b) + "\xF0\x9F" + static_cast<char>(b);
  CHECK_NOTHROW(nlohmann::json(valid_utf8(all)).dump());
  CHECK_THROWS(nlohmann::json(all).dump());
}
