#include "distributed/failure_report.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace switchyard::detail {
namespace {

// State the signal handler reads; written before the handler is installed, except the current
// collective (a fixed buffer, possibly read mid-update: the report is best effort).
constexpr int kMaxReportedPeers = 256;
int g_rank = 0;
int g_size = 1;
int g_peer_count = 0;
int32_t g_local_pids[kMaxReportedPeers] = {};  // 0 for ranks on other hosts and for this one
char g_current[160] = {};

// Appends text to a fixed buffer; async-signal-safe.
struct SignalText {
  char buffer[2048] = {};
  size_t length = 0;
  void add(const char* text) {
    while (*text != '\0' && length + 1 < sizeof buffer) buffer[length++] = *text++;
  }
  void add(int64_t value) {
    char digits[24];
    int n = 0;
    const bool negative = value < 0;
    uint64_t v = negative ? static_cast<uint64_t>(-value) : static_cast<uint64_t>(value);
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0 && n < 22);
    if (negative) add("-");
    while (n > 0 && length + 1 < sizeof buffer) buffer[length++] = digits[--n];
  }
};

// /proc/<pid>/stat's state letter, read with open and read only (async-signal-safe).
char process_state(int32_t pid) {
  SignalText path;
  path.add("/proc/");
  path.add(pid);
  path.add("/stat");
  const int fd = open(path.buffer, O_RDONLY);
  if (fd < 0) return '\0';
  char stat[256];
  const ssize_t n = read(fd, stat, sizeof stat - 1);
  close(fd);
  if (n <= 0) return '\0';
  stat[n] = '\0';
  const char* paren = strrchr(stat, ')');  // the command name may hold spaces and parentheses
  return paren != nullptr && paren[1] == ' ' ? paren[2] : '\0';
}

void on_sigterm(int) {
  SignalText text;
  text.add("switchyard: error: rank ");
  text.add(g_rank);
  text.add(" of ");
  text.add(g_size);
  text.add(": stopped by SIGTERM from the launcher");
  if (g_current[0] != '\0') {
    text.add(" while waiting for ");
    text.add(g_current);
  }
  int exited = 0;
  for (int r = 0; r < g_peer_count; ++r) {
    if (g_local_pids[r] == 0 || !process_has_exited(g_local_pids[r])) continue;
    text.add(exited++ == 0 ? "; rank " : ", rank ");
    text.add(r);
    text.add(" (pid ");
    text.add(g_local_pids[r]);
    text.add(") has exited");
  }
  if (exited == 0) text.add("; no other rank on this host has exited");
  text.add("\n");
  const ssize_t ignored = write(STDERR_FILENO, text.buffer, text.length);
  (void)ignored;
  _exit(128 + SIGTERM);
}

}  // namespace

bool process_has_exited(int32_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  const char state = process_state(pid);
  return state == '\0' || state == 'Z' || state == 'X';
}

PeerRecord this_process_record() {
  PeerRecord record;
  record.pid = static_cast<int32_t>(getpid());
  if (gethostname(record.host, sizeof record.host - 1) != 0) std::strcpy(record.host, "?");
  return record;
}

PeerInfo to_peer_info(const PeerRecord& record) {
  return {record.pid, std::string(record.host, strnlen(record.host, sizeof record.host))};
}

void set_current_collective(const std::string& what) {
  const size_t n = std::min(what.size(), sizeof g_current - 1);
  std::memcpy(g_current, what.data(), n);
  g_current[n] = '\0';
}

void install_termination_report(int rank, int size, const std::vector<PeerInfo>& peers) {
  g_rank = rank;
  g_size = size;
  g_peer_count = std::min(static_cast<int>(peers.size()), kMaxReportedPeers);
  const std::string& my_host = peers[static_cast<size_t>(rank)].host;
  for (int r = 0; r < g_peer_count; ++r) {
    const PeerInfo& peer = peers[static_cast<size_t>(r)];
    g_local_pids[r] = r != rank && peer.host == my_host ? peer.pid : 0;
  }
  struct sigaction action = {};
  action.sa_handler = on_sigterm;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
}

std::string describe_peers(int self, const std::vector<PeerInfo>& peers) {
  if (peers.size() <= 1) return "no other rank";
  const std::string& my_host = peers[static_cast<size_t>(self)].host;
  std::string exited;
  std::string alive;
  std::string remote;
  for (size_t r = 0; r < peers.size(); ++r) {
    if (static_cast<int>(r) == self) continue;
    const PeerInfo& peer = peers[r];
    const std::string name = "rank " + std::to_string(r) + " (pid " + std::to_string(peer.pid) +
                             " on " + peer.host + ")";
    std::string& list = peer.host != my_host           ? remote
                        : process_has_exited(peer.pid) ? exited
                                                       : alive;
    list += (list.empty() ? "" : ", ") + name;
  }
  std::string text;
  if (!exited.empty()) text += exited + " has exited";
  if (!alive.empty()) {
    text += (text.empty() ? "" : "; ") + alive +
            " is alive but did not complete it (hung, or waiting elsewhere)";
  }
  if (!remote.empty()) {
    text += (text.empty() ? "" : "; ") + remote + " runs on another host: not checked from here";
  }
  return text;
}

void sum_in_rank_order(std::span<const float> gathered, std::span<float> output) {
  const size_t n = output.size();
  const size_t ranks = n == 0 ? 0 : gathered.size() / n;
  for (size_t i = 0; i < n; ++i) {
    float total = gathered[i];
    for (size_t r = 1; r < ranks; ++r) total += gathered[r * n + i];
    output[i] = total;
  }
}

}  // namespace switchyard::detail
