// data.series: one column of a table cut into windows, split in time order (data.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "data/csv_text.h"
#include "data/file_text.h"
#include "runtime/input_file.h"
#include "switchyard/data.h"

namespace switchyard {
namespace {

// The series as read: one value per data line (NaN for an empty field), with its line and id.
struct SeriesColumn {
  std::string where;  // the file's path
  std::vector<float> values;
  std::vector<int64_t> lines;
  std::vector<std::string> ids;  // data.id's value per line; empty without data.id
  std::vector<std::string> column_names;
  int64_t id_column = -1;
};

Result<size_t> column_index(const std::vector<std::string>& names, const std::string& name,
                            const ConfigNode& key, const std::string& where) {
  const auto found = std::find(names.begin(), names.end(), name);
  if (found != names.end()) return static_cast<size_t>(found - names.begin());
  std::string columns;
  for (const auto& n : names) columns += (columns.empty() ? "" : ", ") + n;
  return key.error("no column '" + name + "' in " + where + " (columns: " + columns + ")");
}

Result<float> series_value(const std::string& field, const std::string& at,
                           const std::string& column) {
  if (field.empty()) return std::numeric_limits<float>::quiet_NaN();  // a gap
  float value = 0;
  if (detail::parse_csv_float(field, value) != detail::ParsedNumber::kNumber) {
    return invalid_argument(at + ": " + detail::quote_input(field) +
                            " is not a finite number (data.series column '" + column +
                            "'; an empty field is a gap)");
  }
  return value;
}

Result<SeriesColumn> read_series_column(const DataSettings& settings,
                                        const std::filesystem::path& path) {
  SeriesColumn series;
  series.where = path.string();
  SY_ASSIGN_OR_RETURN(const std::string text, detail::read_text_file(path));
  SY_ASSIGN_OR_RETURN(const std::vector<detail::CsvLine> lines,
                      detail::csv_data_lines(text, series.where));
  if (lines.size() < 2) return invalid_argument(series.where + ": the file has no samples");
  const char delimiter = settings.delimiter != '\0' ? settings.delimiter
                                                    : detail::detect_csv_delimiter(lines).delimiter;
  SY_ASSIGN_OR_RETURN(const auto names,
                      detail::split_csv_fields(lines[0], delimiter, series.where));
  const ConfigNode& node = settings.series.node;
  SY_ASSIGN_OR_RETURN(const size_t column,
                      column_index(names, settings.series.column, node["column"], series.where));
  size_t id_column = names.size();
  if (!settings.id.empty()) {
    SY_ASSIGN_OR_RETURN(id_column, column_index(names, settings.id, node, series.where));
    series.id_column = static_cast<int64_t>(id_column);
  }
  series.column_names = names;
  for (size_t i = 1; i < lines.size(); ++i) {
    SY_ASSIGN_OR_RETURN(const auto fields,
                        detail::split_csv_fields(lines[i], delimiter, series.where));
    const std::string at = series.where + ":" + std::to_string(lines[i].number);
    if (fields.size() != names.size()) {
      return invalid_argument(at + ": expected " + std::to_string(names.size()) +
                              " fields (as the header has), found " +
                              std::to_string(fields.size()));
    }
    SY_ASSIGN_OR_RETURN(const float value,
                        series_value(fields[column], at + ":" + std::to_string(column + 1),
                                     settings.series.column));
    series.values.push_back(value);
    series.lines.push_back(lines[i].number);
    if (id_column < names.size()) series.ids.push_back(fields[id_column]);
  }
  return series;
}

// Fills each gap linearly between the values around it (the nearest value at either end) within
// `values` only, so that no part of the split is filled from another.
void interpolate_gaps(std::vector<float>& values) {
  std::vector<size_t> known;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isnan(values[i])) known.push_back(i);
  }
  if (known.empty()) return;
  size_t next = 0;  // the first known index at or after i
  for (size_t i = 0; i < values.size(); ++i) {
    while (next < known.size() && known[next] < i) ++next;
    if (!std::isnan(values[i])) continue;
    if (next == 0) {
      values[i] = values[known.front()];
    } else if (next == known.size()) {
      values[i] = values[known.back()];
    } else {
      const size_t before = known[next - 1];
      const size_t after = known[next];
      const double t = static_cast<double>(i - before) / static_cast<double>(after - before);
      const auto low = static_cast<double>(values[before]);
      values[i] = static_cast<float>(low + t * (static_cast<double>(values[after]) - low));
    }
  }
}

// One contiguous part of the series: [begin, end) of its values.
struct Stretch {
  const char* name;  // "train", "validation", "test"
  size_t begin;
  size_t end;
};

// The windows of one part; windows touching a gap are left out (data.series.gaps: drop) after
// interpolate_gaps has filled what data.series.gaps: interpolate fills.
Dataset part_windows(const SeriesColumn& series, const Stretch& stretch,
                     const SeriesSettings& settings) {
  std::vector<float> values(series.values.begin() + static_cast<int64_t>(stretch.begin),
                            series.values.begin() + static_cast<int64_t>(stretch.end));
  if (settings.gaps == GapPolicy::kInterpolate) interpolate_gaps(values);
  const auto window = static_cast<size_t>(settings.window);
  const bool forecast = settings.target == SeriesTarget::kNext;
  const size_t outputs = forecast ? static_cast<size_t>(settings.horizon) : window;
  const size_t span = window + (forecast ? outputs : 0);
  Dataset part;
  part.name = series.where;
  part.sample_shape = {settings.window};
  part.table.column_names = series.column_names;  // names the id column in predictions
  part.table.id_column = series.id_column;
  for (size_t o = 0; o < outputs; ++o) {
    part.target_names.push_back(settings.column + (forecast ? "[t+" : "[t-") +
                                std::to_string(forecast ? o + 1 : outputs - 1 - o) + "]");
  }
  for (size_t t = 0; t + span <= values.size(); ++t) {
    const auto first = values.begin() + static_cast<int64_t>(t);
    if (std::any_of(first, first + static_cast<int64_t>(span),
                    [](float v) { return std::isnan(v); })) {
      continue;
    }
    const float level = settings.relative_to_last ? values[t + window - 1] : 0.0f;
    for (size_t i = 0; i < window; ++i) part.features.push_back(values[t + i] - level);
    const size_t target_start = forecast ? t + window : t;
    for (size_t o = 0; o < outputs; ++o) part.targets.push_back(values[target_start + o] - level);
    if (settings.relative_to_last) part.target_offsets.push_back(level);
    // A forecast is named after the first value it predicts, a reconstruction after its window's
    // last value: the line (and id) of the newest value the sample involves.
    const size_t row = stretch.begin + (forecast ? t + window : t + window - 1);
    part.source_lines.push_back(series.lines[row]);
    if (!series.ids.empty()) part.ids.push_back(series.ids[row]);
  }
  part.sample_count = static_cast<int64_t>(part.source_lines.size());
  part.labels.assign(static_cast<size_t>(part.sample_count), 0);
  return part;
}

// The train, validation and test stretches: the test part is the last round(test_fraction * n)
// values, the validation part the ceil(validation_fraction * rest) before it.
std::vector<Stretch> chronological_stretches(const DataSettings& settings, size_t n) {
  const auto test =
      static_cast<size_t>(std::llround(settings.test_fraction * static_cast<double>(n)));
  const size_t rest = n - std::min(test, n);
  const auto validation =
      settings.validation_fraction > 0
          ? static_cast<size_t>(std::ceil(settings.validation_fraction * static_cast<double>(rest)))
          : size_t{0};
  const size_t train = rest - std::min(validation, rest);
  return {{"train", 0, train}, {"validation", train, rest}, {"test", rest, n}};
}

Status check_part(const Stretch& stretch, const Dataset& part, const SeriesColumn& series,
                  const SeriesSettings& settings) {
  if (part.sample_count > 0) return ok_status();
  const int64_t span =
      settings.window + (settings.target == SeriesTarget::kNext ? settings.horizon : 0);
  return settings.node["window"].error(
      "a window of " + std::to_string(settings.window) +
      (settings.target == SeriesTarget::kNext
           ? " plus a horizon of " + std::to_string(settings.horizon)
           : std::string()) +
      " needs " + std::to_string(span) + " consecutive values" +
      (settings.gaps == GapPolicy::kDrop ? " without a gap" : "") + ", but the " + stretch.name +
      " part of " + series.where + " has " + std::to_string(stretch.end - stretch.begin) +
      " values (of " + std::to_string(series.values.size()) + " in the series) and no such window");
}

}  // namespace

Result<DataSplit> load_series_split(const DataSettings& settings,
                                    const std::filesystem::path& base_dir) {
  std::filesystem::path path(settings.dataset);
  if (path.is_relative() && !base_dir.empty()) path = base_dir / path;
  SY_ASSIGN_OR_RETURN(const SeriesColumn series, read_series_column(settings, path));
  DataSplit split;
  for (const Stretch& stretch : chronological_stretches(settings, series.values.size())) {
    const bool wanted =
        stretch.name != std::string("validation") || settings.validation_fraction > 0;
    if (!wanted) continue;
    Dataset part = part_windows(series, stretch, settings.series);
    SY_RETURN_IF_ERROR(check_part(stretch, part, series, settings.series));
    Dataset& slot = stretch.name == std::string("train")  ? split.train
                    : stretch.name == std::string("test") ? split.test
                                                          : split.validation;
    slot = std::move(part);
  }
  return split;
}

}  // namespace switchyard
