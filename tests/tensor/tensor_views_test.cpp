// Tensors: host round trips, dtypes, and views that share storage without copying.
#include <catch2/catch.hpp>

#include "switchyard/ops.h"
#include "switchyard/status.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::check_values;
using switchyard::testing::tensor_of;
using switchyard::testing::test_device;

TEST_CASE("from_host and to_host round-trip values, shape and dtype", "[tensor]") {
  const Tensor t = tensor_of({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(t.shape() == Shape{2, 3});
  CHECK(t.dtype() == DType::kF32);
  CHECK(t.strides() == Shape{3, 1});
  CHECK(t.is_contiguous());
  check_values(t, {1, 2, 3, 4, 5, 6});
  const Tensor labels = Tensor::from_host(std::vector<int32_t>{3, -1, 7}, {3}, test_device());
  CHECK(labels.dtype() == DType::kI32);
  CHECK(labels.to_host_int64() == std::vector<int64_t>{3, -1, 7});
  CHECK(tensor_of({2.5f}, {}).item() == 2.5);
}

TEST_CASE("from_host rejects a value count that does not match the shape", "[tensor]") {
  CHECK_THROWS_WITH(tensor_of({1, 2, 3}, {2, 2}), Catch::Contains("3 values for shape [2, 2]"));
}

TEST_CASE("a shape whose bytes overflow 64 bits is refused, not a tiny buffer", "[tensor]") {
  // 2^62 f32 elements are 2^64 bytes, which wrapped to 0: a 1-byte buffer that ops wrote past.
  for (const Shape& shape :
       {Shape{int64_t{1} << 62}, Shape{int64_t{1} << 31, int64_t{1} << 31, 4}}) {
    try {
      (void)Tensor::empty(shape, DType::kF32, test_device());
      FAIL("accepted " << shape.to_string());
    } catch (const Error& error) {
      CHECK(error.status().code() == StatusCode::kResourceExhausted);
      CHECK(error.status().message() ==
            "Tensor::empty: shape " + shape.to_string() + " of f32 needs more than 2^64 bytes");
    }
  }
}

TEST_CASE("an empty shape whose other extents overflow the strides is refused", "[tensor]") {
  // No bytes (an axis of 0), but the row-major strides multiply the other extents: 2^80 would be
  // signed overflow (found by fuzzing a Pad with a huge pad on an empty tensor).
  const Shape shape{0, int64_t{1} << 40, int64_t{1} << 40};
  try {
    (void)Tensor::empty(shape, DType::kF32, test_device());
    FAIL("accepted " << shape.to_string());
  } catch (const Error& error) {
    CHECK(error.status().code() == StatusCode::kResourceExhausted);
    CHECK_THAT(error.status().message(), Catch::Contains("extents whose product passes 2^63"));
  }
}

TEST_CASE("casts to bf16 and f16 round to the nearest representable value", "[tensor]") {
  const Tensor t = tensor_of({1.0f, 1.00390625f, 3.14159f, -2.0f}, {4});
  const Tensor bf16 = t.to(DType::kBF16);
  CHECK(bf16.dtype() == DType::kBF16);
  // bf16 keeps 8 significant bits: 1 + 2^-8 rounds to even (1.0); pi becomes 3.140625.
  check_values(bf16, {1.0f, 1.0f, 3.140625f, -2.0f}, 0.0);
  const Tensor f16 = Tensor::from_host({0.1f, 65504.0f}, {2}, test_device(), DType::kF16);
  check_values(f16, {0.0999755859375f, 65504.0f}, 0.0);
  check_values(bf16.to(DType::kF32), {1.0f, 1.0f, 3.140625f, -2.0f}, 0.0);
}

TEST_CASE("reshape, permute, transpose, narrow and slice are views of one storage", "[tensor]") {
  const Tensor base = tensor_of({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  const Tensor reshaped = base.reshape({2, -1});
  CHECK(reshaped.shape() == Shape{2, 6});
  CHECK(reshaped.shares_storage_with(base));
  const Tensor transposed = base.t();
  CHECK(transposed.shape() == Shape{4, 3});
  CHECK(transposed.strides() == Shape{1, 4});
  CHECK_FALSE(transposed.is_contiguous());
  CHECK(transposed.shares_storage_with(base));
  check_values(transposed, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  const Tensor rows = base.slice(1, 3);
  CHECK(rows.shares_storage_with(base));
  CHECK(rows.storage_offset() == 4);
  check_values(rows, {4, 5, 6, 7, 8, 9, 10, 11});
  const Tensor column = base.narrow(1, 2, 1);
  CHECK(column.shape() == Shape{3, 1});
  check_values(column, {2, 6, 10});
  const Tensor permuted = base.reshape({3, 2, 2}).permute({2, 0, 1});
  CHECK(permuted.shape() == Shape{2, 3, 2});
  check_values(permuted, {0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11});
}

TEST_CASE("writing through a view changes the base tensor", "[tensor]") {
  Tensor base = zeros({3, 4}, test_device());
  Tensor column = base.narrow(1, 1, 1);
  column.copy_(tensor_of({7, 8, 9}, {3, 1}));
  check_values(base, {0, 7, 0, 0, 0, 8, 0, 0, 0, 9, 0, 0});
  base.slice(2, 3).fill_(-1.0);
  check_values(base, {0, 7, 0, 0, 0, 8, 0, 0, -1, -1, -1, -1});
}

TEST_CASE("contiguous() materialises a permuted view with one copy", "[tensor]") {
  const Tensor base = tensor_of({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor t = base.t();
  const Tensor c = t.contiguous();
  CHECK(c.is_contiguous());
  CHECK_FALSE(c.shares_storage_with(base));
  check_values(c, {1, 4, 2, 5, 3, 6});
  CHECK(base.contiguous().shares_storage_with(base));
  // A reshape of a non-contiguous view has to copy.
  const Tensor flat = t.reshape({6});
  CHECK_FALSE(flat.shares_storage_with(base));
  check_values(flat, {1, 4, 2, 5, 3, 6});
}

TEST_CASE("reshape of a non-contiguous view is a view where its strides allow one", "[tensor]") {
  // Rows of 6 values, of which a slice keeps 4 per row: [3, 4] with strides (6, 1).
  std::vector<float> values(18);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const Tensor base = tensor_of(values, {3, 6});
  const Tensor slice = base.narrow(1, 1, 4);
  REQUIRE_FALSE(slice.is_contiguous());
  // Splitting the rows' axis stays inside each row: a view, as PyTorch's view() would give.
  const Tensor split = slice.reshape({3, 2, 2});
  CHECK(split.shares_storage_with(base));
  CHECK(split.strides() == Shape{6, 2, 1});
  check_values(split, {1, 2, 3, 4, 7, 8, 9, 10, 13, 14, 15, 16});
  // Axes of extent 1 anywhere do not matter (the attention's [T, 1, E] slices).
  const Tensor with_ones = slice.reshape({3, 1, 4}).reshape({1, 3, 2, 1, 2});
  CHECK(with_ones.shares_storage_with(base));
  check_values(with_ones, {1, 2, 3, 4, 7, 8, 9, 10, 13, 14, 15, 16});
  // Merging the rows with each other needs a copy: the values are not equally spaced.
  const Tensor merged = slice.reshape({12});
  CHECK_FALSE(merged.shares_storage_with(base));
  check_values(merged, {1, 2, 3, 4, 7, 8, 9, 10, 13, 14, 15, 16});
  const Tensor regrouped = slice.reshape({2, 6});
  CHECK_FALSE(regrouped.shares_storage_with(base));
  check_values(regrouped, {1, 2, 3, 4, 7, 8, 9, 10, 13, 14, 15, 16});
  // A transposed matrix splits along its (strided) rows without a copy, not across them.
  const Tensor t = tensor_of({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}).t();  // [4, 2], strides (1, 4)
  const Tensor t_split = t.reshape({2, 2, 2});
  CHECK(t_split.strides() == Shape{2, 1, 4});
  check_values(t_split, {1, 5, 2, 6, 3, 7, 4, 8});
  // A broadcast row (stride 0) keeps its stride 0 when its axes are split, and copies when they
  // are merged with the row's own.
  const Tensor rows = tensor_of({1, 2, 3}, {3}).unsqueeze(0).expand({4, 3});
  const Tensor grouped = rows.reshape({2, 2, 3});
  CHECK(grouped.strides() == Shape{0, 0, 1});
  check_values(grouped, {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3});
  const Tensor flat_rows = rows.reshape({12});
  CHECK(flat_rows.is_contiguous());
  check_values(flat_rows, {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3});
  // Gradients flow back through the view to the slice's elements only.
  Tensor x = tensor_of(values, {3, 6}).set_requires_grad();
  sum(x.narrow(1, 1, 4).reshape({3, 2, 2}) * 2.0).backward();
  check_values(x.grad(), {0, 2, 2, 2, 2, 0, 0, 2, 2, 2, 2, 0, 0, 2, 2, 2, 2, 0});
}

TEST_CASE("expand, unsqueeze, squeeze and flatten", "[tensor]") {
  const Tensor row = tensor_of({1, 2, 3}, {3});
  const Tensor expanded = row.unsqueeze(0).expand({2, 3});
  CHECK(expanded.strides()[0] == 0);
  check_values(expanded, {1, 2, 3, 1, 2, 3});
  CHECK(row.unsqueeze(1).shape() == Shape{3, 1});
  CHECK(row.unsqueeze(1).squeeze(1).shape() == Shape{3});
  const Tensor image = zeros({2, 1, 8, 8}, test_device());
  CHECK(image.flatten(1).shape() == Shape{2, 64});
  CHECK_THROWS_WITH(row.squeeze(0), Catch::Contains("is not 1"));
}

TEST_CASE("view errors name the shapes", "[tensor]") {
  const Tensor t = zeros({2, 3}, test_device());
  CHECK_THROWS_AS(t.reshape({4, 2}), Error);
  CHECK_THROWS_WITH(t.reshape({4, 2}), Catch::Contains("[2, 3]") && Catch::Contains("[4, 2]"));
  CHECK_THROWS_WITH(t.narrow(1, 2, 2), Catch::Contains("outside axis 1"));
  CHECK_THROWS_WITH(t.permute({0, 0}), Catch::Contains("repeated"));
}

TEST_CASE("to(device) to the same device is the same tensor; a new device copies", "[tensor]") {
  const Tensor t = tensor_of({1, 2, 3, 4}, {2, 2});
  CHECK(t.to(test_device()).shares_storage_with(t));
  const std::shared_ptr<Device> other = switchyard::testing::reference_device();
  const Tensor moved = t.t().to(other);
  CHECK(moved.device() == other);
  CHECK(moved.is_contiguous());
  check_values(moved, {1, 3, 2, 4});
}
