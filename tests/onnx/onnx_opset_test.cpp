// Opsets 7 to 27: every supported op knows its versions, an opset outside the range or an op its
// opset lacks is refused naming the file and node, and an older version's attribute form runs as
// the later input form does (the node suite runs ONNX's own data at each case's opset;
// onnx_node_suite_test.cpp).
#include <catch2/catch.hpp>

#include "formats/onnx_opset.h"
#include "onnx_test_support.h"
#include "switchyard/ops.h"

namespace switchyard::testing {
namespace {

using onnx_detail::op_version;

// A one-node model at `opset`: `op` from input "x" [2, 4] to output "y" (its shape left open).
onnx::ModelProto one_node(const std::string& op, int64_t opset) {
  onnx::ModelProto model = identity_model({2, 4});
  model.mutable_opset_import(0)->set_version(opset);
  auto* graph = model.mutable_graph();
  graph->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  graph->mutable_node(0)->set_op_type(op);
  graph->mutable_node(0)->set_name("n");
  return model;
}

void add_attribute(onnx::NodeProto& node, const std::string& name,
                   const std::vector<int64_t>& values) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (const int64_t v : values) a->add_ints(v);
}

Tensor run_model(const onnx::ModelProto& model, const std::string& file, const Tensor& x) {
  const auto path = std::filesystem::temp_directory_path() / file;
  write_model(path, model);
  return OnnxModel::load(path, x.device())->run({x}).at(0);
}

void expect_refused(const onnx::ModelProto& model, const std::string& file,
                    const std::string& words) {
  const auto path = std::filesystem::temp_directory_path() / file;
  write_model(path, model);
  try {
    OnnxModel::load(path, test_device())->run({zeros(Shape{2, 4}, test_device())});
    FAIL("accepted: " << words);
  } catch (const Error& error) {
    INFO(error.what());
    CHECK(error.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(error.what(), Catch::Contains(path.string()) && Catch::Contains(words));
  }
}

}  // namespace

TEST_CASE("every supported op knows the opsets where ONNX changed it", "[onnx][opset]") {
  for (const std::string& op : onnx_supported_ops()) {
    INFO(op);
    CHECK(op_version(op, kOnnxMaxOpset) >= 0);  // 0: removed (Upsample, Scatter)
  }
  CHECK(op_version("Softmax", 12) == 11);
  CHECK(op_version("Softmax", 13) == 13);
  CHECK(op_version("ReduceMean", 17) == 13);
  CHECK(op_version("ReduceMean", 27) == 18);
  CHECK(op_version("Trilu", 13) == 0);  // added at 14
  CHECK(op_version("Upsample", 9) == 9);
  CHECK(op_version("Upsample", 10) == 0);  // removed at 10
  CHECK(op_version("NoSuchOp", 17) == -1);
}

TEST_CASE("an opset outside 7 to 27, or an op its opset lacks, is refused naming it",
          "[onnx][opset][errors]") {
  for (const int64_t opset : {int64_t{6}, kOnnxMaxOpset + 1}) {
    onnx::ModelProto model = identity_model({2, 4});
    model.mutable_opset_import(0)->set_version(opset);
    expect_refused(model, "switchyard-opset-range.onnx",
                   "opset " + std::to_string(opset) + " is not supported (supported: 7 to 27");
  }
  expect_refused(one_node("Trilu", 13), "switchyard-opset-trilu.onnx",
                 "node 'n' (Trilu): op type 'Trilu' does not exist at opset 13 (ONNX added it "
                 "at opset 14)");
  onnx::ModelProto scatter = one_node("Scatter", 11);
  expect_refused(scatter, "switchyard-opset-scatter.onnx",
                 "does not exist at opset 11 (ONNX removed it at opset 11)");
}

TEST_CASE("an older version's attributes run as the later version's inputs do", "[onnx][opset]") {
  const Tensor x =
      Tensor::from_host(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, Shape{2, 4}, test_device());
  SECTION("Slice-1 (opset 9): starts, ends and axes") {
    onnx::ModelProto model = one_node("Slice", 9);
    auto& node = *model.mutable_graph()->mutable_node(0);
    add_attribute(node, "starts", {1, -3});
    add_attribute(node, "ends", {2, 100});
    add_attribute(node, "axes", {0, 1});
    const Tensor y = run_model(model, "switchyard-opset-slice.onnx", x);
    CHECK(y.shape() == Shape{1, 3});
    CHECK(y.to_host_float() == std::vector<float>{6, 7, 8});
  }
  SECTION("Slice-1 given inputs as well is refused, naming the node") {
    onnx::ModelProto model = one_node("Slice", 9);
    auto& node = *model.mutable_graph()->mutable_node(0);
    add_int64_initializer(*model.mutable_graph(), "starts", {0});
    node.add_input("starts");
    expect_refused(model, "switchyard-opset-slice-inputs.onnx",
                   "node 'n' (Slice): Slice-1 takes one input (starts, ends and axes are "
                   "attributes)");
  }
  SECTION("Clip-11 given Clip-6's min and max attributes is refused, not run unclamped") {
    onnx::ModelProto model = one_node("Clip", 11);
    auto* min = model.mutable_graph()->mutable_node(0)->add_attribute();
    min->set_name("min");
    min->set_type(onnx::AttributeProto::FLOAT);
    min->set_f(0.0F);
    expect_refused(model, "switchyard-opset-clip11.onnx",
                   "node 'n' (Clip): attribute 'min' is not read at Clip-11 (an input since "
                   "version 11)");
  }
  SECTION("Slice-1 without ends is refused") {
    onnx::ModelProto model = one_node("Slice", 9);
    add_attribute(*model.mutable_graph()->mutable_node(0), "starts", {0});
    expect_refused(model, "switchyard-opset-slice-ends.onnx",
                   "Slice-1 takes starts and ends as integer attributes");
  }
  SECTION("Split-11 (opset 12): split; the same attribute at opset 13 is refused, not ignored") {
    for (const int64_t opset : {12, 13}) {
      onnx::ModelProto model = one_node("Split", opset);
      auto& node = *model.mutable_graph()->mutable_node(0);
      add_attribute(node, "split", {1, 3});
      auto* axis = node.add_attribute();
      axis->set_name("axis");
      axis->set_type(onnx::AttributeProto::INT);
      axis->set_i(1);
      node.add_output("z");
      auto* z = model.mutable_graph()->add_output();
      z->set_name("z");
      z->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
      if (opset == 12) {
        const Tensor y = run_model(model, "switchyard-opset-split.onnx", x);
        CHECK(y.to_host_float() == std::vector<float>{1, 5});
      } else {
        // At opset 13 split is an input: the attribute would be ignored (two equal parts), so it
        // is refused, as ONNX Runtime refuses it.
        expect_refused(model, "switchyard-opset-split13.onnx",
                       "node 'n' (Split): attribute 'split' is not read at Split-13 (an input "
                       "since version 13)");
      }
    }
  }
}

}  // namespace switchyard::testing
