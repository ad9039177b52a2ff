// The data section of the configuration schema: tables, images, series, splits, scaling and
// missing values, owned here, by the layer that reads them, and registered with the runtime's
// schema (ConfigSection, runtime/config_schema.h).
#include "runtime/config_schema_parts.h"

namespace switchyard::config_schema {
namespace {

// data: which file and how its columns are read.
std::vector<SchemaField> data_table_fields() {
  return {
      {"dataset",
       string_value("digits, iris, breast_cancer or a path to a CSV file"),
       kOptional,
       {"The data to train on: a built-in set by name or a CSV/TSV file (training needs one).",
        "none", "iris"}},
      {"format",
       one_of({"labeled"}),
       kOptional,
       {"How the rows are laid out: features and one target column.", "labeled", "labeled"}},
      {"header",
       boolean(),
       kOptional,
       {"Whether the file's first row names the columns.", "detected", "true"}},
      {"delimiter",
       string_value("comma, tab, semicolon or one character such as '|'"),
       kOptional,
       {"The character between columns.", "detected", "tab"}},
      {"target",
       string_value("a column name, or a column number (1 = the first, -1 = the last)"),
       kOptional,
       {"The column that holds the label.", "the last column", "species"}},
      {"id",
       string_value("a column name or number"),
       kOptional,
       {"A column that names each row; kept out of the features and copied into predictions.",
        "none", "passenger_id"}},
      {"drop",
       sequence_of(string_value("a column name or number"),
                   "a sequence of column names or numbers, such as [id, notes]"),
       kOptional,
       {"Columns left out of the features.", "[]", "[notes, 3]"}},
      {"label_order",
       one_of({"sorted", "first_seen"}),
       kOptional,
       {"How class numbers are given to the target's values.", "sorted", "first_seen"}},
  };
}

// data: how rows are split, scaled and shaped.
std::vector<SchemaField> data_split_fields() {
  return {
      {"test_fraction",
       number_between(0.0, 1.0),
       kOptional,
       {"The share of rows held out for the test split.", "0.2", "0.25"}},
      {"validation_fraction",
       number_between(0.0, 1.0),
       kOptional,
       {"The share of the remaining rows held out for validation (early stopping, best "
        "checkpoint).",
        "0.1 with train.epochs: auto, else none", "0.2"}},
      {"scale",
       one_of({"none", "standard", "minmax", "divide"}),
       kOptional,
       {"How features are scaled, fitted on the training split.",
        "standard for a table; none for images (data.image_shape, digits) and series", "none"}},
      {"divisor",
       number_above_to(0.0, 1e9),
       kOptional,
       {"What every feature is divided by with scale: divide.", "1", "16"}},
      {"split_seed",
       int_in(0, kMaxSeed),
       kOptional,
       {"The seed of the shuffle that splits the rows.", "0", "7"}},
      {"non_finite",
       one_of({"error", "drop_rows"}),
       kOptional,
       {"What an infinity or a value beyond f32 does: stop at its row, or drop the row (NaN "
        "is a missing value while data.na_values lists it).",
        "error", "drop_rows"}},
      {"na_values",
       sequence_of(text_value("a string, '' for an empty cell"),
                   "a sequence of strings, such as ['', NA, '-']"),
       kOptional,
       {"The cell texts that mark a missing value (compared ignoring case).",
        "['', NA, N/A, NaN, null, '?']", "['', NA, '-']"}},
      {"missing",
       one_of({"error", "drop_rows", "mean", "median", "most_frequent"}),
       kOptional,
       {"What a missing value does: stop listing every one (file:line:column), drop its row, or "
        "fill the feature with its mean, median or most frequent value on the training split "
        "(kept in the checkpoint for predict). Targets are never filled (data/README.md, "
        "Missing values).",
        "error (drop_rows with non_finite: drop_rows)", "median"}},
      {"image_shape",
       sequence_of(int_in(1, kMaxImageExtent),
                   "a sequence of 1 to 3 integers >= 1 and <= 65536, such as "
                   "[1, 8, 8]",
                   1, 3),
       kOptional,
       {"The shape each row's features take (channels, height, width) for conv2d layers.", "none",
        "[1, 8, 8]"}},
      {"sample_shape",
       sequence_of(int_in(1, kMaxImageExtent),
                   "a sequence of 1 to 3 integers >= 1 and <= 65536, such as [8, 8]", 1, 3),
       kOptional,
       {"The shape each row's features take: [time, features] for sequence layers (lstm, gru, "
        "transformer_encoder), [channels, height, width] for conv2d (as image_shape, which it "
        "replaces; give one of the two).",
        "none", "[8, 8]"}},
  };
}

// data.series: a column of a table in time order, cut into windows.

SchemaNode series_schema() {
  return map_of({
      {"column",
       string_value("a column name"),
       kRequired,
       {"The column that holds the series, in time order (an empty field is a gap).", "required",
        "co2"}},
      {"window",
       int_in(1, kMaxWidth),
       kRequired,
       {"Consecutive values per sample: the model's inputs.", "required", "52"}},
      {"horizon",
       int_in(1, kMaxWidth),
       kOptional,
       {"With target: next, how many values after the window are predicted (one output each).", "1",
        "4"}},
      {"target",
       one_of({"next", "input"}),
       kOptional,
       {"What a sample predicts: the values after its window (a forecast), or the window itself "
        "(an autoencoder).",
        "next", "input"}},
      {"gaps",
       one_of({"interpolate", "drop"}),
       kOptional,
       {"What empty values do: filled linearly within their part of the split, or every window "
        "touching one is left out.",
        "interpolate", "drop"}},
      {"offset",
       one_of({"none", "last"}),
       kOptional,
       {"last: each window's last value is subtracted from its inputs and targets (the model "
        "learns changes) and added back to its predictions.",
        "none", "last"}},
  });
}

// data: regression, whose targets are numbers rather than classes.
std::vector<SchemaField> data_regression_fields() {
  return {
      {"targets",
       sequence_of(string_value("a column name or number"),
                   "a sequence of column names or numbers, such as [progression]", 1),
       kOptional,
       {"Columns of numbers to predict (regression, one model output each), instead of "
        "target's classes.",
        "none", "[progression]"}},
      {"series",
       series_schema(),
       kOptional,
       {"Samples cut from one column in time order (regression); the split is then "
        "chronological, and no window crosses from one part into the next.",
        "none", "{column: co2, window: 52}"}},
      {"target_scale",
       one_of({"none", "standard", "minmax"}),
       kOptional,
       {"How regression targets are scaled while training, fitted on the training split; "
        "predictions and metrics are in the targets' units.",
        "standard", "none"}},
  };
}

SchemaNode data_schema() {
  std::vector<SchemaField> fields = data_table_fields();
  std::vector<SchemaField> split = data_split_fields();
  std::vector<SchemaField> regression = data_regression_fields();
  fields.insert(fields.end(), split.begin(), split.end());
  fields.insert(fields.end(), regression.begin(), regression.end());
  return map_of(std::move(fields));
}

}  // namespace

const ConfigSection kDataSection(10, [] {
  return SchemaField{
      "data", data_schema(), kOptional, {"The data set and how to read and split it.", "", ""}};
});
}  // namespace switchyard::config_schema
