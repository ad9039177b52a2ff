// Ordinary CSV and TSV files (issue 18): a header of names, the target by name or number, string
// labels in a chosen order, dropped and id columns, the delimiter detected or given, quoted
// fields, and new rows read as the training rows were. Our own dialect still loads as before.
#include <catch2/catch.hpp>

#include "switchyard/config.h"
#include "switchyard/data.h"
#include "train/train_test_support.h"

using namespace switchyard;
using switchyard::testing::TempDir;
using switchyard::testing::write_text;

namespace {

Dataset load(const std::filesystem::path& path, const std::string& text,
             const TableOptions& options = {}) {
  write_text(path, text);
  return value_or_throw(load_table_csv(path, options));
}

std::string error_of(const std::filesystem::path& path, const std::string& text,
                     const TableOptions& options = {}) {
  write_text(path, text);
  const auto result = load_table_csv(path, options);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kInvalidArgument);
  return result.status().message();
}

TableOptions with_target(const std::string& target, const std::string& id = "",
                         std::vector<std::string> drop = {}) {
  TableOptions options;
  options.target = target;
  options.id = id;
  options.drop = std::move(drop);
  return options;
}

const char* const kFlowers =
    "id,length,kind,width,notes\n"
    "a1,1.5,rose,2.5,red\n"
    "a2,3.0,tulip,4.0,\n"
    "a3,5.5,daisy,6.5,tall\n"
    "a4,7.0,tulip,8.0,x\n";

}  // namespace

TEST_CASE("a header of names: target by name, id and dropped columns, string labels sorted",
          "[data][table]") {
  TempDir dir;
  const Dataset data = load(dir / "f.csv", kFlowers, with_target("kind", "id", {"notes"}));
  CHECK(data.table.header == "names");
  CHECK(data.table.column_names ==
        std::vector<std::string>{"id", "length", "kind", "width", "notes"});
  CHECK(data.table.target_column == 2);
  CHECK(data.table.id_column == 0);
  CHECK(data.table.dropped_columns == std::vector<int64_t>{4});
  CHECK(data.table.feature_columns == std::vector<int64_t>{1, 3});
  CHECK(data.table.feature_names() == std::vector<std::string>{"length", "width"});
  CHECK(data.sample_count == 4);
  CHECK(data.sample_shape == std::vector<int64_t>{2});
  CHECK(data.features == std::vector<float>{1.5f, 2.5f, 3, 4, 5.5f, 6.5f, 7, 8});
  CHECK(data.class_names == std::vector<std::string>{"daisy", "rose", "tulip"});
  CHECK(data.labels == std::vector<int32_t>{1, 2, 0, 2});
  CHECK(data.ids == std::vector<std::string>{"a1", "a2", "a3", "a4"});
  CHECK(data.source_lines == std::vector<int64_t>{2, 3, 4, 5});
  CHECK(data.labeled);
  CHECK(data.notes ==
        std::vector<std::string>{"classes (data.label_order: sorted): daisy, rose, tulip"});
}

TEST_CASE("label_order first_seen numbers classes as the file meets them", "[data][table]") {
  TempDir dir;
  TableOptions options = with_target("kind", "id", {"notes"});
  options.label_order = LabelOrder::kFirstSeen;
  const Dataset data = load(dir / "f.csv", kFlowers, options);
  CHECK(data.class_names == std::vector<std::string>{"rose", "tulip", "daisy"});
  CHECK(data.labels == std::vector<int32_t>{0, 1, 2, 1});
}

TEST_CASE("the target by number (1 = first, -1 = last); without one, the last column, said",
          "[data][table]") {
  TempDir dir;
  const auto path = dir / "n.csv";
  const std::string text = "a,b,c\n1,2,x\n3,4,y\n";
  const Dataset first = load(path, "a,b,c\n1,2,5\n3,4,6\n", with_target("1"));
  CHECK(first.table.target_column == 0);
  CHECK(first.labels == std::vector<int32_t>{1, 3});
  CHECK(first.features == std::vector<float>{2, 5, 4, 6});
  CHECK(load(path, "a,b,c\n1,x,5\n3,y,6\n", with_target("-2")).table.target_column == 1);
  const Dataset last = load(path, text);
  CHECK(last.table.target_column == 2);
  CHECK(last.features == std::vector<float>{1, 2, 3, 4});
  CHECK(last.notes.front() == "data.target not set: the target is the last column, 'c'");
  // A header of names takes precedence over a number: a column named "2" is that column.
  const Dataset named = load(path, "1,2,label\n0.5,x,0\n1.5,y,1\n", with_target("2"));
  CHECK(named.table.header == "names");
  CHECK(named.table.target_column == 1);
  CHECK(named.class_names == std::vector<std::string>{"x", "y"});
}

TEST_CASE("unknown or clashing columns are errors naming the key, the file and the columns",
          "[data][table]") {
  TempDir dir;
  const auto path = dir / "f.csv";
  CHECK(error_of(path, kFlowers, with_target("knd")) ==
        "data.target: no column 'knd' in " + path.string() +
            " (columns: id, length, kind, width, notes)");
  CHECK(error_of(path, kFlowers, with_target("kind", "", {"notez"})) ==
        "data.drop: no column 'notez' in " + path.string() +
            " (columns: id, length, kind, width, notes)");
  CHECK(error_of(path, kFlowers, with_target("kind", "kind")) ==
        "data.id: column 'kind' is the target (data.target)");
  CHECK(error_of(path, "1,2,0\n3,4,1\n", with_target("5")) ==
        "data.target: no column '5' in " + path.string() +
            " (the file has 3 columns and no header of names; number them from 1, or -1 for the "
            "last)");
  // Every column but the target dropped: nothing left to learn from.
  CHECK(error_of(path, "a,b\n1,x\n", with_target("b", "", {"a"})) ==
        path.string() +
            ": no feature column is left (2 columns, minus the target, the id and "
            "data.drop)");
}

TEST_CASE("a text value in a feature column names file, line, column and the feature",
          "[data][table]") {
  TempDir dir;
  const auto path = dir / "f.csv";
  // Without data.drop the notes column is a feature, and its text is an error there.
  CHECK(error_of(path, kFlowers, with_target("kind", "id")) ==
        path.string() + ":2:5: 'red' is not a number (feature 'notes')");
  CHECK(error_of(path, "a,b,c\n1,2,x\n3,4,y,5\n") ==
        path.string() + ":3: expected 3 fields (as the header has), found 4");
  CHECK(error_of(path, "a,b,c\n1,2,x\n3,\"4,y\n") == path.string() + ":3:2: unterminated quote");
}

TEST_CASE("tab and semicolon files are detected; data.delimiter decides; a close call is said",
          "[data][table]") {
  TempDir dir;
  const Dataset tsv = load(dir / "f.tsv", "x\ty\tkind\n1.5\t2\tcat\n3\t4.5\tdog\n");
  CHECK(tsv.table.delimiter == '\t');
  CHECK(tsv.features == std::vector<float>{1.5f, 2, 3, 4.5f});
  CHECK(tsv.class_names == std::vector<std::string>{"cat", "dog"});
  CHECK(tsv.notes.size() == 2);  // the target's line and the classes; no word on the delimiter
  const Dataset semicolon = load(dir / "f.csv", "x;y;kind\n1;2;cat\n3;4;dog\n");
  CHECK(semicolon.table.delimiter == ';');
  CHECK(semicolon.features == std::vector<float>{1, 2, 3, 4});
  // A file that both ',' and ';' split evenly: the guess is said, and repeated with an error.
  const auto ambiguous = dir / "a.csv";
  const Dataset guessed = load(ambiguous, "x,y;z\n1,2;3\n4,5;6\n");
  CHECK(guessed.table.delimiter == ',');
  CHECK(guessed.notes.front() == ambiguous.string() +
                                     ": the delimiter is ',' (';' would also split every line "
                                     "evenly; data.delimiter chooses)");
  CHECK(error_of(ambiguous, "a,b;c,d\n1,2;3,4\n5,6;7,8\n") ==
        ambiguous.string() +
            ":2:2: '2;3' is not a number (feature 'b;c')\n  note: " + ambiguous.string() +
            ": the delimiter is ',' (';' would also split every line evenly; data.delimiter "
            "chooses)");
  // Detection would take ';' here (3 fields against 2); data.delimiter says ','.
  TableOptions comma = with_target("1");
  comma.delimiter = ',';
  const Dataset forced = load(dir / "c.csv", "a;b;c,d\n1;2;3,4\n5;6;7,8\n", comma);
  CHECK(forced.table.column_names == std::vector<std::string>{"a;b;c", "d"});
  CHECK(forced.class_names == std::vector<std::string>{"1;2;3", "5;6;7"});
}

TEST_CASE("quoted fields hold delimiters and quotes", "[data][table]") {
  TempDir dir;
  const Dataset data =
      load(dir / "q.csv",
           "\"size, cm\",\"weight\",\"class\"\n1.5,\"2\",\"big, \"\"red\"\"\"\n2,3,small\n");
  CHECK(data.table.column_names == std::vector<std::string>{"size, cm", "weight", "class"});
  CHECK(data.features == std::vector<float>{1.5f, 2, 2, 3});
  CHECK(data.class_names == std::vector<std::string>{"big, \"red\"", "small"});
}

TEST_CASE("our own dialect loads as before: counts header, integer classes, no header",
          "[data][table]") {
  TempDir dir;
  const Dataset counts = load(dir / "c.csv", "3,2,a,b\n1,2,0\n3,4,1\n5,6,1\n");
  CHECK(counts.table.header == "counts");
  CHECK(counts.class_names == std::vector<std::string>{"a", "b"});
  CHECK(counts.labels == std::vector<int32_t>{0, 1, 1});
  CHECK(counts.notes.empty());
  const Dataset plain = load(dir / "p.csv", "1,2,0\n3,4,2\n");
  CHECK(plain.table.header == "none");
  CHECK(plain.class_names == std::vector<std::string>{"0", "1", "2"});
  CHECK(plain.labels == std::vector<int32_t>{0, 2});
  // Integer labels under a header of names keep their values as today.
  const Dataset named = load(dir / "n.csv", "x,y,label\n1,2,1\n3,4,0\n");
  CHECK(named.class_names == std::vector<std::string>{"0", "1"});
  CHECK(named.labels == std::vector<int32_t>{1, 0});
  // A first row of data with string labels is data, not a header.
  const Dataset headless = load(dir / "h.csv", "1,2,x\n3,4,y\n5,6,x\n");
  CHECK(headless.table.header == "none");
  CHECK(headless.sample_count == 3);
  TableOptions no_header;
  no_header.header = HeaderMode::kNone;
  CHECK(error_of(dir / "f.csv", kFlowers, no_header) ==
        (dir / "f.csv").string() + ":1:1: 'id' is not a number");
}

TEST_CASE("new rows are read as the training rows were: by name in any order, labels optional",
          "[data][table]") {
  TempDir dir;
  const Dataset trained = load(dir / "f.csv", kFlowers, with_target("kind", "id", {"notes"}));
  TableOptions options;
  options.trained = &trained.table;
  options.model_classes = trained.class_names;
  // Reordered, an extra column, no target: unlabeled, features by name, ids kept.
  const Dataset fresh =
      load(dir / "new.csv", "width,extra,id,length\n6,9,b1,5\n2,9,b2,1\n", options);
  CHECK_FALSE(fresh.labeled);
  CHECK(fresh.features == std::vector<float>{5, 6, 1, 2});
  CHECK(fresh.ids == std::vector<std::string>{"b1", "b2"});
  CHECK(fresh.labels == std::vector<int32_t>{0, 0});
  CHECK(fresh.class_names == trained.class_names);
  CHECK(fresh.notes == std::vector<std::string>{(dir / "new.csv").string() +
                                                ": columns the model does not read, ignored: "
                                                "extra"});
  // Without the id column the rows are named by their lines, and the run says so.
  const Dataset no_id = load(dir / "noid.csv", "length,width\n1,2\n", options);
  CHECK(no_id.ids.empty());
  CHECK(no_id.notes == std::vector<std::string>{(dir / "noid.csv").string() +
                                                " has no id column 'id': predictions name rows "
                                                "by their line"});
  // With the target: labels map to the model's classes by name.
  const Dataset labeled = load(dir / "l.csv", "kind,length,width\ntulip,1,2\nrose,3,4\n", options);
  CHECK(labeled.labeled);
  CHECK(labeled.labels == std::vector<int32_t>{2, 1});
  CHECK(error_of(dir / "l.csv", "kind,length,width\nlily,1,2\n", options) ==
        (dir / "l.csv").string() +
            ":2:1: class 'lily' is not one of the model's classes (daisy, "
            "rose, tulip)");
  CHECK(error_of(dir / "m.csv", "length,id\n1,b1\n", options) ==
        (dir / "m.csv").string() +
            ": column 'width', a feature of the model, is missing (columns: length, id)");
  // Without a header: by position, with or without the target column.
  const Dataset positional = load(dir / "p.csv", "b1,1,2,z\nb2,3,4,\n", options);
  CHECK_FALSE(positional.labeled);
  CHECK(positional.notes ==
        std::vector<std::string>{(dir / "p.csv").string() +
                                 " has no header of names: its columns are taken by position, as "
                                 "the training file's (columns: id, length, kind, width, notes)"});
  CHECK(positional.features == std::vector<float>{1, 2, 3, 4});
  CHECK(positional.ids == std::vector<std::string>{"b1", "b2"});
  CHECK(error_of(dir / "w.csv", "1,2\n", options) ==
        (dir / "w.csv").string() +
            ": 2 columns, but the model's data had 5 (or 4 without the target, 'kind')");
}

TEST_CASE("the table keys are read from the YAML and checked there", "[data][table]") {
  const Config config = value_or_throw(Config::load_string(
      "data:\n  dataset: f.csv\n  header: true\n  delimiter: tab\n  target: kind\n  id: id\n"
      "  drop: [notes, 5]\n  label_order: first_seen\n",
      "c.yaml"));
  const DataSettings settings = value_or_throw(DataSettings::from_config(config.root()["data"]));
  CHECK(settings.header == HeaderMode::kNames);
  CHECK(settings.delimiter == '\t');
  CHECK(settings.target == "kind");
  CHECK(settings.id == "id");
  CHECK(settings.drop == std::vector<std::string>{"notes", "5"});
  CHECK(settings.label_order == LabelOrder::kFirstSeen);
  const TableOptions options = settings.table_options();
  CHECK(options.delimiter == '\t');
  CHECK(options.drop == settings.drop);
  const Config pipe = value_or_throw(Config::load_string("data: {delimiter: '|'}\n", "c.yaml"));
  CHECK(value_or_throw(DataSettings::from_config(pipe.root()["data"])).delimiter == '|');
  const Config bad = value_or_throw(Config::load_string("data: {delimiter: '::'}\n", "c.yaml"));
  CHECK(DataSettings::from_config(bad.root()["data"]).status().message() ==
        "c.yaml:1:19: key 'data.delimiter': unknown delimiter '::' (expected comma, tab, "
        "semicolon or one character such as '|')");
  const auto order = Config::load_string("data: {label_order: alphabetical}\n", "c.yaml");
  REQUIRE_FALSE(order.ok());
  CHECK(order.status().message() ==
        "c.yaml:1:21: key 'data.label_order': unknown value 'alphabetical', expected one of: "
        "sorted, first_seen");
}
