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

Result<DataSettings> DataSettings::from_config(const ConfigNode& data_section) {
  DataSettings settings;
  if (!data_section.valid()) return settings;
  SY_ASSIGN_OR_RETURN(settings.dataset, data_section.string_or("dataset", settings.dataset));
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
  const ConfigNode shape = data_section["image_shape"];
  if (shape.valid()) {
    settings.image_shape_node = shape;
    for (const ConfigNode& item : shape.items()) {
      SY_ASSIGN_OR_RETURN(const int64_t extent, item.as_int());
      if (extent < 1) return item.error("image dimensions must be >= 1");
      settings.image_shape.push_back(extent);
    }
  }
  return settings;
}

Result<PreparedData> prepare_data(const DataSettings& settings,
                                  const std::filesystem::path& base_dir) {
  SY_ASSIGN_OR_RETURN(Dataset all, load_dataset(settings.dataset, base_dir, settings.non_finite));
  if (!settings.image_shape.empty()) {
    const Status reshaped = all.reshape_samples(settings.image_shape);
    if (!reshaped.ok() && settings.image_shape_node.valid()) {
      return settings.image_shape_node.error(reshaped.message());
    }
    SY_RETURN_IF_ERROR(reshaped);
  }
  PreparedData prepared;
  prepared.dropped_rows = all.dropped_rows;
  SY_ASSIGN_OR_RETURN(prepared.split,
                      stratified_split(all, settings.test_fraction, settings.split_seed));
  if (settings.validation_fraction > 0) {
    const Status carved =
        carve_validation(prepared.split, settings.validation_fraction, settings.split_seed);
    if (!carved.ok()) return carved.with_context("data.validation_fraction");
  }
  // Fitted after the validation split is carved out, so that no statistic of a held-out sample
  // shapes the training inputs.
  SY_ASSIGN_OR_RETURN(prepared.scaler,
                      FeatureScaler::fit(settings.scale, settings.divisor, prepared.split.train));
  SY_RETURN_IF_ERROR(prepared.scaler.apply(prepared.split.train));
  if (prepared.split.has_validation()) {
    SY_RETURN_IF_ERROR(prepared.scaler.apply(prepared.split.validation));
  }
  SY_RETURN_IF_ERROR(prepared.scaler.apply(prepared.split.test));
  return prepared;
}

}  // namespace switchyard
