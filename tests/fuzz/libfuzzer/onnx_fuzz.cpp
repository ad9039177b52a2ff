// libFuzzer target: the ONNX importer (fuzz_target.h). The input is a model file's bytes, loaded
// for the reference device (its plugin from the build, or $SWITCHYARD_FUZZ_PLUGIN_DIR) and, when
// it loads, run on inputs of its declared shapes (the steps of tests/onnx/onnx_fuzz_test.cpp).
// Loading and running throw switchyard::Error for a refusal; it must name the source. External
// data is looked for in an empty scratch folder. The device refuses allocations past 256 MiB, as
// in the Catch2 test, so that huge declared tensors are RESOURCE_EXHAUSTED at once.
// A run may compute at most kOnnxFuzzWorkLimit multiply-adds (WorkLimit, fuzz_checks.h): a model
// describing more work is refused, not run for minutes, the way a huge tensor is.
// Corpus: tests/fuzz/corpus/onnx (the smallest of the committed PyTorch exports, and the inputs
// fuzzing found problems with: regression-*).
#include <cstdlib>

#include "formats/onnx_ops_internal.h"
#include "fuzz/fuzz_checks.h"
#include "fuzz_target.h"
#include "switchyard/device.h"
#include "switchyard/onnx.h"
#include "switchyard/plugin.h"

using namespace switchyard;

namespace {

std::shared_ptr<Device> reference_device() {
  const char* dir = std::getenv("SWITCHYARD_FUZZ_PLUGIN_DIR");
  const std::string folder = dir != nullptr && *dir != '\0' ? dir : SWITCHYARD_FUZZ_PLUGIN_DIR;
  auto plugin = Plugin::load(folder + "/libswitchyard-reference.so");
  if (!plugin.ok()) fuzz::fail("no reference plugin", plugin.status().to_string());
  auto device = Device::create(*plugin, 0);
  if (!device.ok()) fuzz::fail("no reference device", device.status().to_string());
  const Status limited = (*device)->set_memory_limit(uint64_t{256} << 20);
  if (!limited.ok()) fuzz::fail("no memory limit", limited.to_string());
  onnx_detail::set_max_host_elements(testing::kOnnxFuzzHostElements);  // host values likewise
  onnx_detail::set_max_loop_iterations(testing::kOnnxFuzzLoopIterations);
  return *device;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<Device> device = reference_device();
  static const std::filesystem::path base_dir = fuzz::scratch_dir();
  static const std::string source = (base_dir / "fuzz-input.onnx").string();
  fuzz::no_exception_escapes([&] {
    try {
      const auto model =
          OnnxModel::load_bytes(fuzz::to_vector(data, size), source, base_dir, device);
      std::vector<Tensor> inputs;
      bool made = false;
      try {
        made = testing::make_onnx_inputs(*model, device, inputs);
      } catch (const Error&) {  // shapes no inputs can be made of (rank 9, ...): load only
      }
      if (made) {
        testing::WorkLimit limit(testing::kOnnxFuzzWorkLimit);
        model->run(inputs);
      }
    } catch (const Error& error) {
      fuzz::check_outcome(error.status(), source, 3000);
    }
  });
  return 0;
}
