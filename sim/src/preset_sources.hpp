// The arch presets, embedded at build time by cmake/embed_presets.cmake from sim/presets/*.json.
// Private to ldmsim_sim: the public way to get a preset is Arch::preset / Arch::resolve.
#pragma once

#include <map>
#include <string>

namespace ldmsim::detail {

/// Preset file text keyed by file stem ("sw26010" -> contents of sim/presets/sw26010.json), sorted by name.
const std::map<std::string, std::string>& preset_sources();

}  // namespace ldmsim::detail
