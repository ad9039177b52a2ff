// Data sets: labeled CSV files loaded into host memory, split, scaled and batched.
//
// Everything here is plain host code with no device in sight: the trainer copies each batch to the
// selected device. Randomness (the split, the per-epoch order) comes from a counter-based generator
// seeded by the YAML file, so the same seed gives the same split and order on every machine.
//
// Threads: the types here are plain values (the standard library's rule: any number of threads
// may read one, a write needs it to itself), and the functions keep no state between calls, so
// threads may load and prepare different data sets at once.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "switchyard/config.h"
#include "switchyard/metrics.h"
#include "switchyard/status.h"

namespace switchyard {

// What loading does with a feature value that is NaN or infinite (or too large for f32): the YAML
// key data.non_finite. kError (the default) fails naming the file, line and column; kDropRows drops
// each such row and counts it in Dataset::dropped_rows.
enum class NonFinitePolicy { kError, kDropRows };
Result<NonFinitePolicy> parse_non_finite_policy(const std::string& text);  // "error", "drop_rows"
const char* non_finite_policy_name(NonFinitePolicy policy);

// What loading does with a missing value: a cell whose text is one of data.na_values (compared
// ignoring ASCII case). The YAML key data.missing. kError (the default) fails listing every such
// cell with its file, line, column and feature; kDropRows drops each row that has one (counted in
// Dataset::dropped_rows); kMean, kMedian and kMostFrequent keep the row, with NaN in the cell, and
// FeatureImputer fills it with a statistic of the feature fitted on the training split. Targets are
// never filled: a missing target is an error, or its row is dropped with kDropRows.
enum class MissingPolicy { kError, kDropRows, kMean, kMedian, kMostFrequent };
// "error", "drop_rows", "mean", "median", "most_frequent"
Result<MissingPolicy> parse_missing_policy(const std::string& text);
const char* missing_policy_name(MissingPolicy policy);
inline bool is_imputing(MissingPolicy policy) {
  return policy == MissingPolicy::kMean || policy == MissingPolicy::kMedian ||
         policy == MissingPolicy::kMostFrequent;
}
// data.na_values when absent: "", "NA", "N/A", "NaN", "null", "?".
const std::vector<std::string>& default_na_values();

// How string labels become class indices: in sorted (byte) order, or in the order they first
// appear in the file. The YAML key data.label_order; labels that are all numbers are class indices
// already and keep their values.
enum class LabelOrder { kSorted, kFirstSeen };
Result<LabelOrder> parse_label_order(const std::string& text);  // "sorted", "first_seen"
const char* label_order_name(LabelOrder order);

// Whether a table's first line names its columns: data.header (absent: detected).
enum class HeaderMode { kDetect, kNames, kNone };

// Where the columns of a table file were, as loading resolved them: what a checkpoint keeps so that
// new rows are read exactly as the training rows were. Column indices are 0-based.
struct TableLayout {
  char delimiter = ',';
  // "names" (a first line of column names), "counts" (our "count,features,classnames..." line)
  // or "none".
  std::string header = "none";
  int64_t column_count = 0;
  std::vector<std::string> column_names;  // empty without a header of names
  int64_t target_column = -1;
  // Regression: every target column (the first is also target_column); empty for classes.
  std::vector<int64_t> value_columns;
  int64_t id_column = -1;                // -1: no id column
  std::vector<int64_t> feature_columns;  // in the order of the model's inputs
  std::vector<int64_t> dropped_columns;

  std::string column_name(int64_t column) const;   // "species" or "column 5"
  std::string column_label(int64_t column) const;  // "'species'" or "column 5"
  // The features' names ("" for each without a header of names).
  std::vector<std::string> feature_names() const;
};

// The words every refusal of a target of numbers read as classes carries (the table reader's
// advice for a regression); DataSettings::detect_regression keys on them to read such a target as
// numbers instead.
inline constexpr std::string_view kTargetOfNumbersAdvice = "replace data.target by data.targets";

// How a table file is read: for training from the data section (DataSettings::table_options), for
// prediction from the checkpoint (`trained` and `model_classes` set).
struct TableOptions {
  NonFinitePolicy non_finite = NonFinitePolicy::kError;
  // data.na_values and data.missing. With an imputing policy a missing feature is loaded as NaN
  // (FeatureImputer fills it later).
  std::vector<std::string> na_values = default_na_values();
  MissingPolicy missing = MissingPolicy::kError;
  HeaderMode header = HeaderMode::kDetect;
  char delimiter = '\0';  // '\0': detected among ',', tab and ';'
  std::string target;     // a column name or number (1 = first, -1 = last); "": the last
  // Regression (data.targets): columns of numbers to predict, one model output each, instead of
  // the class column `target`. Empty: classification.
  std::vector<std::string> targets;
  std::string id;                 // a column kept per row for the output, never a feature
  std::vector<std::string> drop;  // columns that are neither features nor the target
  LabelOrder label_order = LabelOrder::kSorted;
  // Prediction: the columns the model was trained on. Features are found by name when both files
  // have a header of names, by position otherwise; a file without the target column loads
  // unlabeled (Dataset::labeled false). Labels map to `model_classes` by name, or by index. The
  // delimiter is detected, the trained one taken when no candidate splits the lines evenly.
  const TableLayout* trained = nullptr;
  std::vector<std::string> model_classes;
};

// A labeled data set in host memory. Ownership: a plain value; copying copies the samples.
struct Dataset {
  std::string name;  // "digits", or the file's path
  int64_t sample_count = 0;
  std::vector<int64_t> sample_shape;     // [features], or the image shape [C, H, W]
  std::vector<float> features;           // row-major, sample_count x feature_count()
  std::vector<int32_t> labels;           // 0 .. class_count()-1, one per sample (0 if unlabeled)
  std::vector<std::string> class_names;  // from the file's header, else "0", "1", ...
  std::vector<int64_t> source_lines;     // each sample's line in its file (1-based); may be empty
  int64_t dropped_rows = 0;              // rows left out by the kDropRows policies
  bool labeled = true;                   // false: the file has no target column (prediction only)
  std::vector<std::string> ids;          // the id column's value per sample; empty without one
  TableLayout table;                     // where the columns were in the file
  // What loading decided that the user should hear (a guessed delimiter, the target column it
  // took, the class order): one line each, printed by `switchyard run` and `predict`.
  std::vector<std::string> notes;

  // Regression (data.targets, data.series): the numbers to predict, sample_count x
  // target_count(), row-major, and a name per output; both empty for classification, whose
  // samples have `labels` instead. In a split, targets are scaled like features (PreparedData).
  std::vector<float> targets;
  std::vector<std::string> target_names;
  // data.series.offset: last: per sample, the level (its last input value) that was subtracted
  // from its inputs and targets; a prediction adds it back. Empty when nothing was subtracted.
  std::vector<float> target_offsets;

  int64_t feature_count() const;
  int64_t class_count() const { return static_cast<int64_t>(class_names.size()); }
  bool is_regression() const { return !target_names.empty(); }
  int64_t target_count() const { return static_cast<int64_t>(target_names.size()); }
  // The model's output width: one per target for regression, one per class otherwise.
  int64_t output_count() const { return is_regression() ? target_count() : class_count(); }
  // The samples at `indices`, in that order (same names, shape and classes).
  Dataset subset(const std::vector<int64_t>& indices) const;
  // Changes sample_shape to `shape` (with the same element count), for conv nets.
  Status reshape_samples(const std::vector<int64_t>& shape);
};

// Reads a CSV or TSV file (data/README.md): a header of column names, our own dialect (rows of
// features then the class, with an optional first line "count,features,classnames..." whose
// counts are checked), or no header. ".gz" files are decompressed. Errors name the file, the line
// and the column, and quote at most 200 characters of the file.
Result<Dataset> load_table_csv(const std::filesystem::path& path, const TableOptions& options);

// load_table_csv with default options: the target is the last column.
Result<Dataset> load_labeled_csv(const std::filesystem::path& path,
                                 NonFinitePolicy non_finite = NonFinitePolicy::kError);

// The shipped data sets' names: digits, iris, breast_cancer.
const std::vector<std::string>& builtin_dataset_names();

// Where the shipped data sets live: $SWITCHYARD_DATA_DIR, then data/ near the running executable,
// then data/ in the working directory or one of its parents. NOT_FOUND lists every folder tried.
Result<std::filesystem::path> builtin_dataset_path(const std::string& name);

// A built-in name, or a CSV path (relative paths resolve against `base_dir`, the YAML's folder).
Result<Dataset> load_dataset(const std::string& name_or_path, const std::filesystem::path& base_dir,
                             const TableOptions& options);
Result<Dataset> load_dataset(const std::string& name_or_path, const std::filesystem::path& base_dir,
                             NonFinitePolicy non_finite = NonFinitePolicy::kError);

enum class ScaleMode { kNone, kStandard, kMinMax, kDivide };
Result<ScaleMode> parse_scale_mode(const std::string& text);
const char* scale_mode_name(ScaleMode mode);

// A per-feature affine map x' = (x - offset) * factor. It is fitted on the training split only, so
// no statistic of the test split leaks into training, and stored in checkpoints so that inference
// scales new data exactly as training did.
struct FeatureScaler {
  ScaleMode mode = ScaleMode::kNone;
  std::vector<float> offset;  // one per feature; empty for kNone
  std::vector<float> factor;

  // `divisor` is used by kDivide only and must be non-zero.
  static Result<FeatureScaler> fit(ScaleMode mode, double divisor, const Dataset& train);
  // The same fitted on the regression targets of `train` (one column per target).
  static Result<FeatureScaler> fit_targets(ScaleMode mode, const Dataset& train);
  // INVALID_ARGUMENT when the feature count differs from the fitted one.
  Status apply(Dataset& data) const;
  // Scales data.targets (a scaler from fit_targets).
  Status apply_to_targets(Dataset& data) const;
  // The inverse map, x = x' / factor + offset, on rows of factor.size() values (predictions).
  void unscale(std::vector<float>& rows) const;
};

// The values that fill missing features (NaN after loading with an imputing MissingPolicy): per
// feature the mean, the median or the most frequent value of the training split's known values.
// Fitted on the training split only and kept in checkpoints ("data/imputer/..."), so that
// prediction fills new rows' holes with the very values training used.
struct FeatureImputer {
  MissingPolicy strategy = MissingPolicy::kError;  // kError and kDropRows: nothing to fill
  std::vector<float> values;                       // one per feature; empty when not imputing

  bool active() const { return !values.empty(); }
  // INVALID_ARGUMENT naming the feature when one has no known value in `train`.
  static Result<FeatureImputer> fit(MissingPolicy strategy, const Dataset& train);
  // Replaces every NaN feature of `data`; the count replaced. INVALID_ARGUMENT when the feature
  // count differs from the fitted one.
  Result<int64_t> apply(Dataset& data) const;
  // The same on `rows` rows of values.size() values.
  int64_t fill(float* rows, int64_t row_count) const;
};

struct DataSplit {
  Dataset train;
  Dataset test;
  Dataset validation;  // carved from train by data.validation_fraction; empty (0 samples) otherwise

  bool has_validation() const { return validation.sample_count > 0; }
};

// Puts round(test_fraction * n) samples into the test split, the same fraction from every class
// (largest-remainder rounding), chosen by `seed`. Both splits keep the file's order.
Result<DataSplit> stratified_split(const Dataset& data, double test_fraction, uint64_t seed);

// Moves ceil(validation_fraction * n) of split.train's n samples into split.validation, stratified
// and seeded like stratified_split (but drawn from a stream of its own, so the validation draw is
// not a copy of the test draw). The test split is not touched, so it never overlaps: a run with
// and without validation evaluates on the same test samples. Both parts keep the file's order.
Status carve_validation(DataSplit& split, double validation_fraction, uint64_t seed);

// The order of `count` samples in epoch `epoch`: a permutation that depends only on (seed, epoch),
// so a resumed run sees the very batches an uninterrupted one would have seen.
std::vector<int64_t> epoch_permutation(int64_t count, uint64_t seed, int64_t epoch);

// data.series.gaps: what an empty value of the series does. kInterpolate fills it linearly between
// its neighbours (the nearest value at either end); kDrop leaves out every window that touches it.
enum class GapPolicy { kInterpolate, kDrop };
// data.series.target: kNext forecasts the `horizon` values after each window; kInput reconstructs
// the window itself (an autoencoder).
enum class SeriesTarget { kNext, kInput };

// data.series: one numeric column of a table, in time order, cut into samples of `window`
// consecutive values. The split is chronological (train, then validation, then test, each a
// contiguous stretch of the series) and no window crosses from one part into the next.
struct SeriesSettings {
  bool enabled = false;
  std::string column;
  int64_t window = 0;
  int64_t horizon = 1;  // kNext only
  GapPolicy gaps = GapPolicy::kInterpolate;
  SeriesTarget target = SeriesTarget::kNext;
  // offset: last subtracts each window's last value from its inputs and targets, so that the
  // model sees (and predicts) changes rather than levels; predictions add it back.
  bool relative_to_last = false;
  ConfigNode node;  // data.series in the YAML file, for errors
};

// What a run compares a regression model with: a simple predictor fitted on the training part
// (least squares on the features, or the window's last value), scored on the test split.
struct BaselineScore {
  std::string name;         // "linear_least_squares", "last_value"
  std::string description;  // one line for the report
  RegressionMetrics test;
};

struct DataSettings;
struct DataSplit;
// The baselines of a regression split, fitted on its unscaled training part and scored on its
// test part in the targets' units: least squares on the features with an intercept (tabular
// targets and forecasts), and for a forecast (data.series, target: next) the window's last value
// repeated over the horizon. None for an autoencoder (a linear map would copy its input).
std::vector<BaselineScore> regression_baselines(const DataSettings& settings,
                                                const DataSplit& split);

// The `data:` section of a configuration.
struct DataSettings {
  std::string dataset;  // built-in name or CSV path; required to train (no silent default)
  std::string format = "labeled";
  double test_fraction = 0.2;
  double validation_fraction = 0;  // of what test_fraction leaves; 0: no validation split
  // Set by the trainer's train.epochs: auto, not by the file: a training split too small to hold
  // out validation rows then trains without one (and early stopping watches the training loss).
  bool validation_is_default = false;
  // Without data.scale: standard for a table, none for images (data.image_shape, the built-in
  // digits) and series, whose own rules apply. scale_given says whether the file chose.
  ScaleMode scale = ScaleMode::kNone;
  bool scale_given = false;
  // Set by the trainer when the file gives no loss and no data.targets: a table whose target holds
  // numbers rather than classes (values that are not integers, or many distinct ones with few rows
  // each) is then read as a regression of that column (PreparedData::detected_regression).
  bool detect_regression = false;
  double divisor = 1.0;
  uint64_t split_seed = 0;
  std::vector<int64_t> image_shape;  // empty: flat features
  NonFinitePolicy non_finite = NonFinitePolicy::kError;
  // data.na_values and data.missing (default: error, or drop_rows when non_finite is drop_rows).
  std::vector<std::string> na_values = default_na_values();
  MissingPolicy missing = MissingPolicy::kError;
  ConfigNode image_shape_node;  // where image_shape is in the YAML file, for errors
  // The table's columns (TableOptions): data.header, data.delimiter, data.target, data.id,
  // data.drop, data.label_order.
  HeaderMode header = HeaderMode::kDetect;
  char delimiter = '\0';
  std::string target;
  std::string id;
  std::vector<std::string> drop;
  LabelOrder label_order = LabelOrder::kSorted;
  // Regression: data.targets (columns of numbers) or data.series, and how the targets are scaled
  // (data.target_scale, fitted on the training part; predictions and metrics are unscaled).
  std::vector<std::string> targets;
  SeriesSettings series;
  ScaleMode target_scale = ScaleMode::kStandard;

  bool is_regression() const { return !targets.empty() || series.enabled; }
  // Rows of separate features (not images, not a series): what data.scale's default is for.
  bool is_table() const;

  // Reads the section (an absent node gives the defaults); errors carry the YAML location.
  static Result<DataSettings> from_config(const ConfigNode& data_section);
  TableOptions table_options() const;

 private:
  Status read_table_keys(const ConfigNode& data_section);
  Status read_regression_keys(const ConfigNode& data_section);
};

// The train, validation and test parts of data.series, cut in time order from the column of
// `settings.dataset` (DataSettings::series), unscaled. INVALID_ARGUMENT naming the YAML key for a
// missing column or a window longer than a part, and the file and line for a malformed value.
Result<DataSplit> load_series_split(const DataSettings& settings,
                                    const std::filesystem::path& base_dir);

// A data set ready for training: loaded, split (test, then validation from the rest), scaled
// (fitted on the training part only, never on validation or test samples) and reshaped.
struct PreparedData {
  DataSplit split;
  FeatureScaler scaler;
  FeatureScaler target_scaler;  // regression: fitted on the training targets (data.target_scale)
  FeatureImputer imputer;       // data.missing: mean, median, most_frequent (else inactive)
  int64_t imputed_cells = 0;    // missing features filled, over every part of the split
  std::vector<BaselineScore> baselines;  // regression: computed before any scaling
  int64_t dropped_rows = 0;              // left out by data.non_finite or data.missing: drop_rows
  std::vector<std::string> notes;        // Dataset::notes of the loaded file, and the split's
  // Signs of a run not worth having (features 100x apart in scale with data.scale: none), one
  // sentence each; the trainer passes them on as TrainSummary::warnings.
  std::vector<std::string> warnings;
  // With DataSettings::detect_regression: the target column it read as numbers to predict ("" when
  // the table holds classes). The trainer then trains data.targets: [it] with loss: mse.
  std::string detected_regression;
};
Result<PreparedData> prepare_data(const DataSettings& settings,
                                  const std::filesystem::path& base_dir);

}  // namespace switchyard

#pragma GCC visibility pop
