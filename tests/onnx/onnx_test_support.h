// Helpers for the ONNX tests: the committed models, and ONNX files read and written as protobuf
// messages (libonnx_proto) so that tests can damage them field by field.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "formats/onnx_proto.h"
#include "tensor/tensor_test_support.h"
#include "train/train_test_support.h"

namespace switchyard::testing {

inline std::filesystem::path models_dir() {
  return std::filesystem::path(SWITCHYARD_SOURCE_DIR) / "tests" / "onnx" / "models";
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

}  // namespace switchyard::testing
