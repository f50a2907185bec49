// Human-readable quantities for the tools' text output: 4 significant digits in the unit that keeps the number
// between 1 and 1000, never an exponent ("25.54 ms", not "2.554e+04 us").
#pragma once

#include <string>

namespace ldmsim {

/// Seconds as "812 ns", "259.3 us", "25.54 ms", "1.234 s" (0 as "0 s").
std::string seconds_text(double seconds);
/// A rate with SI prefixes: rate_text(2.84e10, "B/s") = "28.4 GB/s", rate_text(1.2e12, "flop/s") = "1.2 Tflop/s".
std::string rate_text(double per_second, const char* unit);

}  // namespace ldmsim
