// aten:: registrations of the recurrent networks (kiln/tensor/rnn.h), with
// PyTorch 1.13's schemas: the stacked LSTM, GRU and Elman RNNs on padded
// (`.input`) and packed (`.data`) sequences, their cells, and the packing of
// padded sequences that torch.nn.utils.rnn compiles to.
#include <algorithm>
#include <functional>

#include "kiln/core/op_registration.h"
#include "kiln/ops/composite.h"
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

// --- recorded decompositions (composite.h) --------------------------------------------------
//
// With an input that requires grad, the networks and cells run as torch
// 1.13 composes them (aten/src/ATen/native/RNN.cpp): per time step, linear
// layers and the gates' pointwise ops, each an operator autograd records.

namespace rec {

using composite::callTensor;

Tensor rLinear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
  return callTensor("aten::linear", "", {x, w, b ? IValue(*b) : IValue()});
}
Tensor rAdd(const Tensor& a, const Tensor& b) { return callTensor("aten::add", "Tensor", {a, b, 1}); }
Tensor rSub(const Tensor& a, const Tensor& b) { return callTensor("aten::sub", "Tensor", {a, b, 1}); }
Tensor rMul(const Tensor& a, const Tensor& b) { return callTensor("aten::mul", "Tensor", {a, b}); }
Tensor rUnary(const char* name, const Tensor& a) { return callTensor(name, "", {a}); }
std::vector<Tensor> rChunk(const Tensor& a, int64_t n) {
  return composite::call("aten::chunk", "", {a, n, 1}).at(0).toTensorVector();
}
Tensor rSelect(const Tensor& a, int64_t dim, int64_t i) { return callTensor("aten::select", "int", {a, dim, i}); }
Tensor rStack(const std::vector<Tensor>& ts, int64_t dim) { return callTensor("aten::stack", "", {IValue(ts), dim}); }
Tensor rCat(const std::vector<Tensor>& ts, int64_t dim) { return callTensor("aten::cat", "", {IValue(ts), dim}); }
Tensor rCallNarrow(const Tensor& a, int64_t start, int64_t length) {
  return callTensor("aten::slice", "Tensor", {a, 0, start, start + length, 1});
}
Tensor rTranspose(const Tensor& a, int64_t d0, int64_t d1) { return callTensor("aten::transpose", "int", {a, d0, d1}); }

struct Weights {
  Tensor w_ih, w_hh;
  std::optional<Tensor> b_ih, b_hh;
  std::optional<Tensor> w_hr;  // an LSTM's projection (proj_size > 0)
};

// The weights of a stacked network's cell `k` (layer * directions +
// direction): torch's flat list holds, per cell, w_ih, w_hh, [b_ih, b_hh],
// [w_hr].
Weights cellWeights(const std::vector<Tensor>& params, int64_t k, bool has_biases, bool projections) {
  const int64_t per = (has_biases ? 4 : 2) + (projections ? 1 : 0);
  const size_t base = static_cast<size_t>(k * per);
  Weights w{params[base], params[base + 1], std::nullopt, std::nullopt, std::nullopt};
  if (has_biases) {
    w.b_ih = params[base + 2];
    w.b_hh = params[base + 3];
  }
  if (projections) w.w_hr = params[base + static_cast<size_t>(per) - 1];
  return w;
}

// Whether an LSTM's state is projected: as torch, h's size differs from c's.
bool projected(RnnMode mode, const std::vector<Tensor>& hx) {
  return mode == RnnMode::Lstm && hx.size() == 2 && hx[0].dim() > 0 && hx[1].dim() > 0 &&
         hx[0].size(-1) != hx[1].size(-1);
}

// One step of a cell: the new (h, c) (c undefined but for the LSTM).
std::pair<Tensor, Tensor> cell(RnnMode mode, const Tensor& x, const Tensor& h, const Tensor& c, const Weights& w) {
  Tensor gi = rLinear(x, w.w_ih, w.b_ih), gh = rLinear(h, w.w_hh, w.b_hh);
  switch (mode) {
    case RnnMode::Lstm: {
      std::vector<Tensor> g = rChunk(rAdd(gi, gh), 4);
      Tensor i = rUnary("aten::sigmoid", g[0]), f = rUnary("aten::sigmoid", g[1]);
      Tensor cand = rUnary("aten::tanh", g[2]), o = rUnary("aten::sigmoid", g[3]);
      Tensor cy = rAdd(rMul(f, c), rMul(i, cand));
      Tensor hy = rMul(o, rUnary("aten::tanh", cy));
      // torch 1.13 projects with matmul(hy, w_hr.t()).
      if (w.w_hr) hy = callTensor("aten::matmul", "", {hy, rUnary("aten::t", *w.w_hr)});
      return {hy, cy};
    }
    case RnnMode::Gru: {
      std::vector<Tensor> a = rChunk(gi, 3), b = rChunk(gh, 3);
      Tensor r = rUnary("aten::sigmoid", rAdd(a[0], b[0])), z = rUnary("aten::sigmoid", rAdd(a[1], b[1]));
      Tensor n = rUnary("aten::tanh", rAdd(a[2], rMul(r, b[2])));
      return {rAdd(n, rMul(z, rSub(h, n))), Tensor()};
    }
    case RnnMode::RnnTanh: return {rUnary("aten::tanh", rAdd(gi, gh)), Tensor()};
    case RnnMode::RnnRelu: return {rUnary("aten::relu", rAdd(gi, gh)), Tensor()};
  }
  return {};
}

// Whether the stacked network's parameters have the layout cellWeights reads
// (otherwise the fused kernel runs and raises torch's error).
bool wellFormedParams(const std::vector<Tensor>& params, bool has_biases, bool projections, int64_t num_layers,
                      bool bidirectional) {
  const int64_t per = (has_biases ? 4 : 2) + (projections ? 1 : 0);
  return static_cast<int64_t>(params.size()) == per * num_layers * (bidirectional ? 2 : 1);
}

// One direction of one layer run over the whole sequence: its output and
// final state (c undefined but for the LSTM).
struct DirectionResult {
  Tensor output, h, c;
};
using RunDirection = std::function<DirectionResult(const Tensor& input, bool reverse, const Tensor& h0,
                                                   const Tensor& c0, const Weights& w)>;

// (output, h_n, c_n) of the stacked network, padded or packed alike: per
// layer and direction, `run` over the layer's input; the directions' outputs
// side by side along `feature_dim`, dropout between layers.
std::tuple<Tensor, Tensor, Tensor> stackedLayers(RnnMode mode, Tensor layer_input, const std::vector<Tensor>& hx,
                                                 const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                                 double dropout, bool train, bool bidirectional, int64_t feature_dim,
                                                 const RunDirection& run) {
  const bool lstm = mode == RnnMode::Lstm;
  const int64_t dirs = bidirectional ? 2 : 1;
  const bool projections = projected(mode, hx);
  std::vector<Tensor> h_n, c_n;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<Tensor> dir_outputs;
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t k = layer * dirs + d;
      DirectionResult r = run(layer_input, d == 1, rSelect(hx[0], 0, k), lstm ? rSelect(hx[1], 0, k) : Tensor(),
                              cellWeights(params, k, has_biases, projections));
      dir_outputs.push_back(r.output);
      h_n.push_back(r.h);
      if (lstm) c_n.push_back(r.c);
    }
    layer_input = dirs == 1 ? dir_outputs[0] : rCat(dir_outputs, feature_dim);
    if (dropout > 0 && train && layer + 1 < num_layers) {
      layer_input = callTensor("aten::dropout", "", {layer_input, dropout, train});
    }
  }
  return {layer_input, rStack(h_n, 0), lstm ? rStack(c_n, 0) : Tensor()};
}

// (output, h_n, c_n) of the stacked network on a padded input.
std::tuple<Tensor, Tensor, Tensor> stacked(RnnMode mode, const Tensor& input, const std::vector<Tensor>& hx,
                                           const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                           double dropout, bool train, bool bidirectional, bool batch_first) {
  auto run = [mode](const Tensor& x, bool reverse, const Tensor& h0, const Tensor& c0, const Weights& w) {
    const int64_t steps = x.size(0);
    Tensor h = h0, c = c0;
    std::vector<Tensor> outs(static_cast<size_t>(steps));
    for (int64_t i = 0; i < steps; ++i) {
      const int64_t t = reverse ? steps - 1 - i : i;
      std::tie(h, c) = cell(mode, rSelect(x, 0, t), h, c, w);
      outs[static_cast<size_t>(t)] = h;
    }
    return DirectionResult{rStack(outs, 0), h, c};
  };
  auto [output, h_n, c_n] = stackedLayers(mode, batch_first ? rTranspose(input, 0, 1) : input, hx, params, has_biases,
                                          num_layers, dropout, train, bidirectional, 2, run);
  return {batch_first ? rTranspose(output, 0, 1) : output, h_n, c_n};
}

// (output, h_n, c_n) of the stacked network on a packed sequence: the
// batch shrinks over time (batch_sizes, decreasing); a sequence's final
// state is its rows' state when the batch drops them.
std::tuple<Tensor, Tensor, Tensor> stackedPacked(RnnMode mode, const Tensor& data, const Tensor& batch_sizes,
                                                 const std::vector<Tensor>& hx, const std::vector<Tensor>& params,
                                                 bool has_biases, int64_t num_layers, double dropout, bool train,
                                                 bool bidirectional) {
  const bool lstm = mode == RnnMode::Lstm;
  Tensor sizes = contiguous(to(batch_sizes, ScalarType::Long));
  const int64_t steps = sizes.numel();
  std::vector<int64_t> bs(sizes.data<int64_t>(), sizes.data<int64_t>() + steps), offsets(1, 0);
  for (int64_t b : bs) offsets.push_back(offsets.back() + b);
  auto run = [&](const Tensor& x, bool reverse, const Tensor& h0, const Tensor& c0, const Weights& w) {
    std::vector<Tensor> outs(static_cast<size_t>(steps));
    auto step = [&](int64_t t, const Tensor& h, const Tensor& c) {
      const int64_t b = bs[static_cast<size_t>(t)];
      auto next = cell(mode, rCallNarrow(x, offsets[static_cast<size_t>(t)], b), h, c, w);
      outs[static_cast<size_t>(t)] = next.first;
      return next;
    };
    if (!reverse) {
      Tensor h = h0, c = c0;
      std::vector<Tensor> done_h, done_c;  // finished rows, highest first
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t b = bs[static_cast<size_t>(t)];
        if (b < h.size(0)) {
          done_h.push_back(rCallNarrow(h, b, h.size(0) - b));
          h = rCallNarrow(h, 0, b);
          if (lstm) {
            done_c.push_back(rCallNarrow(c, b, c.size(0) - b));
            c = rCallNarrow(c, 0, b);
          }
        }
        std::tie(h, c) = step(t, h, c);
      }
      auto finals = [](std::vector<Tensor>& done, const Tensor& last) {
        done.push_back(last);
        std::reverse(done.begin(), done.end());
        return done.size() == 1 ? done[0] : rCat(done, 0);
      };
      return DirectionResult{rCat(outs, 0), finals(done_h, h), lstm ? finals(done_c, c) : Tensor()};
    }
    Tensor h, c;
    for (int64_t t = steps - 1; t >= 0; --t) {
      const int64_t b = bs[static_cast<size_t>(t)];
      const int64_t have = h.defined() ? h.size(0) : 0;
      if (b > have) {
        Tensor more_h = rCallNarrow(h0, have, b - have);
        h = have ? rCat({h, more_h}, 0) : more_h;
        if (lstm) {
          Tensor more_c = rCallNarrow(c0, have, b - have);
          c = have ? rCat({c, more_c}, 0) : more_c;
        }
      }
      std::tie(h, c) = step(t, h, c);
    }
    return DirectionResult{rCat(outs, 0), h, c};
  };
  return stackedLayers(mode, data, hx, params, has_biases, num_layers, dropout, train, bidirectional, 1, run);
}

}  // namespace rec

bool recordingRnn(const Tensor& input, const std::vector<Tensor>& hx, const std::vector<Tensor>& params,
                  bool has_biases, int64_t num_layers, bool bidirectional, int64_t input_dims = 3) {
  const bool projections = rec::projected(RnnMode::Lstm, hx);
  if (!rec::wellFormedParams(params, has_biases, projections, num_layers, bidirectional) || input.dim() != input_dims)
    return false;
  std::vector<Tensor> all = params;
  all.push_back(input);
  all.insert(all.end(), hx.begin(), hx.end());
  return composite::recording(all);
}

std::tuple<Tensor, Tensor, Tensor> lstmOp(const Tensor& input, const std::vector<Tensor>& hx,
                                          const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                          double dropout, bool train, bool bidirectional, bool batch_first) {
  if (recordingRnn(input, hx, params, has_biases, num_layers, bidirectional) && hx.size() == 2) {
    return rec::stacked(RnnMode::Lstm, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                        batch_first);
  }
  return triple(
      rnnForward(RnnMode::Lstm, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first));
}

std::tuple<Tensor, Tensor> rnnOp(RnnMode mode, const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                                 bool has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional,
                                 bool batch_first) {
  if (recordingRnn(input, {hx}, params, has_biases, num_layers, bidirectional)) {
    auto [output, h, c] =
        rec::stacked(mode, input, {hx}, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
    return {output, h};
  }
  return pair(
      rnnForward(mode, input, {hx}, params, has_biases, num_layers, dropout, train, bidirectional, batch_first));
}

std::tuple<Tensor, Tensor> rnnPackedOp(RnnMode mode, const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                       const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                       double dropout, bool train, bool bidirectional) {
  if (recordingRnn(data, {hx}, params, has_biases, num_layers, bidirectional, 2)) {
    auto [output, h, c] = rec::stackedPacked(mode, data, batch_sizes, {hx}, params, has_biases, num_layers, dropout,
                                             train, bidirectional);
    return {output, h};
  }
  return pair(
      rnnForwardPacked(mode, data, batch_sizes, {hx}, params, has_biases, num_layers, dropout, train, bidirectional));
}

std::tuple<Tensor, Tensor> lstmCellOp(const Tensor& input, const std::vector<Tensor>& hx, const Tensor& w_ih,
                                      const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                                      const std::optional<Tensor>& b_hh) {
  std::vector<Tensor> all{input, w_ih, w_hh, b_ih.value_or(Tensor()), b_hh.value_or(Tensor())};
  all.insert(all.end(), hx.begin(), hx.end());
  if (hx.size() == 2 && input.dim() == 2 && composite::recording(all)) {
    auto [h, c] = rec::cell(RnnMode::Lstm, input, hx[0], hx[1], {w_ih, w_hh, b_ih, b_hh, std::nullopt});
    return {h, c};
  }
  return lstmCell(input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnnCellOp(RnnMode mode, const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                 const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  if (input.dim() == 2 &&
      composite::recording({input, hx, w_ih, w_hh, b_ih.value_or(Tensor()), b_hh.value_or(Tensor())})) {
    return rec::cell(mode, input, hx, Tensor(), {w_ih, w_hh, b_ih, b_hh, std::nullopt}).first;
  }
  return rnnCell(mode, input, hx, w_ih, w_hh, b_ih, b_hh);
}

// The stacked forms of the three single-state networks, padded and packed.
#define KILN_RNN_OPS(name, mode)                                                                                       \
  op("aten::" name                                                                                                     \
     ".input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, "   \
     "bool bidirectional, bool batch_first) -> (Tensor, Tensor)",                                                      \
     [](const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params, bool has_biases, int64_t num_layers, \
        double dropout, bool train, bool bidirectional, bool batch_first) {                                            \
       return rnnOp(mode, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);      \
     })                                                                                                                \
      .shape(rnnInput)                                                                                                 \
      .traits(OpTrait::Expensive),                                                                                     \
      op("aten::" name                                                                                                 \
         ".data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "        \
         "float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)",                                         \
         [](const Tensor& data, const Tensor& batch_sizes, const Tensor& hx, const std::vector<Tensor>& params,        \
            bool has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional) {                     \
           return rnnPackedOp(mode, data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,             \
                              bidirectional);                                                                          \
         })                                                                                                            \
          .shape(rnnData)                                                                                              \
          .traits(OpTrait::Expensive)

#define KILN_RNN_CELL_OP(name, mode)                                                                        \
  op("aten::" name                                                                                          \
     "(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor", \
     [](const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,                      \
        const std::optional<Tensor>& b_ih,                                                                  \
        const std::optional<Tensor>& b_hh) { return rnnCellOp(mode, input, hx, w_ih, w_hh, b_ih, b_hh); })  \
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

// pad_sequence when a sequence requires grad (composite.h): each sequence
// padded along its first dim to the longest, then stacked.
Tensor recordedPadSequence(const std::vector<Tensor>& sequences, bool batch_first, double padding_value) {
  KILN_CHECK(!sequences.empty(), "received an empty list of sequences");
  int64_t max_len = 0;
  for (const Tensor& s : sequences) {
    KILN_CHECK(s.dim() >= 1 && s.dim() == sequences[0].dim(),
               "pad_sequence: the sequences must have the same number of dimensions");
    max_len = std::max(max_len, s.size(0));
  }
  std::vector<Tensor> padded;
  for (const Tensor& s : sequences) {
    // constant_pad_nd's list runs from the last dim: zeros, then (0, missing) for dim 0.
    std::vector<int64_t> pad(static_cast<size_t>(2 * s.dim()), 0);
    pad.back() = max_len - s.size(0);
    padded.push_back(composite::callTensor("aten::constant_pad_nd", "", {s, IValue(pad), padding_value}));
  }
  return composite::callTensor("aten::stack", "", {IValue(padded), batch_first ? 0 : 1});
}

// The gradient of _pack_padded_sequence: the packed gradient put back in
// the padded layout (zeros past each length).
Tensor packPaddedSequenceBackward(const Tensor& grad, IntArrayRef input_size, const Tensor& batch_sizes,
                                  bool batch_first) {
  KILN_CHECK(input_size.size() >= 2, "_pack_padded_sequence_backward: input_size needs 2 or more dims");
  const int64_t steps = input_size[batch_first ? 1 : 0];
  Tensor padded = std::get<0>(padPackedSequence(grad, batch_sizes, batch_first, 0.0, steps));
  // Sequences shorter than the batch leave it short of batch rows: pad the batch dim with zeros.
  const int64_t batch_dim = batch_first ? 0 : 1;
  const int64_t missing = input_size[static_cast<size_t>(batch_dim)] - padded.size(batch_dim);
  if (missing > 0) {
    DimVector zero_sizes(padded.sizes());
    zero_sizes[static_cast<size_t>(batch_dim)] = missing;
    padded = cat({padded, zeros(IntArrayRef(zero_sizes), padded.dtype())}, batch_dim);
  }
  return padded;
}

KILN_REGISTER_OPS(
    op("aten::pad_sequence(Tensor[] sequences, bool batch_first=False, float padding_value=0.) -> Tensor",
       [](const std::vector<Tensor>& sequences, bool batch_first, double padding_value) {
         if (composite::recording(sequences)) return recordedPadSequence(sequences, batch_first, padding_value);
         return padSequence(sequences, batch_first, padding_value);
       }),
    op("aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "
       "bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)",
       [](const Tensor& input, const std::vector<Tensor>& hx, const std::vector<Tensor>& params, bool has_biases,
          int64_t num_layers, double dropout, bool train, bool bidirectional, bool batch_first) {
         return lstmOp(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
       })
        .shape(lstmInput)
        .traits(OpTrait::Expensive),
    op("aten::lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, "
       "int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)",
       [](const Tensor& data, const Tensor& batch_sizes, const std::vector<Tensor>& hx,
          const std::vector<Tensor>& params, bool has_biases, int64_t num_layers, double dropout, bool train,
          bool bidirectional) {
         if (hx.size() == 2 && recordingRnn(data, hx, params, has_biases, num_layers, bidirectional, 2)) {
           return rec::stackedPacked(RnnMode::Lstm, data, batch_sizes, hx, params, has_biases, num_layers, dropout,
                                     train, bidirectional);
         }
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
          const std::optional<Tensor>& b_hh) { return lstmCellOp(input, hx, w_ih, w_hh, b_ih, b_hh); })
        .shape(lstmCellRule)
        .traits(OpTrait::Expensive),
    KILN_RNN_CELL_OP("gru_cell", RnnMode::Gru), KILN_RNN_CELL_OP("rnn_tanh_cell", RnnMode::RnnTanh),
    KILN_RNN_CELL_OP("rnn_relu_cell", RnnMode::RnnRelu),
    op("aten::_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first) -> (Tensor, Tensor)",
       [](const Tensor& input, const Tensor& lengths, bool batch_first) {
         return packPaddedSequence(input, lengths, batch_first);
       })
        .shape(packRule)
        .derivative({"input: torch._pack_padded_sequence_backward(grad, input.size(), result1, batch_first)",
                     "non_differentiable: result1"})
        .traits(OpTrait::ValueDependentShape),
    op("aten::_pack_padded_sequence_backward(Tensor grad, int[] input_size, Tensor batch_sizes, "
       "bool batch_first) -> Tensor",
       [](const Tensor& grad, IntArrayRef input_size, const Tensor& batch_sizes, bool batch_first) {
         return packPaddedSequenceBackward(grad, input_size, batch_sizes, batch_first);
       })
        // Linear in grad: packing is its adjoint, with the lengths batch_sizes implies.
        .derivative({"grad: torch._pack_padded_sequence(grad.narrow(0 if batch_first else 1, 0, int(batch_sizes[0])), "
                     "(batch_sizes.unsqueeze(0) > torch.arange(int(batch_sizes[0])).unsqueeze(1)).sum(1), "
                     "batch_first)[0]"}),
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
        .derivative({"data: torch._pack_padded_sequence(grad, result1, batch_first)[0]", "non_differentiable: result1"})
        .traits(OpTrait::ValueDependentShape),
    // kiln's tensors live on the CPU: pad_packed_sequence's `lengths[unsorted_indices.cpu()]`.
    op("aten::cpu(Tensor(a) self) -> Tensor(b|a)", [](const Tensor& self) { return self; })
        .shape(shapes::alias)
        .derivative({"self: grad"}), );

}  // namespace
}  // namespace kiln
