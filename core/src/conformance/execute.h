// Runs one OpCase on one device: allocate, upload, dispatch, download, free.
#pragma once

#include <vector>

#include "conformance/cases.h"
#include "switchyard/device.h"
#include "switchyard/status.h"

namespace switchyard::conformance {

// The tensors the op produced, as the device left them: every output (whole storage, including
// elements outside the view), then every input listed in updated_inputs. All buffers are released
// before returning.
Result<std::vector<HostTensor>> execute_case(Device& device, const OpCase& op_case);

}  // namespace switchyard::conformance
