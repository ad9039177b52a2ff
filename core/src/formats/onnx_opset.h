// ONNX op versions (docs/onnx.md, "Opsets"): which version of an op a model's opset gives it, and
// the rewriting, at load, of older versions that take as attributes what later ones take as inputs.
// Private to the formats layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/onnx_proto.h"

namespace switchyard::onnx_detail {

// The version of `op` in a model of `opset`: the newest opset at or below it where ONNX changed the
// op. 0 when the op does not exist at that opset (added later or removed), -1 for an op this table
// does not know.
int op_version(const std::string& op, int64_t opset);

// Why `op` has no version at `opset`, for a message: "ONNX added it at opset 14", "ONNX removed it
// at opset 10".
std::string op_absence(const std::string& op, int64_t opset);

// Rewrites node `index` of `graph`, of version `version`, into the form of the op's later versions
// where an older version takes as attributes what they take as inputs (Slice-1's starts, ends and
// axes; TopK-1's k; Pad-2's pads and value; Clip-6's min and max; Split-2's and Split-11's split;
// Upsample-7's scales). The values become initializers named
// "switchyard.opset.<index>.<attribute>". Returns "" or what is wrong with the node (the caller
// names it and the file).
std::string upgrade_node(onnx::GraphProto& graph, int index, int version);

// Each node of the default domain of `graph` gets its op's version at its opset (node_opsets: the
// model's `opset`, or its function's) in `versions` (0 for another domain or an op the table does
// not know), and is upgraded (upgrade_node). Returns "" or the first problem naming the node: an
// op its opset does not have, a function's op whose version differs at the model's opset, an
// older form that does not fit.
std::string upgrade_graph(onnx::GraphProto& graph, const std::vector<int64_t>& node_opsets,
                          int64_t opset, std::vector<int>& versions);

}  // namespace switchyard::onnx_detail
