// Reading the training sections of a configuration (model, loss, optimizer, schedule, train).
// The schema has already checked types and ranges; this turns nodes into settings.
#include "switchyard/train.h"

namespace switchyard {
namespace {

// The keys of the sequence layers (the schema has checked their types, ranges and which layer
// takes which).
Status read_sequence_keys(const ConfigNode& node, LayerSpec& layer) {
  SY_ASSIGN_OR_RETURN(layer.hidden_size, node.int_or("hidden_size", 0));
  SY_ASSIGN_OR_RETURN(const int64_t num_layers, node.int_or("num_layers", 1));
  layer.num_layers = static_cast<int>(num_layers);
  SY_ASSIGN_OR_RETURN(layer.bidirectional, node.bool_or("bidirectional", false));
  const double default_dropout = layer.type == "transformer_encoder" ? 0.1 : 0.0;
  SY_ASSIGN_OR_RETURN(layer.dropout, node.double_or("dropout", default_dropout));
  SY_ASSIGN_OR_RETURN(layer.heads, node.int_or("heads", 1));
  SY_ASSIGN_OR_RETURN(layer.feedforward, node.int_or("feedforward", 0));
  SY_ASSIGN_OR_RETURN(layer.activation, node.string_or("activation", "relu"));
  SY_ASSIGN_OR_RETURN(layer.norm_first, node.bool_or("norm_first", false));
  SY_ASSIGN_OR_RETURN(layer.mode, node.string_or("mode", ""));
  SY_ASSIGN_OR_RETURN(layer.max_len, node.int_or("max_len", 0));
  SY_ASSIGN_OR_RETURN(layer.num_embeddings, node.int_or("num_embeddings", 0));
  SY_ASSIGN_OR_RETURN(layer.embedding_dim, node.int_or("embedding_dim", 0));
  SY_ASSIGN_OR_RETURN(layer.padding_idx, node.int_or("padding_idx", -1));
  SY_ASSIGN_OR_RETURN(layer.latent, node.int_or("latent", 0));
  SY_ASSIGN_OR_RETURN(layer.beta, node.double_or("beta", 1.0));
  return ok_status();
}

Result<LayerSpec> read_layer(const ConfigNode& node) {
  LayerSpec layer;
  layer.node = node;
  SY_ASSIGN_OR_RETURN(layer.type, node.string_or("type", ""));
  SY_ASSIGN_OR_RETURN(layer.out_features, node.int_or("out_features", 0));
  SY_ASSIGN_OR_RETURN(layer.out_channels, node.int_or("out_channels", 0));
  SY_ASSIGN_OR_RETURN(const int64_t kernel, node.int_or("kernel_size", 0));
  SY_ASSIGN_OR_RETURN(const int64_t stride, node.int_or("stride", 0));
  SY_ASSIGN_OR_RETURN(const int64_t padding, node.int_or("padding", 0));
  SY_ASSIGN_OR_RETURN(const int64_t dilation, node.int_or("dilation", 1));
  SY_ASSIGN_OR_RETURN(const int64_t groups, node.int_or("groups", 1));
  layer.kernel_size = static_cast<int>(kernel);
  layer.stride = static_cast<int>(stride);
  layer.padding = static_cast<int>(padding);
  layer.dilation = static_cast<int>(dilation);
  layer.groups = static_cast<int>(groups);
  SY_ASSIGN_OR_RETURN(layer.bias, node.bool_or("bias", true));
  SY_ASSIGN_OR_RETURN(layer.p, node.double_or("p", 0.5));
  SY_ASSIGN_OR_RETURN(layer.eps, node.double_or("eps", 1e-5));
  SY_RETURN_IF_ERROR(read_sequence_keys(node, layer));
  const bool needs_out = layer.type == "linear"       ? layer.out_features < 1
                         : layer.type == "conv2d"     ? layer.out_channels < 1 || kernel < 1
                         : layer.type == "vae_latent" ? layer.latent < 1
                                                      : false;
  if (needs_out) return node.error("layer '" + layer.type + "' lacks its size");
  if ((layer.type == "maxpool2d" || layer.type == "avgpool2d") && kernel < 1) {
    return node.error("layer '" + layer.type + "' needs kernel_size >= 1");
  }
  return layer;
}

Result<OptimizerSettings> read_optimizer(const ConfigNode& node) {
  OptimizerSettings o;
  if (!node.valid()) return o;
  SY_ASSIGN_OR_RETURN(const std::string type, node.string_or("type", "adam"));
  if (type == "sgd")
    o.kind = OptimizerKind::kSgd;
  else if (type == "adam")
    o.kind = OptimizerKind::kAdam;
  else if (type == "adamw")
    o.kind = OptimizerKind::kAdamW;
  else
    return node["type"].error("unknown optimizer '" + type + "' (expected sgd, adam, adamw)");
  SY_ASSIGN_OR_RETURN(o.lr, node.double_or("lr", o.kind == OptimizerKind::kSgd ? 0.01 : 1e-3));
  SY_ASSIGN_OR_RETURN(o.momentum, node.double_or("momentum", 0.0));
  SY_ASSIGN_OR_RETURN(o.nesterov, node.bool_or("nesterov", false));
  o.weight_decay_given = node["weight_decay"].valid();
  SY_ASSIGN_OR_RETURN(o.weight_decay, node.double_or("weight_decay", 0.0));
  SY_ASSIGN_OR_RETURN(o.eps, node.double_or("eps", 1e-8));
  const ConfigNode betas = node["betas"];
  if (betas.valid()) {
    const auto items = betas.items();
    if (items.size() != 2) return betas.error("expected two numbers, such as [0.9, 0.999]");
    SY_ASSIGN_OR_RETURN(o.beta1, items[0].as_double());
    SY_ASSIGN_OR_RETURN(o.beta2, items[1].as_double());
  }
  return o;
}

Result<ScheduleSettings> read_schedule(const ConfigNode& node) {
  ScheduleSettings s;
  if (!node.valid()) return s;
  SY_ASSIGN_OR_RETURN(const std::string type, node.string_or("type", "none"));
  if (type == "none")
    s.kind = ScheduleKind::kNone;
  else if (type == "step")
    s.kind = ScheduleKind::kStep;
  else if (type == "cosine")
    s.kind = ScheduleKind::kCosine;
  else
    return node["type"].error("unknown schedule '" + type + "' (expected none, step, cosine)");
  SY_ASSIGN_OR_RETURN(s.step_size, node.int_or("step_size", s.step_size));
  SY_ASSIGN_OR_RETURN(s.gamma, node.double_or("gamma", s.gamma));
  SY_ASSIGN_OR_RETURN(s.min_lr, node.double_or("min_lr", s.min_lr));
  return s;
}

Result<DType> read_precision(const ConfigNode& node) {
  SY_ASSIGN_OR_RETURN(const std::string text, node.string_or("precision", "f32"));
  if (text == "f32") return DType::kF32;
  if (text == "bf16") return DType::kBF16;
  if (text == "f16") return DType::kF16;
  return node["precision"].error("unknown precision '" + text + "' (expected f32, bf16, f16)");
}

Result<ProgressMode> read_progress(const ConfigNode& node) {
  SY_ASSIGN_OR_RETURN(const std::string text, node.string_or("progress", "auto"));
  if (text == "auto") return ProgressMode::kAuto;
  if (text == "bar") return ProgressMode::kBar;
  if (text == "log") return ProgressMode::kLog;
  if (text == "none") return ProgressMode::kNone;
  return node["progress"].error("unknown progress mode '" + text +
                                "' (expected auto, bar, log, none)");
}

// "auto" or an integer; 0 stands for auto.
Result<int64_t> read_batch_size(const ConfigNode& section, int64_t fallback) {
  const ConfigNode node = section["batch_size"];
  if (!node.valid()) return fallback;
  SY_ASSIGN_OR_RETURN(const std::string text, node.as_string());
  if (text == "auto") return int64_t{0};
  SY_ASSIGN_OR_RETURN(const int64_t value, node.as_int());
  if (value < 1) return node.error("must be >= 1 or 'auto'");
  return value;
}

// "none" (or nothing) switches a checkpoint or resume path off, e.g. --set train.checkpoint=none.
std::filesystem::path resolve(const std::filesystem::path& base, const std::string& text) {
  if (text.empty() || text == "none") return {};
  const std::filesystem::path path(text);
  return path.is_relative() ? (base / path).lexically_normal() : path;
}

// train.early_stopping: the monitored metric (val_loss by default), its direction (lower is
// better for losses, higher otherwise, unless `mode` says), patience and min_delta.
Status read_early_stopping(const ConfigNode& node, TrainSettings& t) {
  if (!node.valid() || !node.is_map()) return ok_status();
  t.early_stopping.enabled = true;
  SY_ASSIGN_OR_RETURN(t.monitor.metric, node.string_or("metric", t.monitor.metric));
  // Losses and errors (val_rmse, val_mae) are better lower; accuracy, F1 and R^2 higher.
  const auto ends_with = [&](const std::string& suffix) {
    const std::string& metric = t.monitor.metric;
    return metric.size() >= suffix.size() &&
           metric.compare(metric.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const bool is_loss = ends_with("_loss") || ends_with("_rmse") || ends_with("_mae");
  SY_ASSIGN_OR_RETURN(const std::string mode, node.string_or("mode", is_loss ? "min" : "max"));
  t.monitor.mode = mode == "max" ? MonitorMode::kMax : MonitorMode::kMin;
  SY_ASSIGN_OR_RETURN(t.monitor.min_delta, node.double_or("min_delta", 0.0));
  if (!node["patience"].valid()) return node.error("missing required key 'patience'");
  SY_ASSIGN_OR_RETURN(t.early_stopping.patience, node.int_or("patience", 0));
  if (t.early_stopping.patience < 1) return node["patience"].error("must be >= 1");
  SY_ASSIGN_OR_RETURN(t.early_stopping.restore_best_weights,
                      node.bool_or("restore_best_weights", false));
  return ok_status();
}

// model.ckpt -> model.best.ckpt, beside it.
std::filesystem::path beside(const std::filesystem::path& checkpoint) {
  return checkpoint.parent_path() /
         (checkpoint.stem().string() + ".best" + checkpoint.extension().string());
}

Status read_best_checkpoint(const ConfigNode& node, const std::filesystem::path& base,
                            TrainSettings& t) {
  SY_ASSIGN_OR_RETURN(const std::string best, node.string_or("best_checkpoint", ""));
  if (node["best_checkpoint"].valid()) {
    t.best_checkpoint = resolve(base, best);
  } else if (t.early_stopping.enabled && !t.checkpoint.empty()) {
    t.best_checkpoint = beside(t.checkpoint);
  }
  if (!t.best_checkpoint.empty() && t.best_checkpoint == t.checkpoint) {
    return node["best_checkpoint"].error(
        "is the same file as train.checkpoint; the best checkpoint is kept beside the last one");
  }
  return ok_status();
}

// train.epochs: a number, or auto (also without the key): up to TrainSettings::kAutoEpochs.
Status read_epochs(const ConfigNode& node, TrainSettings& t) {
  const ConfigNode epochs = node["epochs"];
  if (!epochs.valid()) return ok_status();
  SY_ASSIGN_OR_RETURN(const std::string text, epochs.as_string());
  if (text == "auto") return ok_status();
  SY_ASSIGN_OR_RETURN(t.epochs, epochs.as_int());
  t.epochs_auto = false;
  return ok_status();
}

// train.epochs: auto without train.early_stopping: stop when the validation loss has not improved
// for kAutoPatience epochs (TrainConfig::for_task holds out the validation rows).
void auto_early_stopping(TrainSettings& t) {
  if (!t.epochs_auto || t.early_stopping.enabled) return;
  t.early_stopping.enabled = true;
  t.early_stopping.patience = TrainSettings::kAutoPatience;
  t.monitor = MonitorSettings{};
}

Result<TrainSettings> read_train(const ConfigNode& node, const std::filesystem::path& base) {
  TrainSettings t;
  if (!node.valid()) {
    auto_early_stopping(t);
    return t;
  }
  SY_RETURN_IF_ERROR(read_epochs(node, t));
  SY_ASSIGN_OR_RETURN(t.batch_size, read_batch_size(node, t.batch_size));
  SY_ASSIGN_OR_RETURN(t.gradient_accumulation_steps, node.int_or("gradient_accumulation_steps", 1));
  SY_ASSIGN_OR_RETURN(const std::string checkpoint, node.string_or("checkpoint", ""));
  SY_ASSIGN_OR_RETURN(const std::string resume, node.string_or("resume", ""));
  SY_ASSIGN_OR_RETURN(const std::string export_weights, node.string_or("export", ""));
  t.checkpoint = resolve(base, checkpoint);
  t.resume = resolve(base, resume);
  t.export_weights = resolve(base, export_weights);
  SY_ASSIGN_OR_RETURN(t.checkpoint_every, node.int_or("checkpoint_every", 1));
  SY_ASSIGN_OR_RETURN(t.precision, read_precision(node));
  SY_ASSIGN_OR_RETURN(t.empty_cache_interval, node.int_or("empty_cache_interval", 0));
  SY_ASSIGN_OR_RETURN(t.progress, read_progress(node));
  SY_ASSIGN_OR_RETURN(const std::string capture, node.string_or("capture", "auto"));
  Result<CaptureMode> capture_mode = parse_capture_mode(capture);
  if (!capture_mode.ok()) return node["capture"].error(capture_mode.status().message());
  t.capture = *capture_mode;
  SY_RETURN_IF_ERROR(read_early_stopping(node["early_stopping"], t));
  SY_RETURN_IF_ERROR(read_best_checkpoint(node, base, t));
  // After the best checkpoint: auto's early stopping writes no model.best.ckpt unless asked.
  auto_early_stopping(t);
  if (t.epochs < 1) return node["epochs"].error("must be >= 1");
  if (t.gradient_accumulation_steps < 1) {
    return node["gradient_accumulation_steps"].error("must be >= 1");
  }
  if (t.checkpoint_every < 1) return node["checkpoint_every"].error("must be >= 1");
  return t;
}

// A validation metric needs a validation split: without one, early stopping or a best checkpoint
// would have nothing to judge by (and choosing by the test split would leak it into training).
Status check_monitor_has_data(const ConfigNode& root, const TrainConfig& c) {
  const TrainSettings& t = c.train;
  // train.epochs: auto's own early stopping brings its validation split when training.
  if (t.epochs_auto && !root["train"]["early_stopping"].valid() && t.best_checkpoint.empty()) {
    return ok_status();
  }
  const bool monitored = t.early_stopping.enabled || !t.best_checkpoint.empty();
  if (!monitored || c.data.validation_fraction > 0 || t.monitor.metric.rfind("val_", 0) != 0) {
    return ok_status();
  }
  const std::string why = t.monitor.metric +
                          ", which is measured on the validation split, and there is none: set "
                          "data.validation_fraction (e.g. 0.1)";
  const ConfigNode early = root["train"]["early_stopping"];
  if (t.early_stopping.enabled) {
    const ConfigNode at = early["metric"].valid() ? early["metric"] : early;
    return at.error("early stopping monitors " + why + ", or monitor train_loss");
  }
  return root["train"]["best_checkpoint"].error("the best checkpoint is chosen by " + why +
                                                ", or name another metric in train.early_stopping");
}

// `loss:` and `loss_options:`. Regression data (data.targets, data.series) has no classes for
// cross_entropy, the default: that is an error naming the key rather than a silent switch.
Result<LossSettings> read_loss(const ConfigNode& root, const DataSettings& data) {
  SY_ASSIGN_OR_RETURN(const std::string name, root.string_or("loss", "cross_entropy"));
  auto kind = parse_loss_kind(name);
  if (!kind.ok()) return root["loss"].error(kind.status().message());
  LossSettings loss(*kind);
  const ConfigNode options = root["loss_options"];
  SY_ASSIGN_OR_RETURN(loss.beta, options.double_or("beta", loss.beta));
  SY_ASSIGN_OR_RETURN(loss.delta, options.double_or("delta", loss.delta));
  if (options["beta"].valid() && loss.kind != LossKind::kSmoothL1) {
    return options["beta"].error("beta is smooth_l1's; the loss is " + name);
  }
  if (options["delta"].valid() && loss.kind != LossKind::kHuber) {
    return options["delta"].error("delta is huber's; the loss is " + name);
  }
  if (data.is_regression() && loss.kind == LossKind::kCrossEntropy) {
    const std::string why = "cross_entropy needs classes, but " +
                            std::string(data.series.enabled ? "data.series" : "data.targets") +
                            " asks for numbers (regression): set loss: mse, l1, smooth_l1 or huber";
    if (root["loss"].valid()) return root["loss"].error(why);
    return invalid_argument(root["data"].location().to_string() + ": loss is not set, and " + why);
  }
  return loss;
}

// Regression has no accuracy and classification no RMSE: a metric the run never measures would
// never improve, so early stopping would end the run after `patience` epochs for nothing.
Status check_monitor_fits_task(const ConfigNode& root, const TrainConfig& c) {
  const std::string& metric = c.train.monitor.metric;
  const bool value_metric = metric == "val_rmse" || metric == "val_mae" || metric == "val_r2";
  const bool class_metric =
      metric == "val_accuracy" || metric == "val_f1_macro" || metric == "train_accuracy";
  if (c.data.is_regression() ? !class_metric : !value_metric) return ok_status();
  const std::string why = c.data.is_regression()
                              ? " is measured on classes, and this run predicts numbers "
                                "(regression): monitor val_loss, val_rmse, val_mae or val_r2"
                              : " is measured on numbers to predict (data.targets, data.series), "
                                "and this run predicts classes";
  return root["train"]["early_stopping"]["metric"].error(metric + why);
}

}  // namespace

Result<std::string> configured_task(const Config& config) {
  const ConfigNode root = config.root();
  if (root["task"].valid()) return root["task"].as_string();
  const bool only_predict = root["predict"].valid() && !root["data"].valid() &&
                            !root["model"].valid() && !root["train"].valid();
  return std::string(only_predict ? "predict" : "train");
}

std::vector<LayerSpec> default_model_layers() {
  std::vector<LayerSpec> layers(3);
  layers[0].type = "linear";
  layers[0].out_features = 64;
  layers[1].type = "relu";
  layers[2].type = "linear";
  layers[2].out_features = 0;  // one output per class
  return layers;
}

std::string describe_default_model() {
  return "linear(64), relu, linear(one output per class)";
}

Result<ModelSpec> ModelSpec::from_config(const ConfigNode& model_section) {
  ModelSpec spec;
  if (!model_section.valid()) return spec;
  SY_ASSIGN_OR_RETURN(const std::string init, model_section.string_or("init", "kaiming"));
  if (init == "kaiming")
    spec.init = InitScheme::kKaimingUniform;
  else if (init == "xavier")
    spec.init = InitScheme::kXavierUniform;
  else
    return model_section["init"].error("unknown init '" + init + "' (expected kaiming, xavier)");
  const ConfigNode layers = model_section["layers"];
  if (layers.valid()) {
    for (const ConfigNode& item : layers.items()) {
      SY_ASSIGN_OR_RETURN(LayerSpec layer, read_layer(item));
      spec.layers.push_back(std::move(layer));
    }
  }
  return spec;
}

Result<TrainConfig> TrainConfig::from_config(const Config& config) {
  SY_ASSIGN_OR_RETURN(const std::string task, configured_task(config));
  return for_task(config, task);
}

Result<TrainConfig> TrainConfig::for_task(const Config& config, const std::string& task) {
  TrainConfig c;
  const ConfigNode root = config.root();
  c.base_dir = config.directory();
  // As a path that stays valid from another folder (run.json, switchyard report); text given in
  // memory keeps its display name ("<yaml text>").
  std::error_code error;
  c.config_file = std::filesystem::is_regular_file(config.file(), error)
                      ? std::filesystem::absolute(config.file(), error).lexically_normal().string()
                      : config.file();
  c.seed = config.runtime().seed;
  c.deterministic = config.runtime().deterministic;
  SY_ASSIGN_OR_RETURN(c.data, DataSettings::from_config(root["data"]));
  SY_ASSIGN_OR_RETURN(c.model, ModelSpec::from_config(root["model"]));
  if (const ConfigNode model = root["model"]; model.valid()) {
    SY_ASSIGN_OR_RETURN(const std::string weights, model.string_or("weights", ""));
    c.model.weights = resolve(c.base_dir, weights);
  }
  // Predicting and evaluating take the model (and how to read data) from the checkpoint.
  if (task == "train" && c.data.dataset.empty()) {
    const ConfigNode data = root["data"];
    return invalid_argument((data.valid() ? data.location().to_string() : config.file()) +
                            ": data.dataset is missing; training needs data: a CSV file "
                            "(dataset: flowers.csv) or a built-in set by name (dataset: digits, "
                            "iris or breast_cancer)");
  }
  if (task == "train" && !root["model"].valid()) {
    c.model.layers = default_model_layers();  // the run prints which model it used
    c.model.is_default = true;
  }
  if (task == "train" && c.model.layers.empty()) {
    const ConfigNode layers = root["model"]["layers"];
    const std::string where = layers.valid() ? layers.location().to_string() : config.file();
    return invalid_argument(where + ": model.layers is " + (layers.valid() ? "empty" : "missing") +
                            "; training needs a model, e.g. layers: [{type: linear, "
                            "out_features: 10}]");
  }
  SY_ASSIGN_OR_RETURN(c.loss, read_loss(root, c.data));
  // A table's target of numbers trains as a regression when the file does not say otherwise.
  c.data.detect_regression = task == "train" && !root["loss"].valid() && !c.data.is_regression() &&
                             c.data.image_shape.empty();
  SY_ASSIGN_OR_RETURN(c.optimizer, read_optimizer(root["optimizer"]));
  SY_ASSIGN_OR_RETURN(c.schedule, read_schedule(root["schedule"]));
  SY_ASSIGN_OR_RETURN(c.train, read_train(root["train"], c.base_dir));
  // train.epochs: auto judges each epoch on held-out rows the file did not ask for: 10% of the
  // training split, said in the run's defaults line (and dropped, with a note, when the split is
  // too small to spare them).
  if (c.train.epochs_auto && task == "train" && c.data.validation_fraction == 0 &&
      c.train.monitor.metric.rfind("val_", 0) == 0) {
    c.data.validation_fraction = TrainSettings::kAutoValidationFraction;
    c.data.validation_is_default = true;
  }
  const ConfigNode distributed = root["distributed"];
  SY_ASSIGN_OR_RETURN(c.distributed.timeout_s,
                      distributed.double_or("timeout_s", c.distributed.timeout_s));
  SY_ASSIGN_OR_RETURN(c.distributed.bucket_cap_mb,
                      distributed.double_or("bucket_cap_mb", c.distributed.bucket_cap_mb));
  SY_RETURN_IF_ERROR(check_monitor_has_data(root, c));
  SY_RETURN_IF_ERROR(check_monitor_fits_task(root, c));
  return c;
}

}  // namespace switchyard
