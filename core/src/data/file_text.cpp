// zlib is opened with dlopen rather than linked: the core library then has no build-time
// dependency on zlib's headers, and only reading a ".gz" file needs libz.so.1 at run time (it is
// present on every Debian/Ubuntu system as part of the base install).
#include "data/file_text.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstring>

#include "runtime/input_file.h"
#include "runtime/memory_budget.h"

namespace switchyard::detail {
namespace {

struct ZlibFunctions {
  using GzFile = void*;
  GzFile (*gzopen)(const char*, const char*) = nullptr;
  int (*gzread)(GzFile, void*, unsigned) = nullptr;
  int (*gzclose)(GzFile) = nullptr;
  const char* (*gzerror)(GzFile, int*) = nullptr;
  std::string load_error;
};

template <typename Fn>
bool resolve(void* library, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(library, name));
  return out != nullptr;
}

const ZlibFunctions& zlib() {
  static const ZlibFunctions functions = [] {
    ZlibFunctions f;
    void* library = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* text = dlerror();
      f.load_error = std::string("cannot open libz.so.1 (") + (text ? text : "unknown") + ")";
      return f;
    }
    if (!resolve(library, "gzopen", f.gzopen) || !resolve(library, "gzread", f.gzread) ||
        !resolve(library, "gzclose", f.gzclose) || !resolve(library, "gzerror", f.gzerror)) {
      f.load_error = "libz.so.1 lacks gzopen/gzread/gzclose/gzerror";
      f.gzopen = nullptr;
    }
    return f;  // the library stays loaded for the life of the process
  }();
  return functions;
}

Result<std::string> read_gzip_file(const std::filesystem::path& path) {
  const ZlibFunctions& z = zlib();
  if (z.gzopen == nullptr) {
    return unavailable("cannot decompress " + path.string() + ": " + z.load_error);
  }
  void* file = z.gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return not_found("cannot open " + path.string() + ": " + std::strerror(errno));
  }
  std::string text;
  char chunk[1 << 16];
  // A small file may decompress to more than the host holds (a "zip bomb"): refused by the
  // memory budget as it grows.
  const uint64_t budget = memory_budget().bytes;
  while (true) {
    const int count = z.gzread(file, chunk, sizeof(chunk));
    if (count < 0) {
      int code = 0;
      const std::string message = z.gzerror(file, &code);
      z.gzclose(file);
      return data_loss("cannot decompress " + path.string() + ": " + message);
    }
    if (count == 0) break;
    if (text.size() + static_cast<size_t>(count) > budget) {
      const Status refused =
          check_memory_budget(text.size() + static_cast<size_t>(count),
                              "its decompressed contents (so far)", "data file " + path.string());
      if (!refused.ok()) {
        z.gzclose(file);
        return refused;
      }
    }
    text.append(chunk, static_cast<size_t>(count));
  }
  int code = 0;
  const std::string message = z.gzerror(file, &code);
  z.gzclose(file);
  if (code < 0) return data_loss("cannot decompress " + path.string() + ": " + message);
  return text;
}

}  // namespace

Result<std::string> read_text_file(const std::filesystem::path& path) {
  if (path.extension() != ".gz") return read_input_text(path, "data file");
  SY_RETURN_IF_ERROR(check_input_file(path, "data file"));
  return read_gzip_file(path);
}

}  // namespace switchyard::detail
