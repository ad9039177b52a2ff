// The memory budget of what a file asks for. Every size a reader takes from a file (an ONNX
// model's input and output extents and its initializers, a checkpoint's tensor records, a
// safetensors entry, the length of a file read whole) is checked here before anything of that size
// is allocated, so that a damaged or hostile file is refused with a message naming it instead of
// ending in std::bad_alloc, the OOM killer or a crash. Private to the core.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "switchyard/status.h"

namespace switchyard {
class Device;
}

namespace switchyard::detail {

struct MemoryBudget {
  uint64_t bytes = 0;
  // Where the figure comes from: "the host's physical memory", "the memory limit of reference:0",
  // "the memory of cuda:0".
  std::string source;
};

// The host's physical memory (sysconf(_SC_PHYS_PAGES) * the page size). With a device, the
// smallest of that, the device's memory and its memory limit (Device::set_memory_limit), where the
// device reports them.
MemoryBudget memory_budget(const Device* device = nullptr);

// The bytes of a tensor of `shape` with `element_bytes` per element, or nullopt when the product
// does not fit 64 bits. Negative extents count as 0 (callers refuse them first).
std::optional<uint64_t> shape_bytes(const std::vector<int64_t>& shape, uint64_t element_bytes);

// OK when `bytes` fit the budget; otherwise RESOURCE_EXHAUSTED naming `file` (may be empty) and
// `what` (e.g. "one sample of input 'x' (float [batch, 1099511627776])"):
//   "model.onnx: 4.0 TiB (4398046511104 bytes) for <what> exceed the memory budget of 23.5 GiB
//    (25220820992 bytes), the host's physical memory"
Status check_memory_budget(uint64_t bytes, const std::string& what, const std::string& file,
                           const Device* device = nullptr);

// The same for a tensor of `shape`: also RESOURCE_EXHAUSTED when its size does not even fit 64
// bits ("<what> needs more than 2^64 bytes").
Status check_shape_budget(const std::vector<int64_t>& shape, uint64_t element_bytes,
                          const std::string& what, const std::string& file,
                          const Device* device = nullptr);

}  // namespace switchyard::detail
