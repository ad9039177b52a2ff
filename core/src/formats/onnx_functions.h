// Model-local functions (ModelProto.functions, IR 8): torch.onnx.export's
// export_modules_as_functions and the dynamo exporter without optimize write them. At load every
// call (a node whose domain and op type name a function of the model) is replaced by the
// function's body, its values renamed "switchyard.inline.<call>/<name>", its nodes named
// "<call>/<body node>", attributes that refer to the call's (ref_attr_name) given the call's
// values; calls inside bodies are inlined in turn. Private to the formats layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/onnx_proto.h"

namespace switchyard::onnx_detail {

// Inlines every call to a local function of `model`, whose default-domain opset is `opset`, and
// gives each node of the graph then the default-domain opset it is read at: the model's, or for a
// body's node its function's own import (which must lie in [min_opset, max_opset]). Returns "" or
// what is wrong (the caller names the file): a function defined twice (IR 10's overloads), calls
// nested more than 32 deep, more than 2^20 nodes after inlining, an attribute left to a
// function's own default value (IR 9, which this onnx.proto does not hold).
std::string inline_functions(onnx::ModelProto& model, int64_t opset, int64_t min_opset,
                             int64_t max_opset, std::vector<int64_t>& node_opsets);

}  // namespace switchyard::onnx_detail
