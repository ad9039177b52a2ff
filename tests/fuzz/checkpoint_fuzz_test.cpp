// The checkpoint loader under mutated input (fuzz_support.h): the file format, then the records
// a Trainer or Predictor decodes from it.
#include "fuzz/fuzz_checks.h"
#include "fuzz/fuzz_support.h"
#include "model/train_state.h"
#include "switchyard/checkpoint.h"

using namespace switchyard;
using namespace switchyard::testing;

namespace {

// The data layout of a 4-feature table; with `table`, the version-2 record of its columns: a
// header of names, an id column, a dropped one, and a string target.
detail::DataLayout four_feature_layout(bool table) {
  detail::DataLayout layout;
  layout.sample_shape = {4};
  layout.class_names = {"a", "b", "c"};
  layout.scaler = {ScaleMode::kStandard, {0.5f, 1, 2, 3}, {2, 1, 0.5f, 0.25f}};
  layout.description = "dataset=iris";
  layout.has_table = table;
  layout.table.delimiter = '\t';
  layout.table.header = "names";
  layout.table.column_count = 7;
  layout.table.column_names = {"id", "w", "x", "note", "y", "z", "kind"};
  layout.table.target_column = 6;
  layout.table.id_column = 0;
  layout.table.feature_columns = {1, 2, 4, 5};
  layout.table.dropped_columns = {3};
  layout.settings.target = "kind";
  layout.settings.id = "id";
  layout.settings.drop = {"note"};
  layout.settings.label_order = LabelOrder::kFirstSeen;
  return layout;
}

// A checkpoint with every kind of record a training run writes, host values only; `version2`
// adds the records a prediction from the checkpoint alone reads (layers, loss, table).
Bytes training_checkpoint(bool version2) {
  Checkpoint checkpoint;
  checkpoint.put_string("meta/kind", detail::kTrainCheckpointKind);
  checkpoint.put_string("meta/architecture", "input[4] linear(4->3,bias) classes=3 dtype=f32");
  checkpoint.put_u64("meta/fingerprint", 0x1234567890abcdefull);
  detail::put_data_layout(checkpoint, four_feature_layout(version2));
  if (version2) {
    ModelSpec spec;
    spec.layers = {LayerSpec{}, LayerSpec{}, LayerSpec{}};
    spec.layers[0].type = "linear";
    spec.layers[0].out_features = 8;
    spec.layers[1].type = "dropout";
    spec.layers[1].p = 0.25;
    spec.layers[2].type = "linear";
    spec.layers[2].out_features = 3;
    detail::put_model_spec(checkpoint, spec, LossKind::kMse);
  }
  checkpoint.put_tensor("param/0.weight", {DType::kF32, {3, 4}, std::vector<float>(12, 0.5f), {}});
  checkpoint.put_tensor("param/0.bias", {DType::kF32, {3}, {1, 2, 3}, {}});
  checkpoint.put_tensor("optim/state/step", {DType::kI64, {}, {}, {7}});
  checkpoint.put_f64("optim/lr", 0.05);
  checkpoint.put_u64("progress/epoch", 2);
  EpochMetrics epoch;
  epoch.epoch = 1;
  epoch.train_loss = 0.5;
  detail::put_history(checkpoint, {epoch, epoch});
  return serialize_checkpoint(checkpoint);
}

}  // namespace

TEST_CASE("fuzz: the checkpoint loader loads or refuses mutants, naming the file", "[fuzz]") {
  FuzzTarget target;
  target.name = "mutant.ckpt";
  target.corpus = "checkpoint";
  target.seeds = {training_checkpoint(false), training_checkpoint(true), small_checkpoint()};
  target.dictionary = {std::string("\0\0\0\0", 4),
                       std::string("\xff\xff\xff\xff", 4),
                       std::string("\x01\0\0\0\0\0\0\x40", 8),
                       "param/",
                       "data/",
                       "model/",
                       "\"type\":",
                       "\"feature_columns\":[",
                       "-1",
                       "1e999",
                       "null",
                       "\"conv2d\""};
  target.fix_up = fix_checkpoint_framing;
  target.load = [](const std::filesystem::path& path) {
    auto checkpoint = read_checkpoint(path);
    return checkpoint.ok() ? decode_checkpoint(*checkpoint) : checkpoint.status();
  };
  const FuzzCounts counts = run_fuzz(target, 23);
  CHECK(counts.refused > kMutantsPerTarget / 2);
  CHECK(counts.loaded > 0);
}
