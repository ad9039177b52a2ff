// switchyard bench allreduce: the communicator's allreduce (f32 sum in place), timed per size
// as nccl-tests do: the slowest rank's time, algorithm bandwidth bytes / time and bus bandwidth
// algbw * 2 (n - 1) / n. Two paths: the non-blocking start + wait that training uses (with its
// deadline), and the library's own blocking call (MPI_Allreduce). tools/bench/bench_mpi_allreduce
// is the peer that calls MPI directly.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "bench_ops.h"
#include "cli_common.h"
#include "support/json_io.h"
#include "switchyard/communicator.h"

namespace switchyard::cli {
namespace {

Result<std::vector<int64_t>> parse_sizes(const std::string& text) {
  std::vector<int64_t> sizes;
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    size_t used = 0;
    int64_t value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      return invalid_argument("--bytes: '" + item + "' is not a size such as 4096, 64K or 64M");
    }
    const std::string unit = item.substr(used);
    if (unit == "K" || unit == "k") value <<= 10;
    if (unit == "M" || unit == "m") value <<= 20;
    if (unit == "G" || unit == "g") value <<= 30;
    if (value < 4 || value % 4 != 0 || (!unit.empty() && unit.find_first_of("KkMmGg") != 0)) {
      return invalid_argument("--bytes: '" + item + "' must be a multiple of 4 bytes (f32)");
    }
    sizes.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

// Median over repetitions of the slowest rank's seconds for one call of `body`.
Result<double> time_collective(Communicator& comm, int repetitions,
                               const std::function<Status()>& body) {
  std::vector<double> seconds;
  for (int r = -3; r < repetitions; ++r) {  // three warm-up calls
    SY_RETURN_IF_ERROR(comm.barrier("the benchmark's barrier"));
    const auto start = std::chrono::steady_clock::now();
    SY_RETURN_IF_ERROR(body());
    std::vector<float> elapsed = {
        std::chrono::duration<float>(std::chrono::steady_clock::now() - start).count()};
    // The slowest rank's time is the collective's: the max via a gather of every rank's.
    std::vector<float> all(static_cast<size_t>(comm.size()));
    SY_ASSIGN_OR_RETURN(const CollectiveRequest request,
                        comm.start_allgather(std::as_bytes(std::span(elapsed)),
                                             std::as_writable_bytes(std::span(all))));
    SY_RETURN_IF_ERROR(comm.wait(request, "the benchmark's timing exchange"));
    if (r >= 0) seconds.push_back(*std::max_element(all.begin(), all.end()));
  }
  return median_of(seconds);
}

}  // namespace

int allreduce_bench(const Args& args) {
  po::options_description options("options");
  options.add_options()("bytes", po::value<std::string>()->default_value("4K,64K,1M,16M,64M"),
                        "sizes, comma-separated (K, M, G: powers of 1024)");
  add_bench_options(
      options,
      {.unit = "calls per size", .warmup = -1, .config = "YAML file (plugin_paths)", .set = false});
  po::variables_map values;
  const std::string usage =
      "usage: mpirun -np N switchyard bench allreduce [--bytes 1M,64M] [--repetitions 20]";
  if (auto exit = parse_args(args, usage, options, values)) return *exit;
  try {
    const Config config = value_or_throw(load_config(values));
    const std::vector<int64_t> sizes =
        value_or_throw(parse_sizes(values["bytes"].as<std::string>()));
    const int repetitions = std::max(1, values["repetitions"].as<int>());
    const std::shared_ptr<Communicator> comm =
        value_or_throw(world_communicator(plugin_search_path(config.runtime().plugin_paths)));
    const bool report = comm->rank() == 0;
    const double bus_factor = 2.0 * (comm->size() - 1) / comm->size();
    if (report && values.count("json") == 0) {
      std::printf("switchyard allreduce, %s (%s), %d ranks, f32 sum in place, median of %d\n",
                  comm->name().c_str(), comm->description().c_str(), comm->size(), repetitions);
      std::printf("%12s %14s %14s %14s %14s\n", "bytes", "nonblock_us", "nonblock_busbw",
                  "blocking_us", "blocking_busbw");
    }
    detail::Json rows = detail::Json::array();
    for (const int64_t bytes : sizes) {
      std::vector<float> data(static_cast<size_t>(bytes) / sizeof(float), 1.0f);
      const double nonblocking = value_or_throw(time_collective(*comm, repetitions, [&] {
        return comm->allreduce_sum(data, "the benchmark's allreduce");
      }));
      const double blocking = value_or_throw(
          time_collective(*comm, repetitions, [&] { return comm->allreduce_sum_blocking(data); }));
      const auto busbw = [&](double seconds) {
        return static_cast<double>(bytes) / seconds / 1e9 * bus_factor;
      };
      rows.push_back(detail::Json{{"bytes", bytes},
                                  {"nonblocking_us", nonblocking * 1e6},
                                  {"nonblocking_busbw_gbps", busbw(nonblocking)},
                                  {"blocking_us", blocking * 1e6},
                                  {"blocking_busbw_gbps", busbw(blocking)}});
      if (report && values.count("json") == 0) {
        std::printf("%12lld %14.1f %14.3f %14.1f %14.3f\n", static_cast<long long>(bytes),
                    nonblocking * 1e6, busbw(nonblocking), blocking * 1e6, busbw(blocking));
      }
    }
    if (report && values.count("json") != 0) {
      std::cout << detail::json_text(detail::Json{{"communicator", comm->name()},
                                                  {"library", comm->description()},
                                                  {"ranks", comm->size()},
                                                  {"sizes", rows}},
                                     2)
                << "\n";
    }
    if (report && comm->size() == 1) {
      std::cout << "note: one rank moves no bytes (bus bandwidth 0); run under mpirun -np 2\n";
    }
  } catch (const Error& e) {
    print_error(e.status());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace switchyard::cli
