// How much work each thread of a tests/threads case does.
#pragma once

#include <algorithm>
#include <cstdlib>

namespace switchyard::testing {

// SWITCHYARD_THREAD_CALLS / `per`, and at least `least`. The variable is CMake's: 1000, or 150
// under ThreadSanitizer, which slows every call about tenfold; unset (a run by hand) counts as
// 1000.
inline int thread_calls(int per, int least) {
  const char* text = std::getenv("SWITCHYARD_THREAD_CALLS");
  const int calls = text != nullptr ? std::atoi(text) : 1000;
  return std::max(least, calls / per);
}

}  // namespace switchyard::testing
