#include <cstdlib>
#include <functional>
#include <numeric>

#include "runtime/install_dirs.h"
#include "switchyard/data.h"

namespace switchyard {
namespace {

// Candidate file names of a built-in data set, in preference order.
std::vector<std::string> builtin_file_names(const std::string& name) {
  return {name + ".csv", name + ".csv.gz"};
}

std::vector<std::filesystem::path> data_search_path() {
  std::vector<std::filesystem::path> folders;
  if (const char* env = std::getenv("SWITCHYARD_DATA_DIR"); env != nullptr && *env != '\0') {
    folders.emplace_back(env);
  }
#ifdef SWITCHYARD_DEFAULT_DATA_DIR
  folders.emplace_back(SWITCHYARD_DEFAULT_DATA_DIR);
#endif
  for (const auto& base : {detail::executable_directory(), detail::core_library_directory()}) {
    if (base.empty()) continue;
    folders.push_back(base / ".." / ".." / "data");  // <repo>/build/bin -> <repo>/data
    folders.push_back(base / ".." / "share" / "switchyard" / "data");  // an installed tree
  }
  std::error_code error;
  for (auto dir = std::filesystem::current_path(error); !error && !dir.empty();
       dir = dir.parent_path()) {
    folders.push_back(dir / "data");
    if (dir == dir.root_path()) break;
  }
  return folders;
}

}  // namespace

int64_t Dataset::feature_count() const {
  return std::accumulate(sample_shape.begin(), sample_shape.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

Dataset Dataset::subset(const std::vector<int64_t>& indices) const {
  Dataset out;
  out.name = name;
  out.sample_shape = sample_shape;
  out.class_names = class_names;
  out.labeled = labeled;
  out.table = table;
  out.target_names = target_names;
  out.sample_count = static_cast<int64_t>(indices.size());
  const int64_t width = feature_count();
  const int64_t outputs = target_count();
  out.features.reserve(indices.size() * static_cast<size_t>(width));
  out.labels.reserve(indices.size());
  for (const int64_t index : indices) {
    const auto row = features.begin() + index * width;
    out.features.insert(out.features.end(), row, row + width);
    out.labels.push_back(labels[static_cast<size_t>(index)]);
    if (!targets.empty()) {  // unlabeled rows to predict have target names but no targets
      const auto values = targets.begin() + index * outputs;
      out.targets.insert(out.targets.end(), values, values + outputs);
    }
    if (!target_offsets.empty()) {
      out.target_offsets.push_back(target_offsets[static_cast<size_t>(index)]);
    }
    if (!source_lines.empty()) out.source_lines.push_back(source_lines[static_cast<size_t>(index)]);
    if (!ids.empty()) out.ids.push_back(ids[static_cast<size_t>(index)]);
  }
  return out;
}

Status Dataset::reshape_samples(const std::vector<int64_t>& shape) {
  const int64_t count =
      std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
  if (shape.empty() || count != feature_count()) {
    std::string text;
    for (const int64_t d : shape) text += (text.empty() ? "" : "x") + std::to_string(d);
    return invalid_argument("data set " + name + " has " + std::to_string(feature_count()) +
                            " features per sample, which cannot be shaped as [" + text + "]");
  }
  sample_shape = shape;
  return ok_status();
}

const std::vector<std::string>& builtin_dataset_names() {
  static const std::vector<std::string> names = {"digits", "iris", "breast_cancer"};
  return names;
}

Result<std::filesystem::path> builtin_dataset_path(const std::string& name) {
  std::string tried;
  for (const auto& folder : data_search_path()) {
    for (const auto& file : builtin_file_names(name)) {
      std::error_code error;
      const auto candidate = (folder / file).lexically_normal();
      if (std::filesystem::is_regular_file(candidate, error)) return candidate;
    }
    tried += "\n  " + folder.lexically_normal().string();
  }
  return not_found("built-in data set '" + name +
                   "' not found; set SWITCHYARD_DATA_DIR to the repository's data/ folder. "
                   "Folders searched:" +
                   tried);
}

Result<Dataset> load_dataset(const std::string& name_or_path, const std::filesystem::path& base_dir,
                             const TableOptions& options) {
  if (name_or_path.empty()) {
    return invalid_argument(
        "data.dataset is missing: name a CSV file (dataset: flowers.csv) or a built-in set by "
        "name (dataset: digits, iris or breast_cancer)");
  }
  for (const auto& name : builtin_dataset_names()) {
    if (name_or_path != name) continue;
    SY_ASSIGN_OR_RETURN(const auto path, builtin_dataset_path(name));
    SY_ASSIGN_OR_RETURN(Dataset data, load_table_csv(path, options));
    data.name = name;
    return data;
  }
  std::filesystem::path path(name_or_path);
  if (path.is_relative() && !base_dir.empty()) path = base_dir / path;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    std::string names;
    for (const auto& n : builtin_dataset_names()) names += (names.empty() ? "" : ", ") + n;
    return not_found("data set '" + name_or_path + "' is neither a built-in name (" + names +
                     ") nor an existing file (looked for " + path.string() + ")");
  }
  return load_table_csv(path, options);
}

Result<Dataset> load_dataset(const std::string& name_or_path, const std::filesystem::path& base_dir,
                             NonFinitePolicy non_finite) {
  TableOptions options;
  options.non_finite = non_finite;
  return load_dataset(name_or_path, base_dir, options);
}

}  // namespace switchyard
