// Native capture and replay (docs/capture.md) as CUDA Graphs: queue_capture_begin puts the
// queue's stream into stream capture (relaxed mode: scratch may still be allocated), the op calls
// then enqueue their kernels, cuBLASLt matmuls and copies into the graph instead of running them,
// and queue_capture_end instantiates it. graph_launch is one cuGraphLaunch; graph_update re-runs
// one call's host code under a second capture and moves its kernels' new parameters into the
// instantiated graph with cuGraphExecKernelNodeSetParams (which leaves launches already enqueued
// alone, so nothing waits).
//
// Memory: scratch an op releases while its queue captures is held by the graph until
// graph_destroy (a replay writes it again); every buffer a captured call names is ordered on the
// launching stream at each launch, as an eager dispatch would order it.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <unordered_set>
#include <vector>

#include "allocator.h"
#include "kernels.h"
#include "status.h"
#include "switchyard/plugin_abi.h"

namespace sy_cuda {

struct CudaDevice;
struct CudaQueue;

// One kernel launch made by a captured call: the node stream capture made of it and, when a
// call is re-run for graph_update, the parameter bytes (aligned as any struct).
struct CapturedLaunch {
  CUfunction function = nullptr;
  LaunchShape shape;
  CUgraphNode node = nullptr;
  std::vector<std::max_align_t> args;
};

struct CapturedCall {
  sy_op_call call;
  size_t first_launch = 0;
  size_t launch_count = 0;
};

// What a capturing queue collects (CudaQueue::capture points at it while it captures).
struct CaptureRecorder {
  bool updating = false;  // re-running one call for graph_update: scratch is refused
  std::vector<CapturedLaunch> launches;
  std::vector<CapturedCall> calls;
  std::vector<CudaBuffer*> buffers;  // every buffer the calls name, once each
  std::unordered_set<CudaBuffer*> seen;
  std::vector<CudaBuffer*> held;  // scratch released while capturing: kept for the graph
  Status failure = ok_status();   // the first call that could not be recorded

  void note_buffer(CudaBuffer* buffer);
  // After a launch on `stream` (capturing): the kernel's node, and its parameters if updating.
  void note_launch(const DriverApi& api, CUstream stream, CUfunction function,
                   const LaunchShape& shape, const void* args, size_t args_bytes);
};

struct CudaGraph {
  CudaQueue* capture_queue = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  std::vector<CapturedLaunch> launches;
  std::vector<CapturedCall> calls;
  std::vector<CudaBuffer*> buffers;  // ordered on the launching stream at every launch
  std::vector<CudaBuffer*> held;     // released by graph_destroy
  CUevent done = nullptr;            // recorded after every launch
  CUstream last_stream = nullptr;    // where the last launch ran (null before the first)
};

// Refuses what a capturing queue cannot record: `what` is "buffer_read" and the like.
Status refuse_while_capturing(CudaQueue& queue, const char* what);

Status begin_capture(CudaDevice& device, CudaQueue& queue);
Status end_capture(CudaDevice& device, CudaQueue& queue, CudaGraph** out);
Status launch_graph(CudaDevice& device, CudaQueue& queue, CudaGraph& graph);
void destroy_graph(CudaDevice& device, CudaGraph* graph);
Status update_graph(CudaDevice& device, CudaGraph& graph, uint64_t call_index,
                    const sy_op_call& call);

}  // namespace sy_cuda
