// Tests of checked JSON reading: paths, rules and values in every error, did-you-mean for unknown keys.
#include "ldmsim/sim/json_checked.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ldmsim/sim/fault.hpp"

using Catch::Matchers::Contains;
using ldmsim::JsonField;
using nlohmann::json;

TEST_CASE("JsonField reads typed values and names the path of a bad one") {
  const json tree =
      json::parse(R"({"ops": [{"type": "relu", "attrs": {"kernel": 3, "k2": "x", "f": 1.5, "big": 1e300}}]})");
  const JsonField root(tree, "w.json");
  const JsonField attrs = root.at("ops").elements().at(0).at("attrs");
  CHECK(attrs.path() == "ops[0].attrs");
  CHECK(attrs.at("kernel").integer(1, 10) == 3);
  CHECK(attrs.at("kernel").unsigned_integer() == 3u);
  CHECK(attrs.at("f").number() == 1.5);
  CHECK_THROWS_WITH(attrs.at("k2").integer(), Contains("w.json: ops[0].attrs.k2 must be an integer (got \"x\")"));
  CHECK_THROWS_WITH(attrs.at("kernel").integer(4, 10),
                    Contains("ops[0].attrs.kernel must be an integer in 4..10 (got 3)"));
  CHECK_THROWS_WITH(attrs.at("f").integer(), Contains("must be an integer (got 1.5)"));
  CHECK_THROWS_WITH(attrs.at("big").unsigned_integer(), Contains("must be an integer in 0..18446744073709551615"));
  CHECK_THROWS_WITH(attrs.at("kernel").string(), Contains("ops[0].attrs.kernel must be a string (got 3)"));
  CHECK_THROWS_WITH(attrs.at("missing"), Contains("w.json: missing required key ops[0].attrs.missing"));
  CHECK_FALSE(attrs.find("missing").has_value());
  CHECK_THROWS_WITH(root.at("ops").at("x"), Contains("ops must be an object (got"));
  CHECK_THROWS_WITH(attrs.at("f").number_above(2.0), Contains("must be a finite number > 2"));
}

TEST_CASE("JsonField suggests the closest allowed key") {
  const json tree = json::parse(R"({"kernal": 3})");
  const JsonField attrs(tree, "w.json", "ops[2].attrs");
  CHECK_THROWS_WITH(attrs.expect_object({"kernel", "stride", "pad"}),
                    Contains("unknown key ops[2].attrs.kernal (did you mean ops[2].attrs.kernel?)"));
  CHECK_THROWS_WITH(attrs.expect_object({"axis"}), Contains("unknown key ops[2].attrs.kernal (allowed here: axis)"));
  const json ok = json::parse(R"({"axis": 1})");
  CHECK_NOTHROW(JsonField(ok, "w.json").expect_object({"axis"}));
}

TEST_CASE("describe_json cuts long values and describes large containers") {
  CHECK(ldmsim::describe_json(json(std::string(100, 'a'))).size() == 60);
  CHECK(ldmsim::describe_json(json::array({8, 8})) == "[8,8]");
  CHECK(ldmsim::describe_json(json(std::vector<int>(100, 1))) == "an array of 100 elements");
  CHECK(ldmsim::edit_distance("Kernel", "kernal") == 1);
}
