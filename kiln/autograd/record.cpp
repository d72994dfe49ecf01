// Recording: the function autograd installs into core's runOperator. An
// operator called with an argument that requires grad, in grad mode, runs
// and then gets a grad_fn node on its differentiable results: a FormulaNode
// over its derivative formulas (formula.h), holding what they read.
#include <cstring>

#include "kiln/autograd/formula.h"
#include "kiln/autograd/function.h"
#include "kiln/core/dispatch_hook.h"
#include "kiln/core/op_description.h"
#include "kiln/ops/prim_ops.h"
#include "kiln/runtime/code.h"
#include "kiln/runtime/interpreter.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"

namespace kiln::autograd {

namespace {

// `grad` summed over the dims it was broadcast along, to `sizes`.
Tensor sumToSize(const Tensor& grad, IntArrayRef sizes) {
  if (grad.sizes() == sizes) return grad;
  int64_t lead = grad.dim() - static_cast<int64_t>(sizes.size());
  DimVector dims;
  for (int64_t d = 0; d < grad.dim(); ++d) {
    if (d < lead || (sizes[d - lead] == 1 && grad.size(d) != 1)) dims.push_back(d);
  }
  Tensor reduced = dims.empty() ? grad : sum(grad, IntArrayRef(dims), /*keepdim=*/true);
  return reshape(reduced, sizes);
}

// A saved argument or result: tensors with their version, the rest as is.
struct SavedValue {
  IValue value;  // non-tensor values, and lists of tensors
  SavedVariable tensor;
  std::vector<SavedVariable> tensors;
  enum class Kind { Value, Tensor, TensorList } kind = Kind::Value;
};

SavedValue save(const IValue& v, bool is_output, uint32_t output_nr) {
  SavedValue s;
  if (v.isTensor()) {
    s.kind = SavedValue::Kind::Tensor;
    s.tensor = SavedVariable(v.toTensor(), is_output, output_nr);
  } else if (v.isTensorList()) {
    s.kind = SavedValue::Kind::TensorList;
    for (const IValue& e : v.toListRef().elements) s.tensors.emplace_back(e.toTensor(), is_output, output_nr++);
  } else {
    s.value = v;
  }
  return s;
}

class FormulaNode final : public Node {
 public:
  FormulaNode(const OpDerivative& derivative, const CompiledFormula& formula, uint32_t num_inputs)
      : Node(num_inputs), derivative_(derivative), formula_(formula) {}

  std::string name() const override { return derivative_.nodeName(); }

  TensorList apply(TensorList&& grads) override {
    if (released_) throwFreedGraph();
    Stack stack;
    stack.reserve(formula_.inputs.size());
    for (size_t i = 0; i < formula_.inputs.size(); ++i) {
      const FormulaInput& in = formula_.inputs[i];
      switch (in.kind) {
        case FormulaInput::Kind::Grad: stack.emplace_back(gradOrZeros(grads, 0)); break;
        case FormulaInput::Kind::Grads: {
          std::vector<Tensor> all;
          for (size_t k = 0; k < grads.size(); ++k) all.push_back(gradOrZeros(grads, k));
          stack.emplace_back(IValue(all));
          break;
        }
        default: stack.push_back(unpack(saved_[i]));
      }
    }
    InterpreterState(formula_.code).run(stack);
    // One tuple of gradients (a single value when the formula returned one).
    std::vector<IValue> results;
    if (stack.size() == 1 && stack[0].isTuple()) {
      results = stack[0].toTupleRef().elements;
    } else {
      results.assign(stack.begin(), stack.end());
    }
    TensorList out(nextEdges().size());
    for (size_t k = 0; k < formula_.outputs.size() && k < results.size(); ++k) {
      auto [first, count] = edge_ranges_[formula_.outputs[k]];
      const IValue& r = results[k];
      if (r.isTensor()) {
        if (count == 1) out[first] = r.toTensor();
      } else if (r.isList()) {
        const auto& elems = r.toListRef().elements;
        for (size_t j = 0; j < count && j < elems.size(); ++j) {
          if (elems[j].isTensor()) out[first + j] = elems[j].toTensor();
        }
      }
    }
    for (size_t e = 0; e < out.size(); ++e) {
      if (!out[e].defined() || !nextEdges()[e].valid()) {
        out[e] = Tensor();
        continue;
      }
      const TensorGeometry& g = edge_geometry_[e];
      if (out[e].sizes() != IntArrayRef(g.sizes)) out[e] = sumToSize(out[e], g.sizes);
      if (out[e].dtype() != g.dtype) out[e] = to(out[e], g.dtype);
    }
    return out;
  }

  void releaseVariables() override {
    saved_.clear();
    released_ = true;
  }

  std::vector<SavedValue> saved_;  // one per formula input (empty for grads)
  // Per formula: its first next edge and how many (a Tensor[] input has one per element).
  std::vector<std::pair<size_t, size_t>> edge_ranges_;
  std::vector<TensorGeometry> edge_geometry_;

 private:
  Tensor gradOrZeros(const TensorList& grads, size_t i) {
    if (i < grads.size() && grads[i].defined()) return grads[i];
    const TensorGeometry& g = inputGeometry()[i];
    return zeros(g.sizes, g.dtype);
  }

  IValue unpack(const SavedValue& s) const {
    switch (s.kind) {
      case SavedValue::Kind::Tensor: return IValue(s.tensor.unpack(*this));
      case SavedValue::Kind::TensorList: {
        std::vector<Tensor> ts;
        for (const SavedVariable& v : s.tensors) ts.push_back(v.unpack(*this));
        return IValue(ts);
      }
      default: return s.value;
    }
  }

  const OpDerivative& derivative_;
  const CompiledFormula& formula_;
  bool released_ = false;
};

// For an operator without a derivative: backward through it raises.
class NotImplementedNode final : public Node {
 public:
  NotImplementedNode(std::string op_name, uint32_t num_inputs) : Node(num_inputs), op_name_(std::move(op_name)) {}
  std::string name() const override { return "torch::autograd::NotImplemented"; }
  TensorList apply(TensorList&&) override { KILN_ERROR("the derivative for '", op_name_, "' is not implemented."); }

 private:
  std::string op_name_;
};

bool anyInputRequiresGrad(const Stack& stack, size_t base, size_t n) {
  for (size_t i = base; i < base + n; ++i) {
    const IValue& v = stack[i];
    if (v.isTensor() && requiresGrad(v.toTensor())) return true;
    if (v.isList()) {
      for (const IValue& e : v.toListRef().elements) {
        if (e.isTensor() && requiresGrad(e.toTensor())) return true;
      }
    }
  }
  return false;
}

bool differentiableDtype(const Tensor& t) { return isFloatingType(t.dtype()) || isComplexType(t.dtype()); }

// Collects the tensors of a result value (a tensor, or a list of them).
void resultTensors(const IValue& v, std::vector<Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTensorList()) {
    for (const IValue& e : v.toListRef().elements) out.push_back(e.toTensor());
  }
}

void recordOperator(const Operator& op, Stack& stack) {
  if (!isGradEnabled()) {
    op.operation()(stack);
    return;
  }
  const FunctionSchema& schema = op.schema();
  const auto& args = schema.arguments();
  const size_t n = args.size();
  const size_t base = stack.size() - n;
  if (op.description().has(OpTrait::NeverRequiresGrad) || op.description().has(OpTrait::Factory)) {
    op.operation()(stack);
    return;
  }
  // In-place and out= forms.
  bool inplace = false;
  for (size_t i = 0; i < n; ++i) {
    if (!args[i].isOutOrInPlace()) continue;
    const IValue& v = stack[base + i];
    if (args[i].kwarg_only || args[i].name == "out") {
      KILN_CHECK(!(v.isTensor() && requiresGrad(v.toTensor())) && !anyInputRequiresGrad(stack, base, n),
                 schema.name().substr(6),
                 "(): functions with out=... arguments don't support automatic "
                 "differentiation, but one of the arguments requires grad.");
    } else if (i == 0 && v.isTensor()) {
      inplace = true;
      const Tensor& self = v.toTensor();
      KILN_CHECK(!(isLeaf(self) && requiresGrad(self)),
                 "a leaf Variable that requires grad is being used in an in-place operation.");
    }
  }
  const OpDerivative* derivative = derivativeFor(op);

  // The inputs whose gradients the node computes (bit f: formula f).
  uint64_t needed = 0;
  std::vector<Edge> edges;
  std::vector<std::pair<size_t, size_t>> ranges;
  std::vector<TensorGeometry> geometry;
  if (derivative) {
    const auto& formulas = derivative->formulas();
    for (size_t f = 0; f < formulas.size(); ++f) {
      const IValue& v = stack[base + formulas[f].argument];
      size_t first = edges.size();
      bool any = false;
      auto addEdge = [&](const Tensor& t) {
        if (requiresGrad(t)) {
          edges.push_back(gradientEdge(t));
          any = true;
        } else {
          edges.push_back({});
        }
        geometry.push_back(t.defined() ? TensorGeometry{DimVector(t.sizes()), t.dtype()} : TensorGeometry{});
      };
      if (v.isTensor()) {
        addEdge(v.toTensor());
      } else if (v.isList()) {
        for (const IValue& e : v.toListRef().elements) addEdge(e.isTensor() ? e.toTensor() : Tensor());
      }
      ranges.emplace_back(first, edges.size() - first);
      if (any) needed |= uint64_t{1} << f;
    }
    if (!needed) {
      op.operation()(stack);
      return;
    }
  }

  std::shared_ptr<Node> node;
  FormulaNode* formula_node = nullptr;
  const CompiledFormula* compiled_formula = nullptr;
  if (derivative) {
    compiled_formula = &derivative->compiled(needed);
    const CompiledFormula& compiled = *compiled_formula;
    auto made = std::make_shared<FormulaNode>(*derivative, compiled, 0);
    formula_node = made.get();
    node = std::move(made);
    formula_node->saved_.resize(compiled.inputs.size());
    // Arguments are saved before the op runs (an in-place op changes `self`: its old value is kept).
    for (size_t i = 0; i < compiled.inputs.size(); ++i) {
      const FormulaInput& in = compiled.inputs[i];
      if (in.kind != FormulaInput::Kind::Argument) continue;
      const IValue& v = stack[base + in.index];
      if (inplace && in.index == 0 && v.isTensor()) {
        formula_node->saved_[i] = save(IValue(clone(v.toTensor())), false, 0);
      } else {
        formula_node->saved_[i] = save(v, false, 0);
      }
    }
    formula_node->nextEdges() = std::move(edges);
    formula_node->edge_ranges_ = std::move(ranges);
    formula_node->edge_geometry_ = std::move(geometry);
  } else {
    // No formula: the results get a node that raises when backward reaches it.
    std::vector<Edge> all;
    for (size_t i = 0; i < n; ++i) {
      const IValue& v = stack[base + i];
      if (v.isTensor() && requiresGrad(v.toTensor())) all.push_back(gradientEdge(v.toTensor()));
    }
    node = std::make_shared<NotImplementedNode>(schema.name(), 0);
    node->nextEdges() = std::move(all);
  }

  // Inputs the op may hand back as its result (contiguous, to): an output
  // must be a tensor of its own before it gets a grad_fn.
  std::vector<TensorImpl*> input_impls;
  if (!inplace) {
    for (size_t i = 0; i < n; ++i) {
      const IValue& v = stack[base + i];
      if (v.isTensor() && v.toTensor().defined()) input_impls.push_back(v.toTensor().impl());
    }
  }

  // The grad_fn of an in-place op's `self` before the op ran (composite kernels change it).
  std::shared_ptr<Node> grad_fn_before = inplace ? gradFn(stack[base].toTensor()) : nullptr;

  op.operation()(stack);

  std::vector<Tensor> results;
  std::vector<size_t> result_of;  // which schema result each tensor came from
  for (size_t r = base; r < stack.size(); ++r) {
    IValue& v = stack[r];
    if (!inplace && v.isTensor()) {
      const Tensor& t = v.toTensor();
      for (TensorImpl* impl : input_impls) {
        if (t.defined() && t.impl() == impl) {
          v = IValue(detach(t));
          break;
        }
      }
    }
    resultTensors(v, results);
    result_of.resize(results.size(), r - base);
  }
  uint32_t num_outputs = static_cast<uint32_t>(results.size());
  // The node's inputs are the results' gradients.
  node->inputGeometry().clear();
  for (const Tensor& t : results) {
    node->inputGeometry().push_back(t.defined() ? TensorGeometry{DimVector(t.sizes()), t.dtype()} : TensorGeometry{});
  }
  if (formula_node) {
    const CompiledFormula& compiled = *compiled_formula;
    for (size_t i = 0; i < compiled.inputs.size(); ++i) {
      const FormulaInput& in = compiled.inputs[i];
      if (in.kind != FormulaInput::Kind::Result) continue;
      // The output number of this result: how many result tensors come before it.
      uint32_t output_nr = 0;
      for (size_t k = 0; k < results.size() && result_of[k] < in.index; ++k) ++output_nr;
      formula_node->saved_[i] = save(stack[base + in.index], true, output_nr);
    }
  }
  node->setNumInputs(num_outputs);
  for (uint32_t k = 0; k < num_outputs; ++k) {
    const Tensor& t = results[k];
    if (!t.defined() || !differentiableDtype(t)) continue;
    if (derivative && !derivative->resultDifferentiable(result_of[k])) continue;
    // A composite kernel (kiln/ops/composite.h) ran its decomposition
    // through runOperator: its results already have the grad_fns of the
    // operators it recorded.
    if (std::shared_ptr<Node> fn = gradFn(t); fn && fn != grad_fn_before) continue;
    setGradFn(t, node, k);
  }
}

}  // namespace

// Installs autograd into the layers below at load time.
const bool kInstalled = [] {
  setAutogradMetaFactory([]() -> std::unique_ptr<AutogradMetaInterface> { return std::make_unique<AutogradMeta>(); });
  setAutogradDispatch(&recordOperator);
  return true;
}();

}  // namespace kiln::autograd
