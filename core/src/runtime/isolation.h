// Runs a piece of work in a forked child process so that a crash (a plugin whose constructor
// segfaults, a driver that raises SIGILL) becomes a reported reason instead of the end of the host.
//
// Only call this while the process is single-threaded (the CLI does, before any plugin starts
// threads): after fork, the child may only rely on locks that no other thread could have held.
#pragma once

#include <functional>
#include <string>

#include "switchyard/status.h"

namespace switchyard::detail {

// Returns the text `work` produced in the child, or an error naming the signal, exit code or
// timeout. The child's stdout and stderr are left alone so plugin diagnostics remain visible.
Result<std::string> run_isolated(const std::function<std::string()>& work, int timeout_ms);

// A line-oriented record format for passing results out of the child: "key=value" lines with
// backslash escapes for newlines and backslashes, records separated by a line "--".
std::string escape_field(const std::string& value);
std::string unescape_field(const std::string& value);

}  // namespace switchyard::detail
