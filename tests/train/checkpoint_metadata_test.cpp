// Checkpoint content version 2: a training checkpoint keeps the layers, the loss and how its table
// was read, so a Predictor needs nothing else; damaged metadata is DATA_LOSS naming the file.
#include <catch2/catch.hpp>

#include "model/train_state.h"
#include "switchyard/checkpoint.h"
#include "switchyard/predict.h"
#include "train/trainer_test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

// Two well separated classes of 3 features, with an id column and the label in the middle.
std::string two_class_csv() {
  std::string csv = "id,a,kind,b,c\n";
  for (int row = 0; row < 40; ++row) {
    const bool big = row % 2 == 1;
    const std::string value = big ? "3" : "-3";
    csv += "r" + std::to_string(row) + "," + value + "," + (big ? "big" : "small") + "," + value +
           "," + std::to_string(row % 5) + "\n";
  }
  return csv;
}

}  // namespace

TEST_CASE("a training checkpoint keeps the layers, the loss and the table layout",
          "[checkpoint][metadata]") {
  TempDir dir;
  write_text(dir / "t.csv", two_class_csv());
  const std::string yaml = "seed: 1\ndata: {dataset: " + (dir / "t.csv").string() +
                           ", target: kind, id: id, drop: [c], label_order: first_seen}\n"
                           "model: {layers: [{type: linear, out_features: 4}, {type: tanh}, "
                           "{type: dropout, p: 0.25}, {type: linear, out_features: 2}]}\n"
                           "loss: mse\noptimizer: {type: adam, lr: 0.05}\n"
                           "train: {epochs: 3, batch_size: 8, progress: none}\n";
  Trainer trainer(train_config_from(yaml), reference_device());
  trainer.run();
  const Checkpoint checkpoint = trainer.make_checkpoint();
  CHECK(value_or_throw(checkpoint.get_u64("meta/content_version")) == 2);
  CHECK(value_or_throw(checkpoint.get_string("model/loss")) == "mse");
  const ModelSpec spec = value_or_throw(detail::get_model_spec(checkpoint));
  REQUIRE(spec.layers.size() == 4);
  CHECK(spec.layers[0].out_features == 4);
  CHECK(spec.layers[1].type == "tanh");
  CHECK(spec.layers[2].p == 0.25);
  CHECK(detail::model_spec_summary(spec) ==
        "[{\"type\":\"linear\",\"out_features\":4}, {\"type\":\"tanh\"}, "
        "{\"type\":\"dropout\",\"p\":0.25}, {\"type\":\"linear\",\"out_features\":2}]");
  CHECK(value_or_throw(detail::get_loss(checkpoint)).kind == LossKind::kMse);
  const detail::DataLayout layout = value_or_throw(detail::get_data_layout(checkpoint));
  REQUIRE(layout.has_table);
  CHECK(layout.class_names == std::vector<std::string>{"small", "big"});
  CHECK(layout.table.header == "names");
  CHECK(layout.table.delimiter == ',');
  CHECK(layout.table.column_names == std::vector<std::string>{"id", "a", "kind", "b", "c"});
  CHECK(layout.table.target_column == 2);
  CHECK(layout.table.id_column == 0);
  CHECK(layout.table.feature_columns == std::vector<int64_t>{1, 3});
  CHECK(layout.table.dropped_columns == std::vector<int64_t>{4});
  CHECK(layout.settings.target == "kind");
  CHECK(layout.settings.drop == std::vector<std::string>{"c"});
  CHECK(layout.settings.label_order == LabelOrder::kFirstSeen);

  // The Predictor builds the model from the checkpoint alone (no layers in its config) and reads
  // new rows, reordered and unlabeled, as the training rows were read.
  REQUIRE(write_checkpoint(dir / "t.ckpt", checkpoint).ok());
  write_text(dir / "new.csv", "b,id,a\n3,n1,3\n-3,n2,-3\n");
  TrainConfig bare;
  Predictor predictor(bare, dir / "t.ckpt", reference_device());
  PredictSettings settings;
  settings.input = (dir / "new.csv").string();
  const Dataset input = value_or_throw(load_prediction_input(settings, {}, {}, predictor));
  const Predictions predictions = predictor.predict(input, 16);
  CHECK_FALSE(predictions.labeled);
  CHECK(predictions.predicted == std::vector<int64_t>{1, 0});
  CHECK(predictions.ids == std::vector<std::string>{"n1", "n2"});
  CHECK(predictions.id_name == "id");
  CHECK(predictions.loss == 0);
}

TEST_CASE("damaged version-2 records are DATA_LOSS naming the checkpoint and the record",
          "[checkpoint][metadata]") {
  const auto damaged = [](const std::string& key, const std::string& value) {
    Checkpoint checkpoint;
    checkpoint.put_string(key, value);
    checkpoint.put_string("model/init", "kaiming");
    return parse_checkpoint(serialize_checkpoint(checkpoint), "bad.ckpt").value();
  };
  const auto layers_error = [&](const std::string& text) {
    return detail::get_model_spec(damaged("model/layers", text)).status();
  };
  const Status not_json = layers_error("[{\"type\":");
  CHECK(not_json.code() == StatusCode::kDataLoss);
  CHECK(not_json.message().rfind("checkpoint bad.ckpt: record 'model/layers' is malformed: ", 0) ==
        0);
  const std::string layer =
      R"({"type":"linear","out_features":99999999999,"out_channels":0,"kernel_size":0,)"
      R"("stride":0,"padding":0,"dilation":1,"bias":true,"p":0.5,"eps":1e-05})";
  CHECK(layers_error("[" + layer + "]").message() ==
        "checkpoint bad.ckpt: record 'model/layers' is malformed: 'out_features' is 99999999999");
  CHECK(layers_error("[]").message() ==
        "checkpoint bad.ckpt: record 'model/layers' lists no layer");
  std::string huge_float = layer;
  huge_float.replace(huge_float.find("99999999999"), 11, "1e300");
  CHECK(layers_error("[" + huge_float + "]").message() ==
        "checkpoint bad.ckpt: record 'model/layers' is malformed: a count is not an integer");
  Checkpoint no_layers;
  no_layers.set_source("old.ckpt");
  const Status old = detail::get_model_spec(no_layers).status();
  CHECK(old.code() == StatusCode::kFailedPrecondition);
  CHECK(old.message().rfind("checkpoint old.ckpt holds no model description", 0) == 0);

  detail::DataLayout layout;
  Checkpoint table = damaged("data/table", R"({"delimiter":",","header":"names"})");
  const Status missing_member = detail::get_table(table, layout);
  CHECK(missing_member.code() == StatusCode::kDataLoss);
  CHECK(missing_member.message().rfind("checkpoint bad.ckpt: record 'data/table' is malformed",
                                       0) == 0);
  CHECK_FALSE(layout.has_table);
}

TEST_CASE(
    "layer sizes from a damaged checkpoint that exceed the memory budget are refused "
    "naming it, before the parameters are allocated",
    "[checkpoint][metadata][bad-input]") {
  TempDir dir;
  write_text(dir / "t.csv", two_class_csv());
  const std::string yaml = "seed: 1\ndata: {dataset: " + (dir / "t.csv").string() +
                           ", target: kind, id: id, drop: [c]}\n"
                           "model: {layers: [{type: linear, out_features: 4}, {type: tanh}, "
                           "{type: linear, out_features: 2}]}\n"
                           "train: {epochs: 1, batch_size: 8, progress: none}\n";
  Trainer trainer(train_config_from(yaml), reference_device());
  trainer.run();
  Checkpoint checkpoint = trainer.make_checkpoint();
  // Sizes within the checkpoint's own bounds (2^20 per layer), whose product is not: a hidden
  // layer of 2^20 then another of 2^20 is 2^40 weights, 4 TiB.
  std::string layers = value_or_throw(checkpoint.get_string("model/layers"));
  const std::string four = "\"out_features\":4";
  REQUIRE(layers.find(four) != std::string::npos);
  const size_t begin = layers.rfind('{', layers.find(four));
  const size_t end = layers.find('}', begin) + 1;
  std::string big = layers.substr(begin, end - begin);
  big.replace(big.find(four), four.size(), "\"out_features\":1048576");
  layers.replace(begin, end - begin, big + "," + big);
  checkpoint.put_string("model/layers", layers);
  const std::filesystem::path path = dir / "damaged.ckpt";
  REQUIRE(write_checkpoint(path, checkpoint).ok());
  TrainConfig bare;
  try {
    Predictor predictor(bare, path, reference_device());
    FAIL("a 4 TiB model was built");
  } catch (const Error& error) {
    INFO(error.status().message());
    CHECK(error.status().code() == StatusCode::kResourceExhausted);
    CHECK_THAT(error.status().message(),
               Catch::Contains(path.string()) && Catch::Contains("exceed the memory budget") &&
                   Catch::Contains("the model's parameters (up to one of [1048576, 1048576])"));
  }
}
