// The sequence layers of model.layers (embedding, lstm, gru, positional_encoding, cls_token,
// transformer_encoder, sequence_pool) and batch normalisation, for model_builder.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "switchyard/nn.h"
#include "switchyard/status.h"
#include "switchyard/train.h"

namespace switchyard::detail {

struct BuiltLayer {
  std::shared_ptr<Module> module;
  std::vector<int64_t> shape;  // the activation shape per sample after the layer
  std::string part;            // its words in BuiltModel::architecture
};

bool is_sequence_layer(const std::string& type);

// The layer for activations of `shape` per sample; INVALID_ARGUMENT saying what does not fit
// (the caller adds where the layer is in the YAML file).
Result<BuiltLayer> build_sequence_layer(const LayerSpec& layer, const std::vector<int64_t>& shape,
                                        InitContext& init);

}  // namespace switchyard::detail
