// switchyard conformance --backend NAME: every op and dtype of that backend against `reference`;
// with --large, a few ops at GPU sizes checked on the host instead.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "autograd/gradcheck.h"
#include "cli_common.h"
#include "conformance/conformance.h"
#include "support/json_io.h"

namespace switchyard::cli {
namespace {

Result<std::shared_ptr<Device>> open_device(Registry& registry, const RuntimeSettings& settings,
                                            const std::string& backend, uint32_t index) {
  auto plugin = registry.find(backend);
  if (plugin == nullptr) {
    for (const auto& p : registry.plugins()) {
      if (p.name == backend)
        return unavailable("backend '" + backend + "' was not loaded: " + p.reason);
    }
    return not_found("no plugin named '" + backend + "' in the search path");
  }
  return Device::create(plugin, index, backend_options(settings, backend));
}

// A NaN or infinite nmse (a backend that returned NaN) is written as null.
void print_json(const conformance::Report& report) {
  detail::Json summary = detail::Json::array();
  for (const auto& row : conformance::summarize_by_op(report)) {
    summary.push_back({{"op", row.op},
                       {"dtype", row.dtype},
                       {"passed", row.passed},
                       {"failed", row.failed},
                       {"skipped", row.skipped},
                       {"skip_reasons", row.skip_reasons}});
  }
  detail::Json cases = detail::Json::array();
  for (const auto& c : report.cases) {
    cases.push_back({{"name", c.name},
                     {"op", c.op},
                     {"dtype", c.dtype},
                     {"outcome", conformance::outcome_name(c.outcome)},
                     {"nmse", c.nmse},
                     {"tolerance", c.tolerance},
                     {"reason", c.reason}});
  }
  const detail::Json document = {{"backend", report.backend},
                                 {"device", report.device_id},
                                 {"device_settings", report.device_settings},
                                 {"passed", report.passed()},
                                 {"failed", report.failed()},
                                 {"skipped", report.skipped()},
                                 {"summary", summary},
                                 {"cases", cases}};
  std::cout << detail::json_text(document, 2) << "\n";
}

// One line per failed case (every case with --verbose), then one row per op and dtype, then the
// totals.
void print_text(const conformance::Report& report, bool verbose, bool large) {
  for (const auto& c : report.cases) {
    if (c.outcome != conformance::Outcome::kFailed && !verbose) continue;
    std::cout << conformance::outcome_name(c.outcome) << "  " << c.name;
    if (c.outcome != conformance::Outcome::kSkipped) {
      std::cout << "  nmse " << c.nmse << " (tolerance " << c.tolerance << ")";
    }
    if (!c.reason.empty()) std::cout << "  " << c.reason;
    std::cout << "\n";
  }
  const std::vector<conformance::OpSummary> rows = conformance::summarize_by_op(report);
  size_t op_width = 2;
  for (const auto& row : rows) op_width = std::max(op_width, row.op.size());
  std::cout << (large ? "large conformance of " : "conformance of ") << report.device_id
            << (large ? ", checked on the host" : " against the reference") << ", per op:\n";
  std::printf("  %-*s  %-5s  %6s  %6s  %7s\n", static_cast<int>(op_width), "op", "dtype", "passed",
              "failed", "skipped");
  for (const auto& row : rows) {
    std::printf("  %-*s  %-5s  %6d  %6d  %7d", static_cast<int>(op_width), row.op.c_str(),
                row.dtype.c_str(), row.passed, row.failed, row.skipped);
    if (!row.skip_reasons.empty()) {
      std::cout << "  skipped: " << row.skip_reasons.front();
      if (row.skip_reasons.size() > 1) {
        std::cout << " (+" << row.skip_reasons.size() - 1 << " other reasons, see --verbose)";
      }
    }
    std::cout << "\n";
  }
  std::cout << report.passed() << " passed, " << report.failed() << " failed, " << report.skipped()
            << " skipped\n";
}

// Gradients against finite differences on the target itself, reported as "grad/<case>" cases so
// that one report (and one exit code) covers forward ops and autograd.
void append_gradient_checks(const std::shared_ptr<Device>& target, const std::string& filter,
                            conformance::Report& report) {
  for (const auto& g : run_gradient_checks(target, filter)) {
    conformance::CaseResult c;
    c.name = "grad/" + g.name;
    c.op = g.op;
    c.dtype = "f32";
    c.outcome = g.outcome == GradCaseOutcome::kPassed   ? conformance::Outcome::kPassed
                : g.outcome == GradCaseOutcome::kFailed ? conformance::Outcome::kFailed
                                                        : conformance::Outcome::kSkipped;
    c.nmse = g.max_abs_error;  // for gradients: the largest absolute error
    c.reason = g.reason;
    report.cases.push_back(std::move(c));
  }
}

}  // namespace

int conformance_command(const Args& args) {
  po::options_description options("options");
  options.add_options()("backend", po::value<std::string>()->required(), "backend to check")(
      "device-index", po::value<uint32_t>()->default_value(0), "device of that backend")(
      "filter", po::value<std::string>()->default_value(""), "only cases whose name contains this")(
      "config", po::value<std::string>(), "YAML file (backend options, plugin paths)")(
      "json", "print JSON: totals, the per-op summary and every case")(
      "verbose,v", "print every case, not only the failed ones")(
      "no-gradients", "skip the finite-difference gradient checks")(
      "drawn", po::value<int>()->default_value(0),
      "also N cases per op with shapes, layouts and parameters drawn at random (named "
      "<op>/<dtype>/drawn<i>/...; --filter drawn runs them alone)")(
      "seed", po::value<uint64_t>()->default_value(1),
      "the suite seed: every case's values, and what the drawn cases draw")(
      "large", "the large mode instead: ops at sizes that fill a GPU, checked on the host")(
      "large-matmul", po::value<int64_t>()->default_value(4096),
      "--large: M = N = K of the matmuls")(
      "large-elements", po::value<int64_t>()->default_value(int64_t{1} << 27),
      "--large: elements of the elementwise ops, reductions and softmax (a multiple of 4096)")(
      "beyond-32bit", "--large: also an f16 add over 2^31 + 1027 elements (12 GiB on the device)");
  po::variables_map values;
  if (auto exit = parse_args(args, "usage: switchyard conformance --backend NAME [options]",
                             options, values)) {
    return *exit;
  }
  std::optional<Config> config = load_config_or_report(values);
  if (!config) return kExitUsage;
  Registry registry = discover_isolated(config->runtime());
  const std::string backend = values["backend"].as<std::string>();
  auto target =
      open_device(registry, config->runtime(), backend, values["device-index"].as<uint32_t>());
  if (!target.ok()) {
    print_error(target.status());
    return kExitUsage;
  }
  conformance::Report report;
  if (values.count("large") != 0) {
    conformance::LargeOptions large;
    large.matmul_size = values["large-matmul"].as<int64_t>();
    large.elements = values["large-elements"].as<int64_t>();
    large.beyond_32bit = values.count("beyond-32bit") != 0;
    large.filter = values["filter"].as<std::string>();
    report = conformance::run_large(**target, large);
  } else {
    auto reference = open_device(registry, config->runtime(), "reference", 0);
    if (!reference.ok()) {
      print_error(reference.status().with_context("the oracle"));
      return kExitUsage;
    }
    conformance::Options run_options;
    run_options.filter = values["filter"].as<std::string>();
    run_options.seed = values["seed"].as<uint64_t>();
    run_options.drawn = values["drawn"].as<int>();
    if (run_options.drawn < 0) {
      print_error(invalid_argument("--drawn " + std::to_string(run_options.drawn) +
                                   ": expected a number of cases >= 0"));
      return kExitUsage;
    }
    report = conformance::run(**target, **reference, run_options);
    if (values.count("no-gradients") == 0) {
      append_gradient_checks(*target, run_options.filter, report);
    }
  }
  report.device_settings = (*target)->settings();
  if (values.count("json") != 0) {
    print_json(report);
  } else {
    print_text(report, values.count("verbose") != 0, values.count("large") != 0);
  }
  if (report.failed() != 0) return kExitFailure;
  if (report.passed() == 0) {
    // Nothing checked is nothing proven: a filter that matched nothing, or a backend that skipped
    // every case, is not a green run.
    std::cerr << "switchyard conformance: no case passed on " << report.device_id
              << (report.cases.empty() ? " (no case matched)" : " (every case was skipped)")
              << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace switchyard::cli
