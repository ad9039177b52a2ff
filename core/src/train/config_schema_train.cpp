// The training and prediction sections of the configuration schema: loss, optimizer, schedule,
// train, predict and distributed, owned here, by the layer that reads them, and registered with
// the runtime's schema (ConfigSection, runtime/config_schema.h).
#include "runtime/config_schema_parts.h"

namespace switchyard::config_schema {
namespace {

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
      {"capture",
       one_of({"auto", "on", "off"}),
       kOptional,
       {"Capture and replay of whole training steps: forward, backward and the optimizer's "
        "update (docs/capture.md). on records each batch shape's step the second time it is seen "
        "and replays it from the third; auto is on where the backend replays natively (vulkan, "
        "cuda: one submission per step) and off elsewhere.",
        "auto", "on"}},
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
      {"capture",
       one_of({"auto", "on", "off"}),
       kOptional,
       {"Capture and replay of an ONNX model's forward pass (docs/capture.md): on records the "
        "pass the second time its input shapes are seen and replays its ops from the third (as "
        "one submission where the backend replays natively: vulkan, cuda); off runs every pass "
        "eagerly; auto is on.",
        "auto", "on"}},
  });
}

}  // namespace

const ConfigSection kLossSection(30, [] {
  return SchemaField{
      "loss",
      one_of({"cross_entropy", "mse", "l1", "smooth_l1", "huber", "bce_with_logits"}),
      kOptional,
      {"The loss minimised while training (regression needs one other than cross_entropy).",
       "cross_entropy", "mse"}};
});
const ConfigSection kLossOptionsSection(40, [] {
  return SchemaField{"loss_options",
                     loss_options_schema(),
                     kOptional,
                     {"The parameters of smooth_l1 and huber.", "", ""}};
});
const ConfigSection kOptimizerSection(50, [] {
  return SchemaField{
      "optimizer", optimizer_schema(), kOptional, {"How the weights are updated.", "", ""}};
});
const ConfigSection kScheduleSection(60, [] {
  return SchemaField{"schedule",
                     schedule_schema(),
                     kOptional,
                     {"How the learning rate changes over epochs.", "", ""}};
});
const ConfigSection kTrainSection(70, [] {
  return SchemaField{"train",
                     train_schema(),
                     kOptional,
                     {"The training loop: epochs, batches, checkpoints.", "", ""}};
});
const ConfigSection kPredictSection(80, [] {
  return SchemaField{"predict",
                     predict_schema(),
                     kOptional,
                     {"Prediction and evaluation with a trained checkpoint.", "", ""}};
});
const ConfigSection kDistributedSection(90, [] {
  return SchemaField{
      "distributed",
      distributed_schema(),
      kOptional,
      {"Data-parallel training across the ranks of `mpirun -np N` (docs/distributed.md).", "", ""}};
});
}  // namespace switchyard::config_schema
