// Data-parallel gradient averaging: the parameters' gradients, grouped into buckets in reverse
// registration order (the order backward finishes them, as PyTorch DDP does), each bucket's
// allreduce started as soon as backward has finished all of its gradients, so that communication
// overlaps the rest of backward. Private to the core.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "switchyard/communicator.h"
#include "switchyard/profile.h"
#include "switchyard/tensor.h"

namespace switchyard::detail {

class GradientReducer {
 public:
  // `bucket_cap_bytes` bounds a bucket's f32 bytes (a parameter larger than it is a bucket of its
  // own). `ordered`: every bucket is summed in rank order (deterministic: true), over an allgather.
  GradientReducer(std::shared_ptr<Communicator> communicator, std::vector<Tensor> parameters,
                  size_t bucket_cap_bytes, bool ordered);

  // Before the backward pass whose gradients are reduced. This rank's gradients are multiplied by
  // `weight` (its samples / the global batch's) and then summed over the ranks, which gives the
  // gradient of the mean loss over the global batch.
  void begin_step(double weight);
  // The autograd hook: records that `leaf`'s gradient is final and starts every bucket that is
  // complete, in bucket order (so that every rank starts the same collectives in the same order).
  // An undefined `leaf` (after every node) only polls the buckets in flight.
  void gradient_ready(const Tensor& leaf);
  // Starts the buckets still waiting (gradients that backward did not reach count as zeros),
  // waits for all and writes the summed gradients back, in each gradient's dtype.
  void finish_step(const std::string& step_label);

  size_t bucket_count() const { return buckets_.size(); }
  // "3 buckets of at most 25 MiB (2.1 MB, 1.4 MB, 0.1 MB)" for the run's first lines.
  std::string describe() const;

 private:
  struct Bucket {
    std::vector<size_t> parameters;  // indices into parameters_
    std::vector<size_t> offsets;     // each parameter's first element in `host`
    size_t elements = 0;
    size_t ready = 0;
    bool started = false;
    bool complete = false;
    std::vector<float> host;
    std::vector<float> gathered;  // ordered: every rank's copy of `host`
    CollectiveRequest request;
    ProfileSpan in_flight;  // from start to the poll that saw it complete, when profiling
  };
  void start_ready_buckets();
  void start_bucket(Bucket& bucket);
  void poll_started_buckets();
  void write_back(const Bucket& bucket);

  std::shared_ptr<Communicator> communicator_;
  std::vector<Tensor> parameters_;
  bool ordered_;
  std::vector<Bucket> buckets_;
  std::unordered_map<const void*, size_t> index_of_;  // TensorImpl* -> parameter index
  std::vector<size_t> bucket_of_;
  std::vector<bool> parameter_ready_;
  size_t next_to_start_ = 0;
  double weight_ = 1;
  bool in_step_ = false;
};

}  // namespace switchyard::detail
