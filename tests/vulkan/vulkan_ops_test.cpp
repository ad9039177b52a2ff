// Op families on Vulkan (validation layers on) against the reference plugin, on small shapes.
// Each test records a whole chain of ops on both devices, as training does, and compares what the
// chain leaves behind; every call returning OK also means the validation layer said nothing.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "vulkan_test_support.h"

namespace switchyard {
namespace {

using vulkan_test::DeviceTensor;
using vulkan_test::download;
using vulkan_test::enqueue;
using vulkan_test::Shape;
using vulkan_test::upload;
using vulkan_test::wavy_values;
using vulkan_test::zero_params;
using vulkan_test::zeros;

// A chain of ops that runs on one device and returns the tensors to compare.
using Program = std::function<std::vector<DeviceTensor>(Device&)>;

// Runs `program` on `vulkan` and on the reference and compares every returned tensor.
void require_matches_reference(Device& vulkan, const Program& program, double tolerance) {
  std::shared_ptr<Device> reference = testing::reference_device();
  const std::vector<DeviceTensor> expected = program(*reference);
  const std::vector<DeviceTensor> actual = program(vulkan);
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("result " << i);
    vulkan_test::require_close(download(vulkan, actual[i]), download(*reference, expected[i]),
                               tolerance);
  }
}

// The same on a Vulkan device made with `options` (nothing where there is none: skipped).
void compare_with_reference(const Program& program, double tolerance,
                            const OptionList& options = vulkan_test::validation_on()) {
  std::shared_ptr<Device> vulkan = vulkan_test::vulkan_device(options);
  if (vulkan != nullptr) require_matches_reference(*vulkan, program, tolerance);
}

sy_op_params matmul_params(bool transpose_a, bool transpose_b, bool has_bias) {
  sy_op_params p = zero_params();
  p.matmul.transpose_a = transpose_a;
  p.matmul.transpose_b = transpose_b;
  p.matmul.has_bias = has_bias;
  return p;
}

sy_op_params reduce_params(uint32_t mask) {
  sy_op_params p = zero_params();
  p.reduce.axes_mask = mask;
  return p;
}

void run(Device& device, sy_op op, const std::vector<const DeviceTensor*>& inputs,
         const std::vector<const DeviceTensor*>& outputs,
         const sy_op_params& params = zero_params()) {
  throw_if_error(enqueue(device, op, inputs, outputs, params));
}

// Three SGD steps of a two-layer perceptron, forward and backward, with no host wait in between.
std::vector<DeviceTensor> mlp_training(Device& d) {
  const int64_t n = 8, in = 12, hidden = 16, classes = 4;
  const DeviceTensor x = upload(d, SY_DTYPE_F32, {n, in}, wavy_values(n * in, 0.1));
  const DeviceTensor labels = upload(d, SY_DTYPE_I64, {n}, {0, 1, 2, 3, 3, 2, 1, 0});
  const DeviceTensor w1 = upload(d, SY_DTYPE_F32, {in, hidden}, wavy_values(in * hidden, 0.7, 0.3));
  const DeviceTensor b1 = upload(d, SY_DTYPE_F32, {hidden}, wavy_values(hidden, 1.3, 0.1));
  // Stored as [classes, hidden] and used transposed, as a linear layer keeps its weight.
  const DeviceTensor w2 = upload(d, SY_DTYPE_F32, {classes, hidden}, wavy_values(64, 2.1, 0.3));
  const DeviceTensor b2 = upload(d, SY_DTYPE_F32, {classes}, {0.1, -0.1, 0.05, 0.0});
  const DeviceTensor* params[] = {&w1, &b1, &w2, &b2};
  std::vector<DeviceTensor> momentum, grads;
  for (const DeviceTensor* p : params) {
    const Shape shape(p->desc.shape, p->desc.shape + p->desc.rank);
    momentum.push_back(zeros(d, SY_DTYPE_F32, shape));
    grads.push_back(zeros(d, SY_DTYPE_F32, shape));
  }
  const DeviceTensor pre = zeros(d, SY_DTYPE_F32, {n, hidden});
  const DeviceTensor h = zeros(d, SY_DTYPE_F32, {n, hidden});
  const DeviceTensor logits = zeros(d, SY_DTYPE_F32, {n, classes});
  const DeviceTensor loss = zeros(d, SY_DTYPE_F32, {});
  const DeviceTensor one = upload(d, SY_DTYPE_F32, {}, {1.0});
  const DeviceTensor grad_logits = zeros(d, SY_DTYPE_F32, {n, classes});
  const DeviceTensor grad_h = zeros(d, SY_DTYPE_F32, {n, hidden});
  const DeviceTensor grad_pre = zeros(d, SY_DTYPE_F32, {n, hidden});
  sy_op_params sgd = zero_params();
  sgd.sgd.lr = 0.1;
  sgd.sgd.momentum = 0.9;
  for (int step = 0; step < 3; ++step) {
    run(d, SY_OP_MATMUL, {&x, &w1, &b1}, {&pre}, matmul_params(false, false, true));
    run(d, SY_OP_RELU, {&pre}, {&h});
    run(d, SY_OP_MATMUL, {&h, &w2, &b2}, {&logits}, matmul_params(false, true, true));
    run(d, SY_OP_CROSS_ENTROPY, {&logits, &labels}, {&loss});
    run(d, SY_OP_CROSS_ENTROPY_BACKWARD, {&logits, &labels, &one}, {&grad_logits});
    run(d, SY_OP_MATMUL, {&grad_logits, &h}, {&grads[2]}, matmul_params(true, false, false));
    run(d, SY_OP_REDUCE_SUM, {&grad_logits}, {&grads[3]}, reduce_params(1));
    run(d, SY_OP_MATMUL, {&grad_logits, &w2}, {&grad_h});
    run(d, SY_OP_RELU_BACKWARD, {&grad_h, &pre}, {&grad_pre});
    run(d, SY_OP_MATMUL, {&x, &grad_pre}, {&grads[0]}, matmul_params(true, false, false));
    run(d, SY_OP_REDUCE_SUM, {&grad_pre}, {&grads[1]}, reduce_params(1));
    for (size_t i = 0; i < 4; ++i) {
      run(d, SY_OP_SGD_UPDATE, {params[i], &grads[i], &momentum[i]}, {}, sgd);
    }
  }
  return {w1, b1, w2, b2, loss, logits};
}

TEST_CASE("vulkan: three SGD steps of a perceptron match the reference", "[vulkan]") {
  compare_with_reference(mlp_training, 1e-4);
}

TEST_CASE("vulkan: the perceptron also matches with every host copy staged", "[vulkan]") {
  compare_with_reference(mlp_training, 1e-4,
                         {{"validation", "true"}, {"device_local_only", "true"}});
}

// conv -> max pool -> layer norm, then all their backward ops, then an Adam step on the weights.
std::vector<DeviceTensor> conv_block(Device& d) {
  const DeviceTensor x = upload(d, SY_DTYPE_F32, {2, 3, 8, 8}, wavy_values(384, 0.2));
  const DeviceTensor w = upload(d, SY_DTYPE_F32, {4, 3, 3, 3}, wavy_values(108, 0.9, 0.4));
  const DeviceTensor bias = upload(d, SY_DTYPE_F32, {4}, {0.1, 0.2, -0.1, 0.0});
  const DeviceTensor y = zeros(d, SY_DTYPE_F32, {2, 4, 8, 8});
  const DeviceTensor pooled = zeros(d, SY_DTYPE_F32, {2, 4, 4, 4});
  const DeviceTensor gamma = upload(d, SY_DTYPE_F32, {4, 4, 4}, wavy_values(64, 0.5, 1.0));
  const DeviceTensor beta = upload(d, SY_DTYPE_F32, {4, 4, 4}, wavy_values(64, 1.5, 0.2));
  const DeviceTensor normed = zeros(d, SY_DTYPE_F32, {2, 4, 4, 4});
  const DeviceTensor mean = zeros(d, SY_DTYPE_F32, {2});
  const DeviceTensor rstd = zeros(d, SY_DTYPE_F32, {2});
  sy_op_params conv = zero_params();
  conv.conv2d = {1, 1, 1, 1, 1, 1, 1, 0};
  sy_op_params pool = zero_params();
  pool.pool2d = {2, 2, 2, 2, 0, 0, 0, 0};
  sy_op_params norm = zero_params();
  norm.layer_norm.normalized_rank = 3;
  norm.layer_norm.epsilon = 1e-5;
  run(d, SY_OP_CONV2D, {&x, &w, &bias}, {&y}, conv);
  run(d, SY_OP_MAX_POOL2D, {&y}, {&pooled}, pool);
  run(d, SY_OP_LAYER_NORM, {&pooled, &gamma, &beta}, {&normed, &mean, &rstd}, norm);
  const DeviceTensor grad_normed = upload(d, SY_DTYPE_F32, {2, 4, 4, 4}, wavy_values(128, 2.5));
  const DeviceTensor grad_pooled = zeros(d, SY_DTYPE_F32, {2, 4, 4, 4});
  const DeviceTensor grad_gamma = zeros(d, SY_DTYPE_F32, {4, 4, 4});
  const DeviceTensor grad_beta = zeros(d, SY_DTYPE_F32, {4, 4, 4});
  run(d, SY_OP_LAYER_NORM_BACKWARD, {&grad_normed, &pooled, &mean, &rstd, &gamma},
      {&grad_pooled, &grad_gamma, &grad_beta}, norm);
  const DeviceTensor grad_y = zeros(d, SY_DTYPE_F32, {2, 4, 8, 8});
  run(d, SY_OP_MAX_POOL2D_BACKWARD, {&grad_pooled, &y}, {&grad_y}, pool);
  const DeviceTensor grad_x = zeros(d, SY_DTYPE_F32, {2, 3, 8, 8});
  const DeviceTensor grad_w = zeros(d, SY_DTYPE_F32, {4, 3, 3, 3});
  const DeviceTensor grad_bias = zeros(d, SY_DTYPE_F32, {4});
  run(d, SY_OP_CONV2D_BACKWARD_DATA, {&grad_y, &w}, {&grad_x}, conv);
  run(d, SY_OP_CONV2D_BACKWARD_WEIGHT, {&grad_y, &x}, {&grad_w, &grad_bias}, conv);
  const DeviceTensor m = zeros(d, SY_DTYPE_F32, {4, 3, 3, 3});
  const DeviceTensor v = zeros(d, SY_DTYPE_F32, {4, 3, 3, 3});
  sy_op_params adam = zero_params();
  adam.adam = {0.01, 0.9, 0.999, 1e-8, 0.01, 1, 0, 1};
  run(d, SY_OP_ADAM_UPDATE, {&w, &grad_w, &m, &v}, {}, adam);
  return {normed, mean, rstd, grad_gamma, grad_beta, grad_x, grad_w, grad_bias, w, m, v};
}

TEST_CASE("vulkan: a conv / pool / layer-norm block and its gradients match the reference",
          "[vulkan]") {
  compare_with_reference(conv_block, 1e-4);
}

// Strided and broadcast descriptors: a transposed input plus a broadcast row, written into every
// other element of a larger buffer at an offset; then a permuting copy with a cast.
std::vector<DeviceTensor> strided_views(Device& d) {
  const DeviceTensor data = upload(d, SY_DTYPE_F32, {3, 4}, wavy_values(12, 0.3));
  DeviceTensor transposed = data;  // [4, 3] view of the [3, 4] data
  transposed.desc.shape[0] = 4;
  transposed.desc.shape[1] = 3;
  transposed.desc.strides[0] = 1;
  transposed.desc.strides[1] = 4;
  const DeviceTensor row = upload(d, SY_DTYPE_F32, {3}, {10, 20, 30});
  const DeviceTensor big = upload(d, SY_DTYPE_F32, {25}, std::vector<double>(25, -1.0));
  DeviceTensor out = big;  // [4, 3] with strides [6, 2], starting at element 1
  out.desc.rank = 2;
  out.desc.offset_bytes = 4;
  out.desc.shape[0] = 4;
  out.desc.shape[1] = 3;
  out.desc.strides[0] = 6;
  out.desc.strides[1] = 2;
  run(d, SY_OP_ADD, {&transposed, &row}, {&out});
  const DeviceTensor half = zeros(d, SY_DTYPE_F16, {4, 3});
  run(d, SY_OP_COPY, {&transposed}, {&half});
  DeviceTensor whole = big;  // every element, including those the view skipped
  return {big, half, whole};
}

TEST_CASE("vulkan: strided, offset and broadcast descriptors are honoured", "[vulkan]") {
  compare_with_reference(strided_views, 0.0);
}

// 16-bit storage: a matmul, softmax and cast chain in f16 and bf16, and integer index ops.
std::vector<DeviceTensor> sixteen_bit_and_integers(Device& d) {
  std::vector<DeviceTensor> results;
  for (sy_dtype dtype : {SY_DTYPE_F16, SY_DTYPE_BF16}) {
    if (!d.supports(SY_OP_MATMUL, dtype)) continue;
    const DeviceTensor a = upload(d, dtype, {5, 7}, wavy_values(35, 0.4));
    const DeviceTensor b = upload(d, dtype, {7, 6}, wavy_values(42, 1.4));
    const DeviceTensor c = zeros(d, dtype, {5, 6});
    run(d, SY_OP_MATMUL, {&a, &b}, {&c});
    sy_op_params softmax = zero_params();
    softmax.softmax.axis = 1;
    const DeviceTensor p = zeros(d, dtype, {5, 6});
    run(d, SY_OP_SOFTMAX, {&c}, {&p}, softmax);
    const DeviceTensor as_f32 = zeros(d, SY_DTYPE_F32, {5, 6});
    run(d, SY_OP_COPY, {&p}, {&as_f32});
    results.push_back(as_f32);
  }
  const DeviceTensor table =
      upload(d, SY_DTYPE_I64, {4, 3}, {1, -2, 3, 4e12, 5, 6, 7, 8, 9, -1e15, 11, 12});
  const DeviceTensor indices = upload(d, SY_DTYPE_I32, {5}, {3, 0, 3, 1, 2});
  const DeviceTensor gathered = zeros(d, SY_DTYPE_I64, {5, 3});
  sy_op_params axis0 = zero_params();
  run(d, SY_OP_GATHER, {&table, &indices}, {&gathered}, axis0);
  const DeviceTensor accumulated = upload(d, SY_DTYPE_I64, {4, 3}, std::vector<double>(12, 1.0));
  run(d, SY_OP_SCATTER_ADD, {&gathered, &indices}, {&accumulated}, axis0);
  results.push_back(gathered);
  results.push_back(accumulated);
  return results;
}

TEST_CASE("vulkan: f16 / bf16 chains and integer gather / scatter match the reference",
          "[vulkan]") {
  compare_with_reference(sixteen_bit_and_integers, 1e-2);
}

// A Vulkan device with validation as the tests have it and one more option (null: skipped).
std::shared_ptr<Device> vulkan_with(const std::string& key, const std::string& value) {
  OptionList options = vulkan_test::validation_on();
  options.emplace_back(key, value);
  return vulkan_test::vulkan_device(options);
}

// gpu-check sets SWITCHYARD_REQUIRE_COOPERATIVE_MATRIX=1 on a GPU with tensor cores: there the f16
// products must have run on them, not merely matched the reference on the shader kernel.
void require_cooperative_where_asked(bool cooperative) {
  const char* required = std::getenv("SWITCHYARD_REQUIRE_COOPERATIVE_MATRIX");
  if (required != nullptr && std::string(required) == "1") REQUIRE(cooperative);
}

// Products large enough for the tiled kernels: in f16 on a device with cooperative matrices
// (NVIDIA) they run on gemm_coopmat.glsl, elsewhere on gemm_tile.glsl's tiles. A batch folded into
// rows with a bias, both operands transposed (A's m axis and B's k axis of stride 1) with a bias,
// and a batch of separate products; every edge is a partial 64 x 64 and 128 x 128 tile.
std::vector<DeviceTensor> tiled_products(Device& d, sy_dtype dtype) {
  const DeviceTensor x = upload(d, dtype, {2, 150, 72}, wavy_values(2 * 150 * 72, 0.3));
  const DeviceTensor w = upload(d, dtype, {72, 200}, wavy_values(72 * 200, 1.1, 0.5));
  const DeviceTensor bias = upload(d, dtype, {200}, wavy_values(200, 0.9));
  const DeviceTensor folded = zeros(d, dtype, {2, 150, 200});
  run(d, SY_OP_MATMUL, {&x, &w, &bias}, {&folded}, matmul_params(false, false, true));
  const DeviceTensor a_t = upload(d, dtype, {72, 130}, wavy_values(72 * 130, 2.0));
  const DeviceTensor b_t = upload(d, dtype, {190, 72}, wavy_values(190 * 72, 0.4, 0.7));
  const DeviceTensor bias_t = upload(d, dtype, {190}, wavy_values(190, 1.7));
  const DeviceTensor transposed = zeros(d, dtype, {130, 190});
  run(d, SY_OP_MATMUL, {&a_t, &b_t, &bias_t}, {&transposed}, matmul_params(true, true, true));
  const DeviceTensor a3 = upload(d, dtype, {3, 129, 96}, wavy_values(3 * 129 * 96, 0.8));
  const DeviceTensor b3 = upload(d, dtype, {3, 96, 131}, wavy_values(3 * 96 * 131, 2.5, 0.6));
  const DeviceTensor batched = zeros(d, dtype, {3, 129, 131});
  run(d, SY_OP_MATMUL, {&a3, &b3}, {&batched});
  return {folded, transposed, batched};
}

TEST_CASE("vulkan: f16 products on the tiled kernels (tensor cores where the device has them)",
          "[vulkan][coopmat]") {
  // f16 outputs of sums of up to 96 products: within a few f16 ulps of the reference.
  constexpr double kTolerance = 1e-2;
  for (const char* mode : {"auto", "off"}) {
    INFO("cooperative_matrix=" << mode);
    std::shared_ptr<Device> vulkan = vulkan_with("cooperative_matrix", mode);
    if (vulkan == nullptr) return;
    if (!vulkan->supports(SY_OP_MATMUL, SY_DTYPE_F16)) {
      testing::skip_backend("vulkan", "the device has no f16");
      return;
    }
    require_matches_reference(
        *vulkan, [](Device& d) { return tiled_products(d, SY_DTYPE_F16); }, kTolerance);
    // The settings line counts which kernel ran the three products.
    const std::string settings = vulkan->settings();
    INFO(settings);
    const bool cooperative = settings.find("cooperative_matrix=off") == std::string::npos;
    if (std::string(mode) == "auto") require_cooperative_where_asked(cooperative);
    CHECK((cooperative ? "gemms_coopmat=3 gemms_shader=0" : "gemms_coopmat=0 gemms_shader=3") ==
          settings.substr(settings.find("gemms_coopmat=")));
  }
}

// gemm_tile.glsl's two tile sizes (64 for CPU drivers, 128 for GPUs: auto picks by device type),
// each forced on whatever device this is, in f32 and bf16 (never on tensor cores).
TEST_CASE("vulkan: the 64 and 128 tiles of the matmul kernel match the reference", "[vulkan]") {
  for (const char* tile : {"64", "128"}) {
    for (const sy_dtype dtype : {SY_DTYPE_F32, SY_DTYPE_BF16}) {
      INFO("matmul_tile=" << tile << ", " << (dtype == SY_DTYPE_F32 ? "f32" : "bf16"));
      std::shared_ptr<Device> vulkan = vulkan_with("matmul_tile", tile);
      if (vulkan == nullptr) return;
      if (!vulkan->supports(SY_OP_MATMUL, dtype)) continue;
      require_matches_reference(
          *vulkan, [dtype](Device& d) { return tiled_products(d, dtype); },
          dtype == SY_DTYPE_F32 ? 1e-4 : 2e-2);
      // The device took the tile, and ran the three products on the shader kernel.
      const std::string settings = vulkan->settings();
      INFO(settings);
      CHECK(settings.find(std::string("matmul_tile=") + tile + " ") != std::string::npos);
      CHECK(settings.substr(settings.find("gemms_coopmat=")) == "gemms_coopmat=0 gemms_shader=3");
    }
  }
}

// Convolutions whose implicit GEMMs are at least 64 wide each way (forward 72 x 162, backward data
// 64 x 162, backward weight 72 x 576), so that they take the 128-wide tiles, or tensor cores for
// f16 where the device has them: forward with bias, the fused form with bias, residual and SiLU
// (its epilogue in the kernel's store), and both backward ops.
std::vector<DeviceTensor> wide_convolutions(Device& d, sy_dtype dtype) {
  const DeviceTensor x = upload(d, dtype, {2, 64, 9, 9}, wavy_values(2 * 64 * 81, 0.2));
  const DeviceTensor w = upload(d, dtype, {72, 64, 3, 3}, wavy_values(72 * 64 * 9, 0.9, 0.1));
  const DeviceTensor bias = upload(d, dtype, {72}, wavy_values(72, 0.4));
  const DeviceTensor residual = upload(d, dtype, {2, 72, 9, 9}, wavy_values(2 * 72 * 81, 1.9));
  sy_op_params conv = zero_params();
  conv.conv2d = {1, 1, 1, 1, 1, 1, 1, 0};
  const DeviceTensor y = zeros(d, dtype, {2, 72, 9, 9});
  run(d, SY_OP_CONV2D, {&x, &w, &bias}, {&y}, conv);
  sy_op_params fused = zero_params();
  fused.conv2d_fused.conv.conv = conv.conv2d;
  fused.conv2d_fused.conv.groups = 1;
  fused.conv2d_fused.activation = SY_ACTIVATION_SILU;
  fused.conv2d_fused.has_residual = 1;
  const DeviceTensor fused_y = zeros(d, dtype, {2, 72, 9, 9});
  run(d, SY_OP_CONV2D_FUSED, {&x, &w, &bias, &residual}, {&fused_y}, fused);
  const DeviceTensor grad_x = zeros(d, dtype, {2, 64, 9, 9});
  const DeviceTensor grad_w = zeros(d, dtype, {72, 64, 3, 3});
  const DeviceTensor grad_bias = zeros(d, dtype, {72});
  run(d, SY_OP_CONV2D_BACKWARD_DATA, {&residual, &w}, {&grad_x}, conv);
  run(d, SY_OP_CONV2D_BACKWARD_WEIGHT, {&residual, &x}, {&grad_w, &grad_bias}, conv);
  return {y, fused_y, grad_x, grad_w, grad_bias};
}

TEST_CASE("vulkan: convolutions on the 64 and 128 tiles and on tensor cores match the reference",
          "[vulkan][coopmat]") {
  for (const char* tile : {"64", "128"}) {
    for (const sy_dtype dtype : {SY_DTYPE_F32, SY_DTYPE_F16, SY_DTYPE_BF16}) {
      INFO("matmul_tile=" << tile << ", dtype " << static_cast<int>(dtype));
      std::shared_ptr<Device> vulkan = vulkan_with("matmul_tile", tile);
      if (vulkan == nullptr) return;
      if (!vulkan->supports(SY_OP_CONV2D, dtype)) continue;
      // Sums of up to 576 products (162 in the weight gradient): 16-bit results within a few of
      // their ulps of the reference's.
      require_matches_reference(
          *vulkan, [dtype](Device& d) { return wide_convolutions(d, dtype); },
          dtype == SY_DTYPE_F32 ? 1e-4 : (dtype == SY_DTYPE_F16 ? 1e-2 : 5e-2));
      // Four GEMMs on tensor cores (the bias gradient's one column stays on the shader kernel),
      // or none.
      const std::string settings = vulkan->settings();
      INFO(settings);
      const bool cooperative =
          dtype == SY_DTYPE_F16 && settings.find("cooperative_matrix=off") == std::string::npos;
      if (dtype == SY_DTYPE_F16) require_cooperative_where_asked(cooperative);
      CHECK(settings.substr(settings.find("gemms_coopmat=")) ==
            (cooperative ? "gemms_coopmat=4 gemms_shader=1" : "gemms_coopmat=0 gemms_shader=5"));
    }
  }
}

// Rows longer than 256 elements are reduced by a whole workgroup (shorter ones by one invocation):
// every row-wise op once with long rows.
std::vector<DeviceTensor> long_rows(Device& d) {
  const DeviceTensor x = upload(d, SY_DTYPE_F32, {3, 700}, wavy_values(2100, 0.6, 3.0));
  std::vector<DeviceTensor> results;
  for (sy_op op : {SY_OP_REDUCE_SUM, SY_OP_REDUCE_MEAN, SY_OP_REDUCE_MAX}) {
    results.push_back(zeros(d, SY_DTYPE_F32, {3}));
    run(d, op, {&x}, {&results.back()}, reduce_params(2));
  }
  results.push_back(zeros(d, SY_DTYPE_I32, {3}));
  run(d, SY_OP_ARGMAX, {&x}, {&results.back()}, reduce_params(2));
  sy_op_params axis1 = zero_params();
  axis1.softmax.axis = 1;
  const DeviceTensor y = zeros(d, SY_DTYPE_F32, {3, 700});
  run(d, SY_OP_LOG_SOFTMAX, {&x}, {&y}, axis1);
  results.push_back(y);
  const DeviceTensor grad = zeros(d, SY_DTYPE_F32, {3, 700});
  run(d, SY_OP_LOG_SOFTMAX_BACKWARD, {&x, &y}, {&grad}, axis1);
  results.push_back(grad);
  const DeviceTensor labels = upload(d, SY_DTYPE_I32, {3}, {5, 699, 300});
  results.push_back(zeros(d, SY_DTYPE_F32, {}));
  run(d, SY_OP_CROSS_ENTROPY, {&x, &labels}, {&results.back()});
  // Layer norm over rows of 700, and its parameter gradients summed over 300 rows.
  sy_op_params norm = zero_params();
  norm.layer_norm.normalized_rank = 1;
  norm.layer_norm.epsilon = 1e-5;
  for (const Shape& shape : {Shape{3, 700}, Shape{300, 7}}) {
    const int64_t rows = shape[0], width = shape[1];
    const DeviceTensor in = upload(d, SY_DTYPE_F32, shape, wavy_values(rows * width, 0.2));
    const DeviceTensor gamma = upload(d, SY_DTYPE_F32, {width}, wavy_values(width, 0.4));
    const DeviceTensor beta = upload(d, SY_DTYPE_F32, {width}, wavy_values(width, 0.8));
    const DeviceTensor out = zeros(d, SY_DTYPE_F32, shape);
    const DeviceTensor mean = zeros(d, SY_DTYPE_F32, {rows});
    const DeviceTensor rstd = zeros(d, SY_DTYPE_F32, {rows});
    run(d, SY_OP_LAYER_NORM, {&in, &gamma, &beta}, {&out, &mean, &rstd}, norm);
    const DeviceTensor grad_x = zeros(d, SY_DTYPE_F32, shape);
    const DeviceTensor grad_gamma = zeros(d, SY_DTYPE_F32, {width});
    const DeviceTensor grad_beta = zeros(d, SY_DTYPE_F32, {width});
    run(d, SY_OP_LAYER_NORM_BACKWARD, {&out, &in, &mean, &rstd, &gamma},
        {&grad_x, &grad_gamma, &grad_beta}, norm);
    results.insert(results.end(), {out, mean, rstd, grad_x, grad_gamma, grad_beta});
  }
  return results;
}

TEST_CASE("vulkan: row-wise ops over rows longer than a workgroup match the reference",
          "[vulkan]") {
  compare_with_reference(long_rows, 1e-4);
}

std::vector<DeviceTensor> random_numbers(Device& d) {
  sy_op_params p = zero_params();
  p.random = {1234, (uint64_t{1} << 32) - 3, -2.0, 3.0};
  const DeviceTensor uniform = zeros(d, SY_DTYPE_F32, {3, 50});
  run(d, SY_OP_RANDOM_UNIFORM, {}, {&uniform}, p);
  return {uniform};
}

TEST_CASE("vulkan: Philox uniform numbers are bit-identical to the reference", "[vulkan]") {
  compare_with_reference(random_numbers, 0.0);
}

// Two LSTM steps and backpropagation through both, over more cells than one workgroup holds. The
// gates are a strided view into a padded buffer, and the first step's act is written into one.
std::vector<DeviceTensor> lstm_steps(Device& d) {
  const int64_t b = 3, h = 300, padded = 4 * h + 7;
  const DeviceTensor storage =
      upload(d, SY_DTYPE_F32, {2 * b * padded}, wavy_values(2 * b * padded, 0.3, 4.0));
  std::vector<DeviceTensor> gates(2, storage);  // step k: [B, 4H], rows padded, from row 2k
  for (int k = 0; k < 2; ++k) {
    gates[k].desc.rank = 2;
    gates[k].desc.offset_bytes = static_cast<uint64_t>(k * padded * 4 + 4);
    gates[k].desc.shape[0] = b;
    gates[k].desc.shape[1] = 4 * h;
    gates[k].desc.strides[0] = 2 * padded;
    gates[k].desc.strides[1] = 1;
  }
  const DeviceTensor c0 = upload(d, SY_DTYPE_F32, {b, h}, wavy_values(b * h, 1.1, 2.0));
  const DeviceTensor h1 = zeros(d, SY_DTYPE_F32, {b, h}), c1 = zeros(d, SY_DTYPE_F32, {b, h});
  const DeviceTensor h2 = zeros(d, SY_DTYPE_F32, {b, h}), c2 = zeros(d, SY_DTYPE_F32, {b, h});
  const DeviceTensor act_storage =
      upload(d, SY_DTYPE_F32, {b * padded}, std::vector<double>(b * padded, -1.0));
  DeviceTensor act1 = act_storage;
  act1.desc.rank = 2;
  act1.desc.shape[0] = b;
  act1.desc.shape[1] = 4 * h;
  act1.desc.strides[0] = padded;
  act1.desc.strides[1] = 1;
  const DeviceTensor act2 = zeros(d, SY_DTYPE_F32, {b, 4 * h});
  run(d, SY_OP_LSTM_CELL, {&gates[0], &c0}, {&h1, &c1, &act1});
  run(d, SY_OP_LSTM_CELL, {&gates[1], &c1}, {&h2, &c2, &act2});
  const DeviceTensor grad_h2 = upload(d, SY_DTYPE_F32, {b, h}, wavy_values(b * h, 2.3));
  const DeviceTensor grad_h1 = upload(d, SY_DTYPE_F32, {b, h}, wavy_values(b * h, 0.7));
  const DeviceTensor no_grad_c = zeros(d, SY_DTYPE_F32, {b, h});
  const DeviceTensor grad_gates2 = zeros(d, SY_DTYPE_F32, {b, 4 * h});
  const DeviceTensor grad_gates1 = zeros(d, SY_DTYPE_F32, {b, 4 * h});
  const DeviceTensor grad_c1 = zeros(d, SY_DTYPE_F32, {b, h}),
                     grad_c0 = zeros(d, SY_DTYPE_F32, {b, h});
  run(d, SY_OP_LSTM_CELL_BACKWARD, {&grad_h2, &no_grad_c, &act2, &c1, &c2},
      {&grad_gates2, &grad_c1});
  run(d, SY_OP_LSTM_CELL_BACKWARD, {&grad_h1, &grad_c1, &act1, &c0, &c1}, {&grad_gates1, &grad_c0});
  return {h1, c1, act_storage, h2, c2, act2, grad_gates2, grad_c1, grad_gates1, grad_c0};
}

TEST_CASE("vulkan: two LSTM steps and their backward match the reference", "[vulkan]") {
  compare_with_reference(lstm_steps, 1e-5);
}

TEST_CASE("vulkan: an LSTM cell with mismatched shapes names them", "[vulkan]") {
  std::shared_ptr<Device> d = vulkan_test::vulkan_device();
  if (d == nullptr) return;
  const DeviceTensor gates = zeros(*d, SY_DTYPE_F32, {2, 12});
  const DeviceTensor c_prev = zeros(*d, SY_DTYPE_F32, {3, 2});
  const DeviceTensor h = zeros(*d, SY_DTYPE_F32, {2, 3}), c = zeros(*d, SY_DTYPE_F32, {2, 3});
  const DeviceTensor act = zeros(*d, SY_DTYPE_F32, {2, 12});
  const Status status = enqueue(*d, SY_OP_LSTM_CELL, {&gates, &c_prev}, {&h, &c, &act});
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(status.message(), Catch::Contains("LSTM_CELL: c_prev has shape [3, 2], expected "
                                               "[2, 3] (B = 2, H = 3 from gates [2, 12])"));
}

TEST_CASE("vulkan: GATHER gives NaN for an index outside the axis, never what memory held",
          "[vulkan]") {
  // An asynchronous backend cannot refuse the index at dispatch (ops.md section 1). It used to
  // leave those elements unwritten, so a model read whatever the pool's memory held.
  const std::shared_ptr<Device> device = vulkan_test::vulkan_device();
  if (device == nullptr) return;
  Device& d = *device;
  for (sy_dtype dtype : {SY_DTYPE_F32, SY_DTYPE_F16, SY_DTYPE_BF16}) {
    if (!d.supports(SY_OP_GATHER, dtype)) continue;
    INFO("dtype " << dtype);
    const DeviceTensor x = upload(d, dtype, {4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    const DeviceTensor indices = upload(d, SY_DTYPE_I64, {4}, {3, 4, -1, 0});
    const DeviceTensor out = upload(d, dtype, {4, 2}, std::vector<double>(8, 42.0));
    sy_op_params params = zero_params();
    params.index.axis = 0;
    run(d, SY_OP_GATHER, {&x, &indices}, {&out}, params);
    const std::vector<double> got = download(d, out);
    CHECK(got[0] == 6);
    CHECK(got[1] == 7);
    for (size_t k = 2; k < 6; ++k) CHECK(std::isnan(got[k]));
    CHECK(got[6] == 0);
    CHECK(got[7] == 1);
  }
  // Integer data has no NaN: the elements stay as they were (unwritten), as before.
  const DeviceTensor xi = upload(d, SY_DTYPE_I64, {3}, {10, 11, 12});
  const DeviceTensor ii = upload(d, SY_DTYPE_I64, {2}, {5, 1});
  const DeviceTensor oi = upload(d, SY_DTYPE_I64, {2}, {42, 42});
  sy_op_params params = zero_params();
  params.index.axis = 0;
  run(d, SY_OP_GATHER, {&xi, &ii}, {&oi}, params);
  CHECK(download(d, oi) == std::vector<double>{42, 11});
}

}  // namespace
}  // namespace switchyard
