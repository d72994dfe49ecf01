// aten:: registrations of batch, instance and group normalization, with
// PyTorch 1.13's schemas (layer norm is registered elsewhere).
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/normalization.h"
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

KILN_REGISTER_OPS(
    op("aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
       "bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
       [](const Tensor& input, const Opt& weight, const Opt& bias, const Opt& running_mean, const Opt& running_var,
          bool training, double momentum, double eps,
          bool) { return batchNorm(input, weight, bias, running_mean, running_var, training, momentum, eps); })
        .shape(normalized),
    op("aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
       "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
       [](const Tensor& input, const Opt& weight, const Opt& bias, const Opt& running_mean, const Opt& running_var,
          bool training, double momentum, double eps) {
         return nativeBatchNorm(input, weight, bias, running_mean, running_var, training, momentum, eps);
       })
        .shape(batchNormResults),
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
    op("aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
       "Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor",
       [](const Tensor& input, const Opt& weight, const Opt& bias, const Opt& running_mean, const Opt& running_var,
          bool use_input_stats, double momentum, double eps, bool) {
         return instanceNorm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps);
       })
        .shape(normalized),
    op("aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
       "float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor",
       [](const Tensor& input, int64_t num_groups, const Opt& weight, const Opt& bias, double eps, bool) {
         return groupNorm(input, num_groups, weight, bias, eps);
       })
        .shape(normalized),
    op("aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, "
       "int group, float eps) -> (Tensor, Tensor, Tensor)",
       [](const Tensor& input, const Opt& weight, const Opt& bias, int64_t n, int64_t c, int64_t hxw, int64_t group,
          double eps) { return nativeGroupNorm(input, weight, bias, n, c, hxw, group, eps); })
        .shape(groupNormResults),
    op("aten::native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, "
       "int group, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> "
       "(Tensor(a!), Tensor(b!), Tensor(c!))",
       [](const Tensor& input, const Opt& weight, const Opt& bias, int64_t n, int64_t c, int64_t hxw, int64_t group,
          double eps, Tensor out0, Tensor out1, Tensor out2) {
         return writeThree(nativeGroupNorm(input, weight, bias, n, c, hxw, group, eps), out0, out1, out2,
                           "native_group_norm");
       })
        .shape(groupNormResults), );

}  // namespace
}  // namespace kiln
