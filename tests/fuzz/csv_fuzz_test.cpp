// The CSV data loader under mutated input (fuzz_support.h).
#include <chrono>

#include "fuzz/fuzz_checks.h"
#include "fuzz/fuzz_support.h"
#include "switchyard/data.h"

using namespace switchyard;
using namespace switchyard::testing;

TEST_CASE("fuzz: the CSV loader loads or refuses mutants, naming the file", "[fuzz]") {
  FuzzTarget target;
  target.name = "mutant.csv";
  target.corpus = "csv";
  target.max_message_chars = 20 * 250;  // up to 20 bad cells of a line each (csv_fuzz.cpp)
  target.seeds = {
      to_bytes("3,2,a,b\n1.0,2.0,0\n1.5,-2.5e3,1\n2.0,2.5,1\n"),
      to_bytes("5.1,3.5,1.4,0.2,0\n4.9,3.0,1.4,0.2,1\n# comment\n\n6.3,3.3,6.0,2.5,2\n"),
      to_bytes("1,nan,0\n2,3,1\ninf,1e-50,0\n"),
      to_bytes("2,1\r\n0.5,1\r\n-0.25,0\r\n"),
      to_bytes("id\tw\tkind\n1\t0.5\tcat\n2\t1.5\tdog\n3\t-2\tcat\n"),
      to_bytes("a;b;c\n1;2;x\n3;4;y\n"),
      to_bytes("\"a\",\"b\",\"label\"\n1,2,\"x\"\n3,4,\"y, \"\"z\"\"\"\n"),
  };
  target.dictionary = {
      ",",          "\n",   "\r\n", "#",    "nan",   "inf",   "-inf",
      "+",          "-",    "e",    "1e39", "1e-50", "0x1p3", "99999999999999999999",
      "2147483648", " ",    "\t",   "a",    "0",     "3",     "\"",
      ";",          "\"\"", "id"};
  bool drop = false;
  target.load = [&drop](const std::filesystem::path& path) {
    drop = !drop;  // both policies and both label orders, alternately
    auto data = load_table_csv(path, table_options(drop));
    return data.ok() ? check_loaded_table(*data) : data.status();
  };
  const FuzzCounts counts = run_fuzz(target, 17);
  CHECK(counts.loaded > kMutantsPerTarget / 20);  // the mutants reach both outcomes
  CHECK(counts.refused > kMutantsPerTarget / 20);
}

// Found by tools/fuzz (tests/fuzz/corpus/csv/regression-counts-header-2e9-features.csv): a counts
// header declaring 2e9 features made a list of that many feature columns (16 GB) before the first
// row was read. The first row's field count is now checked first.
TEST_CASE("fuzz regression: a counts header's huge feature count is refused by the first row",
          "[fuzz]") {
  TempDir dir;
  const std::filesystem::path path = dir / "counts.csv";
  for (const bool drop : {false, true}) {
    write_bytes(path, to_bytes("1,2000000000,a\n1,2,0\n"));
    const auto start = std::chrono::steady_clock::now();
    const Result<Dataset> data = load_table_csv(path, table_options(drop));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
    REQUIRE_FALSE(data.ok());
    CHECK(data.status().message() == path.string() +
                                         ":2: expected 2000000001 fields (features then class), "
                                         "found 3");
  }
}

// Found by tools/fuzz (tests/fuzz/corpus/csv/regression-long-missing-list.csv): a header name of
// bytes that are not UTF-8 went into every listed missing cell as it was, raw bytes for the
// terminal and 2.4 KB for 21 cells. Names from the file are now made printable and cut at 40
// bytes wherever a message shows them, and a list of columns shows at most 30.
TEST_CASE("fuzz regression: column names in messages are printable, cut and few", "[fuzz]") {
  TempDir dir;
  const std::filesystem::path path = dir / "names.csv";
  const std::string garbage = "w\x8b\xff\xfe" + std::string(300, 'x');
  std::string text = garbage + ",label\n";
  for (int row = 0; row < 25; ++row) text += ",0\n";  // every feature cell missing
  write_bytes(path, to_bytes(text));
  const Result<Dataset> data = load_table_csv(path, table_options(false));
  REQUIRE_FALSE(data.ok());
  const std::string message = data.status().message();
  INFO(message);
  CHECK_THAT(message, Catch::Contains(path.string() +
                                      ":2:1: '' is a missing value (feature 'w\\x8b\\xff\\xfe" +
                                      std::string(27, 'x') + "...')"));  // 40 bytes shown
  CHECK(message.find('\x8b') == std::string::npos);
  CHECK_THAT(message, Catch::Contains("... and 5 more"));
  CHECK(message.size() < 20 * 250);

  // A target that names no column lists the file's columns: the first 30 of 101.
  std::string header, row;
  for (int column = 0; column < 100; ++column) {
    header += (column == 0 ? "" : ",") + std::string("c") + std::to_string(column);
    row += (column == 0 ? "" : ",") + std::string("1");
  }
  write_bytes(path, to_bytes(header + ",label\n" + row + ",0\n"));
  TableOptions options = table_options(false);
  options.target = "missing";
  const Result<Dataset> named = load_table_csv(path, options);
  REQUIRE_FALSE(named.ok());
  INFO(named.status().message());
  CHECK_THAT(named.status().message(), Catch::Contains("c28, c29, ... (101 in all)"));
  CHECK(named.status().message().find("c30") == std::string::npos);
}
