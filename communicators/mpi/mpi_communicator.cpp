// The MPI communicator: communicator_abi.h over Open MPI or MPICH's C API. Built only where MPI
// is found, and loaded by the core only in a process an MPI launcher started.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>

#include "switchyard/communicator_abi.h"

namespace {

thread_local std::string t_last_error;

sy_status fail(sy_status code, std::string message) {
  t_last_error = std::move(message);
  return code;
}

// MPI's text for an error code, with the call that returned it.
sy_status mpi_fail(const char* call, int error) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(error, text, &length);
  return fail(SY_STATUS_INTERNAL, std::string(call) + " failed: " + std::string(text, length));
}

}  // namespace

struct sy_comm {
  MPI_Comm world = MPI_COMM_NULL;
  uint32_t rank = 0;
  uint32_t size = 1;
  bool initialized_here = false;
  sy_comm_request next_request = 1;
  std::unordered_map<sy_comm_request, MPI_Request> requests;

  sy_comm_request keep(MPI_Request request) {
    const sy_comm_request id = next_request++;
    requests.emplace(id, request);
    return id;
  }
};

namespace {

const char* last_error_message() {
  return t_last_error.c_str();
}

sy_status create(sy_comm** out) noexcept {
  try {
    auto comm = std::make_unique<sy_comm>();
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized == 0) {
      // Open MPI's non-blocking allreduce (libnbc) picks a binomial tree below 4 ranks, which
      // moves about twice the bytes of MPI_Allreduce's algorithm: 0.3 of the blocking call's
      // bandwidth at 64 MB on 2 ranks here, the ring 1.0 (docs/distributed.md). A value the user
      // set (OMPI_MCA_... or --mca) wins; other MPI libraries ignore the variable.
      setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", 0);
      int provided = 0;
      const int error = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
      if (error != MPI_SUCCESS) return mpi_fail("MPI_Init_thread", error);
      comm->initialized_here = true;
    }
    // A duplicate, so our collectives never match a host application's; errors come back as
    // codes (the host owns the policy: a message naming the rank, then abort).
    int error = MPI_Comm_dup(MPI_COMM_WORLD, &comm->world);
    if (error != MPI_SUCCESS) return mpi_fail("MPI_Comm_dup", error);
    MPI_Comm_set_errhandler(comm->world, MPI_ERRORS_RETURN);
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm->world, &rank);
    MPI_Comm_size(comm->world, &size);
    comm->rank = static_cast<uint32_t>(rank);
    comm->size = static_cast<uint32_t>(size);
    *out = comm.release();
    return SY_STATUS_OK;
  } catch (const std::exception& e) {
    return fail(SY_STATUS_INTERNAL, e.what());
  }
}

void destroy(sy_comm* comm) noexcept {
  if (comm == nullptr) return;
  if (comm->world != MPI_COMM_NULL) MPI_Comm_free(&comm->world);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm->initialized_here && finalized == 0) MPI_Finalize();
  delete comm;
}

uint32_t rank_of(const sy_comm* comm) {
  return comm->rank;
}
uint32_t size_of(const sy_comm* comm) {
  return comm->size;
}

sy_status describe(const sy_comm*, char* text, size_t capacity) noexcept {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string line(version, static_cast<size_t>(length));
  line = line.substr(0, line.find_first_of(",\n"));  // "Open MPI v4.1.4, package: ..." -> first
  if (capacity > 0) std::snprintf(text, capacity, "%s", line.c_str());
  return SY_STATUS_OK;
}

// MPI counts are int: larger buffers are refused rather than silently truncated.
bool fits_int(uint64_t count) {
  return count <= 0x7fffffffull;
}

sy_status allreduce_start(sy_comm* comm, float* data, uint64_t count,
                          sy_comm_request* out) noexcept {
  if (!fits_int(count)) return fail(SY_STATUS_OUT_OF_RANGE, "allreduce of more than 2^31 floats");
  MPI_Request request = MPI_REQUEST_NULL;
  const int error = MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                                   comm->world, &request);
  if (error != MPI_SUCCESS) return mpi_fail("MPI_Iallreduce", error);
  *out = comm->keep(request);
  return SY_STATUS_OK;
}

sy_status allreduce_blocking(sy_comm* comm, float* data, uint64_t count) noexcept {
  if (!fits_int(count)) return fail(SY_STATUS_OUT_OF_RANGE, "allreduce of more than 2^31 floats");
  const int error =
      MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm->world);
  return error == MPI_SUCCESS ? SY_STATUS_OK : mpi_fail("MPI_Allreduce", error);
}

sy_status allgather_start(sy_comm* comm, const void* send, void* receive, uint64_t bytes_per_rank,
                          sy_comm_request* out) noexcept {
  if (!fits_int(bytes_per_rank)) return fail(SY_STATUS_OUT_OF_RANGE, "allgather over 2 GiB");
  MPI_Request request = MPI_REQUEST_NULL;
  const int count = static_cast<int>(bytes_per_rank);
  const int error =
      MPI_Iallgather(send, count, MPI_BYTE, receive, count, MPI_BYTE, comm->world, &request);
  if (error != MPI_SUCCESS) return mpi_fail("MPI_Iallgather", error);
  *out = comm->keep(request);
  return SY_STATUS_OK;
}

sy_status broadcast_start(sy_comm* comm, void* data, uint64_t bytes, uint32_t root,
                          sy_comm_request* out) noexcept {
  if (!fits_int(bytes)) return fail(SY_STATUS_OUT_OF_RANGE, "broadcast over 2 GiB");
  if (root >= comm->size) return fail(SY_STATUS_INVALID_ARGUMENT, "broadcast root out of range");
  MPI_Request request = MPI_REQUEST_NULL;
  const int error = MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, static_cast<int>(root),
                               comm->world, &request);
  if (error != MPI_SUCCESS) return mpi_fail("MPI_Ibcast", error);
  *out = comm->keep(request);
  return SY_STATUS_OK;
}

sy_status barrier_start(sy_comm* comm, sy_comm_request* out) noexcept {
  MPI_Request request = MPI_REQUEST_NULL;
  const int error = MPI_Ibarrier(comm->world, &request);
  if (error != MPI_SUCCESS) return mpi_fail("MPI_Ibarrier", error);
  *out = comm->keep(request);
  return SY_STATUS_OK;
}

sy_status test(sy_comm* comm, sy_comm_request id, int* done) noexcept {
  auto found = comm->requests.find(id);
  if (found == comm->requests.end()) {
    return fail(SY_STATUS_NOT_FOUND, "request " + std::to_string(id) + " is not pending");
  }
  int flag = 0;
  const int error = MPI_Test(&found->second, &flag, MPI_STATUS_IGNORE);
  if (error != MPI_SUCCESS) return mpi_fail("MPI_Test", error);
  if (flag != 0) comm->requests.erase(found);
  *done = flag;
  return SY_STATUS_OK;
}

void abort_job(sy_comm* comm, int exit_code) noexcept {
  MPI_Abort(comm != nullptr ? comm->world : MPI_COMM_WORLD, exit_code);
}

const sy_comm_descriptor kDescriptor = {
    SY_COMM_ABI_VERSION,
    sizeof(sy_comm_descriptor),
    "mpi",
    "0.1.0",
    "MPI collectives (Open MPI or MPICH) between the ranks an MPI launcher started",
    {
        last_error_message,
        create,
        destroy,
        rank_of,
        size_of,
        describe,
        allreduce_start,
        allgather_start,
        broadcast_start,
        barrier_start,
        test,
        abort_job,
        allreduce_blocking,
        {},
    },
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const sy_comm_descriptor*
switchyard_communicator_entry(uint32_t host_abi_version) {
  if (host_abi_version != SY_COMM_ABI_VERSION) return &kDescriptor;  // the host compares
  return &kDescriptor;
}
