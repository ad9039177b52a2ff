// Bad input never loads silently (issue 17): non-finite data values, classes outside the header's
// range, paths that are not regular files, and huge lines quoted in messages.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "backend_support.h"
#include "runtime/input_file.h"
#include "switchyard/checkpoint.h"
#include "switchyard/config.h"
#include "switchyard/data.h"
#include "switchyard/safetensors.h"
#include "train/train_test_support.h"

using namespace switchyard;
using switchyard::testing::TempDir;
using switchyard::testing::write_text;

namespace {

Status csv_error(const std::filesystem::path& path, const std::string& text,
                 NonFinitePolicy policy = NonFinitePolicy::kError) {
  write_text(path, text);
  const auto result = load_labeled_csv(path, policy);
  REQUIRE_FALSE(result.ok());
  return result.status();
}

}  // namespace

TEST_CASE("a non-finite feature is an error naming file, line and column", "[bad-input]") {
  TempDir dir;
  const auto path = dir / "nan.csv";
  const std::string hint =
      " is not a finite number (data.non_finite: drop_rows would drop such rows)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      // NaN, a missing value by data.na_values, is data.missing's (missing_values_test.cpp).
      {"3,2,a,b\n1.0,2.0,0\n1.5,inf,1\n2.0,2.5,1\n", ":3:2: 'inf'"},
      {"1.0,2.0,0\n1.5,2.5,1\n-inf,2.5,1\n", ":3:1: '-inf'"},
      {"1.0,2.0,0\n\n# comment\n1.5,+Infinity,1\n", ":4:2: '+Infinity'"},
      {"1.0,2.0,0\n1.5,1e39,1\n", ":2:2: '1e39'"},  // beyond f32: it would become inf
  };
  for (const auto& [text, where] : cases) {
    const Status status = csv_error(path, text);
    CHECK(status.code() == StatusCode::kInvalidArgument);
    CHECK(status.message() == path.string() + where + hint);
  }
  write_text(path, "1.0,1e-50,0\n1.5,2.5,1\n");  // too small for f32: 0, as a conversion gives
  const Dataset tiny = value_or_throw(load_labeled_csv(path));
  CHECK(tiny.features == std::vector<float>{1.0f, 0.0f, 1.5f, 2.5f});
}

TEST_CASE("data.non_finite: drop_rows drops those rows and counts them", "[bad-input]") {
  TempDir dir;
  const auto path = dir / "some-nan.csv";
  write_text(path, "5,2,a,b\n1.0,2.0,0\n1.5,nan,1\ninf,2.5,1\n3.0,4.0,1\n5.0,6.0,0\n");
  const Dataset data = value_or_throw(load_labeled_csv(path, NonFinitePolicy::kDropRows));
  CHECK(data.sample_count == 3);
  CHECK(data.dropped_rows == 2);
  CHECK(data.features == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(data.labels == std::vector<int32_t>{0, 1, 0});
  CHECK(data.source_lines == std::vector<int64_t>{2, 5, 6});

  const Status none_left = csv_error(path, "nan,1,0\n2,inf,1\n", NonFinitePolicy::kDropRows);
  CHECK(none_left.message() == path.string() +
                                   ": the file has no samples left after dropping 2 rows with "
                                   "missing or non-finite values (data.missing, "
                                   "data.non_finite: drop_rows)");
  // A dropped row is still checked: a malformed class is an error under either policy.
  const Status bad_class = csv_error(path, "1,2,0\nnan,1,-1\n", NonFinitePolicy::kDropRows);
  CHECK(bad_class.message() == path.string() + ":2:3: class '-1' is not an integer >= 0");
  // An empty class is a missing value (data.na_values): non_finite: drop_rows drops its row too.
  write_text(path, "1,2,a\n3,4,b\nnan,1,\n");
  const Dataset empty_class = value_or_throw(load_labeled_csv(path, NonFinitePolicy::kDropRows));
  CHECK(empty_class.sample_count == 2);
  CHECK(empty_class.class_names == std::vector<std::string>{"a", "b"});
}

TEST_CASE("data.non_finite is read from the YAML and validated there", "[bad-input]") {
  const Config drop =
      value_or_throw(Config::load_string("data: {non_finite: drop_rows}\n", "c.yaml"));
  CHECK(value_or_throw(DataSettings::from_config(drop.root()["data"])).non_finite ==
        NonFinitePolicy::kDropRows);
  const Config fallback = value_or_throw(Config::load_string("data: {}\n", "c.yaml"));
  CHECK(value_or_throw(DataSettings::from_config(fallback.root()["data"])).non_finite ==
        NonFinitePolicy::kError);
  const auto wrong = Config::load_string("data:\n  non_finite: skip\n", "c.yaml");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().message() ==
        "c.yaml:2:15: key 'data.non_finite': unknown value 'skip', expected one of: error, "
        "drop_rows");
}

TEST_CASE("a class outside the header's classes names its file and line", "[bad-input]") {
  TempDir dir;
  const auto path = dir / "classes.csv";
  const Status status = csv_error(path, "3,2,a,b\n1,2,0\n3,4,1\n5,6,2\n");
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message() ==
        path.string() + ":4:3: class 2 is outside the header's 2 classes (0..1)");
}

TEST_CASE("a 2 MB line is quoted cut to 200 characters, with its length", "[bad-input]") {
  TempDir dir;
  const auto path = dir / "long.csv";
  const std::string huge(2'000'000, 'x');
  const std::string cut = std::string(200, 'x') + "...' (cut to 200 of 2000000 characters)";
  const Status header = csv_error(path, huge + "\n1,2,0\n");
  CHECK(header.message() == path.string() + ":1: the header has 1 column, line 2 has 3: '" + cut);
  const Status field = csv_error(path, "1,2,0\n1," + huge + ",1\n");
  CHECK(field.message() == path.string() + ":2:2: '" + cut + " is not a number");
  CHECK(detail::quote_input("short") == "'short'");
}

TEST_CASE("a line over 8 MiB is refused naming file, line and the limit", "[bad-input]") {
  TempDir dir;
  const auto path = dir / "long.csv";
  // 20 MB of numbers on one line read as one sample (and then "a test fraction of 0.2 of 1
  // samples leaves one split empty"); a line that long is refused before its fields are split,
  // whether it holds data or a comment.
  std::string numbers;
  while (numbers.size() < 20'000'000) numbers += "1.25,";
  const Status data = csv_error(path, "1,2,0\n" + numbers + "0\n");
  CHECK(data.code() == StatusCode::kInvalidArgument);
  CHECK(data.message() == path.string() + ":2: the line is " + std::to_string(numbers.size() + 1) +
                              " bytes long, over the limit of 8388608 bytes (8 MiB) per line");
  const Status comment = csv_error(path, "# " + std::string(9 << 20, 'c') + "\n1,2,0\n");
  CHECK(comment.message() == path.string() + ":1: the line is " + std::to_string((9 << 20) + 2) +
                                 " bytes long, over the limit of 8388608 bytes (8 MiB) per line");
  // 8 MiB itself is within the limit.
  write_text(path, "1,2,0\n1,2," + std::string((8 << 20) - 4, '0') + "\n");
  CHECK(value_or_throw(load_labeled_csv(path)).sample_count == 2);
}

TEST_CASE("bytes a terminal would act on are quoted as \\xNN", "[bad-input]") {
  CHECK(detail::quote_input("a\x1b[31mb\x01\x7f") == "'a\\x1b[31mb\\x01\\x7f'");
  CHECK(detail::quote_input("\xff\xfe\xc3") == "'\\xff\\xfe\\xc3'");  // not UTF-8
  const std::string utf8 =
      "Gr\xc3\xb6\xc3\x9f"
      "e \xe2\x82\xac";  // valid UTF-8 is kept
  CHECK(detail::quote_input(utf8) == "'" + utf8 + "'");
  CHECK(detail::quote_input("\xc2\x9b") == "'\\xc2\\x9b'");  // C1 control: CSI
  CHECK(detail::printable_input(std::string(300, '\x01'), 2) ==
        "\\x01\\x01... (cut to 2 of 300 bytes)");
  TempDir dir;
  const Status field = csv_error(dir / "binary.csv", "1,2,0\n1,\x1b]0;owned\x07,1\n");
  CHECK(field.message() ==
        (dir / "binary.csv").string() + ":2:2: '\\x1b]0;owned\\x07' is not a number");
}

TEST_CASE("a file larger than the memory budget is refused by its size, naming it",
          "[bad-input][limits]") {
  TempDir dir;
  // A sparse file of 1 TiB costs nothing to make; reading it whole would.
  const auto path = dir / "huge.bin";
  write_text(path, "");
  std::filesystem::resize_file(path, uint64_t{1} << 40);
  const std::string budget =
      "1.0 TiB (1099511627776 bytes) for its contents exceed the memory budget of ";
  const auto data = load_labeled_csv(path);
  CHECK(data.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(data.status().message(),
             Catch::StartsWith("data file " + path.string() + ": " + budget));
  const auto checkpoint = read_checkpoint(path);
  CHECK(checkpoint.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(checkpoint.status().message(),
             Catch::StartsWith("checkpoint " + path.string() + ": " + budget));
  const auto weights = read_safetensors(path);
  CHECK(weights.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(weights.status().message(),
             Catch::StartsWith("weights " + path.string() + ": " + budget));
}

TEST_CASE("a directory or a fifo given as a file is named, with what was expected", "[bad-input]") {
  TempDir dir;
  const auto folder = dir / "folder";
  const auto fifo = dir / "fifo";
  std::filesystem::create_directory(folder);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const auto& [path, type] : {std::pair{folder, "a directory"}, std::pair{fifo, "a fifo"}}) {
    const std::string expected =
        std::string(" ") + path.string() + " is " + type + ", expected a file";
    // A fifo without a writer would block a plain open() forever; these return at once.
    const auto data = load_labeled_csv(path);
    CHECK(data.status().code() == StatusCode::kInvalidArgument);
    CHECK(data.status().message() == "data file" + expected);
    const auto gz = load_labeled_csv(path.string() + ".gz");  // no such file
    CHECK(gz.status().message() == "data file " + path.string() + ".gz does not exist");
    const auto checkpoint = read_checkpoint(path);
    CHECK(checkpoint.status().code() == StatusCode::kInvalidArgument);
    CHECK(checkpoint.status().message() == "checkpoint" + expected);
    const auto weights = read_safetensors(path);
    CHECK(weights.status().message() == "weights" + expected);
  }
}

TEST_CASE("an unreadable file is named with the reason", "[bad-input]") {
  if (::geteuid() == 0) {
    switchyard::testing::skip_test("root reads files whatever their permissions");
    return;
  }
  TempDir dir;
  const auto path = dir / "secret.csv";
  write_text(path, "1,2,0\n");
  std::filesystem::permissions(path, std::filesystem::perms::none);
  const auto data = load_labeled_csv(path);
  CHECK(data.status().code() == StatusCode::kPermissionDenied);
  CHECK(data.status().message() ==
        "data file " + path.string() + " is not readable: Permission denied");
}

TEST_CASE("a file that fails to read is named with the reason", "[bad-input]") {
  // A regular file by stat whose read fails (offset 0 is never mapped): the read-error path.
  const auto data = load_labeled_csv("/proc/self/mem");
  CHECK(data.status().code() == StatusCode::kDataLoss);
  CHECK(data.status().message() == "error reading data file /proc/self/mem: Input/output error");
}
