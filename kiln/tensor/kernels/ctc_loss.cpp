// CTC loss (ctc_loss.h), as torch 1.13's CPU kernel computes it: the
// extended target l' is the target with a blank before, between and after
// its labels (2 * length + 1 states); alpha[t][s] is the log probability of
// the prefixes of l' ending in state s at time t (eq. 6-7 of the paper),
// beta[t][s] that of the suffixes (eq. 10-11), and the gradient with respect
// to log_probs[t][c] is exp(lp) - exp(log(sum over states s with l'[s] == c
// of alpha * beta) + nll - lp) (eq. 16). Samples are independent and run in
// parallel; each is a sequential recursion over time.
#include "kiln/tensor/ctc_loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

constexpr const char* kChecking = " (while checking arguments for ctc_loss_cpu)";

// Where each sample's target starts in the contiguous int64 targets (padded
// rows or concatenated sequences), and the largest target length.
struct TargetLayout {
  Tensor targets;  // contiguous int64
  std::vector<int64_t> offsets;
  int64_t max_length = 0;
};

TargetLayout layoutTargets(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                           IntArrayRef target_lengths, int64_t blank) {
  KILN_CHECK(log_probs.dtype() == ScalarType::Float || log_probs.dtype() == ScalarType::Double,
             "\"ctc_loss_cpu\" not implemented for '", scalarTypeShortName(log_probs.dtype()), "'");
  KILN_CHECK(targets.dtype() == ScalarType::Long || targets.dtype() == ScalarType::Int,
             "Expected tensor for argument #2 'targets' to have scalar type Int; but got torch.",
             scalarTypeShortName(targets.dtype()), "Tensor instead", kChecking);
  KILN_CHECK(log_probs.dim() == 3, "Expected 3-dimensional tensor, but got ", log_probs.dim(),
             "-dimensional tensor for argument #1 'log_probs'", kChecking);
  KILN_CHECK(targets.dim() >= 1 && targets.dim() <= 2, "Expected 1 to 2 dimensions, but got ", targets.dim(),
             "-dimensional tensor for argument #2 'targets'", kChecking);
  const int64_t batch = log_probs.size(1), labels = log_probs.size(2), max_input = log_probs.size(0);
  KILN_CHECK(blank >= 0 && blank < labels, "blank must be in label range");
  KILN_CHECK(static_cast<int64_t>(input_lengths.size()) == batch, "input_lengths must be of size batch_size");
  KILN_CHECK(static_cast<int64_t>(target_lengths.size()) == batch, "target_lengths must be of size batch_size");

  TargetLayout layout;
  layout.targets = contiguous(to(targets, ScalarType::Long));
  layout.offsets.resize(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    KILN_CHECK(target_lengths[b] >= 0, "ctc_loss: target_lengths must be non-negative, got ", target_lengths[b]);
    KILN_CHECK(input_lengths[b] >= 0, "ctc_loss: input_lengths must be non-negative, got ", input_lengths[b]);
    layout.max_length = std::max(layout.max_length, target_lengths[b]);
  }
  if (targets.dim() == 1) {
    // Concatenated targets.
    int64_t pos = 0;
    for (int64_t b = 0; b < batch; ++b) {
      layout.offsets[static_cast<size_t>(b)] = pos;
      pos += target_lengths[b];
    }
    KILN_CHECK(targets.size(0) == pos, "Expected tensor to have size ", pos, " at dimension 0, but got size ",
               targets.size(0), " for argument #2 'targets'", kChecking);
  } else {
    KILN_CHECK(targets.size(0) == batch, "Expected tensor to have size ", batch, " at dimension 0, but got size ",
               targets.size(0), " for argument #2 'targets'", kChecking);
    KILN_CHECK(targets.size(1) >= layout.max_length, "Expected tensor to have size at least ", layout.max_length,
               " at dimension 1, but got size ", targets.size(1), " for argument #2 'targets'", kChecking);
    for (int64_t b = 0; b < batch; ++b) layout.offsets[static_cast<size_t>(b)] = b * targets.size(1);
  }
  for (int64_t b = 0; b < batch; ++b) {
    KILN_CHECK(input_lengths[b] <= max_input, "Expected input_lengths to have value at most ", max_input,
               ", but got value ", input_lengths[b], kChecking);
    const int64_t* t = layout.targets.data<int64_t>() + layout.offsets[static_cast<size_t>(b)];
    for (int64_t i = 0; i < target_lengths[b]; ++i) {
      KILN_CHECK_INDEX(t[i] >= 0 && t[i] < labels, "ctc_loss: target ", t[i], " is out of bounds for ", labels,
                       " classes");
    }
  }
  return layout;
}

// One sample's view: l'[s] and log_probs[t][c] (log_probs is (T, N, C)).
template <typename T>
struct Sample {
  const int64_t* target;
  int64_t blank;
  const T* log_probs;
  int64_t time_stride;  // N * C

  int64_t prime(int64_t s) const { return s % 2 == 0 ? blank : target[s / 2]; }
  T lp(int64_t t, int64_t c) const { return log_probs[t * time_stride + c]; }
};

// log(exp(a) + exp(b) + exp(c)) as torch evaluates it (a NaN-free max shift).
template <typename T>
T logSumExp3(T a, T b, T c) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  T m = std::max(a, std::max(b, c));
  if (m == kNegInf) m = 0;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

}  // namespace

std::tuple<Tensor, Tensor> ctcLoss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                                   IntArrayRef target_lengths, int64_t blank) {
  const TargetLayout layout = layoutTargets(log_probs, targets, input_lengths, target_lengths, blank);
  const int64_t batch = log_probs.size(1), labels = log_probs.size(2), max_input = log_probs.size(0);
  const int64_t states = 2 * layout.max_length + 1;
  const Tensor lp = contiguous(log_probs);
  Tensor log_alpha = full({batch, max_input, states}, -std::numeric_limits<double>::infinity(), log_probs.dtype());
  Tensor nll = empty({batch}, log_probs.dtype());
  KILN_DISPATCH_FLOATING_TYPES(log_probs.dtype(), "ctc_loss_cpu", [&] {
    using T = scalar_t;
    constexpr T kNegInf = -std::numeric_limits<T>::infinity();
    T* alpha_all = log_alpha.data<T>();
    T* out = nll.data<T>();
    parallelFor(0, batch, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const int64_t input_length = input_lengths[b], target_length = target_lengths[b];
        const Sample<T> x{layout.targets.data<int64_t>() + layout.offsets[static_cast<size_t>(b)], blank,
                          lp.data<T>() + b * labels, batch * labels};
        T* alpha = alpha_all + b * max_input * states;
        if (input_length == 0) {
          out[b] = target_length == 0 ? T(0) : -kNegInf;
          continue;
        }
        alpha[0] = x.lp(0, blank);
        if (target_length > 0) alpha[1] = x.lp(0, x.prime(1));
        for (int64_t t = 1; t < input_length; ++t) {
          const T* prev = alpha + (t - 1) * states;
          for (int64_t s = 0; s < 2 * target_length + 1; ++s) {
            const int64_t c = x.prime(s);
            const T la2 = s > 0 ? prev[s - 1] : kNegInf;
            const T la3 = s > 1 && x.prime(s - 2) != c ? prev[s - 2] : kNegInf;
            alpha[t * states + s] = logSumExp3(prev[s], la2, la3) + x.lp(t, c);
          }
        }
        const T* last = alpha + (input_length - 1) * states;
        // An empty target has no label state to end in.
        out[b] =
            target_length == 0 ? -last[0] : -logSumExp3(last[2 * target_length], last[2 * target_length - 1], kNegInf);
      }
    });
  });
  return {nll, log_alpha};
}

Tensor ctcLossBackward(const Tensor& grad, const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                       IntArrayRef target_lengths, const Tensor& neg_log_likelihood, const Tensor& log_alpha,
                       int64_t blank, bool zero_infinity) {
  const TargetLayout layout = layoutTargets(log_probs, targets, input_lengths, target_lengths, blank);
  const int64_t batch = log_probs.size(1), labels = log_probs.size(2), max_input = log_probs.size(0);
  const int64_t states = 2 * layout.max_length + 1;
  KILN_CHECK(neg_log_likelihood.numel() == batch && grad.numel() == batch,
             "ctc_loss_backward: expected one loss and one gradient per sample (", batch, ")");
  KILN_CHECK(log_alpha.dim() == 3 && log_alpha.size(0) == batch && log_alpha.size(1) == max_input &&
                 log_alpha.size(2) == states,
             "ctc_loss_backward: log_alpha has the wrong shape ", shapeString(log_alpha.sizes()));
  const Tensor lp = contiguous(log_probs);
  const Tensor alpha_t = contiguous(to(log_alpha, log_probs.dtype()));
  const Tensor nll_t = contiguous(to(neg_log_likelihood, log_probs.dtype()));
  const Tensor grad_t = contiguous(to(grad, log_probs.dtype()));
  // (T, N, C), like log_probs; per sample, first the log of the sums of
  // alpha * beta per label, then the gradient.
  Tensor result = zeros(log_probs.sizes(), log_probs.dtype());
  KILN_DISPATCH_FLOATING_TYPES(log_probs.dtype(), "ctc_loss_backward_cpu", [&] {
    using T = scalar_t;
    constexpr T kNegInf = -std::numeric_limits<T>::infinity();
    T* g_all = result.data<T>();
    parallelFor(0, batch, 1, [&](int64_t begin, int64_t end) {
      std::vector<T> beta;
      for (int64_t b = begin; b < end; ++b) {
        const T nll = nll_t.data<T>()[b];
        const int64_t input_length = input_lengths[b], target_length = target_lengths[b];
        if ((zero_infinity && nll == std::numeric_limits<T>::infinity()) || input_length == 0) continue;
        const Sample<T> x{layout.targets.data<int64_t>() + layout.offsets[static_cast<size_t>(b)], blank,
                          lp.data<T>() + b * labels, batch * labels};
        const T* alpha = alpha_t.data<T>() + b * max_input * states;
        auto g = [&](int64_t t, int64_t c) -> T& { return g_all[(t * batch + b) * labels + c]; };
        for (int64_t t = 0; t < input_length; ++t) {
          for (int64_t c = 0; c < labels; ++c) g(t, c) = kNegInf;
        }
        const int64_t n_states = 2 * target_length + 1;
        beta.assign(static_cast<size_t>(input_length * n_states), kNegInf);
        auto bt = [&](int64_t t, int64_t s) -> T& { return beta[static_cast<size_t>(t * n_states + s)]; };
        const int64_t last = input_length - 1;
        bt(last, 2 * target_length) = x.lp(last, blank);
        g(last, blank) = alpha[last * states + 2 * target_length] + bt(last, 2 * target_length);
        if (target_length > 0) {
          const int64_t c = x.prime(2 * target_length - 1);
          bt(last, 2 * target_length - 1) = x.lp(last, c);
          // A blank and a label: different, so no log-add is needed.
          g(last, c) = alpha[last * states + 2 * target_length - 1] + bt(last, 2 * target_length - 1);
        }
        for (int64_t t = input_length - 2; t >= 0; --t) {
          for (int64_t s = 2 * target_length; s >= 0; --s) {
            const int64_t c = x.prime(s);
            const T lb2 = s < 2 * target_length ? bt(t + 1, s + 1) : kNegInf;
            const T lb3 = s < 2 * target_length - 1 && x.prime(s + 2) != c ? bt(t + 1, s + 2) : kNegInf;
            bt(t, s) = logSumExp3(bt(t + 1, s), lb2, lb3) + x.lp(t, c);
            // g(t, c) log+= alpha * beta of this state.
            const T alpha_beta = alpha[t * states + s] + bt(t, s);
            T& sum = g(t, c);
            if (sum == kNegInf) {
              sum = alpha_beta;
            } else {
              const T m = std::max(sum, alpha_beta);
              sum = std::log(std::exp(sum - m) + std::exp(alpha_beta - m)) + m;
            }
          }
        }
        const T scale = grad_t.data<T>()[b];
        for (int64_t t = 0; t < input_length; ++t) {
          for (int64_t c = 0; c < labels; ++c) {
            T& res = g(t, c);
            const T lpv = x.lp(t, c);
            res = (std::exp(lpv) - std::exp(res + nll - lpv)) * scale;
          }
        }
      }
    });
  });
  return result;
}

}  // namespace kiln
