// Capture and replay of ONNX models (switchyard/capture.h, docs/capture.md): a replayed run gives
// the bits an eager run gives, on every backend, for every committed model; each input signature
// is recorded on its second run and replayed from its third, reading the new inputs where they
// are; what a replay cannot repeat keeps the signature eager with the reason.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <thread>

#include "onnx/onnx_test_support.h"
#include "switchyard/autograd.h"
#include "switchyard/capture.h"
#include "switchyard/nn.h"
#include "switchyard/nn_sequence.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

// The data set's inputs with their float inputs moved by `shift` and their integer inputs (token
// ids, masks) rolled along the last axis by `roll` places, so that consecutive runs of one
// signature see different values of every input: a replay that kept a value of its recorded run
// (an index read on the host, say) gives another answer than the eager run then.
std::vector<Tensor> shifted(const OnnxModel& model, const std::vector<Tensor>& inputs, double shift,
                            int64_t roll = 0) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    // A bool input (a padding mask, given as 0/1 floats) is rolled like integers: shifted, every
    // key would be padding and every output NaN.
    if (is_floating(t.dtype()) && model.inputs().at(i).element_type != "bool") {
      out.push_back(t * 0.5 + shift);
      continue;
    }
    const int last = static_cast<int>(t.shape().rank()) - 1;
    const int64_t n = last >= 0 ? t.shape()[last] : 0;
    const int64_t k = n > 1 ? roll % n : 0;
    out.push_back(k == 0 ? t : concat({t.narrow(last, k, n - k), t.narrow(last, 0, k)}, last));
  }
  return out;
}

// 1024 small integers i % period, plus `shift`: exact in f32 through the tests' few operations.
std::vector<float> ramp(size_t period, float shift) {
  std::vector<float> v(1024);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % period) + shift;
  return v;
}

void check_same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    INFO("output " << k);
    REQUIRE(a[k].shape() == b[k].shape());
    // Bits, so that a NaN (a query whose every key is padding) equals the same NaN.
    const std::vector<float> x = a[k].to_host_float(), y = b[k].to_host_float();
    CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
  }
}

}  // namespace

TEST_CASE("a replayed ONNX run gives an eager run's bits, on every backend and committed model",
          "[onnx][capture]") {
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    for (const auto& folder : model_folders()) {
      INFO(folder.filename().string() << " on " << device->id());
      const auto eager = OnnxModel::load(folder / "model.onnx", device);
      const auto captured = OnnxModel::load(folder / "model.onnx", device);
      captured->set_capture(CaptureMode::kOn);
      CHECK(captured->capture() == CaptureMode::kOn);
      const auto sets = data_sets(folder);
      REQUIRE(sets.size() == 2);
      // control_flow's loop runs while its values say so, and detection keeps the boxes its
      // values select: each run reads them, and stays eager.
      const bool data_dependent =
          folder.filename() == "control_flow" || folder.filename() == "detection_opset13";
      // Two signatures (batch 1 and batch 7) interleaved, four runs each with new values.
      for (int round = 0; round < 4; ++round) {
        for (const auto& set : sets) {
          INFO("round " << round << ", " << set.filename().string());
          const std::vector<Tensor> inputs =
              shifted(*captured, load_set(set, "input", device), 0.25 * round, round);
          const std::vector<Tensor> ours = captured->run(inputs);
          const std::string summary = captured->capture_summary();
          INFO(summary);
          if (round == 0) CHECK(summary == "eager (first run of these input shapes)");
          if (data_dependent && round >= 1) {
            CHECK_THAT(summary, Catch::StartsWith("eager: the pass read device data on the host"));
            check_same_bits(ours, eager->run(inputs));
            continue;
          }
          if (round == 1) CHECK(summary.rfind("recorded ", 0) == 0);
          if (round >= 2) CHECK(summary.rfind("replayed ", 0) == 0);
          // vulkan captures a command buffer once and resubmits it; the others re-dispatch.
          const bool native = native_capture_available(*device);
          if (round == 1) {
            CHECK((summary.find("captured natively") != std::string::npos) == native);
            if (!native) CHECK_THAT(summary, Catch::Contains("has no native capture"));
          }
          if (round >= 2) {
            CHECK((summary.find("as one submission") != std::string::npos) == native);
          }
          check_same_bits(ours, eager->run(inputs));
          CHECK(eager->capture_summary() == "eager");
        }
      }
      // Outputs are the caller's own: a later replay does not overwrite them.
      const std::vector<Tensor> first = captured->run(load_set(sets[0], "input", device));
      const std::vector<float> kept = first[0].to_host_float();
      (void)captured->run(shifted(*captured, load_set(sets[0], "input", device), 3.0));
      CHECK(first[0].to_host_float() == kept);
      captured->set_capture(CaptureMode::kOff);
      (void)captured->run(load_set(sets[0], "input", device));
      CHECK(captured->capture_summary() == "eager");
    }
  });
}

TEST_CASE("a pass that reads device data, draws random numbers or falls back is not replayable",
          "[onnx][capture]") {
  const auto device = test_device();
  Tensor x = Tensor::from_host({1, 2, 3, 4}, Shape{4}, device);
  Tensor y;
  const auto plain = OpRecording::record(device, [&] { y = relu(x * 2.0); });
  CHECK(plain->replayable());
  CHECK(plain->reason().empty());
  CHECK(plain->op_count() == 2);
  CHECK(plain->held_bytes() == 3 * 16);  // x, x * 2 and y: 4 floats each, nothing else
  CHECK(y.to_host_float() == std::vector<float>{2, 4, 6, 8});
  x.copy_(Tensor::from_host({-1, 1, -2, 2}, Shape{4}, device));
  plain->replay();
  CHECK(y.to_host_float() == std::vector<float>{0, 2, 0, 4});

  const auto reads = OpRecording::record(device, [&] { (void)(x * 2.0).to_host_float(); });
  CHECK_FALSE(reads->replayable());
  CHECK_THAT(reads->reason(), Catch::Contains("read device data on the host"));
  try {
    reads->replay();
    FAIL("replayed");
  } catch (const Error& error) {
    CHECK(error.status().code() == StatusCode::kFailedPrecondition);
    CHECK_THAT(error.what(), Catch::Contains("read device data on the host"));
  }

  const auto draws =
      OpRecording::record(device, [&] { (void)rand_normal(Shape{4}, 0, 1, 7, 0, device); });
  CHECK_FALSE(draws->replayable());
  CHECK_THAT(draws->reason(), Catch::Contains("random_normal draws new numbers"));
  // Attention's dropout draws inside the op; without dropout it replays.
  const Tensor q = rand_uniform(Shape{1, 1, 3, 4}, -1, 1, 3, 0, device);
  AttentionOptions dropping;
  dropping.dropout_p = 0.5;
  const auto attends =
      OpRecording::record(device, [&] { (void)scaled_dot_product_attention(q, q, q, dropping); });
  if (device->supports(SY_OP_SCALED_DOT_PRODUCT_ATTENTION, SY_DTYPE_F32)) {
    CHECK_FALSE(attends->replayable());
    CHECK_THAT(attends->reason(), Catch::Contains("draws new numbers"));
  }
  const auto attends_eval =
      OpRecording::record(device, [&] { (void)scaled_dot_product_attention(q, q, q); });
  CHECK(attends_eval->replayable());

  std::unique_ptr<OpRecording> inner;
  const auto outer = OpRecording::record(
      device, [&] { inner = OpRecording::record(device, [&] { (void)(x + 1.0); }); });
  CHECK_FALSE(outer->replayable());
  CHECK_FALSE(inner->replayable());

  // A pass that throws leaves the thread not recording: the next recording starts clean.
  CHECK_THROWS(OpRecording::record(device, [&] { throw_error(internal_error("stop")); }));
  const auto after = OpRecording::record(device, [&] { (void)(x + 1.0); });
  CHECK(after->replayable());
  CHECK(after->op_count() == 1);
}

TEST_CASE("a replay takes patched parameters, and the recording pools its intermediates",
          "[onnx][capture]") {
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    INFO(device->id());
    const auto values = [](float shift) { return ramp(7, shift); };
    Tensor x = Tensor::from_host(values(0), Shape{1024}, device);
    Tensor d;
    // a = x * 2 (call 0), b = a + 1 (1), c = b * 3 (2), d = c - 1 (3): a and c never live at the
    // same time, so they share the pool's memory; d is held outside and keeps its own buffer.
    auto recording = OpRecording::record(device, [&] { d = ((x * 2.0 + 1.0) * 3.0) - 1.0; });
    REQUIRE(recording->replayable());
    REQUIRE(recording->op_count() == 4);
    INFO(recording->describe());
    CHECK_THAT(recording->describe(), Catch::Contains("intermediates pooled"));
    const auto expect = [&](float shift, double add) {
      std::vector<float> out;
      for (const float v : values(shift)) {
        out.push_back((v * 2.0f + static_cast<float>(add)) * 3.0f - 1.0f);  // exact in f32
      }
      return out;
    };
    CHECK(d.to_host_float() == expect(0, 1));
    x.copy_(Tensor::from_host(values(0.5f), Shape{1024}, device));
    recording->replay();
    CHECK(d.to_host_float() == expect(0.5f, 1));
    // Call 1 now adds 10, in the native graph too where there is one.
    const bool native = recording->native();
    sy_op_params params = recording->calls()[1].params;
    params.binary.scalar = 10.0;
    const CallPatch patch{1, params};
    recording->replay(std::span(&patch, 1));
    CHECK(d.to_host_float() == expect(0.5f, 10));
    CHECK(recording->native() == native);
    CHECK(recording->native() == native_capture_available(*device));
    x.copy_(Tensor::from_host(values(1), Shape{1024}, device));
    recording->replay();  // the patch stays
    CHECK(d.to_host_float() == expect(1, 10));
    const CallPatch beyond{4, params};
    CHECK_THROWS_WITH(recording->replay(std::span(&beyond, 1)),
                      Catch::Contains("patch of call 4, but 4 calls were recorded"));
  });
}

TEST_CASE("an output that is an input or a view of one follows the replayed run's inputs",
          "[onnx][capture]") {
  // y = Transpose(x) and z = Identity(x) are views of x; r = Relu(x) reads x in an op, so a replay
  // reads the new x in place. The views were left on the recorded x: a replay gave its values.
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto& graph = *model.mutable_graph();
  graph.set_name("views");
  declare_value(*graph.add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  for (const char* name : {"y", "z", "r"}) {
    auto* output = graph.add_output();
    output->set_name(name);
    output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  add_node(graph, "Transpose", {"x"}, {"y"});
  add_node(graph, "Identity", {"x"}, {"z"});
  add_node(graph, "Relu", {"x"}, {"r"});
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    INFO(device->id());
    const auto loaded = load_model(model, "sy_output_views.onnx", device);
    loaded->set_capture(CaptureMode::kOn);
    const std::vector<float> a{1, -2, 3, -4, 5, -6}, b{-10, 20, -30, 40, -50, 60};
    for (int round = 0; round < 6; ++round) {  // eager, recorded, then replayed
      INFO("round " << round << ": " << loaded->capture_summary());
      const std::vector<float>& x = round % 2 == 0 ? a : b;
      const std::vector<Tensor> out = loaded->run({Tensor::from_host(x, Shape{2, 3}, device)});
      const std::vector<float> transposed{x[0], x[3], x[1], x[4], x[2], x[5]};
      std::vector<float> relu;
      for (const float v : x) relu.push_back(std::max(v, 0.0f));
      CHECK(out.at(0).to_host_float() == transposed);
      CHECK(out.at(1).to_host_float() == x);
      CHECK(out.at(2).to_host_float() == relu);
    }
  });
}

TEST_CASE("a weight promised constant keeps its own buffer in a recording's pool",
          "[onnx][capture]") {
  // Two convolutions whose weights are intermediates computed from one tensor and promised
  // constant (SY_CALL_CONSTANT_WEIGHTS, as a 3-D Conv's per-tap weights were): their lives do
  // not overlap, so the pool would give both one slot, and onednn, which keeps converted weights
  // by buffer, then replayed the second with the first's weights.
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    INFO(device->id());
    std::vector<float> base_values(2 * 4 * 3 * 3);
    for (size_t i = 0; i < base_values.size(); ++i) base_values[i] = static_cast<float>(i % 5) - 2;
    const Tensor base = Tensor::from_host(base_values, Shape{2, 4, 3, 3}, device);
    const Tensor x = Tensor::from_host(ramp(9, 0), Shape{1, 4, 16, 16}, device);
    Conv2dOptions options;
    options.pad_h = options.pad_w = 1;
    options.constant_weight = true;
    // y1 and y2 are held outside (their own buffers): the weights are the pool's only tenants.
    Tensor y1, y2;
    auto recording = OpRecording::record(device, [&] {
      y1 = conv2d(x, base * 2.0, Tensor(), options);
      y2 = conv2d(x, base * -3.0, Tensor(), options);
    });
    REQUIRE(recording->replayable());
    const std::vector<float> first = conv2d(x, base * 2.0, Tensor(), options).to_host_float();
    const std::vector<float> second = conv2d(x, base * -3.0, Tensor(), options).to_host_float();
    REQUIRE(first != second);
    for (int round = 0; round < 2; ++round) {
      INFO("replay " << round << ": " << recording->describe());
      recording->replay();
      CHECK(y1.to_host_float() == first);
      CHECK(y2.to_host_float() == second);
    }
  });
}

TEST_CASE("a replay reads a given input in place of the recorded one, or copies it",
          "[onnx][capture]") {
  on_every_backend([&](const std::shared_ptr<Device>& device) {
    INFO(device->id());
    const auto values = [](float shift) { return ramp(13, shift); };
    const auto on_device = [&](float shift) {
      return Tensor::from_host(values(shift), Shape{32, 32}, device);
    };
    // d reads x through a view at an offset (rows 8-23), e reads all of x: exact in f32.
    const auto expect = [&](const std::vector<float>& x) {
      std::vector<float> d;
      std::vector<float> e;
      for (size_t i = 8 * 32; i < 24 * 32; ++i) d.push_back(x[i] * 2.0f + 1.0f);
      for (const float v : x) e.push_back(v * 3.0f);
      return std::pair{d, e};
    };
    Tensor x = on_device(0);
    Tensor d;
    Tensor e;
    auto recording = OpRecording::record(device, [&] {
      d = x.narrow(0, 8, 16) * 2.0 + 1.0;
      e = x * 3.0;
    });
    REQUIRE(recording->replayable());
    const bool native = recording->native();
    const Tensor given = on_device(0.5f);
    recording->replay_reading(std::span(&x, 1), std::span(&given, 1));
    CHECK(std::pair{d.to_host_float(), e.to_host_float()} == expect(values(0.5f)));
    // Op by op the calls read `given` itself and x keeps its values; a native graph names x's
    // buffer, so `given` was copied into x.
    CHECK(x.to_host_float() == values(native ? 0.5f : 0.0f));
    // The calls name x again: a plain replay reads it.
    x.copy_(on_device(2));
    recording->replay();
    CHECK(std::pair{d.to_host_float(), e.to_host_float()} == expect(values(2)));
    // Another layout (a transposed view) cannot be read in place: copied, same results.
    const Tensor transposed = on_device(3).transpose(0, 1);
    REQUIRE_FALSE(transposed.is_contiguous());
    recording->replay_reading(std::span(&x, 1), std::span(&transposed, 1));
    const std::vector<float> transposed_values = transposed.to_host_float();
    CHECK(std::pair{d.to_host_float(), e.to_host_float()} == expect(transposed_values));
    CHECK(x.to_host_float() == transposed_values);
    // A tensor the pass writes (e) cannot be read while the replay writes it: copied too.
    const std::vector<float> e_values = e.to_host_float();
    recording->replay_reading(std::span(&x, 1), std::span(&e, 1));
    CHECK(std::pair{d.to_host_float(), e.to_host_float()} == expect(e_values));
    CHECK(x.to_host_float() == e_values);
    CHECK_THROWS_WITH(recording->replay_reading(std::span(&x, 1), std::span<const Tensor>()),
                      Catch::Contains("1 recorded tensors but 0 given"));

    // A pass that writes its input: the given values are copied in first, as replay() needs.
    Tensor y = on_device(0);
    Tensor f;
    auto writes = OpRecording::record(device, [&] {
      y.copy_(y * 2.0);
      f = y + 1.0;
    });
    REQUIRE(writes->replayable());
    const Tensor fresh = on_device(4);
    writes->replay_reading(std::span(&y, 1), std::span(&fresh, 1));
    std::vector<float> doubled = values(4);
    for (float& v : doubled) v *= 2.0f;
    CHECK(y.to_host_float() == doubled);
    for (float& v : doubled) v += 1.0f;
    CHECK(f.to_host_float() == doubled);
    CHECK(fresh.to_host_float() == values(4));  // the caller's tensor is never written
  });
}

TEST_CASE("a recording holds only its own thread's ops", "[onnx][capture][threads]") {
  const auto device = test_device();
  const Tensor x = Tensor::from_host({1, 2, 3, 4}, Shape{4}, device);
  std::atomic<bool> started{false}, stop{false};
  std::thread other([&] {
    while (!stop.load()) {
      (void)(x + 1.0);
      started.store(true);
    }
  });
  while (!started.load()) std::this_thread::yield();
  const auto recording = OpRecording::record(device, [&] {
    for (int k = 0; k < 50; ++k) (void)(x * 3.0);
  });
  stop.store(true);
  other.join();
  CHECK(recording->op_count() == 50);
  CHECK(recording->replayable());
}

TEST_CASE("vulkan replays a captured command buffer: new inputs, scratch kept, other work between",
          "[onnx][capture][vulkan]") {
  const std::shared_ptr<Device> device = optional_device("vulkan");
  if (device == nullptr) return;
  // An LSTM (LSTM_SEQUENCE: scratch buffers inside the op) and attention (a scratch standing in
  // for the lse it is not asked for), on inputs the pass reads from x.
  InitContext init{device, InitScheme::kKaimingUniform, 3};
  RecurrentOptions options;
  options.input_size = 8;
  options.hidden_size = 16;
  LSTM lstm(init, options);
  Tensor x = rand_uniform({5, 2, 8}, -1.0, 1.0, 1, 0, device);
  Tensor y;
  const auto pass = [&] {
    NoGradGuard no_grad;
    const Tensor h = lstm.run(x).output;        // [5, 2, 16]
    const Tensor q = h.reshape({1, 2, 5, 16});  // two heads of 5 steps
    y = scaled_dot_product_attention(q, q, q) + h.reshape({1, 2, 5, 16}) * 0.5;
  };
  const auto recording = OpRecording::record(device, pass);
  REQUIRE(recording->replayable());
  CHECK(recording->native());
  CHECK(recording->native_note().empty());
  const Tensor out = y;  // the recorded output tensor, which replays write
  for (int round = 0; round < 5; ++round) {
    INFO("round " << round);
    x.copy_(rand_uniform({5, 2, 8}, -1.0, 1.0, 10 + round, 0, device));
    recording->replay();
    // Other work between replays takes memory from the pool: none of it may be a buffer the
    // command buffer writes.
    std::vector<Tensor> others;
    for (int k = 0; k < 8; ++k) others.push_back(rand_uniform({5, 2, 16}, 5.0, 6.0, k, 0, device));
    const std::vector<float> replayed = out.to_host_float();
    Tensor eager_y;
    {
      Tensor saved = y;
      pass();  // eagerly, on the same x
      eager_y = y;
      y = saved;
    }
    CHECK(replayed == eager_y.to_host_float());
    for (const Tensor& other : others) {
      for (float v : other.to_host_float()) REQUIRE((v >= 5.0f && v < 6.0f));
    }
  }
  // Destroyed right after a launch: the destruction waits for it.
  x.copy_(rand_uniform({5, 2, 8}, -1.0, 1.0, 99, 0, device));
  auto last = OpRecording::record(device, pass);
  REQUIRE(last->native());
  last->replay();
  last.reset();
  CHECK(y.to_host_float().size() == 160);
}

TEST_CASE("at most kMaxRecordings input signatures hold a recording; the oldest lets go",
          "[onnx][capture]") {
  const auto device = test_device();
  const auto folder = models_dir() / "mlp_gelu";
  const auto model = OnnxModel::load(folder / "model.onnx", device);
  const auto eager = OnnxModel::load(folder / "model.onnx", device);
  model->set_capture(CaptureMode::kAuto);  // auto is on, on every backend
  const std::vector<Tensor> seven = load_set(folder / "test_data_set_1", "input", device);
  REQUIRE(seven[0].shape()[0] == 7);
  const auto batch = [&](int64_t rows) { return std::vector<Tensor>{seven[0].narrow(0, 0, rows)}; };
  const auto run = [&](int64_t rows) {
    INFO("batch " << rows);
    check_same_bits(model->run(batch(rows)), eager->run(batch(rows)));
    return model->capture_summary();
  };
  // Batches 1 .. 5, three runs each: each records on its second run, and recording the fifth
  // lets batch 1's recording (the least recently run) go.
  for (int64_t rows = 1; rows <= static_cast<int64_t>(OnnxModel::kMaxRecordings) + 1; ++rows) {
    CHECK(run(rows) == "eager (first run of these input shapes)");
    CHECK(run(rows).rfind("recorded ", 0) == 0);
    CHECK(run(rows).rfind("replayed ", 0) == 0);
  }
  CHECK(run(5).rfind("replayed ", 0) == 0);
  CHECK(run(2).rfind("replayed ", 0) == 0);  // kept, and now the most recent but one
  // Batch 1 records again (its first run was long ago), and that lets batch 3's go.
  CHECK(run(1).rfind("recorded ", 0) == 0);
  CHECK(run(1).rfind("replayed ", 0) == 0);
  CHECK(run(3).rfind("recorded ", 0) == 0);
}

TEST_CASE("a backend without native capture re-dispatches and says why", "[onnx][capture]") {
  const auto device = test_device();
  const Tensor x = Tensor::from_host({1, 2, 3, 4}, Shape{4}, device);
  const auto recording = OpRecording::record(device, [&] { (void)(x * 2.0); });
  REQUIRE(recording->replayable());
  if (device->functions().queue_capture_begin == nullptr) {
    CHECK_FALSE(recording->native());
    CHECK_THAT(recording->native_note(), Catch::Contains("has no native capture"));
  }
  recording->replay();
}
