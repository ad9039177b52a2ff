// Confusion matrices and the per-class scores derived from them (switchyard/metrics.h).
#include <algorithm>
#include <cstdio>

#include "switchyard/metrics.h"

namespace switchyard {
namespace {

double ratio(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

double harmonic_mean(double precision, double recall) {
  return precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
}

// Row labels: the given names when there is one per class, else the class indices. Long names are
// cut so that the table stays readable.
std::vector<std::string> row_labels(const std::vector<std::string>& names, int64_t class_count) {
  constexpr size_t kMaxLabel = 24;
  std::vector<std::string> labels;
  for (int64_t c = 0; c < class_count; ++c) {
    std::string label = static_cast<int64_t>(names.size()) == class_count
                            ? names[static_cast<size_t>(c)]
                            : std::to_string(c);
    if (label.size() > kMaxLabel) label = label.substr(0, kMaxLabel - 3) + "...";
    labels.push_back(std::move(label));
  }
  return labels;
}

std::string format_row(const std::string& label, int width, const ClassScores& s) {
  char line[160];
  std::snprintf(line, sizeof(line), "  %-*s %9.4f %9.4f %9.4f %9lld\n", width, label.c_str(),
                s.precision, s.recall, s.f1, static_cast<long long>(s.support));
  return line;
}

std::string format_matrix(const ConfusionMatrix& matrix, const std::vector<std::string>& labels,
                          int width) {
  const int64_t n = matrix.class_count();
  int cell = 3;
  for (const int64_t count : matrix.counts()) {
    cell = std::max(cell, static_cast<int>(std::to_string(count).size()));
  }
  std::string text =
      "  confusion matrix (rows: true class, columns: predicted class, in the same "
      "order)\n";
  char part[64];
  std::snprintf(part, sizeof(part), "  %-*s", width, "");
  text += part;
  for (int64_t p = 0; p < n; ++p) {
    std::snprintf(part, sizeof(part), " %*lld", cell, static_cast<long long>(p));
    text += part;
  }
  text += "\n";
  for (int64_t t = 0; t < n; ++t) {
    std::snprintf(part, sizeof(part), "  %-*s", width, labels[static_cast<size_t>(t)].c_str());
    text += part;
    for (int64_t p = 0; p < n; ++p) {
      std::snprintf(part, sizeof(part), " %*lld", cell, static_cast<long long>(matrix.at(t, p)));
      text += part;
    }
    text += "\n";
  }
  return text;
}

}  // namespace

ConfusionMatrix::ConfusionMatrix(int64_t class_count)
    : class_count_(std::max<int64_t>(class_count, 0)),
      counts_(static_cast<size_t>(class_count_ * class_count_), 0) {}

void ConfusionMatrix::add(int64_t true_class, int64_t predicted_class) {
  if (true_class < 0 || true_class >= class_count_ || predicted_class < 0 ||
      predicted_class >= class_count_) {
    ++ignored_;
    return;
  }
  ++counts_[static_cast<size_t>(true_class * class_count_ + predicted_class)];
  ++samples_;
}

void ConfusionMatrix::add_all(const std::vector<int32_t>& truth,
                              const std::vector<int64_t>& predicted) {
  const size_t n = std::min(truth.size(), predicted.size());
  for (size_t i = 0; i < n; ++i) add(truth[i], predicted[i]);
}

int64_t ConfusionMatrix::at(int64_t true_class, int64_t predicted_class) const {
  return counts_[static_cast<size_t>(true_class * class_count_ + predicted_class)];
}

ClassificationReport classification_report(const ConfusionMatrix& matrix) {
  ClassificationReport report;
  report.matrix = matrix;
  report.samples = matrix.samples();
  const int64_t n = matrix.class_count();
  int64_t correct = 0;
  for (int64_t c = 0; c < n; ++c) {
    int64_t predicted_as = 0;  // column sum
    int64_t support = 0;       // row sum
    for (int64_t k = 0; k < n; ++k) {
      predicted_as += matrix.at(k, c);
      support += matrix.at(c, k);
    }
    const int64_t hits = matrix.at(c, c);
    correct += hits;
    ClassScores scores;
    scores.precision = ratio(hits, predicted_as);
    scores.recall = ratio(hits, support);
    scores.f1 = harmonic_mean(scores.precision, scores.recall);
    scores.support = support;
    report.per_class.push_back(scores);
  }
  for (const ClassScores& s : report.per_class) {
    report.macro.precision += s.precision / static_cast<double>(n);
    report.macro.recall += s.recall / static_cast<double>(n);
    report.macro.f1 += s.f1 / static_cast<double>(n);
    const double weight = ratio(s.support, report.samples);
    report.weighted.precision += s.precision * weight;
    report.weighted.recall += s.recall * weight;
    report.weighted.f1 += s.f1 * weight;
  }
  report.macro.support = report.samples;
  report.weighted.support = report.samples;
  report.accuracy = ratio(correct, report.samples);
  return report;
}

std::string format_classification_report(const ClassificationReport& report,
                                         const std::vector<std::string>& class_names,
                                         int64_t max_matrix_classes) {
  const int64_t n = report.matrix.class_count();
  const std::vector<std::string> labels = row_labels(class_names, n);
  int width = static_cast<int>(std::string("weighted avg").size());
  for (const std::string& label : labels) width = std::max(width, static_cast<int>(label.size()));
  char line[160];
  std::snprintf(line, sizeof(line), "  %-*s %9s %9s %9s %9s\n", width, "class", "precision",
                "recall", "f1", "support");
  std::string text = line;
  for (int64_t c = 0; c < n; ++c) {
    text += format_row(labels[static_cast<size_t>(c)], width, report.per_class[c]);
  }
  text += format_row("macro avg", width, report.macro);
  text += format_row("weighted avg", width, report.weighted);
  std::snprintf(line, sizeof(line), "  %-*s %9s %9s %9.4f %9lld\n", width, "accuracy", "", "",
                report.accuracy, static_cast<long long>(report.samples));
  text += line;
  if (n > max_matrix_classes) {
    text += "  confusion matrix: " + std::to_string(n) + " classes, more than the " +
            std::to_string(max_matrix_classes) +
            " printed here; the --metrics JSON file holds all of it\n";
  } else {
    text += format_matrix(report.matrix, labels, width);
  }
  return text;
}

}  // namespace switchyard
