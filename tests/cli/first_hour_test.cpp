// The first hour with switchyard (issue 18): the user's own CSV file with a header, an id column
// and string labels trains from a YAML file that names only the file, the target and the id; new
// rows without labels are predicted to class names from the checkpoint alone; no default is
// silent.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "json_test_support.h"
#include "switchyard/checkpoint.h"
#include "test_support.h"
#include "train/train_test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

const char* const kClasses[] = {"gamma", "alpha", "beta"};  // first seen: gamma, alpha, beta

// Feature `f` (0..11) of a sample of class `c` with noise `u` in [0, 1): each class has its own
// centre, 3 units away from the others in several features.
double feature(int c, int f, double u) {
  return ((f + c) % 3 == 0 ? 3.0 : 0.0) + (c == 2 && f > 8 ? -2.0 : 0.0) + u - 0.5;
}

// A small deterministic generator (the test must not depend on the platform's rand()).
struct Lcg {
  uint64_t state = 12345;
  double next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
  }
};

// 150 rows: "id,f1..f6,label,f7..f12" (the target in the middle, the id first).
std::string training_csv() {
  std::ostringstream csv;
  csv << "id,f1,f2,f3,f4,f5,f6,label,f7,f8,f9,f10,f11,f12\n";
  Lcg random;
  for (int row = 0; row < 150; ++row) {
    const int c = row % 3;
    csv << "row-" << row;
    for (int f = 0; f < 12; ++f) {
      if (f == 6) csv << "," << kClasses[c];
      csv << "," << feature(c, f, random.next());
    }
    csv << "\n";
  }
  return csv.str();
}

// New rows without labels, their columns in another order: "f12,...,f1,id".
std::string new_rows_csv(const std::vector<int>& classes) {
  std::ostringstream csv;
  csv << "f12,f11,f10,f9,f8,f7,f6,f5,f4,f3,f2,f1,id\n";
  for (size_t row = 0; row < classes.size(); ++row) {
    for (int f = 11; f >= 0; --f) csv << feature(classes[row], f, 0.5) << ",";
    csv << "new-" << row << "\n";
  }
  return csv.str();
}

std::vector<std::string> split(const std::string& line, char delimiter = ',') {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  for (std::string field; std::getline(stream, field, delimiter);) fields.push_back(field);
  return fields;
}

std::vector<std::string> lines_of(const std::string& text) {
  return split(text, '\n');
}

// `command` run in `dir` on the reference backend; stdout only when `stdout_only`.
CommandResult run_in(const TempDir& dir, const std::string& arguments, bool stdout_only = false) {
  const std::string command =
      "cd " + dir.path().string() +
      " && SWITCHYARD_BACKENDS=reference SWITCHYARD_PLUGIN_PATH=" + SWITCHYARD_TEST_PLUGIN_DIR +
      " " + cli() + " " + arguments;
  return run_command(stdout_only ? "(" + command + " 2>/dev/null)" : command);
}

// Checks one predictions CSV (header and rows) against the classes the rows were made from.
void check_predictions(const std::string& csv, const std::vector<int>& classes) {
  const auto lines = lines_of(csv);
  REQUIRE(lines.size() == classes.size() + 1);
  CHECK(lines[0] == "id,predicted,probability,p_alpha,p_beta,p_gamma");
  for (size_t row = 0; row < classes.size(); ++row) {
    const auto fields = split(lines[row + 1]);
    REQUIRE(fields.size() == 6);
    CHECK(fields[0] == "new-" + std::to_string(row));
    CHECK(fields[1] == kClasses[classes[row]]);
    const double probability = std::stod(fields[2]);
    const int column = fields[1] == "alpha" ? 3 : fields[1] == "beta" ? 4 : 5;
    CHECK(probability == std::stod(fields[static_cast<size_t>(column)]));
    CHECK(probability > 0.5);
    CHECK(std::abs(std::stod(fields[3]) + std::stod(fields[4]) + std::stod(fields[5]) - 1.0) <
          1e-4);
  }
}

}  // namespace

TEST_CASE(
    "the first hour: own CSV with a header, an id and string labels, then new rows "
    "predicted from the checkpoint alone",
    "[cli][first-hour]") {
  TempDir dir;
  write_text(dir / "flowers.csv", training_csv());
  const std::vector<int> classes = {0, 1, 2, 2, 1, 0};
  write_text(dir / "new.csv", new_rows_csv(classes));
  write_text(dir / "first.yaml", "data:\n  dataset: flowers.csv\n  target: label\n  id: id\n");

  const auto trained = run_in(dir, "run first.yaml --metrics m.json");
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  // Every default the run used is said, once.
  CHECK(contains(trained.output,
                 "model: the file has no model section; using the default model linear(64), "
                 "relu, linear(one output per class) (model.layers chooses another)\n"));
  CHECK(contains(trained.output,
                 "checkpoint: runs/first/model.ckpt (train.checkpoint is not "
                 "set: the model is kept there, under the current folder;"));
  CHECK(contains(trained.output,
                 "defaults (not in the file): task: train, seed: 0, data.test_fraction: 0.2, "
                 "data.split_seed: 0, data.scale: standard (a table), loss: cross_entropy (mse for "
                 "a target of numbers), "
                 "model.init: kaiming, optimizer.type: adam, optimizer.lr: 0.001, train.epochs: "
                 "auto (up to 200, early stopping on val_loss with patience 10), "
                 "train.batch_size: 64, data.validation_fraction: 0.1 (held out for "
                 "train.epochs: auto)\n"));
  CHECK(contains(trained.output, "data: classes (data.label_order: sorted): alpha, beta, gamma\n"));
  CHECK(contains(trained.output, "trained input[12] linear(12->64,bias) relu linear(64->3,bias)"));
  REQUIRE(std::filesystem::exists(dir / "runs" / "first" / "model.ckpt"));
  const Json metrics = read_json_file(dir / "m.json");
  CHECK(metrics.at("test_accuracy").get<double>() >= 0.9);

  // The checkpoint alone: no YAML file, new rows without a label column, columns reordered.
  const auto predicted = run_in(dir, "predict runs/first/model.ckpt new.csv", true);
  INFO(predicted.output);
  REQUIRE(predicted.exit_code == 0);
  check_predictions(predicted.output, classes);
  const auto report = run_in(dir, "predict runs/first/model.ckpt new.csv");
  CHECK(contains(report.output, "new.csv: 6 samples without labels (no accuracy)"));
  CHECK_FALSE(contains(report.output, "accuracy 0"));

  // -o writes the same rows to a file; standard output then carries the report only.
  const auto to_file = run_in(dir, "predict runs/first/model.ckpt new.csv -o out/p.csv", true);
  REQUIRE(to_file.exit_code == 0);
  check_predictions(read_text(dir / "out" / "p.csv"), classes);
  CHECK(contains(to_file.output, "predictions: " + (dir / "out" / "p.csv").string()));
  CHECK_FALSE(contains(to_file.output, "id,predicted"));
}

TEST_CASE("predict: labeled rows print the accuracy; evaluate refuses rows without labels",
          "[cli][first-hour]") {
  TempDir dir;
  write_text(dir / "flowers.csv", training_csv());
  write_text(dir / "t.yaml",
             "data: {dataset: flowers.csv, target: label, id: id}\n"
             "model: {layers: [{type: linear, out_features: 3}]}\n"
             "optimizer: {type: adam, lr: 0.05}\ntrain: {epochs: 20, checkpoint: t.ckpt}\n");
  REQUIRE(run_in(dir, "run t.yaml").exit_code == 0);
  // The training file itself: labels by name, so the accuracy is printed and each row has its
  // label next to the prediction.
  const auto labeled = run_in(dir, "predict t.ckpt flowers.csv -o p.csv");
  INFO(labeled.output);
  REQUIRE(labeled.exit_code == 0);
  CHECK(contains(labeled.output, "flowers.csv: 150 samples, accuracy 1, loss "));
  const auto rows = lines_of(read_text(dir / "p.csv"));
  REQUIRE(rows.size() == 151);
  CHECK(rows[0] == "id,label,predicted,probability,p_alpha,p_beta,p_gamma");
  CHECK(rows[1].rfind("row-0,gamma,gamma,", 0) == 0);
  CHECK(rows[2].rfind("row-1,alpha,alpha,", 0) == 0);

  write_text(dir / "new.csv", new_rows_csv({0, 1}));
  write_text(dir / "e.yaml", "task: evaluate\npredict: {checkpoint: t.ckpt, input: new.csv}\n");
  const auto evaluate = run_in(dir, "run e.yaml");
  CHECK(evaluate.exit_code == 2);
  CHECK(contains(evaluate.output, "switchyard: error: evaluate needs labels, and " +
                                      (dir / "new.csv").string() + " has no target column"));
}

TEST_CASE(
    "a YAML file with only a predict section predicts; one that contradicts the "
    "checkpoint names both",
    "[cli][first-hour]") {
  TempDir dir;
  write_text(dir / "flowers.csv", training_csv());
  write_text(dir / "new.csv", new_rows_csv({1, 2}));
  write_text(dir / "t.yaml",
             "data: {dataset: flowers.csv, target: label, id: id}\n"
             "model: {layers: [{type: linear, out_features: 3}]}\n"
             "optimizer: {type: adam, lr: 0.05}\ntrain: {epochs: 20, checkpoint: t.ckpt}\n");
  REQUIRE(run_in(dir, "run t.yaml").exit_code == 0);

  write_text(dir / "p.yaml", "predict: {checkpoint: t.ckpt, input: new.csv}\n");
  const auto only_predict = run_in(dir, "run p.yaml", true);
  INFO(only_predict.output);
  REQUIRE(only_predict.exit_code == 0);
  check_predictions(only_predict.output, {1, 2});
  const auto said = run_in(dir, "run p.yaml");
  CHECK(contains(said.output,
                 "defaults (not in the file): task: predict (the file has only a "
                 "predict section), predict.batch_size: 256\n"));

  struct Contradiction {
    std::string yaml, where, says;
  };
  const std::vector<Contradiction> cases = {
      {"data: {target: f1}\n", ":2:16: key 'data.target': 'f1' contradicts checkpoint ",
       "which has target 'label'"},
      {"data: {drop: [f2]}\n", ":2:14: key 'data.drop': [f2] contradicts checkpoint ",
       "which has drop []"},
      {"data: {scale: none}\n", ":2:15: key 'data.scale': none contradicts checkpoint ",
       "which has scale standard"},
      {"model: {layers: [{type: linear, out_features: 4}]}\n",
       ":2:17: key 'model.layers': the layers contradict checkpoint ",
       "  checkpoint: [{\"type\":\"linear\",\"out_features\":3}]\n"
       "  YAML:       [{\"type\":\"linear\",\"out_features\":4}]"},
  };
  for (const auto& c : cases) {
    write_text(dir / "c.yaml",
               "task: predict\n" + c.yaml + "predict: {checkpoint: t.ckpt, input: new.csv}\n");
    const auto result = run_in(dir, "run c.yaml");
    INFO(c.yaml << result.output);
    CHECK(result.exit_code == 2);
    CHECK(contains(result.output,
                   "switchyard: error: c.yaml" + c.where + (dir / "t.ckpt").string() + ", "));
    CHECK(contains(result.output, c.says));
  }
  // Agreeing keys are fine: the target by name or by number, the same layers.
  write_text(dir / "same.yaml",
             "task: predict\ndata: {target: 8, id: id}\n"
             "model: {layers: [{type: linear, out_features: 3}]}\n"
             "predict: {checkpoint: t.ckpt, input: new.csv, output: same.csv}\n");
  const auto same = run_in(dir, "run same.yaml");
  INFO(same.output);
  CHECK(same.exit_code == 0);
  check_predictions(read_text(dir / "same.csv"), {1, 2});
}

TEST_CASE("no silent defaults: a missing dataset is an error, a kept-nowhere model says so",
          "[cli][first-hour]") {
  TempDir dir;
  write_text(dir / "nodata.yaml", "model: {layers: [{type: linear, out_features: 3}]}\n");
  const auto no_data = run_in(dir, "run nodata.yaml");
  CHECK(no_data.exit_code == 2);
  CHECK(contains(no_data.output,
                 "switchyard: error: nodata.yaml: data.dataset is missing; training needs data: a "
                 "CSV file (dataset: "
                 "flowers.csv) or a built-in set by name (dataset: digits, iris or "
                 "breast_cancer)\n"));
  write_text(dir / "emptydata.yaml", "data: {scale: standard}\n");
  const auto empty_data = run_in(dir, "run emptydata.yaml");
  CHECK(empty_data.exit_code == 2);
  CHECK(contains(empty_data.output, "emptydata.yaml:1:7: data.dataset is missing; training"));

  // Built-in sets only by name; train.checkpoint: none says the model is not kept.
  write_text(dir / "iris.yaml",
             "data: {dataset: iris}\nmodel: {layers: [{type: linear, out_features: 3}]}\n"
             "train: {epochs: 1, checkpoint: none, progress: none}\n");
  const auto none = run_in(dir, "run iris.yaml");
  INFO(none.output);
  CHECK(none.exit_code == 0);
  CHECK(contains(none.output,
                 "checkpoint: none (train.checkpoint: none): the trained model is not kept\n"));
  CHECK_FALSE(std::filesystem::exists(dir / "runs"));
  // The file gave everything the defaults line lists but these.
  CHECK(contains(none.output,
                 "defaults (not in the file): task: train, seed: 0, data.test_fraction: 0.2, "
                 "data.split_seed: 0, data.scale: standard (a table), loss: cross_entropy (mse for "
                 "a target of numbers), "
                 "model.init: kaiming, optimizer.type: adam, optimizer.lr: 0.001, "
                 "train.batch_size: 64\n"));
}

TEST_CASE(
    "a checkpoint without the new records predicts with a YAML model, or says what is "
    "missing; a damaged one is named",
    "[cli][first-hour]") {
  TempDir dir;
  write_text(dir / "two.csv", "1.0,2.0,0\n1.5,2.5,1\n2.0,2.5,1\n3.0,1.0,0\n4.0,2.0,1\n0.5,0.5,0\n");
  write_text(dir / "t.yaml",
             "data: {dataset: two.csv, test_fraction: 0.5}\n"
             "model: {layers: [{type: linear, out_features: 2}]}\n"
             "train: {epochs: 1, batch_size: 2, checkpoint: t.ckpt, progress: none}\n");
  REQUIRE(run_in(dir, "run t.yaml").exit_code == 0);
  // A version-1 checkpoint: the same records without those version 2 added.
  const Checkpoint full = value_or_throw(read_checkpoint(dir / "t.ckpt"));
  CHECK(value_or_throw(full.get_u64("meta/content_version")) == 2);
  Checkpoint old;
  for (const std::string& key : full.keys()) {
    if (key == "meta/content_version" || key.rfind("model/", 0) == 0 || key == "data/table") {
      continue;
    }
    old.put_bytes(key, value_or_throw(full.get_bytes(key)));
  }
  REQUIRE(write_checkpoint(dir / "old.ckpt", old).ok());
  const auto alone = run_in(dir, "predict old.ckpt two.csv");
  CHECK(alone.exit_code == 1);
  CHECK(contains(alone.output, "switchyard: error: checkpoint " + (dir / "old.ckpt").string() +
                                   " holds no model description (it was written before "
                                   "checkpoints kept model.layers); give model.layers"));
  write_text(dir / "old.yaml",
             "task: predict\nmodel: {layers: [{type: linear, out_features: 2}]}\n"
             "predict: {checkpoint: old.ckpt, input: two.csv, output: old.csv}\n");
  const auto with_yaml = run_in(dir, "run old.yaml");
  INFO(with_yaml.output);
  CHECK(with_yaml.exit_code == 0);
  const auto rows = lines_of(read_text(dir / "old.csv"));
  REQUIRE(rows.size() == 7);
  CHECK(rows[0] == "line,label,predicted,probability,p_0,p_1");
  CHECK(rows[1].rfind("1,0,", 0) == 0);

  // A damaged checkpoint is named, whatever reads it.
  std::string bytes = read_text(dir / "t.ckpt");
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x40);
  write_text(dir / "damaged.ckpt", bytes);
  const auto damaged = run_in(dir, "predict damaged.ckpt two.csv");
  CHECK(damaged.exit_code == 1);
  CHECK(contains(damaged.output, "switchyard: error: checkpoint " +
                                     (dir / "damaged.ckpt").string() + ": checksum mismatch"));
}

TEST_CASE("a model trained on a TSV file predicts CSV rows: the new file's delimiter is detected",
          "[cli][first-hour]") {
  TempDir dir;
  std::string tsv = training_csv();
  for (char& c : tsv) c = c == ',' ? '\t' : c;
  write_text(dir / "flowers.tsv", tsv);
  write_text(dir / "new.csv", new_rows_csv({2, 0}));
  write_text(dir / "t.yaml",
             "data: {dataset: flowers.tsv, delimiter: tab, target: label, id: id}\n"
             "model: {layers: [{type: linear, out_features: 3}]}\n"
             "optimizer: {type: adam, lr: 0.05}\ntrain: {epochs: 20, checkpoint: t.ckpt}\n");
  const auto trained = run_in(dir, "run t.yaml");
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  const auto predicted = run_in(dir, "predict t.ckpt new.csv", true);
  INFO(predicted.output);
  REQUIRE(predicted.exit_code == 0);
  check_predictions(predicted.output, {2, 0});
  std::string new_tsv = new_rows_csv({1});
  for (char& c : new_tsv) c = c == ',' ? '\t' : c;
  write_text(dir / "new.tsv", new_tsv);
  const auto from_tsv = run_in(dir, "predict t.ckpt new.tsv", true);
  REQUIRE(from_tsv.exit_code == 0);
  check_predictions(from_tsv.output, {1});
}
