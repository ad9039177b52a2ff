// The Communicator's deadline and failure report, its blocking helpers, and the single-process
// communicator.
#include "switchyard/communicator.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "distributed/failure_report.h"

namespace switchyard {

Communicator::~Communicator() = default;

Status Communicator::wait(CollectiveRequest request, const std::string& what) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(timeout_s_);
  detail::set_current_collective(what);
  int64_t polls = 0;
  while (true) {
    const Result<bool> done = test(request);
    // A library that reports a failed peer (instead of waiting) gets the same account of the
    // other ranks as a timeout.
    if (!done.ok()) {
      return done.status().with_context(what + " failed (" + describe_unresponsive_peers() + ")");
    }
    if (*done) break;
    // Spin briefly (a collective between ranks of one machine completes in microseconds), then
    // yield the core: on an oversubscribed machine the peer needs it to make progress.
    if (++polls > 1000) std::this_thread::yield();
    if ((polls & 1023) == 0 && std::chrono::steady_clock::now() > deadline) {
      std::ostringstream text;
      text << "switchyard: error: rank " << rank() << " of " << size() << ": " << what
           << " did not complete within " << timeout_s_
           << " s (distributed.timeout_s): " << describe_unresponsive_peers()
           << ". Stopping every rank (the last checkpoint is left as it was).\n";
      // One write, so that the launcher's own messages cannot land inside the line.
      const std::string line = text.str();
      const ssize_t written = ::write(STDERR_FILENO, line.data(), line.size());
      (void)written;
      abort_job(1);
    }
  }
  detail::set_current_collective("");
  return ok_status();
}

Status Communicator::allreduce_sum(std::span<float> data, const std::string& what) {
  SY_ASSIGN_OR_RETURN(const CollectiveRequest request, start_allreduce_sum(data));
  return wait(request, what);
}

Status Communicator::allreduce_average(std::span<float> data, const std::string& what) {
  SY_RETURN_IF_ERROR(allreduce_sum(data, what));
  const float scale = 1.0f / static_cast<float>(size());
  for (float& value : data) value *= scale;
  return ok_status();
}

Status Communicator::allreduce_sum_ordered(std::span<float> data, const std::string& what) {
  std::vector<float> gathered(data.size() * static_cast<size_t>(size()));
  SY_ASSIGN_OR_RETURN(const CollectiveRequest request,
                      start_allgather(std::as_bytes(data), std::as_writable_bytes(std::span(
                                                               gathered.data(), gathered.size()))));
  SY_RETURN_IF_ERROR(wait(request, what));
  detail::sum_in_rank_order(gathered, data);
  return ok_status();
}

Status Communicator::broadcast(std::span<std::byte> data, int root, const std::string& what) {
  SY_ASSIGN_OR_RETURN(const CollectiveRequest request, start_broadcast(data, root));
  return wait(request, what);
}

Status Communicator::barrier(const std::string& what) {
  SY_ASSIGN_OR_RETURN(const CollectiveRequest request, start_barrier());
  return wait(request, what);
}

Status Communicator::allreduce_sum_blocking(std::span<float> data) {
  return allreduce_sum(data, "allreduce");
}

void Communicator::abort_job(int exit_code) {
  std::_Exit(exit_code);
}

Status Communicator::exchange_peer_info() {
  detail::PeerRecord mine = detail::this_process_record();
  std::vector<detail::PeerRecord> all(static_cast<size_t>(size()));
  SY_ASSIGN_OR_RETURN(const CollectiveRequest request,
                      start_allgather(std::as_bytes(std::span(&mine, 1)),
                                      std::as_writable_bytes(std::span(all.data(), all.size()))));
  SY_RETURN_IF_ERROR(wait(request, "the exchange of pids and hosts at start-up"));
  peers_.clear();
  for (const detail::PeerRecord& record : all) {
    peers_.push_back(
        {record.pid, std::string(record.host, strnlen(record.host, sizeof record.host))});
  }
  detail::install_termination_report(rank(), size(), peers_);
  return ok_status();
}

std::string Communicator::describe_unresponsive_peers() const {
  return detail::describe_peers(rank(), peers_);
}

namespace {

// Rank 0 of 1: every collective completes at once and leaves the data as it is.
class SingleProcessCommunicator final : public Communicator {
 public:
  SingleProcessCommunicator() {
    peers_.push_back(detail::to_peer_info(detail::this_process_record()));
  }
  std::string name() const override { return "single"; }
  std::string description() const override { return "one process, no launcher"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Result<CollectiveRequest> start_allreduce_sum(std::span<float>) override {
    return CollectiveRequest{};
  }
  Result<CollectiveRequest> start_allgather(std::span<const std::byte> send,
                                            std::span<std::byte> receive) override {
    if (receive.size() < send.size())
      return invalid_argument("allgather: receive buffer too small");
    std::memcpy(receive.data(), send.data(), send.size());
    return CollectiveRequest{};
  }
  Result<CollectiveRequest> start_broadcast(std::span<std::byte>, int root) override {
    if (root != 0) return invalid_argument("broadcast from rank " + std::to_string(root) + " of 1");
    return CollectiveRequest{};
  }
  Result<CollectiveRequest> start_barrier() override { return CollectiveRequest{}; }
  Result<bool> test(CollectiveRequest) override { return true; }
};

}  // namespace

std::shared_ptr<Communicator> single_process_communicator() {
  return std::make_shared<SingleProcessCommunicator>();
}

}  // namespace switchyard
