// Recurrent layers (kiln/tensor/rnn.h). A layer runs on raw row-major
// buffers: one GEMM gives every step's input projection (x W_ih^T + b_ih),
// then each step multiplies the previous hidden state by W_hh (a GEMV for a
// single sequence) and one loop computes the gates of every row. Padded and
// packed sequences take the same path: a step is a block of consecutive
// rows of at most B sequences, and the state of the sequences a step does
// not cover (finished ones going forwards, not yet started ones going
// backwards) stays in the state buffer, which is how torch's packed layers
// carry it too.
#include "kiln/tensor/rnn.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/kernels/kernel_math.h"
#include "kiln/tensor/kernels/packed_gemm.h"
#include "kiln/tensor/random.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

// --- matrix products ------------------------------------------------------------------
// BLAS on the raw buffers rather than through linalg.h's tensors: a step
// reads and writes row blocks of larger buffers (the output of one
// direction is every other half row), which would otherwise take a view per
// call, and a single sequence's product is a GEMV, which OpenBLAS's GEMM
// does not switch to by itself.

// c[m x n] (row stride ldc) = a[m x k] (row stride lda) @ b^T + beta * c, b
// being [n x k] contiguous (a weight as torch stores it).
void gemmNT(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, float beta, float* c,
            int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  const auto bi = [](int64_t v) { return static_cast<blasint>(v); };
  if (m == 1) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, bi(n), bi(k), 1.0f, b, bi(k), a, 1, beta, c, 1);
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bi(m), bi(n), bi(k), 1.0f, a, bi(lda), b, bi(k), beta, c,
                bi(ldc));
  }
}

void gemmNT(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b, double beta, double* c,
            int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0);
    return;
  }
  const auto bi = [](int64_t v) { return static_cast<blasint>(v); };
  if (m == 1) {
    cblas_dgemv(CblasRowMajor, CblasNoTrans, bi(n), bi(k), 1.0, b, bi(k), a, 1, beta, c, 1);
  } else {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bi(m), bi(n), bi(k), 1.0, a, bi(lda), b, bi(k), beta, c,
                bi(ldc));
  }
}

// c[m x n] = a @ w^T (+ bias, added as torch's addmm adds it: the product
// onto a copy of the bias).
template <typename T>
void linearRows(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* w, const T* bias, T* c,
                int64_t ldc) {
  if (bias) {
    for (int64_t i = 0; i < m; ++i) std::memcpy(c + i * ldc, bias, sizeof(T) * static_cast<size_t>(n));
  }
  gemmNT(m, n, k, a, lda, w, bias ? T(1) : T(0), c, ldc);
}

// linearRows for a few rows (2 to 32) of a wide product: OpenBLAS is
// faster with the weight as the left operand (10-25% for an LSTM step), so the product is computed
// transposed into `scratch` [n x m] and transposed back.
template <typename T>
void linearFewRows(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* w, const T* bias, T* c,
                   int64_t ldc, T* scratch) {
  if (bias) {
    for (int64_t g = 0; g < n; ++g) std::fill(scratch + g * m, scratch + (g + 1) * m, bias[g]);
  }
  const auto bi = [](int64_t v) { return static_cast<blasint>(v); };
  const T beta = bias ? T(1) : T(0);
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bi(n), bi(m), bi(k), 1.0f, w, bi(k), a, bi(lda), beta, scratch,
                bi(m));
  } else {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bi(n), bi(m), bi(k), 1.0, w, bi(k), a, bi(lda), beta, scratch,
                bi(m));
  }
  for (int64_t r = 0; r < m; ++r) {
    T* row = c + r * ldc;
    for (int64_t g = 0; g < n; ++g) row[g] = scratch[g * m + r];
  }
}

// Batches up to this many rows take the packed W_hh product: measured
// faster than OpenBLAS and oneDNN from 1 row (a GEMV) to 35 (2048 x 512:
// 0.09 against 0.11 ms for 1 row, 0.27 against 0.45 for 8, 0.92 against
// 1.19 for 35; AMD Zen 3, 1 thread).
constexpr int64_t kPackedMaxRows = 32;

void multiplyPacked(const detail::PackedWeightNT& w, int64_t m, const float* a, int64_t lda, const float* bias,
                    float* c, int64_t ldc) {
  w.multiply(m, a, lda, bias, c, ldc);
}

void multiplyPacked(const detail::PackedWeightNT&, int64_t, const double*, int64_t, const double*, double*, int64_t) {
  KILN_INTERNAL_ASSERT(false, "packed weights are float");
}

// --- the gates of one row ---------------------------------------------------------------
// torch's formulas (aten/src/ATen/native/RNN.cpp): the hidden projection
// plus the input projection, then the nonlinearities.

// LSTM: i, f, g, o; c' = f c + i g; h = o tanh(c'). c_prev may be c_out.
template <typename T>
void lstmRow(int64_t H, const T* __restrict ih, const T* __restrict hh, const T* c_prev, T* c_out,
             T* __restrict h_out) {
  for (int64_t j = 0; j < H; ++j) {
    const T i = k_sigmoid(hh[j] + ih[j]);
    const T f = k_sigmoid(hh[H + j] + ih[H + j]);
    const T g = k_tanh(hh[2 * H + j] + ih[2 * H + j]);
    const T o = k_sigmoid(hh[3 * H + j] + ih[3 * H + j]);
    const T c = f * c_prev[j] + i * g;
    c_out[j] = c;
    h_out[j] = o * k_tanh(c);
  }
}

// GRU: r, z, n; n = tanh(x_n + r (W_hn h + b_hn)); h' = (h - n) z + n. h_prev may be h_out.
template <typename T>
void gruRow(int64_t H, const T* __restrict ih, const T* __restrict hh, const T* h_prev, T* h_out) {
  for (int64_t j = 0; j < H; ++j) {
    const T r = k_sigmoid(hh[j] + ih[j]);
    const T z = k_sigmoid(hh[H + j] + ih[H + j]);
    const T n = k_tanh(ih[2 * H + j] + hh[2 * H + j] * r);
    h_out[j] = (h_prev[j] - n) * z + n;
  }
}

template <typename T>
void tanhRow(int64_t H, const T* __restrict ih, const T* __restrict hh, T* __restrict h_out) {
  for (int64_t j = 0; j < H; ++j) h_out[j] = k_tanh(hh[j] + ih[j]);
}

template <typename T>
void reluRow(int64_t H, const T* __restrict ih, const T* __restrict hh, T* __restrict h_out) {
  for (int64_t j = 0; j < H; ++j) h_out[j] = k_relu(hh[j] + ih[j]);
}

int64_t gateCount(RnnMode mode) {
  switch (mode) {
    case RnnMode::Lstm: return 4;
    case RnnMode::Gru: return 3;
    default: return 1;
  }
}

const char* modeName(RnnMode mode) {
  switch (mode) {
    case RnnMode::Lstm: return "lstm";
    case RnnMode::Gru: return "gru";
    case RnnMode::RnnTanh: return "rnn_tanh";
    case RnnMode::RnnRelu: return "rnn_relu";
  }
  return "rnn";
}

// --- checks -----------------------------------------------------------------------------

void checkFloating(const Tensor& t, const char* op) {
  KILN_CHECK(t.dtype() == ScalarType::Float || t.dtype() == ScalarType::Double, "\"", op, "\" not implemented for '",
             scalarTypeShortName(t.dtype()), "'");
}

void checkSameDtype(const Tensor& a, const Tensor& b) {
  KILN_CHECK(a.dtype() == b.dtype(), "mat1 and mat2 must have the same dtype");
}

void checkMultipliable(int64_t rows, int64_t cols, const Tensor& weight) {
  KILN_CHECK(weight.dim() == 2, "RNN weights must be 2-D, got a ", weight.dim(), "-D tensor");
  KILN_CHECK(cols == weight.size(1), "mat1 and mat2 shapes cannot be multiplied (", rows, "x", cols, " and ",
             weight.size(1), "x", weight.size(0), ")");
}

// --- one layer, one direction --------------------------------------------------------

// The time steps of a sequence: step t is rows [offset[t], offset[t] + batch[t]).
struct Steps {
  std::vector<int64_t> offset;
  std::vector<int64_t> batch;
  int64_t rows = 0;
  int64_t max_batch = 0;
};

struct CellWeights {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;  // contiguous; biases and w_hr may be undefined
};

template <typename T>
const T* dataOrNull(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// Runs one direction of one layer over `x` [rows x in]. `h` [B x Hout] and
// `c` [B x H] hold the initial state and receive the final one; the output
// of step rows goes to `out` (row stride out_ld).
template <typename T>
void runDirection(RnnMode mode, const Steps& steps, bool reverse, const T* x, int64_t in, const CellWeights& w,
                  int64_t H, int64_t Hout, T* h, T* c, T* out, int64_t out_ld) {
  const int64_t G = gateCount(mode) * H;
  const ScalarType dtype = CppTypeToScalarType<T>::value;
  Tensor ih_buffer = empty({steps.rows, G}, dtype);
  Tensor hh_buffer = empty({steps.max_batch, G}, dtype);
  T* ih = ih_buffer.data<T>();
  T* hh = hh_buffer.data<T>();
  Tensor scratch_buffer = empty({steps.max_batch, G}, dtype);
  T* scratch = scratch_buffer.data<T>();
  linearRows<T>(steps.rows, G, in, x, in, w.w_ih.data<T>(), dataOrNull<T>(w.b_ih), ih, G);
  const bool project = w.w_hr.defined();
  Tensor projected_buffer;
  T* unprojected = nullptr;
  if (project) {
    projected_buffer = empty({steps.max_batch, H}, dtype);
    unprojected = projected_buffer.data<T>();
  }
  const T* w_hh = w.w_hh.data<T>();
  const T* b_hh = dataOrNull<T>(w.b_hh);
  const int64_t count = static_cast<int64_t>(steps.batch.size());
  // Small float batches multiply by W_hh packed once for all the steps
  // (packed_gemm.h): BLAS would pack it again at every step.
  std::optional<detail::PackedWeightNT> packed_hh;
  if constexpr (std::is_same_v<T, float>) {
    if (detail::PackedWeightNT::available() && count >= 2 && steps.max_batch <= kPackedMaxRows && Hout > 0)
      packed_hh.emplace(w_hh, G, Hout);
  }
  for (int64_t s = 0; s < count; ++s) {
    const int64_t t = reverse ? count - 1 - s : s;
    const int64_t rows = steps.batch[t];
    const T* ih_t = ih + steps.offset[t] * G;
    if (packed_hh) {
      multiplyPacked(*packed_hh, rows, h, Hout, b_hh, hh, G);
    } else if (rows >= 2 && rows <= 32 && Hout > 0) {
      linearFewRows<T>(rows, G, Hout, h, Hout, w_hh, b_hh, hh, G, scratch);
    } else {
      linearRows<T>(rows, G, Hout, h, Hout, w_hh, b_hh, hh, G);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const T* ih_r = ih_t + r * G;
      const T* hh_r = hh + r * G;
      switch (mode) {
        case RnnMode::Lstm:
          lstmRow<T>(H, ih_r, hh_r, c + r * H, c + r * H, project ? unprojected + r * H : h + r * Hout);
          break;
        case RnnMode::Gru: gruRow<T>(H, ih_r, hh_r, h + r * Hout, h + r * Hout); break;
        case RnnMode::RnnTanh: tanhRow<T>(H, ih_r, hh_r, h + r * Hout); break;
        case RnnMode::RnnRelu: reluRow<T>(H, ih_r, hh_r, h + r * Hout); break;
      }
    }
    if (project) linearRows<T>(rows, Hout, H, unprojected, H, w.w_hr.data<T>(), nullptr, h, Hout);
    T* out_t = out + steps.offset[t] * out_ld;
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(out_t + r * out_ld, h + r * Hout, sizeof(T) * static_cast<size_t>(Hout));
    }
  }
}

// --- the stack of layers -------------------------------------------------------------------

struct StackSpec {
  RnnMode mode;
  bool has_biases;
  int64_t num_layers;
  double dropout;
  bool train;
  bool bidirectional;
};

// Groups torch's flat weight list into cells (per layer, per direction) and
// checks it against the hidden state, with torch's messages.
std::vector<CellWeights> gatherWeights(const StackSpec& spec, const std::vector<Tensor>& params, const Tensor& hx0,
                                       bool has_projections) {
  const int64_t stride = (spec.has_biases ? 4 : 2) + (has_projections ? 1 : 0);
  const int64_t count = static_cast<int64_t>(params.size());
  KILN_CHECK(count % stride == 0, "got an incorrect number of RNN parameters");
  const int64_t cells = count / stride;
  const int64_t directions = spec.bidirectional ? 2 : 1;
  KILN_CHECK(!spec.bidirectional || cells % 2 == 0, "Odd number of params or hiddens given to a bidirectional RNN");
  KILN_CHECK(!spec.bidirectional || hx0.size(0) % 2 == 0,
             "Odd number of params or hiddens given to a bidirectional RNN");
  KILN_CHECK(hx0.size(0) / directions == spec.num_layers, "Expected more hidden states in stacked_rnn");
  KILN_CHECK(cells / directions == spec.num_layers, "Expected more weights in stacked_rnn");
  std::vector<CellWeights> out;
  for (int64_t i = 0; i < cells; ++i) {
    const Tensor* p = params.data() + i * stride;
    CellWeights w;
    w.w_ih = contiguous(p[0]);
    w.w_hh = contiguous(p[1]);
    int64_t next = 2;
    if (spec.has_biases) {
      w.b_ih = contiguous(p[2]);
      w.b_hh = contiguous(p[3]);
      next = 4;
    }
    if (has_projections) w.w_hr = contiguous(p[next]);
    out.push_back(std::move(w));
  }
  return out;
}

// Checks one cell's weights against the sizes they multiply.
void checkCell(const CellWeights& w, int64_t G, int64_t H, int64_t Hout, ScalarType dtype) {
  for (const Tensor* t : {&w.w_ih, &w.w_hh, &w.b_ih, &w.b_hh, &w.w_hr}) {
    if (t->defined()) KILN_CHECK(t->dtype() == dtype, "mat1 and mat2 must have the same dtype");
  }
  KILN_CHECK(w.w_hh.dim() == 2 && w.w_ih.dim() == 2 && w.w_ih.size(0) == G * H && w.w_hh.size(0) == G * H,
             "RNN weights have inconsistent sizes: w_ih ", shapeString(w.w_ih.sizes()), " and w_hh ",
             shapeString(w.w_hh.sizes()), " for ", G, " gates of hidden size ", H);
  for (const Tensor* b : {&w.b_ih, &w.b_hh}) {
    if (b->defined()) {
      KILN_CHECK(b->numel() == G * H, "RNN bias of ", b->numel(), " elements, expected ", G * H);
    }
  }
  if (w.w_hr.defined()) {
    KILN_CHECK(w.w_hr.dim() == 2 && w.w_hr.size(0) == Hout && w.w_hr.size(1) == H, "RNN projection weight of size ",
               shapeString(w.w_hr.sizes()), ", expected [", Hout, ", ", H, "]");
  }
}

// Dropout between layers in training mode, as torch's dropout: x * mask / (1 - p).
template <typename T>
void dropoutRows(T* x, int64_t n, double p) {
  KILN_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (p == 1) {
    std::fill(x, x + n, T(0));
    return;
  }
  Tensor u = empty({n}, CppTypeToScalarType<T>::value);
  uniform_(u);
  const T* r = u.data<T>();
  const T keep = static_cast<T>(1 - p);
  const T scale = T(1) / keep;
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * (r[i] < keep ? scale : T(0));
}

template <typename T>
RnnResult runStack(const StackSpec& spec, const Tensor& x0, const Steps& steps, const Tensor& hx0, const Tensor& cx0,
                   const std::vector<CellWeights>& weights) {
  const ScalarType dtype = x0.dtype();
  const int64_t directions = spec.bidirectional ? 2 : 1;
  const int64_t G = gateCount(spec.mode);
  const int64_t B = hx0.size(1);
  const int64_t Hout = hx0.size(2);
  const int64_t H = weights[0].w_hh.size(0) / G;
  const bool lstm = spec.mode == RnnMode::Lstm;
  KILN_CHECK(weights[0].w_hh.size(0) % G == 0, "RNN weight w_hh of ", weights[0].w_hh.size(0), " rows for ", G,
             " gates");
  Tensor hy = clone(hx0);
  if (!hy.isContiguous()) hy = contiguous(hy);
  Tensor cy;
  if (lstm) {
    KILN_CHECK(cx0.dim() == 3 && cx0.size(0) == hx0.size(0) && cx0.size(2) == H, "LSTM cell state of size ",
               shapeString(cx0.sizes()), ", expected [", hx0.size(0), ", ", B, ", ", H, "]");
    KILN_CHECK(cx0.size(1) == B, "The size of tensor a (", cx0.size(1), ") must match the size of tensor b (", B,
               ") at non-singleton dimension 0");
    KILN_CHECK(cx0.dtype() == dtype, "mat1 and mat2 must have the same dtype");
    cy = contiguous(clone(cx0));
  }
  Tensor x = x0;
  int64_t in = x.size(1);
  Tensor out;
  for (int64_t layer = 0; layer < spec.num_layers; ++layer) {
    out = empty({steps.rows, directions * Hout}, dtype);
    for (int64_t d = 0; d < directions; ++d) {
      const int64_t index = layer * directions + d;
      const CellWeights& w = weights[static_cast<size_t>(index)];
      checkMultipliable(steps.rows, in, w.w_ih);
      checkCell(w, G, H, Hout, dtype);
      checkMultipliable(B, Hout, w.w_hh);
      T* h = hy.data<T>() + index * B * Hout;
      T* c = lstm ? cy.data<T>() + index * B * H : nullptr;
      runDirection<T>(spec.mode, steps, d == 1, x.data<T>(), in, w, H, Hout, h, c, out.data<T>() + d * Hout,
                      directions * Hout);
    }
    if (spec.dropout != 0 && spec.train && layer < spec.num_layers - 1) {
      dropoutRows<T>(out.data<T>(), out.numel(), spec.dropout);
    }
    x = out;
    in = directions * Hout;
  }
  return {out, hy, cy};
}

// Shared checks of both stacked forms; returns (hx0, cx0, has_projections).
std::tuple<Tensor, Tensor, bool> splitHidden(RnnMode mode, const std::vector<Tensor>& hx, const Tensor& input) {
  if (mode == RnnMode::Lstm) {
    KILN_CHECK(hx.size() == 2, "lstm expects two hidden states");
  } else {
    KILN_CHECK(hx.size() == 1, modeName(mode), " expects one hidden state");
  }
  const Tensor& h = hx[0];
  KILN_CHECK(h.dim() == 3, "hidden state of a ", modeName(mode), " must have 3 dimensions, got ", h.dim());
  checkSameDtype(input, h);
  bool has_projections = false;
  Tensor c;
  if (mode == RnnMode::Lstm) {
    c = hx[1];
    KILN_CHECK(c.dim() == 3, "cell state of an lstm must have 3 dimensions, got ", c.dim());
    has_projections = h.size(2) != c.size(2);
  }
  return {h, c, has_projections};
}

template <typename F>
RnnResult dispatchFloating(const Tensor& input, const char* op, const F& f) {
  checkFloating(input, op);
  if (input.dtype() == ScalarType::Float) return f(float());
  return f(double());
}

}  // namespace

RnnResult rnnForward(RnnMode mode, const Tensor& input, const std::vector<Tensor>& hx,
                     const std::vector<Tensor>& params, bool has_biases, int64_t num_layers, double dropout, bool train,
                     bool bidirectional, bool batch_first) {
  const char* op = modeName(mode);
  checkFloating(input, op);
  Tensor h0, c0;
  bool has_projections = false;
  std::tie(h0, c0, has_projections) = splitHidden(mode, hx, input);
  const StackSpec spec{mode, has_biases, num_layers, dropout, train, bidirectional};
  std::vector<CellWeights> weights = gatherWeights(spec, params, h0, has_projections);
  Tensor x = batch_first && input.dim() >= 2 ? transpose(input, 0, 1) : input;
  // A 2-D input is one sequence whose steps torch broadcasts over the
  // hidden state's batch.
  if (x.dim() == 2) x = expand(unsqueeze(x, 1), {x.size(0), h0.size(1), x.size(1)});
  KILN_CHECK(x.dim() == 3, "input must have 3 dimensions, got ", input.dim());
  const int64_t T = x.size(0), B = x.size(1);
  KILN_CHECK(T > 0, "Expected sequence length to be larger than 0 in RNN");
  KILN_CHECK(h0.size(1) == B, "The size of tensor a (", h0.size(1), ") must match the size of tensor b (", B,
             ") at non-singleton dimension 0");
  Steps steps;
  for (int64_t t = 0; t < T; ++t) {
    steps.offset.push_back(t * B);
    steps.batch.push_back(B);
  }
  steps.rows = T * B;
  steps.max_batch = B;
  Tensor rows = reshape(contiguous(x), {T * B, x.size(2)});
  RnnResult r = dispatchFloating(input, op, [&](auto tag) {
    using Scalar_ = decltype(tag);
    return runStack<Scalar_>(spec, rows, steps, h0, c0, weights);
  });
  r.output = view(r.output, {T, B, r.output.size(1)});
  if (batch_first) r.output = transpose(r.output, 0, 1);
  return r;
}

RnnResult rnnForwardPacked(RnnMode mode, const Tensor& data, const Tensor& batch_sizes, const std::vector<Tensor>& hx,
                           const std::vector<Tensor>& params, bool has_biases, int64_t num_layers, double dropout,
                           bool train, bool bidirectional) {
  const char* op = modeName(mode);
  checkFloating(data, op);
  KILN_CHECK(batch_sizes.dtype() == ScalarType::Long, "expected scalar type Long but found ",
             scalarTypeShortName(batch_sizes.dtype()));
  KILN_CHECK(batch_sizes.dim() == 1, "batch_sizes must be a 1-D tensor, got ", batch_sizes.dim(), "-D");
  KILN_CHECK(data.dim() == 2, "packed data must have 2 dimensions, got ", data.dim());
  Tensor h0, c0;
  bool has_projections = false;
  std::tie(h0, c0, has_projections) = splitHidden(mode, hx, data);
  const StackSpec spec{mode, has_biases, num_layers, dropout, train, bidirectional};
  std::vector<CellWeights> weights = gatherWeights(spec, params, h0, has_projections);
  Tensor sizes = contiguous(batch_sizes);
  const int64_t* b = sizes.data<int64_t>();
  const int64_t count = sizes.numel();
  KILN_CHECK(count > 0, "Expected sequence length to be larger than 0 in RNN");
  Steps steps;
  for (int64_t t = 0; t < count; ++t) {
    KILN_CHECK(b[t] > 0 && (t == 0 || b[t] <= b[t - 1]), "batch_sizes must be positive and non-increasing, got ", b[t],
               " at step ", t);
    steps.offset.push_back(steps.rows);
    steps.batch.push_back(b[t]);
    steps.rows += b[t];
  }
  steps.max_batch = b[0];
  KILN_CHECK(steps.rows == data.size(0), "packed data has ", data.size(0), " rows but batch_sizes sum to ", steps.rows);
  KILN_CHECK(h0.size(1) == b[0], "The size of tensor a (", h0.size(1), ") must match the size of tensor b (", b[0],
             ") at non-singleton dimension 0");
  Tensor rows = contiguous(data);
  return dispatchFloating(data, op, [&](auto tag) {
    using Scalar_ = decltype(tag);
    return runStack<Scalar_>(spec, rows, steps, h0, c0, weights);
  });
}

// --- cells ------------------------------------------------------------------------------------

namespace {

// torch's check_rnn_cell_forward_input / _hidden.
void checkCellInput(const Tensor& input, const Tensor& w_ih) {
  KILN_CHECK(input.size(1) == w_ih.size(1), "input has inconsistent input_size: got ", input.size(1), " expected ",
             w_ih.size(1));
}

void checkCellHidden(const Tensor& input, const Tensor& hx, int64_t hidden_size, int label) {
  KILN_CHECK(input.size(0) == hx.size(0), "Input batch size ", input.size(0), " doesn't match hidden", label,
             " batch size ", hx.size(0));
  KILN_CHECK(hx.size(1) == hidden_size, "hidden", label, " has inconsistent hidden_size: got ", hx.size(1),
             ", expected ", hidden_size);
}

struct CellRun {
  Tensor ih, hh;  // [B x G*H] projections
  int64_t B, H;
};

// The input and hidden projections of one step.
template <typename T>
CellRun cellProjections(RnnMode mode, const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                        const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  const int64_t G = gateCount(mode);
  for (const Tensor* t : {&hx, &w_ih, &w_hh}) checkSameDtype(input, *t);
  KILN_CHECK(input.dim() == 2, "mat1 and mat2 shapes cannot be multiplied (",
             input.numel() / std::max<int64_t>(1, input.size(-1)), "x", input.size(-1), " and ", w_ih.size(1), "x",
             w_ih.size(0), ")");
  KILN_CHECK(hx.dim() == 2, "hidden state must have 2 dimensions, got ", hx.dim());
  KILN_CHECK(w_hh.dim() == 2 && w_ih.dim() == 2 && w_hh.size(0) % G == 0 && w_ih.size(0) == w_hh.size(0),
             "RNN cell weights have inconsistent sizes: w_ih ", shapeString(w_ih.sizes()), " and w_hh ",
             shapeString(w_hh.sizes()));
  const int64_t B = input.size(0), H = w_hh.size(0) / G, I = input.size(1);
  KILN_CHECK(w_hh.size(1) == H, "mat1 and mat2 shapes cannot be multiplied (", B, "x", H, " and ", w_hh.size(1), "x",
             w_hh.size(0), ")");
  Tensor bias_ih, bias_hh;
  for (auto [b, out] : {std::pair{&b_ih, &bias_ih}, std::pair{&b_hh, &bias_hh}}) {
    if (*b) {
      checkSameDtype(input, **b);
      KILN_CHECK((*b)->numel() == G * H, "RNN cell bias of ", (*b)->numel(), " elements, expected ", G * H);
      *out = contiguous(**b);
    }
  }
  const Tensor x = contiguous(input), h = contiguous(hx), wi = contiguous(w_ih), wh = contiguous(w_hh);
  CellRun run{empty({B, G * H}, input.dtype()), empty({B, G * H}, input.dtype()), B, H};
  linearRows<T>(B, G * H, I, x.data<T>(), I, wi.data<T>(), dataOrNull<T>(bias_ih), run.ih.data<T>(), G * H);
  linearRows<T>(B, G * H, H, h.data<T>(), H, wh.data<T>(), dataOrNull<T>(bias_hh), run.hh.data<T>(), G * H);
  return run;
}

}  // namespace

std::tuple<Tensor, Tensor> lstmCell(const Tensor& input, const std::vector<Tensor>& hx, const Tensor& w_ih,
                                    const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                                    const std::optional<Tensor>& b_hh) {
  KILN_CHECK(hx.size() == 2, "lstm_cell expects two hidden states");
  checkCellInput(input, w_ih);
  const int64_t hidden_size = w_hh.size(1);
  checkCellHidden(input, hx[0], hidden_size, 0);
  checkCellHidden(input, hx[1], hidden_size, 0);
  checkFloating(input, "lstm_cell");
  checkSameDtype(input, hx[1]);
  Tensor hy, cy;
  dispatchFloating(input, "lstm_cell", [&](auto tag) {
    using T = decltype(tag);
    CellRun run = cellProjections<T>(RnnMode::Lstm, input, hx[0], w_ih, w_hh, b_ih, b_hh);
    const Tensor c = contiguous(hx[1]);
    hy = empty({run.B, run.H}, input.dtype());
    cy = empty({run.B, run.H}, input.dtype());
    const int64_t G = 4 * run.H;
    for (int64_t r = 0; r < run.B; ++r) {
      lstmRow<T>(run.H, run.ih.data<T>() + r * G, run.hh.data<T>() + r * G, c.data<T>() + r * run.H,
                 cy.data<T>() + r * run.H, hy.data<T>() + r * run.H);
    }
    return RnnResult{};
  });
  return {hy, cy};
}

Tensor rnnCell(RnnMode mode, const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
               const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  const char* op = mode == RnnMode::Gru ? "gru_cell" : mode == RnnMode::RnnTanh ? "rnn_tanh_cell" : "rnn_relu_cell";
  checkCellInput(input, w_ih);
  checkCellHidden(input, hx, w_hh.size(1), 0);
  checkFloating(input, op);
  Tensor hy;
  dispatchFloating(input, op, [&](auto tag) {
    using T = decltype(tag);
    CellRun run = cellProjections<T>(mode, input, hx, w_ih, w_hh, b_ih, b_hh);
    const Tensor h = contiguous(hx);
    hy = empty({run.B, run.H}, input.dtype());
    const int64_t G = gateCount(mode) * run.H;
    for (int64_t r = 0; r < run.B; ++r) {
      const T* ih = run.ih.data<T>() + r * G;
      const T* hh = run.hh.data<T>() + r * G;
      T* out = hy.data<T>() + r * run.H;
      switch (mode) {
        case RnnMode::Gru: gruRow<T>(run.H, ih, hh, h.data<T>() + r * run.H, out); break;
        case RnnMode::RnnTanh: tanhRow<T>(run.H, ih, hh, out); break;
        default: reluRow<T>(run.H, ih, hh, out); break;
      }
    }
    return RnnResult{};
  });
  return hy;
}

// --- packing -----------------------------------------------------------------------------------

namespace {

void checkLengths(const Tensor& lengths) {
  KILN_CHECK(lengths.dim() == 1 && lengths.dtype() == ScalarType::Long,
             "'lengths' argument should be a 1D CPU int64 tensor, but got ", lengths.dim(), "D cpu ",
             scalarTypeShortName(lengths.dtype()), " tensor");
}

}  // namespace

std::tuple<Tensor, Tensor> packPaddedSequence(const Tensor& input_, const Tensor& lengths_, bool batch_first) {
  KILN_CHECK(input_.dim() >= 2, "pack_padded_sequence: input must have at least 2 dimensions, got ", input_.dim());
  const Tensor input = batch_first ? transpose(input_, 0, 1) : input_;
  const Tensor lengths_t = contiguous(lengths_);
  checkLengths(lengths_t);
  const int64_t batch_size = input.size(1);
  const int64_t* lengths = lengths_t.data<int64_t>();
  KILN_CHECK(input.numel() > 0, "Cannot pack empty tensors.");
  KILN_CHECK(lengths_t.size(0) == batch_size, "Expected `len(lengths)` to be equal to batch_size, but got ",
             lengths_t.size(0), " (batch_size=", batch_size, ")");
  KILN_CHECK(lengths[batch_size - 1] > 0,
             "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0");
  for (int64_t i = 0; i < batch_size - 1; ++i) {
    KILN_CHECK(lengths[batch_size - 1 - i] <= lengths[batch_size - 2 - i],
               "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
               "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
               "if you do not need ONNX exportability.");
  }
  KILN_CHECK(lengths[0] <= input.size(0), "pack_padded_sequence: a sequence of length ", lengths[0],
             " is longer than the input's ", input.size(0), " steps");
  Tensor batch_sizes_t = empty({lengths[0]}, ScalarType::Long);
  int64_t* batch_sizes = batch_sizes_t.data<int64_t>();
  DimVector step_shape{-1};
  for (int64_t d = 2; d < input.dim(); ++d) step_shape.push_back(input.size(d));
  // As torch: scanning from the shortest sequence, each rise in length adds
  // one block of steps, all of whose sequences are still running.
  std::vector<Tensor> blocks;
  int64_t prev_l = 0;
  for (int64_t i = 0; i < batch_size; ++i) {
    const int64_t l = lengths[batch_size - 1 - i];
    if (l > prev_l) {
      const int64_t current_batch_size = batch_size - i;
      blocks.push_back(reshape(contiguous(slice(slice(input, 0, prev_l, l), 1, 0, current_batch_size)), step_shape));
      for (int64_t j = 0; j < l - prev_l; ++j) *batch_sizes++ = current_batch_size;
      prev_l = l;
    }
  }
  return {cat(blocks, 0), batch_sizes_t};
}

std::tuple<Tensor, Tensor> padPackedSequence(const Tensor& data, const Tensor& batch_sizes_, bool batch_first,
                                             const Scalar& padding_value, int64_t total_length) {
  const Tensor batch_sizes_t = contiguous(batch_sizes_);
  checkLengths(batch_sizes_t);
  KILN_CHECK(batch_sizes_t.numel() > 0, "pad_packed_sequence: batch_sizes is empty");
  KILN_CHECK(data.dim() >= 1, "pad_packed_sequence: data must have at least 1 dimension");
  const int64_t* batch_sizes = batch_sizes_t.data<int64_t>();
  const int64_t max_batch_size = batch_sizes[0];
  const int64_t max_real_seq_length = batch_sizes_t.size(0);
  int64_t max_seq_length = max_real_seq_length;
  if (total_length > 0) {
    KILN_CHECK(total_length >= max_seq_length,
               "Expected total_length to be at least the length of the longest sequence in input, but got "
               "total_length=",
               total_length, " and max sequence length being ", max_seq_length);
    max_seq_length = total_length;
  }
  int64_t rows = 0;
  for (int64_t i = 0; i < max_real_seq_length; ++i) {
    KILN_CHECK(
        batch_sizes[i] > 0 && batch_sizes[i] <= max_batch_size && (i == 0 || batch_sizes[i] <= batch_sizes[i - 1]),
        "pad_packed_sequence: batch_sizes must be positive and non-increasing");
    rows += batch_sizes[i];
  }
  KILN_CHECK(rows == data.size(0), "pad_packed_sequence: data has ", data.size(0), " rows but batch_sizes sum to ",
             rows);
  DimVector output_size{max_seq_length, max_batch_size};
  for (int64_t d = 1; d < data.dim(); ++d) output_size.push_back(data.size(d));
  Tensor output = full(output_size, padding_value, data.dtype());
  DimVector block_size = output_size;
  Tensor lengths_t = empty({max_batch_size}, ScalarType::Long);
  int64_t* lengths = lengths_t.data<int64_t>() + max_batch_size - 1;
  int64_t data_offset = 0, prev_batch_size = max_batch_size, prev_i = 0;
  for (int64_t i = 0; i <= max_real_seq_length; ++i) {
    const int64_t batch_size = i != max_real_seq_length ? batch_sizes[i] : 0;
    if (batch_size != prev_batch_size) {
      const int64_t l = prev_batch_size * (i - prev_i);
      block_size[0] = i - prev_i;
      block_size[1] = prev_batch_size;
      Tensor target = slice(slice(output, 0, prev_i, i), 1, 0, prev_batch_size);
      copy_(target, reshape(slice(data, 0, data_offset, data_offset + l), block_size));
      data_offset += l;
      prev_i = i;
    }
    for (int64_t dec = prev_batch_size - batch_size; dec > 0; --dec) *lengths-- = i;
    prev_batch_size = batch_size;
  }
  if (batch_first) output = transpose(output, 0, 1);
  return {output, lengths_t};
}

}  // namespace kiln
