#include "runtime/config_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "switchyard/config.h"

namespace switchyard::config_values {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// adjacent characters each cost one, so "cdua" is one edit from "cuda".
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

bool is_plausible_typo(const std::string& name, const std::string& candidate,
                       std::size_t distance) {
  const std::size_t allowed = name.size() <= 3 ? 1 : 2;
  if (distance <= allowed && distance < name.size()) return true;
  // A truncated name ("batch" for "batch_size") is a plausible slip too.
  return name.size() >= 4 && candidate.rfind(name, 0) == 0;
}

}  // namespace

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) text += separator;
    text += parts[i];
  }
  return text;
}

std::optional<std::string> closest_name(const std::string& name,
                                        const std::vector<std::string>& candidates) {
  const std::string wanted = lower(name);
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    const std::string option = lower(candidate);
    const std::size_t distance = edit_distance(wanted, option);
    if (!is_plausible_typo(wanted, option, distance)) continue;
    if (!best || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string unknown_name_message(const std::string& noun, const std::string& name,
                                 const std::vector<std::string>& candidates, bool always_list) {
  std::string message = "unknown " + noun + " '" + name + "'";
  const std::optional<std::string> suggestion = closest_name(name, candidates);
  const std::string list = "expected one of: " + join(candidates, ", ");
  if (!suggestion) return message + ", " + list;
  if (!always_list) return message + "; did you mean '" + *suggestion + "'?";
  return message + " (did you mean '" + *suggestion + "'?), " + list;
}

std::optional<int64_t> parse_int(const std::string& text) {
  std::size_t start = (!text.empty() && text[0] == '+') ? 1 : 0;
  if (start == 1 && text.size() > 1 && text[1] == '-') return std::nullopt;
  int64_t value = 0;
  const char* first = text.data() + start;
  const char* last = text.data() + text.size();
  if (first == last) return std::nullopt;
  const auto [end, error] = std::from_chars(first, last, value);
  if (error != std::errc() || end != last) return std::nullopt;
  return value;
}

std::optional<double> parse_double(const std::string& text) {
  std::size_t start = (!text.empty() && text[0] == '+') ? 1 : 0;
  if (start == 1 && text.size() > 1 && text[1] == '-') return std::nullopt;
  double value = 0.0;
  const char* first = text.data() + start;
  const char* last = text.data() + text.size();
  if (first == last) return std::nullopt;
  const auto [end, error] = std::from_chars(first, last, value, std::chars_format::general);
  if (error != std::errc() || end != last || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<bool> parse_bool(const std::string& text) {
  const std::string word = lower(text);
  if (word == "true" || word == "yes" || word == "on") return true;
  if (word == "false" || word == "no" || word == "off") return false;
  return std::nullopt;
}

std::string check_backend_name(const std::string& name,
                               const std::vector<std::filesystem::path>& plugin_paths) {
  const std::vector<std::string> known = known_backend_names(plugin_paths);
  if (std::find(known.begin(), known.end(), name) != known.end()) return "";
  return unknown_name_message("backend", name, known, true);
}

std::string device_spec_expected(const std::vector<std::filesystem::path>& plugin_paths) {
  return "auto, cpu, <backend> or <backend>:<index>, where <backend> is one of: " +
         join(known_backend_names(plugin_paths), ", ");
}

std::string check_device_spec(const std::string& spec,
                              const std::vector<std::filesystem::path>& plugin_paths) {
  if (spec == "auto" || spec == "cpu") return "";
  const std::size_t colon = spec.find(':');
  const std::string backend = spec.substr(0, colon);
  const std::vector<std::string> known = known_backend_names(plugin_paths);
  if (std::find(known.begin(), known.end(), backend) == known.end()) {
    std::string problem = "unknown backend '" + backend + "' in device '" + spec + "'";
    if (auto suggestion = closest_name(backend, known)) {
      problem += " (did you mean '" + *suggestion + "'?)";
    }
    return problem + ", expected " + device_spec_expected(plugin_paths);
  }
  if (colon == std::string::npos) return "";
  const std::string index = spec.substr(colon + 1);
  const bool digits_only = !index.empty() && std::all_of(index.begin(), index.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
  if (digits_only && parse_int(index)) return "";
  return "bad device index '" + index + "' in device '" + spec +
         "', expected a non-negative integer after ':', such as " + backend + ":0";
}

}  // namespace switchyard::config_values
