// `switchyard run` on bad input (issue 17): no run that reads non-finite data or reaches a
// non-finite loss exits 0 unless the YAML asked for it, and errors name the path and the place.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "test_support.h"

using switchyard::testing::cli;
using switchyard::testing::contains;
using switchyard::testing::read_text;
using switchyard::testing::run_command;

namespace {

// A fresh folder for one test, removed afterwards.
class Folder {
 public:
  Folder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sy-bad-input-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) ? pattern : "";
  }
  ~Folder() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A linear model for `classes` classes of `dataset`, one epoch on the reference backend.
std::string yaml_for(const std::string& dataset, int classes = 2, const std::string& extra = "") {
  return "backends: [reference]\n"
         "seed: 1\n"
         "deterministic: true\n"
         "data: {dataset: " +
         dataset +
         ", test_fraction: 0.25}\n"
         "model: {layers: [{type: linear, out_features: " +
         std::to_string(classes) +
         "}]}\n"
         "train: {epochs: 1, batch_size: 2, progress: none, checkpoint: none}\n" +
         extra;
}

switchyard::testing::CommandResult run(const std::string& config, const std::string& args = "") {
  return run_command("SWITCHYARD_DATA_DIR=" SWITCHYARD_SOURCE_DIR "/data " + cli() + " run " +
                     config + " " + args);
}

const char* const kNanCsv = "1.0,2.0,0\n1.5,nan,1\n2.0,2.5,1\n3.0,1.0,0\n4.0,2.0,1\n0.5,0.5,0\n";

}  // namespace

TEST_CASE("run: a NaN in the data exits 2 naming file, line and column", "[cli][bad-input]") {
  Folder dir;
  write(dir / "nan.csv", kNanCsv);
  write(dir / "run.yaml", yaml_for("nan.csv"));
  const auto result = run(dir / "run.yaml");
  INFO(result.output);
  CHECK(result.exit_code == 2);
  // 'nan' is a missing value (data.na_values), which data.missing: error refuses.
  CHECK(contains(result.output, "switchyard: error: " + (dir / "nan.csv") +
                                    ":2:2: 'nan' is a missing value (data.missing: mean, median "
                                    "or most_frequent fills missing features from the training "
                                    "split, drop_rows drops their rows; data.na_values lists what "
                                    "marks a missing value)\n"));
}

TEST_CASE("run: data.non_finite: drop_rows trains on the rest and says how many it dropped",
          "[cli][bad-input]") {
  Folder dir;
  write(dir / "nan.csv", kNanCsv);
  write(dir / "run.yaml", yaml_for("nan.csv"));
  const auto result =
      run(dir / "run.yaml", "--set data.non_finite=drop_rows --metrics " + (dir / "m.json"));
  INFO(result.output);
  CHECK(result.exit_code == 0);
  CHECK(contains(result.output,
                 "switchyard: warning: data nan.csv: dropped 1 row(s) with "
                 "missing or non-finite values (data.missing, data.non_finite: drop_rows)\n"));
  CHECK(contains(read_text(dir / "m.json"), "\"dropped_rows\": 1,"));
}

TEST_CASE("run: lr 10000 diverges and exits 1 naming epoch and step", "[cli][bad-input]") {
  Folder dir;
  const auto result =
      run(SWITCHYARD_SOURCE_DIR "/configs/digits-mlp.yaml",
          "--set backends=[reference] --set deterministic=true --set optimizer.lr=10000 "
          "--set train.checkpoint=" +
              (dir / "d.ckpt") + " --set train.progress=none");
  INFO(result.output);
  CHECK(result.exit_code == 1);
  CHECK(contains(result.output,
                 "switchyard: error: training diverged: the loss is not finite (NaN or "
                 "infinite) at epoch 1, step 5 of 23; the run stopped without writing " +
                     (dir / "d.ckpt") + "\n"));
  CHECK_FALSE(std::filesystem::exists(dir / "d.ckpt"));
}

TEST_CASE("run: a directory or fifo where a file is read or written is named before training",
          "[cli][bad-input]") {
  Folder dir;
  std::filesystem::create_directory(dir / "folder");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  write(dir / "run.yaml", yaml_for("iris", 3));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train.resume=" + (dir / "folder"),
       "train.resume: checkpoint " + (dir / "folder") + " is a directory, expected a file"},
      {"train.resume=" + (dir / "fifo"),
       "train.resume: checkpoint " + (dir / "fifo") + " is a fifo, expected a file"},
      {"model.weights=" + (dir / "folder"),
       "model.weights: weights " + (dir / "folder") + " is a directory, expected a file"},
      {"data.dataset=" + (dir / "fifo"),
       "data file " + (dir / "fifo") + " is a fifo, expected a file"},
      {"task=evaluate --set predict.checkpoint=" + (dir / "folder"),
       "checkpoint " + (dir / "folder") + " is a directory, expected a file"},
      {"train.checkpoint=" + (dir / "folder"),
       "train.checkpoint: checkpoint " + (dir / "folder") + " is a directory, expected a file"},
      {"train.export=" + (dir / "fifo"),
       "train.export: weights " + (dir / "fifo") + " is a fifo, expected a file"},
  };
  for (const auto& [setting, message] : cases) {
    const auto result = run(dir / "run.yaml", "--set " + setting);
    INFO(setting << "\n" << result.output);
    CHECK(result.exit_code == 2);
    CHECK(contains(result.output, "switchyard: error: " + message + "\n"));
  }
}

TEST_CASE("run: evaluating data with a class the model lacks names the line", "[cli][bad-input]") {
  Folder dir;
  write(dir / "two.csv", "1.0,2.0,0\n1.5,2.5,1\n2.0,2.5,1\n3.0,1.0,0\n4.0,2.0,1\n0.5,0.5,0\n");
  write(dir / "three.csv", "1.0,2.0,0\n1.5,2.5,2\n");
  write(dir / "run.yaml",
        yaml_for("two.csv", 2, "predict: {checkpoint: two.ckpt, input: three.csv}\n"));
  const auto trained = run(dir / "run.yaml", "--set train.checkpoint=" + (dir / "two.ckpt"));
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  const auto result = run(dir / "run.yaml", "--set task=evaluate");
  INFO(result.output);
  CHECK(result.exit_code == 2);  // the input does not fit the model, as a wrong feature count
  CHECK(contains(result.output, "switchyard: error: " + (dir / "three.csv") +
                                    ":2: class 2 is outside the model's 2 classes (0..1)\n"));
}

TEST_CASE("run: a CSV with one 20 MB line is refused by the line limit in a few hundred characters",
          "[cli][bad-input]") {
  Folder dir;
  write(dir / "long.csv", std::string(20'000'000, '7') + "x\n1,2,0\n");
  write(dir / "run.yaml", yaml_for("long.csv"));
  const auto result = run(dir / "run.yaml");
  CHECK(result.exit_code == 2);
  CHECK(result.output.size() < 1000);
  CHECK(contains(result.output, "switchyard: error: " + (dir / "long.csv") +
                                    ":1: the line is 20000001 bytes long, over the limit of "
                                    "8388608 bytes (8 MiB) per line\n"));
  // Under the limit a long line is still quoted cut.
  write(dir / "long.csv", std::string(2'000'000, '7') + "x\n1,2,0\n");
  const auto quoted = run(dir / "run.yaml");
  CHECK(quoted.exit_code == 2);
  CHECK(quoted.output.size() < 1000);
  CHECK(contains(quoted.output, (dir / "long.csv") + ":1: the header has 1 column, line 2 has 3"));
  CHECK(contains(quoted.output, "...' (cut to 200 of 2000001 characters)\n"));
}

TEST_CASE("run: data of one sample names its file when the split leaves a part empty",
          "[cli][bad-input]") {
  Folder dir;
  write(dir / "one.csv", "1.0,2.0,0\n");
  write(dir / "run.yaml", yaml_for("one.csv"));
  const auto result = run(dir / "run.yaml");
  INFO(result.output);
  CHECK(result.exit_code == 2);
  CHECK(contains(result.output, "switchyard: error: " + (dir / "one.csv") +
                                    ": a test fraction of 0.250000 of 1 samples leaves one split "
                                    "empty\n"));
}
