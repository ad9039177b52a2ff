// Grouped and depthwise convolution at the tensor level: the CONV2D_GROUPED op and the composed
// path (one CONV2D per group, the fallback for a plugin without the op) give the same outputs and
// gradients on every backend built here; the profile names the path that ran; bad group counts
// are refused with the numbers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "backend_support.h"
#include "switchyard/ops.h"
#include "switchyard/plugin.h"
#include "switchyard/profile.h"
#include "switchyard/status.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::optional_device;
using switchyard::testing::test_device;

namespace {

struct GroupedSpec {
  const char* name;
  int64_t n, c, h, w, o, k;
  int groups, stride, pad, dilation;
};

const GroupedSpec kSpecs[] = {
    {"depthwise 3x3 pad 1", 2, 8, 9, 9, 8, 3, 8, 1, 1, 1},
    {"depthwise 3x3 stride 2", 1, 16, 12, 12, 16, 3, 16, 2, 1, 1},
    {"groups 2 dilation 2", 2, 4, 8, 7, 6, 3, 2, 1, 2, 2},
    {"channel multiplier 2", 2, 4, 7, 7, 8, 3, 4, 1, 1, 1},
};

struct Result {
  std::vector<float> y, gx, gw, gb;
};

Result run_path(const std::shared_ptr<Device>& device, const GroupedSpec& s, ConvPath path) {
  Tensor x = rand_uniform({s.n, s.c, s.h, s.w}, -1.0, 1.0, 11, 0, device);
  Tensor w = rand_uniform({s.o, s.c / s.groups, s.k, s.k}, -1.0, 1.0, 12, 0, device);
  Tensor b = rand_uniform({s.o}, -1.0, 1.0, 13, 0, device);
  x.set_requires_grad();
  w.set_requires_grad();
  b.set_requires_grad();
  Conv2dOptions o;
  o.stride_h = o.stride_w = s.stride;
  o.pad_h = o.pad_w = s.pad;
  o.dilation_h = o.dilation_w = s.dilation;
  o.groups = s.groups;
  o.path = path;
  const Tensor y = conv2d(x, w, b, o);
  // A weighted sum, so that every output element gets its own gradient.
  const Tensor r = rand_uniform(y.shape(), -1.0, 1.0, 14, 0, device);
  sum(y * r).backward();
  return {y.to_host_float(), x.grad().to_host_float(), w.grad().to_host_float(),
          b.grad().to_host_float()};
}

void check_close(const std::vector<float>& got, const std::vector<float>& expected,
                 const char* what) {
  REQUIRE(got.size() == expected.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = expected[i];
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - e) / (1.0 + std::abs(e)));
  }
  INFO(what << ": worst relative difference " << worst);
  CHECK(worst <= 1e-5);
}

void compare_paths(const std::shared_ptr<Device>& device) {
  for (const GroupedSpec& spec : kSpecs) {
    INFO(device->backend() << ": " << spec.name);
    const Result op = run_path(device, spec, ConvPath::kGroupedOp);
    const Result composed = run_path(device, spec, ConvPath::kComposed);
    check_close(op.y, composed.y, "y");
    check_close(op.gx, composed.gx, "grad x");
    check_close(op.gw, composed.gw, "grad w");
    check_close(op.gb, composed.gb, "grad bias");
  }
}

// The op rows a forward and backward pass on `path` leaves in a profile.
std::vector<std::string> profiled_ops(const std::shared_ptr<Device>& device, ConvPath path) {
  Profiler profiler;
  {
    ProfileScope scope(profiler);
    run_path(device, kSpecs[0], path);
  }
  std::vector<std::string> names;
  for (const OpRecord& record : profiler.op_records()) names.push_back(record.name);
  return names;
}

size_t count_of(const std::vector<std::string>& names, const std::string& name) {
  return static_cast<size_t>(std::count(names.begin(), names.end(), name));
}

}  // namespace

TEST_CASE("grouped conv: the CONV2D_GROUPED op and the composed path agree on reference",
          "[conv][grouped]") {
  compare_paths(test_device());
}

TEST_CASE("grouped conv: the op and the composed path agree on onednn", "[conv][grouped]") {
  if (auto device = optional_device("onednn")) compare_paths(device);
}

TEST_CASE("grouped conv: the op and the composed path agree on vulkan", "[conv][grouped]") {
  if (auto device = optional_device("vulkan")) compare_paths(device);
}

TEST_CASE("grouped conv: the profile names the path that ran", "[conv][grouped][profile]") {
  const std::shared_ptr<Device>& device = test_device();
  REQUIRE(device->supports(SY_OP_CONV2D_GROUPED, SY_DTYPE_F32));
  // kAuto takes the op where the device has it: one forward and two backward rows.
  const std::vector<std::string> automatic = profiled_ops(device, ConvPath::kAuto);
  CHECK(count_of(automatic, "conv2d_grouped") == 1);
  CHECK(count_of(automatic, "conv2d_grouped_backward_data") == 1);
  CHECK(count_of(automatic, "conv2d_grouped_backward_weight") == 1);
  CHECK(count_of(automatic, "conv2d") == 0);
  // The composed path: one CONV2D per group (8 here), no grouped op.
  const std::vector<std::string> composed = profiled_ops(device, ConvPath::kComposed);
  CHECK(count_of(composed, "conv2d_grouped") == 0);
  CHECK(count_of(composed, "conv2d") == static_cast<size_t>(kSpecs[0].groups));
  CHECK(count_of(composed, "conv2d_backward_data") == static_cast<size_t>(kSpecs[0].groups));
}

TEST_CASE("grouped conv: a group count that does not divide the channels is refused",
          "[conv][grouped]") {
  const std::shared_ptr<Device>& device = test_device();
  const Tensor x = rand_uniform({1, 6, 5, 5}, -1.0, 1.0, 1, 0, device);
  const Tensor w = rand_uniform({4, 2, 3, 3}, -1.0, 1.0, 2, 0, device);
  Conv2dOptions o;
  o.groups = 4;  // divides O = 4 but not C = 6
  CHECK_THROWS_WITH(conv2d(x, w, Tensor(), o),
                    Catch::Contains("groups 4") && Catch::Contains("input channels (6)"));
  o.groups = 3;  // divides C = 6 but not O = 4
  CHECK_THROWS_WITH(conv2d(x, w, Tensor(), o), Catch::Contains("output channels (4)"));
  o.groups = 2;  // divides both; the weights' dim 1 must then be 3
  CHECK_THROWS_WITH(conv2d(x, w, Tensor(), o), Catch::Contains("C / groups = 3"));
}

TEST_CASE("grouped conv: a plugin without CONV2D_GROUPED is never asked for it; the core composes",
          "[conv][grouped][dispatch]") {
  // The twin fixture supports only f32 add and matmul, as a plugin built before the grouped ops
  // would not know them; with the reference as its fallback, conv2d must compose per group and
  // fall back only for CONV2D (and the copies), never for CONV2D_GROUPED.
  const std::string path = switchyard::testing::fixture_dir("twin-a") + "/libswitchyard-twin.so";
  REQUIRE(std::filesystem::exists(path));
  const std::shared_ptr<Device> limited =
      value_or_throw(Device::create(value_or_throw(Plugin::load(path)), 0));
  REQUIRE_FALSE(limited->supports(SY_OP_CONV2D_GROUPED, SY_DTYPE_F32));
  limited->set_fallback(FallbackPolicy::kSilent, test_device());
  const std::vector<float> xs =
      rand_uniform({1, 4, 5, 5}, -1.0, 1.0, 21, 0, test_device()).to_host_float();
  const std::vector<float> ws =
      rand_uniform({4, 1, 3, 3}, -1.0, 1.0, 22, 0, test_device()).to_host_float();
  Conv2dOptions o;
  o.pad_h = o.pad_w = 1;
  o.groups = 4;
  const Tensor on_limited = conv2d(Tensor::from_host(xs, {1, 4, 5, 5}, limited),
                                   Tensor::from_host(ws, {4, 1, 3, 3}, limited), Tensor(), o);
  const Tensor on_reference =
      conv2d(Tensor::from_host(xs, {1, 4, 5, 5}, test_device()),
             Tensor::from_host(ws, {4, 1, 3, 3}, test_device()), Tensor(), o);
  check_close(on_limited.to_host_float(), on_reference.to_host_float(), "y");
  bool composed = false;
  for (const FallbackCount& count : limited->fallback_counts()) {
    CHECK(count.op != "conv2d_grouped");
    if (count.op == "conv2d") composed = count.calls == 4;
  }
  CHECK(composed);
  limited->set_fallback(FallbackPolicy::kWarn, nullptr);
}
