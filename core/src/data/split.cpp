#include <algorithm>
#include <cmath>
#include <map>

#include "data/seeded_random.h"
#include "switchyard/data.h"

namespace switchyard {
namespace {

void shuffle(std::vector<int64_t>& items, detail::CounterRandom& random) {
  for (size_t i = items.size(); i > 1; --i) {
    std::swap(items[i - 1], items[random.below(i)]);
  }
}

// How many test samples each class gives: the total is fixed first, then shared out in proportion
// to class sizes, with the leftover going to the largest fractional parts (ties: lower class).
std::map<int32_t, size_t> test_counts_per_class(
    const std::map<int32_t, std::vector<int64_t>>& by_class, size_t total_test, size_t n) {
  std::map<int32_t, size_t> counts;
  std::vector<std::pair<double, int32_t>> remainders;
  size_t assigned = 0;
  for (const auto& [label, members] : by_class) {
    const double exact = static_cast<double>(members.size()) * static_cast<double>(total_test) /
                         static_cast<double>(n);
    counts[label] = static_cast<size_t>(std::floor(exact));
    assigned += counts[label];
    remainders.emplace_back(exact - std::floor(exact), label);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; assigned < total_test && i < remainders.size(); ++i, ++assigned) {
    ++counts[remainders[i].second];
  }
  return counts;
}

}  // namespace

Result<DataSplit> stratified_split(const Dataset& data, double test_fraction, uint64_t seed) {
  if (!(test_fraction > 0.0 && test_fraction < 1.0)) {
    return invalid_argument("test_fraction must be between 0 and 1 (exclusive), got " +
                            std::to_string(test_fraction));
  }
  const auto n = static_cast<size_t>(data.sample_count);
  const auto total_test = static_cast<size_t>(std::ceil(test_fraction * static_cast<double>(n)));
  if (total_test == 0 || total_test >= n) {
    return invalid_argument("a test fraction of " + std::to_string(test_fraction) + " of " +
                            std::to_string(n) + " samples leaves one split empty");
  }
  std::map<int32_t, std::vector<int64_t>> by_class;
  for (size_t i = 0; i < n; ++i) by_class[data.labels[i]].push_back(static_cast<int64_t>(i));

  const auto counts = test_counts_per_class(by_class, total_test, n);
  std::vector<int64_t> train_indices;
  std::vector<int64_t> test_indices;
  for (auto& [label, members] : by_class) {
    detail::CounterRandom random(
        detail::derive_seed(seed, detail::kSplitStream, static_cast<uint64_t>(label)));
    shuffle(members, random);
    const size_t take = counts.at(label);
    test_indices.insert(test_indices.end(), members.begin(), members.begin() + take);
    train_indices.insert(train_indices.end(), members.begin() + take, members.end());
  }
  std::sort(train_indices.begin(), train_indices.end());
  std::sort(test_indices.begin(), test_indices.end());
  return DataSplit{data.subset(train_indices), data.subset(test_indices)};
}

std::vector<int64_t> epoch_permutation(int64_t count, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) order[i] = i;
  detail::CounterRandom random(
      detail::derive_seed(seed, detail::kEpochStream, static_cast<uint64_t>(epoch)));
  shuffle(order, random);
  return order;
}

}  // namespace switchyard
