// Functional ops: values against hand-worked answers, broadcasting and error messages.
#include <catch2/catch.hpp>
#include <cmath>

#include "switchyard/ops.h"
#include "switchyard/status.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::check_values;
using switchyard::testing::tensor_of;
using switchyard::testing::test_device;

TEST_CASE("binary ops broadcast like numpy", "[ops]") {
  const Tensor a = tensor_of({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor row = tensor_of({10, 20, 30}, {3});
  const Tensor column = tensor_of({100, 200}, {2, 1});
  const Tensor sum_row = a + row;
  CHECK(sum_row.shape() == Shape{2, 3});
  check_values(sum_row, {11, 22, 33, 14, 25, 36});
  check_values(a * column, {100, 200, 300, 800, 1000, 1200});
  const Tensor outer = column - row;  // [2, 1] - [3] -> [2, 3]
  CHECK(outer.shape() == Shape{2, 3});
  check_values(outer, {90, 80, 70, 190, 180, 170});
  check_values(a / 2.0, {0.5, 1, 1.5, 2, 2.5, 3});
  check_values(10.0 - a, {9, 8, 7, 6, 5, 4});
  check_values(maximum(a, 3.5), {3.5, 3.5, 3.5, 4, 5, 6});
  check_values(pow(a, 2.0), {1, 4, 9, 16, 25, 36}, 1e-4);
  CHECK_THROWS_WITH(a + tensor_of({1, 2}, {2}), Catch::Contains("[2, 3]") &&
                                                    Catch::Contains("[2]") &&
                                                    Catch::Contains("do not broadcast"));
}

TEST_CASE("unary ops", "[ops]") {
  const Tensor x = tensor_of({-2, -0.5, 0.5, 2}, {4});
  check_values(relu(x), {0, 0, 0.5, 2});
  check_values(abs(x), {2, 0.5, 0.5, 2});
  check_values(neg(x), {2, 0.5, -0.5, -2});
  check_values(sigmoid(x), {0.11920292f, 0.37754067f, 0.62245933f, 0.88079708f});
  check_values(tanh(x), {-0.96402758f, -0.46211716f, 0.46211716f, 0.96402758f});
  check_values(gelu(x), {-0.04550026f, -0.15426877f, 0.34573123f, 1.95449974f});
  check_values(exp(x), {0.13533528f, 0.60653066f, 1.64872127f, 7.3890561f}, 1e-5);
  check_values(sqrt(abs(x)), {1.41421356f, 0.70710678f, 0.70710678f, 1.41421356f});
  check_values(log(abs(x)), {0.69314718f, -0.69314718f, -0.69314718f, 0.69314718f});
}

TEST_CASE("reductions over axes with and without keep_dims", "[ops]") {
  const Tensor x = tensor_of({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor rows = sum(x, {1});
  CHECK(rows.shape() == Shape{2});
  check_values(rows, {6, 15});
  const Tensor columns = sum(x, {0}, true);
  CHECK(columns.shape() == Shape{1, 3});
  check_values(columns, {5, 7, 9});
  const Tensor all = mean(x);
  CHECK(all.rank() == 0);
  CHECK(all.item() == Approx(3.5));
  check_values(amax(x, {-1}), {3, 6});
  const Tensor index = argmax(tensor_of({1, 9, 3, 7, 2, 8}, {2, 3}), 1);
  CHECK(index.dtype() == DType::kI64);
  CHECK(index.to_host_int64() == std::vector<int64_t>{1, 2});
}

TEST_CASE("matmul with transposes, batching and bias", "[ops]") {
  const Tensor a = tensor_of({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = tensor_of({1, 0, 0, 1, 1, 1}, {3, 2});
  check_values(matmul(a, b), {4, 5, 10, 11});
  check_values(matmul(a, a, false, true), {14, 32, 32, 77});
  check_values(matmul(a, a, true, false), {17, 22, 27, 22, 29, 36, 27, 36, 45});
  const Tensor batched =
      matmul(tensor_of({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}), tensor_of({1, 0, 0, 1}, {2, 2}));
  CHECK(batched.shape() == Shape{2, 2, 2});
  check_values(batched, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor weight = tensor_of({1, 0, 0, 0, 1, 0}, {2, 3});  // [out=2, in=3]
  check_values(linear(a, weight, tensor_of({0.5, -0.5}, {2})), {1.5, 1.5, 4.5, 4.5});
  CHECK_THROWS_WITH(matmul(a, a), Catch::Contains("inner dimensions differ"));
}

TEST_CASE("a batched product against one matrix folds its rows in memory order", "[ops]") {
  // A batch-first [B, T, K] seen time-major ([T, B, K], an LSTM's input): one [T*B, K] product
  // on the rows in memory order, the output a view in the same order; values, the error text and
  // the gradients are those of the product on a contiguous copy.
  const std::shared_ptr<Device>& device = test_device();
  Tensor batch_first = rand_uniform({3, 4, 5}, -1.0, 1.0, 1, 0, device);
  batch_first.set_requires_grad();
  Tensor weight = rand_uniform({6, 5}, -1.0, 1.0, 2, 0, device);
  weight.set_requires_grad();
  const Tensor bias = rand_uniform({6}, -1.0, 1.0, 3, 0, device);
  const Tensor time_major = batch_first.transpose(0, 1);  // [4, 3, 5], not contiguous
  const Tensor folded = linear(time_major, weight, bias);
  CHECK(folded.shape() == Shape{4, 3, 6});
  CHECK(folded.strides() == Shape{6, 24, 1});  // [3, 4, 6] in memory, viewed as [4, 3, 6]
  const Tensor copy = time_major.detach().contiguous();
  check_values(folded, linear(copy, weight.detach(), bias).to_host_float());
  const Tensor r = rand_uniform({4, 3, 6}, -1.0, 1.0, 4, 0, device);
  sum(folded * r).backward();
  Tensor copy_grad = copy.detach();
  copy_grad.set_requires_grad();
  Tensor weight_copy = weight.detach();
  weight_copy.set_requires_grad();
  sum(linear(copy_grad, weight_copy, bias) * r).backward();
  check_values(batch_first.grad().transpose(0, 1), copy_grad.grad().to_host_float());
  check_values(weight.grad(), weight_copy.grad().to_host_float());
  CHECK_THROWS_WITH(matmul(time_major, tensor_of({1, 2, 3, 4}, {2, 2})),
                    Catch::Contains("[4, 3, 5]") && Catch::Contains("inner dimensions differ"));
}

TEST_CASE("softmax, log_softmax and cross_entropy agree with the definitions", "[ops]") {
  const Tensor logits = tensor_of({1, 2, 3, 1, 1, 1}, {2, 3});
  const float e1 = std::exp(1.0f), e2 = std::exp(2.0f), e3 = std::exp(3.0f);
  const float z = e1 + e2 + e3;
  check_values(softmax(logits), {e1 / z, e2 / z, e3 / z, 1 / 3.f, 1 / 3.f, 1 / 3.f});
  check_values(log_softmax(logits), {std::log(e1 / z), std::log(e2 / z), std::log(e3 / z),
                                     std::log(1 / 3.f), std::log(1 / 3.f), std::log(1 / 3.f)});
  const Tensor labels = Tensor::from_host(std::vector<int64_t>{2, 0}, {2}, test_device());
  const double expected = (-std::log(static_cast<double>(e3 / z)) - std::log(1.0 / 3.0)) / 2.0;
  CHECK(cross_entropy(logits, labels).item() == Approx(expected).epsilon(1e-5));
  CHECK(cross_entropy(logits, labels, Reduction::kSum).item() ==
        Approx(2 * expected).epsilon(1e-5));
  CHECK(accuracy(logits, labels) == 1.0);
  CHECK(mse_loss(tensor_of({1, 2}, {2}), tensor_of({0, 4}, {2})).item() == Approx(2.5));
}

TEST_CASE("conv2d and pooling on a worked example", "[ops]") {
  // A 1x1x3x3 image and a 2x2 kernel of ones: each output is the sum of a 2x2 window.
  const Tensor image = tensor_of({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  const Tensor kernel = tensor_of({1, 1, 1, 1}, {1, 1, 2, 2});
  check_values(conv2d(image, kernel, tensor_of({0.5}, {1})), {12.5, 16.5, 24.5, 28.5});
  Conv2dOptions padded;
  padded.pad_h = padded.pad_w = 1;
  padded.stride_h = padded.stride_w = 2;
  check_values(conv2d(image, kernel, Tensor(), padded), {1, 5, 11, 28});
  check_values(max_pool2d(image, Pool2dOptions{2, 2, 1, 1, 0, 0, true}), {5, 6, 8, 9});
  check_values(avg_pool2d(image, Pool2dOptions{2, 2, 1, 1, 0, 0, true}), {3, 4, 6, 7});
}

TEST_CASE("layer_norm normalises each row", "[ops]") {
  const Tensor x = tensor_of({1, 2, 3, 4, 2, 2, 2, 2}, {2, 4});
  const Tensor y = layer_norm(x, ones({4}, test_device()), zeros({4}, test_device()), 1, 1e-5);
  const float s = 1.0f / std::sqrt(1.25f + 1e-5f);
  check_values(y, {-1.5f * s, -0.5f * s, 0.5f * s, 1.5f * s, 0, 0, 0, 0}, 1e-4);
}

TEST_CASE("index_select and index_add along an axis", "[ops]") {
  const Tensor x = tensor_of({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor idx = Tensor::from_host(std::vector<int64_t>{2, 0, 2}, {3}, test_device());
  check_values(index_select(x, 0, idx), {5, 6, 1, 2, 5, 6});
  const Tensor added =
      index_add(zeros({3, 2}, test_device()), 0, idx, tensor_of({1, 1, 2, 2, 3, 3}, {3, 2}));
  check_values(added, {2, 2, 0, 0, 4, 4});
}

TEST_CASE("creation and counter-based random numbers", "[ops]") {
  check_values(full({2, 2}, 3.25, test_device()), {3.25, 3.25, 3.25, 3.25});
  const Tensor a = rand_uniform({1000}, -1.0, 1.0, 42, 0, test_device());
  const Tensor b = rand_uniform({1000}, -1.0, 1.0, 42, 0, test_device());
  CHECK(a.to_host_float() == b.to_host_float());
  // A tensor drawn in two pieces equals the one drawn at once (counter = offset + index).
  const Tensor tail = rand_uniform({500}, -1.0, 1.0, 42, 500, test_device());
  const std::vector<float> whole = a.to_host_float();
  CHECK(std::vector<float>(whole.begin() + 500, whole.end()) == tail.to_host_float());
  CHECK(rand_uniform({4}, 0, 1, 43, 0, test_device()).to_host_float() !=
        std::vector<float>(whole.begin(), whole.begin() + 4));
  const double m = mean(a).item();
  CHECK(std::abs(m) < 0.1);
  const Tensor normal = rand_normal({2000}, 1.0, 2.0, 7, 0, test_device());
  CHECK(mean(normal).item() == Approx(1.0).margin(0.2));
}

TEST_CASE("dropout is deterministic for a seed and offset and keeps the expectation", "[ops]") {
  const Tensor x = ones({4000}, test_device());
  const Tensor a = dropout(x, 0.25, true, 9, 0);
  const Tensor b = dropout(x, 0.25, true, 9, 0);
  CHECK(a.to_host_float() == b.to_host_float());
  CHECK(dropout(x, 0.25, true, 9, 4000).to_host_float() != a.to_host_float());
  int zeros_seen = 0;
  for (float v : a.to_host_float()) {
    CHECK((v == 0.0f || v == Approx(1.0f / 0.75f)));
    zeros_seen += v == 0.0f ? 1 : 0;
  }
  CHECK(zeros_seen == Approx(1000).margin(120));
  CHECK(dropout(x, 0.25, false, 9, 0).shares_storage_with(x));
}
