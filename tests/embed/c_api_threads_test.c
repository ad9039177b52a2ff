/* The C API under threads (switchyard.h, "Threads" and "Destroyed handles"): many threads against
 * one thread's results, bit for bit, on every usable backend.
 *
 *   c_api_threads_test WORK_DIR [CALLS]    (CALLS also from SWITCHYARD_THREAD_CALLS)
 *
 * One model is trained once (reference backend, a few seconds); then, per backend:
 *   - one thread predicts the rows at every offset the workers use: the expected bits;
 *   - 4 threads share ONE predictor, CALLS calls each (default 1000), each call 200 rows in
 *     batches of 32 at one of 64 offsets, compared with memcmp against the expected rows;
 *   - 2 predictors of ONE runtime (one device) on 2 threads, the same way;
 *   - 2 runtimes (two devices at once) on 2 threads, the same way;
 *   - a predictor destroyed while another thread keeps calling it: each call either succeeds
 *     with the right bits or is refused as "not a live handle"; none crashes;
 *   - a handle destroyed twice, and used after its destruction: refused, never an abort.
 * A NaN input is refused naming its row and column.
 *
 * A backend that cannot run here prints "skipped <backend>: <reason>", unless it is required
 * (SWITCHYARD_REQUIRE_BACKENDS, or CI=true: reference,onednn,vulkan; tests/backend_support.h),
 * which is then a failure. The ThreadSanitizer build (tools/test --tsan) runs this test too.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "switchyard/switchyard.h"

static int failures = 0;
static int checks = 0;
static pthread_mutex_t count_mutex = PTHREAD_MUTEX_INITIALIZER;

static void count_check(int ok, const char* file, int line, const char* what) {
  pthread_mutex_lock(&count_mutex);
  ++checks;
  if (!ok) {
    ++failures;
    fprintf(stderr, "%s:%d: FAILED: %s (last error: %s)\n", file, line, what,
            switchyard_last_error());
  }
  pthread_mutex_unlock(&count_mutex);
}

#define CHECK(condition) count_check((condition) ? 1 : 0, __FILE__, __LINE__, #condition)

/* Each call predicts kCallRows rows, in batches of kBatch, starting at one of kOffsets offsets. */
enum { kRows = 2000, kCallRows = 200, kBatch = 32, kOffsets = 64, kThreads = 4 };

static const char* kTrainYaml =
    "seed: 0\n"
    "backends: [reference]\n"
    "data: {dataset: digits, test_fraction: 0.2, scale: divide, divisor: 16.0}\n"
    "model:\n"
    "  layers:\n"
    "    - {type: linear, out_features: 48}\n"
    "    - {type: relu}\n"
    "    - {type: linear, out_features: 32}\n"
    "    - {type: tanh}\n"
    "    - {type: linear, out_features: 10}\n"
    "optimizer: {type: sgd, lr: 0.1, momentum: 0.9}\n"
    "train: {epochs: 2, batch_size: 64, progress: none}\n";

static float inputs[kRows * 64];
/* Per offset, the outputs of the kCallRows rows starting there, as one thread computed them. */
static float expected[kOffsets * kCallRows * 10];
static size_t output_width = 0;
static int calls_per_thread = 1000;

/* Whether `backend` is named by SWITCHYARD_REQUIRE_BACKENDS (or by CI=true's default list). */
static int backend_required(const char* backend) {
  const char* list = getenv("SWITCHYARD_REQUIRE_BACKENDS");
  char copy[512];
  char* item;
  char* rest = NULL;
  if (list == NULL) {
    const char* ci = getenv("CI");
    if (ci == NULL || strcmp(ci, "true") != 0) return 0;
    list = "reference,onednn,vulkan";
  }
  snprintf(copy, sizeof copy, "%s", list);
  for (item = strtok_r(copy, ", \t", &rest); item != NULL; item = strtok_r(NULL, ", \t", &rest)) {
    if (strcmp(item, backend) == 0) return 1;
  }
  return 0;
}

/* A runtime whose device is `backend`'s first, opened now; NULL (skipped or failed) otherwise. */
static switchyard_runtime* open_runtime(const char* backend) {
  char yaml[256];
  char id[64];
  switchyard_runtime* runtime = NULL;
  snprintf(yaml, sizeof yaml, "backends: [%s]\nfallback: error\nbackend_options: {}\n", backend);
  if (switchyard_runtime_from_yaml(yaml, NULL, NULL, 0, &runtime) != SWITCHYARD_OK ||
      switchyard_selected_device(runtime, id, sizeof id) != SWITCHYARD_OK) {
    if (backend_required(backend)) {
      count_check(0, __FILE__, __LINE__, "a required backend opens");
      fprintf(stderr, "required backend %s: %s\n", backend, switchyard_last_error());
    } else {
      printf("skipped %s: %s\n", backend, switchyard_last_error());
    }
    switchyard_runtime_destroy(runtime);
    return NULL;
  }
  return runtime;
}

struct worker {
  switchyard_predictor* predictor;
  int index;         /* decides the worker's row offsets */
  int calls;         /* calls to make */
  int tolerate_dead; /* a refusal as "not a live handle" is allowed (the destroy case) */
  int mismatches;
  int refused;
  int done;
  int made; /* calls made so far, under count_mutex */
};

static void* predict_loop(void* argument) {
  struct worker* w = (struct worker*)argument;
  static _Thread_local float out[kCallRows * 10];
  int call;
  for (call = 0; call < w->calls; ++call) {
    pthread_mutex_lock(&count_mutex);
    w->made = call;
    pthread_mutex_unlock(&count_mutex);
    const size_t offset = (size_t)((w->index * 7919 + call * 131) % kOffsets);
    const switchyard_code code = switchyard_predictor_predict(
        w->predictor, inputs + offset * 27 * 64, kCallRows, 64, out, kCallRows * 10, kBatch);
    if (code != SWITCHYARD_OK) {
      if (w->tolerate_dead && code == SWITCHYARD_INVALID_ARGUMENT &&
          strstr(switchyard_last_error(), "not a live handle") != NULL) {
        ++w->refused;
        continue;
      }
      ++w->mismatches;
      fprintf(stderr, "worker %d call %d: %s %s\n", w->index, call, switchyard_code_name(code),
              switchyard_last_error());
      continue;
    }
    if (memcmp(out, expected + offset * kCallRows * 10, sizeof out) != 0) {
      ++w->mismatches;
    }
  }
  w->done = 1;
  return NULL;
}

/* Runs one worker per predictor in `predictors` (count of them), each `calls_per_thread` calls. */
static void run_workers(switchyard_predictor** predictors, int count, const char* what) {
  pthread_t threads[kThreads];
  struct worker workers[kThreads];
  int i;
  int mismatches = 0;
  for (i = 0; i < count; ++i) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].predictor = predictors[i];
    workers[i].index = i;
    workers[i].calls = calls_per_thread;
    CHECK(pthread_create(&threads[i], NULL, predict_loop, &workers[i]) == 0);
  }
  for (i = 0; i < count; ++i) {
    pthread_join(threads[i], NULL);
    mismatches += workers[i].mismatches;
  }
  printf("  %s: %d threads x %d calls, %d calls differ from one thread's bits\n", what, count,
         calls_per_thread, mismatches);
  CHECK(mismatches == 0);
}

static void test_backend(const char* backend, const char* checkpoint) {
  switchyard_runtime* runtime = open_runtime(backend);
  switchyard_runtime* second_runtime = NULL;
  switchyard_predictor* predictor = NULL;
  switchyard_predictor* others[kThreads];
  size_t in = 0;
  int i;
  if (runtime == NULL) return;
  printf("%s:\n", backend);
  CHECK(switchyard_predictor_create(runtime, checkpoint, &predictor) == SWITCHYARD_OK);
  CHECK(switchyard_predictor_widths(predictor, &in, &output_width) == SWITCHYARD_OK);
  CHECK(in == 64 && output_width == 10);
  if (in != 64 || output_width != 10) return;
  /* One thread, one call per offset the workers use: the expected bits. */
  {
    size_t offset;
    for (offset = 0; offset < kOffsets; ++offset) {
      CHECK(switchyard_predictor_predict(predictor, inputs + offset * 27 * 64, kCallRows, 64,
                                         expected + offset * kCallRows * 10, kCallRows * 10,
                                         kBatch) == SWITCHYARD_OK);
    }
  }
  /* Many threads on one predictor. */
  for (i = 0; i < kThreads; ++i) others[i] = predictor;
  run_workers(others, kThreads, "one predictor");
  /* Two predictors of one runtime: one device. */
  others[0] = predictor;
  CHECK(switchyard_predictor_create(runtime, checkpoint, &others[1]) == SWITCHYARD_OK);
  run_workers(others, 2, "two predictors, one device");
  switchyard_predictor_destroy(others[1]);
  /* Two runtimes: two devices at once. */
  second_runtime = open_runtime(backend);
  if (second_runtime != NULL) {
    CHECK(switchyard_predictor_create(second_runtime, checkpoint, &others[1]) == SWITCHYARD_OK);
    run_workers(others, 2, "two devices");
    switchyard_predictor_destroy(others[1]);
    switchyard_runtime_destroy(second_runtime);
  }
  /* Destroyed while another thread calls it. */
  {
    pthread_t thread;
    struct worker w;
    switchyard_predictor* doomed = NULL;
    float out[kBatch * 10];
    CHECK(switchyard_predictor_create(runtime, checkpoint, &doomed) == SWITCHYARD_OK);
    memset(&w, 0, sizeof w);
    w.predictor = doomed;
    w.index = 3;
    w.calls = calls_per_thread;
    w.tolerate_dead = 1;
    CHECK(pthread_create(&thread, NULL, predict_loop, &w) == 0);
    /* The destroy lands mid-run: after the worker's 50th call. */
    for (;;) {
      int made;
      pthread_mutex_lock(&count_mutex);
      made = w.made;
      pthread_mutex_unlock(&count_mutex);
      if (made >= 50) break;
      switchyard_predictor_predict(doomed, inputs, kBatch, 64, out, kBatch * 10, kBatch);
    }
    switchyard_predictor_destroy(doomed);
    pthread_join(thread, NULL);
    printf("  destroyed mid-run: %d calls refused as dead, %d wrong\n", w.refused, w.mismatches);
    CHECK(w.mismatches == 0);
    CHECK(w.refused <= calls_per_thread - 50);
    /* Destroyed twice, used after destruction: refused, no abort. */
    switchyard_predictor_destroy(doomed);
    CHECK(strstr(switchyard_last_error(), "not a live handle") != NULL);
    CHECK(switchyard_predictor_predict(doomed, inputs, 1, 64, out, 10, 0) ==
          SWITCHYARD_INVALID_ARGUMENT);
    CHECK(strstr(switchyard_last_error(), "not a live handle") != NULL);
    CHECK(switchyard_predictor_widths(doomed, &in, &output_width) == SWITCHYARD_INVALID_ARGUMENT);
    output_width = 10;
  }
  /* A NaN is refused naming row and column (counting from 0). */
  {
    float bad[3 * 64];
    float out[3 * 10];
    memcpy(bad, inputs, sizeof bad);
    bad[64 + 5] = NAN;
    CHECK(switchyard_predictor_predict(predictor, bad, 3, 64, out, 30, 0) ==
          SWITCHYARD_INVALID_ARGUMENT);
    CHECK(strstr(switchyard_last_error(), "row 1, column 5") != NULL);
    bad[64 + 5] = INFINITY;
    CHECK(switchyard_predictor_predict(predictor, bad, 3, 64, out, 30, 2) ==
          SWITCHYARD_INVALID_ARGUMENT);
    CHECK(strstr(switchyard_last_error(), "is inf") != NULL);
  }
  switchyard_predictor_destroy(predictor);
  switchyard_runtime_destroy(runtime);
  /* The runtime too: twice, and after destruction. */
  switchyard_runtime_destroy(runtime);
  CHECK(strstr(switchyard_last_error(), "not a live handle") != NULL);
  {
    char id[64];
    CHECK(switchyard_selected_device(runtime, id, sizeof id) == SWITCHYARD_INVALID_ARGUMENT);
  }
}

int main(int argc, char** argv) {
  char checkpoint[4096];
  char setting[4200];
  const char* overrides[1];
  switchyard_runtime* trainer = NULL;
  const char* backends[] = {"reference", "onednn", "vulkan", "cuda"};
  size_t b, i;
  unsigned state = 12345u;
  if (argc < 2) {
    fprintf(stderr, "usage: c_api_threads_test WORK_DIR [CALLS]\n");
    return 2;
  }
  if (getenv("SWITCHYARD_THREAD_CALLS") != NULL)
    calls_per_thread = atoi(getenv("SWITCHYARD_THREAD_CALLS"));
  if (argc > 2) calls_per_thread = atoi(argv[2]);
  if (calls_per_thread < 60) calls_per_thread = 60; /* the destroy case waits for 50 calls */
  mkdir(argv[1], 0755);                             /* may exist already */
  snprintf(checkpoint, sizeof checkpoint, "%s/threads.ckpt", argv[1]);
  snprintf(setting, sizeof setting, "train.checkpoint=%s", checkpoint);
  overrides[0] = setting;
  CHECK(switchyard_runtime_from_yaml(kTrainYaml, NULL, overrides, 1, &trainer) == SWITCHYARD_OK);
  CHECK(switchyard_train(trainer, NULL, NULL, NULL) == SWITCHYARD_OK);
  switchyard_runtime_destroy(trainer);
  /* Digit-like rows: integers 0..16, as the digits data set has. */
  for (i = 0; i < sizeof inputs / sizeof inputs[0]; ++i) {
    state = state * 1103515245u + 12345u;
    inputs[i] = (float)((state >> 16) % 17u);
  }
  for (b = 0; b < sizeof backends / sizeof backends[0]; ++b) test_backend(backends[b], checkpoint);
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures == 0 ? 0 : 1;
}
