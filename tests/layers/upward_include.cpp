// A file of the tensor layer that includes a header of the train layer, above it. It must not
// compile: tests/layers/check_layers.cmake builds it and expects the include to be missing.
#include "train/trainer_impl.h"

int switchyard_layer_probe_upward() {
  return 0;
}
