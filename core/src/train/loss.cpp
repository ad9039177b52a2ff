// The loss of a batch (train.h), and the names of the losses in YAML files and checkpoints.
#include "switchyard/ops.h"
#include "switchyard/train.h"

namespace switchyard {
namespace {

struct LossName {
  LossKind kind;
  const char* name;
};
constexpr LossName kLossNames[] = {{LossKind::kCrossEntropy, "cross_entropy"},
                                   {LossKind::kMse, "mse"},
                                   {LossKind::kL1, "l1"},
                                   {LossKind::kSmoothL1, "smooth_l1"},
                                   {LossKind::kHuber, "huber"},
                                   {LossKind::kBceWithLogits, "bce_with_logits"}};

// One-hot rows for integer labels: the rows of an identity matrix picked by the labels, built on
// the device so that no host round trip is needed per batch.
Tensor one_hot(const Tensor& labels, int64_t class_count, const Tensor& like) {
  std::vector<float> identity(static_cast<size_t>(class_count * class_count), 0.0f);
  for (int64_t c = 0; c < class_count; ++c) identity[static_cast<size_t>(c * class_count + c)] = 1;
  const Tensor eye =
      Tensor::from_host(identity, Shape{class_count, class_count}, like.device(), like.dtype());
  return index_select(eye, 0, labels);
}

Tensor value_loss(const LossSettings& loss, const Tensor& outputs, const Tensor& target) {
  switch (loss.kind) {
    case LossKind::kMse:
      return mse_loss(outputs, target);
    case LossKind::kL1:
      return l1_loss(outputs, target);
    case LossKind::kSmoothL1:
      return smooth_l1_loss(outputs, target, loss.beta);
    case LossKind::kHuber:
      return huber_loss(outputs, target, loss.delta);
    case LossKind::kBceWithLogits:
      return binary_cross_entropy_with_logits(outputs, target);
    case LossKind::kCrossEntropy:
      break;
  }
  throw_error(invalid_argument(
      "loss cross_entropy needs class labels, but this data has numbers to predict (regression): "
      "use mse, l1, smooth_l1, huber or bce_with_logits"));
}

}  // namespace

Result<LossKind> parse_loss_kind(const std::string& text) {
  std::string names;
  for (const LossName& entry : kLossNames) {
    if (text == entry.name) return entry.kind;
    names += (names.empty() ? "" : ", ") + std::string(entry.name);
  }
  return invalid_argument("unknown loss '" + text + "' (expected " + names + ")");
}

const char* loss_kind_name(LossKind kind) {
  for (const LossName& entry : kLossNames) {
    if (entry.kind == kind) return entry.name;
  }
  return "unknown";
}

Tensor compute_loss(const LossSettings& loss, const Tensor& outputs,
                    const Tensor& labels_or_targets, int64_t class_count) {
  const bool regression = is_floating(labels_or_targets.dtype());
  if (regression) return value_loss(loss, outputs, labels_or_targets);
  if (loss.kind == LossKind::kCrossEntropy) return cross_entropy(outputs, labels_or_targets);
  return value_loss(loss, outputs, one_hot(labels_or_targets, class_count, outputs));
}

}  // namespace switchyard
