// Bridges between views and oneDNN: data types, memory descriptors with strides, execution with a
// user scratchpad from the queue's workspace.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>

#include "op_context.h"
#include "tensor_view.h"

namespace sy_onednn {

// oneDNN's data type for a storage dtype (I64 has none: undef).
dnnl::memory::data_type dnnl_type(uint32_t dtype);

// Whether oneDNN can describe the view as it is: no stride 0 on an axis of size > 1.
bool dnnl_describable(const TensorView& view);

// The view's dims and strides; a rank-0 view becomes [1]. Size-1 axes get the stride a dense
// layout would give them, so that oneDNN recognises plain layouts. Leading size-1 axes are added
// up to `rank` when it is larger than the view's rank.
dnnl::memory::desc dnnl_desc(const TensorView& view, int rank = 0);
// A dense row-major descriptor of the given dims.
dnnl::memory::desc dnnl_dense_desc(const dnnl::memory::dims& dims, uint32_t dtype);

// Primitive attributes every cached primitive uses: a user-managed scratchpad and the device's
// fpmath mode (the `fpmath` option; strict unless the YAML file allows down-conversion).
dnnl::primitive_attr primitive_attr(const OpContext& ctx);

struct DnnlArg {
  int arg;
  const dnnl::memory::desc* desc;
  void* data;
};

// Executes `primitive` on the queue's stream with the given arguments plus a scratchpad of
// `scratchpad` from the workspace, and waits for it. Arguments with a null `data` are left out
// (an optional argument such as a missing bias). `zero_scratchpad` hands the primitive a zeroed
// scratchpad, for the kernels that read parts of it they never wrote (see conv.cpp).
void execute_primitive(OpContext& ctx, const dnnl::primitive& primitive,
                       const dnnl::memory::desc& scratchpad, std::initializer_list<DnnlArg> args,
                       bool zero_scratchpad = false);

}  // namespace sy_onednn

namespace sy_onednn {

// How one primitive argument maps between the caller's layout and the layout the primitive chose
// (format_tag::any lets oneDNN pick blocked layouts that its fastest kernels need). When they
// differ, a cached reorder converts on the way in (inputs) or out (outputs).
struct ArgLayout {
  dnnl::memory::desc user;
  dnnl::memory::desc internal;
  dnnl::primitive reorder;  // user -> internal for inputs, internal -> user for outputs
  bool same = true;
};

ArgLayout make_input_layout(const dnnl::engine& engine, const dnnl::memory::desc& user,
                            const dnnl::memory::desc& internal);
ArgLayout make_output_layout(const dnnl::engine& engine, const dnnl::memory::desc& user,
                             const dnnl::memory::desc& internal);

// The pointer to hand the primitive for an input: the caller's data, or a reordered scratch copy.
void* prepare_input(OpContext& ctx, const ArgLayout& layout, void* user_data);
// The pointer the primitive writes an output to: the caller's data or scratch.
void* output_target(OpContext& ctx, const ArgLayout& layout, void* user_data);
// Reorders an output from scratch into the caller's layout (nothing when the layouts agree).
void finish_output(OpContext& ctx, const ArgLayout& layout, void* target, void* user_data);

// The weights (input 1) in the primitive's layout: the caller's bytes where the layouts agree, a
// kept conversion where the call promised them constant (SY_CALL_CONSTANT_WEIGHTS: device.weights;
// `kept` holds it during the call), else a conversion made now. Used by the convolutions and
// MATMUL's b.
void* constant_weights(OpContext& ctx, const ArgLayout& layout, const TensorView& w,
                       std::shared_ptr<const void>& kept, int input = 1);
// Input `input`'s bytes `w` (laid out as `user`) converted to `internal` by `convert`, which
// returns internal.get_size() converted bytes: kept in device.weights where the call promises the
// input constant and `w` is the caller's own bytes (a staged copy lives in scratch memory, whose
// addresses the next call reuses), and found there on later calls; converted afresh otherwise.
// `kept` holds a kept conversion alive while the call uses it.
void* kept_conversion(OpContext& ctx, int input, const TensorView& w,
                      const dnnl::memory::desc& user, const dnnl::memory::desc& internal,
                      std::shared_ptr<const void>& kept, const std::function<void*()>& convert);

}  // namespace sy_onednn
