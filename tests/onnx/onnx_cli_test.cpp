// The CLI on ONNX models: `switchyard predict model.onnx rows.csv` (and predict.model in a YAML
// file) and `switchyard bench model model.onnx`.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "onnx/onnx_test_support.h"
#include "switchyard/onnx.h"
#include "test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

const std::string kEnv = "SWITCHYARD_PLUGIN_PATH= SWITCHYARD_BACKENDS=reference ";

// The CNN's batch-7 input as CSV rows (432 features each), and PyTorch's outputs for them.
std::string cnn_rows(std::vector<float>& expected) {
  const auto device = test_device();
  const auto set = models_dir() / "cnn" / "test_data_set_1";
  const std::vector<float> x = load_onnx_tensor(set / "input_0.pb", device).to_host_float();
  expected = load_onnx_tensor(set / "output_0.pb", device).to_host_float();
  std::ostringstream text;
  text.precision(9);
  for (size_t row = 0; row < 7; ++row) {
    for (size_t k = 0; k < 432; ++k) text << (k ? "," : "") << x[row * 432 + k];
    text << "\n";
  }
  return text.str();
}

}  // namespace

TEST_CASE("switchyard predict takes an ONNX model: PyTorch's classes and softmax", "[onnx][cli]") {
  TempDir dir;
  std::vector<float> logits;
  write_text(dir / "rows.csv", cnn_rows(logits));
  const std::string model = (models_dir() / "cnn" / "model.onnx").string();
  const CommandResult result =
      run_command(kEnv + cli() + " predict " + model + " " + (dir / "rows.csv").string() + " -o " +
                  (dir / "p.csv").string());
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.output, Catch::Contains("probabilities: the softmax of the model's output"));
  CHECK_THAT(result.output, Catch::Contains("7 samples without labels"));
  std::ifstream in(dir / "p.csv");
  std::string line;
  std::getline(in, line);
  CHECK(line == "line,predicted,probability,p_0,p_1,p_2,p_3,p_4,p_5");
  for (size_t row = 0; row < 7; ++row) {
    REQUIRE(std::getline(in, line));
    std::vector<double> fields;
    std::stringstream items(line);
    for (std::string item; std::getline(items, item, ',');) fields.push_back(std::stod(item));
    const float* z = logits.data() + row * 6;
    const double top = *std::max_element(z, z + 6);
    double total = 0;
    for (int c = 0; c < 6; ++c) total += std::exp(static_cast<double>(z[c]) - top);
    CHECK(fields[1] == static_cast<double>(std::max_element(z, z + 6) - z));
    for (int c = 0; c < 6; ++c) {
      CHECK(fields[3 + static_cast<size_t>(c)] ==
            Approx(std::exp(static_cast<double>(z[c]) - top) / total).epsilon(1e-4));
    }
  }
  // predict.model in a YAML file, with labels: the accuracy is printed.
  std::string labeled;
  std::istringstream rows(cnn_rows(logits));
  for (std::string row; std::getline(rows, row);) labeled += row + ",2\n";
  write_text(dir / "labeled.csv", labeled);
  write_text(dir / "p.yaml", "task: predict\npredict:\n  model: " + model +
                                 "\n  input: labeled.csv\n  output: out.csv\n");
  const CommandResult yaml = run_command(kEnv + cli() + " run " + (dir / "p.yaml").string());
  INFO(yaml.output);
  CHECK(yaml.exit_code == 0);
  CHECK_THAT(yaml.output, Catch::Contains("accuracy 1"));
  // Both keys: refused naming them.
  write_text(dir / "both.yaml", "task: predict\npredict:\n  model: " + model +
                                    "\n  checkpoint: x.ckpt\n  input: labeled.csv\n");
  const CommandResult both = run_command(kEnv + cli() + " run " + (dir / "both.yaml").string());
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.output, Catch::Contains("predict.model or predict.checkpoint, not both"));
  // data.id is refused, not ignored: the rows are read by position.
  write_text(dir / "id.yaml", "task: predict\ndata: {id: name}\npredict:\n  model: " + model +
                                  "\n  input: labeled.csv\n");
  const CommandResult id = run_command(kEnv + cli() + " run " + (dir / "id.yaml").string());
  CHECK(id.exit_code == 2);
  CHECK_THAT(id.output,
             Catch::Contains("data.id and data.drop are not supported with an ONNX model"));
  // Rows of another width: named.
  write_text(dir / "narrow.csv", "1,2,3\n4,5,6\n");
  const CommandResult narrow =
      run_command(kEnv + cli() + " predict " + model + " " + (dir / "narrow.csv").string());
  CHECK(narrow.exit_code != 0);
  CHECK_THAT(narrow.output, Catch::Contains("433"));
}

TEST_CASE("switchyard bench model times an ONNX model at a batch size", "[onnx][cli]") {
  const std::string model = (models_dir() / "transformer_mask" / "model.onnx").string();
  const CommandResult result = run_command(kEnv + cli() + " bench model " + model +
                                           " --batch-size 3 --repetitions 2 --warmup 1 --json");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.output, Catch::Contains("\"format\":\"onnx\"") &&
                                Catch::Contains("\"batch_size\":3") &&
                                Catch::Contains("\"device\":\"reference:0\""));
  const CommandResult bad =
      run_command(kEnv + cli() + " bench model /nonexistent.onnx --batch-size 1");
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.output, Catch::Contains("/nonexistent.onnx"));
}

// Models that declare what no host holds: refused naming the file, never a crash (bench model
// crashed with SIGSEGV on 2^62) nor an allocation until std::bad_alloc (predict grew to 16 GB on
// 2^40), and quickly.
TEST_CASE("bench model and predict refuse declared extents beyond the memory budget",
          "[onnx][cli][limits]") {
  TempDir dir;
  const auto rows = dir / "rows.csv";
  write_text(rows, "1,2,3\n4,5,6\n");
  for (const int shift : {62, 40}) {
    const auto model = dir / ("huge" + std::to_string(shift) + ".onnx");
    write_model(model, identity_model({-1, int64_t{1} << shift}));
    const CommandResult bench =
        run_command(kEnv + cli() + " bench model " + model.string() + " --batch-size 1");
    INFO(bench.output);
    CHECK(bench.exit_code == 1);
    CHECK_THAT(bench.output, Catch::Contains("switchyard: error: " + model.string() + ": ") &&
                                 Catch::Contains("one sample of input 'x'"));
    const CommandResult predict =
        run_command(kEnv + cli() + " predict " + model.string() + " " + rows.string());
    INFO(predict.output);
    CHECK(predict.exit_code == 1);
    CHECK_THAT(predict.output, Catch::Contains("switchyard: error: " + model.string() + ": ") &&
                                   Catch::Contains("memory budget"));
  }
  // Rank 101: refused naming the file (it was refused by the tensor's shape, without the file).
  std::vector<int64_t> dims(101, 1);
  dims[0] = -1;
  const auto deep = dir / "rank101.onnx";
  write_model(deep, identity_model(dims));
  const CommandResult predict =
      run_command(kEnv + cli() + " predict " + deep.string() + " " + rows.string());
  INFO(predict.output);
  CHECK(predict.exit_code == 2);
  CHECK_THAT(predict.output,
             Catch::Contains("switchyard: error: " + deep.string() + ": input 'x' has rank 101"));
}

TEST_CASE("predict gives an integer input whole numbers only, naming file, line and column",
          "[onnx][cli]") {
  TempDir dir;
  const auto model = dir / "ids.onnx";
  write_model(model, identity_model({-1, 3}, onnx::TensorProto::INT64));
  const auto predict = [&](const std::string& name, const std::string& text) {
    write_text(dir / name, text);
    return run_command(kEnv + cli() + " predict " + model.string() + " " + (dir / name).string() +
                       " -o " + (dir / "p.csv").string());
  };
  const CommandResult whole = predict("whole.csv", "1,2,3\n4,5,16777215\n");
  INFO(whole.output);
  CHECK(whole.exit_code == 0);
  // 1.5 became 1 without a word.
  const CommandResult fraction = predict("fraction.csv", "1,2,3\n# comment\n4,1.5,6\n");
  INFO(fraction.output);
  CHECK(fraction.exit_code == 2);
  CHECK_THAT(fraction.output,
             Catch::Contains("switchyard: error: " + (dir / "fraction.csv").string() +
                             ":3:2: 1.5 is not a whole number, and input 'x' "
                             "of " +
                             model.string() + " is int64\n"));
  // 16777217 reads as the f32 16777216: refused rather than predicted as another number.
  const CommandResult large = predict("large.csv", "16777217,2,3\n");
  INFO(large.output);
  CHECK(large.exit_code == 2);
  CHECK_THAT(large.output, Catch::Contains((dir / "large.csv").string() +
                                           ":1:1: 16777216 is not below 2^24 in magnitude"));
}

TEST_CASE("predict refuses a model whose output has no elements per sample", "[onnx][cli]") {
  TempDir dir;
  // Slice keeps columns [3, 3) of three: [batch, 0].
  onnx::ModelProto model = identity_model({-1, 3});
  auto* graph = model.mutable_graph();
  graph->clear_output();
  declare_value(*graph->add_output(), "y", onnx::TensorProto::FLOAT, {-1, 0});
  add_int64_initializer(*graph, "starts", {3});
  add_int64_initializer(*graph, "ends", {3});
  add_int64_initializer(*graph, "axes", {1});
  auto* node = graph->mutable_node(0);
  node->set_op_type("Slice");
  node->add_input("starts");
  node->add_input("ends");
  node->add_input("axes");
  const auto path = dir / "nothing.onnx";
  write_model(path, model);
  write_text(dir / "rows.csv", "1,2,3\n4,5,6\n");
  const auto out = dir / "p.csv";
  const CommandResult result = run_command(kEnv + cli() + " predict " + path.string() + " " +
                                           (dir / "rows.csv").string() + " -o " + out.string());
  INFO(result.output);
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.output, Catch::Contains("switchyard: error: " + path.string() +
                                            ": output 'y' has no elements per sample (shape "
                                            "[2, 0] for a batch of 2): there is nothing to "
                                            "predict\n"));
  CHECK_FALSE(std::filesystem::exists(out));
}

namespace {

// A .npy file (format 1.0) of little-endian f32 values, C order; `descr` and `fortran` may be
// set to what the reader must refuse.
void write_npy(const std::filesystem::path& path, const std::vector<float>& values,
               const std::vector<int64_t>& shape, const std::string& descr = "<f4",
               bool fortran = false) {
  std::string dims;
  for (const int64_t d : shape) dims += std::to_string(d) + ", ";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': (" +
                       dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  write_text(path, bytes);
}

}  // namespace

TEST_CASE("bench model --check-input/--check-output compares the first output with a .npy file",
          "[onnx][cli]") {
  TempDir dir;
  const auto device = test_device();
  const auto set = models_dir() / "cnn" / "test_data_set_1";
  const Tensor x = load_onnx_tensor(set / "input_0.pb", device);
  const Tensor y = load_onnx_tensor(set / "output_0.pb", device);
  const std::vector<int64_t> x_shape(x.shape().begin(), x.shape().end());
  const std::vector<int64_t> y_shape(y.shape().begin(), y.shape().end());
  write_npy(dir / "x.npy", x.to_host_float(), x_shape);
  write_npy(dir / "y.npy", y.to_host_float(), y_shape);
  std::vector<float> wrong = y.to_host_float();
  wrong[3] += 1.0f;
  write_npy(dir / "wrong.npy", wrong, y_shape);
  const std::string bench = kEnv + cli() + " bench model " +
                            (models_dir() / "cnn" / "model.onnx").string() +
                            " --batch-size 2 --repetitions 1 --warmup 0 --json --check-input " +
                            (dir / "x.npy").string() + " --check-output ";
  const CommandResult good = run_command(bench + (dir / "y.npy").string());
  INFO(good.output);
  CHECK(good.exit_code == 0);
  CHECK_THAT(good.output,
             Catch::Contains("\"mismatches\":0") && Catch::Contains("\"passed\":true"));

  const CommandResult bad = run_command(bench + (dir / "wrong.npy").string());
  INFO(bad.output);
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.output,
             Catch::Contains("\"mismatches\":1") &&
                 Catch::Contains("1 of " + std::to_string(y.shape().numel()) +
                                 " output elements differ from " + (dir / "wrong.npy").string() +
                                 " (first at element 3)"));

  // Files the reader must refuse, each named with the reason; never a crash.
  write_npy(dir / "big_endian.npy", y.to_host_float(), y_shape, ">f4");
  write_npy(dir / "fortran.npy", y.to_host_float(), y_shape, "<f4", true);
  write_npy(dir / "short.npy", std::vector<float>(5), y_shape);
  write_text(dir / "magic.npy", "NUMPY not really");
  std::string truncated = "\x93NUMPY";
  truncated += std::string("\x01\x00\xff\x00", 4) + "{'descr'";
  write_text(dir / "header.npy", truncated);
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {"big_endian.npy", "dtype '>f4' is not supported"},
      {"fortran.npy", "Fortran order is not supported"},
      {"short.npy", "the file has 20"},
      {"magic.npy", "not a .npy file"},
      {"header.npy", "the .npy header says 255 bytes"},
  };
  for (const auto& [name, reason] : hostile) {
    const CommandResult refused = run_command(bench + (dir / name).string());
    INFO(refused.output);
    CHECK(refused.exit_code == 1);
    CHECK_THAT(refused.output, Catch::Contains((dir / name).string()) && Catch::Contains(reason));
  }
  // A header of 3000 escape bytes: the message quotes it printable and cut, not raw.
  write_npy(dir / "escapes.npy", y.to_host_float(), y_shape, std::string(3000, '\x1b'));
  const CommandResult escapes = run_command(bench + (dir / "escapes.npy").string());
  CHECK(escapes.exit_code == 1);
  CHECK_THAT(escapes.output, Catch::Contains("is not supported") && Catch::Contains("\\x1b"));
  CHECK(escapes.output.find('\x1b') == std::string::npos);
  CHECK(escapes.output.size() < 1500);
  const CommandResult alone =
      run_command(kEnv + cli() + " bench model " + (models_dir() / "cnn" / "model.onnx").string() +
                  " --batch-size 1 --check-input " + (dir / "x.npy").string());
  CHECK(alone.exit_code == 2);
  CHECK_THAT(alone.output, Catch::Contains("--check-input and --check-output go together"));
}

TEST_CASE("bench model --check-output compares an integer first output (ArgMax's indices)",
          "[onnx][cli]") {
  TempDir dir;
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  declare_value(*graph.add_input(), "x", onnx::TensorProto::FLOAT, {-1, 5});
  declare_value(*graph.add_output(), "y", onnx::TensorProto::INT64, {-1});
  auto* node = graph.add_node();
  node->set_op_type("ArgMax");
  node->add_input("x");
  node->add_output("y");
  for (const auto& [name, value] : {std::pair{"axis", 1}, std::pair{"keepdims", 0}}) {
    auto* attribute = node->add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto::INT);
    attribute->set_i(value);
  }
  write_model(dir / "argmax.onnx", model);
  write_npy(dir / "x.npy", {0, 3, 1, 2, -1, 9, 4, 8, 7, 5}, {2, 5});
  write_npy(dir / "y.npy", {1, 0}, {2});
  write_npy(dir / "wrong.npy", {1, 2}, {2});
  const std::string bench = kEnv + cli() + " bench model " + (dir / "argmax.onnx").string() +
                            " --batch-size 2 --repetitions 1 --warmup 0 --json --check-input " +
                            (dir / "x.npy").string() + " --check-output ";
  const CommandResult good = run_command(bench + (dir / "y.npy").string());
  INFO(good.output);
  CHECK(good.exit_code == 0);
  CHECK_THAT(good.output, Catch::Contains("\"mismatches\":0"));
  const CommandResult bad = run_command(bench + (dir / "wrong.npy").string());
  INFO(bad.output);
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.output, Catch::Contains("\"mismatches\":1"));
}
