// ONNX's own backend node tests (python3-onnx's generators, written out by
// tools/onnx/node_suite.py) for every op type the importer runs, on every backend built here. A
// case either passes (its outputs within the case's tolerances, integer outputs exact and i64) or
// is refused with an Error naming the file; it never gives another answer. Which cases pass and
// which are refused is committed in tests/onnx/node_suite_expected.txt, so that a case that stops
// passing, or one that starts to, is seen; a case whose expected data we do not follow is listed
// as "differs" with the reason.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "onnx/onnx_test_support.h"
#include "switchyard/onnx.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

struct Verdict {
  std::string kind;  // "passed", "refused", "differs"
  std::string detail;
};

// The first element of `ours` outside |ours - expected| <= atol + rtol |expected| (NaN matches
// NaN, an infinity the same infinity); empty when there is none.
std::string float_difference(const Tensor& ours, const Tensor& expected, double rtol, double atol) {
  const std::vector<float> a = ours.to_host_float(), b = expected.to_host_float();
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    const bool close = std::isnan(y)   ? std::isnan(x)
                       : std::isinf(y) ? x == y
                                       : std::fabs(x - y) <= atol + rtol * std::fabs(y);
    if (close) continue;
    std::ostringstream out;
    out << "element " << i << " is " << x << ", expected " << y;
    return out.str();
  }
  return {};
}

// Integer outputs are i64 (switchyard/onnx.h) and exact.
std::string integer_difference(const Tensor& ours, const Tensor& expected) {
  if (ours.dtype() != DType::kI64)
    return std::string("an integer output given as ") + dtype_name(ours.dtype());
  const std::vector<int64_t> a = ours.to_host_int64(), b = expected.to_host_int64();
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) {
      return "element " + std::to_string(i) + " is " + std::to_string(a[i]) + ", expected " +
             std::to_string(b[i]);
    }
  }
  return {};
}

Verdict run_case(const std::filesystem::path& folder, const std::shared_ptr<Device>& device) {
  double rtol = 1e-3, atol = 1e-7;
  std::ifstream(folder / "case.txt") >> rtol >> atol;
  try {
    const auto model = OnnxModel::load(folder / "model.onnx", device);
    for (const auto& set : data_sets(folder)) {
      const std::vector<Tensor> outputs = model->run(load_set(set, "input", device));
      const std::vector<Tensor> expected = load_set(set, "output", device);
      if (outputs.size() != expected.size()) {
        return {"differs", std::to_string(outputs.size()) + " outputs, expected " +
                               std::to_string(expected.size())};
      }
      for (size_t k = 0; k < outputs.size(); ++k) {
        const std::string where = set.filename().string() + " output " + std::to_string(k) + ": ";
        if (outputs[k].shape() != expected[k].shape()) {
          return {"differs", where + "shape " + outputs[k].shape().to_string() + ", expected " +
                                 expected[k].shape().to_string()};
        }
        const std::string difference = is_floating(expected[k].dtype())
                                           ? float_difference(outputs[k], expected[k], rtol, atol)
                                           : integer_difference(outputs[k], expected[k]);
        if (!difference.empty()) return {"differs", where + difference};
      }
    }
    return {"passed", ""};
  } catch (const Error& error) {
    const std::string message = error.status().message();
    if (message.find(folder.string()) == std::string::npos)
      return {"refused without naming the file", message};
    return {"refused", message.substr(folder.string().size() + 1)};
  } catch (const std::exception& error) {
    return {"failed with another exception", error.what()};
  }
}

// tests/onnx/node_suite_expected.txt (or the copy a packed suite carries, for a machine without
// the sources): "<case> passed|refused|differs" a line, '#' comments.
// A listed case: its verdict and the note after '#', which for a refusal or a difference starts
// the message (after the file's name) that the case must give again.
struct Expected {
  std::string verdict, note;
};

std::map<std::string, Expected> expected_verdicts(const std::filesystem::path& cases) {
  std::filesystem::path path = cases / "node_suite_expected.txt";
  if (!std::filesystem::exists(path)) {
    path =
        std::filesystem::path(SWITCHYARD_SOURCE_DIR) / "tests" / "onnx" / "node_suite_expected.txt";
  }
  std::ifstream file(path);
  REQUIRE(file);
  std::map<std::string, Expected> verdicts;
  std::string line;
  while (std::getline(file, line)) {
    const size_t hash = line.find('#');
    std::istringstream words(line.substr(0, hash));
    std::string name, verdict;
    if (!(words >> name >> verdict)) continue;
    std::string note = hash == std::string::npos ? "" : line.substr(hash + 1);
    note.erase(0, std::min(note.find_first_not_of(' '), note.size()));
    note.erase(note.find_last_not_of(' ') + 1);
    verdicts[name] = {verdict, note};
  }
  return verdicts;
}

bool has_cases(const std::filesystem::path& folder) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    if (std::filesystem::exists(entry.path() / "model.onnx")) return true;
  }
  return false;
}

}  // namespace

TEST_CASE(
    "ONNX's node tests of every op the importer runs pass or are refused, never answered "
    "otherwise, on every backend",
    "[onnx][node-suite]") {
  // SWITCHYARD_NODE_SUITE_DIR=DIR: the cases are written there and kept, or, where DIR already
  // holds them (tools/gpu-check packs them), read from there without python3-onnx.
  const char* kept = std::getenv("SWITCHYARD_NODE_SUITE_DIR");
  const std::filesystem::path out =
      kept != nullptr ? std::filesystem::path(kept)
                      : std::filesystem::temp_directory_path() /
                            ("switchyard-onnx-node-suite-" + std::to_string(getpid()));
  if (kept == nullptr || !has_cases(out)) {
    if (std::system("/usr/bin/python3 -c 'import onnx.backend.test.case.node' >/dev/null 2>&1") !=
        0) {
      skip_test("/usr/bin/python3 cannot import onnx's node test generators (python3-onnx)");
      return;
    }
    std::string ops;
    for (const std::string& op : onnx_supported_ops()) ops += (ops.empty() ? "" : ",") + op;
    const std::string command = "/usr/bin/python3 " + std::string(SWITCHYARD_SOURCE_DIR) +
                                "/tools/onnx/node_suite.py --out " + out.string() + " --ops " + ops;
    REQUIRE(std::system(command.c_str()) == 0);
  }
  std::vector<std::filesystem::path> cases;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    if (entry.is_directory()) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());

  const std::map<std::string, Expected> expected = expected_verdicts(out);
  std::map<std::string, bool> seen;
  // SWITCHYARD_NODE_SUITE_OBSERVED=FILE writes the first backend's verdicts there, in the
  // expected file's format, to review and commit after a change to the importer.
  const char* observed_path = std::getenv("SWITCHYARD_NODE_SUITE_OBSERVED");
  std::ofstream observed;
  if (observed_path != nullptr) observed.open(observed_path);
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    std::map<std::string, int> counts;
    for (const auto& folder : cases) {
      const std::string name = folder.filename().string();
      const Verdict verdict = run_case(folder, device);
      ++counts[verdict.kind];
      if (observed.is_open() && seen.count(name) == 0)
        observed << name << " " << verdict.kind << "  # " << verdict.detail.substr(0, 160) << "\n";
      seen[name] = true;
      INFO(name << " on " << device->backend() << ": " << verdict.kind << ": " << verdict.detail);
      const auto want = expected.find(name);
      if (want == expected.end()) {
        FAIL_CHECK("not in tests/onnx/node_suite_expected.txt (a new case: add it)");
        continue;
      }
      CHECK(verdict.kind == want->second.verdict);
      // A refusal (or difference) for the reason listed, not for another one.
      if (verdict.kind != "passed") CHECK(verdict.detail.rfind(want->second.note, 0) == 0);
    }
    std::cout << "ONNX node suite on " << device->backend() << ": " << cases.size() << " cases,";
    for (const auto& [kind, count] : counts) std::cout << " " << count << " " << kind << ";";
    std::cout << "\n";
  });
  for (const auto& [name, verdict] : expected) {
    INFO(name << " is listed in tests/onnx/node_suite_expected.txt");
    CHECK(seen.count(name) == 1);
  }
  if (kept == nullptr) std::filesystem::remove_all(out);
}
