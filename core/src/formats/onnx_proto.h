// The protobuf classes of onnx.proto as Debian's libonnx-dev generates and ships them
// (libonnx_proto, namespace onnx, built with ONNX_ML), behind one include. Private to the core:
// no installed header includes protobuf.
#pragma once

#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#include <onnx/onnx_pb.h>
