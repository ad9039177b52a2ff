// Small helpers shared by the configuration code: parsing scalars strictly, recognising backend
// names and device specs, and phrasing "unknown name" messages with a did-you-mean suggestion.
//
// They return plain values or a problem description (empty when fine) instead of Status, so the
// caller can put the description in its own context ("file:line:col: key 'x': ..." for the
// YAML file, "SWITCHYARD_DEVICE=...: ..." for the environment).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace switchyard::config_values {

std::string join(const std::vector<std::string>& parts, const std::string& separator);

// The candidate closest to `name` by edit distance (case-insensitive, adjacent swaps count one),
// if it is close enough to be a plausible typo.
std::optional<std::string> closest_name(const std::string& name,
                                        const std::vector<std::string>& candidates);

// "unknown <noun> 'x'; did you mean 'y'?" followed, when `always_list` or when nothing is close,
// by the allowed names: "unknown backend 'x', expected one of: a, b".
std::string unknown_name_message(const std::string& noun, const std::string& name,
                                 const std::vector<std::string>& candidates, bool always_list);

// Strict scalar parsing: the whole text must be the value.
std::optional<int64_t> parse_int(const std::string& text);    // decimal, optional sign
std::optional<double> parse_double(const std::string& text);  // finite decimal or exponent form
std::optional<bool> parse_bool(const std::string& text);      // true/false, yes/no, on/off

// Empty when `name` is a known backend (known_backend_names(plugin_paths)), else an
// "unknown backend ..." description.
std::string check_backend_name(const std::string& name,
                               const std::vector<std::filesystem::path>& plugin_paths = {});

// Empty when `spec` is auto | cpu | <backend> | <backend>:<index>, else what is wrong with it.
std::string check_device_spec(const std::string& spec,
                              const std::vector<std::filesystem::path>& plugin_paths = {});

// "auto, cpu, <backend> or <backend>:<index> (<backend> one of: ...)"
std::string device_spec_expected(const std::vector<std::filesystem::path>& plugin_paths = {});

}  // namespace switchyard::config_values
