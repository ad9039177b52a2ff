// The file-system side of plugin discovery: whether a search folder can be searched, which plugin
// files it holds, and whether a plugin file is something dlopen could open at all. Each answer
// carries a reason in words, so that nothing on the search path is dropped without one.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "switchyard/registry.h"

namespace switchyard::detail {

// Inspects `folder` and lists its plugin files (libswitchyard-*.so, sorted). A folder that cannot
// be searched has searched == false and a reason: it does not exist, is a dangling symbolic link
// or a loop of them, is not a folder, its path is longer than PATH_MAX or a name in it longer than
// NAME_MAX (each said with the lengths), or it cannot be read.
SearchFolder search_folder(const std::filesystem::path& folder,
                           std::vector<std::filesystem::path>& plugin_files);

// Why `file` cannot be a loadable library, as a phrase to follow its path ("a loop of symbolic
// links (...)", "a folder, not a library", "cannot be read: ..."), or "" when dlopen should be
// asked. dlopen's own text for these cases reads like
// a missing dependency ("cannot open shared object file"), which sends users the wrong way.
std::string plugin_file_problem(const std::filesystem::path& file);

}  // namespace switchyard::detail
