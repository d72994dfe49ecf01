#pragma once
// Recurrent networks: the multi-layer LSTM, GRU and Elman RNN of
// aten::lstm / gru / rnn_tanh / rnn_relu (padded and packed sequences),
// their single-step cells, and packing of padded sequences.
//
// Weights come as torch lays out its flat weight list: per layer, per
// direction, w_ih, w_hh, then (with biases) b_ih, b_hh, then (LSTM with
// projections) w_hr. Gates are in torch's order (LSTM i, f, g, o; GRU r, z, n)
// and computed with torch's formulas, so results agree with PyTorch 1.13 to
// rounding. Each layer computes every time step's input projection with one
// GEMM, then per step one GEMM (or GEMV) for the hidden projection and one
// fused loop for the gates. float32 and float64.
#include <optional>
#include <tuple>
#include <vector>

#include "kiln/tensor/tensor.h"

namespace kiln {

enum class RnnMode { Lstm, Gru, RnnTanh, RnnRelu };

// What a stacked RNN returns: the last layer's output for every step, and
// the final hidden state of every layer and direction (cy for LSTM only).
struct RnnResult {
  Tensor output;
  Tensor hy;
  Tensor cy;
};

// A padded sequence, [T, B, input_size] ([B, T, input_size] with batch_first).
// `hx` is {h0} ({h0, c0} for LSTM), each [layers * directions, B, size].
RnnResult rnnForward(RnnMode mode, const Tensor& input, const std::vector<Tensor>& hx,
                     const std::vector<Tensor>& params, bool has_biases, int64_t num_layers, double dropout, bool train,
                     bool bidirectional, bool batch_first);
// A packed sequence: `data` [sum(batch_sizes), input_size], time-major rows,
// `batch_sizes` the (non-increasing) number of sequences at each step.
RnnResult rnnForwardPacked(RnnMode mode, const Tensor& data, const Tensor& batch_sizes, const std::vector<Tensor>& hx,
                           const std::vector<Tensor>& params, bool has_biases, int64_t num_layers, double dropout,
                           bool train, bool bidirectional);

// One step: input [B, input_size], hx [B, hidden]; LSTM returns (hy, cy).
std::tuple<Tensor, Tensor> lstmCell(const Tensor& input, const std::vector<Tensor>& hx, const Tensor& w_ih,
                                    const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                                    const std::optional<Tensor>& b_hh);
Tensor rnnCell(RnnMode mode, const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
               const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh);

// torch's _pack_padded_sequence: (data, batch_sizes) of a padded batch whose
// lengths are sorted in decreasing order.
std::tuple<Tensor, Tensor> packPaddedSequence(const Tensor& input, const Tensor& lengths, bool batch_first);
// torch's _pad_packed_sequence: (padded, lengths); total_length > 0 pads the
// time dimension to that length.
std::tuple<Tensor, Tensor> padPackedSequence(const Tensor& data, const Tensor& batch_sizes, bool batch_first,
                                             const Scalar& padding_value, int64_t total_length);

}  // namespace kiln
