// Lines, quoted fields, numbers and delimiter detection for CSV and TSV files.
#include "data/csv_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace switchyard::detail {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// Trims blanks, but never the delimiter itself (a tab in a TSV file is not padding).
std::string_view trim(std::string_view text, char delimiter) {
  while (!text.empty() && is_blank(text.front()) && text.front() != delimiter) {
    text.remove_prefix(1);
  }
  while (!text.empty() && is_blank(text.back()) && text.back() != delimiter) text.remove_suffix(1);
  return text;
}

Status field_error(const std::string& where, const CsvLine& line, size_t column,
                   const std::string& what) {
  return invalid_argument(where + ":" + std::to_string(line.number) + ":" + std::to_string(column) +
                          ": " + what);
}

// One quoted field starting at text[start] == '"'; `end` is left after the closing quote.
Result<std::string> read_quoted(const CsvLine& line, size_t start, size_t& end,
                                const std::string& where, size_t column) {
  std::string value;
  size_t i = start + 1;
  while (true) {
    if (i >= line.text.size()) return field_error(where, line, column, "unterminated quote");
    if (line.text[i] != '"') {
      value += line.text[i++];
    } else if (i + 1 < line.text.size() && line.text[i + 1] == '"') {
      value += '"';
      i += 2;
    } else {
      end = i + 1;
      return value;
    }
  }
}

}  // namespace

Result<std::vector<CsvLine>> csv_data_lines(std::string_view text, const std::string& where) {
  std::vector<CsvLine> lines;
  int number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    ++number;
    if (end - start > kMaxCsvLineBytes) {
      return invalid_argument(where + ":" + std::to_string(number) + ": the line is " +
                              std::to_string(end - start) + " bytes long, over the limit of " +
                              std::to_string(kMaxCsvLineBytes) + " bytes (8 MiB) per line");
    }
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view content = trim(line, '\0');
    if (!content.empty() && content.front() != '#') lines.push_back({number, line});
    start = end + 1;
  }
  return lines;
}

Result<std::vector<std::string>> split_csv_fields(const CsvLine& line, char delimiter,
                                                  const std::string& where) {
  std::vector<std::string> fields;
  const std::string_view text = line.text;
  size_t start = 0;
  while (true) {
    const size_t column = fields.size() + 1;
    size_t cursor = start;
    while (cursor < text.size() && is_blank(text[cursor]) && text[cursor] != delimiter) ++cursor;
    size_t next = 0;
    if (cursor < text.size() && text[cursor] == '"') {
      size_t after = 0;
      SY_ASSIGN_OR_RETURN(std::string value, read_quoted(line, cursor, after, where, column));
      while (after < text.size() && is_blank(text[after]) && text[after] != delimiter) ++after;
      if (after < text.size() && text[after] != delimiter) {
        return field_error(where, line, column, "text after a closing quote");
      }
      fields.push_back(std::move(value));
      next = after;
    } else {
      next = std::min(text.find(delimiter, start), text.size());
      fields.emplace_back(trim(text.substr(start, next - start), delimiter));
    }
    if (next >= text.size()) break;
    start = next + 1;
  }
  return fields;
}

ParsedNumber parse_csv_float(std::string_view text, float& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const char* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(text.data(), last, out);
  if (text.empty() || end != last) return ParsedNumber::kNotANumber;
  if (error == std::errc::result_out_of_range) {
    double wide = 0;
    const auto [wide_end, wide_error] = std::from_chars(text.data(), last, wide);
    if (wide_error != std::errc() || wide_end != last) return ParsedNumber::kNonFinite;
    // Converting a double beyond the float range is undefined: it would be inf, so say so first.
    if (!(std::fabs(wide) <= static_cast<double>(std::numeric_limits<float>::max()))) {
      return ParsedNumber::kNonFinite;
    }
    out = static_cast<float>(wide);
  } else if (error != std::errc()) {
    return ParsedNumber::kNotANumber;
  }
  return std::isfinite(out) ? ParsedNumber::kNumber : ParsedNumber::kNonFinite;
}

bool parse_csv_int(std::string_view text, int64_t& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool is_missing_value(std::string_view field, const std::vector<std::string>& na_values) {
  const auto same = [&](const std::string& na) {
    return na.size() == field.size() &&
           std::equal(na.begin(), na.end(), field.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  };
  return std::any_of(na_values.begin(), na_values.end(), same);
}

DetectedDelimiter detect_csv_delimiter(const std::vector<CsvLine>& lines) {
  constexpr size_t kSampleLines = 20;
  const size_t sample = std::min(lines.size(), kSampleLines);
  std::vector<std::pair<char, size_t>> consistent;  // delimiter, fields per line
  for (const char candidate : kCsvDelimiters) {
    // The first line may be our own header ("count,features,..."), shorter than the rows: it
    // needs to split, the rows after it to split evenly.
    size_t fields = 0;
    bool same = sample > 0;
    for (size_t i = 0; i < sample && same; ++i) {
      const auto split = split_csv_fields(lines[i], candidate, "");
      same = split.ok() && split->size() > 1 && (i <= 1 || split->size() == fields);
      if (split.ok()) fields = split->size();
    }
    if (same) consistent.emplace_back(candidate, fields);
  }
  DetectedDelimiter detected;
  if (consistent.empty()) return detected;
  std::stable_sort(consistent.begin(), consistent.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  detected.delimiter = consistent.front().first;
  detected.found = true;
  for (size_t i = 1; i < consistent.size(); ++i) {
    detected.also_consistent.push_back(consistent[i].first);
  }
  return detected;
}

std::string delimiter_name(char delimiter) {
  if (delimiter == '\t') return "tab";
  return std::string("'") + delimiter + "'";
}

}  // namespace switchyard::detail
