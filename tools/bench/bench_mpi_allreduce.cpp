// The peer of `switchyard bench allreduce`: MPI_Allreduce (in place, f32 sum) called directly,
// the same sizes, repetitions and bus-bandwidth formula, so that the framework's figure can be
// stated as a fraction of what the library itself reaches on this machine.
//   mpirun -np 2 build/bin/bench_mpi_allreduce [--bytes 1M,64M] [--repetitions 20]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// "64M" -> 67108864 (K, M, G are powers of 1024).
long long parse_bytes(const std::string& text) {
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (*end == 'K' || *end == 'k') value <<= 10;
  if (*end == 'M' || *end == 'm') value <<= 20;
  if (*end == 'G' || *end == 'g') value <<= 30;
  return value;
}

std::vector<long long> parse_list(const std::string& text) {
  std::vector<long long> sizes;
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = text.find(',', start);
    sizes.push_back(parse_bytes(text.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string bytes_text = "4K,64K,1M,16M,64M";
  int repetitions = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--bytes") == 0) bytes_text = argv[i + 1];
    if (std::strcmp(argv[i], "--repetitions") == 0) repetitions = std::atoi(argv[i + 1]);
  }
  if (rank == 0) {
    std::printf("direct MPI_Allreduce, %d ranks, f32 sum in place, median of %d\n", size,
                repetitions);
    std::printf("%12s %12s %14s %14s\n", "bytes", "time_us", "algbw_GB/s", "busbw_GB/s");
  }
  for (const long long bytes : parse_list(bytes_text)) {
    std::vector<float> data(static_cast<size_t>(bytes) / sizeof(float), 1.0f);
    const int count = static_cast<int>(data.size());
    std::vector<double> seconds;
    for (int r = -3; r < repetitions; ++r) {  // three warm-up calls
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, data.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double elapsed = MPI_Wtime() - start;
      // The slowest rank's time is the collective's.
      MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= 0) seconds.push_back(elapsed);
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    const double algbw = static_cast<double>(bytes) / median / 1e9;
    const double busbw = algbw * 2.0 * (size - 1) / size;
    if (rank == 0) {
      std::printf("%12lld %12.1f %14.3f %14.3f\n", bytes, median * 1e6, algbw, busbw);
    }
  }
  MPI_Finalize();
  return 0;
}
