// NonMaxSuppression and RoiAlign given what no detection model gives them: refused naming the file
// and the node. Their values are checked by the node suite (ONNX's cases and the sy_* ones) and by
// tests/onnx/models/detection_opset13 against PyTorch.
#include <catch2/catch.hpp>

#include <limits>

#include "onnx_test_support.h"
#include "switchyard/ops.h"

namespace switchyard::testing {
namespace {

// RoiAlign(x [1, 2, 4, 4], rois [1, 4], batch [1]) with the given batch index and attributes.
onnx::ModelProto roi_align(int64_t batch_index, const std::string& mode,
                           const std::vector<int64_t>& x_dims = {1, 2, 4, 4}) {
  onnx::ModelProto model = graph_model(
      {{"x", onnx::TensorProto::FLOAT, x_dims}, {"rois", onnx::TensorProto::FLOAT, {1, 4}}});
  auto& graph = *model.mutable_graph();
  graph.mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  add_int64_initializer(graph, "batch", {batch_index});
  add_node(graph, "RoiAlign", {"x", "rois", "batch"}, {"s"});
  auto* a = graph.mutable_node(0)->add_attribute();
  a->set_name("mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(mode);
  return model;
}

}  // namespace

TEST_CASE("RoiAlign and NonMaxSuppression refuse what they cannot read, naming the node",
          "[onnx][detection][errors]") {
  const auto device = test_device();
  const Tensor x = zeros(Shape{1, 2, 4, 4}, device);
  const Tensor rois = Tensor::from_host(std::vector<float>{0, 0, 2, 2}, Shape{1, 4}, device);
  expect_run_refused(roi_align(5, "avg"), "sy_roialign_batch.onnx", {x, rois},
                     "node 'RoiAlign_1' (RoiAlign): batch index 5 of region 0 is outside [0, 1)");
  expect_run_refused(roi_align(0, "median"), "sy_roialign_mode.onnx", {x, rois},
                     "node 'RoiAlign_1' (RoiAlign): mode 'median' is not avg or max");
  expect_run_refused(roi_align(0, "avg", {1, 2, 0, 4}), "sy_roialign_empty.onnx",
                     {zeros(Shape{1, 2, 0, 4}, device), rois},
                     "node 'RoiAlign_1' (RoiAlign): X [1, 2, 0, 4] has no height or width");

  onnx::ModelProto nms = graph_model({{"boxes", onnx::TensorProto::FLOAT, {2, 20}},
                                      {"scores", onnx::TensorProto::FLOAT, {1, 1, 5}}});
  add_node(*nms.mutable_graph(), "NonMaxSuppression", {"boxes", "scores"}, {"s"});
  expect_run_refused(
      nms, "sy_nms_boxes.onnx", {zeros(Shape{2, 20}, device), zeros(Shape{1, 1, 5}, device)},
      "node 'NonMaxSuppression_1' (NonMaxSuppression): boxes must be float [batches, "
      "boxes, 4], got [2, 20]");
  onnx::ModelProto scores = nms;
  auto& graph = *scores.mutable_graph();
  graph.mutable_input(0)->Clear();
  declare_value(*graph.mutable_input(0), "boxes", onnx::TensorProto::FLOAT, {1, 5, 4});
  graph.mutable_input(1)->Clear();
  declare_value(*graph.mutable_input(1), "scores", onnx::TensorProto::FLOAT, {1, 1, 6});
  expect_run_refused(scores, "sy_nms_scores.onnx",
                     {zeros(Shape{1, 5, 4}, device), zeros(Shape{1, 1, 6}, device)},
                     "node 'NonMaxSuppression_1' (NonMaxSuppression): scores must be float [1, "
                     "classes, 5], got [1, 1, 6]");
}

TEST_CASE("NonMaxSuppression never selects a NaN score", "[onnx][detection]") {
  onnx::ModelProto model = graph_model({{"boxes", onnx::TensorProto::FLOAT, {1, 3, 4}},
                                        {"scores", onnx::TensorProto::FLOAT, {1, 1, 3}}});
  add_int64_initializer(*model.mutable_graph(), "most", {10});
  add_node(*model.mutable_graph(), "NonMaxSuppression", {"boxes", "scores", "most"}, {"s"});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    INFO(device->id());
    const std::vector<Tensor> out =
        load_model(model, "sy_nms_nan.onnx", device)
            ->run({Tensor::from_host(std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5},
                                     Shape{1, 3, 4}, device),
                   Tensor::from_host(std::vector<float>{0.5F, nan, 0.7F}, Shape{1, 1, 3}, device)});
    CHECK(out.at(0).to_host_int64() == std::vector<int64_t>{0, 0, 2, 0, 0, 0});
  });
}

}  // namespace switchyard::testing
