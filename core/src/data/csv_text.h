// The text level of CSV and TSV files: lines, fields (with RFC 4180 double quotes), numbers, and
// which delimiter a file uses. Nothing here knows what a column means.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "switchyard/status.h"

namespace switchyard::detail {

struct CsvLine {
  int number;  // 1-based line number in the file
  std::string_view text;
};

// The longest line a CSV or TSV file may have: 8 MiB (about a million numbers). A longer line is
// refused naming the file and the line, before its fields are split (data/README.md).
inline constexpr size_t kMaxCsvLineBytes = size_t{8} << 20;
// The most fields of one character (and a delimiter) such a line holds.
inline constexpr int64_t kMaxCsvFields = static_cast<int64_t>((kMaxCsvLineBytes + 1) / 2);

// The lines that hold data: neither empty (after trimming blanks and '\r') nor starting with '#'.
// INVALID_ARGUMENT "<where>:<line>: the line is N bytes long, over the limit of ..." for a line
// longer than kMaxCsvLineBytes, whether it holds data or not.
Result<std::vector<CsvLine>> csv_data_lines(std::string_view text, const std::string& where);

// The fields of `line` split at `delimiter`. A field may be quoted ("a,b", with "" for a quote);
// blanks around an unquoted field are trimmed. INVALID_ARGUMENT "<where>:<line>:<column>: ..." for
// an unterminated quote or text after a closing quote.
Result<std::vector<std::string>> split_csv_fields(const CsvLine& line, char delimiter,
                                                  const std::string& where);

enum class ParsedNumber { kNumber, kNonFinite, kNotANumber };

// "nan", "inf" and values beyond the f32 range (which would become inf) are kNonFinite; values
// too small for f32 become 0 (or a subnormal), as a float conversion would make them.
ParsedNumber parse_csv_float(std::string_view text, float& out);
bool parse_csv_int(std::string_view text, int64_t& out);

// Whether `field` is one of `na_values` (data.na_values), ignoring ASCII case.
bool is_missing_value(std::string_view field, const std::vector<std::string>& na_values);

// The delimiters a file may use when data.delimiter is not given, in preference order.
inline constexpr char kCsvDelimiters[] = {',', '\t', ';'};

struct DetectedDelimiter {
  char delimiter = ',';
  bool found = false;  // false: no candidate split the lines evenly (',' is the fallback)
  // The other candidates that split the sampled lines into as many fields each (more than one);
  // empty when the choice was clear.
  std::vector<char> also_consistent;
};

// The candidate that splits the first lines (up to 20) into the same number of fields, more than
// one; among several, the one giving the most fields (ties: preference order). ',' when none does.
DetectedDelimiter detect_csv_delimiter(const std::vector<CsvLine>& lines);

// "','", "tab", "';'" for messages.
std::string delimiter_name(char delimiter);

}  // namespace switchyard::detail
