// How much work each thread of a tests/threads case does, and running it on many threads.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace switchyard::testing {

// SWITCHYARD_THREAD_CALLS / `per`, and at least `least`. The variable is CMake's: 1000, or 150
// under ThreadSanitizer, which slows every call about tenfold; unset (a run by hand) counts as
// 1000.
inline int thread_calls(int per, int least) {
  const char* text = std::getenv("SWITCHYARD_THREAD_CALLS");
  const int calls = text != nullptr ? std::atoi(text) : 1000;
  return std::max(least, calls / per);
}

// Runs `body(t)` on `threads` threads at once, t = 0 .. threads - 1; returns what the bodies
// reported (a non-empty string: what went wrong) and what they threw, "thread t: ...".
inline std::vector<std::string> problems_on_threads(
    int threads, const std::function<std::string(int thread)>& body) {
  std::vector<std::string> problems(static_cast<size_t>(threads));
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      try {
        problems[static_cast<size_t>(t)] = body(t);
      } catch (const std::exception& e) {
        problems[static_cast<size_t>(t)] = "thread " + std::to_string(t) + ": " + e.what();
      }
    });
  }
  for (std::thread& thread : running) thread.join();
  std::vector<std::string> found;
  for (const std::string& p : problems) {
    if (!p.empty()) found.push_back(p);
  }
  return found;
}

}  // namespace switchyard::testing
