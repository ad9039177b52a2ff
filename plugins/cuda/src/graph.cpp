#include "graph.h"

#include <cstring>
#include <string>

#include "device.h"
#include "dispatch.h"
#include "switchyard/plugin_support/graph_update.h"

namespace sy_cuda {
namespace {

Status begin_stream_capture(const DriverApi& api, CUstream stream) {
  // Relaxed: an op may still allocate scratch (cuMemAlloc) while its stream captures.
  return cu_check(api, api.cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_RELAXED),
                  "cuStreamBeginCapture");
}

void release_all(CudaDevice& device, const std::vector<CudaBuffer*>& buffers) {
  for (CudaBuffer* buffer : buffers) device.allocator->release(buffer);
}

}  // namespace

void CaptureRecorder::note_buffer(CudaBuffer* buffer) {
  if (buffer != nullptr && seen.insert(buffer).second) buffers.push_back(buffer);
}

void CaptureRecorder::note_launch(const DriverApi& api, CUstream stream, CUfunction function,
                                  const LaunchShape& shape, const void* args, size_t args_bytes) {
  CapturedLaunch launch;
  launch.function = function;
  launch.shape = shape;
  // The stream's dependency set right after a launch is the launch's own node (capture on one
  // stream is a chain). Anything else leaves the node unknown, and graph_update then refuses.
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUgraphNode* dependencies = nullptr;
  size_t count = 0;
  if (api.cuStreamGetCaptureInfo_v3(stream, &status, nullptr, nullptr, &dependencies, nullptr,
                                    &count) == CUDA_SUCCESS &&
      status == CU_STREAM_CAPTURE_STATUS_ACTIVE && count == 1) {
    launch.node = dependencies[0];
  }
  if (updating) {
    launch.args.resize((args_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
    std::memcpy(launch.args.data(), args, args_bytes);
  }
  launches.push_back(std::move(launch));
}

Status refuse_while_capturing(CudaQueue& queue, const char* what) {
  const Status refused =
      unimplemented(std::string("cuda: ") + what + " while the queue is capturing");
  if (queue.capture != nullptr && queue.capture->failure.ok()) queue.capture->failure = refused;
  return refused;
}

Status begin_capture(CudaDevice& device, CudaQueue& queue) {
  if (queue.capture != nullptr) return invalid_argument("cuda: the queue is already capturing");
  SY_CUDA_RETURN_IF_ERROR(begin_stream_capture(*device.api, queue.stream));
  queue.capture = std::make_unique<CaptureRecorder>();
  return ok_status();
}

Status end_capture(CudaDevice& device, CudaQueue& queue, CudaGraph** out) {
  *out = nullptr;
  if (queue.capture == nullptr) return invalid_argument("cuda: the queue is not capturing");
  const DriverApi& api = *device.api;
  std::unique_ptr<CaptureRecorder> recorder = std::move(queue.capture);
  CUgraph made = nullptr;
  const CUresult ended = api.cuStreamEndCapture(queue.stream, &made);
  const auto discard = [&](const Status& why) {
    if (made != nullptr) (void)api.cuGraphDestroy(made);
    release_all(device, recorder->held);
    return why;
  };
  if (!recorder->failure.ok()) {
    return discard(
        Status(recorder->failure.code(), recorder->failure.message() + ": nothing was captured"));
  }
  if (ended != CUDA_SUCCESS) return discard(cu_check(api, ended, "cuStreamEndCapture"));
  auto graph = std::make_unique<CudaGraph>();
  const CUresult instantiated = api.cuGraphInstantiateWithFlags(&graph->exec, made, 0);
  if (instantiated != CUDA_SUCCESS) {
    return discard(cu_check(api, instantiated,
                            "cuGraphInstantiate (" + std::to_string(recorder->calls.size()) +
                                " calls, " + std::to_string(recorder->launches.size()) +
                                " kernels)"));
  }
  const CUresult event = api.cuEventCreate(&graph->done, CU_EVENT_DISABLE_TIMING);
  if (event != CUDA_SUCCESS) {
    (void)api.cuGraphExecDestroy(graph->exec);
    return discard(cu_check(api, event, "cuEventCreate"));
  }
  // cuBLASLt's workspace belongs to the capturing queue and is named by the graph's matmuls.
  if (queue.lt_workspace != nullptr) recorder->note_buffer(queue.lt_workspace);
  graph->capture_queue = &queue;
  graph->graph = made;
  graph->launches = std::move(recorder->launches);
  graph->calls = std::move(recorder->calls);
  graph->buffers = std::move(recorder->buffers);
  graph->held = std::move(recorder->held);
  *out = graph.release();
  return ok_status();
}

Status launch_graph(CudaDevice& device, CudaQueue& queue, CudaGraph& graph) {
  if (queue.capture != nullptr) return refuse_while_capturing(queue, "graph_launch");
  const DriverApi& api = *device.api;
  if (graph.last_stream != queue.stream) {
    // First launch on this stream: order it after the earlier owners of every buffer the graph
    // names (later launches here are ordered by the stream itself), and after the last launch.
    for (CudaBuffer* buffer : graph.buffers) {
      SY_CUDA_RETURN_IF_ERROR(device.allocator->use_on(buffer, queue.stream));
    }
    if (graph.last_stream != nullptr) {
      SY_CUDA_RETURN_IF_ERROR(
          cu_check(api, api.cuStreamWaitEvent(queue.stream, graph.done, 0), "cuStreamWaitEvent"));
    }
  }
  SY_CUDA_RETURN_IF_ERROR(cu_check(api, api.cuGraphLaunch(graph.exec, queue.stream),
                                   "cuGraphLaunch (" + std::to_string(graph.calls.size()) +
                                       " calls, " + std::to_string(graph.launches.size()) +
                                       " kernels)"));
  graph.last_stream = queue.stream;
  return cu_check(api, api.cuEventRecord(graph.done, queue.stream), "cuEventRecord");
}

void destroy_graph(CudaDevice& device, CudaGraph* graph) {
  if (graph == nullptr) return;
  const DriverApi& api = *device.api;
  if (graph->last_stream != nullptr) (void)api.cuEventSynchronize(graph->done);
  if (graph->done != nullptr) (void)api.cuEventDestroy_v2(graph->done);
  if (graph->exec != nullptr) (void)api.cuGraphExecDestroy(graph->exec);
  if (graph->graph != nullptr) (void)api.cuGraphDestroy(graph->graph);
  release_all(device, graph->held);
  delete graph;
}

Status update_graph(CudaDevice& device, CudaGraph& graph, uint64_t call_index,
                    const sy_op_call& call) {
  if (call_index >= graph.calls.size()) {
    return invalid_argument("graph_update: call " + std::to_string(call_index) + ", but " +
                            std::to_string(graph.calls.size()) + " calls were captured");
  }
  CapturedCall& captured = graph.calls[call_index];
  if (const std::string problem = sy_support::call_replacement_problem(captured.call, call);
      !problem.empty()) {
    return invalid_argument("graph_update: the new call " + std::to_string(call_index) + " " +
                            problem);
  }
  CudaQueue& queue = *graph.capture_queue;
  if (queue.capture != nullptr) {
    return invalid_argument("graph_update: the graph's capturing queue is capturing again");
  }
  const DriverApi& api = *device.api;
  // The call's host code runs again under a capture of its own, so nothing it enqueues runs;
  // what it enqueued must be exactly its kernels as captured, with new parameters.
  SY_CUDA_RETURN_IF_ERROR(begin_stream_capture(api, queue.stream));
  queue.capture = std::make_unique<CaptureRecorder>();
  queue.capture->updating = true;
  const Status ran = dispatch(device, queue, call);
  std::unique_ptr<CaptureRecorder> again = std::move(queue.capture);
  CUgraph scratch_graph = nullptr;
  const CUresult ended = api.cuStreamEndCapture(queue.stream, &scratch_graph);
  size_t nodes = 0;
  if (ended == CUDA_SUCCESS && scratch_graph != nullptr) {
    (void)api.cuGraphGetNodes(scratch_graph, nullptr, &nodes);
  }
  if (scratch_graph != nullptr) (void)api.cuGraphDestroy(scratch_graph);
  const std::string which =
      "graph_update: call " + std::to_string(call_index) + " (" + op_name(call.op) + ")";
  if (!ran.ok()) return Status(ran.code(), which + ": " + ran.message());
  SY_CUDA_RETURN_IF_ERROR(cu_check(api, ended, "cuStreamEndCapture"));
  const std::vector<CapturedLaunch>& now = again->launches;
  if (nodes != now.size() || now.size() != captured.launch_count) {
    return unimplemented(which + " now enqueues " + std::to_string(now.size()) + " kernels (" +
                         std::to_string(nodes) + " graph nodes) where " +
                         std::to_string(captured.launch_count) +
                         " kernels were captured; only a call's kernel parameters can change");
  }
  for (size_t k = 0; k < now.size(); ++k) {
    const CapturedLaunch& old = graph.launches[captured.first_launch + k];
    const CapturedLaunch& fresh = now[k];
    if (old.node == nullptr || old.function != fresh.function ||
        old.shape.grid_x != fresh.shape.grid_x || old.shape.grid_y != fresh.shape.grid_y ||
        old.shape.grid_z != fresh.shape.grid_z || old.shape.block != fresh.shape.block) {
      return unimplemented(which + ": kernel " + std::to_string(k) +
                           " is another kernel or launch shape than the captured one");
    }
  }
  for (size_t k = 0; k < now.size(); ++k) {
    const CapturedLaunch& fresh = now[k];
    void* params[] = {const_cast<std::max_align_t*>(fresh.args.data())};
    CUDA_KERNEL_NODE_PARAMS p;
    std::memset(&p, 0, sizeof(p));
    p.func = fresh.function;
    p.gridDimX = fresh.shape.grid_x;
    p.gridDimY = fresh.shape.grid_y;
    p.gridDimZ = fresh.shape.grid_z;
    p.blockDimX = fresh.shape.block;
    p.blockDimY = 1;
    p.blockDimZ = 1;
    p.kernelParams = params;
    // Launches already enqueued keep the parameters they had; the next one takes these.
    SY_CUDA_RETURN_IF_ERROR(
        cu_check(api,
                 api.cuGraphExecKernelNodeSetParams_v2(
                     graph.exec, graph.launches[captured.first_launch + k].node, &p),
                 "cuGraphExecKernelNodeSetParams"));
  }
  captured.call = call;
  return ok_status();
}

}  // namespace sy_cuda
