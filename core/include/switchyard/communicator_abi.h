/* switchyard communicator ABI: the C contract between the core and a communicator library (MPI
 * today; NCCL or Gloo later), loaded at run time like a backend plugin so that neither the core
 * nor the CLI links MPI.
 *
 * Rules (the same as plugin_abi.h):
 *  - One exported symbol, SY_COMM_ENTRY_SYMBOL, returns a static descriptor. The host checks
 *    abi_version and struct_size before touching anything else.
 *  - Every function returns an sy_status; the calling thread's message is read with
 *    last_error_message(). No C++ exception crosses the boundary.
 *  - Collectives are non-blocking: *_start returns a request that the host polls with test()
 *    until it completes. The host, not the library, owns the deadline, so a dead or hung peer
 *    never blocks a rank forever; abort() then stops every rank of the job.
 *  - Every call comes from one host thread at a time (MPI_THREAD_SERIALIZED is enough).
 *  - Ownership: create() makes the one communicator of the process; destroy() ends it (for MPI:
 *    MPI_Finalize). Buffers passed to *_start are borrowed until test() reports completion.
 */
#ifndef SWITCHYARD_COMMUNICATOR_ABI_H_
#define SWITCHYARD_COMMUNICATOR_ABI_H_

#include <stddef.h>
#include <stdint.h>

#include "switchyard/plugin_abi.h" /* sy_status */

#ifdef __cplusplus
extern "C" {
#endif

#define SY_COMM_ABI_VERSION 1u
#define SY_COMM_ENTRY_SYMBOL "switchyard_communicator_entry"

typedef struct sy_comm sy_comm; /* opaque, made by create() */
typedef uint64_t sy_comm_request;

typedef struct sy_comm_functions {
  /* The calling thread's message for the last failed call. */
  const char* (*last_error_message)(void);
  /* Joins the job the launcher started (MPI_Init_thread). */
  sy_status (*create)(sy_comm** out);
  /* Leaves it (MPI_Finalize); only after every request completed. */
  void (*destroy)(sy_comm* comm);
  uint32_t (*rank)(const sy_comm* comm);
  uint32_t (*size)(const sy_comm* comm);
  /* One line for doctor: the library and its version ("Open MPI v4.1.4"). */
  sy_status (*describe)(const sy_comm* comm, char* text, size_t capacity);
  /* data[0..count) summed over every rank, in place. */
  sy_status (*allreduce_f32_sum_start)(sy_comm* comm, float* data, uint64_t count,
                                       sy_comm_request* out);
  /* Every rank's `bytes_per_rank` bytes of `send` into `receive` (size * bytes_per_rank), in rank
   * order. */
  sy_status (*allgather_start)(sy_comm* comm, const void* send, void* receive,
                               uint64_t bytes_per_rank, sy_comm_request* out);
  /* root's data[0..bytes) into every rank's `data`. */
  sy_status (*broadcast_start)(sy_comm* comm, void* data, uint64_t bytes, uint32_t root,
                               sy_comm_request* out);
  sy_status (*barrier_start)(sy_comm* comm, sy_comm_request* out);
  /* Drives progress; *done = 1 once the request completed (it is then freed). */
  sy_status (*test)(sy_comm* comm, sy_comm_request request, int* done);
  /* Stops every rank of the job with `exit_code` (MPI_Abort). Does not return. */
  void (*abort)(sy_comm* comm, int exit_code);
  /* A blocking allreduce with the library's own fastest algorithm (MPI_Allreduce), for callers
   * that accept no deadline (benchmarks). Optional: NULL means the host polls the start slot. */
  sy_status (*allreduce_f32_sum_blocking)(sy_comm* comm, float* data, uint64_t count);
  void* reserved[7];
} sy_comm_functions;

typedef struct sy_comm_descriptor {
  uint32_t abi_version; /* SY_COMM_ABI_VERSION */
  uint32_t struct_size; /* sizeof(sy_comm_descriptor) */
  const char* name;     /* "mpi" */
  const char* version;
  const char* description;
  sy_comm_functions functions;
} sy_comm_descriptor;

typedef const sy_comm_descriptor* (*sy_comm_entry_fn)(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_COMMUNICATOR_ABI_H_ */
