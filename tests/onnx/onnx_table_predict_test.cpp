// A model trained on a CSV table and exported to ONNX predicts that table's new rows as its
// checkpoint does: `switchyard predict model.onnx new.csv` and `switchyard predict model.ckpt
// new.csv` read the columns by name, keep the id, skip the target when it is absent, name the
// classes, and write the same file.
#include <catch2/catch.hpp>

#include <sstream>

#include "onnx/onnx_test_support.h"
#include "switchyard/onnx.h"
#include "switchyard/predict.h"
#include "test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

const std::string kEnv = "SWITCHYARD_PLUGIN_PATH= SWITCHYARD_BACKENDS=reference ";

// `rows` with its columns in the order of `order` (indices into the original header).
std::string reordered(const std::vector<std::vector<std::string>>& rows,
                      const std::vector<size_t>& order, size_t count) {
  std::string text;
  for (size_t r = 0; r < rows.size() && r < count; ++r) {
    for (size_t k = 0; k < order.size(); ++k) text += (k ? "," : "") + rows[r][order[k]];
    text += "\n";
  }
  return text;
}

CommandResult predict(const std::filesystem::path& model, const std::filesystem::path& rows,
                      const std::filesystem::path& out) {
  return run_command(kEnv + cli() + " predict " + model.string() + " " + rows.string() + " -o " +
                     out.string());
}

// Trains `config` (a YAML text) in `dir` with a checkpoint and an ONNX export; fails the test
// when the run fails.
void train_with_export(const TempDir& dir, const std::string& config) {
  write_text(dir / "train.yaml", config +
                                     "train:\n  epochs: 4\n  batch_size: 16\n  progress: none\n"
                                     "  checkpoint: m.ckpt\n  export: m.onnx\n");
  const CommandResult run = run_command(kEnv + cli() + " run " + (dir / "train.yaml").string());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
}

std::string metadata(const onnx::ModelProto& model, const std::string& key) {
  for (const auto& entry : model.metadata_props()) {
    if (entry.key() == key) return entry.value();
  }
  return "(missing)";
}

}  // namespace

TEST_CASE("an ONNX export predicts a table's new rows as its checkpoint does, by column name",
          "[onnx][cli][table]") {
  TempDir dir;
  const std::string source = std::string(SWITCHYARD_SOURCE_DIR) + "/data/iris-species.csv";
  train_with_export(dir, "data:\n  dataset: " + source +
                             "\n  target: species\n  id: id\n  scale: standard\n"
                             "model:\n  layers:\n    - {type: linear, out_features: 8}\n"
                             "    - {type: relu}\n    - {type: linear, out_features: 3}\n"
                             "optimizer: {type: adam, lr: 0.01}\n");
  // export_onnx from a Predictor keeps the same layout as train.export.
  const TrainConfig config = value_or_throw(
      TrainConfig::from_config(value_or_throw(Config::load_file(dir / "train.yaml"))));
  Predictor predictor(config, dir / "m.ckpt", test_device());
  REQUIRE(export_onnx(dir / "p.onnx", predictor).ok());
  const std::string table = metadata(read_model(dir / "m.onnx"), "switchyard.table");
  CHECK_THAT(table, Catch::Contains("\"column_names\":[\"id\",\"sepal_length_cm\""));
  CHECK(metadata(read_model(dir / "p.onnx"), "switchyard.table") == table);
  CHECK(metadata(read_model(dir / "m.onnx"), "switchyard.class_names") ==
        "[\"setosa\",\"versicolor\",\"virginica\"]");

  const auto rows = csv_rows(read_text(source));
  // Columns: id 0, four measurements 1-4, species 5. The new file puts the label in the middle
  // and the id last, so that reading by position would take the id for a feature.
  write_text(dir / "labeled.csv", reordered(rows, {3, 1, 5, 4, 2, 0}, 41));
  write_text(dir / "unlabeled.csv", reordered(rows, {4, 2, 1, 3, 0}, 41));
  for (const char* input : {"labeled.csv", "unlabeled.csv"}) {
    SECTION(input) {
      const CommandResult from_checkpoint = predict(dir / "m.ckpt", dir / input, dir / "a.csv");
      const CommandResult from_onnx = predict(dir / "m.onnx", dir / input, dir / "b.csv");
      INFO(from_checkpoint.output);
      INFO(from_onnx.output);
      REQUIRE(from_checkpoint.exit_code == 0);
      REQUIRE(from_onnx.exit_code == 0);
      const std::string expected = read_text(dir / "a.csv");
      // On the reference backend the exported graph computes the checkpoint's numbers exactly.
      CHECK(read_text(dir / "b.csv") == expected);
      const auto predicted = csv_rows(expected);
      REQUIRE(predicted.size() == 41);
      const bool labeled = std::string(input) == "labeled.csv";
      CHECK(predicted[0][0] == "id");
      CHECK(predicted[0].back() == "p_virginica");
      CHECK(predicted[1][0] == "1");  // the id column's value, not the row's line
      CHECK(predicted[1][labeled ? 2 : 1] == "setosa");
      if (labeled) {
        CHECK(predicted[1][1] == "setosa");
        CHECK_THAT(from_onnx.output, Catch::Contains("accuracy"));
      } else {
        CHECK_THAT(from_onnx.output, Catch::Contains("without labels"));
      }
    }
  }
}

TEST_CASE("an ONNX regression export names its targets and reads its columns by name",
          "[onnx][cli][table]") {
  TempDir dir;
  const std::string source = std::string(SWITCHYARD_SOURCE_DIR) + "/data/diabetes.csv";
  train_with_export(dir, "data:\n  dataset: " + source +
                             "\n  targets: [progression]\n  scale: standard\n"
                             "model:\n  layers:\n    - {type: linear, out_features: 8}\n"
                             "    - {type: relu}\n    - {type: linear, out_features: 1}\n"
                             "loss: mse\noptimizer: {type: adam, lr: 0.01}\n");
  const auto rows = csv_rows(read_text(source));
  // age 0 ... s6 9, progression 10: the target first, the features backwards.
  write_text(dir / "new.csv", reordered(rows, {10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, 31));
  const CommandResult from_checkpoint = predict(dir / "m.ckpt", dir / "new.csv", dir / "a.csv");
  const CommandResult from_onnx = predict(dir / "m.onnx", dir / "new.csv", dir / "b.csv");
  INFO(from_checkpoint.output);
  INFO(from_onnx.output);
  REQUIRE(from_checkpoint.exit_code == 0);
  REQUIRE(from_onnx.exit_code == 0);
  const std::string expected = read_text(dir / "a.csv");
  CHECK(expected.rfind("line,progression,predicted_progression\n", 0) == 0);
  CHECK(read_text(dir / "b.csv") == expected);
}

TEST_CASE(
    "a YAML data key that contradicts an ONNX export's table, or damaged table metadata, "
    "is an error naming the model",
    "[onnx][cli][table]") {
  TempDir dir;
  const std::string source = std::string(SWITCHYARD_SOURCE_DIR) + "/data/iris-species.csv";
  train_with_export(dir, "data:\n  dataset: " + source + "\n  target: species\n  id: id\n");
  write_text(dir / "p.yaml", "task: predict\ndata: {id: sepal_length_cm}\npredict:\n  model: " +
                                 (dir / "m.onnx").string() + "\n  input: " + source + "\n");
  const CommandResult contradiction =
      run_command(kEnv + cli() + " run " + (dir / "p.yaml").string());
  CHECK(contradiction.exit_code == 2);
  CHECK_THAT(contradiction.output,
             Catch::Contains("data.id 'sepal_length_cm' contradicts " + (dir / "m.onnx").string() +
                             ", which was trained with 'id'"));

  onnx::ModelProto model = read_model(dir / "m.onnx");
  bool found = false;
  for (auto& entry : *model.mutable_metadata_props()) {
    if (entry.key() != "switchyard.table") continue;
    entry.set_value(entry.value().substr(0, entry.value().size() / 2));
    found = true;
  }
  REQUIRE(found);
  write_model(dir / "cut.onnx", model);
  const CommandResult damaged = predict(dir / "cut.onnx", source, dir / "c.csv");
  CHECK(damaged.exit_code != 0);
  CHECK_THAT(damaged.output, Catch::Contains((dir / "cut.onnx").string() +
                                             ": metadata switchyard.table is malformed"));
}
