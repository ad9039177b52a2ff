// bench_onednn_matmul: times oneDNN's matmul primitive directly, with nothing of switchyard in
// between, as the peer for "switchyard's matmul through the framework reaches >= 90% of oneDNN".
//
//   bench_onednn_matmul M N K f32|bf16 THREADS [--warmup W] [--reps R] [--json]
//
// A, B and C are dense row-major (the layout the onednn plugin hands oneDNN for dense tensors),
// all of the named dtype (bf16: bf16 inputs and output, f32 accumulation). The primitive is
// created once; W untimed runs are followed by R timed ones; the median is reported.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <vector>

namespace {

struct Options {
  int64_t m = 0, n = 0, k = 0;
  std::string dtype = "f32";
  int threads = 1;
  int warmup = 5;
  int reps = 20;
  bool json = false;
};

void usage() {
  std::fprintf(
      stderr,
      "usage: bench_onednn_matmul M N K f32|bf16 THREADS [--warmup W] [--reps R] [--json]\n");
}

bool parse_int(const char* text, int64_t min, int64_t* out) {
  char* end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < min) return false;
  *out = value;
  return true;
}

bool parse_options(int argc, char** argv, Options* o) {
  if (argc < 6) return false;
  int64_t threads = 0;
  if (!parse_int(argv[1], 1, &o->m) || !parse_int(argv[2], 1, &o->n) ||
      !parse_int(argv[3], 1, &o->k) || !parse_int(argv[5], 1, &threads)) {
    return false;
  }
  o->dtype = argv[4];
  if (o->dtype != "f32" && o->dtype != "bf16") return false;
  o->threads = static_cast<int>(threads);
  for (int i = 6; i < argc; ++i) {
    int64_t value = 0;
    if (std::strcmp(argv[i], "--json") == 0) {
      o->json = true;
    } else if (std::strcmp(argv[i], "--warmup") == 0 && i + 1 < argc &&
               parse_int(argv[i + 1], 0, &value)) {
      o->warmup = static_cast<int>(value);
      ++i;
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc &&
               parse_int(argv[i + 1], 1, &value)) {
      o->reps = static_cast<int>(value);
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

// Fills a buffer of `count` elements of `type` with uniform values in [-1, 1).
void fill_random(dnnl::memory& memory, int64_t count, dnnl::memory::data_type type) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  if (type == dnnl::memory::data_type::f32) {
    float* data = static_cast<float*>(memory.get_data_handle());
    for (int64_t i = 0; i < count; ++i) data[i] = dist(rng);
    return;
  }
  uint16_t* data = static_cast<uint16_t*>(memory.get_data_handle());
  for (int64_t i = 0; i < count; ++i) {
    float value = dist(rng);
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    data[i] = static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, &o)) {
    usage();
    return 2;
  }
  omp_set_num_threads(o.threads);
  try {
    using tag = dnnl::memory::format_tag;
    const auto type =
        o.dtype == "f32" ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    dnnl::memory::desc a_desc({o.m, o.k}, type, tag::ab);
    dnnl::memory::desc b_desc({o.k, o.n}, type, tag::ab);
    dnnl::memory::desc c_desc({o.m, o.n}, type, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_desc, b_desc, c_desc), engine);
    dnnl::matmul matmul(pd);
    dnnl::memory a(a_desc, engine), b(b_desc, engine), c(c_desc, engine);
    fill_random(a, o.m * o.k, type);
    fill_random(b, o.k * o.n, type);
    auto run = [&] {
      matmul.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
      stream.wait();
    };
    for (int i = 0; i < o.warmup; ++i) run();
    std::vector<double> times_ms;
    for (int i = 0; i < o.reps; ++i) {
      auto start = std::chrono::steady_clock::now();
      run();
      auto end = std::chrono::steady_clock::now();
      times_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
    std::sort(times_ms.begin(), times_ms.end());
    const double median_ms = times_ms[times_ms.size() / 2];
    const double gflops = 2.0 * static_cast<double>(o.m) * static_cast<double>(o.n) *
                          static_cast<double>(o.k) / (median_ms * 1e6);
    if (o.json) {
      const nlohmann::ordered_json report{{"bench", "onednn_matmul"},
                                          {"m", o.m},
                                          {"n", o.n},
                                          {"k", o.k},
                                          {"dtype", o.dtype},
                                          {"threads", o.threads},
                                          {"reps", o.reps},
                                          {"median_ms", median_ms},
                                          {"min_ms", times_ms.front()},
                                          {"gflops", gflops},
                                          {"impl", pd.impl_info_str()}};
      std::cout << report.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                << std::endl;
    } else {
      std::printf(
          "onednn matmul %lldx%lldx%lld %s, %d threads: median %.4f ms (min %.4f ms), "
          "%.1f GFLOP/s [%s]\n",
          static_cast<long long>(o.m), static_cast<long long>(o.n), static_cast<long long>(o.k),
          o.dtype.c_str(), o.threads, median_ms, times_ms.front(), gflops, pd.impl_info_str());
    }
  } catch (const dnnl::error& e) {
    std::fprintf(stderr, "bench_onednn_matmul: oneDNN error: %s\n", e.what());
    return 1;
  }
  return 0;
}
