#include "train/gradient_reducer.h"

#include <cstdio>

#include "distributed/failure_report.h"
#include "switchyard/profile.h"

namespace switchyard::detail {

GradientReducer::GradientReducer(std::shared_ptr<Communicator> communicator,
                                 std::vector<Tensor> parameters, size_t bucket_cap_bytes,
                                 bool ordered)
    : communicator_(std::move(communicator)),
      parameters_(std::move(parameters)),
      ordered_(ordered) {
  bucket_of_.resize(parameters_.size());
  parameter_ready_.assign(parameters_.size(), false);
  // Reverse registration order: backward finishes the last layer's gradients first.
  for (size_t k = parameters_.size(); k-- > 0;) {
    const Tensor& parameter = parameters_[k];
    index_of_[parameter.impl()] = k;
    const size_t elements = static_cast<size_t>(parameter.numel());
    if (buckets_.empty() ||
        (buckets_.back().elements > 0 &&
         (buckets_.back().elements + elements) * sizeof(float) > bucket_cap_bytes)) {
      buckets_.emplace_back();
    }
    Bucket& bucket = buckets_.back();
    bucket.parameters.push_back(k);
    bucket.offsets.push_back(bucket.elements);
    bucket.elements += elements;
    bucket_of_[k] = buckets_.size() - 1;
  }
  for (Bucket& bucket : buckets_) bucket.host.resize(bucket.elements);
}

std::string GradientReducer::describe() const {
  std::string sizes;
  for (const Bucket& bucket : buckets_) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f MB", static_cast<double>(bucket.elements) * 4 / 1e6);
    sizes += (sizes.empty() ? "" : ", ") + std::string(text);
  }
  return std::to_string(buckets_.size()) + (buckets_.size() == 1 ? " bucket" : " buckets") + " (" +
         sizes + ")";
}

void GradientReducer::begin_step(double weight) {
  weight_ = weight;
  in_step_ = true;
  next_to_start_ = 0;
  parameter_ready_.assign(parameters_.size(), false);
  for (Bucket& bucket : buckets_) {
    bucket.ready = 0;
    bucket.started = false;
    bucket.complete = false;
  }
}

void GradientReducer::gradient_ready(const Tensor& leaf) {
  if (!in_step_) return;
  if (!leaf.defined()) {  // a node finished: drive the started collectives
    poll_started_buckets();
    return;
  }
  const auto found = index_of_.find(leaf.impl());
  if (found == index_of_.end()) return;  // a leaf that is not a parameter of this model
  const size_t k = found->second;
  if (!parameter_ready_[k]) {
    parameter_ready_[k] = true;
    ++buckets_[bucket_of_[k]].ready;
  }
  start_ready_buckets();
  poll_started_buckets();  // MPI progresses a non-blocking collective only inside MPI calls
}

void GradientReducer::start_ready_buckets() {
  while (next_to_start_ < buckets_.size() &&
         buckets_[next_to_start_].ready == buckets_[next_to_start_].parameters.size()) {
    start_bucket(buckets_[next_to_start_++]);
  }
}

void GradientReducer::start_bucket(Bucket& bucket) {
  const ProfileSpan span = profile_span("allreduce start");
  const auto weight = static_cast<float>(weight_);
  for (size_t i = 0; i < bucket.parameters.size(); ++i) {
    const Tensor& parameter = parameters_[bucket.parameters[i]];
    float* out = bucket.host.data() + bucket.offsets[i];
    const auto elements = static_cast<size_t>(parameter.numel());
    const Tensor grad = parameter.grad();
    if (!grad.defined()) {
      std::fill(out, out + elements, 0.0f);
      continue;
    }
    // Gradients of bf16 / f16 runs are read as f32: the sum is always f32.
    const std::vector<float> values = grad.to_host_float();
    for (size_t e = 0; e < elements; ++e) out[e] = values[e] * weight;
  }
  if (ordered_) {
    bucket.gathered.resize(bucket.elements * static_cast<size_t>(communicator_->size()));
    bucket.request = value_or_throw(
        communicator_->start_allgather(std::as_bytes(std::span<const float>(bucket.host)),
                                       std::as_writable_bytes(std::span<float>(bucket.gathered))));
  } else {
    bucket.request = value_or_throw(communicator_->start_allreduce_sum(bucket.host));
  }
  bucket.started = true;
  const std::string name = "allreduce bucket " + std::to_string(&bucket - buckets_.data() + 1);
  bucket.in_flight = profile_track_span(name + " in flight", name);
}

void GradientReducer::poll_started_buckets() {
  for (size_t b = 0; b < next_to_start_; ++b) {
    Bucket& bucket = buckets_[b];
    if (bucket.complete) continue;
    bucket.complete = value_or_throw(communicator_->test(bucket.request));
    if (!bucket.complete) return;  // libraries complete collectives in the order they started
    bucket.in_flight.end();
  }
}

void GradientReducer::finish_step(const std::string& step_label) {
  const ProfileSpan span = profile_span("allreduce wait");
  for (size_t k = 0; k < parameters_.size(); ++k) {
    if (parameter_ready_[k]) continue;
    parameter_ready_[k] = true;
    ++buckets_[bucket_of_[k]].ready;
  }
  start_ready_buckets();
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    if (!bucket.complete) {
      throw_if_error(communicator_->wait(
          bucket.request, "the allreduce of gradient bucket " + std::to_string(b + 1) + " of " +
                              std::to_string(buckets_.size()) + " (" + step_label + ")"));
      bucket.complete = true;
    }
    bucket.in_flight.end();
    if (ordered_) sum_in_rank_order(bucket.gathered, bucket.host);
    write_back(bucket);
  }
  in_step_ = false;
}

void GradientReducer::write_back(const Bucket& bucket) {
  for (size_t i = 0; i < bucket.parameters.size(); ++i) {
    Tensor& parameter = parameters_[bucket.parameters[i]];
    const auto elements = static_cast<size_t>(parameter.numel());
    const float* first = bucket.host.data() + bucket.offsets[i];
    const Tensor grad = parameter.grad();
    const DType dtype = grad.defined() ? grad.dtype() : parameter.dtype();
    parameter.set_grad(Tensor::from_host(std::vector<float>(first, first + elements),
                                         parameter.shape(), parameter.device(), dtype));
  }
}

}  // namespace switchyard::detail
