// Checks a parsed document against the schema (config_schema.h).
#pragma once

#include <string>
#include <vector>

#include "runtime/config_document.h"

namespace switchyard {

struct ConfigError {
  SourceLocation location;
  std::string text;  // the whole line: "file:line:col: key 'a.b': ..."
};

// Every problem in `document`: duplicate keys, unknown keys, wrong types, values out of range or
// not allowed. Sorted by position, --set overrides first. Empty when the document is valid.
std::vector<ConfigError> validate_document(const ConfigDocument& document);

}  // namespace switchyard
