// libFuzzer target: the CSV table reader the data layer uses (fuzz_target.h). The input is a
// file's bytes, read with both non-finite policies and both label orders (the steps of
// tests/fuzz/csv_fuzz_test.cpp). load_table_csv reads only paths: the input goes through one
// scratch file per process. Corpus: tests/fuzz/corpus/csv.
#include "fuzz/fuzz_checks.h"
#include "fuzz_target.h"
#include "switchyard/data.h"

using namespace switchyard;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::no_exception_escapes([&] {
    const std::filesystem::path path = fuzz::write_scratch_file("input.csv", data, size);
    for (const bool drop : {false, true}) {
      const Result<Dataset> table = load_table_csv(path, testing::table_options(drop));
      const Status status = table.ok() ? testing::check_loaded_table(*table) : table.status();
      // Up to 20 bad cells of a line each (their place, the value, the column's cut name).
      fuzz::check_outcome(status, path.string(), 20 * 250);
    }
  });
  return 0;
}
