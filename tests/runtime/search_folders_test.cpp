// Every entry of the plugin search path is either searched or kept with the reason it was not, and
// a plugin file that dlopen could not even open is named for what it is (issue 17, item 5).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>

#include "backend_support.h"
#include "switchyard/inventory.h"
#include "switchyard/registry.h"
#include "test_support.h"
#include "train/train_test_support.h"

using namespace switchyard;
using switchyard::testing::TempDir;

namespace {

const SearchFolder& folder_at(const Registry& registry, const std::filesystem::path& path) {
  for (const auto& folder : registry.search_folders()) {
    if (folder.path == path) return folder;
  }
  FAIL("no search folder " << path);
  throw std::logic_error("unreachable");
}

const PluginRecord& plugin_at(const Registry& registry, const std::filesystem::path& path) {
  for (const auto& record : registry.plugins()) {
    if (record.path == path) return record;
  }
  FAIL("no plugin record for " << path);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("each search folder that cannot be searched is kept with its reason", "[loader]") {
  TempDir temp;
  const std::filesystem::path missing = temp / "missing";
  const std::filesystem::path loop = temp / "loop";
  std::filesystem::create_symlink(loop, loop);
  const std::filesystem::path dangling = temp / "dangling";
  std::filesystem::create_symlink(temp / "gone", dangling);
  const std::filesystem::path file = temp / "file";
  std::ofstream(file) << "not a folder";
  std::filesystem::path too_long = temp.path();
  while (too_long.native().size() < PATH_MAX) too_long /= std::string(200, 'a');
  const std::filesystem::path good = temp / "good";
  std::filesystem::create_directory(good);

  const Registry registry = Registry::discover({missing, loop, dangling, file, too_long, good});
  REQUIRE(registry.search_folders().size() == 6);
  CHECK(folder_at(registry, missing).reason == "does not exist");
  CHECK(folder_at(registry, loop).reason ==
        "a loop of symbolic links (Too many levels of symbolic links)");
  CHECK(folder_at(registry, dangling).reason ==
        "a symbolic link to '" + (temp / "gone").string() + "', which does not exist");
  CHECK(folder_at(registry, file).reason == "not a folder (a regular file)");
  CHECK(folder_at(registry, too_long).reason ==
        "the path is " + std::to_string(too_long.native().size()) + " bytes long, over PATH_MAX (" +
            std::to_string(PATH_MAX) + " including its end)");
  for (const auto& folder : registry.search_folders()) {
    CHECK(folder.searched == (folder.path == good));
  }
  CHECK(folder_at(registry, good).reason.empty());
  CHECK(folder_at(registry, good).plugin_files == 0);
}

TEST_CASE("a folder this user cannot read is named with the system's reason", "[loader]") {
  if (::geteuid() == 0) {
    switchyard::testing::skip_test(
        "running as root, which reads any folder whatever its permissions");
    return;
  }
  TempDir temp;
  const std::filesystem::path locked = temp / "locked";
  std::filesystem::create_directory(locked);
  std::filesystem::permissions(locked, std::filesystem::perms::none);
  const Registry registry = Registry::discover({locked});
  std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
  CHECK(folder_at(registry, locked).reason == "cannot be read: Permission denied");
}

TEST_CASE("a plugin file that is a link loop, a dangling link or a folder says so", "[loader]") {
  TempDir temp;
  const std::filesystem::path self = temp / "libswitchyard-self.so";
  std::filesystem::create_symlink(self.filename(), self);
  const std::filesystem::path dangling = temp / "libswitchyard-dangling.so";
  std::filesystem::create_symlink("nothing.so", dangling);
  const std::filesystem::path folder = temp / "libswitchyard-folder.so";
  std::filesystem::create_directory(folder);

  const Registry registry = Registry::discover({temp.path()});
  CHECK(folder_at(registry, temp.path()).plugin_files == 3);
  for (const auto& record : registry.plugins()) CHECK(record.state == PluginState::kRejected);
  // dlopen's own text for a link to itself ("cannot open shared object file") reads like a
  // missing dependency; the reason says what the file is instead.
  CHECK(plugin_at(registry, self).reason ==
        "'" + self.string() + "': a loop of symbolic links (Too many levels of symbolic links)");
  CHECK(plugin_at(registry, dangling).reason ==
        "'" + dangling.string() + "': a symbolic link to 'nothing.so', which does not exist");
  CHECK(plugin_at(registry, folder).reason == "'" + folder.string() + "': a folder, not a library");
}

TEST_CASE("a name over NAME_MAX, or a plugin file whose path is over PATH_MAX, says which limit",
          "[loader]") {
  TempDir temp;
  // One name of 300 bytes: stat() says only ENAMETOOLONG ("File name too long").
  const std::filesystem::path long_name = temp / std::string(300, 'n');
  // A folder within PATH_MAX whose plugin file's path is over it.
  std::filesystem::path deep = temp.path();
  while (deep.native().size() + 201 < PATH_MAX - 40) deep /= std::string(200, 'd');
  deep /= std::string(PATH_MAX - 10 - deep.native().size() - 1, 'e');
  REQUIRE(deep.native().size() == PATH_MAX - 10);
  std::filesystem::create_directories(deep);
  const std::string file_name = "libswitchyard-deep.so";
  const int folder_fd = ::open(deep.c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(folder_fd >= 0);
  const int file_fd = ::openat(folder_fd, file_name.c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(file_fd >= 0);
  ::close(file_fd);
  const std::filesystem::path file = deep / file_name;

  const Registry registry = Registry::discover({long_name, deep});
  // The file goes before the check: a path over PATH_MAX is more than remove_all takes.
  ::unlinkat(folder_fd, file_name.c_str(), 0);
  ::close(folder_fd);
  CHECK(folder_at(registry, long_name).reason ==
        "the name '" + std::string(40, 'n') + "..." + std::string(20, 'n') +
            "' in the path is 300 bytes long, over NAME_MAX (" + std::to_string(NAME_MAX) + ")");
  REQUIRE(folder_at(registry, deep).plugin_files == 1);
  const PluginRecord& record = plugin_at(registry, file);
  CHECK(record.state == PluginState::kRejected);
  CHECK(record.reason == "'" + shown_path(file) + "': the path is " +
                             std::to_string(file.native().size()) + " bytes long, over PATH_MAX (" +
                             std::to_string(PATH_MAX) + " including its end)");
  CHECK(record.reason.size() < 600);
  CHECK(doctor_hint(record.reason) == "use a shorter path (a symbolic link to the folder will do)");
  CHECK(doctor_hint(folder_at(registry, long_name).reason) ==
        "use a shorter name for that folder or file");
}
