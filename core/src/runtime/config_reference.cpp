// docs/config.md, rendered from the schema: every key with its type and range (the same text the
// validator's errors use), default, example and description.
#include <sstream>
#include <string>

#include "runtime/config_schema.h"

namespace switchyard::config_schema {
namespace {

// A table cell: a '|' would end the cell early, a line break would end the row.
std::string cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string code(const std::string& text) {
  return text.empty() ? "" : "`" + cell(text) + "`";
}

// The Default column: a value in code, a word ("required", "none", "detected") or a phrase as is.
std::string default_cell(const SchemaField& field) {
  const std::string& value = field.doc.default_value;
  if (field.required) return "required";
  if (value == "none" || value == "detected") return value;
  if (value.find(' ') != std::string::npos && value.front() != '[' && value.front() != '{') {
    return cell(value);
  }
  return code(value);
}

// The type column. A backend name's list depends on the plugins this machine finds, so the
// reference names the in-tree backends and says that a found plugin counts too: the file must read
// the same on every machine.
std::string type_text(const SchemaNode& node) {
  const std::string in_tree =
      "reference, onednn, vulkan, cuda, template, or the name of a plugin found on the search path";
  if (node.expected.empty() && node.kind == ValueKind::kDeviceSpec) {
    return "auto, cpu, <backend> or <backend>:<index>, where <backend> is " + in_tree;
  }
  if (node.expected.empty() && node.kind == ValueKind::kBackendName) {
    return "a backend name: " + in_tree;
  }
  return describe_expected(node);
}

void table_header(std::ostringstream& out) {
  out << "| key | type and range | default | example | description |\n"
      << "| --- | --- | --- | --- | --- |\n";
}

// One row per field, and the rows of a nested map (train.early_stopping) after its own.
void table_rows(std::ostringstream& out, const std::vector<SchemaField>& fields,
                const std::string& prefix) {
  for (const SchemaField& field : fields) {
    const std::string key = prefix + field.key;
    const bool nested = field.schema.kind == ValueKind::kMap && !field.schema.fields.empty();
    const bool layers = field.schema.kind == ValueKind::kSequence && field.schema.element &&
                        !field.schema.element->variants.empty();
    std::string type = type_text(field.schema);
    if (layers) type = "a sequence of layers (see [Layer types](#layer-types))";
    out << "| " << code(key) << " | " << cell(type) << " | " << default_cell(field) << " | "
        << code(field.doc.example) << " | " << cell(field.doc.description) << " |\n";
    if (nested) table_rows(out, field.schema.fields, key + ".");
  }
}

void layer_types(std::ostringstream& out, const SchemaNode& layer) {
  out << "## Layer types\n\n"
      << "Each entry of `model.layers` is a map whose `" << layer.tag_key
      << "` names the layer's type; the keys each type takes besides `" << layer.tag_key
      << "` follow the table.\n\n";
  table_header(out);
  table_rows(out, layer.fields, "");
  out << "\n";
  for (const SchemaVariant& variant : layer.variants) {
    out << "### `" << variant.tag << "`\n\n";
    if (variant.fields.empty()) {
      out << "No other keys.\n\n";
      continue;
    }
    table_header(out);
    table_rows(out, variant.fields, "");
    out << "\n";
  }
}

const SchemaNode* layer_node(const SchemaNode& root) {
  const SchemaField* model = find_field(root, "model");
  const SchemaField* layers = model == nullptr ? nullptr : find_field(model->schema, "layers");
  return layers == nullptr ? nullptr : layers->schema.element.get();
}

void preamble(std::ostringstream& out) {
  out << "# Configuration reference\n\n"
      << "<!-- Generated from the schema (core/src/runtime/config_schema.cpp) by\n"
      << "     `switchyard config --reference > docs/config.md`. Do not edit by hand: the test\n"
      << "     config_reference_test fails when this file and the schema differ. -->\n\n"
      << "Every key a switchyard YAML file may hold. Every key is optional unless its default "
         "says\n\"required\"; \"none\" means the feature is off, \"detected\" that the value is "
         "read from the\ndata. Paths are relative to the YAML file's folder. `--set "
         "dotted.key=value` overrides any key\n(`--set train.epochs=30`; "
         "`--set model.layers[0].out_features=32` on a file that has\n`model.layers`, "
         "or the whole list: `--set 'model.layers=[{type: linear, out_features: 32}]'`).\n\n"
      << "`switchyard config CONFIG` prints the value every key takes for a file, after `--set` "
         "and the\nenvironment, and where each came from.\n\n"
      << "Environment variables override the file: `SWITCHYARD_BACKENDS` (names separated by "
         "commas),\n`SWITCHYARD_DEVICE`, `SWITCHYARD_FALLBACK`; `SWITCHYARD_PLUGIN_PATH` adds "
         "plugin folders; with\n`device_policy: local_rank` the rank is read from "
         "`SWITCHYARD_LOCAL_RANK`, `LOCAL_RANK`,\n`OMPI_COMM_WORLD_LOCAL_RANK`, `MPI_LOCALRANKID` "
         "or `SLURM_LOCALID`.\n\n";
}

}  // namespace

std::string reference_markdown() {
  const SchemaNode& root = root_schema();
  std::ostringstream out;
  preamble(out);
  std::vector<SchemaField> top_level;
  for (const SchemaField& field : root.fields) {
    if (field.schema.kind != ValueKind::kMap) top_level.push_back(field);
  }
  out << "## Top level\n\n";
  table_header(out);
  table_rows(out, top_level, "");
  out << "\n";
  for (const SchemaField& field : root.fields) {
    if (field.schema.kind != ValueKind::kMap) continue;
    out << "## `" << field.key << "`\n\n" << field.doc.description << "\n\n";
    table_header(out);
    table_rows(out, field.schema.fields, field.key + ".");
    out << "\n";
  }
  if (const SchemaNode* layer = layer_node(root)) layer_types(out, *layer);
  std::string text = out.str();
  text.pop_back();  // one newline at the end, not a blank line
  return text;
}

}  // namespace switchyard::config_schema
