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
