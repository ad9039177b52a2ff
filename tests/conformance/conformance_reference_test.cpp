// The conformance suite run with the reference plugin as both target and oracle: every case must
// pass (so the runner, the case table and the reference agree with themselves), and every op of
// the ABI must have at least one case (so a new op without cases fails here).
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include "conformance/conformance.h"
#include "conformance/op_names.h"
#include "test_support.h"

namespace switchyard {
namespace {

const conformance::Report& reference_report() {
  static const conformance::Report report = [] {
    std::shared_ptr<Device> device = testing::reference_device();
    return conformance::run(*device, *device);
  }();
  return report;
}

TEST_CASE("conformance: reference against itself passes every case", "[conformance]") {
  const conformance::Report& report = reference_report();
  REQUIRE(report.backend == "reference");
  REQUIRE(report.cases.size() > 500);
  for (const conformance::CaseResult& result : report.cases) {
    INFO(result.name << ": " << conformance::outcome_name(result.outcome) << ": " << result.reason);
    CHECK(result.outcome == conformance::Outcome::kPassed);
  }
  CHECK(report.failed() == 0);
  CHECK(report.skipped() == 0);
  CHECK(report.passed() == static_cast<int>(report.cases.size()));
}

TEST_CASE("conformance: every sy_op value has a case", "[conformance]") {
  std::set<std::string> ops_with_cases;
  for (const conformance::CaseResult& result : reference_report().cases)
    ops_with_cases.insert(result.op);
  for (int op = 0; op < SY_OP_COUNT; ++op) {
    const std::string label = conformance::op_label(static_cast<sy_op>(op));
    INFO("sy_op " << op << " (" << label << ")");
    CHECK(ops_with_cases.count(label) == 1);
  }
}

TEST_CASE("conformance: every float op is covered in f32, f16 and bf16", "[conformance]") {
  std::map<std::string, std::set<std::string>> dtypes_by_op;
  for (const conformance::CaseResult& result : reference_report().cases) {
    dtypes_by_op[result.op].insert(result.dtype);
  }
  for (const auto& [op, dtypes] : dtypes_by_op) {
    INFO(op);
    CHECK(dtypes.count("f32") == 1);
    CHECK(dtypes.count("f16") == 1);
    CHECK(dtypes.count("bf16") == 1);
  }
  for (const char* op : {"gather", "scatter_add", "copy", "fill"}) {
    INFO(op << " takes integer data too");
    CHECK(dtypes_by_op[op].count("i32") == 1);
    CHECK(dtypes_by_op[op].count("i64") == 1);
  }
}

TEST_CASE("conformance: case names are unique and reasons are empty on success", "[conformance]") {
  std::set<std::string> names;
  for (const conformance::CaseResult& result : reference_report().cases) {
    INFO(result.name);
    CHECK(names.insert(result.name).second);
    CHECK(result.name.rfind(result.op + "/" + result.dtype + "/", 0) == 0);
    if (result.outcome == conformance::Outcome::kPassed) CHECK(result.reason.empty());
    CHECK(result.nmse <= result.tolerance);
  }
}

TEST_CASE("conformance: the filter selects cases by name", "[conformance]") {
  std::shared_ptr<Device> device = testing::reference_device();
  conformance::Options options;
  options.filter = "matmul/f32/7x13x5";
  const conformance::Report report = conformance::run(*device, *device, options);
  REQUIRE(report.cases.size() >= 5);
  for (const conformance::CaseResult& result : report.cases) {
    CHECK(result.name.find("matmul/f32/7x13x5") != std::string::npos);
    CHECK(result.outcome == conformance::Outcome::kPassed);
  }
  options.filter = "no-such-case";
  CHECK(conformance::run(*device, *device, options).cases.empty());
}

}  // namespace
}  // namespace switchyard
