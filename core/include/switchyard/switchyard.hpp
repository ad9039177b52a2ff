// switchyard: the whole public C++ API in one include, for host applications.
//
//   #include <switchyard/switchyard.hpp>
//   find_package(switchyard) + target_link_libraries(app PRIVATE switchyard::core)
//
// share/switchyard/examples/embed (tests/install/embed_example.cpp here) uses it. Plugins include
// only switchyard/plugin_abi.h and switchyard/plugin_support/ (target switchyard::abi) instead.
#pragma once

#include "switchyard/autocast.h"
#include "switchyard/autograd.h"
#include "switchyard/buffer.h"
#include "switchyard/capture.h"
#include "switchyard/checkpoint.h"
#include "switchyard/communicator.h"
#include "switchyard/config.h"
#include "switchyard/data.h"
#include "switchyard/device.h"
#include "switchyard/dispatch.h"
#include "switchyard/dtype.h"
#include "switchyard/init.h"
#include "switchyard/inventory.h"
#include "switchyard/metrics.h"
#include "switchyard/nn.h"
#include "switchyard/nn_sequence.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"
#include "switchyard/optim.h"
#include "switchyard/plugin.h"
#include "switchyard/predict.h"
#include "switchyard/profile.h"
#include "switchyard/queue.h"
#include "switchyard/registry.h"
#include "switchyard/runtime.h"
#include "switchyard/safetensors.h"
#include "switchyard/shape.h"
#include "switchyard/status.h"
#include "switchyard/switchyard.h"
#include "switchyard/tensor.h"
#include "switchyard/train.h"
