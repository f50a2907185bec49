// Typed, checked reading of a JSON tree. Every value knows where it came from (origin: a file or preset name) and
// its path in the tree ("ops[3].attrs.kernel"); every error names both, says the rule and the offending value, and
// an unknown key gets a did-you-mean. One helper for arch files, timing parameters, workloads and op attributes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ldmsim {

/// Case-insensitive Levenshtein distance.
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate closest to `word` when it is close enough to be a likely typo.
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates);
/// A short rendering of a value for "(got ...)" (long values are cut).
std::string describe_json(const nlohmann::json& value);

/// A JSON value with its origin and path. Cheap to copy; the tree must outlive it.
class JsonField {
 public:
  JsonField(const nlohmann::json& value, std::string origin, std::string path = {});

  const nlohmann::json& json() const { return *value_; }
  const std::string& origin() const { return origin_; }
  /// "ops[3].attrs" ("the root" for the tree itself).
  std::string where() const { return path_.empty() ? std::string("the root") : path_; }
  const std::string& path() const { return path_; }
  std::string child_path(std::string_view key) const;

  /// Throws ConfigError "ORIGIN: PATH RULE (got VALUE)" ("PATH RULE (got VALUE)" when the origin is empty: a
  /// caller that adds the file name itself, such as the timing models' parameters inside an arch).
  [[noreturn]] void fail(std::string_view rule) const;
  /// Throws ConfigError "ORIGIN: MESSAGE" (for errors that are not about this value's form).
  [[noreturn]] void fail_message(std::string_view message) const;

  /// Checks an object whose keys are all in `allowed` (did-you-mean for the others).
  const JsonField& expect_object(std::span<const std::string_view> allowed) const;
  const JsonField& expect_object(std::initializer_list<std::string_view> allowed) const {
    return expect_object(std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  bool has(std::string_view key) const;
  /// A member of an object, nullopt when absent (or when this is not an object).
  std::optional<JsonField> find(std::string_view key) const;
  /// A required member ("missing required key PATH").
  JsonField at(std::string_view key) const;
  /// The elements of an array (fails unless this is an array).
  std::vector<JsonField> elements() const;
  /// The members of an object in the tree's order (fails unless this is an object).
  std::vector<std::pair<std::string, JsonField>> members() const;

  std::string string() const;
  std::string non_empty_string() const;
  bool boolean() const;
  /// A finite number in [lo, hi].
  double number(double lo = -std::numeric_limits<double>::max(), double hi = std::numeric_limits<double>::max()) const;
  /// A finite number > lo.
  double number_above(double lo) const;
  /// An integer in [lo, hi] (integral floats such as 1e9 count).
  std::int64_t integer(std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t hi = std::numeric_limits<std::int64_t>::max()) const;
  std::uint64_t unsigned_integer(std::uint64_t lo = 0,
                                 std::uint64_t hi = std::numeric_limits<std::uint64_t>::max()) const;

 private:
  const nlohmann::json* value_;
  std::string origin_;
  std::string path_;
};

}  // namespace ldmsim
