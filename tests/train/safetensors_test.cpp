// Weights in the safetensors format: the byte layout other readers expect, every stored dtype we
// read, damaged files refused with the tensor named, and the trainer's train.export and
// model.weights (export, import, bit-identical parameters, a mismatched model refused).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>

#include "switchyard/safetensors.h"
#include "train/trainer_test_support.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

TensorRecord floats(std::vector<int64_t> shape, std::vector<float> values) {
  TensorRecord record;
  record.dtype = DType::kF32;
  record.shape = std::move(shape);
  record.floats = std::move(values);
  return record;
}

template <typename T>
void append(std::vector<uint8_t>& out, T value) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  for (uint8_t byte : bytes) out.push_back(byte);
}

// A file built by hand: `header` JSON, then `data`.
std::vector<uint8_t> handmade(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> bytes;
  append<uint64_t>(bytes, header.size());
  for (char c : header) bytes.push_back(static_cast<uint8_t>(c));
  for (uint8_t byte : data) bytes.push_back(byte);
  return bytes;
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
  const auto parsed = parse_safetensors(bytes, "w.safetensors");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().code() == StatusCode::kDataLoss);
  return parsed.status().message();
}

}  // namespace

TEST_CASE("safetensors: what is written reads back, in the layout other readers expect",
          "[safetensors]") {
  SafetensorsFile file;
  file.tensors.emplace_back("0.weight", floats({2, 3}, {1, -2, 3.5f, 0, 1e-30f, -7}));
  file.tensors.emplace_back("0.bias", floats({2}, {0.25f, -0.5f}));
  file.tensors.emplace_back("scalar", floats({}, {42}));
  file.tensors.emplace_back("empty", floats({0, 4}, {}));
  TensorRecord steps;
  steps.dtype = DType::kI64;
  steps.shape = {3};
  steps.integers = {1, -2, int64_t{1} << 40};
  file.tensors.emplace_back("steps", steps);
  file.metadata["format"] = "pt";
  file.metadata["note"] = "quote \" and newline \n";
  const std::vector<uint8_t> bytes = value_or_throw(serialize_safetensors(file));

  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  CHECK(header_size % 8 == 0);  // the data area starts 8-byte aligned
  const std::string header(reinterpret_cast<const char*>(bytes.data() + 8), header_size);
  CHECK(
      contains(header, "\"0.weight\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}"));
  CHECK(contains(header, "\"0.bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[24,32]}"));
  CHECK(contains(header, "\"steps\":{\"dtype\":\"I64\",\"shape\":[3],\"data_offsets\":[36,60]}"));
  CHECK(bytes.size() == 8 + header_size + 60);
  float first = 0;
  std::memcpy(&first, bytes.data() + 8 + header_size, 4);
  CHECK(first == 1.0f);

  const SafetensorsFile back = value_or_throw(parse_safetensors(bytes, "mem"));
  REQUIRE(back.tensors.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    INFO(file.tensors[i].first);
    CHECK(back.tensors[i].first == file.tensors[i].first);
    CHECK(back.tensors[i].second.shape == file.tensors[i].second.shape);
    CHECK(back.tensors[i].second.dtype == file.tensors[i].second.dtype);
    CHECK(back.tensors[i].second.floats == file.tensors[i].second.floats);
    CHECK(back.tensors[i].second.integers == file.tensors[i].second.integers);
  }
  CHECK(back.metadata == file.metadata);

  TempDir dir;
  const auto path = dir / "sub" / "w.safetensors";
  REQUIRE(write_safetensors(path, file).ok());
  CHECK(value_or_throw(read_safetensors(path)).tensors.size() == 5);
}

TEST_CASE("safetensors: f64, f16, bf16 and narrow integers are read", "[safetensors]") {
  std::vector<uint8_t> data;
  append<double>(data, -1.25);
  append<uint16_t>(data, 0x3c00);  // f16 1.0
  append<uint16_t>(data, 0xc000);  // f16 -2.0
  append<uint16_t>(data, 0x3fc0);  // bf16 1.5
  append<int32_t>(data, -5);
  append<int8_t>(data, -3);
  append<uint8_t>(data, 200);
  const std::string header =
      "{\"d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]},"
      "\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[8,12]},"
      "\"b\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[12,14]},"
      "\"i\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[14,18]},"
      "\"s\":{\"dtype\":\"I8\",\"shape\":[1],\"data_offsets\":[18,19]},"
      "\"u\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[19,20]}}";
  const SafetensorsFile file = value_or_throw(parse_safetensors(handmade(header, data), "mem"));
  REQUIRE(file.tensors.size() == 6);
  CHECK(file.tensors[0].second.floats == std::vector<float>{-1.25f});
  CHECK(file.tensors[1].second.floats == std::vector<float>{1.0f, -2.0f});
  CHECK(file.tensors[2].second.floats == std::vector<float>{1.5f});
  CHECK(file.tensors[3].second.integers == std::vector<int64_t>{-5});
  CHECK(file.tensors[4].second.integers == std::vector<int64_t>{-3});
  CHECK(file.tensors[5].second.integers == std::vector<int64_t>{200});
}

TEST_CASE("safetensors: a damaged file is refused naming the file and the tensor",
          "[safetensors]") {
  const std::vector<uint8_t> four_bytes = {0, 0, 128, 63};
  auto one = [&](const std::string& entry) {
    return handmade("{\"w\":" + entry + "}", four_bytes);
  };
  CHECK(contains(parse_error({1, 2, 3}), "w.safetensors: shorter than the 8-byte header length"));
  std::vector<uint8_t> too_long = one("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}");
  too_long[0] = 0xff;
  CHECK(contains(parse_error(too_long), "header length"));
  CHECK(contains(parse_error(handmade("{\"w\": [", four_bytes)), "not valid JSON"));
  CHECK(contains(parse_error(one("{\"dtype\":\"F8_E4M3\",\"shape\":[4],\"data_offsets\":[0,4]}")),
                 "tensor 'w': dtype F8_E4M3 is not supported"));
  CHECK(contains(parse_error(one("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}")),
                 "tensor 'w': data_offsets [0, 8] outside the 4 data bytes"));
  CHECK(contains(parse_error(one("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}")),
                 "tensor 'w': 4 bytes for F32 [2], which needs 8"));
  CHECK(contains(parse_error(one("{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}")),
                 "negative dimension"));
  CHECK(contains(parse_error(one("{\"dtype\":\"F32\",\"shape\":[65536,65536,65536,65536,65536],"
                                 "\"data_offsets\":[0,4]}")),
                 "more elements than the file"));
  CHECK(contains(
      parse_error(handmade("{\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]},"
                           "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2,4]}}",
                           four_bytes)),
      "tensors 'a' and 'b' overlap"));
  CHECK(read_safetensors("/nonexistent/w.safetensors").status().code() == StatusCode::kNotFound);
}

TEST_CASE("safetensors: the header is strict JSON, padded with spaces only", "[safetensors]") {
  const std::vector<uint8_t> four_bytes = {0, 0, 128, 63};
  const std::string entry = "{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}";
  // Space padding after the object is the format's; the file reads.
  const auto padded = parse_safetensors(handmade("{\"w\":" + entry + "}      ", four_bytes), "mem");
  REQUIRE(padded.ok());
  CHECK(padded->tensors.at(0).second.floats == std::vector<float>{1.0f});

  CHECK(contains(parse_error(handmade("{\"w\":" + entry + ",\"w\":" + entry + "}", four_bytes)),
                 "w.safetensors: the header is not valid JSON: duplicate member name 'w'"));
  CHECK(contains(
      parse_error(handmade("{\"w\":" + entry + ",\"__metadata__\":{\"k\":\"\xff\"}}", four_bytes)),
      "w.safetensors: the header is not valid JSON"));
  CHECK(contains(parse_error(handmade("{\"w\":" + entry + "} x", four_bytes)), "not valid JSON"));
  for (const std::string& header :
       {"{\"w\":" + entry + "}\n", " {\"w\":" + entry + "}", "[" + entry + "]"}) {
    INFO(header);
    CHECK(contains(parse_error(handmade(header, four_bytes)),
                   "w.safetensors: the header is not a JSON object padded with spaces only"));
  }
  CHECK(contains(
      parse_error(handmade("{\"w\":" + entry + ",\"__metadata__\":{\"k\":1}}", four_bytes)),
      "__metadata__ is not an object of strings"));
  CHECK(contains(
      parse_error(handmade("{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}",
                           four_bytes)),
      "tensor 'w': shape must be a list of integers, not 1.5"));
  CHECK(contains(
      parse_error(handmade("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,\"4\"]}}",
                           four_bytes)),
      "tensor 'w': data_offsets must be two byte offsets"));
  // 4 * 2^62 wraps to 0 in 64 bits: still more elements than the file holds, not an empty tensor.
  CHECK(contains(parse_error(handmade("{\"w\":{\"dtype\":\"F32\",\"shape\":[4,"
                                      "4611686018427387904],\"data_offsets\":[0,0]}}",
                                      four_bytes)),
                 "more elements than the file"));
}

TEST_CASE("safetensors: a damaged header is quoted printable and cut, never as raw bytes",
          "[safetensors]") {
  const std::vector<uint8_t> four_bytes = {0, 0, 128, 63};
  // Bytes that are not UTF-8 inside a string (the parser quotes what it last read), a tensor
  // name and a dtype holding terminal escape sequences, and an unterminated 100 kB string.
  std::string garbage = "{\"w\":\"abc";
  for (int k = 0; k < 2000; ++k) garbage += static_cast<char>(0x80 + k % 128);
  garbage += "\"}";
  const std::string entry = "{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}";
  const std::vector<std::string> headers = {
      garbage,
      "{\"w\":" + entry + ",\"x\\u001b[2J\":1}",
      "{\"w\":" + entry + ",\"" + std::string(100000, 'n'),
      "{\"\\u001b[31m\":{\"dtype\":\"F\\u0007\",\"shape\":[1],\"data_offsets\":[0,4]}}",
  };
  for (const std::string& header : headers) {
    const std::string message = parse_error(handmade(header, four_bytes));
    INFO(message);
    CHECK(contains(message, "w.safetensors: "));
    CHECK(message.size() < 1000);
    CHECK(std::all_of(message.begin(), message.end(), [](char c) {
      return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
    }));
  }
  CHECK(contains(parse_error(handmade(headers[3], four_bytes)),
                 "tensor '\\x1b[31m': dtype F\\x07 is not supported"));
}

TEST_CASE("safetensors: the tensors must tile the data area exactly", "[safetensors]") {
  std::vector<uint8_t> data;
  append<float>(data, 1.5f);
  append<float>(data, -2.0f);
  const std::string tensor = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  // A header length one byte short: the JSON still parses (one pad space fewer), and the data
  // area starts a byte early, so every value would be read shifted by a byte.
  std::vector<uint8_t> short_header = handmade(tensor + "  ", data);
  short_header[0] -= 1;
  CHECK(parse_error(short_header) ==
        "safetensors w.safetensors: data bytes [8, 9) after the last tensor belong to no tensor "
        "(the tensors must cover the data area exactly; is the header length wrong?)");
  CHECK(value_or_throw(parse_safetensors(handmade(tensor + "  ", data), "mem"))
            .tensors[0]
            .second.floats == std::vector<float>{1.5f, -2.0f});

  auto f32 = [](const std::string& name, int begin, int end) {
    return "\"" + name + "\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string((end - begin) / 4) +
           "],\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
  };
  std::vector<uint8_t> twelve = data;
  append<float>(twelve, 3.0f);
  CHECK(parse_error(handmade("{" + f32("a", 0, 4) + "," + f32("b", 8, 12) + "}", twelve)) ==
        "safetensors w.safetensors: data bytes [4, 8) belong to no tensor (a hole before 'b')");
  CHECK(parse_error(handmade("{" + f32("w", 4, 8) + "}", data)) ==
        "safetensors w.safetensors: data bytes [0, 4) belong to no tensor (a hole before 'w')");
  CHECK(parse_error(handmade("{" + f32("a", 0, 8) + "," + f32("b", 4, 8) + "}", data)) ==
        "safetensors w.safetensors: tensors 'a' and 'b' overlap (data_offsets [0, 8] and [4, 8])");
  // Listed in any order in the header, the tensors are laid out by their offsets.
  const SafetensorsFile swapped = value_or_throw(
      parse_safetensors(handmade("{" + f32("b", 4, 8) + "," + f32("a", 0, 4) + "}", data), "mem"));
  REQUIRE(swapped.tensors.size() == 2);
  CHECK(swapped.tensors[0].first == "a");
  CHECK(swapped.tensors[1].second.floats == std::vector<float>{-2.0f});
}

TEST_CASE("safetensors: JSON of unexpected types is refused, never thrown", "[safetensors]") {
  // A metadata value that is a list: the JSON reader throws converting it to a string.
  const std::string message = parse_error(handmade("{\"__metadata__\":{\"k\":[\"x\"]}}", {}));
  CHECK(message.rfind("safetensors w.safetensors: ", 0) == 0);
}

TEST_CASE("train.export writes the parameters; model.weights starts a run from them",
          "[safetensors][trainer]") {
  TempDir dir;
  const std::string exported = (dir / "weights.safetensors").string();
  Trainer trained(train_config_from(small_run_yaml(2, "") + "  export: " + exported + "\n"),
                  reference_device());
  const TrainSummary summary = trained.run();
  CHECK(summary.exported_weights == exported);
  const SafetensorsFile file = value_or_throw(read_safetensors(exported));
  REQUIRE(file.tensors.size() == 4);
  CHECK(file.tensors[0].first == "0.weight");
  CHECK(file.tensors[0].second.shape == std::vector<int64_t>{16, 30});  // [out, in] as in PyTorch
  CHECK(file.metadata.at("format") == "pt");
  CHECK(file.metadata.at("switchyard.architecture") == trained.built_model().architecture);
  CHECK(file.metadata.at("switchyard.data") ==
        "dataset=breast_cancer test_fraction=0.2 split_seed=1 scale=standard");

  std::string yaml = small_run_yaml(2, "");
  yaml.replace(yaml.find("model:\n"), 7, "model:\n  weights: " + exported + "\n");
  Trainer imported(train_config_from(yaml), reference_device());
  CHECK(parameter_bits(imported.model()) == parameter_bits(trained.model()));

  // Another model's weights are refused, naming what is missing and what is extra.
  std::string wider = small_run_yaml(2, "", "", 24);
  wider.replace(wider.find("model:\n"), 7, "model:\n  weights: " + exported + "\n");
  try {
    Trainer refused(train_config_from(wider), reference_device());
    FAIL("a 24-wide model loaded 16-wide weights");
  } catch (const Error& error) {
    CHECK(error.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(error.what(), Catch::Contains("weights " + exported) &&
                                 Catch::Contains("tensor '0.weight' is [16, 30], the model's "
                                                 "parameter is f32 [24, 30]"));
  }
}
