// What every libFuzzer target (tests/fuzz/libfuzzer/<name>_fuzz.cpp, run by tools/fuzz) shares:
// the promise each input is held to, as the Catch2 fuzz tests (tests/fuzz/fuzz_support.h) hold
// their mutants to it. An input is loaded, or refused with a Status (an Error for ONNX) that names
// the file or source, is not INTERNAL (a loaded result that breaks an invariant: fuzz_checks.h) and
// is not longer than a few quoted lines. Anything else, an escaped exception included, prints one
// line starting "switchyard fuzz:" and traps, which libFuzzer reports as a crash and saves.
// Crashes, hangs and leaks are the sanitizers' and libFuzzer's to find.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "switchyard/status.h"

namespace switchyard::fuzz {

[[noreturn]] inline void fail(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "\nswitchyard fuzz: %s: %s\n", what.c_str(), detail.substr(0, 600).c_str());
  std::fflush(stderr);
  __builtin_trap();
}

// OK, or a refusal that names `source`; `max_chars` is the longest message allowed (the config
// loader lists up to 20 errors of a line each, so it allows more).
inline void check_outcome(const Status& status, const std::string& source,
                          size_t max_chars = 2000) {
  if (status.ok()) return;
  if (status.code() == StatusCode::kInternal) fail("INTERNAL", status.to_string());
  if (status.message().find(source) == std::string::npos) {
    fail("a refusal that does not name " + source, status.to_string());
  }
  if (status.message().size() > max_chars) {
    fail("a message of " + std::to_string(status.message().size()) + " characters",
         status.to_string());
  }
}

// Runs one input's work; an exception that escapes it is a finding (loaders return a Status, the
// ONNX target catches switchyard::Error itself).
template <typename Body>
void no_exception_escapes(Body&& body) {
  try {
    body();
  } catch (const std::exception& error) {
    fail("an exception escaped", error.what());
  } catch (...) {
    fail("an exception escaped", "not a std::exception");
  }
}

// A folder of this process's own, removed at exit: $SWITCHYARD_FUZZ_SCRATCH (tools/fuzz names one
// and removes it after a crash too), else one on tmpfs where there is one (no disk writes per
// input). Loaders that only read paths get the input through a file in it.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    if (const char* given = std::getenv("SWITCHYARD_FUZZ_SCRATCH"); given != nullptr && *given) {
      std::filesystem::create_directories(given);
      return std::filesystem::path(given);
    }
    std::filesystem::path base = "/dev/shm";
    if (::access(base.c_str(), W_OK) != 0) base = std::filesystem::temp_directory_path();
    std::filesystem::path path = base / ("switchyard-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    return path;
  }();
  static const bool registered = [] {
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return true;
  }();
  (void)registered;
  return dir;
}

// Writes the input to `name` in the scratch folder, a new file each time (rewriting one in place
// makes ext4 flush it on close when the folder is not on tmpfs).
inline std::filesystem::path write_scratch_file(const std::string& name, const uint8_t* data,
                                                size_t size) {
  const std::filesystem::path path = scratch_dir() / name;
  ::unlink(path.c_str());
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) fail("cannot write", path.string());
  if (size > 0 && std::fwrite(data, 1, size, file) != size) fail("cannot write", path.string());
  std::fclose(file);
  return path;
}

inline std::vector<uint8_t> to_vector(const uint8_t* data, size_t size) {
  return std::vector<uint8_t>(data, data + size);
}

}  // namespace switchyard::fuzz
