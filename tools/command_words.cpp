// Checking an ldmsim command line's command words (see command_words.hpp).
#include "command_words.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace ldmsim::cli {

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<const CLI::App*> subcommands_of(const CLI::App& app) {
  return app.get_subcommands(std::function<bool(const CLI::App*)>([](const CLI::App*) { return true; }));
}

/// A flag of `app` (or of an app it falls through to) that takes no value: a word after it is still a command.
bool is_flag_of(const CLI::App& app, const std::string& arg) {
  for (const CLI::App* a = &app; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* option : a->get_options()) {
      if (option->check_name(arg) && option->get_expected_max() == 0) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& names) {
  std::optional<std::string> best;
  std::size_t best_distance = 3;
  for (const std::string& name : names) {
    const std::size_t d = name.rfind(word, 0) == 0 && !word.empty() ? 0 : edit_distance(word, name);
    if (d < best_distance) best = name, best_distance = d;
  }
  return best;
}

std::optional<std::string> unknown_command_error(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* current = &app;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.empty() && arg.front() == '-') {
      if (arg == "--help" || arg == "-h" || !is_flag_of(*current, arg)) return std::nullopt;
      continue;
    }
    const std::vector<const CLI::App*> subs = subcommands_of(*current);
    if (subs.empty() || current->get_require_subcommand_min() == 0) return std::nullopt;
    const auto match =
        std::find_if(subs.begin(), subs.end(), [&arg](const CLI::App* sub) { return sub->check_name(arg); });
    if (match != subs.end()) {
      current = *match;
      path += (path.empty() ? "" : " ") + (*match)->get_name();
      continue;
    }
    std::vector<std::string> names;
    for (const CLI::App* sub : subs) names.push_back(sub->get_name());
    const std::optional<std::string> near = nearest_name(arg, names);
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    const std::string where = path.empty() ? "ldmsim" : "ldmsim " + path;
    return fmt::format("unknown command '{}{}' ({}commands of {}: {}; see {} --help)", path.empty() ? "" : path + " ",
                       arg, near ? fmt::format("did you mean '{}'? ", *near) : std::string(), where, list, where);
  }
  return std::nullopt;
}

}  // namespace ldmsim::cli
