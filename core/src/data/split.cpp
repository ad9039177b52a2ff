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

// The indices of `data` that go to the held-out part (`fraction` of every class, largest-remainder
// rounding) and those that stay, both sorted. `stream` keeps the test and validation draws apart.
struct Partition {
  std::vector<int64_t> kept;
  std::vector<int64_t> held_out;
};

Result<Partition> stratified_partition(const Dataset& data, double fraction, uint64_t seed,
                                       uint64_t stream, const char* what) {
  const std::string name(what);
  if (!(fraction > 0.0 && fraction < 1.0)) {
    return invalid_argument(name + "_fraction must be between 0 and 1 (exclusive), got " +
                            std::to_string(fraction));
  }
  const auto n = static_cast<size_t>(data.sample_count);
  const auto total = static_cast<size_t>(std::ceil(fraction * static_cast<double>(n)));
  if (total == 0 || total >= n) {
    // Named by the data (a file's path): a file that holds one sample where many were meant
    // (one huge line, say) is then found.
    return invalid_argument((data.name.empty() ? "" : data.name + ": ") + "a " + name +
                            " fraction of " + std::to_string(fraction) + " of " +
                            std::to_string(n) + " samples leaves one split empty");
  }
  std::map<int32_t, std::vector<int64_t>> by_class;
  for (size_t i = 0; i < n; ++i) by_class[data.labels[i]].push_back(static_cast<int64_t>(i));

  const auto counts = test_counts_per_class(by_class, total, n);
  Partition partition;
  for (auto& [label, members] : by_class) {
    detail::CounterRandom random(detail::derive_seed(seed, stream, static_cast<uint64_t>(label)));
    shuffle(members, random);
    const size_t take = counts.at(label);
    partition.held_out.insert(partition.held_out.end(), members.begin(), members.begin() + take);
    partition.kept.insert(partition.kept.end(), members.begin() + take, members.end());
  }
  std::sort(partition.kept.begin(), partition.kept.end());
  std::sort(partition.held_out.begin(), partition.held_out.end());
  return partition;
}

}  // namespace

Result<DataSplit> stratified_split(const Dataset& data, double test_fraction, uint64_t seed) {
  SY_ASSIGN_OR_RETURN(
      const Partition partition,
      stratified_partition(data, test_fraction, seed, detail::kSplitStream, "test"));
  DataSplit split;
  split.train = data.subset(partition.kept);
  split.test = data.subset(partition.held_out);
  return split;
}

Status carve_validation(DataSplit& split, double validation_fraction, uint64_t seed) {
  SY_ASSIGN_OR_RETURN(const Partition partition,
                      stratified_partition(split.train, validation_fraction, seed,
                                           detail::kValidationStream, "validation"));
  split.validation = split.train.subset(partition.held_out);
  split.train = split.train.subset(partition.kept);
  return ok_status();
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
