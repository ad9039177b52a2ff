// Indexing, copy/cast, fill, random numbers and optimizer updates on the onednn plugin against
// the reference.
#include "onednn/onednn_test_support.h"

namespace switchyard::onednn_test {
namespace {

constexpr sy_dtype kAllDtypes[] = {SY_DTYPE_F32, SY_DTYPE_BF16, SY_DTYPE_F16, SY_DTYPE_I32,
                                   SY_DTYPE_I64};

HostTensor data_values(sy_dtype dtype, const Shape& shape, uint64_t seed) {
  conformance::Generator gen(seed);
  if (dtype == SY_DTYPE_I32 || dtype == SY_DTYPE_I64) {
    return conformance::random_integers(gen, dtype, shape, -1000, 1000);
  }
  return conformance::random_tensor(gen, dtype, shape, -10, 10);
}

TEST_CASE("onednn gather and scatter_add match the reference for every dtype", "[onednn][index]") {
  for (sy_dtype dtype : kAllDtypes) {
    for (int axis : {0, 1}) {
      DYNAMIC_SECTION(dtype_name(dtype) << " axis " << axis) {
        const HostTensor indices =
            conformance::tensor_from_values(SY_DTYPE_I32, {5}, {3, 0, 3, 1, 2});
        const Shape data_shape = {4, 4, 3};
        const Shape picked_shape = axis == 0 ? Shape{5, 4, 3} : Shape{4, 5, 3};
        OpCase gather = conformance::make_op_case(
            SY_OP_GATHER, {spread(data_values(dtype, data_shape, 1)), indices},
            {conformance::zeros(dtype, picked_shape)});
        gather.params.index.axis = axis;
        check_against_reference(gather, dtype);
        // Repeated index 3 accumulates twice into existing contents.
        OpCase scatter = conformance::make_op_case(SY_OP_SCATTER_ADD,
                                                   {data_values(dtype, picked_shape, 2), indices},
                                                   {spread(data_values(dtype, data_shape, 3))});
        scatter.params.index.axis = axis;
        check_against_reference(scatter, dtype);
      }
    }
  }
  OpCase bad = conformance::make_op_case(
      SY_OP_GATHER,
      {random(SY_DTYPE_F32, {4, 2}, 1), conformance::tensor_from_values(SY_DTYPE_I64, {2}, {1, 4})},
      {conformance::zeros(SY_DTYPE_F32, {2, 2})});
  Status status = run_onednn(bad);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find("index 4 at position 1") != std::string::npos);
}

TEST_CASE("onednn copy casts between every pair of dtypes and permutes by strides",
          "[onednn][copy]") {
  for (sy_dtype from : kAllDtypes) {
    for (sy_dtype to : kAllDtypes) {
      DYNAMIC_SECTION(dtype_name(from) << " -> " << dtype_name(to)) {
        HostTensor source = transposed_view(data_values(from, {30, 70}, 4));
        check_against_reference(
            conformance::make_op_case(SY_OP_COPY, {source},
                                      {spread(conformance::zeros(to, {70, 30}))}),
            to);
      }
    }
  }
}

TEST_CASE("onednn copy transposes large matrices in tiles", "[onednn][copy]") {
  for (sy_dtype dtype : kAllDtypes) {
    DYNAMIC_SECTION(dtype_name(dtype)) {
      // [3, 150, 90] read as [3, 90, 150]: the tiled path, batched.
      HostTensor source = transposed_view(data_values(dtype, {3, 150, 90}, 6));
      check_against_reference(conformance::make_op_case(SY_OP_COPY, {source},
                                                        {conformance::zeros(dtype, {3, 90, 150})}),
                              dtype);
    }
  }
}

TEST_CASE("onednn copy interleaves a few planes into rows (an image made channels-last)",
          "[onednn][copy]") {
  // [2, C, 600] read as [2, 600, C] with C < 32: the narrow transpose, in bands of 512 rows and a
  // tail of 88; 4-byte dtypes into dense rows of 2-4 take the vectorised interleave, the rest
  // (5 columns, 2- and 8-byte dtypes, rows with gaps) the element loop.
  for (sy_dtype dtype : kAllDtypes) {
    for (const int64_t cols : {2, 3, 4, 5}) {
      DYNAMIC_SECTION(dtype_name(dtype) << ", " << cols << " columns") {
        HostTensor source = transposed_view(data_values(dtype, {2, cols, 600}, 8));
        check_against_reference(
            conformance::make_op_case(SY_OP_COPY, {source},
                                      {conformance::zeros(dtype, {2, 600, cols})}),
            dtype);
        check_against_reference(
            conformance::make_op_case(SY_OP_COPY, {source},
                                      {spread(conformance::zeros(dtype, {2, 600, cols}))}),
            dtype);
      }
    }
  }
}

TEST_CASE("onednn fill writes the converted value into strided outputs", "[onednn][copy]") {
  for (sy_dtype dtype : kAllDtypes) {
    DYNAMIC_SECTION(dtype_name(dtype)) {
      OpCase fill =
          conformance::make_op_case(SY_OP_FILL, {}, {spread(conformance::zeros(dtype, {3, 50}))});
      fill.params.fill.value = -2.71828;
      check_against_reference(fill, dtype);
    }
  }
}

TEST_CASE("onednn random numbers equal the reference's for any offset and layout",
          "[onednn][random]") {
  for (sy_dtype dtype : kFloatDtypes) {
    DYNAMIC_SECTION(dtype_name(dtype)) {
      OpCase uniform = conformance::make_op_case(SY_OP_RANDOM_UNIFORM, {},
                                                 {spread(conformance::zeros(dtype, {17, 300}))});
      uniform.params.random = {123456789012345ull, 77, -3.0, 5.0};
      check_against_reference(uniform, dtype, 0.0);  // bit-identical
      OpCase normal =
          conformance::make_op_case(SY_OP_RANDOM_NORMAL, {}, {conformance::zeros(dtype, {40000})});
      normal.params.random = {42, 1ull << 40, 1.0, 2.0};
      check_against_reference(normal, dtype);
    }
  }
}

TEST_CASE("onednn philox gives the Random123 known answer", "[onednn][random]") {
  // u = (word0 >> 8) * 2^-24 with word0 = 0x6627e8d5 for seed 0, counter 0; a = 0, b = 1.
  OpCase uniform =
      conformance::make_op_case(SY_OP_RANDOM_UNIFORM, {}, {conformance::zeros(SY_DTYPE_F32, {1})});
  uniform.params.random = {0, 0, 0.0, 1.0};
  auto result = conformance::execute_case(onednn(), uniform);
  REQUIRE(result.ok());
  CHECK((*result)[0].logical_values()[0] == static_cast<double>(0x6627e8d5u >> 8) / 16777216.0);
}

TEST_CASE("onednn sgd and adam updates match the reference", "[onednn][optimizer]") {
  for (sy_dtype dtype : kFloatDtypes) {
    DYNAMIC_SECTION(dtype_name(dtype)) {
      const Shape shape = {70, 1000};
      for (bool nesterov : {false, true}) {
        OpCase sgd = conformance::make_op_case(
            SY_OP_SGD_UPDATE,
            {random(dtype, shape, 1), random(dtype, shape, 2), random(dtype, shape, 3)}, {});
        sgd.updated_inputs = {0, 2};
        sgd.params.sgd = {0.05, 0.9, 0.0, 1e-4, nesterov, 0};
        check_against_reference(sgd, dtype);
      }
      OpCase plain = conformance::make_op_case(
          SY_OP_SGD_UPDATE, {spread(random(dtype, {9, 7}, 1)), random(dtype, {9, 7}, 2)}, {});
      plain.updated_inputs = {0};
      plain.params.sgd.lr = 0.1;
      check_against_reference(plain, dtype);
      for (uint32_t decoupled : {0u, 1u}) {
        OpCase adam =
            conformance::make_op_case(SY_OP_ADAM_UPDATE,
                                      {random(dtype, shape, 4), random(dtype, shape, 5),
                                       random(dtype, shape, 6), random(dtype, shape, 7, 0.0, 0.01)},
                                      {});
        adam.updated_inputs = {0, 2, 3};
        adam.params.adam = {1e-3, 0.9, 0.999, 1e-8, 0.01, decoupled, 0, 3};
        check_against_reference(adam, dtype);
      }
    }
  }
}

}  // namespace
}  // namespace switchyard::onednn_test
