#pragma once
// The derivatives of the normalizations' backward ops (batch, layer and
// group norm), as torch's batchnorm/layer_norm double backward, written as
// TorchScript formulas for their `.derivative(...)`. One derivation serves
// the three: each normalizes x over some dims of a "working" view of the
// input, x̂ = (x - mean) * r, and its backward is
//   grad_input = r * P(g * gamma),  P(v) = v - M(v) - x̂ * M(v * x̂)
// (M: the mean over the normalized dims), grad_weight = Σ g * x̂,
// grad_bias = Σ g. With ggI, ggW, ggB the gradients of those three results:
//   grad_out: gamma * r * P(ggI) + ggW * x̂ + ggB
//   weight:   Σ g * r * P(ggI)
//   input:    r * P(G) - r² x̂ (M(ggI a) - M(ggI) M(a) - M(ggI x̂) M(a x̂)),
//             a = g * gamma, G = g * ggW - r (ggI M(a x̂) + M(ggI x̂) a)
// (P is self-adjoint, and r P is x̂'s derivative with respect to x). A result
// the backward did not compute arrives as a 0-dim zero: `.dim() > 0` tells.
#include <functional>
#include <string>

namespace kiln::norm_double_backward {

using Rewrite = std::function<std::string(const std::string&)>;

// How one normalization lays out its tensors, as TorchScript expressions.
struct Form {
  Rewrite view;          // an input-shaped tensor in the working shape
  Rewrite back;          // a working-shaped tensor in the input's shape
  Rewrite mean;          // the mean over the normalized dims, kept
  Rewrite to_weight;     // a working-shaped tensor summed to the weight's shape
  Rewrite from_weight;   // a weight-shaped tensor broadcastable in the working shape
  std::string center;    // the mean of the statistics, broadcastable in the working shape
  std::string rstd;      // 1 / std, likewise
  std::string grad_out;  // the backward op's argument names
  std::string weight;
};

inline std::string paren(const std::string& e) { return "(" + e + ")"; }

// The three formulas' expressions: {grad_out, input, weight}.
struct Formulas {
  std::string grad_out, input, weight;
};

inline Formulas formulas(const Form& f) {
  const std::string g = paren(f.view(f.grad_out));
  const std::string x = paren(f.view("input"));
  const std::string r = paren(f.rstd);
  const std::string xhat = paren(paren(x + " - " + f.center) + " * " + r);
  const std::string gamma =
      paren(paren(f.from_weight(f.weight)) + " if " + f.weight + " is not None else torch.ones_like(" + r + ")");
  const std::string zeros = "torch.zeros_like(" + x + ")";
  auto m = [&](const std::string& v) { return paren(f.mean(paren(v))); };
  auto p = [&](const std::string& v) { return paren(v + " - " + m(v) + " - " + xhat + " * " + m(v + " * " + xhat)); };
  const std::string gg_input = paren(paren(f.view("grads[0]")) + " if output_mask[0] else " + zeros);
  const std::string gg_weight =
      paren(paren(f.from_weight("grads[1]")) + " if output_mask[1] and grads[1].dim() > 0 else " + zeros);
  const std::string gg_bias =
      paren(paren(f.from_weight("grads[2]")) + " if output_mask[2] and grads[2].dim() > 0 else " + zeros);
  const std::string a = paren(g + " * " + gamma);
  Formulas out;
  out.grad_out = f.back(gamma + " * " + r + " * " + p(gg_input) + " + " + gg_weight + " * " + xhat + " + " + gg_bias);
  out.weight = f.to_weight(g + " * " + r + " * " + p(gg_input));
  const std::string big_g =
      paren(g + " * " + gg_weight + " - " + r + " * " +
            paren(gg_input + " * " + m(a + " * " + xhat) + " + " + m(gg_input + " * " + xhat) + " * " + a));
  out.input = f.back(r + " * " + p(big_g) + " - " + r + " * " + r + " * " + xhat + " * " +
                     paren(m(gg_input + " * " + a) + " - " + m(gg_input) + " * " + m(a) + " - " +
                           m(gg_input + " * " + xhat) + " * " + m(a + " * " + xhat)));
  return out;
}

// An affine normalization with fixed statistics (batch norm in evaluation):
// grad_input = g * gamma * r is linear in g and independent of x.
inline Formulas affineFormulas(const Form& f) {
  const std::string g = paren(f.view(f.grad_out));
  const std::string x = paren(f.view("input"));
  const std::string r = paren(f.rstd);
  const std::string xhat = paren(paren(x + " - " + f.center) + " * " + r);
  const std::string gamma =
      paren(paren(f.from_weight(f.weight)) + " if " + f.weight + " is not None else torch.ones_like(" + r + ")");
  const std::string zeros = "torch.zeros_like(" + x + ")";
  const std::string gg_input = paren(paren(f.view("grads[0]")) + " if output_mask[0] else " + zeros);
  const std::string gg_weight =
      paren(paren(f.from_weight("grads[1]")) + " if output_mask[1] and grads[1].dim() > 0 else " + zeros);
  const std::string gg_bias =
      paren(paren(f.from_weight("grads[2]")) + " if output_mask[2] and grads[2].dim() > 0 else " + zeros);
  Formulas out;
  out.grad_out = f.back(gg_input + " * " + gamma + " * " + r + " + " + gg_weight + " * " + xhat + " + " + gg_bias);
  out.weight = f.to_weight(gg_input + " * " + g + " * " + r);
  out.input = f.back(gg_weight + " * " + g + " * " + r);
  return out;
}

}  // namespace kiln::norm_double_backward
