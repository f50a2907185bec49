// Reading and writing NumPy .npy files (format 1.0/2.0): fp16 ('<f2') and fp32 ('<f4'), C order.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "ldmsim/sim/fp16.hpp"

namespace ldmsim {

/// An array read from a .npy file, its values as the file holds them (fp16 ones are not widened: a model's
/// weights stay fp16 from the file to the machine).
struct NpyArray {
  std::vector<std::size_t> shape;
  std::string dtype;        ///< "f2" or "f4"
  std::vector<float> data;  ///< "f4": the values
  SharedHalves halves;      ///< "f2": the values (shared, not copied, when the array is handed on)
  /// The values as fp32, whichever the dtype.
  std::vector<float> floats() const;
};

/// Reads a little-endian f2 or f4 C-order .npy (ConfigError naming the file and the problem otherwise).
NpyArray read_npy(const std::filesystem::path& file);
/// Writes fp16 data as '<f2', C order (atomically: docs/user-guide.md, "Output files").
void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape, std::span<const f16> data);
/// Writes fp32 data as '<f4', C order.
void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape,
               const std::vector<float>& data);

}  // namespace ldmsim
