// Finding, loading and wrapping a communicator library (communicator_abi.h), and the process's
// one communicator.
#include <dlfcn.h>

#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <mutex>

#include "distributed/failure_report.h"
#include "switchyard/communicator.h"
#include "switchyard/communicator_abi.h"

namespace switchyard {
namespace {

std::string bounded(const char* text, size_t max_length) {
  if (text == nullptr) return {};
  size_t length = 0;
  while (length < max_length && text[length] != '\0') ++length;
  return {text, length};
}

// A communicator whose collectives are a loaded library's. Keeps the library loaded.
class LibraryCommunicator final : public Communicator {
 public:
  LibraryCommunicator(boost::dll::shared_library library, const sy_comm_descriptor* descriptor)
      : library_(std::move(library)), descriptor_(descriptor), f_(descriptor->functions) {}
  ~LibraryCommunicator() override {
    if (comm_ != nullptr) f_.destroy(comm_);
  }

  Status open() {
    SY_RETURN_IF_ERROR(check(f_.create(&comm_), "create"));
    return exchange_peer_info();
  }

  std::string name() const override { return bounded(descriptor_->name, 64); }
  std::string description() const override {
    char text[256] = {};
    if (f_.describe(comm_, text, sizeof text) != SY_STATUS_OK) return name();
    return bounded(text, sizeof text);
  }
  int rank() const override { return static_cast<int>(f_.rank(comm_)); }
  int size() const override { return static_cast<int>(f_.size(comm_)); }

  Result<CollectiveRequest> start_allreduce_sum(std::span<float> data) override {
    CollectiveRequest request;
    SY_RETURN_IF_ERROR(check(
        f_.allreduce_f32_sum_start(comm_, data.data(), data.size(), &request.id), "allreduce"));
    return request;
  }
  Result<CollectiveRequest> start_allgather(std::span<const std::byte> send,
                                            std::span<std::byte> receive) override {
    if (receive.size() < send.size() * static_cast<size_t>(size())) {
      return invalid_argument(
          "allgather: the receive buffer holds " + std::to_string(receive.size()) + " bytes, " +
          std::to_string(send.size() * static_cast<size_t>(size())) + " are needed");
    }
    CollectiveRequest request;
    SY_RETURN_IF_ERROR(
        check(f_.allgather_start(comm_, send.data(), receive.data(), send.size(), &request.id),
              "allgather"));
    return request;
  }
  Result<CollectiveRequest> start_broadcast(std::span<std::byte> data, int root) override {
    CollectiveRequest request;
    SY_RETURN_IF_ERROR(check(f_.broadcast_start(comm_, data.data(), data.size(),
                                                static_cast<uint32_t>(root), &request.id),
                             "broadcast"));
    return request;
  }
  Result<CollectiveRequest> start_barrier() override {
    CollectiveRequest request;
    SY_RETURN_IF_ERROR(check(f_.barrier_start(comm_, &request.id), "barrier"));
    return request;
  }
  Result<bool> test(CollectiveRequest request) override {
    if (request.id == 0) return true;
    int done = 0;
    SY_RETURN_IF_ERROR(check(f_.test(comm_, request.id, &done), "test"));
    return done != 0;
  }
  Status allreduce_sum_blocking(std::span<float> data) override {
    if (f_.allreduce_f32_sum_blocking == nullptr) return Communicator::allreduce_sum_blocking(data);
    return check(f_.allreduce_f32_sum_blocking(comm_, data.data(), data.size()), "allreduce");
  }
  [[noreturn]] void abort_job(int exit_code) override {
    f_.abort(comm_, exit_code);
    std::_Exit(exit_code);  // abort() must not return; should a library's do so, stop anyway
  }

 private:
  Status check(sy_status code, const char* what) const {
    if (code == SY_STATUS_OK) return ok_status();
    std::string text = bounded(f_.last_error_message(), 4096);
    const int raw = static_cast<int>(code);
    const StatusCode status_code =
        raw >= 0 && raw <= 15 ? static_cast<StatusCode>(raw) : StatusCode::kUnknown;
    return Status(status_code, name() + " communicator: " + what + ": " +
                                   (text.empty() ? "(no message)" : text));
  }

  boost::dll::shared_library library_;
  const sy_comm_descriptor* descriptor_;
  const sy_comm_functions& f_;
  sy_comm* comm_ = nullptr;
};

Status check_descriptor(const std::filesystem::path& path, const sy_comm_descriptor* d) {
  const std::string file = "'" + path.string() + "'";
  if (d == nullptr) return failed_precondition(file + " returned no descriptor");
  if (d->abi_version != SY_COMM_ABI_VERSION) {
    return failed_precondition(file + " was built for communicator ABI " +
                               std::to_string(d->abi_version) + " but this host speaks " +
                               std::to_string(SY_COMM_ABI_VERSION) + "; rebuild it");
  }
  if (d->struct_size != sizeof(sy_comm_descriptor)) {
    return failed_precondition(file + " has a descriptor of " + std::to_string(d->struct_size) +
                               " bytes, expected " + std::to_string(sizeof(sy_comm_descriptor)));
  }
  const sy_comm_functions& f = d->functions;
  const void* required[] = {reinterpret_cast<const void*>(f.last_error_message),
                            reinterpret_cast<const void*>(f.create),
                            reinterpret_cast<const void*>(f.destroy),
                            reinterpret_cast<const void*>(f.rank),
                            reinterpret_cast<const void*>(f.size),
                            reinterpret_cast<const void*>(f.describe),
                            reinterpret_cast<const void*>(f.allreduce_f32_sum_start),
                            reinterpret_cast<const void*>(f.allgather_start),
                            reinterpret_cast<const void*>(f.broadcast_start),
                            reinterpret_cast<const void*>(f.barrier_start),
                            reinterpret_cast<const void*>(f.test),
                            reinterpret_cast<const void*>(f.abort)};
  for (const void* slot : required) {
    if (slot == nullptr) return failed_precondition(file + " lacks a required function");
  }
  return ok_status();
}

std::string dlopen_text(const std::filesystem::path& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) {
    dlclose(handle);
    return "it loads with dlopen but Boost.DLL refused it";
  }
  const char* text = dlerror();
  return text != nullptr ? text : "dlopen failed without a message";
}

Result<std::shared_ptr<Communicator>> load_library_communicator(
    const std::string& name, const std::vector<std::filesystem::path>& search_path) {
  const std::string file_name = "libswitchyard_comm-" + name + ".so";
  std::string searched;
  for (const auto& folder : search_path) {
    const std::filesystem::path path = folder / file_name;
    std::error_code error;
    if (!std::filesystem::exists(path, error)) {
      searched += (searched.empty() ? "" : ", ") + folder.string();
      continue;
    }
    boost::dll::shared_library library;
    boost::dll::fs::error_code load_error;
    // RTLD_GLOBAL: Open MPI loads its own components with dlopen, and they resolve symbols of
    // libmpi that a local load would hide (mpi4py loads it the same way). RTLD_NODELETE: MPI
    // leaves threads behind that must not find their code unmapped at exit.
    const auto mode = boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_global |
                      static_cast<boost::dll::load_mode::type>(RTLD_NODELETE);
    library.load(path, mode, load_error);
    if (load_error) return unavailable("cannot load '" + path.string() + "': " + dlopen_text(path));
    if (!library.has(SY_COMM_ENTRY_SYMBOL)) {
      return failed_precondition("'" + path.string() + "' does not export " SY_COMM_ENTRY_SYMBOL);
    }
    auto entry = library.get<const sy_comm_descriptor*(uint32_t)>(SY_COMM_ENTRY_SYMBOL);
    const sy_comm_descriptor* descriptor = entry(SY_COMM_ABI_VERSION);
    SY_RETURN_IF_ERROR(check_descriptor(path, descriptor));
    auto communicator = std::make_shared<LibraryCommunicator>(std::move(library), descriptor);
    SY_RETURN_IF_ERROR(communicator->open().with_context("'" + path.string() + "'"));
    return std::shared_ptr<Communicator>(std::move(communicator));
  }
  return not_found(file_name + " is not in any plugin folder (searched: " +
                   (searched.empty() ? std::string("none") : searched) +
                   "); it is built only where MPI was found at configure time (Debian: "
                   "openmpi-bin libopenmpi-dev)");
}

std::mutex g_world_mutex;
bool g_world_made = false;
Result<std::shared_ptr<Communicator>> g_world = std::shared_ptr<Communicator>();

}  // namespace

std::string launcher_variable() {
  // Open MPI, PMI-1/2 (MPICH's Hydra, Slurm), PMIx, MPICH's own.
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK", "MPI_LOCALNRANKS"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && value[0] != '\0') return name;
  }
  return "";
}

Result<std::shared_ptr<Communicator>> world_communicator(
    const std::vector<std::filesystem::path>& search_path) {
  const std::lock_guard<std::mutex> lock(g_world_mutex);
  if (g_world_made) return g_world;
  g_world_made = true;
  const char* chosen = std::getenv("SWITCHYARD_COMMUNICATOR");
  const std::string name = chosen != nullptr && chosen[0] != '\0' ? chosen : "mpi";
  const std::string launcher = launcher_variable();
  if (name == "single" || (launcher.empty() && chosen == nullptr)) {
    g_world = single_process_communicator();
    return g_world;
  }
  auto loaded = load_library_communicator(name, search_path);
  if (!loaded.ok()) {
    const std::string why = launcher.empty()
                                ? "SWITCHYARD_COMMUNICATOR=" + name
                                : "a launcher started this process (" + launcher + " is set)";
    g_world = loaded.status().with_context(
        why + ", so it must join the job, but the '" + name +
        "' communicator cannot be opened (SWITCHYARD_COMMUNICATOR=single runs alone)");
    return g_world;
  }
  g_world = std::move(loaded).value();
  return g_world;
}

std::shared_ptr<Communicator> current_communicator() {
  const std::lock_guard<std::mutex> lock(g_world_mutex);
  if (g_world.ok() && *g_world != nullptr) return *g_world;
  static const std::shared_ptr<Communicator> single = single_process_communicator();
  return single;
}

}  // namespace switchyard
