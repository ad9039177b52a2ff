/* switchyard.h: the C API of switchyard (C11; nothing of C++ crosses it).
 *
 * A host application in C, or in any language with a C foreign-function interface, uses
 * switchyard through three opaque handles:
 *
 *   switchyard_runtime    a configuration (YAML file or text, with overrides) and the device it
 *                         selects, opened on first use;
 *   switchyard_predictor  a trained model (checkpoint or safetensors) on that device;
 *   strings               returned as char* that the caller frees with switchyard_free_string.
 *
 * Errors: every function that can fail returns a switchyard_code (SWITCHYARD_OK = 0, the other
 * values are the status codes of switchyard's C++ API) and keeps a message for the calling thread,
 * read with switchyard_last_error() until the next call on that thread. A null handle or pointer
 * argument is SWITCHYARD_INVALID_ARGUMENT, never a crash. Output arguments are written only on
 * success.
 *
 * Lifetimes:
 *   - A runtime lives until switchyard_runtime_destroy. Predictors made from it hold what they
 *     need (device, plugin) and may outlive it.
 *   - A predictor lives until switchyard_predictor_destroy.
 *   - Strings from switchyard_*_json and the metrics of switchyard_train are the caller's; free
 *     each with switchyard_free_string.
 *   - switchyard_last_error() and switchyard_code_name() return memory the library owns: the
 *     former valid until the calling thread's next switchyard call, the latter forever.
 *
 * Threads: every handle may be shared by any number of threads. Calls on one predictor run one at
 * a time, each giving the bits a single thread would; predictors (of one runtime or of several)
 * run concurrently, their device serialising its plugin calls. On one runtime, switchyard_train
 * calls run one at a time; its other calls run concurrently.
 *
 * Destroyed handles: a call given a handle that was destroyed (or was never made by this library)
 * returns SWITCHYARD_INVALID_ARGUMENT instead of touching freed memory, and destroying a handle a
 * second time does nothing but set that message. A handle destroyed while another thread's call
 * is using it is freed when that call returns. (The check is by address: a handle's address may
 * be reused by a later handle, so using a destroyed handle is still a bug in the caller.)
 *
 * Symbols: every function here is exported from libswitchyard_core under the version node
 * SWITCHYARD_C_1; nothing else of the library is part of this API.
 */
#ifndef SWITCHYARD_SWITCHYARD_H_
#define SWITCHYARD_SWITCHYARD_H_
#pragma GCC visibility push(default) /* the C API: exported (core/switchyard.map) */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header's API; switchyard_api_version() gives the library's. */
#define SWITCHYARD_API_VERSION 1

typedef enum switchyard_code {
  SWITCHYARD_OK = 0,
  SWITCHYARD_CANCELLED = 1,
  SWITCHYARD_UNKNOWN = 2,
  SWITCHYARD_INVALID_ARGUMENT = 3,
  SWITCHYARD_DEADLINE_EXCEEDED = 4,
  SWITCHYARD_NOT_FOUND = 5,
  SWITCHYARD_ALREADY_EXISTS = 6,
  SWITCHYARD_PERMISSION_DENIED = 7,
  SWITCHYARD_RESOURCE_EXHAUSTED = 8,
  SWITCHYARD_FAILED_PRECONDITION = 9,
  SWITCHYARD_ABORTED = 10,
  SWITCHYARD_OUT_OF_RANGE = 11,
  SWITCHYARD_UNIMPLEMENTED = 12,
  SWITCHYARD_INTERNAL = 13,
  SWITCHYARD_UNAVAILABLE = 14,
  SWITCHYARD_DATA_LOSS = 15
} switchyard_code;

typedef struct switchyard_runtime switchyard_runtime;
typedef struct switchyard_predictor switchyard_predictor;

/* ---- Version and errors ---------------------------------------------------------------------- */

/* The library's version ("0.1.0") and API version (SWITCHYARD_API_VERSION it was built with). */
const char* switchyard_version(void);
int switchyard_api_version(void);

/* The message of the calling thread's last failed call ("" after a successful one). */
const char* switchyard_last_error(void);

/* "OK", "INVALID_ARGUMENT", ...; "UNKNOWN_CODE" for a value outside the enum. */
const char* switchyard_code_name(switchyard_code code);

/* Frees a string this API returned; null is allowed. */
void switchyard_free_string(char* text);

/* ---- Runtime --------------------------------------------------------------------------------- */

/* A runtime from a YAML file, with `override_count` overrides ("train.epochs=3", the CLI's --set);
 * `overrides` may be null when the count is 0. A bad file is SWITCHYARD_INVALID_ARGUMENT with a
 * message naming file, line, column and key; a missing one SWITCHYARD_NOT_FOUND. */
switchyard_code switchyard_runtime_from_file(const char* path, const char* const* overrides,
                                             size_t override_count, switchyard_runtime** out);

/* The same from YAML text; relative paths in it resolve against `base_dir` (null: the current
 * folder). An empty text is the defaults. */
switchyard_code switchyard_runtime_from_yaml(const char* yaml_text, const char* base_dir,
                                             const char* const* overrides, size_t override_count,
                                             switchyard_runtime** out);

/* Destroys a runtime; null is allowed, and a destroyed one does nothing (see "Destroyed handles"
 * above; switchyard_last_error() then says so). */
void switchyard_runtime_destroy(switchyard_runtime* runtime);

/* ---- Devices --------------------------------------------------------------------------------- */

/* What `switchyard devices --json` prints: an array with one object per device (backend, id,
 * name, type, memory_total_bytes, memory_free_bytes, usable, reason, settings, selected) and per
 * plugin or plugin folder that has no device to show. Probed in this process. */
switchyard_code switchyard_devices_json(switchyard_runtime* runtime, char** json);

/* What `switchyard doctor --json` prints: search_path, plugins, devices (with hints), selected and
 * exit_code. */
switchyard_code switchyard_doctor_json(switchyard_runtime* runtime, char** json);

/* Opens the device the configuration selects (once; later calls reuse it) and writes its id
 * ("onednn:0") into `id`, a buffer of `capacity` bytes (SWITCHYARD_OUT_OF_RANGE, with the size
 * needed in the message, when it does not fit). SWITCHYARD_UNAVAILABLE naming every backend's
 * reason when nothing is usable. */
switchyard_code switchyard_selected_device(switchyard_runtime* runtime, char* id, size_t capacity);

/* Memory statistics of the selected device, in bytes (limit 0: no cap). SWITCHYARD_UNIMPLEMENTED
 * for a backend that keeps none. */
typedef struct switchyard_memory {
  uint64_t allocated_bytes;
  uint64_t reserved_bytes;
  uint64_t peak_allocated_bytes;
  uint64_t limit_bytes;
  uint64_t allocation_count;
} switchyard_memory;
switchyard_code switchyard_memory_stats(switchyard_runtime* runtime, switchyard_memory* out);

/* ---- Training -------------------------------------------------------------------------------- */

/* One epoch's figures, for a progress callback. Regression runs have rmse/mae/r2 of the test
 * split (is_regression 1) and no accuracies. */
typedef struct switchyard_epoch {
  int64_t epoch; /* 1-based */
  int64_t epochs;
  double train_loss;
  double train_accuracy;
  double test_loss;
  double test_accuracy;
  int is_regression;
  double test_rmse;
  double test_mae;
  double test_r2;
  double learning_rate;
  double epoch_seconds;
} switchyard_epoch;

/* Called after every epoch on the training thread. Return 0 to go on, non-zero to stop after
 * this epoch (its checkpoint is written and the final weights evaluated). */
typedef int (*switchyard_progress)(const switchyard_epoch* epoch, void* user_data);

/* Trains the runtime's configuration on its device as `switchyard run` does (checkpoints only
 * where train.checkpoint says). `progress` may be null. On success `metrics_json` (may be null)
 * receives the document `switchyard run --metrics` writes; it says "stopped_by_callback": true
 * when the callback stopped the run. */
switchyard_code switchyard_train(switchyard_runtime* runtime, switchyard_progress progress,
                                 void* user_data, char** metrics_json);

/* ---- Prediction ------------------------------------------------------------------------------ */

/* A predictor for a checkpoint (`switchyard run`'s; it holds the model and data layout) or a
 * .safetensors file (the runtime's configuration then gives model and data layout), on the
 * runtime's selected device. A damaged file is SWITCHYARD_DATA_LOSS naming it. */
switchyard_code switchyard_predictor_create(switchyard_runtime* runtime, const char* model_path,
                                            switchyard_predictor** out);

/* Floats per input sample (the trained sample shape's product) and per output: one per class
 * (softmax probabilities) or one per regression target (in the targets' units). */
switchyard_code switchyard_predictor_widths(const switchyard_predictor* predictor,
                                            size_t* input_width, size_t* output_width);

/* Predicts `rows` raw samples (row-major, rows x input_width floats, unscaled: the predictor
 * scales them as training did) into `output` (rows x output_width floats; `output_length` is its
 * size in floats). The caller's arrays are read and written a batch of `batch_size` rows at a
 * time (0: 256); nothing else the size of the input is allocated. SWITCHYARD_INVALID_ARGUMENT
 * when input_width or output_length do not fit the model, or for a NaN or infinite input value
 * (the message names its row and column, counting from 0); a model trained with data.missing:
 * mean, median or most_frequent fills a NaN with its checkpoint's value instead, as training
 * filled a missing cell. */
switchyard_code switchyard_predictor_predict(switchyard_predictor* predictor, const float* input,
                                             size_t rows, size_t input_width, float* output,
                                             size_t output_length, size_t batch_size);

/* Destroys a predictor; null is allowed, and a destroyed one does nothing (see "Destroyed handles"
 * above; switchyard_last_error() then says so). */
void switchyard_predictor_destroy(switchyard_predictor* predictor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#pragma GCC visibility pop
#endif /* SWITCHYARD_SWITCHYARD_H_ */
