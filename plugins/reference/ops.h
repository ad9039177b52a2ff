// The op implementations, one family per file. Each validates its own call (counts, dtypes,
// shapes, params) and computes the result as docs/ops.md defines it.
#pragma once

#include "op_context.h"

namespace sy_reference {

void run_matmul(const OpContext& ctx);                  // matmul.cpp
void run_unary(const OpContext& ctx);                   // elementwise_unary.cpp
void run_unary_backward(const OpContext& ctx);          // elementwise_unary.cpp
void run_binary(const OpContext& ctx);                  // elementwise_binary.cpp
void run_reduce(const OpContext& ctx);                  // reduce.cpp
void run_argmax(const OpContext& ctx);                  // reduce.cpp
void run_softmax_family(const OpContext& ctx);          // softmax.cpp
void run_cross_entropy(const OpContext& ctx);           // cross_entropy.cpp
void run_cross_entropy_backward(const OpContext& ctx);  // cross_entropy.cpp
void run_conv2d(const OpContext& ctx);                  // conv2d.cpp
void run_conv2d_fused(const OpContext& ctx);            // conv2d.cpp
void run_conv2d_backward_data(const OpContext& ctx);    // conv2d.cpp
void run_conv2d_backward_weight(const OpContext& ctx);  // conv2d.cpp
void run_max_pool2d(const OpContext& ctx);              // pool2d.cpp
void run_max_pool2d_backward(const OpContext& ctx);     // pool2d.cpp
void run_avg_pool2d(const OpContext& ctx);              // pool2d.cpp
void run_avg_pool2d_backward(const OpContext& ctx);     // pool2d.cpp
void run_layer_norm(const OpContext& ctx);              // layer_norm.cpp
void run_layer_norm_backward(const OpContext& ctx);     // layer_norm.cpp
void run_gather(const OpContext& ctx);                  // index.cpp
void run_scatter_add(const OpContext& ctx);             // index.cpp
void run_copy(const OpContext& ctx);                    // copy_fill.cpp
void run_fill(const OpContext& ctx);                    // copy_fill.cpp
void run_random(const OpContext& ctx);                  // random.cpp
void run_sgd_update(const OpContext& ctx);              // optimizer.cpp
void run_adam_update(const OpContext& ctx);             // optimizer.cpp
void run_lstm_cell(const OpContext& ctx);               // lstm_cell.cpp
void run_lstm_cell_backward(const OpContext& ctx);      // lstm_cell.cpp
void run_lstm_sequence(const OpContext& ctx);           // rnn_sequence.cpp
void run_gru_sequence(const OpContext& ctx);            // rnn_sequence.cpp
void run_lstm_sequence_backward(const OpContext& ctx);  // rnn_sequence.cpp
void run_gru_sequence_backward(const OpContext& ctx);   // rnn_sequence.cpp
void run_attention(const OpContext& ctx);               // attention.cpp
void run_attention_backward(const OpContext& ctx);      // attention.cpp

}  // namespace sy_reference
