// The one way ldmsim prints a byte count for people (summaries, arch descriptions, run reports).
#pragma once

#include <string>

namespace ldmsim {

/// Bytes in binary units with 4 significant digits: "12 B", "64 KiB", "1.5 MiB", "8 GiB".
std::string bytes_text(double bytes);

}  // namespace ldmsim
