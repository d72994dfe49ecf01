// aten:: registrations of the recurrent networks (kiln/tensor/rnn.h), with
// PyTorch 1.13's schemas: the stacked LSTM, GRU and Elman RNNs on padded
// (`.input`) and packed (`.data`) sequences, their cells, and the packing of
// padded sequences that torch.nn.utils.rnn compiles to.
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/rnn.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using shapes::Args;
using shapes::DimList;
using shapes::OutputFacts;
using shapes::tensorOut;

// --- shape rules ----------------------------------------------------------------------------

std::optional<ScalarType> dtypeOf(const TensorType* t) { return t ? t->scalarType() : std::nullopt; }
VaryingShape sizesOf(const TensorType* t) { return t ? t->sizes() : VaryingShape(); }
std::optional<DimList> dimsOf(const TensorType* t) {
  if (!t || !t->sizes().dims()) return std::nullopt;
  return *t->sizes().dims();
}

// Element i of a Tensor[] argument when the analysis knows it.
const TensorType* listElement(const Args& a, std::string_view name, size_t i) {
  const shapes::ListFacts* list = a.tensorList(name);
  if (!list || !list->elements || list->elements->size() <= i) return nullptr;
  return (*list->elements)[i]->cast<TensorType>();
}

// [.., D * hidden] outputs; the hidden states keep their sizes.
std::vector<OutputFacts> stackedRule(const Args& a, bool lstm, bool packed) {
  const TensorType* input = a.tensor(packed ? "data" : "input");
  const TensorType* h = lstm ? listElement(a, "hx", 0) : a.tensor("hx");
  const auto dtype = dtypeOf(input);
  auto in = dimsOf(input);
  auto hidden = dimsOf(h);
  auto bidirectional = a.knownBool("bidirectional");
  std::optional<int64_t> features;
  if (hidden && hidden->size() == 3 && (*hidden)[2] && bidirectional)
    features = (*hidden)[2].value() * (*bidirectional ? 2 : 1);
  VaryingShape out;
  if (packed && in && in->size() == 2) out = VaryingShape(DimList{(*in)[0], features});
  if (!packed && in && in->size() == 3) out = VaryingShape(DimList{(*in)[0], (*in)[1], features});
  std::vector<OutputFacts> result{tensorOut(dtype, out), tensorOut(dtype, h ? sizesOf(h) : VaryingShape(3))};
  if (lstm) {
    const TensorType* c = listElement(a, "hx", 1);
    result.push_back(tensorOut(dtype, c ? sizesOf(c) : VaryingShape(3)));
  }
  return result;
}

std::vector<OutputFacts> lstmInput(const Args& a) { return stackedRule(a, true, false); }
std::vector<OutputFacts> lstmData(const Args& a) { return stackedRule(a, true, true); }
std::vector<OutputFacts> rnnInput(const Args& a) { return stackedRule(a, false, false); }
std::vector<OutputFacts> rnnData(const Args& a) { return stackedRule(a, false, true); }

std::vector<OutputFacts> lstmCellRule(const Args& a) {
  const auto dtype = dtypeOf(a.tensor("input"));
  const TensorType* h = listElement(a, "hx", 0);
  const TensorType* c = listElement(a, "hx", 1);
  return {tensorOut(dtype, h ? sizesOf(h) : VaryingShape(2)), tensorOut(dtype, c ? sizesOf(c) : VaryingShape(2))};
}

std::vector<OutputFacts> cellRule(const Args& a) {
  return {tensorOut(dtypeOf(a.tensor("input")), sizesOf(a.tensor("hx")))};
}

// The number of packed rows depends on the lengths' values.
std::vector<OutputFacts> packRule(const Args& a) {
  const TensorType* input = a.tensor("input");
  VaryingShape data;
  if (auto in = dimsOf(input); in && in->size() >= 2) {
    DimList d{std::nullopt};
    d.insert(d.end(), in->begin() + 2, in->end());
    data = VaryingShape(d);
  }
  return {tensorOut(dtypeOf(input), data), tensorOut(ScalarType::Long, VaryingShape(1))};
}

std::vector<OutputFacts> padRule(const Args& a) {
  const TensorType* data = a.tensor("data");
  VaryingShape padded;
  if (auto in = dimsOf(data); in && !in->empty()) {
    DimList d{std::nullopt, std::nullopt};
    d.insert(d.end(), in->begin() + 1, in->end());
    padded = VaryingShape(d);
  }
  return {tensorOut(dtypeOf(data), padded), tensorOut(ScalarType::Long, VaryingShape(1))};
}

// --- kernels ---------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> pair(const RnnResult& r) { return {r.output, r.hy}; }
std::tuple<Tensor, Tensor, Tensor> triple(const RnnResult& r) { return {r.output, r.hy, r.cy}; }

// The stacked forms of the three single-state networks, padded and packed.
#define KILN_RNN_OPS(name, mode)                                                                                       \
  op("aten::" name                                                                                                     \
     ".input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, "   \
     "bool bidirectional, bool batch_first) -> (Tensor, Tensor)",                                                      \
     [](const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params, bool has_biases, int64_t num_layers, \
        double dropout, bool train, bool bidirectional, bool batch_first) {                                            \
       return pair(                                                                                                    \
           rnnForward(mode, input, {hx}, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)); \
     })                                                                                                                \
      .shape(rnnInput)                                                                                                 \
      .traits(OpTrait::Expensive),                                                                                     \
      op("aten::" name                                                                                                 \
         ".data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "        \
         "float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)",                                         \
         [](const Tensor& data, const Tensor& batch_sizes, const Tensor& hx, const std::vector<Tensor>& params,        \
            bool has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional) {                     \
           return pair(rnnForwardPacked(mode, data, batch_sizes, {hx}, params, has_biases, num_layers, dropout, train, \
                                        bidirectional));                                                               \
         })                                                                                                            \
          .shape(rnnData)                                                                                              \
          .traits(OpTrait::Expensive)

#define KILN_RNN_CELL_OP(name, mode)                                                                        \
  op("aten::" name                                                                                          \
     "(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor", \
     [](const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,                      \
        const std::optional<Tensor>& b_ih,                                                                  \
        const std::optional<Tensor>& b_hh) { return rnnCell(mode, input, hx, w_ih, w_hh, b_ih, b_hh); })    \
      .shape(cellRule)                                                                                      \
      .traits(OpTrait::Expensive)

// torch.nn.utils.rnn.pad_sequence's operator: the sequences (their trailing
// sizes alike) side by side along a new batch dimension, each padded with
// padding_value to the longest.
Tensor padSequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value) {
  KILN_CHECK(!sequences.empty(), "received an empty list of sequences");
  const Tensor& first = sequences[0];
  KILN_CHECK(first.dim() >= 1, "pad_sequence: the sequences must have at least one dimension");
  int64_t max_len = 0;
  for (const Tensor& s : sequences) {
    KILN_CHECK(s.dim() == first.dim(), "pad_sequence: the sequences must have the same number of dimensions");
    max_len = std::max(max_len, s.sizes()[0]);
  }
  auto batch = static_cast<int64_t>(sequences.size());
  std::vector<int64_t> sizes =
      batch_first ? std::vector<int64_t>{batch, max_len} : std::vector<int64_t>{max_len, batch};
  for (int64_t d = 1; d < first.dim(); ++d) sizes.push_back(first.sizes()[static_cast<size_t>(d)]);
  Tensor out = full(sizes, Scalar(padding_value), first.dtype());
  for (int64_t i = 0; i < batch; ++i) {
    const Tensor& s = sequences[static_cast<size_t>(i)];
    Tensor slot = narrow(select(out, batch_first ? 0 : 1, i), 0, 0, s.sizes()[0]);
    copy_(slot, s);
  }
  return out;
}

KILN_REGISTER_OPS(
    op("aten::pad_sequence(Tensor[] sequences, bool batch_first=False, float padding_value=0.) -> Tensor",
       [](const std::vector<Tensor>& sequences, bool batch_first, double padding_value) {
         return padSequence(sequences, batch_first, padding_value);
       }),
    op("aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "
       "bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)",
       [](const Tensor& input, const std::vector<Tensor>& hx, const std::vector<Tensor>& params, bool has_biases,
          int64_t num_layers, double dropout, bool train, bool bidirectional, bool batch_first) {
         return triple(rnnForward(RnnMode::Lstm, input, hx, params, has_biases, num_layers, dropout, train,
                                  bidirectional, batch_first));
       })
        .shape(lstmInput)
        .traits(OpTrait::Expensive),
    op("aten::lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, "
       "int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)",
       [](const Tensor& data, const Tensor& batch_sizes, const std::vector<Tensor>& hx,
          const std::vector<Tensor>& params, bool has_biases, int64_t num_layers, double dropout, bool train,
          bool bidirectional) {
         return triple(rnnForwardPacked(RnnMode::Lstm, data, batch_sizes, hx, params, has_biases, num_layers, dropout,
                                        train, bidirectional));
       })
        .shape(lstmData)
        .traits(OpTrait::Expensive),
    KILN_RNN_OPS("gru", RnnMode::Gru), KILN_RNN_OPS("rnn_tanh", RnnMode::RnnTanh),
    KILN_RNN_OPS("rnn_relu", RnnMode::RnnRelu),
    op("aten::lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) "
       "-> (Tensor, Tensor)",
       [](const Tensor& input, const std::vector<Tensor>& hx, const Tensor& w_ih, const Tensor& w_hh,
          const std::optional<Tensor>& b_ih,
          const std::optional<Tensor>& b_hh) { return lstmCell(input, hx, w_ih, w_hh, b_ih, b_hh); })
        .shape(lstmCellRule)
        .traits(OpTrait::Expensive),
    KILN_RNN_CELL_OP("gru_cell", RnnMode::Gru), KILN_RNN_CELL_OP("rnn_tanh_cell", RnnMode::RnnTanh),
    KILN_RNN_CELL_OP("rnn_relu_cell", RnnMode::RnnRelu),
    op("aten::_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first) -> (Tensor, Tensor)",
       [](const Tensor& input, const Tensor& lengths, bool batch_first) {
         return packPaddedSequence(input, lengths, batch_first);
       })
        .shape(packRule)
        .traits(OpTrait::ValueDependentShape),
    op("aten::_pack_padded_sequence.out(Tensor input, Tensor lengths, bool batch_first, *, Tensor(a!) out0, "
       "Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& input, const Tensor& lengths, bool batch_first, Tensor out0, Tensor out1) {
         auto [data, batch_sizes] = packPaddedSequence(input, lengths, batch_first);
         writeOut(out0, data, "_pack_padded_sequence");
         writeOut(out1, batch_sizes, "_pack_padded_sequence");
         return std::tuple<Tensor, Tensor>{out0, out1};
       })
        .shape(packRule)
        .traits(OpTrait::ValueDependentShape),
    op("aten::_pad_packed_sequence(Tensor data, Tensor batch_sizes, bool batch_first, Scalar padding_value, "
       "int total_length) -> (Tensor, Tensor)",
       [](const Tensor& data, const Tensor& batch_sizes, bool batch_first, const Scalar& padding_value,
          int64_t total_length) {
         return padPackedSequence(data, batch_sizes, batch_first, padding_value, total_length);
       })
        .shape(padRule)
        .traits(OpTrait::ValueDependentShape),
    // kiln's tensors live on the CPU: pad_packed_sequence's `lengths[unsorted_indices.cpu()]`.
    op("aten::cpu(Tensor(a) self) -> Tensor(b|a)", [](const Tensor& self) { return self; }).shape(shapes::alias), );

}  // namespace
}  // namespace kiln
