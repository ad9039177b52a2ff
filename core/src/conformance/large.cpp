// conformance::run_large: a few ops at sizes that fill a GPU, checked against the host.
//
// The case table's tensors are small (its largest matmul is 64x96x80), so a kernel's grid-stride
// loop never goes round twice and no index passes 2^31 there. These cases do: a square matmul of
// options.matmul_size in each float dtype, elementwise ops, reductions and a row softmax over
// options.elements elements, and (options.beyond_32bit) an f16 ADD over 2^31 + 1027 elements.
// The reference backend would take minutes at these sizes, so the host checks instead:
// - elementwise ops are exact (docs/ops.md), so every element is compared bit for bit;
// - reductions and softmax are compared element by element with the op's NMSE tolerance, against
//   a float64 computation;
// - a matmul's whole output is checked by Freivalds' method: for random +-1 vectors r,
//   |C r - A (B r)|^2 / |A (B r)|^2 estimates the NMSE over every element (one wrong tile moves
//   it by orders of magnitude), and a few whole rows are also computed in float64.
// Every output starts as NaN, so an element the device never wrote fails the case.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "conformance/cases.h"
#include "conformance/conformance.h"
#include "conformance/op_names.h"
#include "conformance/value_gen.h"
#include "support/dtype_codec.h"
#include "switchyard/buffer.h"
#include "switchyard/queue.h"

namespace switchyard::conformance {
namespace {

constexpr int64_t kRowLength = 4096;  // columns of the reductions' and softmax's matrix

// Host values of one tensor, already rounded to its dtype.
struct HostValues {
  sy_dtype dtype = SY_DTYPE_F32;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// The conformance codec's conversions (dtype_codec.h), element by element.
std::vector<unsigned char> encode_all(const HostValues& t) {
  const size_t size = dtype_size_bytes(t.dtype);
  std::vector<unsigned char> bytes(t.values.size() * size);
  for (size_t i = 0; i < t.values.size(); ++i) {
    encode_element(static_cast<double>(t.values[i]), t.dtype, bytes.data() + i * size);
  }
  return bytes;
}

std::vector<float> decode_all(sy_dtype dtype, const std::vector<unsigned char>& bytes) {
  const size_t size = dtype_size_bytes(dtype);
  std::vector<float> values(bytes.size() / size);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(decode_element(dtype, bytes.data() + i * size));
  }
  return values;
}

float round_float(float value, sy_dtype dtype) {
  return static_cast<float>(round_to_dtype(static_cast<double>(value), dtype));
}

HostValues random_values(Generator& gen, sy_dtype dtype, std::vector<int64_t> shape, double low,
                         double high) {
  HostValues t;
  t.dtype = dtype;
  t.values.resize(static_cast<size_t>(shape_element_count(shape)));
  t.shape = std::move(shape);
  for (float& v : t.values) v = round_float(static_cast<float>(gen.uniform(low, high)), dtype);
  return t;
}

sy_tensor_desc contiguous_desc(const Buffer& buffer, sy_dtype dtype,
                               const std::vector<int64_t>& shape) {
  sy_tensor_desc desc{};
  desc.buffer = buffer.handle();
  desc.dtype = dtype;
  desc.rank = static_cast<uint32_t>(shape.size());
  const std::vector<int64_t> strides = contiguous_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    desc.shape[d] = shape[d];
    desc.strides[d] = strides[d];
  }
  return desc;
}

// One device tensor: its buffer and its descriptor.
struct Placed {
  std::shared_ptr<Buffer> buffer;
  sy_tensor_desc desc;
};

Result<Placed> place_bytes(Device& device, sy_dtype dtype, const std::vector<int64_t>& shape,
                           const std::vector<unsigned char>& bytes) {
  SY_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer,
                      device.allocate(std::max<uint64_t>(bytes.size(), 8)));
  SY_RETURN_IF_ERROR(device.default_queue().write(*buffer, 0, bytes.data(), bytes.size()));
  Placed placed{buffer, contiguous_desc(*buffer, dtype, shape)};
  return placed;
}

// An output of `shape` whose every byte is 0xff: NaN in f32, f16 and bf16.
Result<Placed> place_poisoned(Device& device, sy_dtype dtype, const std::vector<int64_t>& shape) {
  const std::vector<unsigned char> bytes(
      static_cast<size_t>(shape_element_count(shape)) * dtype_size_bytes(dtype), 0xff);
  return place_bytes(device, dtype, shape, bytes);
}

// Runs `op` with the inputs (uploaded) and one poisoned output; returns the output's values.
Result<std::vector<float>> run_op(Device& device, sy_op op, const sy_op_params& params,
                                  const std::vector<const HostValues*>& inputs, sy_dtype out_dtype,
                                  const std::vector<int64_t>& out_shape) {
  sy_op_call call{};
  call.op = op;
  call.params = params;
  call.num_inputs = static_cast<uint32_t>(inputs.size());
  call.num_outputs = 1;
  std::vector<Placed> placed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    SY_ASSIGN_OR_RETURN(
        Placed p, place_bytes(device, inputs[i]->dtype, inputs[i]->shape, encode_all(*inputs[i])));
    call.inputs[i] = p.desc;
    placed.push_back(std::move(p));
  }
  SY_ASSIGN_OR_RETURN(Placed out, place_poisoned(device, out_dtype, out_shape));
  call.outputs[0] = out.desc;
  Queue& queue = device.default_queue();
  SY_RETURN_IF_ERROR(queue.dispatch(call));
  SY_RETURN_IF_ERROR(queue.finish());
  std::vector<unsigned char> bytes(static_cast<size_t>(shape_element_count(out_shape)) *
                                   dtype_size_bytes(out_dtype));
  SY_RETURN_IF_ERROR(queue.read(*out.buffer, 0, bytes.data(), bytes.size()));
  return decode_all(out_dtype, bytes);
}

// "" when every value is finite, else where the first one that is not is.
std::string first_non_finite(const std::vector<float>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      return "element " + std::to_string(i) + " is " + std::to_string(values[i]) +
             " (never written, or not finite)";
    }
  }
  return "";
}

double nmse_of(const std::vector<float>& target, const std::vector<double>& expected) {
  double err = 0.0, ref = 0.0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double d = static_cast<double>(target[i]) - expected[i];
    err += d * d;
    ref += expected[i] * expected[i];
  }
  return ref > 0.0 ? err / ref : err;
}

// Judges one case: a thrown Error or a failed Status becomes a failed case with its message.
class LargeRun {
 public:
  LargeRun(Device& target, const LargeOptions& options) : target_(target), options_(options) {}

  void add(const std::string& name, sy_op op, sy_dtype dtype,
           const std::function<Status(CaseResult&)>& body) {
    CaseResult result;
    result.name = name;
    result.op = op_label(op);
    result.dtype = dtype_label(dtype);
    result.tolerance = default_tolerance(op, dtype);
    if (!options_.filter.empty() && name.find(options_.filter) == std::string::npos) return;
    if (!target_.supports(op, dtype)) {
      result.reason = target_.backend() + " does not support " + result.op + " in " + result.dtype;
      report_.cases.push_back(std::move(result));
      return;
    }
    result.outcome = Outcome::kPassed;
    const auto start = std::chrono::steady_clock::now();
    Status status;
    try {
      status = body(result);
    } catch (const std::exception& e) {
      status = internal_error(e.what());
    }
    if (!status.ok()) {
      result.outcome = Outcome::kFailed;
      result.reason = status.to_string();
    } else if (result.outcome == Outcome::kPassed &&
               !(result.nmse <= result.tolerance ||
                 (result.tolerance == 0.0 && result.nmse == 0))) {
      result.outcome = Outcome::kFailed;
      if (result.reason.empty()) result.reason = "nmse above tolerance";
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (result.outcome == Outcome::kPassed) {
      char text[48];
      std::snprintf(text, sizeof(text), "ran and checked in %.1f s", seconds);
      result.reason = text;
    }
    report_.cases.push_back(std::move(result));
  }

  Report take() { return std::move(report_); }
  Report& report() { return report_; }

 private:
  Device& target_;
  const LargeOptions& options_;
  Report report_;
};

void fail(CaseResult& result, const std::string& reason) {
  result.outcome = Outcome::kFailed;
  result.reason = reason;
}

// C = A B for n x n matrices: Freivalds' estimate of the NMSE over all of C with four +-1
// vectors, and the exact NMSE of eight whole rows; the case reports the larger.
Status check_matmul(Device& device, sy_dtype dtype, int64_t n, Generator& gen, CaseResult& result) {
  const HostValues a = random_values(gen, dtype, {n, n}, -1.0, 1.0);
  const HostValues b = random_values(gen, dtype, {n, n}, -1.0, 1.0);
  SY_ASSIGN_OR_RETURN(std::vector<float> c,
                      run_op(device, SY_OP_MATMUL, sy_op_params{}, {&a, &b}, dtype, {n, n}));
  if (std::string bad = first_non_finite(c); !bad.empty()) {
    result.nmse = std::numeric_limits<double>::infinity();
    fail(result, bad);
    return ok_status();
  }
  const auto N = static_cast<size_t>(n);
  double err = 0.0, ref = 0.0;
  std::vector<double> r(N), br(N), abr(N), cr(N);
  for (int vector = 0; vector < 4; ++vector) {
    for (double& x : r) x = (gen.next_u64() & 1) != 0 ? 1.0 : -1.0;
    std::fill(br.begin(), br.end(), 0.0);
    std::fill(abr.begin(), abr.end(), 0.0);
    std::fill(cr.begin(), cr.end(), 0.0);
    for (size_t i = 0; i < N; ++i) {
      double sb = 0.0, sc = 0.0;
      for (size_t j = 0; j < N; ++j) {
        sb += static_cast<double>(b.values[i * N + j]) * r[j];
        sc += static_cast<double>(c[i * N + j]) * r[j];
      }
      br[i] = sb;
      cr[i] = sc;
    }
    for (size_t i = 0; i < N; ++i) {
      double s = 0.0;
      for (size_t j = 0; j < N; ++j) s += static_cast<double>(a.values[i * N + j]) * br[j];
      abr[i] = s;
    }
    for (size_t i = 0; i < N; ++i) {
      err += (cr[i] - abr[i]) * (cr[i] - abr[i]);
      ref += abr[i] * abr[i];
    }
  }
  const double freivalds = err / ref;
  double row_err = 0.0, row_ref = 0.0;
  std::vector<double> row(N);
  for (int sample = 0; sample < 8; ++sample) {
    const size_t i = static_cast<size_t>(gen.integer(0, n - 1));
    std::fill(row.begin(), row.end(), 0.0);
    for (size_t k = 0; k < N; ++k) {
      const double aik = static_cast<double>(a.values[i * N + k]);
      const float* b_row = &b.values[k * N];
      for (size_t j = 0; j < N; ++j) row[j] += aik * static_cast<double>(b_row[j]);
    }
    for (size_t j = 0; j < N; ++j) {
      const double d = static_cast<double>(c[i * N + j]) - row[j];
      row_err += d * d;
      row_ref += row[j] * row[j];
    }
  }
  const double rows = row_err / row_ref;
  result.nmse = std::max(freivalds, rows);
  if (result.nmse > result.tolerance) {
    fail(result, "nmse over all elements (Freivalds, 4 vectors) " + std::to_string(freivalds) +
                     ", over 8 whole rows " + std::to_string(rows));
  }
  return ok_status();
}

// out = a OP b elementwise, compared bit for bit with the host's result rounded to the dtype.
Status check_binary(Device& device, sy_op op, sy_dtype dtype, int64_t count, Generator& gen,
                    CaseResult& result) {
  const HostValues a = random_values(gen, dtype, {count}, -2.0, 2.0);
  const HostValues b = random_values(gen, dtype, {count}, -2.0, 2.0);
  SY_ASSIGN_OR_RETURN(std::vector<float> out,
                      run_op(device, op, sy_op_params{}, {&a, &b}, dtype, {count}));
  int64_t wrong = 0, first = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    const float x = a.values[i], y = b.values[i];
    const float expected = round_float(op == SY_OP_ADD ? x + y : x * y, dtype);
    if (std::memcmp(&expected, &out[i], sizeof(float)) != 0) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++wrong;
    }
  }
  result.nmse = static_cast<double>(wrong) / static_cast<double>(count);
  if (wrong != 0) {
    const auto i = static_cast<size_t>(first);
    fail(result, std::to_string(wrong) + " of " + std::to_string(count) +
                     " elements differ; the first at " + std::to_string(first) + ": " +
                     std::to_string(out[i]) + " for " + std::to_string(a.values[i]) + " and " +
                     std::to_string(b.values[i]));
  }
  return ok_status();
}

// REDUCE_SUM / REDUCE_MAX over `axes_mask` of a [rows, kRowLength] f32 matrix, against float64.
Status check_reduce(Device& device, sy_op op, uint32_t axes_mask, int64_t count, Generator& gen,
                    CaseResult& result) {
  const int64_t rows = count / kRowLength;
  const HostValues x = random_values(gen, SY_DTYPE_F32, {rows, kRowLength}, 0.0, 1.0);
  std::vector<int64_t> out_shape;
  if ((axes_mask & 1u) == 0) out_shape.push_back(rows);
  if ((axes_mask & 2u) == 0) out_shape.push_back(kRowLength);
  sy_op_params params{};
  params.reduce.axes_mask = axes_mask;
  SY_ASSIGN_OR_RETURN(std::vector<float> out,
                      run_op(device, op, params, {&x}, SY_DTYPE_F32, out_shape));
  if (std::string bad = first_non_finite(out); !bad.empty()) {
    result.nmse = std::numeric_limits<double>::infinity();
    fail(result, bad);
    return ok_status();
  }
  const bool keep_rows = (axes_mask & 1u) == 0, keep_cols = (axes_mask & 2u) == 0;
  std::vector<double> expected(
      out.size(), op == SY_OP_REDUCE_MAX ? -std::numeric_limits<double>::infinity() : 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < kRowLength; ++j) {
      const size_t slot = keep_rows   ? static_cast<size_t>(i)
                          : keep_cols ? static_cast<size_t>(j)
                                      : 0;
      const double v = static_cast<double>(x.values[static_cast<size_t>(i * kRowLength + j)]);
      expected[slot] = op == SY_OP_REDUCE_MAX ? std::max(expected[slot], v) : expected[slot] + v;
    }
  }
  result.nmse = nmse_of(out, expected);
  return ok_status();
}

// SOFTMAX along the rows of a [rows, kRowLength] f32 matrix, against float64.
Status check_softmax(Device& device, int64_t count, Generator& gen, CaseResult& result) {
  const int64_t rows = count / kRowLength;
  const HostValues x = random_values(gen, SY_DTYPE_F32, {rows, kRowLength}, -8.0, 8.0);
  sy_op_params params{};
  params.softmax.axis = 1;
  SY_ASSIGN_OR_RETURN(std::vector<float> out, run_op(device, SY_OP_SOFTMAX, params, {&x},
                                                     SY_DTYPE_F32, {rows, kRowLength}));
  if (std::string bad = first_non_finite(out); !bad.empty()) {
    result.nmse = std::numeric_limits<double>::infinity();
    fail(result, bad);
    return ok_status();
  }
  std::vector<double> expected(out.size());
  for (int64_t i = 0; i < rows; ++i) {
    const size_t base = static_cast<size_t>(i * kRowLength);
    double top = -std::numeric_limits<double>::infinity(), total = 0.0;
    for (int64_t j = 0; j < kRowLength; ++j)
      top = std::max(top, static_cast<double>(x.values[base + j]));
    for (int64_t j = 0; j < kRowLength; ++j) {
      expected[base + j] = std::exp(static_cast<double>(x.values[base + j]) - top);
      total += expected[base + j];
    }
    for (int64_t j = 0; j < kRowLength; ++j) expected[base + j] /= total;
  }
  result.nmse = nmse_of(out, expected);
  return ok_status();
}

// f16 a + b over more than 2^31 elements: a 32-bit element index wraps before the end. The inputs
// are small integers with periods 1021 and 509 (sums exact in f16), so an element read from the
// wrong index gives the wrong sum; the check compares bits through a table.
Status check_beyond_32bit(Device& device, CaseResult& result) {
  const int64_t count = (int64_t{1} << 31) + 1027;
  const auto n = static_cast<size_t>(count);
  std::vector<uint16_t> bits_of(2048);  // bits_of[v + 1024] = f16 bits of the integer v
  for (int v = -1024; v < 1024; ++v) {
    bits_of[static_cast<size_t>(v + 1024)] = sy_support::f32_to_f16_bits(static_cast<float>(v));
  }
  auto a_value = [](size_t i) { return static_cast<int>(i % 1021) - 510; };
  auto b_value = [](size_t i) { return static_cast<int>(i % 509) - 254; };
  std::vector<unsigned char> bytes(n * 2);
  auto fill = [&](auto value) {
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(bytes.data() + i * 2, &bits_of[static_cast<size_t>(value(i) + 1024)], 2);
    }
  };
  const std::vector<int64_t> shape{count};
  fill(a_value);
  SY_ASSIGN_OR_RETURN(Placed a, place_bytes(device, SY_DTYPE_F16, shape, bytes));
  fill(b_value);
  SY_ASSIGN_OR_RETURN(Placed b, place_bytes(device, SY_DTYPE_F16, shape, bytes));
  std::fill(bytes.begin(), bytes.end(), 0xff);
  SY_ASSIGN_OR_RETURN(Placed out, place_bytes(device, SY_DTYPE_F16, shape, bytes));
  sy_op_call call{};
  call.op = SY_OP_ADD;
  call.num_inputs = 2;
  call.num_outputs = 1;
  call.inputs[0] = a.desc;
  call.inputs[1] = b.desc;
  call.outputs[0] = out.desc;
  SY_RETURN_IF_ERROR(device.default_queue().dispatch(call));
  SY_RETURN_IF_ERROR(device.default_queue().finish());
  SY_RETURN_IF_ERROR(device.default_queue().read(*out.buffer, 0, bytes.data(), bytes.size()));
  int64_t wrong = 0, first = -1;
  for (size_t i = 0; i < n; ++i) {
    uint16_t got = 0;
    std::memcpy(&got, bytes.data() + i * 2, 2);
    if (got != bits_of[static_cast<size_t>(a_value(i) + b_value(i) + 1024)]) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++wrong;
    }
  }
  result.nmse = static_cast<double>(wrong) / static_cast<double>(count);
  if (wrong != 0) {
    fail(result, std::to_string(wrong) + " of " + std::to_string(count) +
                     " elements differ; the first at index " + std::to_string(first));
  }
  return ok_status();
}

Status validate(const LargeOptions& options) {
  if (options.matmul_size < 1 || options.matmul_size > 65536) {
    return invalid_argument("large conformance: matmul size " +
                            std::to_string(options.matmul_size) + " is not in [1, 65536]");
  }
  if (options.elements < kRowLength || options.elements % kRowLength != 0) {
    return invalid_argument("large conformance: elements " + std::to_string(options.elements) +
                            " is not a positive multiple of " + std::to_string(kRowLength));
  }
  return ok_status();
}

}  // namespace

Report run_large(Device& target, const LargeOptions& options) {
  LargeRun run(target, options);
  run.report().backend = target.backend();
  run.report().device_id = target.id();
  if (Status valid = validate(options); !valid.ok()) {
    CaseResult invalid;
    invalid.name = "large/options";
    invalid.op = "options";
    invalid.outcome = Outcome::kFailed;
    invalid.reason = valid.to_string();
    run.report().cases.push_back(std::move(invalid));
    return run.take();
  }
  const std::string m = std::to_string(options.matmul_size);
  const std::string e = std::to_string(options.elements);
  auto generator = [&](const std::string& name) {
    return Generator(Generator::seed_for_case(options.seed, name));
  };
  for (sy_dtype dtype : kFloatDtypes) {
    const std::string name = "large/matmul/" + dtype_label(dtype) + "/" + m + "^3";
    run.add(name, SY_OP_MATMUL, dtype, [&](CaseResult& r) {
      Generator gen = generator(name);
      return check_matmul(target, dtype, options.matmul_size, gen, r);
    });
  }
  const std::pair<sy_op, sy_dtype> binaries[] = {{SY_OP_ADD, SY_DTYPE_F32},
                                                 {SY_OP_MUL, SY_DTYPE_BF16}};
  for (const auto& [op, dtype] : binaries) {
    const std::string name = "large/" + op_label(op) + "/" + dtype_label(dtype) + "/" + e;
    run.add(name, op, dtype, [&, op = op, dtype = dtype](CaseResult& r) {
      Generator gen = generator(name);
      return check_binary(target, op, dtype, options.elements, gen, r);
    });
  }
  const std::pair<const char*, uint32_t> masks[] = {{"all", 3u}, {"rows", 2u}, {"columns", 1u}};
  for (sy_op op : {SY_OP_REDUCE_SUM, SY_OP_REDUCE_MAX}) {
    for (const auto& [label, mask] : masks) {
      const std::string name = "large/" + op_label(op) + "/f32/" + e + "/" + label;
      run.add(name, op, SY_DTYPE_F32, [&, op, mask = mask](CaseResult& r) {
        Generator gen = generator(name);
        return check_reduce(target, op, mask, options.elements, gen, r);
      });
    }
  }
  {
    const std::string name = "large/softmax/f32/" + e + "/rows";
    run.add(name, SY_OP_SOFTMAX, SY_DTYPE_F32, [&](CaseResult& r) {
      Generator gen = generator(name);
      return check_softmax(target, options.elements, gen, r);
    });
  }
  if (options.beyond_32bit) {
    run.add("large/add/f16/2^31+1027", SY_OP_ADD, SY_DTYPE_F16,
            [&](CaseResult& r) { return check_beyond_32bit(target, r); });
  }
  return run.take();
}

}  // namespace switchyard::conformance
