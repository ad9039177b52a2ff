// A YAML file that predicts from a checkpoint may leave out what the checkpoint holds, but what it
// says must agree with it: a contradiction is an error naming both places.
#include "model/train_state.h"
#include "switchyard/predict.h"

namespace switchyard {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return "[" + text + "]";
}

std::string join(const std::vector<int64_t>& items) {
  std::vector<std::string> texts;
  for (const int64_t item : items) texts.push_back(std::to_string(item));
  return join(texts);
}

Status contradiction(const ConfigNode& node, const std::string& yaml_value,
                     const Checkpoint& checkpoint, const std::string& stored_value) {
  return node.error(yaml_value + " contradicts checkpoint " + checkpoint.source() + ", which has " +
                    stored_value +
                    " (leave the key out: the checkpoint says how its model reads data)");
}

// data.target or data.id: the same column by name, by number, or by the text given in training.
bool same_column(const std::string& yaml, const std::string& trained, const TableLayout& table,
                 int64_t column) {
  if (yaml == trained) return true;
  if (column < 0) return false;
  const auto index = static_cast<size_t>(column);
  return (index < table.column_names.size() && yaml == table.column_names[index]) ||
         yaml == std::to_string(column + 1);
}

Status check_columns(const ConfigNode& data, const DataSettings& yaml,
                     const detail::DataLayout& stored, const Checkpoint& checkpoint) {
  const TableLayout& table = stored.table;
  if (data["target"].valid() &&
      !same_column(yaml.target, stored.settings.target, table, table.target_column)) {
    return contradiction(data["target"], "'" + yaml.target + "'", checkpoint,
                         "target " + table.column_label(table.target_column));
  }
  if (data["id"].valid() && !same_column(yaml.id, stored.settings.id, table, table.id_column)) {
    return contradiction(data["id"], "'" + yaml.id + "'", checkpoint,
                         table.id_column < 0 ? std::string("no id column")
                                             : "id " + table.column_label(table.id_column));
  }
  if (data["drop"].valid() && yaml.drop != stored.settings.drop) {
    return contradiction(data["drop"], join(yaml.drop), checkpoint,
                         "drop " + join(stored.settings.drop));
  }
  if (data["label_order"].valid() && yaml.label_order != stored.settings.label_order) {
    return contradiction(
        data["label_order"], label_order_name(yaml.label_order), checkpoint,
        std::string("label_order ") + label_order_name(stored.settings.label_order));
  }
  // New rows' holes are handled as the training rows' were (the imputer's values are the
  // checkpoint's): a YAML that says otherwise contradicts it.
  if (data["missing"].valid() && yaml.missing != stored.settings.missing) {
    return contradiction(data["missing"], missing_policy_name(yaml.missing), checkpoint,
                         std::string("missing ") + missing_policy_name(stored.settings.missing));
  }
  if (data["na_values"].valid() && yaml.na_values != stored.settings.na_values) {
    const auto quoted = [](const std::vector<std::string>& values) {
      std::string text;
      for (const std::string& value : values) text += (text.empty() ? "'" : ", '") + value + "'";
      return "[" + text + "]";
    };
    return contradiction(data["na_values"], quoted(yaml.na_values), checkpoint,
                         "na_values " + quoted(stored.settings.na_values));
  }
  return ok_status();
}

Status check_data(const ConfigNode& data, const detail::DataLayout& stored,
                  const Checkpoint& checkpoint) {
  SY_ASSIGN_OR_RETURN(const DataSettings yaml, DataSettings::from_config(data));
  const ConfigNode shape =
      data["sample_shape"].valid() ? data["sample_shape"] : data["image_shape"];
  if (shape.valid() && yaml.image_shape != stored.sample_shape) {
    return contradiction(shape, join(yaml.image_shape), checkpoint,
                         "samples of shape " + join(stored.sample_shape));
  }
  if (data["scale"].valid() && yaml.scale != stored.scaler.mode) {
    return contradiction(data["scale"], scale_mode_name(yaml.scale), checkpoint,
                         std::string("scale ") + scale_mode_name(stored.scaler.mode));
  }
  if (!stored.has_table) return ok_status();
  return check_columns(data, yaml, stored, checkpoint);
}

}  // namespace

Status check_config_against_checkpoint(const Config& config, const Checkpoint& checkpoint) {
  const ConfigNode root = config.root();
  const ConfigNode layers = root["model"]["layers"];
  if (layers.valid() && checkpoint.contains("model/layers")) {
    SY_ASSIGN_OR_RETURN(const ModelSpec yaml, ModelSpec::from_config(root["model"]));
    SY_ASSIGN_OR_RETURN(const ModelSpec stored, detail::get_model_spec(checkpoint));
    if (detail::model_spec_text(yaml) != detail::model_spec_text(stored)) {
      return layers.error("the layers contradict checkpoint " + checkpoint.source() +
                          ", which holds\n  checkpoint: " + detail::model_spec_summary(stored) +
                          "\n  YAML:       " + detail::model_spec_summary(yaml) +
                          "\n(leave model.layers out: the checkpoint holds its model)");
    }
  }
  if (!root["data"].valid()) return ok_status();
  SY_ASSIGN_OR_RETURN(const detail::DataLayout stored, detail::get_data_layout(checkpoint));
  return check_data(root["data"], stored, checkpoint);
}

}  // namespace switchyard
