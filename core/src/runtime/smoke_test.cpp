#include <cmath>
#include <cstring>

#include "switchyard/buffer.h"
#include "switchyard/queue.h"
#include "switchyard/registry.h"

namespace switchyard {
namespace {

sy_tensor_desc contiguous_f32(const Buffer& buffer, uint64_t offset_bytes,
                              std::initializer_list<int64_t> shape) {
  sy_tensor_desc desc{};
  desc.buffer = buffer.handle();
  desc.offset_bytes = offset_bytes;
  desc.dtype = SY_DTYPE_F32;
  desc.rank = static_cast<uint32_t>(shape.size());
  int64_t stride = 1;
  int axis = static_cast<int>(shape.size()) - 1;
  for (auto it = shape.end(); it != shape.begin();) {
    --it;
    desc.shape[axis] = *it;
    desc.strides[axis] = stride;
    stride *= *it;
    --axis;
  }
  return desc;
}

}  // namespace

// Two ops whose answers are worked out here: an add of four numbers and a 2x3 @ 3x2 matmul.
// Small integers keep every backend exact, so any difference is a broken device.
Status smoke_test(Device& device) {
  if (!device.supports(SY_OP_ADD, SY_DTYPE_F32) || !device.supports(SY_OP_MATMUL, SY_DTYPE_F32)) {
    return unimplemented(
        "the device does not support f32 add and matmul, which the smoke test needs");
  }
  const float a[6] = {1, 2, 3, 4, 5, 6};
  const float b[6] = {7, 8, 9, 10, 11, 12};
  const float expected_add[4] = {8, 10, 12, 14};
  // [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]]
  const float expected_matmul[4] = {58, 64, 139, 154};
  SY_ASSIGN_OR_RETURN(auto buffer, device.allocate(sizeof(float) * 24));
  Queue& queue = device.default_queue();
  SY_RETURN_IF_ERROR(queue.write(*buffer, 0, a, sizeof(a)));
  SY_RETURN_IF_ERROR(queue.write(*buffer, 24, b, sizeof(b)));

  sy_op_call add{};
  add.op = SY_OP_ADD;
  add.num_inputs = 2;
  add.num_outputs = 1;
  add.inputs[0] = contiguous_f32(*buffer, 0, {4});
  add.inputs[1] = contiguous_f32(*buffer, 24, {4});
  add.outputs[0] = contiguous_f32(*buffer, 48, {4});
  SY_RETURN_IF_ERROR(queue.dispatch(add).with_context("smoke add"));

  sy_op_call matmul{};
  matmul.op = SY_OP_MATMUL;
  matmul.num_inputs = 2;
  matmul.num_outputs = 1;
  matmul.inputs[0] = contiguous_f32(*buffer, 0, {2, 3});
  matmul.inputs[1] = contiguous_f32(*buffer, 24, {3, 2});
  matmul.outputs[0] = contiguous_f32(*buffer, 64, {2, 2});
  SY_RETURN_IF_ERROR(queue.dispatch(matmul).with_context("smoke matmul"));

  float got[8] = {};
  SY_RETURN_IF_ERROR(queue.read(*buffer, 48, got, sizeof(got)));
  for (int i = 0; i < 4; ++i) {
    if (got[i] != expected_add[i] || got[4 + i] != expected_matmul[i]) {
      return internal_error("the smoke test gave a wrong answer: add[" + std::to_string(i) +
                            "] = " + std::to_string(got[i]) + " (expected " +
                            std::to_string(expected_add[i]) + "), matmul[" + std::to_string(i) +
                            "] = " + std::to_string(got[4 + i]) + " (expected " +
                            std::to_string(expected_matmul[i]) + ")");
    }
  }
  return ok_status();
}

}  // namespace switchyard
