// How a rank explains a collective that did not complete: which peers have exited or stopped
// answering, and what it was waiting for when the launcher ended the job. Private to the core.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "switchyard/communicator.h"

namespace switchyard::detail {

// What each rank sends the others once at start-up (fixed size: it crosses an allgather).
struct PeerRecord {
  int32_t pid = 0;
  char host[60] = {};
};

PeerRecord this_process_record();
PeerInfo to_peer_info(const PeerRecord& record);

// The collective this process is waiting for, for the termination report ("" when none).
void set_current_collective(const std::string& what);

// On SIGTERM (Open MPI's launcher sends it to the other ranks when one rank exits abnormally),
// writes one line naming this rank, what it was waiting for and which ranks on this host have
// exited, then exits with 128 + 15. Installed once the peers are known.
void install_termination_report(int rank, int size, const std::vector<PeerInfo>& peers);

// "rank 1 (pid 4242 on host a) has exited; rank 2 (...) is alive ..." for every rank but `self`.
std::string describe_peers(int self, const std::vector<PeerInfo>& peers);

// True when the process `pid` on this host has exited (gone, or a zombie not yet reaped).
bool process_has_exited(int32_t pid);

// output[i] = gathered[0 * n + i] + gathered[1 * n + i] + ..., added in rank order.
void sum_in_rank_order(std::span<const float> gathered, std::span<float> output);

}  // namespace switchyard::detail
