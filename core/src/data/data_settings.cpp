#include <algorithm>
#include <cmath>
#include <iomanip>
#include <optional>
#include <regex>
#include <sstream>

#include "switchyard/config.h"
#include "switchyard/data.h"

namespace switchyard {

Result<NonFinitePolicy> parse_non_finite_policy(const std::string& text) {
  if (text == "error") return NonFinitePolicy::kError;
  if (text == "drop_rows") return NonFinitePolicy::kDropRows;
  return invalid_argument("unknown non_finite policy '" + text + "' (expected error or drop_rows)");
}

const char* non_finite_policy_name(NonFinitePolicy policy) {
  return policy == NonFinitePolicy::kDropRows ? "drop_rows" : "error";
}

Result<MissingPolicy> parse_missing_policy(const std::string& text) {
  if (text == "error") return MissingPolicy::kError;
  if (text == "drop_rows") return MissingPolicy::kDropRows;
  if (text == "mean") return MissingPolicy::kMean;
  if (text == "median") return MissingPolicy::kMedian;
  if (text == "most_frequent") return MissingPolicy::kMostFrequent;
  return invalid_argument("unknown missing policy '" + text +
                          "' (expected error, drop_rows, mean, median or most_frequent)");
}

const char* missing_policy_name(MissingPolicy policy) {
  switch (policy) {
    case MissingPolicy::kDropRows:
      return "drop_rows";
    case MissingPolicy::kMean:
      return "mean";
    case MissingPolicy::kMedian:
      return "median";
    case MissingPolicy::kMostFrequent:
      return "most_frequent";
    case MissingPolicy::kError:
      break;
  }
  return "error";
}

const std::vector<std::string>& default_na_values() {
  static const std::vector<std::string> values = {"", "NA", "N/A", "NaN", "null", "?"};
  return values;
}

Result<DataSettings> DataSettings::from_config(const ConfigNode& data_section) {
  DataSettings settings;
  if (!data_section.valid()) return settings;
  SY_ASSIGN_OR_RETURN(settings.dataset, data_section.string_or("dataset", ""));
  SY_ASSIGN_OR_RETURN(settings.format, data_section.string_or("format", settings.format));
  if (settings.format != "labeled") {
    return data_section["format"].error("unknown data format '" + settings.format +
                                        "' (expected labeled)");
  }
  SY_ASSIGN_OR_RETURN(settings.test_fraction,
                      data_section.double_or("test_fraction", settings.test_fraction));
  if (!(settings.test_fraction > 0.0 && settings.test_fraction < 1.0)) {
    return data_section["test_fraction"].error("must be between 0 and 1 (exclusive)");
  }
  if (data_section["validation_fraction"].valid()) {
    SY_ASSIGN_OR_RETURN(settings.validation_fraction,
                        data_section["validation_fraction"].as_double());
    if (!(settings.validation_fraction > 0.0 && settings.validation_fraction < 1.0)) {
      return data_section["validation_fraction"].error("must be between 0 and 1 (exclusive)");
    }
  }
  settings.scale_given = data_section["scale"].valid();
  SY_ASSIGN_OR_RETURN(const std::string scale, data_section.string_or("scale", "none"));
  auto mode = parse_scale_mode(scale);
  if (!mode.ok()) return data_section["scale"].error(mode.status().message());
  settings.scale = *mode;
  SY_ASSIGN_OR_RETURN(settings.divisor, data_section.double_or("divisor", settings.divisor));
  if (settings.divisor == 0.0) return data_section["divisor"].error("must not be zero");
  SY_ASSIGN_OR_RETURN(const int64_t split_seed, data_section.int_or("split_seed", 0));
  if (split_seed < 0) return data_section["split_seed"].error("must be >= 0");
  settings.split_seed = static_cast<uint64_t>(split_seed);
  SY_ASSIGN_OR_RETURN(const std::string non_finite, data_section.string_or("non_finite", "error"));
  auto policy = parse_non_finite_policy(non_finite);
  if (!policy.ok()) return data_section["non_finite"].error(policy.status().message());
  settings.non_finite = *policy;
  // Without data.missing, a file that drops rows with infinities drops rows with holes too.
  const std::string missing_default =
      settings.non_finite == NonFinitePolicy::kDropRows ? "drop_rows" : "error";
  SY_ASSIGN_OR_RETURN(const std::string missing,
                      data_section.string_or("missing", missing_default));
  auto missing_policy = parse_missing_policy(missing);
  if (!missing_policy.ok()) return data_section["missing"].error(missing_policy.status().message());
  settings.missing = *missing_policy;
  if (const ConfigNode node = data_section["na_values"]; node.valid()) {
    settings.na_values.clear();
    for (const ConfigNode& item : node.items()) {
      SY_ASSIGN_OR_RETURN(std::string value, item.as_string());
      settings.na_values.push_back(std::move(value));
    }
  }
  SY_RETURN_IF_ERROR(settings.read_table_keys(data_section));
  SY_RETURN_IF_ERROR(settings.read_regression_keys(data_section));
  if (settings.series.enabled && data_section["missing"].valid()) {
    return data_section["missing"].error(
        "a data.series fills or skips its empty values by data.series.gaps, not data.missing");
  }
  const ConfigNode sample_shape = data_section["sample_shape"];
  if (sample_shape.valid() && data_section["image_shape"].valid()) {
    return sample_shape.error("give data.sample_shape or data.image_shape, not both");
  }
  const ConfigNode shape = sample_shape.valid() ? sample_shape : data_section["image_shape"];
  if (shape.valid()) {
    settings.image_shape_node = shape;
    for (const ConfigNode& item : shape.items()) {
      SY_ASSIGN_OR_RETURN(const int64_t extent, item.as_int());
      if (extent < 1) return item.error("sample dimensions must be >= 1");
      settings.image_shape.push_back(extent);
    }
  }
  // Tables are standardised unless the file says otherwise: unscaled columns (a proline of 1000
  // beside a hue of 1) leave a network at its defaults with a useless model.
  if (!settings.scale_given && settings.is_table()) settings.scale = ScaleMode::kStandard;
  return settings;
}

bool DataSettings::is_table() const {
  return image_shape.empty() && !series.enabled && dataset != "digits";
}

// "," or "comma", a tab or "tab", ";" or "semicolon", or any other single character but a quote.
static Result<char> parse_delimiter(const std::string& text) {
  if (text == "comma") return ',';
  if (text == "tab" || text == "\\t") return '\t';
  if (text == "semicolon") return ';';
  if (text.size() == 1 && text != "\"" && text != "\n" && text != "\r") return text[0];
  return invalid_argument("unknown delimiter '" + text +
                          "' (expected comma, tab, semicolon or one character such as '|')");
}

Status DataSettings::read_table_keys(const ConfigNode& section) {
  if (const ConfigNode node = section["header"]; node.valid()) {
    SY_ASSIGN_OR_RETURN(const bool names, node.as_bool());
    header = names ? HeaderMode::kNames : HeaderMode::kNone;
  }
  if (const ConfigNode node = section["delimiter"]; node.valid()) {
    SY_ASSIGN_OR_RETURN(const std::string text, node.as_string());
    auto parsed = parse_delimiter(text);
    if (!parsed.ok()) return node.error(parsed.status().message());
    delimiter = *parsed;
  }
  SY_ASSIGN_OR_RETURN(target, section.string_or("target", ""));
  SY_ASSIGN_OR_RETURN(id, section.string_or("id", ""));
  for (const ConfigNode& item : section["drop"].items()) {
    SY_ASSIGN_OR_RETURN(std::string column, item.as_string());
    drop.push_back(std::move(column));
  }
  SY_ASSIGN_OR_RETURN(const std::string order, section.string_or("label_order", "sorted"));
  auto parsed_order = parse_label_order(order);
  if (!parsed_order.ok()) return section["label_order"].error(parsed_order.status().message());
  label_order = *parsed_order;
  return ok_status();
}

namespace {

Status read_series(const ConfigNode& node, SeriesSettings& series) {
  series.enabled = true;
  series.node = node;
  SY_ASSIGN_OR_RETURN(series.column, node.string_or("column", ""));
  if (series.column.empty())
    return node.error("data.series needs the column to read (column: co2)");
  if (!node["window"].valid()) return node.error("data.series needs a window (window: 52)");
  SY_ASSIGN_OR_RETURN(series.window, node.int_or("window", 0));
  SY_ASSIGN_OR_RETURN(series.horizon, node.int_or("horizon", 1));
  SY_ASSIGN_OR_RETURN(const std::string gaps, node.string_or("gaps", "interpolate"));
  series.gaps = gaps == "drop" ? GapPolicy::kDrop : GapPolicy::kInterpolate;
  SY_ASSIGN_OR_RETURN(const std::string target, node.string_or("target", "next"));
  series.target = target == "input" ? SeriesTarget::kInput : SeriesTarget::kNext;
  if (series.target == SeriesTarget::kInput && node["horizon"].valid()) {
    return node["horizon"].error(
        "target: input reconstructs the window itself; a horizon "
        "belongs to target: next");
  }
  SY_ASSIGN_OR_RETURN(const std::string offset, node.string_or("offset", "none"));
  series.relative_to_last = offset == "last";
  return ok_status();
}

}  // namespace

Status DataSettings::read_regression_keys(const ConfigNode& section) {
  for (const ConfigNode& item : section["targets"].items()) {
    SY_ASSIGN_OR_RETURN(std::string column, item.as_string());
    targets.push_back(std::move(column));
  }
  const ConfigNode series_node = section["series"];
  if (series_node.valid()) SY_RETURN_IF_ERROR(read_series(series_node, series));
  if (!targets.empty() && series.enabled) {
    return section["targets"].error(
        "data.targets and data.series exclude each other: a series "
        "predicts its own column");
  }
  if (is_regression() && section["target"].valid()) {
    return section["target"].error("data.target names the class column; with " +
                                   std::string(series.enabled ? "data.series" : "data.targets") +
                                   " the values to predict are given there (regression)");
  }
  SY_ASSIGN_OR_RETURN(const std::string target_mode, section.string_or("target_scale", "standard"));
  auto mode = parse_scale_mode(target_mode);
  if (!mode.ok()) return section["target_scale"].error(mode.status().message());
  target_scale = *mode;
  return ok_status();
}

TableOptions DataSettings::table_options() const {
  TableOptions options;
  options.non_finite = non_finite;
  options.na_values = na_values;
  options.missing = missing;
  options.header = header;
  options.delimiter = delimiter;
  options.target = target;
  options.id = id;
  options.drop = drop;
  options.label_order = label_order;
  options.targets = targets;
  return options;
}

namespace {

// data.sample_shape (or image_shape), when given: the shape each sample's features take ([C, H, W]
// for conv2d, [time, features] for sequence layers; a
// series window may be shaped [window, 1] for sequence layers).
Status apply_sample_shape(const DataSettings& settings, Dataset& data) {
  if (settings.image_shape.empty() || data.sample_count == 0) return ok_status();
  const Status reshaped = data.reshape_samples(settings.image_shape);
  if (!reshaped.ok() && settings.image_shape_node.valid()) {
    return settings.image_shape_node.error(reshaped.message());
  }
  return reshaped;
}

std::string too_few_for_validation(const DataSettings& settings, const Status& why) {
  return "no validation split (train.epochs: auto holds out " +
         std::to_string(static_cast<int>(settings.validation_fraction * 100 + 0.5)) +
         "% of the training rows when data.validation_fraction is not given, but " + why.message() +
         "); early stopping watches the training loss";
}

// The table again with its target as numbers to predict, when reading it as classes failed because
// it holds numbers (the table reader's refusal then carries kTargetOfNumbersAdvice: that advice is
// what is taken here). Nothing when the refusal was about something else.
std::optional<Result<Dataset>> load_as_regression(const DataSettings& settings,
                                                  const std::filesystem::path& base_dir,
                                                  const Status& as_classes,
                                                  PreparedData& prepared) {
  if (as_classes.message().find(kTargetOfNumbersAdvice) == std::string::npos) {
    return std::nullopt;
  }
  TableOptions options = settings.table_options();
  options.targets = {settings.target.empty() ? std::string("-1") : settings.target};
  Result<Dataset> numbers = load_dataset(settings.dataset, base_dir, options);
  if (!numbers.ok() || numbers->target_names.size() != 1) return std::nullopt;
  const std::string& name = numbers->target_names.front();
  prepared.detected_regression = name;
  // How the class reading failed says why: the values, and how many distinct ones.
  std::smatch found;
  const std::string& why = as_classes.message();
  const std::string count =
      std::regex_search(why, found, std::regex("[0-9]+ distinct values in [0-9]+ rows"))
          ? " (" + found.str() + ")"
          : "";
  prepared.notes.push_back("the target '" + name + "' holds numbers" + count +
                           ", not classes: trained as a regression (data.targets: [" + name +
                           "], loss: mse); give loss: cross_entropy to insist on classes");
  return numbers;
}

// The table of data.dataset, split at random (stratified by class for classification).
Result<DataSplit> load_table_split(const DataSettings& settings,
                                   const std::filesystem::path& base_dir, PreparedData& prepared) {
  Result<Dataset> loaded = load_dataset(settings.dataset, base_dir, settings.table_options());
  if (!loaded.ok() && settings.detect_regression) {
    if (auto numbers = load_as_regression(settings, base_dir, loaded.status(), prepared)) {
      loaded = std::move(*numbers);
    }
  }
  if (!loaded.ok()) return loaded.status();
  Dataset all = std::move(*loaded);
  SY_RETURN_IF_ERROR(apply_sample_shape(settings, all));
  prepared.dropped_rows = all.dropped_rows;
  prepared.notes.insert(prepared.notes.begin(), all.notes.begin(), all.notes.end());
  SY_ASSIGN_OR_RETURN(DataSplit split,
                      stratified_split(all, settings.test_fraction, settings.split_seed));
  // train.epochs: auto's own validation split needs rows enough to judge an epoch by.
  constexpr double kFewestDefaultValidationRows = 5;
  const double held_out =
      settings.validation_fraction * static_cast<double>(split.train.sample_count);
  if (settings.validation_is_default && held_out < kFewestDefaultValidationRows) {
    prepared.notes.push_back(too_few_for_validation(
        settings, invalid_argument(std::to_string(split.train.sample_count) +
                                   " training rows would give fewer than 5")));
    return split;
  }
  if (settings.validation_fraction > 0) {
    DataSplit whole = split;
    const Status carved =
        carve_validation(split, settings.validation_fraction, settings.split_seed);
    if (!carved.ok() && settings.validation_is_default) {
      prepared.notes.push_back(too_few_for_validation(settings, carved));
      return whole;
    }
    if (!carved.ok()) return carved.with_context("data.validation_fraction");
  }
  return split;
}

// With data.scale: none on a table, features whose spreads differ by more than 100x: a network at
// the default learning rate then learns from the widest column alone.
std::optional<std::string> unscaled_warning(const DataSettings& settings, const Dataset& train) {
  const int64_t width = train.feature_count();
  if (settings.scale != ScaleMode::kNone || !settings.is_table() || train.sample_count < 2 ||
      width < 2) {
    return std::nullopt;
  }
  std::vector<double> spread(static_cast<size_t>(width), 0.0);
  for (int64_t j = 0; j < width; ++j) {
    double mean = 0, square = 0;
    for (int64_t i = 0; i < train.sample_count; ++i) {
      const double v = train.features[static_cast<size_t>(i * width + j)];
      mean += v;
      square += v * v;
    }
    mean /= static_cast<double>(train.sample_count);
    spread[static_cast<size_t>(j)] =
        std::sqrt(std::max(0.0, square / static_cast<double>(train.sample_count) - mean * mean));
  }
  int64_t widest = -1, narrowest = -1;
  for (int64_t j = 0; j < width; ++j) {
    const double s = spread[static_cast<size_t>(j)];
    if (!(s > 0) || !std::isfinite(s)) continue;
    if (widest < 0 || s > spread[static_cast<size_t>(widest)]) widest = j;
    if (narrowest < 0 || s < spread[static_cast<size_t>(narrowest)]) narrowest = j;
  }
  if (widest < 0) return std::nullopt;
  const double ratio = spread[static_cast<size_t>(widest)] / spread[static_cast<size_t>(narrowest)];
  if (ratio <= 100) return std::nullopt;
  const std::vector<std::string> names = train.table.feature_names();
  const auto name = [&](int64_t j) {
    const size_t at = static_cast<size_t>(j);
    return at < names.size() && !names[at].empty() ? "'" + names[at] + "'"
                                                   : "feature " + std::to_string(j + 1);
  };
  std::ostringstream text;
  text << std::setprecision(3) << "features differ in scale by " << ratio
       << "x (standard deviation " << spread[static_cast<size_t>(widest)] << " for " << name(widest)
       << ", " << spread[static_cast<size_t>(narrowest)] << " for " << name(narrowest)
       << ") and data.scale is none: set data.scale: standard (or leave data.scale out)";
  return text.str();
}

Status scale_split(const FeatureScaler& scaler, bool targets, DataSplit& split) {
  for (Dataset* part : {&split.train, &split.validation, &split.test}) {
    if (part->sample_count == 0) continue;
    SY_RETURN_IF_ERROR(targets ? scaler.apply_to_targets(*part) : scaler.apply(*part));
  }
  return ok_status();
}

}  // namespace

Result<PreparedData> prepare_data(const DataSettings& settings,
                                  const std::filesystem::path& base_dir) {
  PreparedData prepared;
  if (settings.series.enabled) {
    Result<DataSplit> split = load_series_split(settings, base_dir);
    if (!split.ok() && settings.validation_is_default) {
      DataSettings without = settings;
      without.validation_fraction = 0;
      without.validation_is_default = false;
      Result<DataSplit> whole = load_series_split(without, base_dir);
      if (whole.ok()) {
        prepared.notes.push_back(too_few_for_validation(settings, split.status()));
        split = std::move(whole);
      }
    }
    if (!split.ok()) return split.status();
    prepared.split = std::move(*split);
    for (Dataset* part :
         {&prepared.split.train, &prepared.split.validation, &prepared.split.test}) {
      SY_RETURN_IF_ERROR(apply_sample_shape(settings, *part));
    }
  } else {
    SY_ASSIGN_OR_RETURN(prepared.split, load_table_split(settings, base_dir, prepared));
  }
  DataSplit& split = prepared.split;
  // Missing features are filled before anything else looks at the values (baselines, scaling),
  // from statistics of the training part alone.
  if (is_imputing(settings.missing) && !settings.series.enabled) {
    SY_ASSIGN_OR_RETURN(prepared.imputer, FeatureImputer::fit(settings.missing, split.train));
    for (Dataset* part : {&split.train, &split.validation, &split.test}) {
      if (part->sample_count == 0) continue;
      SY_ASSIGN_OR_RETURN(const int64_t filled, prepared.imputer.apply(*part));
      prepared.imputed_cells += filled;
    }
    prepared.notes.push_back(
        "filled " + std::to_string(prepared.imputed_cells) +
        " missing value(s) with each feature's " + missing_policy_name(settings.missing) +
        " on the training split (data.missing: " + missing_policy_name(settings.missing) + ")");
  }
  if (split.train.is_regression()) prepared.baselines = regression_baselines(settings, split);
  if (auto warning = unscaled_warning(settings, split.train)) prepared.warnings.push_back(*warning);
  // Fitted after the validation split is carved out, so that no statistic of a held-out sample
  // shapes the training inputs.
  SY_ASSIGN_OR_RETURN(prepared.scaler,
                      FeatureScaler::fit(settings.scale, settings.divisor, split.train));
  SY_RETURN_IF_ERROR(scale_split(prepared.scaler, false, split));
  if (split.train.is_regression()) {
    SY_ASSIGN_OR_RETURN(prepared.target_scaler,
                        FeatureScaler::fit_targets(settings.target_scale, split.train));
    SY_RETURN_IF_ERROR(scale_split(prepared.target_scaler, true, split));
  }
  return prepared;
}

}  // namespace switchyard
