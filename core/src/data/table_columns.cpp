// The first line of a table and the roles of its columns.
#include "data/table_columns.h"

#include <algorithm>

#include "runtime/input_file.h"

namespace switchyard::detail {
namespace {

bool is_one_of(int64_t column, const std::vector<int64_t>& columns) {
  return std::find(columns.begin(), columns.end(), column) != columns.end();
}

// The class column, or one of the regression targets.
bool is_target(const TableLayout& layout, int64_t column) {
  return column == layout.target_column || is_one_of(column, layout.value_columns);
}

// More features than any line could hold: a header announcing more is malformed.
constexpr int64_t kMaxFeatures = int64_t{1} << 31;

bool is_number(const std::string& field) {
  float value = 0;
  return parse_csv_float(field, value) != ParsedNumber::kNotANumber;
}

// How many names a list of a file's columns shows before it counts the rest.
constexpr size_t kListedNames = 30;

// A comma-separated list of column names from a file, each made printable and cut
// (name_for_message), at most kListedNames of them and then how many more.
std::string name_list(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < kListedNames; ++i) {
    text += (i == 0 ? "" : ", ") + name_for_message(names[i]);
  }
  if (names.size() > kListedNames) {
    text += ", ... (" + std::to_string(names.size()) + " in all)";
  }
  return text;
}

std::string at_line(const std::string& where, const CsvLine& line) {
  return where + ":" + std::to_string(line.number);
}

Result<CountsHeader> parse_counts(const std::vector<std::string>& fields, const CsvLine& line,
                                  const std::string& where) {
  CountsHeader header;
  if (fields.size() < 2 || !parse_csv_int(fields[0], header.sample_count) ||
      !parse_csv_int(fields[1], header.feature_count) || header.sample_count < 0 ||
      header.feature_count < 1 || header.feature_count > kMaxFeatures) {
    return invalid_argument(at_line(where, line) +
                            ": header must be 'count,features,classname...' or column names "
                            "(data.header: true), got " +
                            quote_input(line.text));
  }
  for (size_t i = 2; i < fields.size(); ++i) header.class_names.push_back(fields[i]);
  return header;
}

// Our counts line: two integers, then class names. With names it may have as many fields as the
// rows (iris: "150,4,setosa,versicolor,virginica"); its sample count must then be the file's.
bool looks_like_counts(const std::vector<std::string>& fields, size_t next_line_fields,
                       size_t data_lines) {
  int64_t count = 0;
  int64_t features = 0;
  if (fields.size() < 2 || !parse_csv_int(fields[0], count) ||
      !parse_csv_int(fields[1], features)) {
    return false;
  }
  const bool rest_are_names =
      std::none_of(fields.begin() + 2, fields.end(), [](const auto& f) { return is_number(f); });
  return rest_are_names && (next_line_fields != fields.size() ||
                            (fields.size() > 2 && count == static_cast<int64_t>(data_lines)));
}

// A header of names has text where the next line has a number (a row of data with string labels
// has text in the same columns as the rows after it).
bool looks_like_names(const std::vector<std::string>& fields, const std::vector<std::string>& next,
                      const std::vector<std::string>& na_values) {
  if (next.size() != fields.size()) return true;  // an error either way; the header says more
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!is_number(fields[i]) && !is_missing_value(fields[i], na_values) && is_number(next[i])) {
      return true;
    }
  }
  return false;
}

std::string list_columns(const std::vector<std::string>& names, int64_t column_count) {
  if (names.empty()) {
    return "the file has " + std::to_string(column_count) +
           " columns and no header of names; number them from 1, or -1 for the last";
  }
  return "columns: " + name_list(names);
}

// A column by name (when the file names its columns) or by number: 1 is the first, -1 the last.
Result<int64_t> find_column(const std::string& spec, const std::string& key,
                            const std::vector<std::string>& names, int64_t column_count,
                            const std::string& where) {
  int64_t found = -1;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != spec) continue;
    if (found >= 0) {
      return invalid_argument(key + ": column '" + spec + "' appears twice in " + where +
                              " (columns " + std::to_string(found + 1) + " and " +
                              std::to_string(i + 1) + ")");
    }
    found = static_cast<int64_t>(i);
  }
  if (found >= 0) return found;
  int64_t number = 0;
  if (parse_csv_int(spec, number) && number != 0 && number <= column_count &&
      number >= -column_count) {
    return number > 0 ? number - 1 : column_count + number;
  }
  return invalid_argument(key + ": no column '" + spec + "' in " + where + " (" +
                          list_columns(names, column_count) + ")");
}

int64_t find_name(const std::vector<std::string>& names, const std::string& name) {
  const auto found = std::find(names.begin(), names.end(), name);
  return found == names.end() ? -1 : static_cast<int64_t>(found - names.begin());
}

// Columns of a prediction input that the model does not read (and training did not drop) are
// named, so that a misspelt feature column does not pass unnoticed.
void note_ignored_columns(const std::vector<std::string>& names, const TableLayout& layout,
                          const TableLayout& trained, const std::string& where,
                          std::vector<std::string>& notes) {
  std::vector<std::string> ignored;
  for (size_t i = 0; i < names.size(); ++i) {
    const auto column = static_cast<int64_t>(i);
    const bool used = is_target(layout, column) || column == layout.id_column ||
                      std::find(layout.feature_columns.begin(), layout.feature_columns.end(),
                                column) != layout.feature_columns.end();
    bool dropped = false;
    for (const int64_t d : trained.dropped_columns) {
      dropped = dropped || trained.column_names[static_cast<size_t>(d)] == names[i];
    }
    if (!used && !dropped) ignored.push_back(names[i]);
  }
  if (!ignored.empty()) {
    notes.push_back(where + ": columns the model does not read, ignored: " + name_list(ignored));
  }
}

}  // namespace

Result<FirstLine> read_first_line(const std::vector<CsvLine>& lines, char delimiter,
                                  HeaderMode mode, const std::vector<std::string>& na_values,
                                  const std::string& where) {
  FirstLine first;
  SY_ASSIGN_OR_RETURN(const std::vector<std::string> fields,
                      split_csv_fields(lines[0], delimiter, where));
  std::vector<std::string> next = fields;
  if (lines.size() > 1) {
    SY_ASSIGN_OR_RETURN(next, split_csv_fields(lines[1], delimiter, where));
  }
  const size_t next_fields = next.size();
  const bool has_text = !std::all_of(fields.begin(), fields.end(), is_number);
  if (mode == HeaderMode::kNone) return first;
  const bool counts = looks_like_counts(fields, next_fields, lines.size() - 1);
  if (mode == HeaderMode::kNames ||
      (has_text && !counts && looks_like_names(fields, next, na_values))) {
    if (lines.size() > 1 && next_fields != fields.size()) {
      return invalid_argument(at_line(where, lines[0]) + ": the header has " +
                              std::to_string(fields.size()) +
                              (fields.size() == 1 ? " column, line " : " columns, line ") +
                              std::to_string(lines[1].number) + " has " +
                              std::to_string(next_fields) + ": " + quote_input(lines[0].text));
    }
    first.kind = "names";
    first.column_names = fields;
    return first;
  }
  if (counts || (!has_text && next_fields != fields.size())) {
    first.kind = "counts";
    SY_ASSIGN_OR_RETURN(first.counts, parse_counts(fields, lines[0], where));
  }
  return first;
}

Result<TableLayout> resolve_training_columns(const FirstLine& first, int64_t column_count,
                                             const TableOptions& options, const std::string& where,
                                             std::vector<std::string>& notes) {
  TableLayout layout;
  layout.header = first.kind;
  layout.column_count = column_count;
  layout.column_names = first.column_names;
  const auto& names = layout.column_names;
  for (const std::string& spec : options.targets) {
    SY_ASSIGN_OR_RETURN(const int64_t column,
                        find_column(spec, "data.targets", names, column_count, where));
    if (is_one_of(column, layout.value_columns)) {
      return invalid_argument("data.targets: column '" + spec + "' is named twice");
    }
    layout.value_columns.push_back(column);
  }
  if (!layout.value_columns.empty()) {
    layout.target_column = layout.value_columns.front();
  } else if (options.target.empty()) {
    layout.target_column = column_count - 1;
    if (!names.empty()) {
      notes.push_back("data.target not set: the target is the last column, '" + names.back() + "'");
    }
  } else {
    SY_ASSIGN_OR_RETURN(layout.target_column,
                        find_column(options.target, "data.target", names, column_count, where));
  }
  if (!options.id.empty()) {
    SY_ASSIGN_OR_RETURN(layout.id_column,
                        find_column(options.id, "data.id", names, column_count, where));
    if (is_target(layout, layout.id_column)) {
      return invalid_argument("data.id: column '" + options.id + "' is the target (data.target)");
    }
  }
  for (const std::string& spec : options.drop) {
    SY_ASSIGN_OR_RETURN(const int64_t column,
                        find_column(spec, "data.drop", names, column_count, where));
    if (is_target(layout, column)) {
      return invalid_argument("data.drop: column '" + spec + "' is the target (data.target)");
    }
    layout.dropped_columns.push_back(column);
  }
  for (int64_t c = 0; c < column_count; ++c) {
    const bool dropped = std::find(layout.dropped_columns.begin(), layout.dropped_columns.end(),
                                   c) != layout.dropped_columns.end();
    if (!is_target(layout, c) && c != layout.id_column && !dropped) {
      layout.feature_columns.push_back(c);
    }
  }
  if (layout.feature_columns.empty()) {
    return invalid_argument(where + ": no feature column is left (" + std::to_string(column_count) +
                            " columns, minus the target, the id and data.drop)");
  }
  return layout;
}

Result<TableLayout> resolve_prediction_columns(const FirstLine& first, int64_t column_count,
                                               const TableLayout& trained, const std::string& where,
                                               std::vector<std::string>& notes) {
  TableLayout layout = trained;
  layout.header = first.kind;
  layout.column_count = column_count;
  layout.column_names = first.column_names;
  layout.dropped_columns.clear();
  if (!trained.column_names.empty() && !first.column_names.empty()) {
    // Both name their columns: by name, in any order, extra columns ignored.
    layout.feature_columns.clear();
    for (const int64_t column : trained.feature_columns) {
      const std::string& name = trained.column_names[static_cast<size_t>(column)];
      const int64_t found = find_name(first.column_names, name);
      if (found < 0) {
        return invalid_argument(where + ": column " + quote_name(name) +
                                ", a feature of the model, is missing (" +
                                list_columns(first.column_names, column_count) + ")");
      }
      layout.feature_columns.push_back(found);
    }
    const auto named = [&](int64_t column) {
      return column < 0
                 ? int64_t{-1}
                 : find_name(first.column_names, trained.column_names[static_cast<size_t>(column)]);
    };
    layout.target_column = named(trained.target_column);
    layout.id_column = named(trained.id_column);
    layout.value_columns.clear();
    for (const int64_t column : trained.value_columns) {
      const int64_t found = named(column);
      // A file without every target column is read unlabeled: predictions only.
      if (found < 0) layout.target_column = -1;
      layout.value_columns.push_back(found);
    }
    if (layout.target_column < 0) layout.value_columns.clear();
    if (trained.id_column >= 0 && layout.id_column < 0) {
      notes.push_back(where + " has no id column " +
                      quote_name(trained.column_names[static_cast<size_t>(trained.id_column)]) +
                      ": predictions name rows by their line");
    }
    note_ignored_columns(first.column_names, layout, trained, where, notes);
    return layout;
  }
  // By position: the same columns as in training, or all but the target.
  if (!trained.column_names.empty()) {
    notes.push_back(where + " has no header of names: its columns are taken by position, as " +
                    "the training file's (" + list_columns(trained.column_names, 0) + ")");
  }
  if (column_count == trained.column_count) return layout;
  if (trained.value_columns.size() > 1) {
    return invalid_argument(where + ": " + std::to_string(column_count) +
                            " columns without a header of names, but the model's data had " +
                            std::to_string(trained.column_count) +
                            "; several targets are found by name only");
  }
  layout.value_columns.clear();
  if (column_count != trained.column_count - 1) {
    return invalid_argument(
        where + ": " + std::to_string(column_count) + " columns, but the model's data had " +
        std::to_string(trained.column_count) + " (or " + std::to_string(trained.column_count - 1) +
        " without the target, " + trained.column_label(trained.target_column) + ")");
  }
  const auto shift = [&](int64_t column) {
    return column > trained.target_column ? column - 1 : column;
  };
  for (int64_t& column : layout.feature_columns) column = shift(column);
  if (layout.id_column >= 0) layout.id_column = shift(layout.id_column);
  layout.target_column = -1;
  return layout;
}

}  // namespace switchyard::detail

namespace switchyard {

std::string TableLayout::column_name(int64_t column) const {
  if (column >= 0 && column < static_cast<int64_t>(column_names.size())) {
    return column_names[static_cast<size_t>(column)];
  }
  return "column " + std::to_string(column + 1);
}

std::string TableLayout::column_label(int64_t column) const {
  if (column >= 0 && column < static_cast<int64_t>(column_names.size())) {
    return detail::quote_name(column_names[static_cast<size_t>(column)]);
  }
  return "column " + std::to_string(column + 1);
}

std::vector<std::string> TableLayout::feature_names() const {
  std::vector<std::string> names;
  for (const int64_t column : feature_columns) {
    names.push_back(column < static_cast<int64_t>(column_names.size())
                        ? column_names[static_cast<size_t>(column)]
                        : std::string());
  }
  return names;
}

}  // namespace switchyard
