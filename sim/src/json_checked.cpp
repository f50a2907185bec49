// Checked JSON reading (see json_checked.hpp).
#include "ldmsim/sim/json_checked.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "ldmsim/sim/fault.hpp"

namespace ldmsim {

namespace {

using nlohmann::json;

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

std::string type_rule(std::string_view what) {
  return fmt::format("must be {}", what);
}

// An integral value as a signed 128-bit-free pair: nullopt unless the value is an integer (or integral float).
std::optional<long double> integral(const json& v) {
  if (v.is_number_unsigned()) return static_cast<long double>(v.get<std::uint64_t>());
  if (v.is_number_integer()) return static_cast<long double>(v.get<std::int64_t>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::trunc(d) == d) return static_cast<long double>(d);
  }
  return std::nullopt;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitution = diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates) {
  const std::size_t threshold = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::optional<std::string> best;
  std::size_t best_distance = threshold + 1;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string describe_json(const json& value) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) return fmt::format("{}", value.get<double>());
  if ((value.is_object() || value.is_array()) && value.size() > 32) {
    // A large container is described, not dumped.
    return fmt::format("{} of {} element{}", value.is_object() ? "an object" : "an array", value.size(),
                       value.size() == 1 ? "" : "s");
  }
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr std::size_t kMax = 60;
  if (text.size() > kMax) text = text.substr(0, kMax - 3) + "...";
  return text;
}

JsonField::JsonField(const nlohmann::json& value, std::string origin, std::string path)
    : value_(&value), origin_(std::move(origin)), path_(std::move(path)) {}

std::string JsonField::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

void JsonField::fail(std::string_view rule) const {
  fail_message(fmt::format("{} {} (got {})", where(), rule, describe_json(*value_)));
}

void JsonField::fail_message(std::string_view message) const {
  if (origin_.empty()) throw ConfigError(std::string(message));
  throw ConfigError(fmt::format("{}: {}", origin_, message));
}

const JsonField& JsonField::expect_object(std::span<const std::string_view> allowed) const {
  if (!value_->is_object()) fail(type_rule("an object"));
  for (const auto& item : value_->items()) {
    const std::string& key = item.key();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    const std::vector<std::string> names(allowed.begin(), allowed.end());
    if (const auto suggestion = closest_match(key, names)) {
      fail_message(fmt::format("unknown key {} (did you mean {}?)", child_path(key), child_path(*suggestion)));
    }
    fail_message(fmt::format("unknown key {} (allowed here: {})", child_path(key),
                             names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
  }
  return *this;
}

bool JsonField::has(std::string_view key) const {
  return value_->is_object() && value_->contains(key);
}

std::optional<JsonField> JsonField::find(std::string_view key) const {
  if (!value_->is_object()) return std::nullopt;
  const auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return JsonField(*it, origin_, child_path(key));
}

JsonField JsonField::at(std::string_view key) const {
  if (!value_->is_object()) fail(type_rule("an object"));
  auto member = find(key);
  if (!member) fail_message(fmt::format("missing required key {}", child_path(key)));
  return *member;
}

std::vector<JsonField> JsonField::elements() const {
  if (!value_->is_array()) fail(type_rule("an array"));
  std::vector<JsonField> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i) {
    out.emplace_back((*value_)[i], origin_, fmt::format("{}[{}]", path_, i));
  }
  return out;
}

std::vector<std::pair<std::string, JsonField>> JsonField::members() const {
  if (!value_->is_object()) fail(type_rule("an object"));
  std::vector<std::pair<std::string, JsonField>> out;
  for (const auto& item : value_->items()) {
    out.emplace_back(item.key(), JsonField(item.value(), origin_, child_path(item.key())));
  }
  return out;
}

std::string JsonField::string() const {
  if (!value_->is_string()) fail(type_rule("a string"));
  return value_->get<std::string>();
}

std::string JsonField::non_empty_string() const {
  std::string s = string();
  if (s.empty()) fail(type_rule("a non-empty string"));
  return s;
}

bool JsonField::boolean() const {
  if (!value_->is_boolean()) fail(type_rule("true or false"));
  return value_->get<bool>();
}

double JsonField::number(double lo, double hi) const {
  if (!value_->is_number()) fail(type_rule("a number"));
  const double v = value_->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    if (lo == -std::numeric_limits<double>::max() && hi == std::numeric_limits<double>::max()) {
      fail("must be a finite number");
    }
    fail(fmt::format("must be a number in [{}, {}]", lo, hi));
  }
  return v;
}

double JsonField::number_above(double lo) const {
  if (!value_->is_number()) fail(type_rule("a number"));
  const double v = value_->get<double>();
  if (!std::isfinite(v) || !(v > lo)) fail(fmt::format("must be a finite number > {}", lo));
  return v;
}

std::int64_t JsonField::integer(std::int64_t lo, std::int64_t hi) const {
  const auto v = integral(*value_);
  if (!v) fail(type_rule("an integer"));
  if (*v < static_cast<long double>(lo) || *v > static_cast<long double>(hi)) {
    fail(fmt::format("must be an integer in {}..{}", lo, hi));
  }
  return static_cast<std::int64_t>(*v);
}

std::uint64_t JsonField::unsigned_integer(std::uint64_t lo, std::uint64_t hi) const {
  if (value_->is_number_unsigned()) {
    const auto v = value_->get<std::uint64_t>();
    if (v < lo || v > hi) fail(fmt::format("must be an integer in {}..{}", lo, hi));
    return v;
  }
  const auto v = integral(*value_);
  if (!v) fail(type_rule("an integer"));
  if (*v < static_cast<long double>(lo) || *v > static_cast<long double>(hi)) {
    fail(fmt::format("must be an integer in {}..{}", lo, hi));
  }
  return static_cast<std::uint64_t>(*v);
}

}  // namespace ldmsim
