// The command words of an ldmsim command line (`trace summary`, `arch show`) checked before CLI11 parses it:
// CLI11 answers a mistyped one with "A subcommand is required"; this names it and suggests the nearest command.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace ldmsim::cli {

/// The error for the first word of argv[1..argc) that stands where `app` (or one of its subcommands) requires a
/// subcommand and names none: "unknown command 'trace sumary' (did you mean 'summary'? ...)"; nullopt when every
/// command word is known. Stops at the first option that is not a flag of the command reached so far.
std::optional<std::string> unknown_command_error(const CLI::App& app, int argc, const char* const* argv);

/// The name among `names` nearest to `word` by edit distance, when it is within 2 edits (or `word` is its prefix).
std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& names);

}  // namespace ldmsim::cli
