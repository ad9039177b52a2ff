// The "labeled" CSV format: features then the integer class on each line, with an optional header
// "count,features,classnames...". See data/README.md.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>

#include "data/file_text.h"
#include "runtime/input_file.h"
#include "switchyard/data.h"

namespace switchyard {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

enum class Parsed { kNumber, kNonFinite, kNotANumber };

// "nan", "inf" and values beyond the f32 range (which would become inf) are kNonFinite; values
// too small for f32 become 0 (or a subnormal), as a float conversion would make them.
Parsed parse_float(std::string_view text, float& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const char* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(text.data(), last, out);
  if (text.empty() || end != last) return Parsed::kNotANumber;
  if (error == std::errc::result_out_of_range) {
    double wide = 0;
    const auto [wide_end, wide_error] = std::from_chars(text.data(), last, wide);
    if (wide_error != std::errc() || wide_end != last) return Parsed::kNonFinite;
    // Converting a double beyond the float range is undefined: it would be inf, so say so first.
    if (!(std::fabs(wide) <= double{std::numeric_limits<float>::max()})) return Parsed::kNonFinite;
    out = static_cast<float>(wide);
  } else if (error != std::errc()) {
    return Parsed::kNotANumber;
  }
  return std::isfinite(out) ? Parsed::kNumber : Parsed::kNonFinite;
}

bool parse_int(std::string_view text, int64_t& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

struct Line {
  int number;  // 1-based
  std::string_view text;
};

std::vector<Line> non_empty_lines(std::string_view text) {
  std::vector<Line> lines;
  int number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    ++number;
    const std::string_view line = trim(text.substr(start, end - start));
    if (!line.empty() && line.front() != '#') lines.push_back({number, line});
    start = end + 1;
  }
  return lines;
}

// More features than any line could hold: a header announcing more is malformed.
constexpr int64_t kMaxFeatures = int64_t{1} << 31;

struct Header {
  int64_t sample_count = 0;
  int64_t feature_count = 0;
  std::vector<std::string> class_names;
};

// The first line is a header when one of its fields is not a number, or when it has a different
// field count from the first data line (a header without class names).
bool looks_like_header(const std::vector<Line>& lines) {
  float value = 0;
  const auto fields = split_fields(lines[0].text);
  for (const auto field : fields) {
    if (parse_float(field, value) == Parsed::kNotANumber) return true;
  }
  return lines.size() > 1 && split_fields(lines[1].text).size() != fields.size();
}

Result<Header> parse_header(const std::string& where, const Line& line) {
  const auto fields = split_fields(line.text);
  Header header;
  if (fields.size() < 2 || !parse_int(fields[0], header.sample_count) ||
      !parse_int(fields[1], header.feature_count) || header.sample_count < 0 ||
      header.feature_count < 1 || header.feature_count > kMaxFeatures) {
    return invalid_argument(where + ":" + std::to_string(line.number) +
                            ": header must be 'count,features,classname...', got " +
                            detail::quote_input(line.text));
  }
  for (size_t i = 2; i < fields.size(); ++i) header.class_names.emplace_back(fields[i]);
  return header;
}

// Reads the data lines into a Dataset, dropping or refusing rows with non-finite values.
struct RowReader {
  std::string where;  // the file
  int64_t feature_count = 0;
  int64_t class_limit = 0;  // the header's class count; 0 without class names
  NonFinitePolicy non_finite = NonFinitePolicy::kError;
  std::vector<float> row;

  Status read(const Line& line, Dataset& data);
  Status read_label(const std::string& at, std::string_view field, Dataset& data) const;
};

Status RowReader::read(const Line& line, Dataset& data) {
  const auto fields = split_fields(line.text);
  const std::string at = where + ":" + std::to_string(line.number);
  if (static_cast<int64_t>(fields.size()) != feature_count + 1) {
    return invalid_argument(at + ": expected " + std::to_string(feature_count + 1) +
                            " fields (features then class), found " +
                            std::to_string(fields.size()));
  }
  row.resize(static_cast<size_t>(feature_count));
  bool finite = true;
  for (int64_t i = 0; i < feature_count; ++i) {
    const std::string column = at + ":" + std::to_string(i + 1) + ": ";
    const Parsed parsed = parse_float(fields[i], row[i]);
    if (parsed == Parsed::kNotANumber) {
      return invalid_argument(column + detail::quote_input(fields[i]) + " is not a number");
    }
    if (parsed == Parsed::kNonFinite && non_finite == NonFinitePolicy::kError) {
      return invalid_argument(column + detail::quote_input(fields[i]) +
                              " is not a finite number (data.non_finite: drop_rows would drop "
                              "such rows)");
    }
    finite = finite && parsed == Parsed::kNumber;
  }
  // The class is checked even in a dropped row: a malformed file is an error either way.
  SY_RETURN_IF_ERROR(read_label(at + ":" + std::to_string(feature_count + 1), fields.back(), data));
  if (!finite) {
    data.labels.pop_back();
    ++data.dropped_rows;
    return ok_status();
  }
  data.features.insert(data.features.end(), row.begin(), row.end());
  data.source_lines.push_back(line.number);
  return ok_status();
}

Status RowReader::read_label(const std::string& at, std::string_view field, Dataset& data) const {
  int64_t label = 0;
  if (!parse_int(field, label) || label < 0 || label > 1000000) {
    return invalid_argument(at + ": class " + detail::quote_input(field) +
                            " is not an integer >= 0");
  }
  if (class_limit > 0 && label >= class_limit) {
    return invalid_argument(at + ": class " + std::to_string(label) + " is outside the header's " +
                            std::to_string(class_limit) + " classes (0.." +
                            std::to_string(class_limit - 1) + ")");
  }
  data.labels.push_back(static_cast<int32_t>(label));
  return ok_status();
}

Status check_against_header(const std::string& where, const Header& header, Dataset& data) {
  const int64_t rows = data.sample_count + data.dropped_rows;
  if (header.sample_count != rows) {
    return invalid_argument(where + ": header says " + std::to_string(header.sample_count) +
                            " samples, the file has " + std::to_string(rows));
  }
  if (!header.class_names.empty()) data.class_names = header.class_names;
  return ok_status();
}

}  // namespace

Result<Dataset> load_labeled_csv(const std::filesystem::path& path, NonFinitePolicy non_finite) {
  SY_ASSIGN_OR_RETURN(const std::string text, detail::read_text_file(path));
  const std::string where = path.string();
  const std::vector<Line> lines = non_empty_lines(text);
  if (lines.empty()) return invalid_argument(where + ": the file has no samples");

  Dataset data;
  data.name = where;
  Header header;
  const bool has_header = looks_like_header(lines);
  if (has_header) {
    SY_ASSIGN_OR_RETURN(header, parse_header(where, lines[0]));
  }
  const size_t first = has_header ? 1 : 0;
  if (first >= lines.size()) return invalid_argument(where + ": the file has no samples");
  const int64_t feature_count = has_header
                                    ? header.feature_count
                                    : static_cast<int64_t>(split_fields(lines[0].text).size()) - 1;
  if (feature_count < 1) {
    return invalid_argument(where + ":" + std::to_string(lines[0].number) +
                            ": a sample needs at least one feature and a class");
  }
  RowReader reader{
      where, feature_count, static_cast<int64_t>(header.class_names.size()), non_finite, {}};
  for (size_t i = first; i < lines.size(); ++i) SY_RETURN_IF_ERROR(reader.read(lines[i], data));
  data.sample_count = static_cast<int64_t>(data.labels.size());
  data.sample_shape = {feature_count};
  if (has_header) SY_RETURN_IF_ERROR(check_against_header(where, header, data));
  if (data.sample_count == 0) {
    return invalid_argument(where + ": the file has no samples left after dropping " +
                            std::to_string(data.dropped_rows) +
                            " rows with non-finite values (data.non_finite: drop_rows)");
  }
  if (data.class_names.empty()) {
    const int32_t max_label = *std::max_element(data.labels.begin(), data.labels.end());
    for (int32_t c = 0; c <= max_label; ++c) data.class_names.push_back(std::to_string(c));
  }
  return data;
}

}  // namespace switchyard
