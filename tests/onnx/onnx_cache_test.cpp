// What the importer keeps between runs of one input signature is what that signature decides: a
// shape that depends on the inputs' values (NonZero, a shape given as an input) is computed again
// on every run, eagerly and under capture.
#include <catch2/catch.hpp>

#include "onnx_test_support.h"
#include "switchyard/capture.h"

namespace switchyard::testing {

TEST_CASE("a shape that depends on the input values is not kept between runs of one signature",
          "[onnx][cache]") {
  // NonZero's count, and shapes given as input values: the signature (dtype and shape of each
  // input) is the same in every run, the shape is not. A Shape of them was kept from the first run.
  onnx::ModelProto nonzero = graph_model({{"x", onnx::TensorProto::FLOAT, {4}}});
  add_node(*nonzero.mutable_graph(), "NonZero", {"x"}, {"nz"});
  add_node(*nonzero.mutable_graph(), "Shape", {"nz"}, {"s"});

  onnx::ModelProto expand = graph_model({{"n", onnx::TensorProto::INT64, {2}}});
  add_int64_initializer(*expand.mutable_graph(), "one", {1});
  add_node(*expand.mutable_graph(), "Expand", {"one", "n"}, {"e"});
  add_node(*expand.mutable_graph(), "Shape", {"e"}, {"s"});

  on_every_backend([&](const std::shared_ptr<Device>& device) {
    INFO(device->id());
    for (const CaptureMode mode : {CaptureMode::kOff, CaptureMode::kOn}) {
      const auto a = load_model(nonzero, "sy_nonzero_shape.onnx", device);
      const auto b = load_model(expand, "sy_expand_shape.onnx", device);
      a->set_capture(mode);
      b->set_capture(mode);
      for (int round = 0; round < 3; ++round) {  // eager, recorded, replayed (where replayable)
        const std::vector<std::pair<std::vector<float>, std::vector<int64_t>>> counts = {
            {{1, 0, 0, 0}, {1, 1}}, {{1, 1, 1, 0}, {1, 3}}, {{0, 0, 0, 0}, {1, 0}}};
        for (const auto& [x, expected] : counts) {
          CHECK(a->run({Tensor::from_host(x, Shape{4}, device)}).at(0).to_host_int64() == expected);
        }
        for (const std::vector<int64_t>& n :
             {std::vector<int64_t>{2, 3}, std::vector<int64_t>{4, 5}}) {
          CHECK(b->run({Tensor::from_host(n, Shape{2}, device)}).at(0).to_host_int64() == n);
        }
      }
    }
  });
}

}  // namespace switchyard::testing
