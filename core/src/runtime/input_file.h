// Reading the files a user names (data sets, checkpoints, weights), with messages that say what is
// wrong with the path, and quoting what such files hold without flooding the terminal.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "switchyard/status.h"

namespace switchyard::detail {

// OK when `path` is a regular file this process can read. Otherwise the status names `what`
// ("data file", "checkpoint", "weights") and the path and says what is wrong:
//   NOT_FOUND          "checkpoint runs/x.ckpt does not exist"
//   INVALID_ARGUMENT   "checkpoint runs/ is a directory, expected a file" (also a fifo, a socket,
//                      a device)
//   PERMISSION_DENIED  "checkpoint runs/x.ckpt is not readable: Permission denied"
// Never blocks, even on a fifo without a writer.
Status check_input_file(const std::filesystem::path& path, const std::string& what);

// For a file about to be written (replaced atomically): INVALID_ARGUMENT "<what> <path> is a
// directory, expected a file" (or a fifo, ...) when something other than a regular file is there,
// so that a run learns it before training rather than at its first checkpoint. A missing file is
// OK (it is created).
Status check_output_file(const std::filesystem::path& path, const std::string& what);

// The whole file, after the checks of check_input_file (on the opened file, so a path that changes
// in between cannot block the read). DATA_LOSS on a read error.
Result<std::string> read_input_text(const std::filesystem::path& path, const std::string& what);
Result<std::vector<uint8_t>> read_input_bytes(const std::filesystem::path& path,
                                              const std::string& what);

// How much of a file's text a message quotes.
constexpr size_t kQuoteLimit = 200;

// `text` with every byte a terminal would not simply print (control characters, DEL, bytes that
// are not part of valid UTF-8) written as \xNN, so that a damaged file's bytes quoted in a message
// cannot garble or drive the terminal. Valid UTF-8 (names in any script) is kept.
std::string printable_text(std::string_view text);

// printable_text of `text`, cut to `limit` bytes when longer:
//   abc   or   abcd... (cut to 200 of 20971520 bytes)
std::string printable_input(std::string_view text, size_t limit = kQuoteLimit);

// `text` in single quotes, made printable and cut to `limit` characters when longer:
//   'abc'   or   'abcd...' (cut to 200 of 20971520 characters)
std::string quote_input(std::string_view text, size_t limit = kQuoteLimit);

// How many bytes of a name's printable form (a column header, a node name) a message shows.
constexpr size_t kNameLimit = 40;

// A name from a file as messages show it: printable_text, cut after at most `limit` bytes of
// that with "..." (no count, unlike quote_input: a message may list many names). quote_name puts
// it in single quotes.
std::string name_for_message(std::string_view name, size_t limit = kNameLimit);
std::string quote_name(std::string_view name, size_t limit = kNameLimit);

}  // namespace switchyard::detail
