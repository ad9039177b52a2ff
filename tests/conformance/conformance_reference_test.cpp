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

// Drawn cases (`conformance --drawn N`): every draw must lie inside its op's domain, so that the
// reference runs it and agrees with itself; case i of an op must not depend on N.
const conformance::Report& drawn_report(int count, uint64_t seed) {
  static std::map<std::pair<int, uint64_t>, conformance::Report> reports;
  auto found = reports.find({count, seed});
  if (found == reports.end()) {
    std::shared_ptr<Device> device = testing::reference_device();
    conformance::Options options;
    options.filter = "/drawn";
    options.drawn = count;
    options.seed = seed;
    found =
        reports.emplace(std::make_pair(count, seed), conformance::run(*device, *device, options))
            .first;
  }
  return found->second;
}

TEST_CASE("conformance: drawn cases lie in their ops' domains and reproduce", "[conformance]") {
  const conformance::Report& report = drawn_report(60, 7);
  std::map<std::string, int> per_op;
  std::set<std::string> names, dtypes;
  for (const conformance::CaseResult& result : report.cases) {
    INFO(result.name << ": " << conformance::outcome_name(result.outcome) << ": " << result.reason);
    CHECK(result.outcome == conformance::Outcome::kPassed);
    CHECK(names.insert(result.name).second);
    CHECK(result.name.find("/drawn") != std::string::npos);
    ++per_op[result.op];
    dtypes.insert(result.dtype);
  }
  // Every op of the op set, 60 cases each, in all three float dtypes (and COPY, FILL, GATHER and
  // SCATTER_ADD in the integer ones): an op added to the ABI needs drawn cases too.
  for (uint32_t op = 0; op < SY_OP_COUNT; ++op) {
    const std::string label = conformance::op_label(static_cast<sy_op>(op));
    INFO(label);
    CHECK(per_op[label] == 60);
  }
  CHECK(per_op.size() == SY_OP_COUNT);
  CHECK(dtypes == std::set<std::string>{"f32", "f16", "bf16", "i32", "i64"});
  // Fewer cases: the same first ones; another seed: other shapes.
  const conformance::Report& fewer = drawn_report(10, 7);
  for (const conformance::CaseResult& result : fewer.cases) {
    INFO(result.name);
    CHECK(names.count(result.name) == 1);
  }
  int shared = 0;
  for (const conformance::CaseResult& result : drawn_report(10, 8).cases) {
    shared += static_cast<int>(names.count(result.name));
  }
  CHECK(shared < static_cast<int>(fewer.cases.size()) / 4);
}

}  // namespace
}  // namespace switchyard
