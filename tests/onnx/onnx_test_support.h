// Helpers for the ONNX tests: the committed models, and ONNX files read and written as protobuf
// messages (libonnx_proto) so that tests can damage them field by field.
#pragma once

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "backend_support.h"
#include "formats/onnx_proto.h"
#include "switchyard/onnx.h"
#include "tensor/tensor_test_support.h"
#include "train/train_test_support.h"

namespace switchyard::testing {

inline std::filesystem::path models_dir() {
  return std::filesystem::path(SWITCHYARD_SOURCE_DIR) / "tests" / "onnx" / "models";
}

// Every committed model folder (tests/onnx/models/<name>/), with its data sets.
inline std::vector<std::filesystem::path> model_folders() {
  std::vector<std::filesystem::path> folders;
  for (const auto& entry : std::filesystem::directory_iterator(models_dir())) {
    if (std::filesystem::exists(entry.path() / "model.onnx")) folders.push_back(entry.path());
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

inline std::vector<std::filesystem::path> data_sets(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> sets;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(entry.path());
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

inline std::vector<Tensor> load_set(const std::filesystem::path& set, const std::string& prefix,
                                    const std::shared_ptr<Device>& device) {
  std::vector<Tensor> tensors;
  for (int k = 0;; ++k) {
    const auto file = set / (prefix + "_" + std::to_string(k) + ".pb");
    if (!std::filesystem::exists(file)) break;
    tensors.push_back(load_onnx_tensor(file, device));
  }
  return tensors;
}

// `body` on the test device and on every other backend usable here.
inline void on_every_backend(const std::function<void(const std::shared_ptr<Device>&)>& body) {
  body(test_device());
  for (const std::string backend : {"onednn", "vulkan", "cuda"}) {
    const std::shared_ptr<Device> device = optional_device(backend);
    if (device != nullptr) body(device);
  }
}

inline onnx::ModelProto read_model(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = read_bytes(path);
  onnx::ModelProto model;
  REQUIRE(model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  return model;
}

inline std::vector<uint8_t> model_bytes(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return {bytes.begin(), bytes.end()};
}

inline void write_model(const std::filesystem::path& path, const onnx::ModelProto& model) {
  std::filesystem::remove(path);
  write_bytes(path, model_bytes(model));
}

// Declares `value` a tensor of `type` and `dims`, where -1 is the dynamic axis "batch".
inline void declare_value(onnx::ValueInfoProto& value, const std::string& name, int32_t type,
                          const std::vector<int64_t>& dims) {
  value.set_name(name);
  auto* tensor = value.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(type);
  auto* shape = tensor->mutable_shape();
  for (const int64_t extent : dims) {
    auto* dim = shape->add_dim();
    if (extent < 0)
      dim->set_dim_param("batch");
    else
      dim->set_dim_value(extent);
  }
}

// A model built here rather than committed: one Identity node from input "x" to output "y", both
// declared of `type` and `dims` (-1: the batch axis), opset 17. Hostile declarations cost nothing
// to write this way.
inline onnx::ModelProto identity_model(const std::vector<int64_t>& dims,
                                       int32_t type = onnx::TensorProto::FLOAT) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("switchyard tests");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("identity");
  declare_value(*graph->add_input(), "x", type, dims);
  declare_value(*graph->add_output(), "y", type, dims);
  auto* node = graph->add_node();
  node->set_name("identity");
  node->set_op_type("Identity");
  node->add_input("x");
  node->add_output("y");
  return model;
}

// An INT64 initializer named `name` holding `values` (one axis).
inline void add_int64_initializer(onnx::GraphProto& graph, const std::string& name,
                                  const std::vector<int64_t>& values) {
  auto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_dims(static_cast<int64_t>(values.size()));
  for (const int64_t v : values) tensor->add_int64_data(v);
}

// A model at opset 17 with `inputs` (name, type, dims; -1: the batch axis) and one INT64 output "s"
// of open shape, for a test to add nodes to.
inline onnx::ModelProto graph_model(
    const std::vector<std::tuple<std::string, int32_t, std::vector<int64_t>>>& inputs) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("g");
  for (const auto& [name, type, dims] : inputs)
    declare_value(*graph->add_input(), name, type, dims);
  auto* output = graph->add_output();
  output->set_name("s");
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  return model;
}

// A node named "<op>_<its number>".
inline void add_node(onnx::GraphProto& graph, const std::string& op,
                     const std::vector<std::string>& in, const std::vector<std::string>& out) {
  auto* node = graph.add_node();
  node->set_name(op + "_" + std::to_string(graph.node_size()));
  node->set_op_type(op);
  for (const auto& name : in) node->add_input(name);
  for (const auto& name : out) node->add_output(name);
}

// `model` written to the temporary folder as `file` and loaded on `device`.
inline std::shared_ptr<OnnxModel> load_model(const onnx::ModelProto& model, const std::string& file,
                                             const std::shared_ptr<Device>& device) {
  const auto path = std::filesystem::temp_directory_path() / file;
  write_model(path, model);
  return OnnxModel::load(path, device);
}

// Loading `model` (written as `file`) and running it on `inputs` is refused with INVALID_ARGUMENT
// naming the file and saying `words`.
inline void expect_run_refused(const onnx::ModelProto& model, const std::string& file,
                               const std::vector<Tensor>& inputs, const std::string& words) {
  try {
    load_model(model, file, test_device())->run(inputs);
    FAIL("accepted: " << words);
  } catch (const Error& error) {
    INFO(error.what());
    CHECK(error.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(error.what(), Catch::Contains(file) && Catch::Contains(words));
  }
}

}  // namespace switchyard::testing
