// Classification metrics computed on the host from predicted and true classes: a confusion
// matrix and, from it, per-class precision, recall and F1 with their macro and weighted averages;
// and regression metrics (RMSE, MAE, R^2) from predicted and true values.
//
// The definitions are scikit-learn's (precision_recall_fscore_support and confusion_matrix with
// labels = every class of the model and zero_division = 0): a class nothing was predicted as has
// precision 0, a class with no samples has recall 0, and both still count in the macro average.
// tests/cli checks these numbers against scikit-learn on the same predictions.
//
// Threads: plain values and functions without state: any number of threads at once.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <string>
#include <vector>

namespace switchyard {

// counts[true_class * class_count + predicted_class]: rows are true classes, columns predictions.
// Ownership: a plain value.
class ConfusionMatrix {
 public:
  ConfusionMatrix() = default;
  explicit ConfusionMatrix(int64_t class_count);

  // One sample; a class outside [0, class_count) is ignored (and counted in ignored()).
  void add(int64_t true_class, int64_t predicted_class);
  // Every pair of `truth` and `predicted` (the shorter length counts).
  void add_all(const std::vector<int32_t>& truth, const std::vector<int64_t>& predicted);

  int64_t class_count() const { return class_count_; }
  int64_t at(int64_t true_class, int64_t predicted_class) const;
  int64_t samples() const { return samples_; }
  int64_t ignored() const { return ignored_; }
  const std::vector<int64_t>& counts() const { return counts_; }

 private:
  int64_t class_count_ = 0;
  int64_t samples_ = 0;
  int64_t ignored_ = 0;
  std::vector<int64_t> counts_;
};

struct ClassScores {
  double precision = 0;
  double recall = 0;
  double f1 = 0;
  int64_t support = 0;  // true samples of the class (for an average: of all classes)
};

struct ClassificationReport {
  ConfusionMatrix matrix;
  std::vector<ClassScores> per_class;  // one per class, in class order
  ClassScores macro;                   // unweighted mean over classes
  ClassScores weighted;                // mean weighted by support
  double accuracy = 0;                 // trace / samples
  int64_t samples = 0;
};

ClassificationReport classification_report(const ConfusionMatrix& matrix);

// The report as a compact table for a terminal: one row per class (precision, recall, F1,
// support), the averages and accuracy, then the confusion matrix. `class_names` labels the rows
// (class indices when empty or of another size). With more than `max_matrix_classes` classes the
// matrix is left out with a line saying so (the table of scores is always complete).
std::string format_classification_report(const ClassificationReport& report,
                                         const std::vector<std::string>& class_names = {},
                                         int64_t max_matrix_classes = 20);

// Regression metrics over `outputs` targets per sample, computed in double on the host from values
// in the targets' own units (never scaled). Each metric is computed per output and then averaged
// with equal weights: scikit-learn's root_mean_squared_error, mean_absolute_error and r2_score
// with multioutput="uniform_average". R^2 of an output whose true values are all equal is 1 when
// predicted exactly and 0 otherwise (scikit-learn's force_finite). Ownership: plain values.
struct RegressionMetrics {
  double rmse = 0;
  double mae = 0;
  double r2 = 0;
  int64_t samples = 0;
  int64_t outputs = 0;
};

// `truth` and `predicted` are samples x outputs, row-major, of the same length.
RegressionMetrics regression_metrics(const std::vector<float>& truth,
                                     const std::vector<float>& predicted, int64_t outputs);

}  // namespace switchyard

#pragma GCC visibility pop
