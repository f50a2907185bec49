// Text from binary user files (an ONNX model's node and producer names) made valid UTF-8, so JSON can hold it, and
// made harmless to print on a terminal.
#pragma once

#include <string>
#include <string_view>

namespace ldmsim {

/// `text` with every byte that does not start a valid UTF-8 sequence (a stray continuation byte, an overlong or
/// truncated sequence, a surrogate, a code point above U+10FFFF) replaced by U+FFFD; valid text is returned as is.
std::string valid_utf8(std::string_view text);

/// `text` safe to print on a terminal: every control character but newline and tab (C0, DEL, and the C1 controls
/// U+0080-U+009F, which some terminals obey as escape sequences) is shown as `\xHH` (C1: `\u0080`...), so names
/// from user files cannot move the cursor, recolour, retitle or clear the terminal.
std::string terminal_safe(std::string_view text);

}  // namespace ldmsim
