// Loading a CSV or TSV table: the rows' features, the target's labels and the id column. See
// data/README.md for the formats and data.h for the options.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string_view>

#include "data/csv_text.h"
#include "data/file_text.h"
#include "data/table_columns.h"
#include "runtime/input_file.h"
#include "switchyard/data.h"

namespace switchyard {
namespace {

constexpr int64_t kMaxClassIndex = 1000000;

// One data row's label as written, kept for every row (dropped ones too: a malformed file is an
// error either way).
struct RawLabel {
  std::string text;
  std::string at;  // "file:line:column"
  bool kept = true;
};

// How many unreadable cells one error lists; the rest are counted.
constexpr int64_t kListedBadCells = 20;

// The missing values that data.missing: error refuses, gathered over the whole file so that one
// run names them all.
struct MissingCells {
  std::vector<std::string> listed;  // the first kListedBadCells, "file:line:column: ..."
  int64_t count = 0;

  void add(std::string message) {
    if (static_cast<int64_t>(listed.size()) < kListedBadCells) listed.push_back(std::move(message));
    ++count;
  }
  // One cell: its message and what to do; several: a count, the first 20, how many more, and
  // what to do.
  Status error(const std::string& where) const {
    const std::string what =
        "data.missing: mean, median or most_frequent fills missing features from the training "
        "split, drop_rows drops their rows; data.na_values lists what marks a missing value";
    if (count == 1) return invalid_argument(listed.front() + " (" + what + ")");
    std::string text =
        where + ": " + std::to_string(count) + " missing values (data.missing: error):";
    for (const std::string& line : listed) text += "\n  " + line;
    if (count > kListedBadCells) {
      text += "\n  ... and " + std::to_string(count - kListedBadCells) + " more";
    }
    return invalid_argument(text + "\n  " + what);
  }
};

struct TableReader {
  std::string where;
  const TableOptions& options;
  const TableLayout& layout;
  Dataset& data;
  std::vector<RawLabel> labels;
  std::vector<float> row;
  std::string expected_fields;  // "as the header", for messages
  std::vector<float> row_targets;
  MissingCells missing_cells;

  Status read(const detail::CsvLine& line);
  bool is_missing(const std::string& field) const {
    return detail::is_missing_value(field, options.na_values);
  }
  // Appends the number in fields[column] to `out` (NaN for a missing value); `kept` turns false
  // for a value that the policies drop the row for. A missing value that data.missing: error
  // refuses is added to `missing_cells`. `role` names the column's use.
  Status read_number(const std::vector<std::string>& fields, int64_t column, const std::string& at,
                     const char* role, std::vector<float>& out, bool& kept);
};

Status TableReader::read_number(const std::vector<std::string>& fields, int64_t column,
                                const std::string& at, const char* role, std::vector<float>& out,
                                bool& kept) {
  const std::string& field = fields[static_cast<size_t>(column)];
  // For messages only: built when a cell is refused.
  const auto place = [&] { return at + ":" + std::to_string(column + 1) + ": "; };
  const auto named = [&] {
    return layout.header == "names"
               ? " (" + std::string(role) + " " + layout.column_label(column) + ")"
               : std::string();
  };
  const bool feature = std::string_view(role) == "feature";
  if (is_missing(field)) {
    out.push_back(std::numeric_limits<float>::quiet_NaN());
    if (options.missing == MissingPolicy::kDropRows) {
      kept = false;
    } else if (!feature) {
      missing_cells.add(place() + detail::quote_input(field) + " is a missing value" + named() +
                        "; targets are never filled");
    } else if (!is_imputing(options.missing)) {
      missing_cells.add(place() + detail::quote_input(field) + " is a missing value" + named());
    }
    return ok_status();
  }
  float value = 0;
  const detail::ParsedNumber parsed = detail::parse_csv_float(field, value);
  if (parsed == detail::ParsedNumber::kNotANumber) {
    // A column of words (categories) is not read as features: one-hot encoding is not done here.
    return invalid_argument(place() + detail::quote_input(field) + " is not a number" + named());
  }
  if (parsed == detail::ParsedNumber::kNonFinite && options.non_finite == NonFinitePolicy::kError) {
    return invalid_argument(place() + detail::quote_input(field) +
                            " is not a finite number (data.non_finite: drop_rows would drop "
                            "such rows)");
  }
  kept = kept && parsed == detail::ParsedNumber::kNumber;
  out.push_back(value);
  return ok_status();
}

Status TableReader::read(const detail::CsvLine& line) {
  SY_ASSIGN_OR_RETURN(const auto fields, detail::split_csv_fields(line, layout.delimiter, where));
  const std::string at = where + ":" + std::to_string(line.number);
  if (static_cast<int64_t>(fields.size()) != layout.column_count) {
    return invalid_argument(at + ": expected " + std::to_string(layout.column_count) + " fields " +
                            expected_fields + ", found " + std::to_string(fields.size()));
  }
  row.clear();
  row_targets.clear();
  bool kept = true;
  for (const int64_t column : layout.feature_columns) {
    SY_RETURN_IF_ERROR(read_number(fields, column, at, "feature", row, kept));
  }
  for (const int64_t column : layout.value_columns) {
    SY_RETURN_IF_ERROR(read_number(fields, column, at, "target", row_targets, kept));
  }
  if (layout.target_column >= 0 && layout.value_columns.empty()) {
    const std::string& label = fields[static_cast<size_t>(layout.target_column)];
    const std::string label_at = at + ":" + std::to_string(layout.target_column + 1);
    const bool missing = is_missing(label);
    if (missing) {
      if (options.missing == MissingPolicy::kDropRows) {
        kept = false;
      } else {
        missing_cells.add(label_at + ": " + detail::quote_input(label) + " is a missing class" +
                          (layout.header == "names"
                               ? " (target " + layout.column_label(layout.target_column) + ")"
                               : "") +
                          "; classes are never filled");
      }
    }
    // A dropped row's class is still checked (a malformed class is an error either way), unless
    // it is the missing value that dropped the row.
    if (!missing || kept) labels.push_back({label, label_at, kept});
  }
  if (!kept) {
    ++data.dropped_rows;
    return ok_status();
  }
  data.features.insert(data.features.end(), row.begin(), row.end());
  data.targets.insert(data.targets.end(), row_targets.begin(), row_targets.end());
  data.source_lines.push_back(line.number);
  if (layout.id_column >= 0) data.ids.push_back(fields[static_cast<size_t>(layout.id_column)]);
  return ok_status();
}

bool is_number(const std::string& text) {
  float value = 0;
  return detail::parse_csv_float(text, value) == detail::ParsedNumber::kNumber;
}

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// Labels that are numbers are class indices: integers 0..1000000, within `known` when given.
Result<int32_t> class_index(const RawLabel& label, int64_t known_count, bool strict) {
  int64_t index = 0;
  if (!detail::parse_csv_int(label.text, index) || index < 0 || index > kMaxClassIndex) {
    return invalid_argument(label.at + ": class " + detail::quote_input(label.text) +
                            " is not an integer >= 0");
  }
  if (strict && known_count > 0 && index >= known_count) {
    return invalid_argument(label.at + ": class " + std::to_string(index) +
                            " is outside the header's " + std::to_string(known_count) +
                            " classes (0.." + std::to_string(known_count - 1) + ")");
  }
  return static_cast<int32_t>(index);
}

// Labels against known class names (the model's, or our header's): by name, else by index.
Status map_to_known(const std::vector<RawLabel>& raw, const std::vector<std::string>& known,
                    bool from_header, Dataset& data) {
  std::map<std::string, int32_t> index_of;
  for (size_t i = 0; i < known.size(); ++i) index_of.emplace(known[i], static_cast<int32_t>(i));
  for (const RawLabel& label : raw) {
    int32_t index = 0;
    if (const auto found = index_of.find(label.text); found != index_of.end()) {
      index = found->second;
    } else if (!from_header && !is_number(label.text)) {
      return invalid_argument(label.at + ": class " + detail::quote_input(label.text) +
                              " is not one of the model's classes (" + join(known) + ")");
    } else {
      SY_ASSIGN_OR_RETURN(index,
                          class_index(label, static_cast<int64_t>(known.size()), from_header));
    }
    if (label.kept) data.labels.push_back(index);
  }
  data.class_names = known;
  return ok_status();
}

// Integer class numbers beyond this many distinct values get a note that they may be a quantity;
// beyond it with fewer than kFewPerClass rows per class on average, an error.
constexpr size_t kManyClasses = 50;
constexpr size_t kFewPerClass = 5;

// A target of numbers that are not class numbers (diabetes' progression: 151, 75, 141, ... or
// 151.0) is most likely a quantity to predict: the error says what to set for a regression.
Status check_class_numbers(const std::vector<RawLabel>& raw, const TableLayout& layout,
                           Dataset& data) {
  std::set<std::string> distinct;
  const RawLabel* first_bad = nullptr;
  for (const RawLabel& label : raw) {
    int64_t index = 0;
    if (!detail::parse_csv_int(label.text, index) && first_bad == nullptr) first_bad = &label;
    distinct.insert(label.text);
  }
  const std::string label = layout.column_label(layout.target_column);
  // data.targets takes the column's name, or its number: the number in a file without names, or
  // where the name is long or unprintable (the advice must be one that can be typed).
  const std::string name = layout.column_name(layout.target_column);
  const bool typeable = !layout.column_names.empty() && detail::name_for_message(name) == name;
  const std::string key = typeable ? name : std::to_string(layout.target_column + 1);
  const std::string regression = "to predict its numbers (a regression), " +
                                 std::string(kTargetOfNumbersAdvice) + ": [" + key +
                                 "] and set loss: mse";
  const std::string count = std::to_string(distinct.size()) + " distinct values in " +
                            std::to_string(raw.size()) + " rows";
  if (first_bad != nullptr) {
    return invalid_argument(first_bad->at + ": class " + detail::quote_input(first_bad->text) +
                            " is not an integer >= 0: the target, " + label + ", holds numbers (" +
                            count + "), not class numbers; " + regression);
  }
  if (distinct.size() > kManyClasses && distinct.size() * kFewPerClass > raw.size()) {
    return invalid_argument(data.name + ": the target, " + label + ", holds " + count +
                            ": as classes, fewer than " + std::to_string(kFewPerClass) +
                            " rows each, too few to learn; " + regression);
  }
  if (distinct.size() > kManyClasses) {
    data.notes.push_back("the target, " + label + ", holds " + count + ", each read as a class; " +
                         regression);
  }
  return ok_status();
}

// Training labels: numbers are class indices; otherwise names, ordered by `order`.
Status assign_training_labels(const std::vector<RawLabel>& raw, LabelOrder order, Dataset& data) {
  if (std::all_of(raw.begin(), raw.end(), [](const RawLabel& l) { return is_number(l.text); })) {
    SY_RETURN_IF_ERROR(check_class_numbers(raw, data.table, data));
    for (const RawLabel& label : raw) {
      SY_ASSIGN_OR_RETURN(const int32_t index, class_index(label, 0, false));
      if (label.kept) data.labels.push_back(index);
    }
    const int32_t max_label =
        data.labels.empty() ? 0 : *std::max_element(data.labels.begin(), data.labels.end());
    for (int32_t c = 0; c <= max_label; ++c) data.class_names.push_back(std::to_string(c));
    return ok_status();
  }
  std::vector<std::string> names;
  for (const RawLabel& label : raw) {
    if (label.text.empty()) return invalid_argument(label.at + ": the class is empty");
    if (std::find(names.begin(), names.end(), label.text) == names.end()) {
      names.push_back(label.text);
    }
  }
  if (order == LabelOrder::kSorted) std::sort(names.begin(), names.end());
  data.notes.push_back("classes (data.label_order: " + std::string(label_order_name(order)) +
                       "): " + join(names));
  return map_to_known(raw, names, true, data);
}

Status assign_labels(const std::vector<RawLabel>& raw, const detail::FirstLine& first,
                     const TableOptions& options, Dataset& data) {
  const std::vector<int64_t>& values =
      options.trained != nullptr ? options.trained->value_columns : data.table.value_columns;
  if (!values.empty()) {
    // Regression: the targets are numbers read with the features; labels stay 0.
    const TableLayout& named = options.trained != nullptr ? *options.trained : data.table;
    for (const int64_t column : values) data.target_names.push_back(named.column_name(column));
    data.labeled = !data.table.value_columns.empty();
    data.labels.assign(static_cast<size_t>(data.sample_count), 0);
    return ok_status();
  }
  if (data.table.target_column < 0) {
    data.labeled = false;
    data.labels.assign(static_cast<size_t>(data.sample_count), 0);
    data.class_names = options.model_classes;
    return ok_status();
  }
  if (!options.model_classes.empty()) {
    return map_to_known(raw, options.model_classes, false, data);
  }
  if (!first.counts.class_names.empty()) {
    return map_to_known(raw, first.counts.class_names, true, data);
  }
  return assign_training_labels(raw, options.label_order, data);
}

// The delimiter the options give, or the detected one; a note when the guess was a close call.
char choose_delimiter(const std::vector<detail::CsvLine>& lines, const TableOptions& options,
                      const std::string& where, std::vector<std::string>& notes) {
  if (options.delimiter != '\0') return options.delimiter;
  const detail::DetectedDelimiter detected = detail::detect_csv_delimiter(lines);
  // New rows for a model: what the training file used, unless this file clearly uses another.
  if (!detected.found && options.trained != nullptr) return options.trained->delimiter;
  if (!detected.also_consistent.empty()) {
    std::string others;
    for (const char c : detected.also_consistent) {
      others += (others.empty() ? "" : " and ") + detail::delimiter_name(c);
    }
    notes.push_back(where + ": the delimiter is " + detail::delimiter_name(detected.delimiter) +
                    " (" + others + " would also split every line evenly; data.delimiter chooses)");
  }
  return detected.delimiter;
}

Status check_counts(const std::string& where, const detail::CountsHeader& header,
                    const Dataset& data) {
  const int64_t rows = data.sample_count + data.dropped_rows;
  if (header.sample_count != rows) {
    return invalid_argument(where + ": header says " + std::to_string(header.sample_count) +
                            " samples, the file has " + std::to_string(rows));
  }
  return ok_status();
}

// The rows of `lines`, read with `delimiter` into `data` (which holds the notes so far).
Status read_table(const std::vector<detail::CsvLine>& lines, char delimiter,
                  const TableOptions& options, const std::string& where, Dataset& data) {
  SY_ASSIGN_OR_RETURN(
      const detail::FirstLine first,
      detail::read_first_line(lines, delimiter, options.header, options.na_values, where));
  const size_t start = first.kind == "none" ? 0 : 1;
  if (start >= lines.size()) return invalid_argument(where + ": the file has no samples");
  SY_ASSIGN_OR_RETURN(const auto fields, detail::split_csv_fields(lines[start], delimiter, where));
  const auto column_count = first.kind == "counts" ? first.counts.feature_count + 1
                            : first.kind == "names"
                                ? static_cast<int64_t>(first.column_names.size())
                                : static_cast<int64_t>(fields.size());
  if (column_count < 2 && options.trained == nullptr) {
    return invalid_argument(where + ":" + std::to_string(lines[start].number) +
                            ": a sample needs at least one feature and a class");
  }
  const std::string expected_fields = first.kind == "names" ? "(as the header has)"
                                      : first.kind == "counts" && options.trained == nullptr
                                          ? "(features then class)"
                                          : "(as line " + std::to_string(lines[start].number) + ")";
  // Every row has column_count fields (TableReader::read). The first is checked before the layout
  // is made: a counts header declares the count, and "1,2000000000" made a list of 2e9 feature
  // columns (16 GB) before any row was read (found by tools/fuzz).
  if (static_cast<int64_t>(fields.size()) != column_count) {
    return invalid_argument(where + ":" + std::to_string(lines[start].number) + ": expected " +
                            std::to_string(column_count) + " fields " + expected_fields +
                            ", found " + std::to_string(fields.size()));
  }
  if (options.trained != nullptr) {
    SY_ASSIGN_OR_RETURN(data.table, detail::resolve_prediction_columns(
                                        first, column_count, *options.trained, where, data.notes));
  } else {
    SY_ASSIGN_OR_RETURN(data.table, detail::resolve_training_columns(first, column_count, options,
                                                                     where, data.notes));
  }
  data.table.delimiter = delimiter;
  TableReader reader{where, options, data.table, data, {}, {}, expected_fields, {}, {}};
  for (size_t i = start; i < lines.size(); ++i) SY_RETURN_IF_ERROR(reader.read(lines[i]));
  if (reader.missing_cells.count > 0) return reader.missing_cells.error(where);
  data.sample_count = static_cast<int64_t>(data.source_lines.size());
  data.sample_shape = {static_cast<int64_t>(data.table.feature_columns.size())};
  if (first.kind == "counts") SY_RETURN_IF_ERROR(check_counts(where, first.counts, data));
  SY_RETURN_IF_ERROR(assign_labels(reader.labels, first, options, data));
  if (data.sample_count == 0) {
    return invalid_argument(where + ": the file has no samples left after dropping " +
                            std::to_string(data.dropped_rows) +
                            " rows with missing or non-finite values (data.missing, "
                            "data.non_finite: drop_rows)");
  }
  return ok_status();
}

}  // namespace

Result<Dataset> load_table_csv(const std::filesystem::path& path, const TableOptions& options) {
  SY_ASSIGN_OR_RETURN(const std::string text, detail::read_text_file(path));
  const std::string where = path.string();
  SY_ASSIGN_OR_RETURN(const std::vector<detail::CsvLine> lines,
                      detail::csv_data_lines(text, where));
  if (lines.empty()) return invalid_argument(where + ": the file has no samples");
  Dataset data;
  data.name = where;
  const char delimiter = choose_delimiter(lines, options, where, data.notes);
  const bool guessed = !data.notes.empty();  // the only note so far is a close delimiter call
  const Status status = read_table(lines, delimiter, options, where, data);
  if (!status.ok() && guessed) {
    return Status(status.code(), status.message() + "\n  note: " + data.notes.front());
  }
  SY_RETURN_IF_ERROR(status);
  return data;
}

Result<Dataset> load_labeled_csv(const std::filesystem::path& path, NonFinitePolicy non_finite) {
  TableOptions options;
  options.non_finite = non_finite;
  // As DataSettings decides it: dropping rows with infinities drops rows with holes too.
  if (non_finite == NonFinitePolicy::kDropRows) options.missing = MissingPolicy::kDropRows;
  return load_table_csv(path, options);
}

Result<LabelOrder> parse_label_order(const std::string& text) {
  if (text == "sorted") return LabelOrder::kSorted;
  if (text == "first_seen") return LabelOrder::kFirstSeen;
  return invalid_argument("unknown label order '" + text + "' (expected sorted or first_seen)");
}

const char* label_order_name(LabelOrder order) {
  return order == LabelOrder::kFirstSeen ? "first_seen" : "sorted";
}

}  // namespace switchyard
