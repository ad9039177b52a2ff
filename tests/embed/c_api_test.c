/* The C API (switchyard.h) from a C11 program: every function, its success and each of its error
 * paths (bad YAML, unknown device, wrong input width, too small buffers, damaged model files,
 * null handles and pointers), each returning a code and a message, never crashing.
 *
 *   c_api_test WORK_DIR     (WORK_DIR is created if needed; the checkpoint is written there)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "switchyard/switchyard.h"

static int failures = 0;
static int checks = 0;

#define CHECK(condition)                                                                      \
  do {                                                                                        \
    ++checks;                                                                                 \
    if (!(condition)) {                                                                       \
      ++failures;                                                                             \
      fprintf(stderr, "%s:%d: FAILED: %s (last error: %s)\n", __FILE__, __LINE__, #condition, \
              switchyard_last_error());                                                       \
    }                                                                                         \
  } while (0)

/* A failed call: the expected code and a message that says what went wrong. */
#define CHECK_FAILS(call, code, needle)                                                      \
  do {                                                                                       \
    const switchyard_code got_ = (call);                                                     \
    ++checks;                                                                                \
    if (got_ != (code) || strstr(switchyard_last_error(), (needle)) == NULL) {               \
      ++failures;                                                                            \
      fprintf(stderr, "%s:%d: FAILED: %s gave %s (%s), expected %s with \"%s\"\n", __FILE__, \
              __LINE__, #call, switchyard_code_name(got_), switchyard_last_error(),          \
              switchyard_code_name(code), (needle));                                         \
    }                                                                                        \
  } while (0)

static const char* kTrainYaml =
    "seed: 0\n"
    "data: {dataset: digits, test_fraction: 0.2, scale: divide, divisor: 16.0}\n"
    "model:\n"
    "  layers:\n"
    "    - {type: linear, out_features: 32}\n"
    "    - {type: relu}\n"
    "    - {type: linear, out_features: 10}\n"
    "optimizer: {type: sgd, lr: 0.1, momentum: 0.9}\n"
    "train: {epochs: 3, batch_size: 64, progress: none}\n";

struct progress_log {
  int calls;
  int stop_after;
  int64_t last_epoch;
  int64_t epochs;
};

static int on_epoch(const switchyard_epoch* epoch, void* user_data) {
  struct progress_log* log = (struct progress_log*)user_data;
  ++log->calls;
  log->last_epoch = epoch->epoch;
  log->epochs = epoch->epochs;
  return log->calls >= log->stop_after;
}

static void test_version_and_codes(void) {
  CHECK(strlen(switchyard_version()) > 0);
  CHECK(switchyard_api_version() == SWITCHYARD_API_VERSION);
  CHECK(strcmp(switchyard_code_name(SWITCHYARD_OK), "OK") == 0);
  CHECK(strcmp(switchyard_code_name(SWITCHYARD_DATA_LOSS), "DATA_LOSS") == 0);
  CHECK(strcmp(switchyard_code_name((switchyard_code)99), "UNKNOWN_CODE") == 0);
  switchyard_free_string(NULL);
}

static void test_null_arguments(void) {
  switchyard_runtime* runtime = NULL;
  switchyard_predictor* predictor = NULL;
  char* text = NULL;
  char id[32];
  size_t in = 0, out = 0;
  float x = 0, y = 0;
  switchyard_memory memory;
  const char* overrides[] = {NULL};
  CHECK_FAILS(switchyard_runtime_from_file(NULL, NULL, 0, &runtime), SWITCHYARD_INVALID_ARGUMENT,
              "path is null");
  CHECK_FAILS(switchyard_runtime_from_file("x.yaml", NULL, 0, NULL), SWITCHYARD_INVALID_ARGUMENT,
              "out is null");
  CHECK_FAILS(switchyard_runtime_from_file("x.yaml", NULL, 2, &runtime),
              SWITCHYARD_INVALID_ARGUMENT, "overrides is null");
  CHECK_FAILS(switchyard_runtime_from_yaml(NULL, NULL, NULL, 0, &runtime),
              SWITCHYARD_INVALID_ARGUMENT, "yaml_text is null");
  CHECK_FAILS(switchyard_runtime_from_yaml("", NULL, NULL, 0, NULL), SWITCHYARD_INVALID_ARGUMENT,
              "out is null");
  CHECK_FAILS(switchyard_runtime_from_yaml("", NULL, overrides, 1, &runtime),
              SWITCHYARD_INVALID_ARGUMENT, "override 0 is null");
  CHECK(runtime == NULL);
  CHECK_FAILS(switchyard_devices_json(NULL, &text), SWITCHYARD_INVALID_ARGUMENT, "runtime is null");
  CHECK_FAILS(switchyard_doctor_json(NULL, &text), SWITCHYARD_INVALID_ARGUMENT, "runtime is null");
  CHECK_FAILS(switchyard_selected_device(NULL, id, sizeof id), SWITCHYARD_INVALID_ARGUMENT,
              "runtime is null");
  CHECK_FAILS(switchyard_memory_stats(NULL, &memory), SWITCHYARD_INVALID_ARGUMENT,
              "runtime is null");
  CHECK_FAILS(switchyard_train(NULL, NULL, NULL, &text), SWITCHYARD_INVALID_ARGUMENT,
              "runtime is null");
  CHECK_FAILS(switchyard_predictor_create(NULL, "m.ckpt", &predictor), SWITCHYARD_INVALID_ARGUMENT,
              "runtime is null");
  CHECK_FAILS(switchyard_predictor_widths(NULL, &in, &out), SWITCHYARD_INVALID_ARGUMENT,
              "predictor is null");
  CHECK_FAILS(switchyard_predictor_predict(NULL, &x, 1, 1, &y, 1, 0), SWITCHYARD_INVALID_ARGUMENT,
              "predictor is null");
  CHECK(text == NULL && predictor == NULL);
  switchyard_runtime_destroy(NULL);
  switchyard_predictor_destroy(NULL);
  /* Null pointers beside a valid handle. */
  CHECK(switchyard_runtime_from_yaml("", NULL, NULL, 0, &runtime) == SWITCHYARD_OK);
  CHECK(strcmp(switchyard_last_error(), "") == 0);
  CHECK_FAILS(switchyard_devices_json(runtime, NULL), SWITCHYARD_INVALID_ARGUMENT, "json is null");
  CHECK_FAILS(switchyard_doctor_json(runtime, NULL), SWITCHYARD_INVALID_ARGUMENT, "json is null");
  CHECK_FAILS(switchyard_selected_device(runtime, NULL, 0), SWITCHYARD_INVALID_ARGUMENT,
              "id is null");
  CHECK_FAILS(switchyard_memory_stats(runtime, NULL), SWITCHYARD_INVALID_ARGUMENT, "out is null");
  CHECK_FAILS(switchyard_predictor_create(runtime, NULL, &predictor), SWITCHYARD_INVALID_ARGUMENT,
              "model_path is null");
  CHECK_FAILS(switchyard_predictor_create(runtime, "m.ckpt", NULL), SWITCHYARD_INVALID_ARGUMENT,
              "out is null");
  switchyard_runtime_destroy(runtime);
}

static void test_bad_configurations(const char* work_dir) {
  switchyard_runtime* runtime = NULL;
  char path[4096];
  /* A YAML syntax error names the place; an unknown key names the key. */
  CHECK_FAILS(switchyard_runtime_from_yaml("train: [1, 2\n", NULL, NULL, 0, &runtime),
              SWITCHYARD_INVALID_ARGUMENT, "<yaml text>:2:1");
  CHECK_FAILS(switchyard_runtime_from_yaml("train: {epochz: 3}\n", NULL, NULL, 0, &runtime),
              SWITCHYARD_INVALID_ARGUMENT, "epochz");
  {
    const char* overrides[] = {"train.epochs=-4"};
    CHECK_FAILS(switchyard_runtime_from_yaml("", NULL, overrides, 1, &runtime),
                SWITCHYARD_INVALID_ARGUMENT, "train.epochs");
  }
  snprintf(path, sizeof path, "%s/no-such-file.yaml", work_dir);
  CHECK(switchyard_runtime_from_file(path, NULL, 0, &runtime) != SWITCHYARD_OK);
  CHECK(strstr(switchyard_last_error(), "no-such-file.yaml") != NULL);
  CHECK(runtime == NULL);
  /* An unknown device: the configuration is refused, naming it. */
  CHECK_FAILS(switchyard_runtime_from_yaml("device: nosuchbackend:0\n", NULL, NULL, 0, &runtime),
              SWITCHYARD_INVALID_ARGUMENT, "nosuchbackend");
  /* A device that exists by name but not by index: opening it fails with the reason. */
  {
    char id[64];
    CHECK(switchyard_runtime_from_yaml("backends: [reference]\ndevice: reference:7\n"
                                       "fallback: error\n",
                                       NULL, NULL, 0, &runtime) == SWITCHYARD_OK);
    CHECK(switchyard_selected_device(runtime, id, sizeof id) != SWITCHYARD_OK);
    CHECK(strstr(switchyard_last_error(), "reference:7") != NULL);
    switchyard_runtime_destroy(runtime);
    runtime = NULL;
  }
}

static void test_devices(void) {
  switchyard_runtime* runtime = NULL;
  char* json = NULL;
  char id[64];
  char tiny[2];
  switchyard_memory memory;
  CHECK(switchyard_runtime_from_yaml("backends: [reference]\n", NULL, NULL, 0, &runtime) ==
        SWITCHYARD_OK);
  CHECK(switchyard_devices_json(runtime, &json) == SWITCHYARD_OK);
  CHECK(json != NULL && strstr(json, "\"id\": \"reference:0\"") != NULL);
  CHECK(json != NULL && strstr(json, "\"selected\": true") != NULL);
  switchyard_free_string(json);
  json = NULL;
  CHECK(switchyard_doctor_json(runtime, &json) == SWITCHYARD_OK);
  CHECK(json != NULL && strstr(json, "\"selected\": \"reference:0\"") != NULL);
  CHECK(json != NULL && strstr(json, "\"exit_code\": 0") != NULL);
  switchyard_free_string(json);
  CHECK(switchyard_selected_device(runtime, id, sizeof id) == SWITCHYARD_OK);
  CHECK(strcmp(id, "reference:0") == 0);
  CHECK_FAILS(switchyard_selected_device(runtime, tiny, sizeof tiny), SWITCHYARD_OUT_OF_RANGE,
              "needs 12 bytes");
  CHECK(switchyard_memory_stats(runtime, &memory) == SWITCHYARD_OK);
  CHECK(memory.allocated_bytes <= memory.reserved_bytes || memory.reserved_bytes == 0);
  switchyard_runtime_destroy(runtime);
}

static void test_train_and_predict(const char* work_dir) {
  switchyard_runtime* runtime = NULL;
  switchyard_predictor* predictor = NULL;
  char* metrics = NULL;
  char checkpoint[4096];
  char setting[4200];
  char damaged[4096];
  const char* overrides[1];
  struct progress_log log = {0, 2, 0, 0};
  size_t in = 0, out = 0;
  float* x;
  float* y;
  size_t rows = 300, r, c;
  FILE* file;

  snprintf(checkpoint, sizeof checkpoint, "%s/c-api.ckpt", work_dir);
  snprintf(setting, sizeof setting, "train.checkpoint=%s", checkpoint);
  overrides[0] = setting;
  CHECK(switchyard_runtime_from_yaml(kTrainYaml, NULL, overrides, 1, &runtime) == SWITCHYARD_OK);
  /* The callback stops the 3-epoch run after its second epoch. */
  CHECK(switchyard_train(runtime, on_epoch, &log, &metrics) == SWITCHYARD_OK);
  CHECK(log.calls == 2 && log.last_epoch == 2 && log.epochs == 3);
  CHECK(metrics != NULL && strstr(metrics, "\"stopped_by_callback\":true") != NULL);
  CHECK(metrics != NULL && strstr(metrics, "\"epochs\":2") != NULL);
  CHECK(metrics != NULL && strstr(metrics, "\"test_accuracy\":") != NULL);
  switchyard_free_string(metrics);
  metrics = NULL;

  CHECK(switchyard_predictor_create(runtime, checkpoint, &predictor) == SWITCHYARD_OK);
  CHECK(switchyard_predictor_widths(predictor, &in, &out) == SWITCHYARD_OK);
  CHECK(in == 64 && out == 10);
  x = malloc(rows * 64 * sizeof(float));
  y = malloc(rows * 10 * sizeof(float));
  for (r = 0; r < rows * 64; ++r) x[r] = (float)((r * 7919u) % 17u);
  /* An odd batch size: the last batch is partial. */
  CHECK(switchyard_predictor_predict(predictor, x, rows, 64, y, rows * 10, 37) == SWITCHYARD_OK);
  for (r = 0; r < rows; ++r) {
    double sum = 0;
    for (c = 0; c < 10; ++c) sum += y[r * 10 + c];
    if (fabs(sum - 1.0) > 1e-4) {
      CHECK(fabs(sum - 1.0) <= 1e-4);
      break;
    }
  }
  CHECK_FAILS(switchyard_predictor_predict(predictor, x, rows, 63, y, rows * 10, 0),
              SWITCHYARD_INVALID_ARGUMENT, "the model takes 64");
  CHECK_FAILS(switchyard_predictor_predict(predictor, x, rows, 64, y, rows * 10 - 1, 0),
              SWITCHYARD_INVALID_ARGUMENT, "need 3000");
  CHECK_FAILS(switchyard_predictor_predict(predictor, NULL, rows, 64, y, rows * 10, 0),
              SWITCHYARD_INVALID_ARGUMENT, "input is null");
  CHECK(switchyard_predictor_predict(predictor, NULL, 0, 64, NULL, 0, 0) == SWITCHYARD_OK);
  free(x);
  free(y);
  /* A predictor outlives its runtime. */
  switchyard_runtime_destroy(runtime);
  {
    float one[64] = {0};
    float probabilities[10];
    CHECK(switchyard_predictor_predict(predictor, one, 1, 64, probabilities, 10, 0) ==
          SWITCHYARD_OK);
  }
  switchyard_predictor_destroy(predictor);

  /* Damaged and missing model files are errors naming the file. */
  CHECK(switchyard_runtime_from_yaml("", NULL, NULL, 0, &runtime) == SWITCHYARD_OK);
  snprintf(damaged, sizeof damaged, "%s/damaged.ckpt", work_dir);
  file = fopen(damaged, "wb");
  CHECK(file != NULL);
  if (file != NULL) {
    fputs("SWITCHYARD-CHECKPOINT but not really", file);
    fclose(file);
  }
  predictor = NULL;
  CHECK(switchyard_predictor_create(runtime, damaged, &predictor) != SWITCHYARD_OK);
  CHECK(strstr(switchyard_last_error(), "damaged.ckpt") != NULL);
  CHECK(switchyard_predictor_create(runtime, "/nonexistent/model.ckpt", &predictor) !=
        SWITCHYARD_OK);
  CHECK(strstr(switchyard_last_error(), "/nonexistent/model.ckpt") != NULL);
  CHECK(predictor == NULL);
  /* Training a configuration without data is refused with the reason. */
  CHECK_FAILS(switchyard_train(runtime, NULL, NULL, NULL), SWITCHYARD_INVALID_ARGUMENT,
              "data.dataset");
  switchyard_runtime_destroy(runtime);
}

int main(int argc, char** argv) {
  const char* work_dir = argc > 1 ? argv[1] : ".";
  mkdir(work_dir, 0755);
  test_version_and_codes();
  test_null_arguments();
  test_bad_configurations(work_dir);
  test_devices();
  test_train_and_predict(work_dir);
  printf("c_api_test: %d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
