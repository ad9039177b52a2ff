// The per-op, per-dtype summary of a conformance report: one row per op and dtype instead of one
// line per case.
#include <algorithm>

#include "conformance/conformance.h"

namespace switchyard::conformance {

std::vector<OpSummary> summarize_by_op(const Report& report) {
  std::vector<OpSummary> rows;
  for (const CaseResult& c : report.cases) {
    const bool gradient = c.name.rfind("grad/", 0) == 0;
    const std::string op = gradient ? c.op + " (gradient)" : c.op;
    auto row = std::find_if(rows.begin(), rows.end(),
                            [&](const OpSummary& r) { return r.op == op && r.dtype == c.dtype; });
    if (row == rows.end()) {
      rows.push_back(OpSummary{op, c.dtype, 0, 0, 0, {}});
      row = rows.end() - 1;
    }
    switch (c.outcome) {
      case Outcome::kPassed:
        ++row->passed;
        break;
      case Outcome::kFailed:
        ++row->failed;
        break;
      case Outcome::kSkipped:
        ++row->skipped;
        if (std::find(row->skip_reasons.begin(), row->skip_reasons.end(), c.reason) ==
            row->skip_reasons.end()) {
          row->skip_reasons.push_back(c.reason);
        }
        break;
    }
  }
  return rows;
}

}  // namespace switchyard::conformance
