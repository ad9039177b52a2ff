// ONNX import (switchyard/onnx.h): models exported by PyTorch predict what PyTorch predicted, on
// every backend built here, and models this importer refuses are refused with a message naming the
// file and what is wrong.
//
// The models and their expected outputs are in tests/onnx/models/<name>/ (model.onnx plus ONNX's
// own test-data layout, test_data_set_<k>/input_<i>.pb and output_<i>.pb: batch 1 and batch 7),
// written by tools/onnx/make_test_models.py with PyTorch; the "torch" case below re-runs that
// script's --verify against PyTorch where python3-torch is installed.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "backend_support.h"
#include "onnx/onnx_test_support.h"
#include "switchyard/nn_sequence.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"
#include "switchyard/plugin.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

// |ours - torch| <= 1e-4 + 1e-4 |torch| element by element (the f32 bound, absolute and
// relative); returns the largest absolute difference.
double check_close(const Tensor& ours, const Tensor& expected, const std::string& what) {
  INFO(what);
  REQUIRE(ours.shape() == expected.shape());
  const std::vector<float> a = ours.to_host_float(), b = expected.to_host_float();
  double worst = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    const double diff = std::fabs(static_cast<double>(a[k]) - static_cast<double>(b[k]));
    worst = std::max(worst, diff);
    if (!(diff <= 1e-4 + 1e-4 * std::fabs(static_cast<double>(b[k])))) {
      FAIL_CHECK("element " << k << ": " << a[k] << " against PyTorch's " << b[k]);
      return diff;
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("models exported by PyTorch predict PyTorch's outputs on every backend",
          "[onnx][torch]") {
  const auto folders = model_folders();
  REQUIRE(folders.size() >= 8);
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    for (const auto& folder : folders) {
      const std::string name = folder.filename().string();
      INFO(name << " on " << device->backend());
      const auto model = OnnxModel::load(folder / "model.onnx", device);
      // "<model>_opset<N>": exported at opset N (tools/onnx/make_test_models.py), else 17.
      const size_t at = name.rfind("_opset");
      CHECK(model->opset() == (at == std::string::npos ? 17 : std::stoi(name.substr(at + 6))));
      const auto sets = data_sets(folder);
      REQUIRE(sets.size() == 2);
      for (const auto& set : sets) {
        const std::vector<Tensor> inputs = load_set(set, "input", device);
        const std::vector<Tensor> expected = load_set(set, "output", device);
        const std::vector<Tensor> outputs = model->run(inputs);
        REQUIRE(outputs.size() == expected.size());
        for (size_t k = 0; k < outputs.size(); ++k) {
          const double worst = check_close(outputs[k], expected[k], set.filename().string());
          std::cout << "onnx " << name << " " << set.filename().string() << " on "
                    << device->backend() << ": max |diff| " << worst << "\n";
        }
      }
      // The same model again at the first shape: the cached plan gives the same numbers.
      const std::vector<Tensor> again = model->run(load_set(sets[0], "input", device));
      check_close(again[0], load_set(sets[0], "output", device)[0], "second run");
      INFO(model->execution_summary());
      CHECK(model->execution_summary().find("device") != std::string::npos);
    }
  });
}

TEST_CASE("shape subgraphs run on the host once per input shape, and GELU and linear are fused",
          "[onnx]") {
  const auto device = test_device();
  const auto model = OnnxModel::load(models_dir() / "lstm2" / "model.onnx", device);
  const auto set = models_dir() / "lstm2" / "test_data_set_1";
  model->run(load_set(set, "input", device));
  CHECK_THAT(model->execution_summary(),
             Catch::Contains("Shape 2 host") || Catch::Contains("Shape 1 host"));
  model->run(load_set(set, "input", device));
  CHECK_THAT(model->execution_summary(), Catch::Contains("cached"));
  CHECK_THAT(model->execution_summary(),
             !Catch::Contains("Shape 1 host") && !Catch::Contains("Shape 2 host"));

  const auto mlp = OnnxModel::load(models_dir() / "mlp_gelu" / "model.onnx", device);
  mlp->run(load_set(models_dir() / "mlp_gelu" / "test_data_set_0", "input", device));
  CHECK_THAT(mlp->execution_summary(), Catch::Contains("fused 2 Erf-based GELU into gelu"));
  const auto transformer = OnnxModel::load(models_dir() / "transformer2" / "model.onnx", device);
  transformer->run(load_set(models_dir() / "transformer2" / "test_data_set_0", "input", device));
  CHECK_THAT(transformer->execution_summary(), Catch::Contains("MatMul + Add into linear"));
}

TEST_CASE("inputs that do not fit the model are refused naming the input", "[onnx][errors]") {
  const auto device = test_device();
  const auto path = models_dir() / "mlp_gelu" / "model.onnx";
  const auto model = OnnxModel::load(path, device);
  REQUIRE(model->inputs().size() == 1);
  CHECK(model->inputs()[0].shape == std::vector<int64_t>{-1, 20});
  CHECK(model->inputs()[0].dim_names[0] == "batch");
  const auto refused = [&](const std::vector<Tensor>& inputs, const std::string& words) {
    try {
      model->run(inputs);
      FAIL("accepted");
    } catch (const Error& error) {
      CHECK(error.status().code() == StatusCode::kInvalidArgument);
      CHECK_THAT(error.what(), Catch::Contains(path.string()) && Catch::Contains(words));
    }
  };
  refused({zeros(Shape{3, 21}, device)}, "has shape [batch, 20], got [3, 21]");
  refused({}, "takes 1 input(s), got 0");
  refused({Tensor::from_host(std::vector<int64_t>{1, 2}, Shape{1, 2}, device)},
          "is float, got i64");
  // A dynamic batch: any batch size runs.
  CHECK(model->run({zeros(Shape{5, 20}, device)})[0].shape() == Shape{5, 5});
}

TEST_CASE("an LSTM node given a sequence of length 0 is refused naming the file and the node",
          "[onnx][errors]") {
  const auto device = test_device();
  TempDir dir;
  // lstm2 takes [batch, 5, 6]; with the time axis made dynamic, 0 steps reach the LSTM node.
  onnx::ModelProto model = read_model(models_dir() / "lstm2" / "model.onnx");
  auto* time = model.mutable_graph()
                   ->mutable_input(0)
                   ->mutable_type()
                   ->mutable_tensor_type()
                   ->mutable_shape()
                   ->mutable_dim(1);
  time->set_dim_param("time");
  const auto path = dir / "empty_sequence.onnx";
  write_model(path, model);
  try {
    OnnxModel::load(path, device)->run({zeros(Shape{2, 0, 6}, device)});
    FAIL("accepted a sequence of length 0");
  } catch (const Error& error) {
    INFO(error.what());
    CHECK(error.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(error.what(), Catch::Contains(path.string()) && Catch::Contains("LSTM") &&
                                 Catch::Contains("sequence of length >= 1"));
  }
}

TEST_CASE("damaged and hostile ONNX files are refused with the file named", "[onnx][errors]") {
  const auto device = test_device();
  TempDir dir;
  const auto seed = read_model(models_dir() / "mlp_gelu" / "model.onnx");
  const auto expect = [&](const onnx::ModelProto& model, StatusCode code,
                          const std::string& words) {
    const auto path = dir / "bad.onnx";
    write_model(path, model);
    try {
      OnnxModel::load(path, device)->run({zeros(Shape{2, 20}, device)});
      FAIL("accepted: " << words);
    } catch (const Error& error) {
      INFO(error.what());
      CHECK(error.status().code() == code);
      CHECK_THAT(error.what(), Catch::Contains(path.string()) && Catch::Contains(words));
    }
  };
  SECTION("an unsupported op names the node, the op type, the opset and what is supported") {
    onnx::ModelProto model = seed;
    model.mutable_graph()->mutable_node(0)->set_op_type("StringNormalizer");
    expect(model, StatusCode::kInvalidArgument,
           "op type 'StringNormalizer' is not supported at opset 17; supported: Abs, Acos");
  }
  SECTION("another domain") {
    onnx::ModelProto model = seed;
    model.mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
    expect(model, StatusCode::kInvalidArgument, "is in domain 'com.microsoft'");
  }
  SECTION("an opset outside 7-27") {
    onnx::ModelProto model = seed;
    model.mutable_opset_import(0)->set_version(6);
    expect(model, StatusCode::kInvalidArgument, "opset 6 is not supported (supported: 7 to 27");
  }
  const auto first_with_inputs = [](const onnx::ModelProto& model) {
    int n = 0;
    while (model.graph().node(n).input_size() == 0) ++n;
    return n;
  };
  SECTION("a dangling input") {
    onnx::ModelProto model = seed;
    model.mutable_graph()->mutable_node(first_with_inputs(model))->set_input(0, "nowhere");
    expect(model, StatusCode::kInvalidArgument,
           "reads 'nowhere', which no node, input or initializer defines");
  }
  SECTION("a cycle") {
    onnx::ModelProto model = seed;
    auto* graph = model.mutable_graph();
    const int last = graph->node_size() - 1;
    graph->mutable_node(first_with_inputs(model))->set_input(0, graph->node(last).output(0));
    expect(model, StatusCode::kInvalidArgument, "the graph has a cycle through node");
  }
  SECTION("an initializer whose declared size is not its bytes") {
    onnx::ModelProto model = seed;
    auto* tensor = model.mutable_graph()->mutable_initializer(0);
    tensor->set_dims(0, int64_t{1} << 40);
    expect(model, StatusCode::kInvalidArgument, "has more than 2^31 elements");
    tensor->set_dims(0, 3);
    expect(model, StatusCode::kDataLoss, "needs");
  }
  SECTION("external data that leaves the model's folder") {
    for (const std::string location : {"../secret.bin", "/etc/passwd", "a/../../b.bin"}) {
      onnx::ModelProto model = seed;
      auto* tensor = model.mutable_graph()->mutable_initializer(0);
      tensor->clear_raw_data();
      tensor->set_data_location(onnx::TensorProto::EXTERNAL);
      auto* entry = tensor->add_external_data();
      entry->set_key("location");
      entry->set_value(location);
      expect(model, StatusCode::kInvalidArgument, location);
    }
  }
  SECTION("a value defined twice") {
    onnx::ModelProto model = seed;
    auto* graph = model.mutable_graph();
    graph->mutable_node(1)->set_output(0, graph->node(0).output(0));
    expect(model, StatusCode::kInvalidArgument, "is defined twice");
  }
  SECTION("an internal op name is not an op of the file's") {
    onnx::ModelProto model = seed;
    model.mutable_graph()->mutable_node(0)->set_op_type("switchyard.Linear");
    expect(model, StatusCode::kInvalidArgument, "is not supported");
  }
}

TEST_CASE("a truncated, empty or missing file is named", "[onnx][errors]") {
  const auto device = test_device();
  TempDir dir;
  const auto bytes = read_bytes(models_dir() / "cnn" / "model.onnx");
  const auto path = dir / "cut.onnx";
  write_bytes(path, std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(
                                                                            bytes.size() / 2)));
  try {
    OnnxModel::load(path, device);
    FAIL("accepted");
  } catch (const Error& error) {
    CHECK(error.status().code() == StatusCode::kDataLoss);
    CHECK_THAT(error.what(), Catch::Contains(path.string()));
  }
  write_bytes(path, {});
  try {
    OnnxModel::load(path, device);
    FAIL("accepted");
  } catch (const Error& error) {
    CHECK(error.status().code() == StatusCode::kDataLoss);
    CHECK_THAT(error.what(), Catch::Contains("no graph"));
  }
  try {
    OnnxModel::load(dir / "missing.onnx", device);
    FAIL("accepted");
  } catch (const Error& error) {
    CHECK(error.status().code() == StatusCode::kNotFound);
  }
}

TEST_CASE("the PyTorch script still makes the committed models (where python3-torch is installed)",
          "[onnx][torch][script]") {
  if (std::system("/usr/bin/python3 -c 'import torch, onnx' >/dev/null 2>&1") != 0) {
    switchyard::testing::skip_test(
        "/usr/bin/python3 cannot import torch and onnx (python3-torch is installed by "
        "tools/bench/compare)");
    return;
  }
  const std::string command = "/usr/bin/python3 " + std::string(SWITCHYARD_SOURCE_DIR) +
                              "/tools/onnx/make_test_models.py --verify --out " +
                              models_dir().string();
  CHECK(std::system(command.c_str()) == 0);
}

TEST_CASE("nodes that share a name (or have none) keep their own prepared weights", "[onnx]") {
  const auto device = test_device();
  TempDir dir;
  for (const std::string name : {"same", ""}) {
    onnx::ModelProto model = read_model(models_dir() / "lstm2" / "model.onnx");
    for (auto& node : *model.mutable_graph()->mutable_node()) node.set_name(name);
    write_model(dir / "renamed.onnx", model);
    const auto set = models_dir() / "lstm2" / "test_data_set_1";
    const auto outputs =
        OnnxModel::load(dir / "renamed.onnx", device)->run(load_set(set, "input", device));
    check_close(outputs[0], load_set(set, "output", device)[0], "renamed '" + name + "'");
  }
}

TEST_CASE("Split sizes that are negative or do not add up are refused on the host and the device",
          "[onnx][errors]") {
  const auto device = test_device();
  TempDir dir;
  // data [2, 4] (an input, so on the device, or an initializer, so on the host), split on axis 1.
  for (const bool on_host : {false, true}) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(17);
    onnx::GraphProto& graph = *model.mutable_graph();
    auto add_input = [&](const std::string& name) {
      auto* input = graph.add_input();
      input->set_name(name);
      auto* type = input->mutable_type()->mutable_tensor_type();
      type->set_elem_type(onnx::TensorProto::FLOAT);
      for (const int64_t extent : {2, 4}) type->mutable_shape()->add_dim()->set_dim_value(extent);
    };
    add_input("x");
    if (on_host) {
      auto* data = graph.add_initializer();
      data->set_name("data");
      data->set_data_type(onnx::TensorProto::FLOAT);
      for (const int64_t extent : {2, 4}) data->add_dims(extent);
      for (int k = 0; k < 8; ++k) data->add_float_data(static_cast<float>(k));
    }
    auto* sizes = graph.add_initializer();
    sizes->set_name("sizes");
    sizes->set_data_type(onnx::TensorProto::INT64);
    sizes->add_dims(2);
    sizes->add_int64_data(5);
    sizes->add_int64_data(-1);
    auto* split = graph.add_node();
    split->set_op_type("Split");
    split->add_input(on_host ? "data" : "x");
    split->add_input("sizes");
    split->add_output("a");
    split->add_output("b");
    auto* axis = split->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(1);
    graph.add_output()->set_name("a");
    const auto path = dir / "split.onnx";
    write_model(path, model);
    INFO((on_host ? "host" : "device"));
    try {
      OnnxModel::load(path, device)->run({zeros(Shape{2, 4}, device)});
      FAIL("accepted");
    } catch (const Error& error) {
      CHECK(error.status().code() == StatusCode::kInvalidArgument);
      CHECK_THAT(error.what(), Catch::Contains(path.string()) &&
                                   Catch::Contains("split sizes [5, -1] are not 2 sizes >= 0"));
    }
  }
}

namespace {

// One Conv node over x [1, 2, 4] (1-D) with a constant weight [2, 2 / group, 2] and bias [2].
onnx::ModelProto conv1d_model(int64_t group, const std::vector<float>& weight) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  declare_value(*graph.add_input(), "x", onnx::TensorProto::FLOAT, {1, 2, 4});
  declare_value(*graph.add_output(), "y", onnx::TensorProto::FLOAT, {1, 2, 3});
  auto* w = graph.add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (const int64_t extent : {int64_t{2}, static_cast<int64_t>(weight.size()) / 4, int64_t{2}})
    w->add_dims(extent);
  for (const float v : weight) w->add_float_data(v);
  auto* b = graph.add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(2);
  b->add_float_data(0.5f);
  b->add_float_data(-0.5f);
  auto* conv = graph.add_node();
  conv->set_name("depthwise_conv");
  conv->set_op_type("Conv");
  conv->add_input("x");
  conv->add_input("w");
  conv->add_input("b");
  conv->add_output("y");
  auto* attribute = conv->add_attribute();
  attribute->set_name("group");
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(group);
  return model;
}

}  // namespace

TEST_CASE("a 1-D depthwise Conv runs as one grouped convolution", "[onnx][conv]") {
  const auto device = test_device();
  TempDir dir;
  const auto path = dir / "conv1d.onnx";
  // w[0] = [1, 1], w[1] = [1, -1]: y[0, j] = x[0, j] + x[0, j+1] + 0.5,
  // y[1, j] = x[1, j] - x[1, j+1] - 0.5.
  write_model(path, conv1d_model(2, {1, 1, 1, -1}));
  const Tensor x = Tensor::from_host(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 4}, device);
  const std::vector<Tensor> y = OnnxModel::load(path, device)->run({x});
  REQUIRE(y.size() == 1);
  CHECK(y[0].shape() == Shape{1, 2, 3});
  const std::vector<float> got = y[0].to_host_float();
  const std::vector<float> expected = {3.5f, 5.5f, 7.5f, -1.5f, -1.5f, -1.5f};
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).margin(1e-6));
}

TEST_CASE("a Conv group that does not divide the channels is refused naming the node and file",
          "[onnx][conv][errors]") {
  const auto device = test_device();
  TempDir dir;
  const auto path = dir / "conv1d_bad_group.onnx";
  // group 3 does not divide the 2 input channels (weight [2, 1, 2] as for group 2).
  write_model(path, conv1d_model(3, {1, 1, 1, -1}));
  const Tensor x = Tensor::from_host(std::vector<float>(8, 1.0f), {1, 2, 4}, device);
  try {
    OnnxModel::load(path, device)->run({x});
    FAIL("accepted");
  } catch (const Error& error) {
    CHECK(error.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(error.what(), Catch::Contains(path.string()) && Catch::Contains("depthwise_conv") &&
                                 Catch::Contains("group 3"));
  }
}

namespace {

// A float initializer of `dims` with values from a fixed sequence in [-1, 1).
void add_float_initializer(onnx::GraphProto& graph, const std::string& name,
                           const std::vector<int64_t>& dims, uint64_t seed) {
  auto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (const int64_t d : dims) {
    tensor->add_dims(d);
    count *= d;
  }
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t k = 0; k < count; ++k) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    tensor->add_float_data(static_cast<float>((state >> 40) % 2000) / 1000.0f - 1.0f);
  }
}

onnx::NodeProto& add_node(onnx::GraphProto& graph, const std::string& op,
                          const std::vector<std::string>& inputs, const std::string& output) {
  auto& node = *graph.add_node();
  node.set_op_type(op);
  node.set_name(op + "_" + output);
  for (const auto& in : inputs) node.add_input(in);
  node.add_output(output);
  return node;
}

// x [N, 4, 10, 9] and r [N, 6, 10, 9] -> the four epilogues torchvision's exports use, each on a
// 3x3 convolution with padding 1, plus one whose output is also a graph output (not fused):
// relu(conv + r), clip(conv, 0, 6), conv * sigmoid(conv), conv + r, and conv itself.
onnx::ModelProto conv_epilogue_model() {
  onnx::ModelProto model = identity_model({-1, 4, 10, 9});
  auto& graph = *model.mutable_graph();
  graph.clear_node();
  graph.clear_output();
  declare_value(*graph.add_input(), "r", onnx::TensorProto::FLOAT, {-1, 6, 10, 9});
  add_float_initializer(graph, "W", {6, 4, 3, 3}, 1);
  add_float_initializer(graph, "B", {6}, 2);
  add_float_initializer(graph, "lo", {}, 3);
  graph.mutable_initializer(2)->set_float_data(0, 0.0f);
  add_float_initializer(graph, "hi", {}, 4);
  graph.mutable_initializer(3)->set_float_data(0, 6.0f);
  for (const char* name : {"c1", "c2", "c3", "c4", "c5"}) {
    auto& conv = add_node(graph, "Conv", {"x", "W", "B"}, name);
    auto* pads = conv.add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int k = 0; k < 4; ++k) pads->add_ints(1);
  }
  add_node(graph, "Add", {"c1", "r"}, "s1");
  add_node(graph, "Relu", {"s1"}, "y1");
  add_node(graph, "Clip", {"c2", "lo", "hi"}, "y2");
  add_node(graph, "Sigmoid", {"c3"}, "g3");
  add_node(graph, "Mul", {"c3", "g3"}, "y3");
  add_node(graph, "Add", {"r", "c4"}, "y4");
  add_node(graph, "Relu", {"c5"}, "y5");
  for (const char* name : {"y1", "y2", "y3", "y4", "y5", "c5"}) {
    declare_value(*graph.add_output(), name, onnx::TensorProto::FLOAT, {-1, 6, 10, 9});
  }
  return model;
}

}  // namespace

TEST_CASE("Conv with Add, Relu, Clip or SiLU after it runs as one fused op, as composed",
          "[onnx][fusion]") {
  TempDir dir;
  const auto path = dir / "conv_epilogue.onnx";
  write_model(path, conv_epilogue_model());
  // The reference, onednn and vulkan run CONV2D_FUSED; on a backend without it (cuda) the
  // importer's fused nodes compose the ops again: every backend must agree with the reference and
  // with the ops written out.
  const auto reference = test_device();
  const Tensor x = rand_uniform(Shape({2, 4, 10, 9}), -2.0, 2.0, 5, 0, reference);
  const Tensor r = rand_uniform(Shape({2, 6, 10, 9}), -3.0, 3.0, 6, 0, reference);
  const auto oracle = OnnxModel::load(path, reference);
  const std::vector<Tensor> expected = oracle->run({x, r});
  CHECK_THAT(oracle->execution_summary(),
             Catch::Contains("fused 4 Conv (+ Add) (+ Relu, Clip or SiLU) into conv2d_fused"));
  CHECK_THAT(oracle->execution_summary(), Catch::Contains("Conv 1 device"));
  // Composed by hand from the plain ops on the unfused output (the convolution itself): the same
  // values within rounding.
  const Tensor c = expected[5];
  const std::vector<Tensor> by_hand = {relu(add(c, r)), minimum(maximum(c, 0.0), 6.0),
                                       mul(c, sigmoid(c)), add(r, c), relu(c)};
  for (size_t k = 0; k < by_hand.size(); ++k) {
    INFO("output y" << k + 1);
    const std::vector<float> a = expected[k].to_host_float(), b = by_hand[k].to_host_float();
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i] - b[i]) <= 1e-5f);
  }
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    INFO(device->backend());
    const auto model = OnnxModel::load(path, device);
    const std::vector<Tensor> outputs = model->run({x.to(device), r.to(device)});
    for (size_t k = 0; k < outputs.size(); ++k) {
      check_close(outputs[k].to(reference), expected[k], "output " + std::to_string(k));
    }
  });
}

namespace {

// y = x * Cast(Mod(a, b)) with a and b constant [4] tensors of `type` (Mod runs on the host, as in
// an exporter's shape arithmetic); x [4] is all ones.
onnx::ModelProto mod_model(int32_t type, int64_t fmod, const std::vector<double>& a,
                           const std::vector<double>& b) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  declare_value(*graph.add_input(), "x", onnx::TensorProto::FLOAT, {4});
  declare_value(*graph.add_output(), "y", onnx::TensorProto::FLOAT, {4});
  for (const auto& [name, values] : {std::pair{"a", a}, std::pair{"b", b}}) {
    auto* t = graph.add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->add_dims(4);
    for (const double v : values) {
      if (type == onnx::TensorProto::INT64) {
        t->add_int64_data(static_cast<int64_t>(v));
      } else {
        t->add_float_data(static_cast<float>(v));
      }
    }
  }
  auto* mod = graph.add_node();
  mod->set_op_type("Mod");
  mod->add_input("a");
  mod->add_input("b");
  mod->add_output("m");
  auto* attribute = mod->add_attribute();
  attribute->set_name("fmod");
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(fmod);
  auto* cast = graph.add_node();
  cast->set_op_type("Cast");
  cast->add_input("m");
  cast->add_output("mf");
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  auto* mul = graph.add_node();
  mul->set_op_type("Mul");
  mul->add_input("x");
  mul->add_input("mf");
  mul->add_output("y");
  return model;
}

}  // namespace

TEST_CASE("Mod takes the divisor's sign, or the dividend's with fmod 1, in integers and floats",
          "[onnx]") {
  const auto device = test_device();
  TempDir dir;
  struct Case {
    int32_t type;
    int64_t fmod;
    std::vector<double> a, b;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      {onnx::TensorProto::INT64, 0, {7, -7, 7, -7}, {3, 3, -3, -3}, {1, 2, -2, -1}},
      {onnx::TensorProto::INT64, 1, {7, -7, 7, -7}, {3, 3, -3, -3}, {1, -1, 1, -1}},
      {onnx::TensorProto::FLOAT, 1, {7.5, -7.5, 7.5, -7.5}, {2, 2, -2, -2}, {1.5, -1.5, 1.5, -1.5}},
      {onnx::TensorProto::FLOAT, 0, {7.5, -7.5, 7.5, -7.5}, {2, 2, -2, -2}, {1.5, 0.5, -0.5, -1.5}},
  };
  for (const Case& c : cases) {
    INFO("type " << c.type << ", fmod " << c.fmod);
    const auto path = dir / "mod.onnx";
    write_model(path, mod_model(c.type, c.fmod, c.a, c.b));
    const std::vector<Tensor> y =
        OnnxModel::load(path, device)->run({Tensor::from_host({1, 1, 1, 1}, Shape{4}, device)});
    CHECK(y.at(0).to_host_float() == c.expected);
  }
  write_model(dir / "mod0.onnx",
              mod_model(onnx::TensorProto::INT64, 0, {1, 2, 3, 4}, {1, 0, 1, 1}));
  try {
    OnnxModel::load(dir / "mod0.onnx", device)
        ->run({Tensor::from_host({1, 1, 1, 1}, Shape{4}, device)});
    FAIL("accepted");
  } catch (const Error& error) {
    CHECK_THAT(error.what(), Catch::Contains("mod0.onnx") && Catch::Contains("modulo by zero"));
  }
}

namespace {

void set_scalar(onnx::GraphProto& graph, const std::string& name, float value) {
  add_float_initializer(graph, name, {}, 1);
  graph.mutable_initializer(graph.initializer_size() - 1)->set_float_data(0, value);
}

// Attention as torch.onnx.export writes it, twice:
//   F.scaled_dot_product_attention (torch 2.x): q [2, 3, 5, 4] and Transpose(k) each times
//   sqrt(scale), MatMul, Add of a runtime mask m [2, 1, 1, 6], Softmax(-1), MatMul with v;
//   nn.MultiheadAttention (torch 1.13): q3 [6, 5, 4] / sqrt(4), MatMul with k3t [6, 4, 5], Mul by
//   1, Add of a constant causal [5, 5] mask, Softmax, MatMul with v3 [6, 5, 4].
// Plus one the importer must leave alone: a Softmax over axis 1 between the products.
onnx::ModelProto attention_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  const auto f = onnx::TensorProto::FLOAT;
  declare_value(*graph.add_input(), "q", f, {2, 3, 5, 4});
  declare_value(*graph.add_input(), "k", f, {2, 3, 6, 4});
  declare_value(*graph.add_input(), "v", f, {2, 3, 6, 7});
  declare_value(*graph.add_input(), "m", f, {2, 1, 1, 6});
  declare_value(*graph.add_input(), "q3", f, {6, 5, 4});
  declare_value(*graph.add_input(), "k3t", f, {6, 4, 5});
  declare_value(*graph.add_input(), "v3", f, {6, 5, 4});
  set_scalar(graph, "root_scale", std::sqrt(0.3f));
  set_scalar(graph, "two", 2.0f);
  set_scalar(graph, "one", 1.0f);
  auto* causal = graph.add_initializer();
  causal->set_name("causal");
  causal->set_data_type(f);
  causal->add_dims(5);
  causal->add_dims(5);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) {
      causal->add_float_data(j > i ? -std::numeric_limits<float>::infinity() : 0.0f);
    }
  }
  auto& transpose = add_node(graph, "Transpose", {"k"}, "kt");
  auto* perm = transpose.add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  for (int64_t p : {0, 1, 3, 2}) perm->add_ints(p);
  add_node(graph, "Mul", {"q", "root_scale"}, "qs");
  add_node(graph, "Mul", {"kt", "root_scale"}, "kts");
  add_node(graph, "MatMul", {"qs", "kts"}, "s");
  add_node(graph, "Add", {"s", "m"}, "sm");
  add_node(graph, "Softmax", {"sm"}, "p");
  add_node(graph, "MatMul", {"p", "v"}, "y");
  add_node(graph, "Div", {"q3", "two"}, "q3s");
  add_node(graph, "MatMul", {"q3s", "k3t"}, "s3");
  add_node(graph, "Mul", {"s3", "one"}, "s3b");
  add_node(graph, "Add", {"s3b", "causal"}, "s3m");
  add_node(graph, "Softmax", {"s3m"}, "p3");
  add_node(graph, "MatMul", {"p3", "v3"}, "y3");
  add_node(graph, "MatMul", {"q3", "k3t"}, "s4");
  auto& other_axis = add_node(graph, "Softmax", {"s4"}, "p4");
  auto* axis = other_axis.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  add_node(graph, "MatMul", {"p4", "v3"}, "y4");
  declare_value(*graph.add_output(), "y", f, {2, 3, 5, 7});
  declare_value(*graph.add_output(), "y3", f, {6, 5, 4});
  declare_value(*graph.add_output(), "y4", f, {6, 5, 4});
  return model;
}

}  // namespace

TEST_CASE("attention runs as one scaled_dot_product_attention, as composed", "[onnx][fusion]") {
  TempDir dir;
  const auto path = dir / "attention.onnx";
  write_model(path, attention_model());
  const auto reference = test_device();
  const Tensor q = rand_uniform(Shape({2, 3, 5, 4}), -2.0, 2.0, 1, 0, reference);
  const Tensor k = rand_uniform(Shape({2, 3, 6, 4}), -2.0, 2.0, 2, 0, reference);
  const Tensor v = rand_uniform(Shape({2, 3, 6, 7}), -1.0, 1.0, 3, 0, reference);
  // The second sequence's last two keys are padding.
  const Tensor m = Tensor::from_host({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -INFINITY, -INFINITY},
                                     Shape({2, 1, 1, 6}), reference);
  const Tensor q3 = rand_uniform(Shape({6, 5, 4}), -2.0, 2.0, 4, 0, reference);
  const Tensor k3t = rand_uniform(Shape({6, 4, 5}), -2.0, 2.0, 5, 0, reference);
  const Tensor v3 = rand_uniform(Shape({6, 5, 4}), -1.0, 1.0, 6, 0, reference);
  const std::vector<Tensor> inputs{q, k, v, m, q3, k3t, v3};
  const auto oracle = OnnxModel::load(path, reference);
  const std::vector<Tensor> expected = oracle->run(inputs);
  CHECK_THAT(oracle->execution_summary(),
             Catch::Contains("fused 2 MatMul (+ scale) (+ mask) + Softmax + MatMul into "
                             "scaled_dot_product_attention") &&
                 Catch::Contains("switchyard.Attention 2 device") &&
                 Catch::Contains("Softmax 1 device"));
  // The same attention from the plain ops.
  const Tensor scores = matmul(q, k, false, true) * 0.3 + m;
  const Tensor causal = causal_mask(5, reference);
  const std::vector<Tensor> by_hand = {matmul(softmax(scores, -1), v),
                                       matmul(softmax(matmul(q3 / 2.0, k3t) + causal, -1), v3),
                                       matmul(softmax(matmul(q3, k3t), 1), v3)};
  for (size_t n = 0; n < by_hand.size(); ++n) {
    INFO("output " << n);
    const std::vector<float> a = expected[n].to_host_float(), b = by_hand[n].to_host_float();
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i] - b[i]) <= 1e-5f);
  }
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    INFO(device->backend());
    const auto model = OnnxModel::load(path, device);
    std::vector<Tensor> on_device;
    for (const Tensor& t : inputs) on_device.push_back(t.to(device));
    const std::vector<Tensor> outputs = model->run(on_device);
    for (size_t n = 0; n < outputs.size(); ++n) {
      check_close(outputs[n].to(reference), expected[n], "output " + std::to_string(n));
    }
  });
}

TEST_CASE("Where over more than 2^23 elements takes each element from its branch, in chunks",
          "[onnx][where]") {
  // y = Where(d == 0, n, n / d): the branch not taken holds inf and NaN where d is 0, and
  // neighbouring elements of n differ, so a position off by one shows. 3 x (2^22 + 5) elements
  // run as two chunks of 2^23 and a short third (device_where's kChunk); one chunk of all of them
  // would form positions above 2^24, which f32 rounds.
  const int64_t rows = 3, cols = (int64_t{1} << 22) + 5, count = rows * cols;
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  declare_value(*graph.add_input(), "n", onnx::TensorProto::FLOAT, {rows, cols});
  declare_value(*graph.add_input(), "d", onnx::TensorProto::FLOAT, {rows, cols});
  declare_value(*graph.add_output(), "y", onnx::TensorProto::FLOAT, {rows, cols});
  auto* zero = graph.add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::FLOAT);
  zero->add_float_data(0.0F);
  const auto add_node = [&](const char* op, std::vector<std::string> in, const char* out) {
    auto* node = graph.add_node();
    node->set_op_type(op);
    for (const auto& name : in) node->add_input(name);
    node->add_output(out);
  };
  add_node("Equal", {"d", "zero"}, "c");
  add_node("Div", {"n", "d"}, "q");
  add_node("Where", {"c", "n", "q"}, "y");
  TempDir dir;
  write_model(dir / "where.onnx", model);

  std::vector<float> n(static_cast<size_t>(count)), d(n.size()), expected(n.size());
  for (int64_t k = 0; k < count; ++k) {
    const auto u = static_cast<size_t>(k);
    n[u] = static_cast<float>(k % 1000) - 500.0F;
    d[u] = k % 3 == 0 ? 0.0F : static_cast<float>(k % 7) + 0.5F;
    expected[u] = d[u] == 0.0F ? n[u] : n[u] / d[u];
  }
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    const std::vector<Tensor> y = OnnxModel::load(dir / "where.onnx", device)
                                      ->run({Tensor::from_host(n, Shape{rows, cols}, device),
                                             Tensor::from_host(d, Shape{rows, cols}, device)});
    const std::vector<float> got = y.at(0).to_host_float();
    REQUIRE(got.size() == expected.size());
    int64_t wrong = 0, first = -1;
    for (size_t k = 0; k < got.size(); ++k) {
      if (got[k] != expected[k]) {
        ++wrong;
        if (first < 0) first = static_cast<int64_t>(k);
      }
    }
    INFO(device->backend() << ": first wrong element " << first);
    CHECK(wrong == 0);
  });
}

namespace {

// An initializer of `type` holding `bytes` as raw data.
void add_raw_initializer(onnx::GraphProto& graph, const std::string& name, int32_t type,
                         const std::vector<int64_t>& dims, const std::string& bytes) {
  auto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(type);
  for (const int64_t extent : dims) tensor->add_dims(extent);
  tensor->set_raw_data(bytes);
}

// x [1, channels, 5, 5] f32 -> DynamicQuantizeLinear -> ConvInteger(xq, w, x zero point, wz) ->
// "s" (int32), with w of `w_type` and `w_dims` (ones), w_zero_point `wz_count` values of that type
// and x's zero point DynamicQuantizeLinear's or `xz_count` uint8 values.
onnx::ModelProto conv_integer_model(int64_t channels, int32_t w_type,
                                    const std::vector<int64_t>& w_dims, int64_t wz_count,
                                    int64_t group = 1, int64_t xz_count = 0) {
  onnx::ModelProto model = graph_model({{"x", onnx::TensorProto::FLOAT, {1, channels, 5, 5}}});
  auto* graph = model.mutable_graph();
  graph->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT32);
  int64_t w_count = 1;
  for (const int64_t extent : w_dims) w_count *= extent;
  const size_t element = w_type == onnx::TensorProto::FLOAT ? 4 : 1;
  std::string w_bytes(static_cast<size_t>(w_count) * element, '\0');
  for (size_t k = 0; k < w_bytes.size(); k += element) w_bytes[k] = element == 4 ? '\0' : '\1';
  add_raw_initializer(*graph, "w", w_type, w_dims, w_bytes);
  const int32_t zero_type = w_type == onnx::TensorProto::FLOAT ? onnx::TensorProto::UINT8 : w_type;
  add_raw_initializer(*graph, "wz", zero_type, {wz_count}, std::string(wz_count, '\2'));
  testing::add_node(*graph, "DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
  std::string xz = "xz";
  if (xz_count > 0) {
    add_raw_initializer(*graph, "xz_many", onnx::TensorProto::UINT8, {xz_count},
                        std::string(xz_count, '\3'));
    xz = "xz_many";
  }
  testing::add_node(*graph, "ConvInteger", {"xq", "w", xz, "wz"}, {"s"});
  auto* group_attribute = graph->mutable_node(1)->add_attribute();
  group_attribute->set_name("group");
  group_attribute->set_type(onnx::AttributeProto::INT);
  group_attribute->set_i(group);
  return model;
}

}  // namespace

TEST_CASE("ConvInteger runs the quantized Conv exactly and refuses operands that do not fit it",
          "[onnx]") {
  const int32_t u8 = onnx::TensorProto::UINT8, i8 = onnx::TensorProto::INT8;
  // x in [-1, 1.5] quantizes with zero point 102 to round(x / (2.5 / 255)) + 102; w is all ones
  // minus its zero point 2: every output is minus the sum of its 27 centred taps.
  const std::shared_ptr<Device> device = test_device();
  std::vector<float> values(75);
  for (size_t k = 0; k < values.size(); ++k) values[k] = -1.0F + 2.5F * float(k % 11) / 10.0F;
  const Tensor x = Tensor::from_host(values, Shape{1, 3, 5, 5}, device);
  const auto model =
      load_model(conv_integer_model(3, u8, {2, 3, 3, 3}, 1), "sy_conv_integer.onnx", device);
  const Tensor y = model->run({x})[0];
  REQUIRE(y.shape() == Shape({1, 2, 3, 3}));
  const std::vector<int64_t> got = y.to_host_int64();
  const float scale = 2.5F / 255.0F;
  for (int64_t o = 0; o < 2; ++o) {
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        int64_t sum = 0;
        for (int64_t ch = 0; ch < 3; ++ch) {
          for (int64_t di = 0; di < 3; ++di) {
            for (int64_t dj = 0; dj < 3; ++dj) {
              const float v = values[size_t(ch * 25 + (i + di) * 5 + j + dj)];
              sum += static_cast<int64_t>(std::nearbyint(v / scale));  // (q + 102) - 102
            }
          }
        }
        CHECK(got[size_t(o * 9 + i * 3 + j)] == -sum);
      }
    }
  }
  expect_run_refused(conv_integer_model(3, onnx::TensorProto::FLOAT, {2, 3, 3, 3}, 1),
                     "sy_conv_integer_float_w.onnx", {x}, "(ConvInteger): w must be int8 or uint8");
  expect_run_refused(conv_integer_model(3, u8, {2, 1, 3, 3}, 1, 2), "sy_conv_integer_group.onnx",
                     {x}, "group 2 does not fit input [1, 3, 5, 5] and weight [2, 1, 3, 3]");
  expect_run_refused(conv_integer_model(3, u8, {2, 3, 3, 3}, 3), "sy_conv_integer_zero.onnx", {x},
                     "w_zero_point [3] must be one value or one per output channel (2)");
  expect_run_refused(conv_integer_model(3, u8, {2, 3, 3, 3}, 1, 1, 2), "sy_conv_integer_xz.onnx",
                     {x}, "x_zero_point [2] must be one value");
  // A kernel longer than the (padded) input: named, where CONV2D was handed a negative extent.
  expect_run_refused(conv_integer_model(3, u8, {2, 3, 7, 7}, 1), "sy_conv_integer_kernel.onnx", {x},
                     "the kernel spans 7 elements but the padded input has 5 along axis 2");
  // int8 weights under uint8 activations (ONNX's T1 and T2 are independent): the same ones.
  const auto signed_weights =
      load_model(conv_integer_model(3, i8, {2, 3, 3, 3}, 1), "sy_conv_integer_int8_w.onnx", device);
  CHECK(signed_weights->run({x})[0].to_host_int64() == got);
}

TEST_CASE("GridSample refuses a grid or input it cannot sample, naming the file and node",
          "[onnx]") {
  const std::shared_ptr<Device> device = test_device();
  const auto grid_model = [](const std::vector<int64_t>& x_dims, const std::vector<int64_t>& g_dims,
                             const std::string& mode) {
    onnx::ModelProto model = graph_model(
        {{"x", onnx::TensorProto::FLOAT, x_dims}, {"g", onnx::TensorProto::FLOAT, g_dims}});
    auto* graph = model.mutable_graph();
    graph->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
    testing::add_node(*graph, "GridSample", {"x", "g"}, {"s"});
    auto* attribute = graph->mutable_node(0)->add_attribute();
    attribute->set_name("mode");
    attribute->set_type(onnx::AttributeProto::STRING);
    attribute->set_s(mode);
    model.mutable_opset_import(0)->set_version(16);
    return model;
  };
  const auto ones = [&](const Shape& shape) {
    return Tensor::from_host(std::vector<float>(size_t(shape.numel()), 0.5F), shape, device);
  };
  // A valid one runs: every grid point at (0.5, 0.5) of a constant input gives that constant.
  const auto good = load_model(grid_model({1, 2, 3, 4}, {1, 5, 6, 2}, "bilinear"),
                               "sy_gridsample_good.onnx", device);
  const Tensor y = good->run({ones(Shape{1, 2, 3, 4}), ones(Shape{1, 5, 6, 2})})[0];
  CHECK(y.shape() == Shape({1, 2, 5, 6}));
  for (const float v : y.to_host_float()) CHECK(v == Approx(0.5F));
  const auto refused = [&](const std::vector<int64_t>& x_dims, const std::vector<int64_t>& g_dims,
                           const std::string& mode, const std::string& file,
                           const std::string& words) {
    expect_run_refused(grid_model(x_dims, g_dims, mode), file,
                       {ones(Shape(x_dims)), ones(Shape(g_dims))}, words);
  };
  refused({1, 2, 3, 4}, {1, 5, 6, 3}, "bilinear", "sy_gridsample_grid.onnx",
          "(GridSample): grid [1, 5, 6, 3] must be [1, H_out, W_out, 2]");
  refused({2, 2, 3, 4}, {1, 5, 6, 2}, "bilinear", "sy_gridsample_batch.onnx",
          "grid [1, 5, 6, 2] must be [2, H_out, W_out, 2]");
  refused({1, 2, 3, 4, 5}, {1, 5, 6, 7, 3}, "bilinear", "sy_gridsample_3d.onnx",
          "only 4-D inputs (2 spatial axes) are supported");
  // An empty spatial axis has nothing to sample (vulkan read garbage there before the check).
  refused({1, 2, 0, 4}, {1, 5, 6, 2}, "bilinear", "sy_gridsample_empty.onnx",
          "an input with an empty spatial axis [1, 2, 0, 4] has no pixel to sample");
  refused({1, 2, 3, 4}, {1, 5, 6, 2}, "area", "sy_gridsample_mode.onnx",
          "mode area is not one of bilinear, nearest, bicubic");
}

TEST_CASE("a Gather index outside the axis at run time is an error or NaN, never stale memory",
          "[onnx]") {
  // Indices fed at run time take the device path. A synchronous backend's GATHER refuses an index
  // outside the axis; an asynchronous one cannot, and skipped the element, so vulkan handed on
  // whatever its memory held (5.5e-40 and the like). Those rows are now NaN there.
  onnx::ModelProto model =
      graph_model({{"x", onnx::TensorProto::FLOAT, {4, 2}}, {"i", onnx::TensorProto::INT64, {3}}});
  auto* graph = model.mutable_graph();
  graph->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  testing::add_node(*graph, "Gather", {"x", "i"}, {"s"});
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    const auto gather = load_model(model, "sy_gather_outside.onnx", device);
    const Tensor x = Tensor::from_host(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}, {4, 2}, device);
    const auto run = [&](std::vector<int64_t> picks) {
      return gather->run({x, Tensor::from_host(picks, Shape{3}, device)})[0].to_host_float();
    };
    CHECK(run({0, 3, -4}) == std::vector<float>{0, 1, 6, 7, 0, 1});  // -4 counts from the end
    const bool asynchronous = (device->plugin().capabilities() & SY_CAP_ASYNC) != 0;
    for (const int64_t outside : {int64_t{4}, int64_t{-5}, int64_t{1} << 40}) {
      INFO("index " << outside);
      if (!asynchronous) {
        CHECK_THROWS_WITH(run({0, outside, 1}),
                          Catch::Contains("sy_gather_outside.onnx") && Catch::Contains("(Gather)"));
        continue;
      }
      const std::vector<float> y = run({0, outside, 1});
      CHECK(y[0] == 0);
      CHECK(y[1] == 1);
      CHECK(std::isnan(y[2]));
      CHECK(std::isnan(y[3]));
      CHECK(y[4] == 2);
      CHECK(y[5] == 3);
    }
  });
}
