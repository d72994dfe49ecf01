// TorchScript's autograd builtins over the eager engine: torch.autograd.grad
// and backward, Tensor.backward, `x.grad`, requires_grad_, retain_grad and
// the leaf queries. Script-only: the Python tensor has its own bindings, and
// the interpreter does not record them (they are not differentiable ops).
// Their schemas are 1.13's; node_effects.cpp keeps the passes from removing
// or reordering them.
#include <optional>

#include "kiln/autograd/engine.h"
#include "kiln/autograd/function.h"
#include "kiln/autograd/variable.h"
#include "kiln/core/op_registration.h"

namespace kiln::autograd {
namespace {

// A Tensor[] argument's tensors.
TensorList tensorsOf(const IValue& v) {
  TensorList out;
  for (const IValue& e : v.toListRef().elements) out.push_back(e.toTensor());
  return out;
}

// A Tensor?[]? argument: None (no list) gives an empty list, None elements
// undefined tensors (a gradient of 1 for a scalar output).
TensorList optionalTensorsOf(const IValue& v) {
  TensorList out;
  if (v.isNone()) return out;
  for (const IValue& e : v.toListRef().elements) out.push_back(e.isNone() ? Tensor() : e.toTensor());
  return out;
}

std::optional<bool> optionalBool(const IValue& v) {
  if (v.isNone()) return std::nullopt;
  return v.toBool();
}

// Pops the last `n` values of the stack.
std::vector<IValue> popArguments(Stack& stack, size_t n) {
  std::vector<IValue> args(std::make_move_iterator(stack.end() - static_cast<std::ptrdiff_t>(n)),
                           std::make_move_iterator(stack.end()));
  stack.resize(stack.size() - n);
  return args;
}

KILN_REGISTER_SCRIPT_OPS(
    op("prim::grad(Tensor a) -> Tensor(*)",
       [](const Tensor& a) {
         Tensor g = grad(a);
         return g.defined() ? IValue(g) : IValue();
       }),
    stackOp("aten::grad(Tensor[] outputs, Tensor[] inputs, Tensor?[]? grad_outputs=None, bool? retain_graph=None, "
            "bool create_graph=False, bool allow_unused=False) -> Tensor?[]",
            [](Stack& stack) {
              std::vector<IValue> args = popArguments(stack, 6);
              TensorList grad_outputs = optionalTensorsOf(args[2]);
              TensorList outputs = tensorsOf(args[0]);
              if (!grad_outputs.empty()) {
                KILN_CHECK(grad_outputs.size() == outputs.size(), "grad requires one grad_output per output: got ",
                           grad_outputs.size(), " grad_outputs for ", outputs.size(), " outputs");
              }
              TensorList result = grad(outputs, tensorsOf(args[1]), grad_outputs, optionalBool(args[3]),
                                       args[4].toBool(), args[5].toBool());
              std::vector<IValue> out;
              for (Tensor& g : result) out.push_back(g.defined() ? IValue(std::move(g)) : IValue());
              stack.emplace_back(IValue::list(OptionalType::ofTensor(), std::move(out)));
            }),
    stackOp(
        "aten::backward(Tensor self, Tensor? gradient=None, bool? retain_graph=None, bool create_graph=False) -> ()",
        [](Stack& stack) {
          std::vector<IValue> args = popArguments(stack, 4);
          TensorList gradient;
          if (!args[1].isNone()) gradient.push_back(args[1].toTensor());
          backward({args[0].toTensor()}, gradient, optionalBool(args[2]), args[3].toBool());
        }),
    stackOp("aten::backward.TensorList(Tensor[] tensors, Tensor?[]? grad_tensors=None, bool? retain_graph=None, "
            "bool create_graph=False) -> ()",
            [](Stack& stack) {
              std::vector<IValue> args = popArguments(stack, 4);
              TensorList tensors = tensorsOf(args[0]);
              TensorList grad_tensors = optionalTensorsOf(args[1]);
              if (!grad_tensors.empty()) {
                KILN_CHECK(grad_tensors.size() == tensors.size(), "got ", grad_tensors.size(), " tensors and ",
                           tensors.size(), " gradients");
              }
              backward(tensors, grad_tensors, optionalBool(args[2]), args[3].toBool());
            }),
    op("aten::requires_grad_(Tensor(a!) self, bool requires_grad=True) -> Tensor(a!)",
       [](const Tensor& self, bool requires_grad) {
         setRequiresGrad(self, requires_grad);
         return self;
       }),
    stackOp("aten::retain_grad(Tensor(a!) self) -> ()",
            [](Stack& stack) {
              retainGrad(stack.back().toTensor());
              stack.pop_back();
            }),
    op("aten::retains_grad(Tensor self) -> bool", [](const Tensor& self) { return retainsGrad(self); }),
    op("aten::is_leaf(Tensor self) -> bool", [](const Tensor& self) { return isLeaf(self); }),
    op("aten::output_nr(Tensor self) -> int", [](const Tensor& self) { return static_cast<int64_t>(outputNr(self)); }));

}  // namespace
}  // namespace kiln::autograd
