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

}  // namespace switchyard::testing
