// Communicator: the collectives that data-parallel training needs (allreduce, allgather,
// broadcast, barrier) between the processes of one job, each called a rank.
//
// A process that no launcher started has the single-process communicator (rank 0 of 1, every
// collective a no-op). A process that an MPI launcher started (mpirun, srun: OMPI_COMM_WORLD_SIZE,
// PMI_SIZE, ... are set) loads libswitchyard_comm-mpi.so at run time from the plugin search path,
// so neither the core nor the CLI links MPI; a later NCCL or Gloo communicator is another library
// with the same C ABI (communicator_abi.h).
//
// Collectives are started without blocking and polled; wait() gives up after timeout_s() and then
// stops every rank of the job (MPI_Abort) with a message naming the ranks that did not take part,
// so that a dead or hung rank never makes the others wait forever.
//
// Ownership: world_communicator() makes the process's one communicator on first use and keeps it
// (and the library it came from) until the process exits; callers share it.
//
// Threads: the communicator is used by one thread at a time (the training thread): the MPI library
// is initialised with MPI_THREAD_SERIALIZED. world_communicator() itself may be called from any
// thread.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "switchyard/status.h"

namespace switchyard {

// A started collective; pass it to test() or wait().
struct CollectiveRequest {
  uint64_t id = 0;  // 0: already complete (the single-process communicator's requests)
};

// Where a rank runs, exchanged once when the communicator is made: a rank that stops answering
// is named with its pid and host, and the ranks on this host are checked for having exited.
struct PeerInfo {
  int32_t pid = 0;
  std::string host;
};

class Communicator {
 public:
  virtual ~Communicator();

  // "single" or the library's name ("mpi").
  virtual std::string name() const = 0;
  // One line for doctor and devices: the library and its version ("Open MPI v4.1.4").
  virtual std::string description() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // data summed over every rank, in place. `data` is borrowed until the request completes.
  virtual Result<CollectiveRequest> start_allreduce_sum(std::span<float> data) = 0;
  // Every rank's `send` into `receive` (size() * send.size() bytes), in rank order.
  virtual Result<CollectiveRequest> start_allgather(std::span<const std::byte> send,
                                                    std::span<std::byte> receive) = 0;
  // root's `data` into every rank's.
  virtual Result<CollectiveRequest> start_broadcast(std::span<std::byte> data, int root) = 0;
  virtual Result<CollectiveRequest> start_barrier() = 0;
  // Drives progress; true once the request completed.
  virtual Result<bool> test(CollectiveRequest request) = 0;

  // Blocks until `request` completes. Past timeout_s(), prints a message that names `what` and
  // the ranks that did not take part, and stops the whole job (abort_job); it never returns then.
  Status wait(CollectiveRequest request, const std::string& what);

  // Blocking conveniences over start_* and wait(): the same deadline applies.
  Status allreduce_sum(std::span<float> data, const std::string& what);
  Status allreduce_average(std::span<float> data, const std::string& what);
  // Sums in rank order 0, 1, ... on every rank (over an allgather), so that the result is
  // bit-identical on every rank and from run to run whatever algorithm the library picks.
  Status allreduce_sum_ordered(std::span<float> data, const std::string& what);
  Status broadcast(std::span<std::byte> data, int root, const std::string& what);
  Status barrier(const std::string& what);
  // The library's own blocking allreduce (MPI_Allreduce) without a deadline, for benchmarks;
  // start_allreduce_sum + wait where the library has none.
  virtual Status allreduce_sum_blocking(std::span<float> data);

  double timeout_s() const { return timeout_s_; }
  void set_timeout_s(double seconds) { timeout_s_ = seconds; }
  const std::vector<PeerInfo>& peers() const { return peers_; }

  // Stops every rank of the job with `exit_code`. Does not return.
  [[noreturn]] virtual void abort_job(int exit_code);

 protected:
  // Exchanges pid and host with every rank (an allgather); called once by implementations.
  Status exchange_peer_info();
  std::vector<PeerInfo> peers_;

 private:
  // Which ranks look responsible for a collective that timed out, in words.
  std::string describe_unresponsive_peers() const;
  double timeout_s_ = 60;
};

// The variable that says an MPI launcher started this process ("OMPI_COMM_WORLD_SIZE", ...), or
// "" when none is set.
std::string launcher_variable();

// The process's communicator, made on the first call: the single-process one without a launcher
// (or with SWITCHYARD_COMMUNICATOR=single), else the library of SWITCHYARD_COMMUNICATOR (default
// "mpi") found on `search_path`. Under a launcher, a library that cannot be loaded is an error
// that says why (never a silent single-process run). Later calls return the same communicator
// (or the same error) whatever their argument.
Result<std::shared_ptr<Communicator>> world_communicator(
    const std::vector<std::filesystem::path>& search_path);

// The communicator world_communicator() made, or the single-process one when it was never
// called (or failed).
std::shared_ptr<Communicator> current_communicator();

// A communicator of one rank, for tests and single-process use.
std::shared_ptr<Communicator> single_process_communicator();

}  // namespace switchyard

#pragma GCC visibility pop
