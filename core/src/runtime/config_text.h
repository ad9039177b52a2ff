// Turns the text of a configuration file into a YAML tree, with file:line:column errors.
//
// yaml-cpp 0.7 reports syntax errors with a 0-based mark and its own wording; it also accepts a
// quoted string that is never closed when the file ends right after a newline, silently making the
// rest of the file part of that string. Both are handled here.
#pragma once

#include <optional>
#include <string>

#include "runtime/config_document.h"

namespace switchyard {

// Parses `text` into `document.root` (a null node for an empty file or one of only comments).
// Returns INVALID_ARGUMENT "file:line:col: ..." for a syntax error, an unterminated quoted string
// or more than one YAML document.
Status parse_config_text(const std::string& text, ConfigDocument& document);

// Where a quoted scalar starts that has no closing quote before the end of `text` (0-based line
// and column), found by a lexical scan. Used to explain yaml-cpp's "illegal EOF in scalar", whose
// mark is the end of the file rather than the opening quote.
struct TextPosition {
  int line = 0;
  int column = 0;
  char quote = '"';
};
std::optional<TextPosition> scan_for_unterminated_quote(const std::string& text);

}  // namespace switchyard
