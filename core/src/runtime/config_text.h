// Turns the text of a configuration file into a YAML tree, with file:line:column errors.
//
// yaml-cpp 0.7 reports syntax errors with a 0-based mark and its own wording; it also accepts a
// quoted string that is never closed when the file ends right after a newline, silently making the
// rest of the file part of that string. Both are handled here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "runtime/config_document.h"

namespace switchyard {

// What a configuration may hold. A configuration is a small tree: these bounds are far above any
// real one, and keep a hostile file from exhausting memory, time or the stack.
//   - kMaxConfigBytes: the text (a file is refused by its size, before it is read);
//   - kMaxConfigNodes: nodes with every alias expanded (a "billion laughs" file of nested aliases
//     is refused by this count, computed from the anchors' sizes without expanding anything);
//   - kMaxConfigDepth: nesting of sequences and maps (the walks over the tree recurse).
// An alias inside the node its anchor names (`x: &x [*x]`) makes a cycle and is refused.
inline constexpr std::size_t kMaxConfigBytes = 4u << 20;
inline constexpr std::size_t kMaxConfigNodes = 1000000;
inline constexpr std::size_t kMaxConfigDepth = 200;

// Parses `text` into `document.root` (a null node for an empty file or one of only comments).
// Returns INVALID_ARGUMENT "file:line:col: ..." for a syntax error, an unterminated quoted string,
// more than one YAML document, or a text beyond the bounds above.
Status parse_config_text(const std::string& text, ConfigDocument& document);

// The first of the bounds above that YAML `text` crosses, as "line L, column C: what" (or "what"
// for its size); nullopt within them. For YAML that is not a whole file (an override's value).
std::optional<std::string> yaml_bounds_problem(const std::string& text);

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
