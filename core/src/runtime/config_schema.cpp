// The configuration schema: every key a switchyard YAML file may hold, in one tree.
//
// HOW TO ADD A KEY
//   1. Find the map that should hold it in make_root_schema() below (top level, `data`, `train`,
//      ...) and add one line to its field list, e.g.
//          {"warmup_epochs", int_in(0, kMaxEpochs), kOptional,
//           {"Epochs of linear learning-rate warm-up.", "0", "5"}},
//      or, for a key that must be present, {"name", string_value(), kRequired, {...}}.
//   2. Pick the value type from the helpers under "Building blocks": int_in, number_above_to,
//      number_from_to, number_in, number_between, boolean, string_value, path_value, one_of,
//      int_or_auto, sequence_of, map_of, tagged_map_of, any_scalar_map, backend_name,
//      device_spec, backend_map_of. A new kind of value needs a ValueKind, a case in
//      describe_expected() here and one in config_validate.cpp.
//   3. A new layer type is one more entry in layer_schema(): the tag value and the keys it takes.
//      Every integer and number has both bounds: a value is checked against them before the code
//      that reads it narrows it (to int, to float), so nothing wraps or overflows to inf/NaN.
//   4. Give it a FieldDoc: a one-line description, the default the code uses when the key is
//      absent, and an example value. Then regenerate the reference,
//          build/bin/switchyard config --reference > docs/config.md
//      (tests/config fails until docs/config.md matches), add a numeric, boolean or enum default
//      to the defaults test in tests/config/config_reference_test.cpp, and a test in tests/config
//      if the key has a new kind of rule.
// Validation, unknown-key suggestions and --set overrides all follow from the tree; nothing else
// needs to change. Code that reads the value uses ConfigNode (config.h).
#include "runtime/config_schema.h"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <utility>

#include "runtime/config_values.h"
#include "switchyard/config.h"

namespace switchyard::config_schema {
namespace {

// ---- Building blocks -----------------------------------------------------------------------

constexpr bool kRequired = true;
constexpr bool kOptional = false;

SchemaNode simple(ValueKind kind) {
  SchemaNode node;
  node.kind = kind;
  return node;
}

SchemaNode int_in(double min, double max) {
  SchemaNode node = simple(ValueKind::kInt);
  node.range.min = min;
  node.range.max = max;
  return node;
}

SchemaNode number(double min, bool min_inclusive, double max, bool max_inclusive) {
  SchemaNode node = simple(ValueKind::kDouble);
  node.range = {min, max, min_inclusive, max_inclusive};
  return node;
}
// The interval (min, max].
SchemaNode number_above_to(double min, double max) {
  return number(min, false, max, true);
}
// The closed interval [min, max].
SchemaNode number_from_to(double min, double max) {
  return number(min, true, max, true);
}
// The half-open interval [min, max).
SchemaNode number_in(double min, double max) {
  return number(min, true, max, false);
}
// The open interval (min, max).
SchemaNode number_between(double min, double max) {
  return number(min, false, max, false);
}

SchemaNode boolean() {
  return simple(ValueKind::kBool);
}
SchemaNode string_value(std::string expected = "") {
  SchemaNode node = simple(ValueKind::kString);
  node.expected = std::move(expected);
  return node;
}
SchemaNode text_value(std::string expected = "") {
  SchemaNode node = simple(ValueKind::kText);
  node.expected = std::move(expected);
  return node;
}
SchemaNode path_value() {
  return simple(ValueKind::kPath);
}
SchemaNode backend_name() {
  return simple(ValueKind::kBackendName);
}
SchemaNode device_spec() {
  return simple(ValueKind::kDeviceSpec);
}
SchemaNode any_scalar_map() {
  return simple(ValueKind::kAnyScalarMap);
}

SchemaNode one_of(std::vector<std::string> choices) {
  SchemaNode node = simple(ValueKind::kEnum);
  node.choices = std::move(choices);
  return node;
}

SchemaNode int_or_auto(double min, double max) {
  SchemaNode node = simple(ValueKind::kIntOrAuto);
  node.range.min = min;
  node.range.max = max;
  return node;
}

SchemaNode sequence_of(SchemaNode element, std::string expected, std::size_t min_items = 0,
                       std::optional<std::size_t> max_items = std::nullopt) {
  SchemaNode node = simple(ValueKind::kSequence);
  node.element = std::make_shared<const SchemaNode>(std::move(element));
  node.expected = std::move(expected);
  node.min_items = min_items;
  node.max_items = max_items;
  return node;
}

SchemaNode map_of(std::vector<SchemaField> fields) {
  SchemaNode node = simple(ValueKind::kMap);
  node.fields = std::move(fields);
  return node;
}

// A map whose `tag_key` value (always required) selects which other keys are allowed.
SchemaNode tagged_map_of(std::string tag_key, FieldDoc tag_doc,
                         std::vector<SchemaVariant> variants) {
  SchemaNode node = simple(ValueKind::kMap);
  node.tag_key = tag_key;
  std::vector<std::string> tags;
  for (const SchemaVariant& variant : variants) tags.push_back(variant.tag);
  node.fields.push_back({tag_key, one_of(tags), kRequired, std::move(tag_doc)});
  node.variants = std::move(variants);
  return node;
}

SchemaNode backend_map_of(SchemaNode value) {
  SchemaNode node = simple(ValueKind::kBackendMap);
  node.element = std::make_shared<const SchemaNode>(std::move(value));
  return node;
}

// ---- The schema ----------------------------------------------------------------------------

// Upper bounds: generous for any real run, small enough that the int (layer geometry) and int64
// (counts) the values become never overflow, and documented in README.md ("Numbers in the YAML
// file"). Seeds stop at 2^53 - 1, the largest integer a double (and so JSON) holds exactly.
constexpr double kMaxWidth = 1048576;      // out_features, out_channels, batch sizes
constexpr double kMaxWindow = 1024;        // kernel_size, stride, padding, dilation
constexpr double kMaxImageExtent = 65536;  // each of data.image_shape
constexpr double kMaxEpochs = 1000000;     // epochs and every count of epochs or steps
constexpr double kMaxSeed = 9007199254740991.0;
constexpr double kMaxLearningRate = 10000;  // lr, min_lr (linear probes use 30)

// The keys of maxpool2d and avgpool2d; `what` says what the window does.
std::vector<SchemaField> pool_fields(const std::string& what) {
  return {
      {"kernel_size",
       int_in(1, kMaxWindow),
       kRequired,
       {"The side of the square window each output " + what + ".", "required", "2"}},
      {"stride",
       int_in(1, kMaxWindow),
       kOptional,
       {"How far the window moves between outputs.", "kernel_size", "2"}},
      {"padding",
       int_in(0, kMaxWindow),
       kOptional,
       {"Zeros added on each side of the input.", "0", "1"}},
  };
}

constexpr double kMaxLayers = 1024;  // num_layers, heads

SchemaField dropout_field(const std::string& where, const std::string& default_text) {
  return {
      "dropout",
      number_in(0.0, 1.0),
      kOptional,
      {"The probability of zeroing each value " + where + " while training.", default_text, "0.2"}};
}

// The keys of lstm and gru.
std::vector<SchemaField> recurrent_fields() {
  return {
      {"hidden_size",
       int_in(1, kMaxWidth),
       kRequired,
       {"Features of the hidden state (per direction): the layer's output per step.", "required",
        "128"}},
      {"num_layers",
       int_in(1, kMaxLayers),
       kOptional,
       {"Recurrent layers stacked, each reading the one before.", "1", "2"}},
      {"bidirectional",
       boolean(),
       kOptional,
       {"Whether a second direction reads the sequence backwards; the outputs are joined "
        "(2 x hidden_size per step).",
        "false", "true"}},
      dropout_field("between stacked layers", "0"),
  };
}

std::vector<SchemaField> transformer_fields() {
  return {
      {"heads",
       int_in(1, kMaxLayers),
       kOptional,
       {"Attention heads; the features per step must be a multiple of it.", "1", "4"}},
      {"feedforward",
       int_in(1, kMaxWidth),
       kOptional,
       {"Width of the feed-forward block.", "4 x features per step", "1024"}},
      {"num_layers", int_in(1, kMaxLayers), kOptional, {"Encoder layers stacked.", "1", "2"}},
      dropout_field("in attention and feed-forward blocks", "0.1"),
      {"activation",
       one_of({"relu", "gelu"}),
       kOptional,
       {"The feed-forward block's activation.", "relu", "gelu"}},
      {"norm_first",
       boolean(),
       kOptional,
       {"Layer norm before each block (pre-norm, with a final norm after the stack) instead of "
        "after.",
        "false", "true"}},
      {"eps",
       number_above_to(0.0, 1.0),
       kOptional,
       {"The layer norms' epsilon.", "1e-05", "1e-06"}},
  };
}

std::vector<SchemaField> batch_norm_fields() {
  return {{"eps",
           number_above_to(0.0, 1.0),
           kOptional,
           {"Added to the variance before the square root.", "1e-05", "0.001"}}};
}

// Sequence layers: samples are [time, features] (data.sample_shape).
std::vector<std::pair<std::string, std::vector<SchemaField>>> sequence_layer_types() {
  return {
      {"embedding",
       {{"num_embeddings",
         int_in(1, kMaxWidth),
         kRequired,
         {"Rows of the table: token ids run from 0 to num_embeddings - 1.", "required", "1000"}},
        {"embedding_dim",
         int_in(1, kMaxWidth),
         kRequired,
         {"Features per token.", "required", "64"}},
        {"padding_idx",
         int_in(0, kMaxWidth),
         kOptional,
         {"A token id whose row stays zero and is not trained.", "none", "0"}}}},
      {"lstm", recurrent_fields()},
      {"gru", recurrent_fields()},
      {"positional_encoding",
       {{"mode",
         one_of({"sinusoidal", "learned"}),
         kOptional,
         {"Fixed sinusoids, or a learned vector per position.", "sinusoidal", "learned"}},
        {"max_len",
         int_in(1, kMaxWidth),
         kOptional,
         {"The longest sequence it can encode.", "the sequence length", "512"}}}},
      {"cls_token", {}},
      {"transformer_encoder", transformer_fields()},
      {"sequence_pool",
       {{"mode",
         one_of({"mean", "last", "first"}),
         kOptional,
         {"How [time, features] becomes [features]: the mean over time, the last step, or the "
          "first (a cls_token's position).",
          "mean", "last"}}}},
      {"batchnorm1d", batch_norm_fields()},
      {"batchnorm2d", batch_norm_fields()},
  };
}

SchemaNode layer_schema() {
  std::vector<SchemaVariant> variants = {
      {"linear",
       {{"out_features",
         int_in(1, kMaxWidth),
         kRequired,
         {"Outputs per sample.", "required", "10"}},
        {"bias",
         boolean(),
         kOptional,
         {"Whether the layer adds a learned bias.", "true", "false"}}}},
      {"conv2d",
       {{"out_channels",
         int_in(1, kMaxWidth),
         kRequired,
         {"Output channels (filters).", "required", "16"}},
        {"kernel_size",
         int_in(1, kMaxWindow),
         kRequired,
         {"The side of the square filter.", "required", "3"}},
        {"stride",
         int_in(1, kMaxWindow),
         kOptional,
         {"How far the filter moves between outputs.", "1", "2"}},
        {"padding",
         int_in(0, kMaxWindow),
         kOptional,
         {"Zeros added on each side of the input.", "0", "1"}},
        {"dilation",
         int_in(1, kMaxWindow),
         kOptional,
         {"Spacing between the filter's taps.", "1", "2"}},
        {"groups",
         int_in(1, kMaxWidth),
         kOptional,
         {"Channel groups, each convolved on its own; must divide the input channels and "
          "out_channels (the input channels: depthwise).",
          "1", "16"}},
        {"bias",
         boolean(),
         kOptional,
         {"Whether the layer adds a learned bias.", "true", "false"}}}},
      {"maxpool2d", pool_fields("takes the largest value of")},
      {"avgpool2d", pool_fields("averages")},
      {"dropout",
       {{"p",
         number_in(0.0, 1.0),
         kOptional,
         {"The probability of zeroing each value while training.", "0.5", "0.2"}}}},
      {"layernorm",
       {{"eps",
         number_above_to(0.0, 1.0),
         kOptional,
         {"Added to the variance before the square root.", "1e-05", "1e-06"}}}},
      {"relu", {}},
      {"gelu", {}},
      {"tanh", {}},
      {"sigmoid", {}},
      {"flatten", {}},
      {"vae_latent",
       {{"latent",
         int_in(1, kMaxWidth),
         kRequired,
         {"Numbers in the code: linear heads give the mean mu and the log-variance logvar of each, "
          "and the layer outputs z = mu + exp(logvar / 2) * eps (eps ~ N(0, 1), seeded) while "
          "training, mu when evaluating and predicting. On [features] samples.",
          "required", "8"}},
        {"beta",
         number_from_to(0.0, 1e6),
         kOptional,
         {"Weight of the KL term added to the loss: beta * KL(N(mu, exp(logvar)) || N(0, 1)), "
          "the KL summed over the code and averaged over the batch's samples.",
          "1", "0.01"}}}},
  };
  for (auto& [type, fields] : sequence_layer_types()) variants.push_back({type, std::move(fields)});
  return tagged_map_of(
      "type", {"The layer's type, which decides the other keys it takes.", "required", "linear"},
      std::move(variants));
}

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

SchemaNode loss_options_schema() {
  return map_of({
      {"beta",
       number_from_to(0.0, 1e9),
       kOptional,
       {"smooth_l1: where the loss turns from quadratic to linear (0: the L1 loss).", "1", "0.5"}},
      {"delta",
       number_above_to(0.0, 1e9),
       kOptional,
       {"huber: where the loss turns from quadratic to linear, and the linear part's slope.", "1",
        "2"}},
  });
}

SchemaNode optimizer_schema() {
  return map_of({
      {"type", one_of({"sgd", "adam", "adamw"}), kOptional, {"The update rule.", "adam", "sgd"}},
      {"lr",
       number_above_to(0.0, kMaxLearningRate),
       kOptional,
       {"The learning rate.", "0.01 for sgd, 0.001 for adam and adamw", "0.01"}},
      {"momentum", number_in(0.0, 1.0), kOptional, {"SGD's momentum.", "0", "0.9"}},
      {"nesterov", boolean(), kOptional, {"Whether SGD uses Nesterov momentum.", "false", "true"}},
      {"weight_decay",
       number_from_to(0.0, 1.0),
       kOptional,
       {"L2 penalty (decoupled for adamw).", "0 (0.01 for adamw)", "0.0001"}},
      {"betas",
       sequence_of(number_in(0.0, 1.0),
                   "a sequence of two numbers >= 0 and < 1, such as [0.9, 0.999]", 2, 2),
       kOptional,
       {"Adam's decay rates of the first and second moments.", "[0.9, 0.999]", "[0.9, 0.98]"}},
      {"eps",
       number_above_to(0.0, 1.0),
       kOptional,
       {"Adam's term added to the denominator.", "1e-08", "1e-07"}},
  });
}

SchemaNode early_stopping_schema() {
  return map_of({
      {"metric",
       one_of({"val_loss", "val_accuracy", "val_f1_macro", "val_rmse", "val_mae", "val_r2",
               "train_loss", "train_accuracy"}),
       kOptional,
       {"The metric watched after each epoch (val_rmse, val_mae and val_r2 for regression).",
        "val_loss", "val_accuracy"}},
      {"mode",
       one_of({"min", "max"}),
       kOptional,
       {"Whether lower or higher is better.", "min for losses, rmse and mae, max otherwise",
        "max"}},
      {"patience",
       int_in(1, kMaxEpochs),
       kRequired,
       {"Epochs without improvement before training stops.", "required", "5"}},
      {"min_delta",
       number_from_to(0.0, 1e9),
       kOptional,
       {"The smallest change that counts as an improvement.", "0", "0.001"}},
      {"restore_best_weights",
       boolean(),
       kOptional,
       {"Whether the model ends with the best epoch's weights.", "false", "true"}},
  });
}

SchemaNode train_schema() {
  return map_of({
      {"epochs",
       int_or_auto(1, kMaxEpochs),
       kOptional,
       {"Passes over the training split; auto trains up to 200, stopping when val_loss has not "
        "improved for 10 (or as train.early_stopping says), on 10% of the training rows held out "
        "unless data.validation_fraction is given.",
        "auto", "60"}},
      {"batch_size",
       int_or_auto(1, kMaxWidth),
       kOptional,
       {"Samples per step; auto picks the largest power of two up to 256 that fits in memory.",
        "64", "auto"}},
      {"gradient_accumulation_steps",
       int_in(1, kMaxEpochs),
       kOptional,
       {"Batches whose gradients are summed before each update.", "1", "4"}},
      {"checkpoint",
       path_value(),
       kOptional,
       {"Where the model is saved (none keeps nothing); the run's history.csv, curves.svg and "
        "run.json (switchyard report) are written beside it.",
        "runs/<config name>/model.ckpt", "runs/iris.ckpt"}},
      {"checkpoint_every",
       int_in(1, kMaxEpochs),
       kOptional,
       {"Epochs between checkpoint saves.", "1", "5"}},
      {"resume",
       path_value(),
       kOptional,
       {"A checkpoint to continue training from.", "none", "runs/iris.ckpt"}},
      {"early_stopping",
       early_stopping_schema(),
       kOptional,
       {"Stops training when a metric stops improving.",
        "{patience: 10} on val_loss with train.epochs: auto, else none", "{patience: 5}"}},
      {"best_checkpoint",
       path_value(),
       kOptional,
       {"Where the best epoch's model is kept.",
        "beside checkpoint (model.best.ckpt) with early_stopping, else none",
        "runs/iris.best.ckpt"}},
      {"export",
       path_value(),
       kOptional,
       {"A safetensors file the trained weights are also written to; a path ending in .onnx "
        "gets the whole model as ONNX (opset 17, input scaling and softmax included).",
        "none", "runs/iris.onnx"}},
      {"precision",
       one_of({"f32", "bf16", "f16"}),
       kOptional,
       {"The compute precision (bf16 and f16 keep f32 master weights).", "f32", "bf16"}},
      {"empty_cache_interval",
       int_in(0, kMaxEpochs),
       kOptional,
       {"Epochs between releases of the device's cached memory (0 = never).", "0", "5"}},
      {"progress",
       one_of({"auto", "bar", "log", "none"}),
       kOptional,
       {"How progress is shown: a bar on a terminal, log lines otherwise.", "auto", "log"}},
  });
}

SchemaNode model_schema() {
  return map_of({
      {"layers",
       sequence_of(layer_schema(),
                   "a sequence of layers, such as [{type: linear, out_features: 10}]"),
       kOptional,
       {"The layers in order (see Layer types).", "linear(64), relu, linear(one output per class)",
        "[{type: linear, out_features: 16}, {type: relu}, {type: linear, out_features: 3}]"}},
      {"init",
       one_of({"kaiming", "xavier"}),
       kOptional,
       {"How weights are initialised (uniform).", "kaiming", "xavier"}},
      {"weights",
       path_value(),
       kOptional,
       {"A safetensors file to start from instead of random weights.", "none",
        "pretrained.safetensors"}},
  });
}

SchemaNode schedule_schema() {
  return map_of({
      {"type",
       one_of({"none", "step", "cosine"}),
       kOptional,
       {"How the learning rate changes per epoch.", "none", "cosine"}},
      {"step_size",
       int_in(1, kMaxEpochs),
       kOptional,
       {"Epochs between decays (step).", "10", "30"}},
      {"gamma",
       number_above_to(0.0, 10.0),
       kOptional,
       {"The factor of each decay (step).", "0.1", "0.5"}},
      {"min_lr",
       number_from_to(0.0, kMaxLearningRate),
       kOptional,
       {"The learning rate at the end (cosine).", "0", "0.0001"}},
  });
}

SchemaNode distributed_schema() {
  return map_of({
      {"timeout_s",
       number_above_to(0.0, 86400.0),
       kOptional,
       {"Seconds a rank waits for the others in one collective before it stops the whole job, "
        "naming the ranks that did not take part (mpirun runs only).",
        "60", "10"}},
      {"bucket_cap_mb",
       number_above_to(0.0, 4096.0),
       kOptional,
       {"The most gradient bytes (MB, f32) averaged in one allreduce; smaller buckets start "
        "earlier during backward, larger ones cost fewer messages.",
        "25", "4"}},
  });
}

SchemaNode predict_schema() {
  return map_of({
      {"checkpoint",
       path_value(),
       kOptional,
       {"The trained model (required by task: predict and evaluate, or predict.model).", "none",
        "runs/iris.ckpt"}},
      {"model",
       path_value(),
       kOptional,
       {"The model, instead of predict.checkpoint: a checkpoint, a .safetensors file, or an ONNX "
        "model (.onnx, docs/onnx.md). Rows of a table for one of our ONNX exports are read as "
        "for its checkpoint (columns by name); for any other, as they come: its input's "
        "features by position, then an optional label.",
        "none", "model.onnx"}},
      {"input",
       string_value("a dataset name or a path to a CSV file"),
       kOptional,
       {"The rows to predict: a built-in set or a CSV file.", "the data section's test split",
        "new-flowers.csv"}},
      {"output",
       path_value(),
       kOptional,
       {"A CSV file the predictions are written to.", "none", "predictions.csv"}},
      {"batch_size",
       int_or_auto(1, kMaxWidth),
       kOptional,
       {"Samples per forward pass (auto = 256).", "256", "1024"}},
  });
}

std::vector<SchemaField> runtime_fields() {
  return {
      {"backends",
       sequence_of(backend_name(),
                   "a sequence of backend names, such as [cuda, vulkan, onednn, reference]", 1),
       kOptional,
       {"The backends to try, in order of preference (env SWITCHYARD_BACKENDS).",
        "[cuda, vulkan, onednn, reference]", "[onednn, reference]"}},
      {"device",
       device_spec(),
       kOptional,
       {"The device to run on (env SWITCHYARD_DEVICE).", "auto", "cuda:1"}},
      {"device_policy",
       one_of({"first", "most_free_memory", "local_rank"}),
       kOptional,
       {"How a device is chosen among the chosen backend's devices.", "first", "local_rank"}},
      {"fallback",
       one_of({"warn", "error", "silent"}),
       kOptional,
       {"What happens when a preferred backend is unusable (env SWITCHYARD_FALLBACK).", "warn",
        "error"}},
      {"plugin_paths",
       sequence_of(path_value(), "a sequence of folders"),
       kOptional,
       {"Folders searched for plugins, after SWITCHYARD_PLUGIN_PATH and before the default ones.",
        "[]", "[plugins]"}},
      {"deterministic",
       boolean(),
       kOptional,
       {"Whether every backend must give bit-identical results from run to run.", "false", "true"}},
      {"seed",
       int_in(0, kMaxSeed),
       kOptional,
       {"The seed of weight initialisation, dropout and shuffling.", "0", "42"}},
      {"backend_options",
       backend_map_of(any_scalar_map()),
       kOptional,
       {"Options passed to each backend's devices, per backend.", "none",
        "{onednn: {memory_limit_bytes: 3000000}}"}},
  };
}

SchemaNode make_root_schema() {
  std::vector<SchemaField> fields = runtime_fields();
  std::vector<SchemaField> run_fields = {
      {"task",
       one_of({"train", "predict", "evaluate"}),
       kOptional,
       {"What `switchyard run` does (predict when the file has only a predict section).", "train",
        "predict"}},
      {"data", data_schema(), kOptional, {"The data set and how to read and split it.", "", ""}},
      {"model", model_schema(), kOptional, {"The network.", "", ""}},
      {"loss",
       one_of({"cross_entropy", "mse", "l1", "smooth_l1", "huber", "bce_with_logits"}),
       kOptional,
       {"The loss minimised while training (regression needs one other than cross_entropy).",
        "cross_entropy", "mse"}},
      {"loss_options",
       loss_options_schema(),
       kOptional,
       {"The parameters of smooth_l1 and huber.", "", ""}},
      {"optimizer", optimizer_schema(), kOptional, {"How the weights are updated.", "", ""}},
      {"schedule",
       schedule_schema(),
       kOptional,
       {"How the learning rate changes over epochs.", "", ""}},
      {"train",
       train_schema(),
       kOptional,
       {"The training loop: epochs, batches, checkpoints.", "", ""}},
      {"predict",
       predict_schema(),
       kOptional,
       {"Prediction and evaluation with a trained checkpoint.", "", ""}},
      {"distributed",
       distributed_schema(),
       kOptional,
       {"Data-parallel training across the ranks of `mpirun -np N` (docs/distributed.md).", "",
        ""}},
  };
  fields.insert(fields.end(), run_fields.begin(), run_fields.end());
  return map_of(std::move(fields));
}

// ---- Descriptions --------------------------------------------------------------------------

// Whole bounds in full ("1048576", not "1.04858e+06").
std::string format_bound(double value) {
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (value == std::floor(value) && std::fabs(value) < kExactIntegers) {
    return std::to_string(static_cast<int64_t>(value));
  }
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string describe_range(const NumberRange& range) {
  std::string text;
  if (range.min) text += (range.min_inclusive ? " >= " : " > ") + format_bound(*range.min);
  if (range.min && range.max) text += " and";
  if (range.max) text += (range.max_inclusive ? " <= " : " < ") + format_bound(*range.max);
  return text;
}

std::string describe_kind(const SchemaNode& schema) {
  switch (schema.kind) {
    case ValueKind::kMap:
      return schema.tag_key.empty() ? "a map" : "a map with a '" + schema.tag_key + "' key";
    case ValueKind::kSequence:
      return "a sequence";
    case ValueKind::kString:
    case ValueKind::kText:
      return "a string";
    case ValueKind::kPath:
      return "a path";
    case ValueKind::kInt:
      return "an integer" + describe_range(schema.range);
    case ValueKind::kDouble:
      return "a number" + describe_range(schema.range);
    case ValueKind::kBool:
      return "true or false";
    case ValueKind::kEnum:
      return "one of: " + config_values::join(schema.choices, ", ");
    case ValueKind::kIntOrAuto:
      return "an integer" + describe_range(schema.range) + " or 'auto'";
    case ValueKind::kAnyScalarMap:
      return "a map of option names to scalar values";
    case ValueKind::kBackendName:
      return "a backend name, one of: " + config_values::join(known_backend_names(), ", ");
    case ValueKind::kDeviceSpec:
      return config_values::device_spec_expected();
    case ValueKind::kBackendMap:
      return "a map from backend names to maps of options";
  }
  return "a value";
}

}  // namespace

const SchemaNode& root_schema() {
  static const SchemaNode schema = make_root_schema();
  return schema;
}

std::string describe_expected(const SchemaNode& schema) {
  return schema.expected.empty() ? describe_kind(schema) : schema.expected;
}

const SchemaField* find_field(const SchemaNode& map_schema, const std::string& key) {
  for (const SchemaField& field : map_schema.fields) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

const SchemaVariant* find_variant(const SchemaNode& map_schema, const std::string& tag) {
  for (const SchemaVariant& variant : map_schema.variants) {
    if (variant.tag == tag) return &variant;
  }
  return nullptr;
}

}  // namespace switchyard::config_schema
