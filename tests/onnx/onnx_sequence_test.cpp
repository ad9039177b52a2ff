// Sequences where they do not belong: given to an op of tensors, returned as a model's output,
// indexed outside their length. Each is refused naming the file and the node. Their values are
// checked by the node suite's sy_sequence_* cases and tests/onnx/models/scripted_lists.
#include <catch2/catch.hpp>

#include "onnx_test_support.h"
#include "switchyard/ops.h"

namespace switchyard::testing {
namespace {

// x [2] into a sequence of one (SequenceConstruct "seq"); a test adds the nodes up to output "s".
onnx::ModelProto sequence_model() {
  onnx::ModelProto model = graph_model({{"x", onnx::TensorProto::FLOAT, {2}}});
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  add_node(*model.mutable_graph(), "SequenceConstruct", {"x"}, {"seq"});
  return model;
}

}  // namespace

TEST_CASE("a sequence where a tensor belongs is refused naming the file and the node",
          "[onnx][sequence][errors]") {
  onnx::ModelProto to_relu = sequence_model();
  add_node(*to_relu.mutable_graph(), "Relu", {"seq"}, {"s"});
  expect_run_refused(to_relu, "sy_sequence_to_relu.onnx", {zeros(Shape{2}, test_device())},
                     "node 'Relu_2' (Relu): input 0 is a sequence; only the sequence ops, Identity "
                     "and control flow take one");

  onnx::ModelProto as_output = sequence_model();
  add_node(*as_output.mutable_graph(), "Identity", {"seq"}, {"s"});
  expect_run_refused(as_output, "sy_sequence_output.onnx", {zeros(Shape{2}, test_device())},
                     "output 's' is a sequence; a model's outputs must be tensors");

  onnx::ModelProto past_end = sequence_model();
  add_int64_initializer(*past_end.mutable_graph(), "two", {2});
  add_node(*past_end.mutable_graph(), "SequenceAt", {"seq", "two"}, {"s"});
  expect_run_refused(
      past_end, "sy_sequence_at.onnx", {zeros(Shape{2}, test_device())},
      "node 'SequenceAt_2' (SequenceAt): position 2 is outside [-1, 0] for a sequence "
      "of 1");

  onnx::ModelProto into_tensor = sequence_model();
  add_node(*into_tensor.mutable_graph(), "SequenceInsert", {"x", "x"}, {"s"});
  expect_run_refused(into_tensor, "sy_sequence_insert.onnx", {zeros(Shape{2}, test_device())},
                     "node 'SequenceInsert_2' (SequenceInsert): input 0 must be a sequence");

  onnx::ModelProto mixed = sequence_model();
  add_int64_initializer(*mixed.mutable_graph(), "ints", {1, 2});
  add_node(*mixed.mutable_graph(), "SequenceInsert", {"seq", "ints"}, {"seq2"});
  add_node(*mixed.mutable_graph(), "ConcatFromSequence", {"seq2"}, {"s"});
  expect_run_refused(mixed, "sy_sequence_types.onnx", {zeros(Shape{2}, test_device())},
                     "node 'SequenceInsert_2' (SequenceInsert): a tensor of int64 in a sequence of "
                     "float");
}

}  // namespace switchyard::testing
