// Text from binary user files (an ONNX model's node and producer names) made valid UTF-8, so JSON can hold it.
#pragma once

#include <string>
#include <string_view>

namespace ldmsim {

/// `text` with every byte that does not start a valid UTF-8 sequence (a stray continuation byte, an overlong or
/// truncated sequence, a surrogate, a code point above U+10FFFF) replaced by U+FFFD; valid text is returned as is.
std::string valid_utf8(std::string_view text);

}  // namespace ldmsim
