// conformance::run: builds each case, runs it on the target and the reference, and judges it.
#include <algorithm>
#include <exception>
#include <iterator>
#include <string>

#include "conformance/cases.h"
#include "conformance/compare.h"
#include "conformance/conformance.h"
#include "conformance/execute.h"
#include "conformance/op_names.h"
#include "support/dtype_codec.h"
#include "switchyard/plugin.h"

namespace switchyard::conformance {
namespace {

CaseResult failed(CaseResult result, std::string reason) {
  result.outcome = Outcome::kFailed;
  result.reason = std::move(reason);
  return result;
}

std::string tensor_role(const OpCase& op_case, size_t result_index) {
  if (result_index < op_case.outputs.size()) return "output " + std::to_string(result_index);
  const size_t input = op_case.updated_inputs[result_index - op_case.outputs.size()];
  return "input " + std::to_string(input) + " (updated in place)";
}

// Compares every produced tensor; the worst NMSE is reported, the first problem is the reason.
CaseResult judge_results(CaseResult result, const OpCase& op_case,
                         const std::vector<HostTensor>& target,
                         const std::vector<HostTensor>& reference) {
  if (target.size() != reference.size() || target.empty()) {
    return failed(std::move(result), "internal: result counts differ or nothing to compare");
  }
  std::string problem;
  for (size_t i = 0; i < target.size(); ++i) {
    Comparison cmp = compare_tensors(target[i], reference[i], result.tolerance);
    result.nmse = std::max(result.nmse, cmp.nmse);
    if (cmp.within_tolerance && op_case.normal_element_bound) {
      cmp = check_normal_element_bound(target[i], reference[i], op_case.params.random.a,
                                       op_case.params.random.b);
    }
    if (cmp.within_tolerance && i < op_case.outputs.size()) {
      cmp = check_outside_view_unchanged(op_case.outputs[i], target[i]);
    }
    if (!cmp.within_tolerance && problem.empty()) {
      problem = tensor_role(op_case, i) + ": " + cmp.problem;
    }
  }
  if (!problem.empty()) return failed(std::move(result), problem);
  result.outcome = Outcome::kPassed;
  return result;
}

std::string status_text(const Status& status) {
  return status.ok() ? "OK" : status.to_string();
}

CaseResult judge_error_case(CaseResult result, const OpCase& op_case, Device& target,
                            Device& reference) {
  const bool target_async = (target.plugin().capabilities() & SY_CAP_ASYNC) != 0;
  if (op_case.error_needs_synchronous_backend && target_async) {
    result.reason = "backend " + target.backend() +
                    " is asynchronous: data-dependent errors are not checked (docs/ops.md 1)";
    return result;
  }
  const std::string expected = status_code_name(op_case.expected_error);
  const Status reference_status = execute_case(reference, op_case).status();
  if (reference_status.code() != op_case.expected_error) {
    return failed(std::move(result), "reference backend: expected " + expected + ", got " +
                                         status_text(reference_status));
  }
  const Status target_status = execute_case(target, op_case).status();
  if (target_status.code() != op_case.expected_error) {
    return failed(std::move(result),
                  "expected " + expected + ", got " + status_text(target_status));
  }
  result.outcome = Outcome::kPassed;
  return result;
}

CaseResult run_built_case(CaseResult result, const CaseDef& def, const OpCase& op_case,
                          Device& target, Device& reference) {
  result.tolerance =
      op_case.tolerance >= 0.0 ? op_case.tolerance : default_tolerance(def.op, def.dtype);
  if (op_case.expected_error != StatusCode::kOk) {
    return judge_error_case(std::move(result), op_case, target, reference);
  }
  if (!reference.supports(def.op, def.dtype)) {
    return failed(std::move(result), "reference backend " + reference.backend() +
                                         " does not support " + result.op + " for " + result.dtype);
  }
  Result<std::vector<HostTensor>> expected = execute_case(reference, op_case);
  if (!expected.ok()) {
    return failed(std::move(result), "reference backend: " + expected.status().to_string());
  }
  Result<std::vector<HostTensor>> actual = execute_case(target, op_case);
  if (!actual.ok()) return failed(std::move(result), actual.status().to_string());
  return judge_results(std::move(result), op_case, *actual, *expected);
}

CaseResult run_case(const CaseDef& def, Device& target, Device& reference, uint64_t seed) {
  CaseResult result;
  result.name = def.name;
  result.op = op_label(def.op);
  result.dtype = dtype_label(def.dtype);
  if (!target.supports(def.op, def.dtype)) {
    result.reason =
        "backend " + target.backend() + " does not support " + result.op + " for " + result.dtype;
    return result;
  }
  try {
    Generator gen(Generator::seed_for_case(seed, def.name));
    const OpCase op_case = def.build(gen);
    return run_built_case(std::move(result), def, op_case, target, reference);
  } catch (const std::exception& error) {
    return failed(std::move(result), std::string("conformance suite error: ") + error.what());
  } catch (...) {
    return failed(std::move(result), "conformance suite error: unknown exception");
  }
}

int count_outcome(const std::vector<CaseResult>& cases, Outcome outcome) {
  int count = 0;
  for (const CaseResult& c : cases) count += c.outcome == outcome ? 1 : 0;
  return count;
}

}  // namespace

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPassed:
      return "passed";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kSkipped:
      return "skipped";
  }
  return "unknown";
}

int Report::passed() const {
  return count_outcome(cases, Outcome::kPassed);
}
int Report::failed() const {
  return count_outcome(cases, Outcome::kFailed);
}
int Report::skipped() const {
  return count_outcome(cases, Outcome::kSkipped);
}

Report run(Device& target, Device& reference, const Options& options) {
  Report report;
  report.backend = target.backend();
  report.device_id = target.id();
  CaseTable table;
  try {
    table = all_cases();
    CaseTable drawn = drawn_cases(options.seed, options.drawn);
    table.insert(table.end(), std::make_move_iterator(drawn.begin()),
                 std::make_move_iterator(drawn.end()));
  } catch (const std::exception& error) {
    CaseResult broken;
    broken.name = "conformance/table";
    broken.outcome = Outcome::kFailed;
    broken.reason = std::string("could not build the case table: ") + error.what();
    report.cases.push_back(broken);
    return report;
  }
  for (const CaseDef& def : table) {
    if (!options.filter.empty() && def.name.find(options.filter) == std::string::npos) continue;
    report.cases.push_back(run_case(def, target, reference, options.seed));
  }
  return report;
}

}  // namespace switchyard::conformance
