// A file of the tensor layer that includes headers of its own layer and of the layers below it
// (runtime, support). It must compile, so that the upward probe's failure means the layer rule and
// not a broken probe.
#include "autograd/node.h"
#include "runtime/memory_budget.h"
#include "support/json_io.h"
#include "tensor/tensor_impl.h"

int switchyard_layer_probe_downward() {
  return 0;
}
