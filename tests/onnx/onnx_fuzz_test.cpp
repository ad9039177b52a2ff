// The ONNX importer under mutated input: the committed PyTorch exports, damaged byte by byte (most
// no longer parse) and field by field (they parse, and the graph, sizes, names, attributes, opset
// or external data are wrong). Each mutant is loaded and, when it loads, run on inputs of its
// declared shapes: it must run or be refused with an Error naming the file; never a crash (the
// sanitizer build runs this too), never another exception, never a load and run over 2 s. A run
// may compute kOnnxFuzzWorkLimit multiply-adds (fuzz_checks.h): past that a model is refused
// like one declaring a huge tensor, since describing much work is not a fault of the importer.
#include <chrono>

#include "formats/onnx_ops_internal.h"
#include "fuzz/fuzz_checks.h"
#include "fuzz/fuzz_support.h"
#include "onnx/onnx_test_support.h"
#include "switchyard/device.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

// The libFuzzer target's limits on host values (kOnnxFuzzHostElements) and Loop iterations
// (kOnnxFuzzLoopIterations) while it lives.
class HostElementLimit {
 public:
  HostElementLimit()
      : previous_(onnx_detail::max_host_elements()),
        previous_iterations_(onnx_detail::max_loop_iterations()) {
    onnx_detail::set_max_host_elements(kOnnxFuzzHostElements);
    onnx_detail::set_max_loop_iterations(kOnnxFuzzLoopIterations);
  }
  HostElementLimit(const HostElementLimit&) = delete;
  HostElementLimit& operator=(const HostElementLimit&) = delete;
  ~HostElementLimit() {
    onnx_detail::set_max_host_elements(previous_);
    onnx_detail::set_max_loop_iterations(previous_iterations_);
  }

 private:
  int64_t previous_, previous_iterations_;
};

constexpr int kByteMutants = 1000;
constexpr int kFieldMutants = 3000;

class FieldMutator {
 public:
  explicit FieldMutator(uint64_t seed) : random_(seed, {}) {}

  void mutate(onnx::ModelProto& model) {
    onnx::GraphProto& graph = *model.mutable_graph();
    const int edits = 1 + static_cast<int>(random_.below(3));
    for (int e = 0; e < edits; ++e) edit(model, graph);
  }

 private:
  int64_t extreme() {
    static const int64_t values[] = {0,
                                     1,
                                     -1,
                                     2,
                                     7,
                                     64,
                                     -64,
                                     int64_t{1} << 31,
                                     int64_t{1} << 40,
                                     std::numeric_limits<int64_t>::max(),
                                     std::numeric_limits<int64_t>::min()};
    return values[random_.below(std::size(values))];
  }
  std::string some_value_name(const onnx::GraphProto& graph) {
    if (graph.node_size() == 0 || random_.below(8) == 0) return "dangling";
    const auto& node =
        graph.node(static_cast<int>(random_.below(static_cast<size_t>(graph.node_size()))));
    if (node.output_size() == 0) return "";
    return node.output(static_cast<int>(random_.below(static_cast<size_t>(node.output_size()))));
  }

  void edit(onnx::ModelProto& model, onnx::GraphProto& graph) {
    const int nodes = graph.node_size(), inits = graph.initializer_size();
    switch (random_.below(11)) {
      case 0:  // an initializer's extent
        if (inits > 0) {
          auto* t = graph.mutable_initializer(
              static_cast<int>(random_.below(static_cast<size_t>(inits))));
          if (t->dims_size() > 0)
            t->set_dims(static_cast<int>(random_.below(static_cast<size_t>(t->dims_size()))),
                        extreme());
          else
            t->add_dims(extreme());
        }
        break;
      case 1:  // an initializer's bytes cut
        if (inits > 0) {
          auto* t = graph.mutable_initializer(
              static_cast<int>(random_.below(static_cast<size_t>(inits))));
          if (t->has_raw_data())
            t->mutable_raw_data()->resize(random_.below(t->raw_data().size() + 1));
          else
            t->set_data_type(static_cast<int32_t>(random_.below(18)));
        }
        break;
      case 2: {  // another op type
        if (nodes == 0) break;
        const auto& ops = onnx_supported_ops();
        graph.mutable_node(static_cast<int>(random_.below(static_cast<size_t>(nodes))))
            ->set_op_type(random_.below(10) == 0 ? "Loop" : ops[random_.below(ops.size())]);
        break;
      }
      case 3: {  // an input rewired (cycles, dangling names, omitted inputs)
        if (nodes == 0) break;
        auto* node =
            graph.mutable_node(static_cast<int>(random_.below(static_cast<size_t>(nodes))));
        if (node->input_size() == 0) break;
        node->set_input(static_cast<int>(random_.below(static_cast<size_t>(node->input_size()))),
                        some_value_name(graph));
        break;
      }
      case 4: {  // an attribute's integers
        if (nodes == 0) break;
        auto* node =
            graph.mutable_node(static_cast<int>(random_.below(static_cast<size_t>(nodes))));
        if (node->attribute_size() == 0) break;
        auto* a = node->mutable_attribute(
            static_cast<int>(random_.below(static_cast<size_t>(node->attribute_size()))));
        if (a->ints_size() > 0)
          a->set_ints(static_cast<int>(random_.below(static_cast<size_t>(a->ints_size()))),
                      extreme());
        else
          a->set_i(extreme());
        if (random_.below(4) == 0)
          a->set_type(static_cast<onnx::AttributeProto_AttributeType>(random_.below(14)));
        break;
      }
      case 5:  // external data
        if (inits > 0) {
          auto* t = graph.mutable_initializer(
              static_cast<int>(random_.below(static_cast<size_t>(inits))));
          t->clear_raw_data();
          t->set_data_location(onnx::TensorProto::EXTERNAL);
          auto* entry = t->add_external_data();
          static const char* locations[] = {"../escape.bin", "/etc/passwd", "weights.bin", "",
                                            "a/../../b"};
          entry->set_key(random_.below(5) == 0 ? "offset" : "location");
          entry->set_value(locations[random_.below(std::size(locations))]);
        }
        break;
      case 6:  // the opset
        if (model.opset_import_size() > 0)
          model.mutable_opset_import(0)->set_version(extreme() % 40);
        break;
      case 7:  // a node removed
        if (nodes > 0) {
          graph.mutable_node()->DeleteSubrange(
              static_cast<int>(random_.below(static_cast<size_t>(nodes))), 1);
        }
        break;
      case 8:  // an input's declared shape
        if (graph.input_size() > 0) {
          auto* shape =
              graph.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
          if (shape->dim_size() > 0)
            shape
                ->mutable_dim(
                    static_cast<int>(random_.below(static_cast<size_t>(shape->dim_size()))))
                ->set_dim_value(extreme());
          else
            shape->add_dim()->set_dim_value(3);
        }
        break;
      case 9:  // an output renamed onto another value (defined twice)
        if (nodes > 1) {
          auto* node =
              graph.mutable_node(static_cast<int>(random_.below(static_cast<size_t>(nodes))));
          if (node->output_size() > 0) node->set_output(0, some_value_name(graph));
        }
        break;
      default: {  // an extra input or output name on a node
        if (nodes == 0) break;
        auto* node =
            graph.mutable_node(static_cast<int>(random_.below(static_cast<size_t>(nodes))));
        if (random_.below(2) == 0)
          node->add_input(some_value_name(graph));
        else
          node->add_output("extra" + std::to_string(random_.below(4)));
        break;
      }
    }
  }

  Mutator random_;
};

struct Outcome {
  int ran = 0, refused = 0;
  double most_work = 0;  // the largest op_work total of a run that ran
};

void try_mutant(const std::filesystem::path& path, const std::vector<uint8_t>& bytes,
                const std::shared_ptr<Device>& device, Outcome& outcome, const std::string& label) {
  std::filesystem::remove(path);
  write_bytes(path, bytes);
  if (const char* keep = std::getenv("SWITCHYARD_FUZZ_KEEP"); keep != nullptr)
    write_bytes(keep, bytes);
  const auto start = std::chrono::steady_clock::now();
  std::string problem;
  try {
    const auto model = OnnxModel::load(path, device);
    std::vector<Tensor> inputs;
    bool made = false;
    try {
      made = make_onnx_inputs(*model, device, inputs);
    } catch (const Error&) {  // shapes the test cannot make inputs of (rank 9, ...): load only
    }
    if (made) {
      WorkLimit limit(kOnnxFuzzWorkLimit);
      const HostElementLimit host_limit;
      model->run(inputs);
      outcome.most_work = std::max(outcome.most_work, limit.used());
    }
    ++outcome.ran;
  } catch (const Error& error) {
    ++outcome.refused;
    if (std::string(error.what()).find(path.string()) == std::string::npos) {
      problem = "no file named: " + std::string(error.what()).substr(0, 300);
    }
    if (std::string(error.what()).size() > 3000)
      problem = "a message of " + std::to_string(std::string(error.what()).size());
    if (error.status().code() == StatusCode::kInternal) problem = "INTERNAL";
  } catch (const std::exception& error) {
    problem = std::string("not a switchyard::Error: ") + error.what();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (seconds > kMaxSecondsPerLoad) problem = "took " + std::to_string(seconds) + " s";
  if (!problem.empty()) FAIL_CHECK(label << " (" << bytes.size() << " bytes): " << problem);
}

std::vector<std::filesystem::path> seed_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(models_dir())) {
    if (std::filesystem::exists(entry.path() / "model.onnx"))
      files.push_back(entry.path() / "model.onnx");
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("mutated PyTorch exports are run or refused naming the file, never a crash or hang",
          "[onnx][fuzz]") {
  const std::shared_ptr<Device> device = test_device();
  // Mutants may declare huge tensors: a cap turns those into RESOURCE_EXHAUSTED at once.
  throw_if_error(device->set_memory_limit(uint64_t{256} << 20));
  TempDir dir;
  const auto path = dir / "mutant.onnx";
  std::vector<std::vector<uint8_t>> seeds;
  std::vector<onnx::ModelProto> models;
  for (const auto& file : seed_files()) {
    seeds.push_back(read_bytes(file));
    models.push_back(read_model(file));
  }
  REQUIRE(seeds.size() >= 7);

  // SWITCHYARD_FUZZ_SEED=N fuzzes with other mutants than CI's (the default seeds are fixed, so a
  // failure reproduces); SWITCHYARD_FUZZ_KEEP=FILE keeps the last mutant tried.
  const char* seed_text = std::getenv("SWITCHYARD_FUZZ_SEED");
  const uint64_t seed = seed_text != nullptr ? std::strtoull(seed_text, nullptr, 10) : 0;
  Outcome bytes_outcome, fields_outcome;
  // The committed corpus of the libFuzzer target (tools/fuzz): its seeds and every input it found
  // a problem with (regression-*).
  Outcome corpus_outcome;
  std::vector<std::filesystem::path> corpus;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(SWITCHYARD_SOURCE_DIR) / "tests/fuzz/corpus/onnx")) {
    corpus.push_back(entry.path());
  }
  std::sort(corpus.begin(), corpus.end());
  REQUIRE_FALSE(corpus.empty());
  for (const auto& file : corpus) {
    try_mutant(path, read_bytes(file), device, corpus_outcome,
               "corpus file " + file.filename().string());
  }
  Mutator bytes_mutator(17 + seed, {"\x08", "\x12", "\x1a", "\x22", "\x3a", "\xff\xff\xff\xff\x0f",
                                    "Gemm", "LSTM", "Reshape"});
  for (int i = 0; i < kByteMutants; ++i) {
    try_mutant(path, bytes_mutator.mutate(seeds), device, bytes_outcome,
               "byte mutant " + std::to_string(i));
  }
  FieldMutator fields(29 + seed);
  for (int i = 0; i < kFieldMutants; ++i) {
    onnx::ModelProto model = models[static_cast<size_t>(i) % models.size()];
    fields.mutate(model);
    try_mutant(path, model_bytes(model), device, fields_outcome,
               "field mutant " + std::to_string(i));
  }
  throw_if_error(device->set_memory_limit(0));
  std::cout << "onnx fuzz: the largest run that ran: " << corpus_outcome.most_work
            << " multiply-adds in the corpus, " << fields_outcome.most_work
            << " in the field mutants (the limit is " << kOnnxFuzzWorkLimit << ")\n";
  std::cout << "onnx fuzz: " << kByteMutants << " byte mutants (" << bytes_outcome.ran << " ran, "
            << bytes_outcome.refused << " refused), " << kFieldMutants << " field mutants ("
            << fields_outcome.ran << " ran, " << fields_outcome.refused << " refused)\n";
  // Both kinds reach both outcomes: the mutations are neither all harmless nor all fatal.
  CHECK(fields_outcome.ran > 0);
  CHECK(fields_outcome.refused > kFieldMutants / 4);
  CHECK(bytes_outcome.refused > 0);
}

TEST_CASE("a model describing more work than a fuzz run allows is refused at once, naming it",
          "[onnx][fuzz]") {
  // libFuzzer's first timeout (CI, 2026-11-27): a 512x512 average pool over a 1024x1024 input
  // is 513 * 513 windows of 262144 values, 6.9e10 additions, minutes on the sanitized reference.
  const std::shared_ptr<Device> device = test_device();
  const auto file = std::filesystem::path(SWITCHYARD_SOURCE_DIR) /
                    "tests/fuzz/corpus/onnx/regression-avgpool-512-window.onnx";
  const auto model = OnnxModel::load(file, device);
  std::vector<Tensor> inputs;
  REQUIRE(make_onnx_inputs(*model, device, inputs));
  const auto start = std::chrono::steady_clock::now();
  try {
    WorkLimit limit(kOnnxFuzzWorkLimit);
    model->run(inputs);
    FAIL("the run was not refused");
  } catch (const Error& error) {
    CHECK(error.status().code() == StatusCode::kResourceExhausted);
    const std::string message = error.what();
    CHECK_THAT(message, Catch::Matchers::Contains(file.string()));
    CHECK_THAT(message, Catch::Matchers::Contains("avg_pool2d needs 6.9e+10 multiply-adds"));
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  CHECK(op_observer() == nullptr);  // the limit put the previous observer back
  // Without the limit the same op is the work it says: a small window over the same input runs.
  Pool2dOptions small;
  small.kernel_h = small.kernel_w = 2;
  small.stride_h = small.stride_w = 2;
  CHECK(avg_pool2d(inputs[0], small).shape() == Shape({1, 1, 512, 512}));
}

TEST_CASE("tensors of the wrong type or size for an op are refused, naming the file and node",
          "[onnx][fuzz]") {
  // Found by the field mutants (SWITCHYARD_FUZZ_SEED=3, 8 and 36, 2026-11-30): a Shape's int64
  // output as a Hardmax's input had its ones written into float values it does not have, and as
  // Resize's scales it was read as no scales and then indexed past them; a Range read its start
  // from an empty tensor; a Loop's body input without a name was written at index -1 (seed 147);
  // a 3-D MaxPool read a kernel_shape of two values as three (seed 511).
  const std::shared_ptr<Device> device = test_device();
  const std::pair<const char*, const char*> cases[] = {
      {"regression-hardmax-integer-input.onnx", "(Hardmax): the input must be a float tensor"},
      {"regression-resize-integer-scales.onnx", "(Resize): scales must be a float tensor"},
      {"regression-range-empty-start.onnx", "(Range): start must hold one value"},
      {"regression-loop-unnamed-body-input.onnx", "(Loop): the body's inputs must all be named"},
      {"regression-maxpool-3d-short-kernel.onnx", "(MaxPool): kernel_shape must have 3 values"}};
  for (const auto& [name, expected] : cases) {
    const auto file =
        std::filesystem::path(SWITCHYARD_SOURCE_DIR) / "tests/fuzz/corpus/onnx" / name;
    INFO(file.string());
    try {
      const auto model = OnnxModel::load(file, device);  // the Loop's is refused here
      std::vector<Tensor> inputs;
      REQUIRE(make_onnx_inputs(*model, device, inputs));
      model->run(inputs);
      FAIL("the run was not refused");
    } catch (const Error& error) {
      const std::string message = error.what();
      CHECK_THAT(message, Catch::Matchers::Contains(file.string()));
      CHECK_THAT(message, Catch::Matchers::Contains(expected));
    }
  }
}
