// If and Loop (onnx_control.cpp): hostile subgraphs refused naming the file and the node, an If
// that the input shape decides recorded and replayed, a value a subgraph reads never fused away.
// ONNX's own If and Loop cases and the sy_if_* / sy_loop_* cases run in the node suite, a
// torch.jit.script export (tests/onnx/models/control_flow) with the committed models.
#include <catch2/catch.hpp>

#include <cmath>

#include "formats/onnx_ops_internal.h"
#include "onnx_test_support.h"
#include "switchyard/capture.h"
#include "switchyard/ops.h"

namespace switchyard::testing {
namespace {

onnx::GraphProto& add_graph(onnx::NodeProto& node, const std::string& attribute) {
  auto* a = node.add_attribute();
  a->set_name(attribute);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(attribute);
  return *a->mutable_g();
}

onnx::NodeProto& last_node(onnx::GraphProto& graph) {
  return *graph.mutable_node(graph.node_size() - 1);
}

// A subgraph's input or output of `type`, its shape left open.
void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list,
               const std::string& name, int32_t type) {
  auto* value = list.Add();
  value->set_name(name);
  value->mutable_type()->mutable_tensor_type()->set_elem_type(type);
}

// Loop(M, cond) over a body that passes its condition through and scans its iteration number
// (no carried values); the graph's output is that scan's shape, so the Loop is needed (a node no
// output needs is not run).
onnx::ModelProto loop_model(const std::string& trips, const std::string& condition) {
  onnx::ModelProto model = graph_model({{"x", onnx::TensorProto::FLOAT, {2}}});
  auto& graph = *model.mutable_graph();
  add_int64_initializer(graph, "M", {int64_t{1} << 40});
  graph.mutable_initializer(0)->clear_dims();  // a scalar
  auto* cond = graph.add_initializer();
  cond->set_name("cond");
  cond->set_data_type(onnx::TensorProto::BOOL);
  cond->add_int32_data(1);
  add_node(graph, "Loop", {trips, condition}, {"scanned"});
  onnx::GraphProto& body = add_graph(last_node(graph), "body");
  add_value(*body.mutable_input(), "i", onnx::TensorProto::INT64);
  add_value(*body.mutable_input(), "c", onnx::TensorProto::BOOL);
  add_node(body, "Identity", {"c"}, {"c_out"});
  add_node(body, "Identity", {"i"}, {"i_out"});
  add_value(*body.mutable_output(), "c_out", onnx::TensorProto::BOOL);
  add_value(*body.mutable_output(), "i_out", onnx::TensorProto::INT64);
  add_node(graph, "Shape", {"scanned"}, {"s"});
  return model;
}

// If(cond) with branches giving `then_out` / `else_out` ("x" doubled / "x" plus one by default).
onnx::ModelProto if_model() {
  onnx::ModelProto model = graph_model({{"x", onnx::TensorProto::FLOAT, {-1}}});
  auto& graph = *model.mutable_graph();
  graph.mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  add_int64_initializer(graph, "zero", {0});
  add_int64_initializer(graph, "two", {2});
  add_node(graph, "Shape", {"x"}, {"shape"});
  add_node(graph, "Gather", {"shape", "zero"}, {"n"});
  add_node(graph, "Greater", {"n", "two"}, {"long"});
  add_node(graph, "If", {"long"}, {"s"});
  onnx::GraphProto& then_branch = add_graph(last_node(graph), "then_branch");
  add_node(then_branch, "Add", {"x", "x"}, {"doubled"});
  add_value(*then_branch.mutable_output(), "doubled", onnx::TensorProto::FLOAT);
  onnx::GraphProto& else_branch = add_graph(last_node(graph), "else_branch");
  add_node(else_branch, "Cast", {"two"}, {"two_f"});
  last_node(else_branch).add_attribute()->set_name("to");
  last_node(else_branch).mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  last_node(else_branch).mutable_attribute(0)->set_i(onnx::TensorProto::FLOAT);
  add_node(else_branch, "Sub", {"x", "two_f"}, {"less"});
  add_value(*else_branch.mutable_output(), "less", onnx::TensorProto::FLOAT);
  return model;
}

// Refused naming the file and saying `words`, where the model is run on x = [1, 2].
void expect_refused(const onnx::ModelProto& model, const std::string& file,
                    const std::string& words) {
  expect_run_refused(model, file,
                     {Tensor::from_host(std::vector<float>{1, 2}, Shape{2}, test_device())}, words);
}

// The graph of attribute `attribute` of node `node` of the model's graph.
onnx::GraphProto& subgraph(onnx::ModelProto& model, int node, int attribute) {
  return *model.mutable_graph()->mutable_node(node)->mutable_attribute(attribute)->mutable_g();
}

}  // namespace

TEST_CASE("hostile If and Loop nodes are refused naming the file and the node",
          "[onnx][control][errors]") {
  expect_refused(loop_model("", ""), "sy_loop_endless.onnx",
                 "node 'Loop_1' (Loop): has neither a trip count nor a condition, so it would "
                 "never end");
  {
    const int64_t previous = onnx_detail::max_loop_iterations();
    onnx_detail::set_max_loop_iterations(100);
    expect_refused(loop_model("M", ""), "sy_loop_2_to_40.onnx",
                   "node 'Loop_1' (Loop): runs more than 100 iterations (trip count "
                   "1099511627776)");
    expect_refused(loop_model("", "cond"), "sy_loop_while_true.onnx",
                   "node 'Loop_1' (Loop): runs more than 100 iterations");
    onnx_detail::set_max_loop_iterations(previous);
  }
  onnx::ModelProto body_input = loop_model("M", "");
  add_value(*subgraph(body_input, 0, 0).mutable_input(), "extra", onnx::TensorProto::FLOAT);
  expect_refused(body_input, "sy_loop_body_inputs.onnx",
                 "node 'Loop_1' (Loop): the body takes 3 inputs and gives 2 outputs");

  // A scan output whose shape changes: Range(0, i + 1) has i + 1 elements.
  onnx::ModelProto scan = loop_model("M", "");
  auto& body = subgraph(scan, 0, 0);
  add_int64_initializer(body, "zero", {0});
  add_int64_initializer(body, "one", {1});
  for (int k = 0; k < 2; ++k) body.mutable_initializer(k)->clear_dims();
  add_node(body, "Add", {"i", "one"}, {"i1"});
  add_node(body, "Range", {"zero", "i1", "one"}, {"r"});
  add_value(*body.mutable_output(), "r", onnx::TensorProto::INT64);
  scan.mutable_graph()->mutable_node(0)->add_output("ranges");
  expect_refused(scan, "sy_loop_scan_shape.onnx",
                 "node 'Loop_1' (Loop): scan output 1 is int64 [1] in the first iteration but "
                 "int64 [2] in iteration 1");

  onnx::ModelProto undefined = if_model();
  auto* then_node = subgraph(undefined, 3, 0).mutable_node(0);
  then_node->set_input(1, "nope");
  expect_refused(undefined, "sy_if_undefined.onnx",
                 "node 'If_4/then_branch/Add_1' (Add) reads 'nope', which no node, input or "
                 "initializer defines");

  onnx::ModelProto outputs = if_model();
  add_value(*subgraph(outputs, 3, 1).mutable_output(), "two", onnx::TensorProto::INT64);
  expect_refused(outputs, "sy_if_outputs.onnx",
                 "node 'If_4' (If): each branch must take no inputs and give 1 output(s), as "
                 "the node does");

  onnx::ModelProto wide = if_model();  // the condition x == x: one per element of x
  add_node(*wide.mutable_graph(), "Equal", {"x", "x"}, {"same"});
  wide.mutable_graph()->mutable_node(3)->set_input(0, "same");
  expect_refused(wide, "sy_if_condition_shape.onnx",
                 "node 'If_4' (If): the condition must hold one value, got shape [2]");

  onnx::ModelProto stray = if_model();
  add_graph(*stray.mutable_graph()->mutable_node(0), "g");
  expect_refused(stray, "sy_graph_attribute.onnx",
                 "node 'Shape_1' (Shape): subgraph attribute 'g' is not supported (If's "
                 "branches and Loop's body are)");

  // Scan over two inputs of different lengths, and with num_scan_inputs past the inputs.
  onnx::ModelProto scan_lengths =
      graph_model({{"a", onnx::TensorProto::FLOAT, {3}}, {"b", onnx::TensorProto::FLOAT, {4}}});
  auto& scan_graph = *scan_lengths.mutable_graph();
  scan_graph.mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  add_node(scan_graph, "Scan", {"a", "b"}, {"s"});
  auto* scans = last_node(scan_graph).add_attribute();
  scans->set_name("num_scan_inputs");
  scans->set_type(onnx::AttributeProto::INT);
  scans->set_i(2);
  onnx::GraphProto& scan_body = add_graph(last_node(scan_graph), "body");
  add_value(*scan_body.mutable_input(), "a_t", onnx::TensorProto::FLOAT);
  add_value(*scan_body.mutable_input(), "b_t", onnx::TensorProto::FLOAT);
  add_node(scan_body, "Add", {"a_t", "b_t"}, {"sum"});
  add_value(*scan_body.mutable_output(), "sum", onnx::TensorProto::FLOAT);
  expect_run_refused(scan_lengths, "sy_scan_lengths.onnx",
                     {zeros(Shape{3}, test_device()), zeros(Shape{4}, test_device())},
                     "node 'Scan_1' (Scan): scan input 1 is 4 long, scan input 0 3");
  scans->set_i(3);
  expect_refused(scan_lengths, "sy_scan_count.onnx",
                 "node 'Scan_1' (Scan): num_scan_inputs 3, 2 inputs and 1 outputs do not fit a "
                 "body of 2 inputs and 1 outputs (states, then scans)");

  // 17 Ifs, each in the one before's then branch.
  onnx::ModelProto deep = if_model();
  onnx::GraphProto* level = deep.mutable_graph();
  for (int k = 0; k < 17; ++k) {
    add_node(*level, "If", {"long"}, {"s"});
    level = &add_graph(last_node(*level), "then_branch");
  }
  expect_refused(deep, "sy_if_deep.onnx", "subgraphs nest more than 16 deep");
}

TEST_CASE("an If that the input shape decides runs its branch, and is recorded and replayed",
          "[onnx][control][capture]") {
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    INFO(device->id());
    const auto model = load_model(if_model(), "sy_if_shape.onnx", device);
    model->set_capture(CaptureMode::kOn);
    for (int round = 0; round < 3; ++round) {  // eager, recorded, replayed
      const Tensor three = Tensor::from_host(std::vector<float>{1, 2, 3}, Shape{3}, device);
      CHECK(model->run({three}).at(0).to_host_float() == std::vector<float>{2, 4, 6});
      if (round == 2) CHECK_THAT(model->capture_summary(), Catch::StartsWith("replayed"));
      const Tensor two = Tensor::from_host(std::vector<float>{5, 7}, Shape{2}, device);
      CHECK(model->run({two}).at(0).to_host_float() == std::vector<float>{3, 5});
      if (round == 2) CHECK_THAT(model->capture_summary(), Catch::StartsWith("replayed"));
    }
    CHECK_THAT(model->execution_summary(), Catch::Contains("If 1 else branch"));
  });
}

TEST_CASE("a value an If's branch reads is not fused away", "[onnx][control][fusion]") {
  // y = x @ W + b (fusable into one linear), and an If whose then branch returns x @ W itself.
  onnx::ModelProto model = if_model();
  auto& graph = *model.mutable_graph();
  graph.mutable_input(0)->Clear();
  declare_value(*graph.mutable_input(0), "x", onnx::TensorProto::FLOAT, {1, 2});
  auto* w = graph.add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(2);
  for (const float v : {1.0F, 2.0F, 3.0F, 4.0F}) w->add_float_data(v);
  auto* b = graph.add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(2);
  for (const float v : {10.0F, 20.0F}) b->add_float_data(v);
  add_node(graph, "MatMul", {"x", "W"}, {"xw"});
  add_node(graph, "Add", {"xw", "b"}, {"y"});
  auto* y = graph.add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  add_int64_initializer(graph, "one", {1});
  graph.mutable_node(1)->set_input(1, "one");   // n = x's extent 2 along axis 1
  graph.mutable_node(2)->set_input(1, "zero");  // 2 > 0: the then branch
  auto& then_branch = subgraph(model, 3, 0);
  then_branch.mutable_node(0)->set_op_type("Identity");
  then_branch.mutable_node(0)->clear_input();
  then_branch.mutable_node(0)->add_input("xw");
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    INFO(device->id());
    const auto loaded = load_model(model, "sy_if_reads_product.onnx", device);
    const std::vector<Tensor> out =
        loaded->run({Tensor::from_host(std::vector<float>{1, 1}, Shape{1, 2}, device)});
    CHECK(out.at(0).to_host_float() == std::vector<float>{4, 6});
    CHECK(out.at(1).to_host_float() == std::vector<float>{14, 26});
    CHECK_THAT(loaded->execution_summary(), Catch::Contains("If 1 then branch"));
  });
}

TEST_CASE("a BatchNormalization in a Loop's body takes each iteration's scale",
          "[onnx][control][cache]") {
  // scale <- 2 scale, carried on the host; each iteration's x * scale / sqrt(1 + eps) is scanned.
  // Prepared (folded) parameters are kept only when they are constants, not these.
  onnx::ModelProto model = graph_model({{"x", onnx::TensorProto::FLOAT, {1, 2, 1, 1}}});
  auto& graph = *model.mutable_graph();
  graph.mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  const auto floats = [](onnx::GraphProto& g, const std::string& name, std::vector<float> v) {
    auto* t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    if (v.size() != 1) t->add_dims(static_cast<int64_t>(v.size()));
    for (const float f : v) t->add_float_data(f);
  };
  auto* final_scale = graph.add_output();
  final_scale->set_name("scale");
  final_scale->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  add_int64_initializer(graph, "M", {3});
  graph.mutable_initializer(0)->clear_dims();
  floats(graph, "scale0", {1, 1});
  floats(graph, "zeros", {0, 0});
  floats(graph, "ones", {1, 1});
  add_node(graph, "Loop", {"M", "", "scale0"}, {"scale", "s"});
  onnx::GraphProto& body = add_graph(last_node(graph), "body");
  floats(body, "two", {2});
  add_value(*body.mutable_input(), "i", onnx::TensorProto::INT64);
  add_value(*body.mutable_input(), "c", onnx::TensorProto::BOOL);
  add_value(*body.mutable_input(), "scale_in", onnx::TensorProto::FLOAT);
  add_node(body, "Identity", {"c"}, {"c_out"});
  add_node(body, "BatchNormalization", {"x", "scale_in", "zeros", "zeros", "ones"}, {"y"});
  add_node(body, "Mul", {"scale_in", "two"}, {"scale_out"});
  for (const char* name : {"c_out", "scale_out", "y"})
    add_value(*body.mutable_output(), name, onnx::TensorProto::FLOAT);
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    INFO(device->id());
    const auto loaded = load_model(model, "sy_loop_batchnorm.onnx", device);
    for (int run = 0; run < 2; ++run) {
      const std::vector<Tensor> out =
          loaded->run({Tensor::from_host(std::vector<float>{1, -3}, Shape{1, 2, 1, 1}, device)});
      CHECK(out.at(1).to_host_float() == std::vector<float>{8, 8});
      CHECK(out.at(0).shape() == Shape{3, 1, 2, 1, 1});
      const std::vector<float> scanned = out.at(0).to_host_float();
      const float unit = 1.0F / std::sqrt(1.0F + 1e-5F);
      for (size_t k = 0; k < 3; ++k) {
        const float scale = static_cast<float>(1 << k);
        CHECK(scanned[2 * k] == Approx(scale * unit).epsilon(1e-6));
        CHECK(scanned[2 * k + 1] == Approx(-3 * scale * unit).epsilon(1e-6));
      }
    }
  });
}

}  // namespace switchyard::testing
