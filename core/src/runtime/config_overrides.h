// --set overrides: "dotted.key=value" assignments applied to a parsed document before it is
// validated, so an override is checked exactly like a value written in the file.
#pragma once

#include <string>

#include "runtime/config_document.h"

namespace switchyard {

// Parses `assignment` ("train.epochs=3", "backends=[reference]", "model.layers[1].p=0.2"), parses
// the value as YAML and stores it in `document.root`, creating intermediate maps as needed. The
// value (and every map and key created for it) is recorded in `document.override_nodes`, so that
// errors about it name the override: "--set 'train.epochs=abc': key 'train.epochs': ...".
Status apply_config_override(ConfigDocument& document, const std::string& assignment);

}  // namespace switchyard
