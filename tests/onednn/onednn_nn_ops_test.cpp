// Reductions, softmax, cross-entropy, convolution, pooling and layer normalisation on the onednn
// plugin against the reference, including strided inputs, every float dtype and sizes large
// enough for the threaded paths.
#include <algorithm>
#include <cmath>
#include <limits>

#include "onednn/onednn_test_support.h"
#include "switchyard/ops.h"
#include "switchyard/tensor.h"

namespace switchyard::onednn_test {
namespace {

TEST_CASE("onednn reductions over any axes match the reference", "[onednn][reduce]") {
  for (sy_op op : {SY_OP_REDUCE_SUM, SY_OP_REDUCE_MEAN, SY_OP_REDUCE_MAX}) {
    for (sy_dtype dtype : kFloatDtypes) {
      DYNAMIC_SECTION("op " << op << " " << dtype_name(dtype)) {
        struct Variant {
          Shape in;
          uint32_t mask;
          bool keep;
          Shape out;
        };
        const Variant variants[] = {
            {{4, 5, 6}, 0b010, false, {4, 6}}, {{4, 5, 6}, 0b101, true, {1, 5, 1}},
            {{4, 5, 6}, 0b111, false, {}},     {{4, 5, 6}, 0, false, {4, 5, 6}},
            {{512, 300}, 0b01, false, {300}},  {{3, 200000}, 0b10, false, {3}},
            {{70, 40}, 0b01, false, {40}}};  // rows summed 32 at a time, and a tail of 6
        for (const Variant& v : variants) {
          // Spread (strided) and dense: a dense reduction over leading axes takes the row path.
          for (const HostTensor& x : {spread(random(dtype, v.in, 1)), random(dtype, v.in, 1)}) {
            OpCase op_case = conformance::make_op_case(op, {x}, {conformance::zeros(dtype, v.out)});
            op_case.params.reduce.axes_mask = v.mask;
            op_case.params.reduce.keep_dims = v.keep;
            check_against_reference(op_case, dtype);
          }
        }
      }
    }
  }
}

TEST_CASE("onednn argmax picks the first maximum along one axis", "[onednn][reduce]") {
  for (sy_dtype out_dtype : {SY_DTYPE_I32, SY_DTYPE_I64}) {
    for (uint32_t axis : {0u, 1u}) {
      Shape out_shape = axis == 0 ? Shape{9} : Shape{7};
      OpCase op_case =
          conformance::make_op_case(SY_OP_ARGMAX, {spread(random(SY_DTYPE_BF16, {7, 9}, 3))},
                                    {conformance::zeros(out_dtype, out_shape)});
      op_case.params.reduce.axes_mask = 1u << axis;
      check_against_reference(op_case, SY_DTYPE_BF16);
    }
  }
  // Ties: the smallest index wins.
  OpCase ties = conformance::make_op_case(
      SY_OP_ARGMAX, {conformance::tensor_from_values(SY_DTYPE_F32, {5}, {1, 3, 2, 3, 0})},
      {conformance::zeros(SY_DTYPE_I64, {})});
  ties.params.reduce.axes_mask = 1;
  auto result = conformance::execute_case(onednn(), ties);
  REQUIRE(result.ok());
  CHECK((*result)[0].logical_values() == std::vector<double>{1.0});
}

TEST_CASE("onednn softmax family matches the reference on every axis", "[onednn][softmax]") {
  for (sy_dtype dtype : kFloatDtypes) {
    for (int axis : {0, 2}) {
      DYNAMIC_SECTION(dtype_name(dtype) << " axis " << axis) {
        const Shape shape = {6, 5, 130};
        for (sy_op op : {SY_OP_SOFTMAX, SY_OP_LOG_SOFTMAX}) {
          OpCase forward = conformance::make_op_case(op, {random(dtype, shape, 1, -3, 3)},
                                                     {spread(conformance::zeros(dtype, shape))});
          forward.params.softmax.axis = axis;
          check_against_reference(forward, dtype);
        }
        HostTensor y = random(dtype, shape, 2, 0.01, 0.2);
        for (sy_op op : {SY_OP_SOFTMAX_BACKWARD, SY_OP_LOG_SOFTMAX_BACKWARD}) {
          HostTensor saved = op == SY_OP_LOG_SOFTMAX_BACKWARD ? random(dtype, shape, 2, -4, -1) : y;
          OpCase backward = conformance::make_op_case(op, {spread(random(dtype, shape, 3)), saved},
                                                      {conformance::zeros(dtype, shape)});
          backward.params.softmax.axis = axis;
          check_against_reference(backward, dtype);
        }
      }
    }
  }
}

TEST_CASE("onednn cross-entropy and its gradient match the reference", "[onednn][loss]") {
  for (sy_dtype dtype : kFloatDtypes) {
    for (uint32_t reduction : {0u, 1u}) {
      DYNAMIC_SECTION(dtype_name(dtype) << " reduction " << reduction) {
        conformance::Generator gen(7);
        HostTensor labels = conformance::random_integers(gen, SY_DTYPE_I64, {40}, 0, 9);
        HostTensor logits = spread(random(dtype, {40, 10}, 8, -4, 4));
        OpCase forward = conformance::make_op_case(SY_OP_CROSS_ENTROPY, {logits, labels},
                                                   {conformance::zeros(dtype, {})});
        forward.params.cross_entropy.reduction = reduction;
        check_against_reference(forward, dtype);
        OpCase backward = conformance::make_op_case(
            SY_OP_CROSS_ENTROPY_BACKWARD,
            {logits, labels, conformance::tensor_from_values(dtype, {}, {0.75})},
            {conformance::zeros(dtype, {40, 10})});
        backward.params.cross_entropy.reduction = reduction;
        check_against_reference(backward, dtype);
      }
    }
  }
  // Enough logits for the oneDNN softmax path.
  for (sy_dtype dtype : kFloatDtypes) {
    conformance::Generator gen(9);
    HostTensor labels = conformance::random_integers(gen, SY_DTYPE_I32, {300}, 0, 99);
    HostTensor logits = random(dtype, {300, 100}, 10, -5, 5);
    OpCase forward = conformance::make_op_case(SY_OP_CROSS_ENTROPY, {logits, labels},
                                               {conformance::zeros(dtype, {})});
    check_against_reference(forward, dtype);
    OpCase backward = conformance::make_op_case(
        SY_OP_CROSS_ENTROPY_BACKWARD,
        {logits, labels, conformance::tensor_from_values(dtype, {}, {1.5})},
        {spread(conformance::zeros(dtype, {300, 100}))});
    check_against_reference(backward, dtype);
  }
  OpCase bad = conformance::make_op_case(
      SY_OP_CROSS_ENTROPY,
      {random(SY_DTYPE_F32, {2, 3}, 1), conformance::tensor_from_values(SY_DTYPE_I32, {2}, {0, 3})},
      {conformance::zeros(SY_DTYPE_F32, {})});
  Status status = run_onednn(bad);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find("label 3 in row 1") != std::string::npos);
}

// Distinct values k / 4 (exact in every float dtype up to |k| = 256) in shuffled order: pooling
// windows have no tied maxima.
HostTensor distinct_values(sy_dtype dtype, const Shape& shape, uint64_t seed) {
  const int64_t count = conformance::shape_element_count(shape);
  std::vector<double> values;
  for (int64_t k = 0; k < count; ++k) values.push_back(static_cast<double>(k - count / 2) / 4.0);
  conformance::Generator gen(seed);
  for (int64_t i = count - 1; i > 0; --i) std::swap(values[i], values[gen.integer(0, i)]);
  return conformance::tensor_from_values(dtype, shape, values);
}

sy_conv2d_params conv_params(int stride, int pad, int dilation, bool bias) {
  sy_conv2d_params p{};
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  p.dilation_h = p.dilation_w = dilation;
  p.has_bias = bias;
  return p;
}

TEST_CASE("onednn convolution forward and backward match the reference", "[onednn][conv]") {
  struct Variant {
    int stride, pad, dilation;
    bool bias;
  };
  for (sy_dtype dtype : kFloatDtypes) {
    for (const Variant& v :
         {Variant{1, 1, 1, true}, Variant{2, 0, 1, false}, Variant{1, 2, 2, true}}) {
      DYNAMIC_SECTION(dtype_name(dtype)
                      << " stride " << v.stride << " pad " << v.pad << " dilation " << v.dilation) {
        const Shape x_shape = {3, 4, 11, 10};
        const Shape w_shape = {8, 4, 3, 3};
        const int64_t oh = (11 + 2 * v.pad - v.dilation * 2 - 1) / v.stride + 1;
        const int64_t ow = (10 + 2 * v.pad - v.dilation * 2 - 1) / v.stride + 1;
        const Shape y_shape = {3, 8, oh, ow};
        std::vector<HostTensor> inputs = {spread(random(dtype, x_shape, 1)),
                                          random(dtype, w_shape, 2)};
        if (v.bias) inputs.push_back(random(dtype, {8}, 3));
        OpCase forward =
            conformance::make_op_case(SY_OP_CONV2D, inputs, {conformance::zeros(dtype, y_shape)});
        forward.params.conv2d = conv_params(v.stride, v.pad, v.dilation, v.bias);
        check_against_reference(forward, dtype);

        OpCase data = conformance::make_op_case(
            SY_OP_CONV2D_BACKWARD_DATA, {random(dtype, y_shape, 4), random(dtype, w_shape, 2)},
            {spread(conformance::zeros(dtype, x_shape))});
        data.params.conv2d = conv_params(v.stride, v.pad, v.dilation, v.bias);
        check_against_reference(data, dtype);

        std::vector<HostTensor> grads = {conformance::zeros(dtype, w_shape)};
        if (v.bias) grads.push_back(conformance::zeros(dtype, {8}));
        OpCase weight = conformance::make_op_case(
            SY_OP_CONV2D_BACKWARD_WEIGHT, {random(dtype, y_shape, 4), random(dtype, x_shape, 1)},
            grads);
        weight.params.conv2d = conv_params(v.stride, v.pad, v.dilation, v.bias);
        check_against_reference(weight, dtype);
      }
    }
  }
}

// EfficientNet-B0's and ResNet's blocks on channels-last activations, at sizes where onednn's
// activation pass, its per-channel scale and its narrow-row global average pool split over both
// threads (from kMinRowElements, op_context.h, a thread): a 1x1 and a depthwise convolution with
// SILU, a 1x1 convolution whose residual (holding a NaN) is added in the ReLU's pass, the pool, and
// the scale.
TEST_CASE(
    "onednn squeeze-excitation pieces on channels-last activations match the reference, threaded",
    "[onednn][conv][reduce][elementwise]") {
  const auto channels_last = [](const HostTensor& t) {
    return conformance::permuted_layout(t, {0, 2, 3, 1});
  };
  const Shape x_shape = {1, 24, 61, 59};  // 86k elements in, 144k out of the 1x1 layer
  const Shape y_shape = {1, 40, 61, 59};
  // x [1, C, 61, 59] channels-last -> y [1, 40, 61, 59]; w [40, C / groups, k, k].
  const auto check_fused_conv = [&](const Shape& x, int64_t kernel, int groups, uint64_t seed,
                                    uint32_t activation, const HostTensor* residual) {
    std::vector<HostTensor> inputs = {
        channels_last(random(SY_DTYPE_F32, x, seed, -3.0, 3.0)),
        random(SY_DTYPE_F32, {40, x[1] / groups, kernel, kernel}, seed + 1),
        random(SY_DTYPE_F32, {40}, seed + 2)};
    if (residual != nullptr) inputs.push_back(*residual);
    OpCase conv = conformance::make_op_case(
        SY_OP_CONV2D_FUSED, inputs, {channels_last(conformance::zeros(SY_DTYPE_F32, y_shape))});
    conv.params.conv2d_fused.conv.conv = conv_params(1, static_cast<int>(kernel / 2), 1, true);
    conv.params.conv2d_fused.conv.groups = groups;
    conv.params.conv2d_fused.activation = activation;
    conv.params.conv2d_fused.has_residual = residual != nullptr ? 1u : 0u;
    if (activation == SY_ACTIVATION_CLIP) {
      conv.params.conv2d_fused.low = -1.0f;
      conv.params.conv2d_fused.high = 1.0f;
    }
    check_against_reference(conv, SY_DTYPE_F32);  // NaN must land where the reference has it
  };
  check_fused_conv(x_shape, 1, 1, 1, SY_ACTIVATION_SILU, nullptr);   // the expanding 1x1 layer
  check_fused_conv(y_shape, 3, 40, 4, SY_ACTIVATION_SILU, nullptr);  // the depthwise 3x3 layer
  HostTensor residual = random(SY_DTYPE_F32, y_shape, 10, -3.0, 3.0);
  residual.storage[12345] = std::numeric_limits<double>::quiet_NaN();
  residual = channels_last(residual);
  check_fused_conv(y_shape, 1, 1, 11, SY_ACTIVATION_RELU, &residual);
  // The depthwise kernel's epilogue adds the residual (NaN kept through CLIP), its rows split over
  // the threads; then a 7x7 image of 1152 channels, 4 rows on one thread and 3 on the other.
  check_fused_conv(y_shape, 3, 40, 12, SY_ACTIVATION_CLIP, &residual);
  {
    const Shape small = {1, 1152, 7, 7};
    OpCase conv = conformance::make_op_case(
        SY_OP_CONV2D_FUSED,
        {channels_last(random(SY_DTYPE_F32, small, 13, -3.0, 3.0)),
         random(SY_DTYPE_F32, {1152, 1, 5, 5}, 14), random(SY_DTYPE_F32, {1152}, 15)},
        {channels_last(conformance::zeros(SY_DTYPE_F32, small))});
    conv.params.conv2d_fused.conv.conv = conv_params(1, 2, 1, true);
    conv.params.conv2d_fused.conv.groups = 1152;
    conv.params.conv2d_fused.activation = SY_ACTIVATION_SILU;
    check_against_reference(conv, SY_DTYPE_F32);
  }

  const HostTensor activations = channels_last(random(SY_DTYPE_F32, y_shape, 7));
  OpCase pool = conformance::make_op_case(SY_OP_REDUCE_MEAN, {activations},
                                          {conformance::zeros(SY_DTYPE_F32, {1, 40, 1, 1})});
  pool.params.reduce.axes_mask = 0b1100;
  pool.params.reduce.keep_dims = 1;
  check_against_reference(pool, SY_DTYPE_F32);

  // 3599 rows of 40: 13 rows a group, 276 groups and 11 rows over.
  OpCase scale =
      conformance::make_op_case(SY_OP_MUL, {activations, random(SY_DTYPE_F32, {1, 40, 1, 1}, 8)},
                                {channels_last(conformance::zeros(SY_DTYPE_F32, y_shape))});
  check_against_reference(scale, SY_DTYPE_F32);
}

TEST_CASE("onednn pooling forward and backward match the reference", "[onednn][pool]") {
  for (sy_dtype dtype : kFloatDtypes) {
    for (int variant = 0; variant < 3; ++variant) {
      DYNAMIC_SECTION(dtype_name(dtype) << " variant " << variant) {
        sy_pool2d_params p{};
        p.kernel_h = p.kernel_w = variant == 2 ? 3 : 2;
        p.stride_h = p.stride_w = variant == 1 ? 1 : 2;
        p.pad_h = p.pad_w = variant == 2 ? 1 : 0;
        p.count_include_pad = variant == 2;
        const Shape x_shape = {2, 3, 9, 8};
        const int64_t oh = (9 + 2 * p.pad_h - p.kernel_h) / p.stride_h + 1;
        const int64_t ow = (8 + 2 * p.pad_w - p.kernel_w) / p.stride_w + 1;
        const Shape y_shape = {2, 3, oh, ow};
        HostTensor x = spread(distinct_values(dtype, x_shape, 5));
        for (sy_op op : {SY_OP_MAX_POOL2D, SY_OP_AVG_POOL2D}) {
          OpCase forward = conformance::make_op_case(op, {x}, {conformance::zeros(dtype, y_shape)});
          forward.params.pool2d = p;
          check_against_reference(forward, dtype);
        }
        OpCase max_backward =
            conformance::make_op_case(SY_OP_MAX_POOL2D_BACKWARD, {random(dtype, y_shape, 6), x},
                                      {spread(conformance::zeros(dtype, x_shape))});
        max_backward.params.pool2d = p;
        // Overlapping windows (kernel > stride) accumulate in an unspecified order.
        const double overlap_tolerance =
            dtype == SY_DTYPE_F32 ? 1e-12 : (dtype == SY_DTYPE_F16 ? 1e-6 : 1e-5);
        check_against_reference(max_backward, dtype,
                                p.kernel_h > p.stride_h ? overlap_tolerance : -1.0);
        OpCase avg_backward =
            conformance::make_op_case(SY_OP_AVG_POOL2D_BACKWARD, {random(dtype, y_shape, 6)},
                                      {conformance::zeros(dtype, x_shape)});
        avg_backward.params.pool2d = p;
        check_against_reference(avg_backward, dtype);
      }
    }
  }
}

TEST_CASE("onednn layer norm forward and backward match the reference", "[onednn][layer_norm]") {
  for (sy_dtype dtype : kFloatDtypes) {
    for (uint32_t rank : {1u, 2u}) {
      DYNAMIC_SECTION(dtype_name(dtype) << " normalized_rank " << rank) {
        const Shape x_shape = {5, 6, 40};
        const Shape d_shape = rank == 1 ? Shape{40} : Shape{6, 40};
        const Shape l_shape = rank == 1 ? Shape{5, 6} : Shape{5};
        HostTensor x = spread(random(dtype, x_shape, 1, -2, 3));
        OpCase forward = conformance::make_op_case(
            SY_OP_LAYER_NORM, {x, random(dtype, d_shape, 2), random(dtype, d_shape, 3)},
            {conformance::zeros(dtype, x_shape), conformance::zeros(SY_DTYPE_F32, l_shape),
             conformance::zeros(SY_DTYPE_F32, l_shape)});
        forward.params.layer_norm.normalized_rank = rank;
        forward.params.layer_norm.epsilon = 1e-5;
        check_against_reference(forward, dtype);

        auto stats = conformance::execute_case(reference(), forward);
        REQUIRE(stats.ok());
        OpCase backward = conformance::make_op_case(
            SY_OP_LAYER_NORM_BACKWARD,
            {random(dtype, x_shape, 4), x, (*stats)[1], (*stats)[2], random(dtype, d_shape, 2)},
            {spread(conformance::zeros(dtype, x_shape)), conformance::zeros(dtype, d_shape),
             conformance::zeros(dtype, d_shape)});
        backward.params.layer_norm.normalized_rank = rank;
        backward.params.layer_norm.epsilon = 1e-5;
        check_against_reference(backward, dtype);
      }
    }
  }
}

}  // namespace
}  // namespace switchyard::onednn_test

namespace switchyard::onednn_test {
namespace {

TEST_CASE("onednn convolution over empty sums writes bias or zeros", "[onednn][conv]") {
  // C = 0: y is the bias everywhere.
  OpCase forward = conformance::make_op_case(
      SY_OP_CONV2D,
      {conformance::zeros(SY_DTYPE_F32, {2, 0, 5, 5}),
       conformance::zeros(SY_DTYPE_F32, {3, 0, 3, 3}), random(SY_DTYPE_F32, {3}, 1)},
      {random(SY_DTYPE_F32, {2, 3, 3, 3}, 2)});
  forward.params.conv2d = conv_params(1, 0, 1, true);
  check_against_reference(forward, SY_DTYPE_F32);
  // N = 0: the weight and bias gradients are zero, not left as they were.
  OpCase weight = conformance::make_op_case(
      SY_OP_CONV2D_BACKWARD_WEIGHT,
      {conformance::zeros(SY_DTYPE_F32, {0, 3, 3, 3}),
       conformance::zeros(SY_DTYPE_F32, {0, 2, 5, 5})},
      {random(SY_DTYPE_F32, {3, 2, 3, 3}, 3), random(SY_DTYPE_F32, {3}, 4)});
  weight.params.conv2d = conv_params(1, 0, 1, true);
  check_against_reference(weight, SY_DTYPE_F32);
}

}  // namespace
}  // namespace switchyard::onednn_test

namespace switchyard::onednn_test {
namespace {

TEST_CASE("onednn LSTM cell and its backward match the reference, strided and threaded",
          "[onednn][lstm]") {
  // 70 x 1000 cells are enough work for the threaded split; spread() strides every tensor,
  // outputs included, and checks that the gaps between their elements are left alone.
  const Shape sizes[] = {{3, 5}, {70, 1000}};
  for (sy_dtype dtype : kFloatDtypes) {
    for (const Shape& size : sizes) {
      DYNAMIC_SECTION(dtype_name(dtype) << " B " << size[0] << " H " << size[1]) {
        const Shape state{size[0], size[1]};
        const Shape gates{size[0], 4 * size[1]};
        OpCase forward = conformance::make_op_case(
            SY_OP_LSTM_CELL,
            {spread(random(dtype, gates, 1, -6, 6)), random(dtype, state, 2, -2, 2)},
            {spread(conformance::zeros(dtype, state)), conformance::zeros(dtype, state),
             spread(conformance::zeros(dtype, gates))});
        check_against_reference(forward, dtype);
        OpCase backward = conformance::make_op_case(
            SY_OP_LSTM_CELL_BACKWARD,
            {random(dtype, state, 3), spread(random(dtype, state, 4)),
             spread(random(dtype, gates, 5, 0.01, 0.99)), random(dtype, state, 6, -2, 2),
             random(dtype, state, 7, -2, 2)},
            {spread(conformance::zeros(dtype, gates)), conformance::zeros(dtype, state)});
        check_against_reference(backward, dtype);
      }
    }
  }
}

TEST_CASE("onednn LSTM cell names the shapes that do not match", "[onednn][lstm]") {
  OpCase odd_width = conformance::make_op_case(
      SY_OP_LSTM_CELL, {random(SY_DTYPE_F32, {2, 10}, 1), random(SY_DTYPE_F32, {2, 2}, 2)},
      {conformance::zeros(SY_DTYPE_F32, {2, 2}), conformance::zeros(SY_DTYPE_F32, {2, 2}),
       conformance::zeros(SY_DTYPE_F32, {2, 10})});
  Status status = run_onednn(odd_width);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find("LSTM_CELL: gates has shape [2, 10], expected [B, 4H]") !=
        std::string::npos);
  OpCase wrong_state = conformance::make_op_case(
      SY_OP_LSTM_CELL_BACKWARD,
      {random(SY_DTYPE_F32, {2, 3}, 1), random(SY_DTYPE_F32, {2, 3}, 2),
       random(SY_DTYPE_F32, {2, 12}, 3), random(SY_DTYPE_F32, {3, 2}, 4),
       random(SY_DTYPE_F32, {2, 3}, 5)},
      {conformance::zeros(SY_DTYPE_F32, {2, 12}), conformance::zeros(SY_DTYPE_F32, {2, 3})});
  status = run_onednn(wrong_state);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find("LSTM_CELL_BACKWARD: c_prev has shape [3, 2], expected [2, 3] "
                              "(B = 2, H = 3 from act [2, 12])") != std::string::npos);
}

}  // namespace
}  // namespace switchyard::onednn_test

using switchyard::onednn_test::allocated_bytes;
using switchyard::onednn_test::close_values;
using switchyard::onednn_test::same_values;

TEST_CASE("onednn keeps constant convolution weights converted until their buffer is released",
          "[onednn][conv]") {
  using namespace switchyard;
  const std::shared_ptr<Device> device =
      value_or_throw(onednn_test::make_onednn({{"threads", "2"}}));
  const Tensor x = rand_uniform(Shape({1, 16, 9, 9}), -1.0, 1.0, 1, 0, device);
  Conv2dOptions fresh;
  fresh.pad_h = fresh.pad_w = 1;
  Conv2dOptions constant = fresh;
  constant.constant_weight = true;
  for (uint64_t round = 0; round < 4; ++round) {
    // A new weight each round, often where the pool put the last one: the buffer's id, not its
    // address, keys what is kept.
    const Tensor w = rand_uniform(Shape({32, 16, 3, 3}), -1.0, 1.0, 10 + round, 0, device);
    const Tensor expected = conv2d(x, w, Tensor(), fresh);
    CHECK(same_values(conv2d(x, w, Tensor(), constant), expected));  // converted and kept
    CHECK(same_values(conv2d(x, w, Tensor(), constant), expected));  // the kept copy
  }
  // Two weights in one buffer, at two offsets, are kept apart.
  const Tensor both = rand_uniform(Shape({2, 32, 16, 3, 3}), -1.0, 1.0, 20, 0, device);
  const Tensor first = both.narrow(0, 0, 1).reshape(Shape({32, 16, 3, 3}));
  const Tensor second = both.narrow(0, 1, 1).reshape(Shape({32, 16, 3, 3}));
  for (int pass = 0; pass < 2; ++pass) {
    CHECK(same_values(conv2d(x, first, Tensor(), constant), conv2d(x, first, Tensor(), fresh)));
    CHECK(same_values(conv2d(x, second, Tensor(), constant), conv2d(x, second, Tensor(), fresh)));
  }
  // The kept copy is pool memory, counted while the weight lives and given back with it.
  const uint64_t base = allocated_bytes(*device);
  {
    const Tensor w = rand_uniform(Shape({32, 16, 3, 3}), -1.0, 1.0, 30, 0, device);
    const uint64_t with_weight = allocated_bytes(*device);
    (void)conv2d(x, w, Tensor(), constant);
    CHECK(allocated_bytes(*device) > with_weight);
  }
  CHECK(allocated_bytes(*device) == base);
}

namespace {

// A 2-thread onednn device, and the options that mark a product's weight constant.
std::shared_ptr<switchyard::Device> two_thread_device() {
  return switchyard::value_or_throw(switchyard::onednn_test::make_onednn({{"threads", "2"}}));
}
switchyard::MatmulOptions constant_weight() {
  switchyard::MatmulOptions options;
  options.constant_weight = true;
  return options;
}

}  // namespace

TEST_CASE("onednn runs a few rows by a constant weight as dot products, as oneDNN's kernels would",
          "[onednn][matmul]") {
  // ops/gemv.h: at most 4 rows by a constant [N, K] weight; K around the 16-lane blocks, N
  // around the 4-row blocks and split over threads, a bias or none, rows with gaps between them.
  using namespace switchyard;
  const std::shared_ptr<Device> device = two_thread_device();
  const MatmulOptions constant = constant_weight();
  for (const int64_t rows : {1, 2, 3, 4}) {
    for (const int64_t k : {1, 15, 16, 17, 100}) {
      for (const int64_t n : {1, 3, 4, 5, 37, 1000}) {
        INFO(rows << " x " << k << " by " << n);
        const uint64_t seed = static_cast<uint64_t>(rows * 10000 + k * 100 + n);
        const Tensor x = rand_uniform(Shape({rows, k}), -1.0, 1.0, seed, 0, device);
        const Tensor w = rand_uniform(Shape({n, k}), -1.0, 1.0, seed + 1, 0, device);
        const Tensor bias = rand_uniform(Shape({n}), -1.0, 1.0, seed + 2, 0, device);
        CHECK(close_values(linear(x, w, bias, constant), linear(x, w, bias)));
        // A one-element bias broadcasts over the columns (MATMUL's bias broadcasts, docs/ops.md;
        // an ONNX Gemm's C of [1]): it was read at a stride of 1, past its one element.
        const Tensor one = rand_uniform(Shape({1}), -1.0, 1.0, seed + 4, 0, device);
        CHECK(close_values(linear(x, w, one, constant), linear(x, w, Tensor()) + one));
        const Tensor wide = rand_uniform(Shape({rows, k + 3}), -1.0, 1.0, seed + 3, 0, device);
        const Tensor gaps = wide.narrow(1, 1, k);
        CHECK(close_values(linear(gaps, w, Tensor(), constant), linear(gaps, w, Tensor())));
      }
    }
  }
}

TEST_CASE("onednn keeps a constant matmul weight packed until its buffer is released",
          "[onednn][matmul]") {
  using namespace switchyard;
  const std::shared_ptr<Device> device = two_thread_device();
  const MatmulOptions constant = constant_weight();
  for (const int64_t rows : {1, 3, 40}) {
    const Tensor x = rand_uniform(Shape({rows, 96}), -1.0, 1.0, 1, 0, device);
    for (uint64_t round = 0; round < 3; ++round) {
      // A new weight each round, often where the pool put the last one: the buffer's id keys it.
      const Tensor w = rand_uniform(Shape({200, 96}), -1.0, 1.0, 10 + round, 0, device);
      const Tensor bias = rand_uniform(Shape({200}), -1.0, 1.0, 40 + round, 0, device);
      const Tensor expected = linear(x, w, bias);
      CHECK(close_values(linear(x, w, bias, constant), expected));  // packed and kept
      CHECK(close_values(linear(x, w, bias, constant), expected));  // the kept copy
      // b not transposed ([K, N]), as ONNX MatMul has it.
      const Tensor wt = rand_uniform(Shape({96, 200}), -1.0, 1.0, 50 + round, 0, device);
      CHECK(close_values(matmul(x, wt, false, false, constant), matmul(x, wt)));
    }
  }
  // Two weights in one buffer, at two offsets, are kept apart.
  const Tensor x = rand_uniform(Shape({2, 96}), -1.0, 1.0, 2, 0, device);
  const Tensor both = rand_uniform(Shape({2, 200, 96}), -1.0, 1.0, 20, 0, device);
  const Tensor first = both.narrow(0, 0, 1).reshape(Shape({200, 96}));
  const Tensor second = both.narrow(0, 1, 1).reshape(Shape({200, 96}));
  for (int pass = 0; pass < 2; ++pass) {
    CHECK(close_values(linear(x, first, Tensor(), constant), linear(x, first, Tensor())));
    CHECK(close_values(linear(x, second, Tensor(), constant), linear(x, second, Tensor())));
  }
  // What is kept is pool memory (oneDNN packs a transposed b: something is kept), counted while
  // the weight lives and given back with it. (Up to 4 rows read the weight as it is: gemv.h.)
  const Tensor many_rows = rand_uniform(Shape({40, 96}), -1.0, 1.0, 3, 0, device);
  const uint64_t base = allocated_bytes(*device);
  {
    const Tensor w = rand_uniform(Shape({200, 96}), -1.0, 1.0, 30, 0, device);
    const uint64_t with_weight = allocated_bytes(*device);
    (void)linear(many_rows, w, Tensor(), constant);
    CHECK(allocated_bytes(*device) > with_weight);
  }
  CHECK(allocated_bytes(*device) == base);
}

TEST_CASE("onednn runs ReLU and Clip as post-ops only where no output can be NaN",
          "[onednn][conv]") {
  // With constant weights, finite x and no possible overflow, CONV2D_FUSED applies RELU/CLIP as
  // oneDNN's post-op (conv.cpp's activation_as_post_op), which maps NaN to 0 or `low`; so every
  // input that can make a NaN must send the call back to the NaN-keeping pass.
  using namespace switchyard;
  const std::shared_ptr<Device> device =
      value_or_throw(onednn_test::make_onednn({{"threads", "2"}}));
  const auto nan = std::numeric_limits<float>::quiet_NaN();
  Conv2dOptions fresh;
  fresh.pad_h = fresh.pad_w = 1;
  Conv2dOptions constant = fresh;
  constant.constant_weight = true;
  const Tensor w = rand_uniform(Shape({24, 8, 3, 3}), -1.0, 1.0, 3, 0, device);
  const Tensor bias = rand_uniform(Shape({24}), -1.0, 1.0, 4, 0, device);
  // NaN where the two results differ in NaN-ness; the number of values that differ otherwise.
  const auto compare = [](const Tensor& a, const Tensor& b, int64_t* nan_mismatches,
                          int64_t* value_mismatches) {
    const std::vector<float> x = a.to_host_float(), y = b.to_host_float();
    *nan_mismatches = *value_mismatches = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i]) != std::isnan(y[i])) {
        ++*nan_mismatches;
      } else if (!std::isnan(x[i]) && x[i] != y[i]) {
        ++*value_mismatches;
      }
    }
  };
  for (const auto activation : {ConvEpilogue::Activation::kRelu, ConvEpilogue::Activation::kClip}) {
    ConvEpilogue epilogue;
    epilogue.activation = activation;
    epilogue.low = -0.5f;
    epilogue.high = 0.5f;
    std::vector<float> values =
        rand_uniform(Shape({2, 8, 10, 11}), -2.0, 2.0, 5, 0, device).to_host_float();
    const auto run = [&](const std::vector<float>& v, const Tensor& weight) {
      const Tensor x = to_channels_last(Tensor::from_host(v, Shape({2, 8, 10, 11}), device));
      Tensor kept = conv2d_fused(x, weight, bias, constant, epilogue);
      Tensor again = conv2d_fused(x, weight, bias, constant, epilogue);  // the kept sums
      Tensor pass = conv2d_fused(x, weight, bias, fresh, epilogue);      // always our pass
      int64_t nans = 0, others = 0;
      compare(kept, pass, &nans, &others);
      CHECK(nans == 0);
      CHECK(others == 0);
      compare(again, pass, &nans, &others);
      CHECK(nans == 0);
      CHECK(others == 0);
      return pass;
    };
    run(values, w);  // finite: the post-op, the same values as the pass
    // A NaN input: NaN in the outputs whose window holds it, which the post-op would clip.
    values[123] = nan;
    const std::vector<float> with_nan = run(values, w).to_host_float();
    CHECK(std::count_if(with_nan.begin(), with_nan.end(), [](float v) { return std::isnan(v); }) >
          0);
    // +inf and -inf in two channels of one pixel: where the two weights have one sign, their
    // products meet in a sum as +inf + -inf (NaN there).
    values[123] = std::numeric_limits<float>::infinity();
    values[123 + 110] = -std::numeric_limits<float>::infinity();
    const std::vector<float> with_inf = run(values, w).to_host_float();
    CHECK(std::count_if(with_inf.begin(), with_inf.end(), [](float v) { return std::isnan(v); }) >
          0);
    values[123 + 110] = 0.25f;
    // Finite but huge: 3e38 through weights of 2 overflows. The guard must decline (whether a NaN
    // then appears depends on how the kernel splits its sums: one FMA accumulator stays at inf).
    values[123] = 3e38f;
    std::vector<float> doubled = w.to_host_float();
    for (float& v : doubled) v *= 2.0f;
    run(values, Tensor::from_host(doubled, Shape({24, 8, 3, 3}), device));
    values[123] = 0.5f;
  }
}
