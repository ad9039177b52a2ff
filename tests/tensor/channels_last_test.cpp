// Channels-last activations (ops.h, "Memory format"): to_channels_last keeps the values and sets
// NHWC strides; convolutions, pools and elementwise ops keep an input's channels-last layout in
// their outputs and give the values of the NCHW path on every backend built here; gradients flow
// through the conversion. The onednn plugin asks for the layout (SY_CAP_CHANNELS_LAST).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "backend_support.h"
#include "switchyard/ops.h"
#include "switchyard/plugin.h"
#include "switchyard/status.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::optional_device;
using switchyard::testing::test_device;

namespace {

void check_close(const Tensor& got, const Tensor& expected, const std::string& what) {
  REQUIRE(got.shape() == expected.shape());
  const std::vector<float> g = got.to_host_float();
  const std::vector<float> e = expected.to_host_float();
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double expected_value = e[i];
    worst = std::max(worst, std::abs(static_cast<double>(g[i]) - expected_value) /
                                (1.0 + std::abs(expected_value)));
  }
  INFO(what << ": worst relative difference " << worst);
  CHECK(worst <= 1e-5);
}

struct LayoutCase {
  const char* name;
  std::function<Tensor(const Tensor&)> run;  // from an [N, C, H, W] activation
  bool keeps_channels_last;                  // the output of a channels-last input is one too
};

std::vector<LayoutCase> layout_cases(const std::shared_ptr<Device>& device) {
  const Tensor w = rand_uniform({6, 4, 3, 3}, -0.5, 0.5, 2, 0, device);
  const Tensor depthwise = rand_uniform({4, 1, 3, 3}, -0.5, 0.5, 3, 0, device);
  const Tensor pointwise = rand_uniform({4, 4, 1, 1}, -0.5, 0.5, 4, 0, device);
  const Tensor bias = rand_uniform({6}, -0.5, 0.5, 5, 0, device);
  const Tensor scale = rand_uniform({2, 4, 1, 1}, 0.5, 1.5, 6, 0, device);
  Conv2dOptions padded;
  padded.pad_h = padded.pad_w = 1;
  Conv2dOptions strided_depthwise = padded;
  strided_depthwise.stride_h = strided_depthwise.stride_w = 2;
  strided_depthwise.groups = 4;
  Pool2dOptions pool;
  pool.kernel_h = pool.kernel_w = 3;
  pool.pad_h = pool.pad_w = 1;
  return {
      {"conv2d 3x3", [=](const Tensor& x) { return conv2d(x, w, bias, padded); }, true},
      {"conv2d depthwise stride 2",
       [=](const Tensor& x) { return conv2d(x, depthwise, Tensor(), strided_depthwise); }, true},
      {"conv2d_fused 1x1 + residual + SiLU",
       [=](const Tensor& x) {
         ConvEpilogue epilogue;
         epilogue.residual = x;
         epilogue.activation = ConvEpilogue::Activation::kSilu;
         return conv2d_fused(x, pointwise, Tensor(), {}, epilogue);
       },
       true},
      {"max_pool2d 3x3 stride 2", [=](const Tensor& x) { return max_pool2d(x, pool); }, true},
      {"avg_pool2d 3x3 stride 2", [=](const Tensor& x) { return avg_pool2d(x, pool); }, true},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, true},
      {"mul by a [N, C, 1, 1] scale", [=](const Tensor& x) { return mul(x, scale); }, true},
      {"[N, C, 1, 1] scale times x", [=](const Tensor& x) { return mul(scale, x); }, true},
      {"add a scalar", [](const Tensor& x) { return add(x, 0.25); }, true},
      {"mean over H and W",
       [](const Tensor& x) {
         return mean(x, {2, 3}, true);
       },
       false},
      {"flatten", [](const Tensor& x) { return x.flatten(1); }, false},
  };
}

void check_layouts(const std::shared_ptr<Device>& device) {
  const Tensor x = rand_uniform({2, 4, 7, 6}, -2.0, 2.0, 1, 0, device);
  const Tensor x_cl = to_channels_last(x);
  for (const LayoutCase& c : layout_cases(device)) {
    INFO(device->backend() << ": " << c.name);
    const Tensor nchw = c.run(x);
    const Tensor cl = c.run(x_cl);
    CHECK_FALSE(is_channels_last(nchw));
    if (c.keeps_channels_last) CHECK(is_channels_last(cl));
    check_close(cl, nchw, c.name);
  }
}

}  // namespace

TEST_CASE("channels-last: to_channels_last keeps the values and sets NHWC strides",
          "[channels_last]") {
  const std::shared_ptr<Device>& device = test_device();
  const Tensor x = rand_uniform({2, 3, 4, 5}, -1.0, 1.0, 1, 0, device);
  CHECK_FALSE(is_channels_last(x));
  const Tensor cl = to_channels_last(x);
  CHECK(is_channels_last(cl));
  CHECK(cl.strides() == Shape{60, 1, 15, 3});
  CHECK_FALSE(cl.is_contiguous());
  CHECK(cl.to_host_float() == x.to_host_float());
  // Already channels-last: the same tensor, no copy.
  CHECK(to_channels_last(cl).shares_storage_with(cl));
  // Back to NCHW through contiguous(), values unchanged.
  CHECK(cl.contiguous().is_contiguous());
  CHECK(cl.contiguous().to_host_float() == x.to_host_float());
  // A size-1 axis's stride tells the layouts apart, as in PyTorch: a dense [N, 1, H, W] or
  // [N, C, 1, 1] is NCHW, and its conversion is channels-last.
  for (const Shape& shape : {Shape{2, 1, 4, 5}, Shape{2, 3, 1, 1}}) {
    INFO(shape.to_string());
    const Tensor dense = rand_uniform(shape, -1.0, 1.0, 2, 0, device);
    CHECK_FALSE(is_channels_last(dense));
    CHECK(is_channels_last(to_channels_last(dense)));
    CHECK(to_channels_last(dense).to_host_float() == dense.to_host_float());
  }
  CHECK_FALSE(is_channels_last(rand_uniform({3, 4, 5}, -1.0, 1.0, 3, 0, device)));
  CHECK_THROWS_WITH(to_channels_last(rand_uniform({3, 4, 5}, -1.0, 1.0, 3, 0, device)),
                    Catch::Contains("to_channels_last") && Catch::Contains("[3, 4, 5]"));
}

TEST_CASE("channels-last: ops keep the layout and the values on reference", "[channels_last]") {
  check_layouts(test_device());
}

TEST_CASE("channels-last: ops keep the layout and the values on onednn", "[channels_last]") {
  if (auto device = optional_device("onednn")) check_layouts(device);
}

TEST_CASE("channels-last: ops keep the layout and the values on vulkan", "[channels_last]") {
  if (auto device = optional_device("vulkan")) check_layouts(device);
}

TEST_CASE("channels-last: an NCHW operand of the output's shape decides the output's layout",
          "[channels_last]") {
  const std::shared_ptr<Device>& device = test_device();
  const Tensor a = rand_uniform({2, 3, 4, 5}, -1.0, 1.0, 1, 0, device);
  const Tensor b = to_channels_last(rand_uniform({2, 3, 4, 5}, -1.0, 1.0, 2, 0, device));
  // a first: the layout of the first operand of the output's shape.
  CHECK_FALSE(is_channels_last(add(a, b)));
  CHECK(is_channels_last(add(b, a)));
  check_close(add(b, a), add(a, b.contiguous()), "add");
}

TEST_CASE("channels-last: gradients flow through the conversion", "[channels_last][autograd]") {
  const std::shared_ptr<Device>& device = test_device();
  const Tensor w = rand_uniform({5, 3, 3, 3}, -0.5, 0.5, 2, 0, device);
  const Tensor r = rand_uniform({2, 5, 6, 7}, -1.0, 1.0, 3, 0, device);
  Conv2dOptions o;
  o.pad_h = o.pad_w = 1;
  std::vector<Tensor> grads;
  for (bool channels_last : {false, true}) {
    Tensor x = rand_uniform({2, 3, 6, 7}, -1.0, 1.0, 1, 0, device);
    x.set_requires_grad();
    const Tensor input = channels_last ? to_channels_last(x) : x;
    sum(relu(conv2d(input, w, Tensor(), o)) * r).backward();
    grads.push_back(x.grad());
  }
  check_close(grads[1], grads[0], "grad x");
}

TEST_CASE("channels-last: onednn asks for it, the reference does not", "[channels_last]") {
  CHECK((test_device()->plugin().capabilities() & SY_CAP_CHANNELS_LAST) == 0);
  if (auto device = optional_device("onednn")) {
    CHECK((device->plugin().capabilities() & SY_CAP_CHANNELS_LAST) != 0);
  }
}
