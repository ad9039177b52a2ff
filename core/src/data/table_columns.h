// Deciding what the first line of a table is and which column is what (target, id, dropped,
// features), for training (from TableOptions) and for prediction (from the trained TableLayout).
#pragma once

#include <string>
#include <vector>

#include "data/csv_text.h"
#include "switchyard/data.h"

namespace switchyard::detail {

// Our own first line: "count,features,classnames...".
struct CountsHeader {
  int64_t sample_count = 0;
  int64_t feature_count = 0;
  std::vector<std::string> class_names;
};

// The first line read as what `options.header` says, or as detected: our counts line when its
// first two fields are integers and the rest are names (or it is shorter than the next line);
// column names when a field is not a number; else data. A missing value (one of `na_values`) in
// the first line counts as a number there: a hole in a file's first row of data does not make it a
// header.
struct FirstLine {
  std::string kind = "none";              // TableLayout::header
  std::vector<std::string> column_names;  // kind "names"
  CountsHeader counts;                    // kind "counts"
};
Result<FirstLine> read_first_line(const std::vector<CsvLine>& lines, char delimiter,
                                  HeaderMode mode, const std::vector<std::string>& na_values,
                                  const std::string& where);

// The columns for training: target (default: the last), id, drop, and every other column a
// feature. Unknown names are errors naming the key, the file and the columns there are. `notes`
// receives the target's line when it was not given and the file names its columns.
Result<TableLayout> resolve_training_columns(const FirstLine& first, int64_t column_count,
                                             const TableOptions& options, const std::string& where,
                                             std::vector<std::string>& notes);

// The columns of a prediction input, from the layout the model was trained on. The target (and
// the id) may be absent; target_column is then -1.
Result<TableLayout> resolve_prediction_columns(const FirstLine& first, int64_t column_count,
                                               const TableLayout& trained, const std::string& where,
                                               std::vector<std::string>& notes);

}  // namespace switchyard::detail
