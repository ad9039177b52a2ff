// Sequence layers equal to PyTorch's: the same weights (PyTorch's initialisation, loaded strictly
// through safetensors with PyTorch's names) give the same outputs and the same gradients for
// inputs and parameters, on every backend built here. The expected values come from
// tests/nn/make_torch_reference.py: freshly, where python3-torch is installed, else the files it
// wrote that are committed in tests/nn/torch_reference/.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>

#include "backend_support.h"
#include "switchyard/nn_sequence.h"
#include "switchyard/safetensors.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;

namespace {

// The largest normalised mean squared error allowed between a switchyard tensor and PyTorch's
// (sum((a - b)^2) / sum(b^2)), for outputs and gradients alike: f32 composed differently by each
// library (summation order, exp and tanh implementations) stays near 1e-13; 1e-9 is a relative
// RMS error of 3e-5, as docs/layers.md states.
constexpr double kTolerance = 1e-9;

// Where the reference files are: regenerated once into a temporary folder where torch imports,
// else the committed ones.
const std::filesystem::path& reference_dir() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path committed =
        std::filesystem::path(SWITCHYARD_SOURCE_DIR) / "tests/nn/torch_reference";
    if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
      WARN("python3-torch is not installed: comparing with the committed PyTorch outputs");
      return committed;
    }
    const std::filesystem::path fresh =
        std::filesystem::temp_directory_path() / "switchyard-torch-reference";
    const std::string command = "/usr/bin/python3 " + committed.parent_path().string() +
                                "/make_torch_reference.py " + fresh.string() + " >/dev/null";
    REQUIRE(std::system(command.c_str()) == 0);
    return fresh;
  }();
  return dir;
}

using Records = std::map<std::string, TensorRecord>;
using Tensors = std::map<std::string, Tensor>;

Records load_case(const std::string& name) {
  const auto file = value_or_throw(read_safetensors(reference_dir() / (name + ".safetensors")));
  Records records;
  for (const auto& [key, record] : file.tensors) records[key] = record;
  return records;
}

Tensor to_tensor(const TensorRecord& record, const std::shared_ptr<Device>& device) {
  const Shape shape(record.shape);
  if (is_floating(record.dtype)) return Tensor::from_host(record.floats, shape, device);
  return Tensor::from_host(record.integers, shape, device);
}

// The records under `prefix`, with the prefix taken off the names.
Tensors with_prefix(const Records& records, const std::string& prefix,
                    const std::shared_ptr<Device>& device) {
  Tensors out;
  for (const auto& [key, record] : records) {
    if (key.rfind(prefix, 0) == 0) out[key.substr(prefix.size())] = to_tensor(record, device);
  }
  return out;
}

void check_close(const Tensor& got, const TensorRecord& expected, const std::string& what) {
  INFO(what);
  REQUIRE(got.defined());
  REQUIRE(got.shape() == Shape(expected.shape));
  const std::vector<float> values = got.to_host_float();
  double error = 0.0, norm = 0.0, largest = 0.0;
  for (size_t i = 0; i < values.size(); ++i) {
    const auto want = static_cast<double>(expected.floats[i]);
    const double diff = static_cast<double>(values[i]) - want;
    error += diff * diff;
    norm += want * want;
    largest = std::max(largest, std::abs(diff));
  }
  const double nmse = norm > 0.0 ? error / norm : error;
  INFO("NMSE " << nmse << ", largest absolute difference " << largest);
  CHECK(nmse <= kTolerance);
}

using MakeModule = std::function<std::shared_ptr<Module>(InitContext&)>;
using Forward = std::function<Tensors(Module&, const Tensors& inputs)>;

// Builds the module, loads PyTorch's state strictly, runs forward and backward with PyTorch's
// output gradients, and compares outputs and gradients.
void check_case(const std::string& name, const MakeModule& make, const Forward& forward,
                const std::shared_ptr<Device>& device) {
  INFO("case " << name << " on " << device->info().name);
  const Records records = load_case(name);
  InitContext init{device, InitScheme::kKaimingUniform, 99};
  const std::shared_ptr<Module> module = make(init);
  NamedTensors state;
  for (auto& [key, tensor] : with_prefix(records, "param/", device))
    state.emplace_back(key, tensor);
  module->load_state_dict(state);
  Tensors inputs = with_prefix(records, "input/", device);
  for (auto& [key, tensor] : inputs) {
    if (is_floating(tensor.dtype())) tensor.set_requires_grad(true);
  }
  const Tensors outputs = forward(*module, inputs);
  Tensor total;
  for (const auto& [key, grad] : with_prefix(records, "grad_output/", device)) {
    REQUIRE(outputs.count(key) == 1);
    const Tensor term = sum(outputs.at(key) * grad);
    total = total.defined() ? total + term : term;
  }
  total.backward();
  for (const auto& [key, tensor] : outputs) check_close(tensor, records.at("output/" + key), key);
  for (const auto& [key, tensor] : inputs) {
    if (is_floating(tensor.dtype())) {
      check_close(tensor.grad(), records.at("grad/input/" + key), "d/d " + key);
    }
  }
  for (const auto& [key, tensor] : module->named_parameters()) {
    check_close(tensor.grad(), records.at("grad/param/" + key), "d/d " + key);
  }
}

// Runs `body` on the reference device and on every other backend built and usable here.
void on_every_backend(const std::function<void(const std::shared_ptr<Device>&)>& body) {
  body(switchyard::testing::test_device());
  for (const std::string backend : {"onednn", "vulkan", "cuda"}) {
    const std::shared_ptr<Device> device = switchyard::testing::optional_device(backend);
    if (device == nullptr) continue;
    body(device);
  }
}

RecurrentOptions recurrent(int64_t in, int64_t hidden, int layers, bool batch_first,
                           bool bidirectional) {
  RecurrentOptions o;
  o.input_size = in;
  o.hidden_size = hidden;
  o.num_layers = layers;
  o.batch_first = batch_first;
  o.bidirectional = bidirectional;
  return o;
}

TransformerEncoderOptions encoder_layer(bool norm_first, const std::string& activation) {
  TransformerEncoderOptions o;
  o.d_model = 8;
  o.nhead = 2;
  o.dim_feedforward = 16;
  o.dropout = 0.0;
  o.activation = activation;
  o.batch_first = true;
  o.norm_first = norm_first;
  return o;
}

}  // namespace

TEST_CASE("a 2-layer bidirectional LSTM equals PyTorch's, outputs, states and gradients",
          "[nn][torch][lstm]") {
  on_every_backend([](const std::shared_ptr<Device>& device) {
    check_case(
        "lstm_bidirectional_2layer",
        [](InitContext& init) {
          return std::make_shared<LSTM>(init, recurrent(5, 4, 2, true, true));
        },
        [](Module& m, const Tensors& in) {
          const RecurrentResult r = static_cast<LSTM&>(m).run(in.at("x"), in.at("h0"), in.at("c0"));
          return Tensors{{"y", r.output}, {"h_n", r.h_n}, {"c_n", r.c_n}};
        },
        device);
  });
}

TEST_CASE("a 2-layer GRU equals PyTorch's", "[nn][torch][gru]") {
  on_every_backend([](const std::shared_ptr<Device>& device) {
    check_case(
        "gru_2layer",
        [](InitContext& init) {
          return std::make_shared<GRU>(init, recurrent(5, 4, 2, false, false));
        },
        [](Module& m, const Tensors& in) {
          const RecurrentResult r = static_cast<GRU&>(m).run(in.at("x"), in.at("h0"));
          return Tensors{{"y", r.output}, {"h_n", r.h_n}};
        },
        device);
  });
}

TEST_CASE("a 2-layer TransformerEncoder with a key padding mask equals PyTorch's",
          "[nn][torch][transformer]") {
  for (const auto& [name, norm_first, activation] :
       {std::tuple{"transformer_post_norm_relu", false, "relu"},
        std::tuple{"transformer_pre_norm_gelu", true, "gelu"}}) {
    on_every_backend([&, norm_first = norm_first, activation = activation,
                      name = name](const std::shared_ptr<Device>& device) {
      check_case(
          name,
          [&](InitContext& init) {
            return std::make_shared<TransformerEncoder>(init, encoder_layer(norm_first, activation),
                                                        2);
          },
          [](Module& m, const Tensors& in) {
            AttentionMasks masks;
            masks.key_padding_mask = in.at("key_padding_mask");
            return Tensors{{"y", static_cast<TransformerEncoder&>(m).encode(in.at("x"), masks)}};
          },
          device);
    });
  }
}

TEST_CASE("MultiheadAttention with causal and key padding masks equals PyTorch's",
          "[nn][torch][attention]") {
  on_every_backend([](const std::shared_ptr<Device>& device) {
    check_case(
        "attention_causal",
        [](InitContext& init) { return std::make_shared<MultiheadAttention>(init, 8, 2); },
        [](Module& m, const Tensors& in) {
          AttentionMasks masks;
          masks.key_padding_mask = in.at("key_padding_mask");
          masks.is_causal = true;
          const Tensor& q = in.at("query");
          const AttentionResult r =
              static_cast<MultiheadAttention&>(m).attend(q, q, q, masks, true);
          return Tensors{{"y", r.output}, {"weights", r.weights}};
        },
        device);
  });
}

TEST_CASE("BatchNorm1d and BatchNorm2d equal PyTorch's in train and eval mode",
          "[nn][torch][batchnorm]") {
  for (const int dims : {1, 2}) {
    on_every_backend([dims](const std::shared_ptr<Device>& device) {
      check_case(
          dims == 1 ? "batch_norm_1d" : "batch_norm_2d",
          [dims](InitContext& init) { return std::make_shared<BatchNorm>(init, 3, dims); },
          [](Module& m, const Tensors& in) {
            m.train();
            const Tensor y = m(in.at("x"));
            m.eval();
            const Tensor y_eval = m(in.at("x_eval"));
            const auto& norm = static_cast<BatchNorm&>(m);
            return Tensors{{"y", y},
                           {"y_eval", y_eval},
                           {"running_mean", norm.running_mean()},
                           {"running_var", norm.running_var()}};
          },
          device);
    });
  }
}

TEST_CASE("Embedding with padding_idx equals PyTorch's", "[nn][torch][embedding]") {
  on_every_backend([](const std::shared_ptr<Device>& device) {
    check_case(
        "embedding_padding",
        [](InitContext& init) { return std::make_shared<Embedding>(init, 7, 4, 0); },
        [](Module& m, const Tensors& in) {
          return Tensors{{"y", m(in.at("indices"))}};
        },
        device);
  });
}

TEST_CASE("a PyTorch state_dict with a missing or misshapen LSTM tensor is refused by name",
          "[nn][torch][lstm]") {
  const auto device = switchyard::testing::test_device();
  InitContext init{device, InitScheme::kKaimingUniform, 1};
  LSTM lstm(init, recurrent(5, 4, 2, true, true));
  const Records records = load_case("lstm_bidirectional_2layer");
  NamedTensors state;
  for (auto& [key, tensor] : with_prefix(records, "param/", device))
    state.emplace_back(key, tensor);
  REQUIRE(state.size() == 16);
  NamedTensors missing;
  for (const auto& entry : state) {
    if (entry.first != "weight_ih_l1_reverse") missing.push_back(entry);
  }
  CHECK_THROWS_WITH(lstm.load_state_dict(missing),
                    Catch::Contains("missing key 'weight_ih_l1_reverse'"));
  NamedTensors misshapen = state;
  for (auto& [key, tensor] : misshapen) {
    if (key == "weight_hh_l0") tensor = zeros(Shape{16, 3}, device);
  }
  CHECK_THROWS_WITH(lstm.load_state_dict(misshapen),
                    Catch::Contains("'weight_hh_l0'") && Catch::Contains("[16, 4]"));
}

TEST_CASE("a mask of the wrong shape is refused with the shape it must have", "[nn][attention]") {
  const auto device = switchyard::testing::test_device();
  InitContext init{device, InitScheme::kKaimingUniform, 1};
  TransformerEncoder encoder(init, encoder_layer(false, "relu"), 1);
  const Tensor x = zeros(Shape{3, 6, 8}, device);
  AttentionMasks masks;
  masks.key_padding_mask = zeros(Shape{3, 5}, device, DType::kI64);
  CHECK_THROWS_WITH(
      encoder.encode(x, masks),
      Catch::Contains("key_padding_mask must be [batch, source] = [3, 6], got [3, 5]"));
  masks.key_padding_mask = Tensor();
  masks.attn_mask = zeros(Shape{6, 5}, device);
  CHECK_THROWS_WITH(encoder.encode(x, masks),
                    Catch::Contains("attn_mask must be [target, source] = [6, 6], got [6, 5]"));
  SequencePool pool(SequencePool::Mode::kMean);
  CHECK_THROWS_WITH(pool.pool(x, zeros(Shape{6, 3}, device)),
                    Catch::Contains("key_padding_mask must be [batch, time] = [3, 6], got [6, 3]"));
}

TEST_CASE("mean and last pooling leave padded steps out", "[nn][sequence]") {
  const auto device = switchyard::testing::test_device();
  // One sequence of 3 steps with 2 features; its last step is padding.
  const Tensor x = Tensor::from_host({1, 2, 3, 4, 100, 200}, Shape{1, 3, 2}, device);
  const Tensor mask = Tensor::from_host(std::vector<int64_t>{0, 0, 1}, Shape{1, 3}, device);
  CHECK(SequencePool(SequencePool::Mode::kMean).pool(x, mask).to_host_float() ==
        std::vector<float>{2, 3});
  CHECK(SequencePool(SequencePool::Mode::kLast).pool(x, mask).to_host_float() ==
        std::vector<float>{3, 4});
  CHECK(SequencePool(SequencePool::Mode::kLast).pool(x).to_host_float() ==
        std::vector<float>{100, 200});
}
