// Reading and writing NumPy .npy files (format 1.0/2.0), C order: fp16 ('<f2') and fp32 ('<f4') values, int32
// ('<i4') and int64 ('<i8') indices and ids, and bool ('|b1') masks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ldmsim/kernels/dtype.hpp"
#include "ldmsim/sim/fp16.hpp"

namespace ldmsim {

/// An array read from a .npy file, its values as the file holds them (fp16 ones are not widened: a model's
/// weights stay fp16 from the file to the machine).
struct NpyArray {
  std::vector<std::size_t> shape;
  std::string dtype;        ///< "f2", "f4", "i4", "i8" or "b1"
  std::vector<float> data;  ///< "f4": the values
  SharedHalves halves;      ///< "f2": the values (shared, not copied, when the array is handed on)
  /// "i4", "i8", "b1" (0 or 1): the values as int32 (an i8 value outside int32 is refused when read).
  std::vector<std::int32_t> integers;
  /// True for the integer and bool dtypes.
  bool is_integral() const { return dtype == "i4" || dtype == "i8" || dtype == "b1"; }
  /// The values as fp32, whichever the dtype.
  std::vector<float> floats() const;
};

/// Reads a little-endian f2, f4, i4, i8 or b1 C-order .npy (ConfigError naming the file and the problem otherwise).
NpyArray read_npy(const std::filesystem::path& file);
/// Writes fp16 data as '<f2', C order (atomically: docs/user-guide.md, "Output files").
void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape, std::span<const f16> data);
/// Writes fp32 data as '<f4', C order.
void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape,
               const std::vector<float>& data);
/// Writes a tensor of element type `type` held in 2-byte units (dtype.hpp): fp16 as '<f2', int32 as '<i4', bool
/// as '|b1'.
void write_npy(const std::filesystem::path& file, const std::vector<std::size_t>& shape, DType type,
               std::span<const f16> units);

}  // namespace ldmsim
