// aten:: registrations of batch, instance and group normalization, with
// PyTorch 1.13's schemas (layer norm is registered elsewhere).
#include "kiln/core/op_registration.h"
#include "kiln/ops/norm_double_backward.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/normalization.h"
#include "kiln/tensor/normalization_backward.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using shapes::Args;
using shapes::contiguousOut;
using shapes::OutputFacts;
using Out = std::vector<OutputFacts>;
using Opt = std::optional<Tensor>;

std::optional<ScalarType> inputDtype(const Args& a) {
  const TensorType* t = a.tensor("input");
  return t ? t->scalarType() : std::nullopt;
}
VaryingShape inputSizes(const Args& a) {
  const TensorType* t = a.tensor("input");
  return t ? t->sizes() : VaryingShape();
}
std::optional<int64_t> inputDim(const Args& a, size_t d) {
  const VaryingShape s = inputSizes(a);
  if (!s.size() || *s.size() <= d) return std::nullopt;
  return s[d];
}

// The normalized result: the input's dtype and sizes.
Out normalized(const Args& a) { return {contiguousOut(inputDtype(a), inputSizes(a))}; }

// (output, save_mean, save_invstd): the statistics have C elements in
// training, none in eval.
Out batchNormResults(const Args& a) {
  std::optional<bool> training = a.knownBool("training");
  VaryingShape stats(1);
  if (training) stats = VaryingShape({*training ? inputDim(a, 1) : std::optional<int64_t>(0)});
  return {contiguousOut(inputDtype(a), inputSizes(a)), contiguousOut(inputDtype(a), stats),
          contiguousOut(inputDtype(a), stats)};
}

Out batchNormImplIndex(const Args& a) {
  Out out = batchNormResults(a);
  out.push_back(contiguousOut(inputDtype(a), VaryingShape({std::optional<int64_t>(0)})));
  out.push_back(OutputFacts{});
  return out;
}

// (output, mean, rstd), the statistics of shape (N, group).
Out groupNormResults(const Args& a) {
  VaryingShape stats({a.knownInt("N"), a.knownInt("group")});
  return {contiguousOut(inputDtype(a), inputSizes(a)), contiguousOut(inputDtype(a), stats),
          contiguousOut(inputDtype(a), stats)};
}

std::tuple<Tensor, Tensor, Tensor> writeThree(const std::tuple<Tensor, Tensor, Tensor>& r, Tensor a, Tensor b, Tensor c,
                                              const char* op) {
  writeOut(a, std::get<0>(r), op);
  writeOut(b, std::get<1>(r), op);
  writeOut(c, std::get<2>(r), op);
  return {a, b, c};
}

// The .out forms of the backward ops: the results asked for, copied into their outs.
std::tuple<Tensor, Tensor, Tensor> writeDefined(const std::tuple<Tensor, Tensor, Tensor>& r, Tensor a, Tensor b,
                                                Tensor c, const char* op) {
  if (std::get<0>(r).defined()) writeOut(a, std::get<0>(r), op);
  if (std::get<1>(r).defined()) writeOut(b, std::get<1>(r), op);
  if (std::get<2>(r).defined()) writeOut(c, std::get<2>(r), op);
  return {a, b, c};
}

std::array<bool, 3> maskOf(const IValue& output_mask) {
  const auto& elements = output_mask.toListRef().elements;
  KILN_CHECK(elements.size() == 3, "output_mask must hold 3 bools");
  return {elements[0].toBool(), elements[1].toBool(), elements[2].toBool()};
}

// derivatives.yaml's batch norm formula: one native_batch_norm_backward for
// the gradients needed; `stats` names the saved statistics (None: computed again).
OpDeclaration batchNormDerivative(OpDeclaration declaration, const std::string& stats) {
  std::string call = "torch.native_batch_norm_backward(grad, input, weight, running_mean, running_var, " + stats +
                     ", training, eps, grad_input_mask)";
  std::string formula = "input, weight, bias: " + call;
  return std::move(declaration).derivative({formula.c_str(), "grad_fn: NativeBatchNormBackward0"});
}

OpDeclaration groupNormDerivative(OpDeclaration declaration, const std::string& stats, const std::string& group) {
  std::string call = "torch.native_group_norm_backward(grad, input, " + stats +
                     ", weight, input.size(0), input.size(1), 1, " + group + ", grad_input_mask)";
  std::string formula = "input, weight, bias: " + call;
  return std::move(declaration).derivative({formula.c_str(), "grad_fn: NativeGroupNormBackward0"});
}

// The derivatives of native_batch_norm_backward (norm_double_backward.h):
// normalized over every dim but the channels (dim 1); in training by the
// saved statistics (computed again when not given), in evaluation an affine
// map by the running ones. The saved statistics, results of the forward,
// get none (torch: not_implemented, never reached).
OpDeclaration batchNormDoubleBackward(OpDeclaration declaration) {
  namespace ndb = norm_double_backward;
  const std::string dims = "[0] + [d for d in range(2, input.dim())]";
  auto channels = [](const std::string& e) { return "(" + e + ").reshape([1, -1] + [1] * (input.dim() - 2))"; };
  ndb::Form form;
  auto same = [](const std::string& e) { return e; };
  form.view = same;
  form.back = same;
  form.mean = [dims](const std::string& v) { return v + ".mean(" + dims + ", True)"; };
  form.to_weight = [dims](const std::string& v) { return "(" + v + ").sum(" + dims + ")"; };
  form.from_weight = channels;
  form.grad_out = "grad_out";
  form.weight = "weight";
  form.center = channels("save_mean if save_mean is not None else input.mean(" + dims + ")");
  form.rstd = channels("save_invstd if save_invstd is not None else torch.rsqrt(input.var(" + dims +
                       ", unbiased=False) + eps)");
  ndb::Formulas train = ndb::formulas(form);
  form.center =
      channels("running_mean if running_mean is not None else torch.zeros([input.size(1)], dtype=input.dtype)");
  form.rstd = channels(
      "torch.rsqrt(running_var + eps) if running_var is not None else "
      "torch.ones([input.size(1)], dtype=input.dtype)");
  ndb::Formulas eval = ndb::affineFormulas(form);
  auto either = [](const std::string& a, const std::string& b) { return "(" + a + ") if train else (" + b + ")"; };
  std::string grad_out = "grad_out: " + either(train.grad_out, eval.grad_out);
  std::string input = "input: " + either(train.input, eval.input);
  std::string weight = "weight: " + either(train.weight, eval.weight);
  return std::move(declaration)
      .derivative({grad_out.c_str(), input.c_str(), weight.c_str(),
                   "save_mean: torch.zeros([input.size(1)], dtype=input.dtype)",
                   "save_invstd: torch.zeros([input.size(1)], dtype=input.dtype)"});
}

// The derivatives of native_group_norm_backward (norm_double_backward.h):
// in the view [N, group, C / group, HxW], normalized over its last two dims.
OpDeclaration groupNormDoubleBackward(OpDeclaration declaration) {
  namespace ndb = norm_double_backward;
  ndb::Form form;
  form.view = [](const std::string& e) { return "(" + e + ").reshape([N, group, C // group, -1])"; };
  form.back = [](const std::string& e) { return "(" + e + ").reshape(input.size())"; };
  form.mean = [](const std::string& v) { return v + ".mean([2, 3], True)"; };
  form.to_weight = [](const std::string& v) { return "(" + v + ").sum([0, 3]).reshape([C])"; };
  form.from_weight = [](const std::string& e) { return "(" + e + ").reshape([1, group, C // group, 1])"; };
  form.center = "mean.reshape([N, group, 1, 1])";
  form.rstd = "rstd.reshape([N, group, 1, 1])";
  form.grad_out = "grad_out";
  form.weight = "weight";
  ndb::Formulas f = ndb::formulas(form);
  std::string grad_out = "grad_out: " + f.grad_out;
  std::string input = "input: " + f.input;
  std::string weight = "weight: " + f.weight;
  return std::move(declaration)
      .derivative({grad_out.c_str(), input.c_str(), weight.c_str(), "mean: torch.zeros_like(mean)",
                   "rstd: torch.zeros_like(rstd)"});
}

KILN_REGISTER_OPS(
    batchNormDerivative(
        op("aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
           "bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
           [](const Tensor& input, const Opt& weight, const Opt& bias, const Opt& running_mean, const Opt& running_var,
              bool training, double momentum, double eps,
              bool) { return batchNorm(input, weight, bias, running_mean, running_var, training, momentum, eps); })
            .shape(normalized),
        "None, None"),
    batchNormDerivative(op("aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
                           "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
                           [](const Tensor& input, const Opt& weight, const Opt& bias, const Opt& running_mean,
                              const Opt& running_var, bool training, double momentum, double eps) {
                             return nativeBatchNorm(input, weight, bias, running_mean, running_var, training, momentum,
                                                    eps);
                           })
                            .shape(batchNormResults),
                        "result1, result2"),
    op("aten::native_batch_norm.out(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
       "Tensor? running_var, bool training, float momentum, float eps, *, Tensor(a!) out, Tensor(b!) save_mean, "
       "Tensor(c!) save_invstd) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
       [](const Tensor& input, const Opt& weight, const Opt& bias, const Opt& running_mean, const Opt& running_var,
          bool training, double momentum, double eps, Tensor out, Tensor save_mean, Tensor save_invstd) {
         return writeThree(nativeBatchNorm(input, weight, bias, running_mean, running_var, training, momentum, eps),
                           out, save_mean, save_invstd, "native_batch_norm");
       })
        .shape(batchNormResults),
    // What autodiff lowers batch_norm to; impl_index 0 is the native CPU kernel.
    batchNormDerivative(
        op("aten::_batch_norm_impl_index(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
           "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> "
           "(Tensor, Tensor, Tensor, Tensor, int)",
           [](const Tensor& input, const Opt& weight, const Opt& bias, const Opt& running_mean, const Opt& running_var,
              bool training, double momentum, double eps, bool) {
             auto [out, save_mean, save_invstd] =
                 nativeBatchNorm(input, weight, bias, running_mean, running_var, training, momentum, eps);
             return std::make_tuple(out, save_mean, save_invstd, empty({0}, input.dtype()), int64_t{0});
           })
            .shape(batchNormImplIndex),
        "result1, result2"),
    op("aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
       "Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor",
       [](const Tensor& input, const Opt& weight, const Opt& bias, const Opt& running_mean, const Opt& running_var,
          bool use_input_stats, double momentum, double eps, bool) {
         return instanceNorm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps);
       })
        .shape(normalized)
        .derivative({"input: torch.native_batch_norm_backward(grad.reshape([1, -1] + input.size()[2:]), "
                     "input.reshape([1, -1] + input.size()[2:]), "
                     "None if weight is None else weight.repeat(input.size(0)), "
                     "None if running_mean is None else running_mean.repeat(input.size(0)), "
                     "None if running_var is None else running_var.repeat(input.size(0)), None, None, use_input_stats, "
                     "eps, [True, False, False])[0].reshape(input.size())",
                     "weight: torch.native_batch_norm_backward(grad.reshape([1, -1] + input.size()[2:]), "
                     "input.reshape([1, -1] + input.size()[2:]), "
                     "None if weight is None else weight.repeat(input.size(0)), "
                     "None if running_mean is None else running_mean.repeat(input.size(0)), "
                     "None if running_var is None else running_var.repeat(input.size(0)), None, None, use_input_stats, "
                     "eps, [False, True, False])[1].reshape([input.size(0), -1]).sum(0)",
                     "bias: grad.transpose(0, 1).reshape([input.size(1), -1]).sum(1)",
                     "grad_fn: NativeBatchNormBackward0"}),
    groupNormDerivative(op("aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
                           "float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor",
                           [](const Tensor& input, int64_t num_groups, const Opt& weight, const Opt& bias, double eps,
                              bool) { return groupNorm(input, num_groups, weight, bias, eps); })
                            .shape(normalized),
                        "torch.native_group_norm(input, None, None, input.size(0), input.size(1), "
                        "input.numel() // (input.size(0) * input.size(1)), num_groups, eps)[1], "
                        "torch.native_group_norm(input, None, None, input.size(0), input.size(1), "
                        "input.numel() // (input.size(0) * input.size(1)), num_groups, eps)[2]",
                        "num_groups"),
    groupNormDerivative(
        op("aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, "
           "int group, float eps) -> (Tensor, Tensor, Tensor)",
           [](const Tensor& input, const Opt& weight, const Opt& bias, int64_t n, int64_t c, int64_t hxw, int64_t group,
              double eps) { return nativeGroupNorm(input, weight, bias, n, c, hxw, group, eps); })
            .shape(groupNormResults),
        "result1, result2", "group"),
    op("aten::native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, "
       "int group, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> "
       "(Tensor(a!), Tensor(b!), Tensor(c!))",
       [](const Tensor& input, const Opt& weight, const Opt& bias, int64_t n, int64_t c, int64_t hxw, int64_t group,
          double eps, Tensor out0, Tensor out1, Tensor out2) {
         return writeThree(nativeGroupNorm(input, weight, bias, n, c, hxw, group, eps), out0, out1, out2,
                           "native_group_norm");
       })
        .shape(groupNormResults),
    batchNormDoubleBackward(op(
        "aten::native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, "
        "Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> "
        "(Tensor, Tensor, Tensor)",
        [](const Tensor& grad, const Tensor& input, const Opt& weight, const Opt& running_mean, const Opt& running_var,
           const Opt& save_mean, const Opt& save_invstd, bool train, double eps, const IValue& mask) {
          return batchNormBackward(grad, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
                                   maskOf(mask));
        })),
    op("aten::native_batch_norm_backward.out(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, "
       "Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask, *, "
       "Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
       [](const Tensor& grad, const Tensor& input, const Opt& weight, const Opt& running_mean, const Opt& running_var,
          const Opt& save_mean, const Opt& save_invstd, bool train, double eps, const IValue& mask, Tensor out0,
          Tensor out1, Tensor out2) {
         return writeDefined(batchNormBackward(grad, input, weight, running_mean, running_var, save_mean, save_invstd,
                                               train, eps, maskOf(mask)),
                             out0, out1, out2, "native_batch_norm_backward");
       }),
    op("aten::native_group_norm_backward.out(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, "
       "Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask, *, Tensor(a!) out0, "
       "Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
       [](const Tensor& grad, const Tensor& input, const Tensor& mean, const Tensor& rstd, const Opt& weight, int64_t,
          int64_t, int64_t, int64_t group, const IValue& mask, Tensor out0, Tensor out1, Tensor out2) {
         return writeDefined(groupNormBackward(grad, input, mean, rstd, weight, group, 1e-5, maskOf(mask)), out0, out1,
                             out2, "native_group_norm_backward");
       }),
    groupNormDoubleBackward(
        op("aten::native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, "
           "SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
           [](const Tensor& grad, const Tensor& input, const Tensor& mean, const Tensor& rstd, const Opt& weight,
              int64_t, int64_t, int64_t, int64_t group, const IValue& mask) {
             // The statistics are computed again when missing, with torch's default eps.
             return groupNormBackward(grad, input, mean, rstd, weight, group, 1e-5, maskOf(mask));
           })), );

}  // namespace
}  // namespace kiln
