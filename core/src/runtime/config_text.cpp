#include "runtime/config_text.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

namespace switchyard {
namespace {

constexpr std::size_t kNoEnd = std::string::npos;

// The index just past the quote that closes the quoted scalar opening at text[start], or kNoEnd.
// Double quotes escape with a backslash; single quotes escape a quote by doubling it.
std::size_t closing_quote_end(const std::string& text, std::size_t start) {
  const char quote = text[start];
  for (std::size_t i = start + 1; i < text.size(); ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;
      continue;
    }
    if (text[i] != quote) continue;
    if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
      ++i;
      continue;
    }
    return i + 1;
  }
  return kNoEnd;
}

std::string unterminated_message(char quote) {
  return std::string("unterminated quoted string starting here, expected a closing ") + quote +
         " before the end of the file";
}

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// A lexical scan that tracks just enough YAML (comments, flow brackets, indicators, block
// scalars, plain scalars) to tell a quote that opens a quoted scalar from one inside plain text.
class QuoteScanner {
 public:
  explicit QuoteScanner(const std::string& text) : text_(text) {}
  std::optional<TextPosition> run();

 private:
  char at(std::size_t index) const { return index < text_.size() ? text_[index] : '\n'; }
  void advance(std::size_t count);
  void skip_to_line_end();
  int indent_of_line_at(std::size_t line_start) const;
  void skip_block_scalar();
  bool step_indicator(char c);

  const std::string& text_;
  std::size_t pos_ = 0;
  std::size_t line_start_ = 0;
  int line_ = 0;
  int flow_depth_ = 0;
  bool token_start_ = true;  // a scalar may begin here
};

void QuoteScanner::advance(std::size_t count) {
  for (std::size_t i = 0; i < count && pos_ < text_.size(); ++i, ++pos_) {
    if (text_[pos_] == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
  }
}

void QuoteScanner::skip_to_line_end() {
  while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
}

int QuoteScanner::indent_of_line_at(std::size_t line_start) const {
  int indent = 0;
  while (at(line_start + static_cast<std::size_t>(indent)) == ' ') ++indent;
  return indent;
}

// Skips the lines of a `|` or `>` block scalar: every following line that is blank or indented
// deeper than the line that introduced it. Quotes inside are text.
void QuoteScanner::skip_block_scalar() {
  const int indent = indent_of_line_at(line_start_);
  skip_to_line_end();
  while (pos_ < text_.size()) {
    const std::size_t next_line = pos_ + 1;
    std::size_t end = text_.find('\n', next_line);
    if (end == std::string::npos) end = text_.size();
    const bool blank = std::all_of(text_.begin() + static_cast<std::ptrdiff_t>(next_line),
                                   text_.begin() + static_cast<std::ptrdiff_t>(end), is_blank);
    if (!blank && indent_of_line_at(next_line) <= indent) return;
    advance(end - pos_);
  }
}

// Handles flow brackets, commas and the `-`, `?`, `:` indicators; false for any other character.
bool QuoteScanner::step_indicator(char c) {
  const bool next_blank = is_blank(at(pos_ + 1));
  if (c == '[' || c == '{') {
    ++flow_depth_;
    token_start_ = true;
  } else if (c == ']' || c == '}') {
    flow_depth_ = std::max(0, flow_depth_ - 1);
    token_start_ = false;
  } else if (c == ',' && flow_depth_ > 0) {
    token_start_ = true;
  } else if (c == ':' && (next_blank || flow_depth_ > 0)) {
    token_start_ = true;
  } else if ((c == '-' || c == '?') && next_blank && token_start_) {
    token_start_ = true;
  } else {
    return false;
  }
  advance(1);
  return true;
}

std::optional<TextPosition> QuoteScanner::run() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '\n') {
      token_start_ = true;
      advance(1);
    } else if (c == ' ' || c == '\t' || c == '\r') {
      advance(1);
    } else if (c == '#' && (pos_ == line_start_ || is_blank(text_[pos_ - 1]))) {
      skip_to_line_end();
    } else if (token_start_ && (c == '"' || c == '\'')) {
      const std::size_t end = closing_quote_end(text_, pos_);
      if (end == kNoEnd) return TextPosition{line_, static_cast<int>(pos_ - line_start_), c};
      advance(end - pos_);
      token_start_ = false;
    } else if (step_indicator(c)) {
      continue;
    } else if (token_start_ && (c == '|' || c == '>')) {
      skip_block_scalar();
    } else if (token_start_ && (c == '&' || c == '!')) {
      while (pos_ < text_.size() && !is_blank(text_[pos_])) advance(1);  // anchor or tag
    } else {
      token_start_ = false;  // plain scalar text or an alias
      advance(1);
    }
  }
  return std::nullopt;
}

Status syntax_error(const std::string& text, const ConfigDocument& document,
                    const YAML::ParserException& error) {
  const bool may_be_open_quote = error.msg == YAML::ErrorMsg::EOF_IN_SCALAR ||
                                 error.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW ||
                                 error.msg == YAML::ErrorMsg::END_OF_MAP_FLOW;
  if (may_be_open_quote) {
    if (auto quote = scan_for_unterminated_quote(text)) {
      const SourceLocation location{document.file, quote->line + 1, quote->column + 1};
      return invalid_argument(
          format_config_error(location, "", unterminated_message(quote->quote)));
    }
  }
  const SourceLocation location{document.file, error.mark.line + 1, error.mark.column + 1};
  return invalid_argument(format_config_error(location, "", "invalid YAML: " + error.msg));
}

// Records whether a document started and where, and whether anything but a null was read in it;
// and measures the document as its walks will see it (config_text.h's bounds): nodes with every
// alias expanded, computed from each anchor's expanded size, and the nesting depth. The first
// bound crossed is kept as `problem` (with its mark); events after it are only counted.
class DocumentStarts : public YAML::EventHandler {
 public:
  bool started = false;
  YAML::Mark start = YAML::Mark::null_mark();
  bool empty = true;
  std::string problem;  // "" while the document is within bounds
  YAML::Mark problem_mark = YAML::Mark::null_mark();

  void reset() {
    started = false;
    start = YAML::Mark::null_mark();
    empty = true;
    expanded_ = 0;
    open_.clear();
    anchor_sizes_.clear();
  }
  void OnDocumentStart(const YAML::Mark& mark) override {
    started = true;
    start = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    empty = false;
    for (const OpenNode& node : open_) {
      if (node.anchor == anchor && anchor != YAML::NullAnchor) {
        fail(mark,
             "this alias refers to a node that contains it, which makes the configuration "
             "endless (a cycle); a configuration must be a tree");
        return;
      }
    }
    const auto size = anchor_sizes_.find(anchor);
    add(mark, size == anchor_sizes_.end() ? 1 : size->second);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    empty = false;
    leaf(mark, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    empty = false;
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    empty = false;
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct OpenNode {
    YAML::anchor_t anchor;
    std::size_t expanded_at_start;
  };

  void fail(const YAML::Mark& mark, std::string message) {
    if (!problem.empty()) return;
    problem = std::move(message);
    problem_mark = mark;
  }
  void add(const YAML::Mark& mark, std::size_t nodes) {
    expanded_ = nodes > kMaxConfigNodes ? kMaxConfigNodes + 1 : expanded_ + nodes;
    if (expanded_ > kMaxConfigNodes) {
      fail(mark, "with its aliases expanded the configuration has more than " +
                     std::to_string(kMaxConfigNodes) +
                     " nodes (nested aliases multiply: a \"billion laughs\" file?); a "
                     "configuration holds far fewer");
      expanded_ = kMaxConfigNodes + 1;  // saturates: sizes stay small
    }
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    add(mark, 1);
    if (anchor != YAML::NullAnchor) anchor_sizes_[anchor] = 1;
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    add(mark, 1);
    open_.push_back({anchor, expanded_});
    if (open_.size() > kMaxConfigDepth) {
      fail(mark, "sequences and maps nest more than " + std::to_string(kMaxConfigDepth) +
                     " deep here; a configuration nests a few levels");
    }
  }
  void close() {
    if (open_.empty()) return;
    const OpenNode node = open_.back();
    open_.pop_back();
    if (node.anchor != YAML::NullAnchor) {
      anchor_sizes_[node.anchor] = expanded_ - node.expanded_at_start + 1;
    }
  }

  std::size_t expanded_ = 0;
  std::vector<OpenNode> open_;
  std::unordered_map<YAML::anchor_t, std::size_t> anchor_sizes_;
};

// Where the parser got stuck: `mark` when known, else the first line that starts with a comma.
Status stuck_parser_error(const std::string& text, const ConfigDocument& document,
                          const YAML::Mark& mark) {
  SourceLocation location{document.file, 0, 0};
  std::size_t at = std::string::npos;
  if (!mark.is_null()) {
    at = static_cast<std::size_t>(mark.pos);
    location = {document.file, mark.line + 1, mark.column + 1};
  } else {
    int line = 0;
    for (std::size_t begin = 0; begin < text.size(); ++line) {
      const std::size_t first = text.find_first_not_of(" \t", begin);
      if (first != std::string::npos && text[first] == ',') {
        at = first;
        location = {document.file, line + 1, static_cast<int>(first - begin) + 1};
        break;
      }
      const std::size_t newline = text.find('\n', begin);
      if (newline == std::string::npos) break;
      begin = newline + 1;
    }
  }
  const bool comma = at < text.size() && text[at] == ',';
  return invalid_argument(format_config_error(
      location, "",
      comma ? "invalid YAML: a ',' outside [ ] or { }; commas separate items only inside a flow "
              "sequence or map"
            : "invalid YAML: the parser cannot read past this point"));
}

// yaml-cpp 0.7 never finishes LoadAll on a ',' at the top level of a document (", so" on a line
// of its own, or a quoted scalar followed by ","): each round returns an empty document without
// consuming the comma, and the list of documents grows until memory runs out (found by the YAML
// fuzz target). The documents are walked with the event parser first, which stops as soon as a
// round reads nothing new, so that LoadAll only sees text it finishes.
Status check_parser_progresses(const std::string& text, const ConfigDocument& document) {
  std::istringstream input(text);
  YAML::Parser parser(input);
  DocumentStarts round;
  YAML::Mark previous = YAML::Mark::null_mark();
  bool previous_empty = false;
  while (parser.HandleNextDocument(round)) {
    if (!round.problem.empty()) {
      const YAML::Mark& mark = round.problem_mark;
      return invalid_argument(format_config_error(
          {document.file, mark.is_null() ? 0 : mark.line + 1, mark.is_null() ? 0 : mark.column + 1},
          "", round.problem));
    }
    const bool stuck =
        !round.started || (round.empty && previous_empty && round.start.pos == previous.pos);
    if (stuck) return stuck_parser_error(text, document, round.start);
    previous = round.start;
    previous_empty = round.empty;
    round.reset();
  }
  return ok_status();
}

// yaml-cpp leaves a quoted scalar that runs to the end of the file unreported when a newline
// ends the file. Its mark points at the opening quote, so check that the quote is closed.
Status check_quotes_closed(const std::string& text, const ConfigDocument& document,
                           const YAML::Node& node, const std::string& key_path) {
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string path =
          child_key_path(key_path, it->first.IsScalar() ? it->first.Scalar() : "");
      // An open quote in a key swallows the rest of the file into the key: name the parent.
      SY_RETURN_IF_ERROR(check_quotes_closed(text, document, it->first, key_path));
      SY_RETURN_IF_ERROR(check_quotes_closed(text, document, it->second, path));
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      SY_RETURN_IF_ERROR(check_quotes_closed(text, document, node[i], item_key_path(key_path, i)));
    }
  } else if (node.IsScalar() && node.Tag() == "!" && !node.Mark().is_null()) {
    const auto start = static_cast<std::size_t>(node.Mark().pos);
    const char quote = start < text.size() ? text[start] : '\0';
    if ((quote == '"' || quote == '\'') && closing_quote_end(text, start) == kNoEnd) {
      return invalid_argument(format_config_error(node_location(document, node, ""), key_path,
                                                  unterminated_message(quote)));
    }
  }
  return ok_status();
}

}  // namespace

std::optional<std::string> yaml_bounds_problem(const std::string& text) {
  if (text.size() > kMaxConfigBytes) {
    return std::to_string(text.size()) + " bytes, over the bound of " +
           std::to_string(kMaxConfigBytes);
  }
  std::istringstream input(text);
  YAML::Parser parser(input);
  DocumentStarts round;
  try {
    while (parser.HandleNextDocument(round)) {
      if (!round.problem.empty()) {
        const YAML::Mark& mark = round.problem_mark;
        if (mark.is_null()) return round.problem;
        return "line " + std::to_string(mark.line + 1) + ", column " +
               std::to_string(mark.column + 1) + ": " + round.problem;
      }
      if (!round.started) break;  // nothing read: the caller's own parse reports what is wrong
      round.reset();
    }
  } catch (const YAML::Exception&) {
    // A syntax error: the caller's own parse reports it.
  }
  return std::nullopt;
}

std::optional<TextPosition> scan_for_unterminated_quote(const std::string& text) {
  return QuoteScanner(text).run();
}

Status parse_config_text(const std::string& text, ConfigDocument& document) {
  if (text.size() > kMaxConfigBytes) {
    return invalid_argument(format_config_error(
        {document.file, 0, 0}, "",
        "the configuration is " + std::to_string(text.size()) + " bytes; at most " +
            std::to_string(kMaxConfigBytes) + " are read (a configuration is a few kilobytes)"));
  }
  document.text = text;
  std::vector<YAML::Node> documents;
  try {
    SY_RETURN_IF_ERROR(check_parser_progresses(text, document));
    documents = YAML::LoadAll(text);
  } catch (const YAML::ParserException& error) {
    return syntax_error(text, document, error);
  } catch (const YAML::Exception& error) {
    return invalid_argument(format_config_error({document.file, 0, 0}, "",
                                                std::string("invalid YAML: ") + error.what()));
  }
  document.root = documents.empty() ? YAML::Node() : documents.front();
  for (std::size_t i = 1; i < documents.size(); ++i) {
    if (documents[i].IsNull()) continue;  // a trailing "---" with nothing after it
    return invalid_argument(format_config_error(
        node_location(document, documents[i], ""), "",
        "a second YAML document starts here, expected one document per configuration file"));
  }
  return check_quotes_closed(text, document, document.root, "");
}

}  // namespace switchyard
