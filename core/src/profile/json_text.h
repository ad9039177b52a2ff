// Small JSON writers for the trace file: strings escaped so that any input (quotes, control
// characters, invalid UTF-8) still gives valid JSON, and numbers that are never NaN or infinite.
#pragma once

#include <string>
#include <string_view>

namespace switchyard::profile_detail {

// Appends `text` as a quoted JSON string. Invalid UTF-8 bytes become U+FFFD.
void append_json_string(std::string& out, std::string_view text);
// Appends `value` with `decimals` digits after the point; NaN and infinities are written as 0.
void append_json_number(std::string& out, double value, int decimals = 3);

}  // namespace switchyard::profile_detail
