#include "runtime/plugin_files.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>

#include "switchyard/plugin.h"

namespace switchyard::detail {
namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a fifo";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device file";
  return "not a regular file";
}

// A path the system refuses by its length, in words, or "": over PATH_MAX as a whole, or a name
// in it (a part between slashes) over NAME_MAX. Asked before stat(), whose ENAMETOOLONG says
// neither which limit nor which name.
std::string length_problem(const std::filesystem::path& path) {
  const std::size_t length = path.native().size();
  if (length >= PATH_MAX) {
    return "the path is " + std::to_string(length) + " bytes long, over PATH_MAX (" +
           std::to_string(PATH_MAX) + " including its end)";
  }
  for (const auto& part : path) {
    const std::string& name = part.native();
    if (name.size() > NAME_MAX) {
      return "the name '" + name.substr(0, 40) + "..." + name.substr(name.size() - 20) +
             "' in the path is " + std::to_string(name.size()) + " bytes long, over NAME_MAX (" +
             std::to_string(NAME_MAX) + ")";
    }
  }
  return "";
}

// Why stat() of `path` failed, in words; `what` is "folder" or "file".
std::string stat_problem(const std::filesystem::path& path, int error, const std::string& what) {
  switch (error) {
    case ENOENT: {
      struct stat link {};
      if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
        std::error_code ignored;
        const auto target = std::filesystem::read_symlink(path, ignored);
        return "a symbolic link to '" + target.string() + "', which does not exist";
      }
      return "does not exist";
    }
    case ELOOP:
      return "a loop of symbolic links (" + errno_text(error) + ")";
    case ENAMETOOLONG: {
      const std::string length = length_problem(path);
      return !length.empty() ? length
                             : "a name in the path is longer than the system allows (" +
                                   errno_text(error) + ")";
    }
    case ENOTDIR:
      return "a part of the path before the " + what + " is not a folder";
    case EACCES:
      return "cannot be reached: " + errno_text(error);
    default:
      return "cannot be inspected: " + errno_text(error);
  }
}

}  // namespace

SearchFolder search_folder(const std::filesystem::path& folder,
                           std::vector<std::filesystem::path>& plugin_files) {
  SearchFolder result;
  result.path = folder;
  if (std::string problem = length_problem(folder); !problem.empty()) {
    result.reason = std::move(problem);
    return result;
  }
  struct stat info {};
  if (::stat(folder.c_str(), &info) != 0) {
    result.reason = stat_problem(folder, errno, "folder");
    return result;
  }
  if (!S_ISDIR(info.st_mode)) {
    result.reason = "not a folder (" + kind_of(info.st_mode) + ")";
    return result;
  }
  const std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(folder.c_str()), ::closedir);
  if (!dir) {
    result.reason = "cannot be read: " + errno_text(errno);
    return result;
  }
  std::vector<std::filesystem::path> found;
  errno = 0;
  while (const dirent* entry = ::readdir(dir.get())) {
    const std::filesystem::path path = folder / entry->d_name;
    if (!plugin_name_from_path(path).empty()) found.push_back(path);
    errno = 0;
  }
  if (errno != 0) {
    result.reason = "reading it failed: " + errno_text(errno);
    return result;
  }
  std::sort(found.begin(), found.end());
  result.searched = true;
  result.plugin_files = found.size();
  plugin_files.insert(plugin_files.end(), found.begin(), found.end());
  return result;
}

std::string plugin_file_problem(const std::filesystem::path& file) {
  // A folder within the limits can hold a file whose whole path is over PATH_MAX.
  if (std::string problem = length_problem(file); !problem.empty()) return problem;
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) return stat_problem(file, errno, "file");
  if (!S_ISREG(info.st_mode)) return kind_of(info.st_mode) + ", not a library";
  if (::access(file.c_str(), R_OK) != 0) return "cannot be read: " + errno_text(errno);
  return "";
}

}  // namespace switchyard::detail
