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

Tensor callRecorded(const char* name, const char* overload, Stack stack) {
  OperatorPtr op = findOperator(Symbol::fromQualString(name), overload);
  KILN_INTERNAL_ASSERT(op, "no operator ", name, ".", overload);
  runOperator(*op, stack);
  return stack.back().toTensor();
}

namespace {

// A saved argument or result: tensors with their version, the rest as is.
struct SavedValue {
  IValue value;  // non-tensor values, and lists of tensors
  SavedVariable tensor;
  std::vector<SavedVariable> tensors;
  enum class Kind { Value, Tensor, TensorList } kind = Kind::Value;
};

// What a formula that reads only `t`'s geometry gets: a tensor of its sizes
// and dtype over one element (all strides 0), so that the activation itself
// is not kept alive for backward.
Tensor geometryStandIn(const Tensor& t) {
  Tensor one = zeros({1}, t.dtype());
  return makeView(one, t.sizes(), DimVector(t.sizes().size(), 0), 0);
}

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

  std::string name() const override { return name_.empty() ? derivative_.nodeName() : name_; }

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
    InterpreterState(isGradEnabled() ? formula_.recording_code : formula_.code).run(stack);
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
  std::string name_;  // when it depends on the call (runtimeNodeName)

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

// For an operator without a derivative, or with an argument that requires
// grad but has no formula: backward through it raises (torch's messages),
// rather than giving that argument a missing gradient.
class NotImplementedNode final : public Node {
 public:
  NotImplementedNode(std::string name, std::string message)
      : Node(0), name_(std::move(name)), message_(std::move(message)) {}
  std::string name() const override { return name_; }
  TensorList apply(TensorList&&) override { KILN_ERROR(message_); }

 private:
  std::string name_;
  std::string message_;
};

// "aten::pow" -> "pow".
std::string baseName(const std::string& qualified) {
  size_t colons = qualified.find("::");
  return colons == std::string::npos ? qualified : qualified.substr(colons + 2);
}

// A tensor's memory layout: a gradient is put in and read out at it.
struct Layout {
  DimVector sizes;
  DimVector strides;
  int64_t offset = 0;  // relative to the base's
  explicit Layout(const Tensor& t, int64_t base_offset = 0)
      : sizes(t.sizes()), strides(t.strides()), offset(t.storageOffset() - base_offset) {}
  // Elements of storage from the base's offset that the layout reaches.
  int64_t extent() const {
    int64_t end = offset + 1;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 0) return 0;
      end += (sizes[d] - 1) * strides[d];
    }
    return end;
  }
};

// torch's CopySlices: the base's history after an in-place write through a
// view. Its gradient flows into the base's old history, except the view's
// part, which goes through the in-place op's node `fn` (its self edge now
// leads to the base's old history; its other edges stay).
class CopySlices final : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn, size_t self_edge)
      : Node(1), base_(base), view_(view, base.storageOffset()), dtype_(base.dtype()), fn_(std::move(fn)),
        self_edge_(self_edge) {
    inputGeometry().push_back({DimVector(base.sizes()), base.dtype()});
    nextEdges() = fn_->nextEdges();
    Edge base_edge = gradientEdge(base);
    if (self_edge_ < nextEdges().size()) {
      nextEdges()[self_edge_] = std::move(base_edge);
    } else {
      self_edge_ = nextEdges().size();
      nextEdges().push_back(std::move(base_edge));
    }
  }
  std::string name() const override { return "torch::autograd::CopySlices"; }

  TensorList apply(TensorList&& grads) override {
    int64_t extent = std::max(base_.extent(), view_.extent());
    Tensor flat = zeros({extent}, dtype_);
    Tensor result = makeView(flat, base_.sizes, base_.strides, 0);
    if (!grads.empty() && grads[0].defined()) copy_(result, grads[0]);
    Tensor slice = makeView(flat, view_.sizes, view_.strides, view_.offset);
    TensorList res = fn_->apply({clone(slice)});
    res.resize(nextEdges().size());
    Tensor view_grad = res[self_edge_];
    if (view_grad.defined()) {
      copy_(slice, view_grad);
    } else {
      copy_(slice, zeros(view_.sizes, dtype_));
    }
    res[self_edge_] = result;
    return res;
  }

  void releaseVariables() override { fn_->releaseVariables(); }

 private:
  Layout base_;
  Layout view_;
  ScalarType dtype_;
  std::shared_ptr<Node> fn_;
  size_t self_edge_;
};

// A view's grad_fn after an in-place write through it: its gradient, put at
// the view's place in a base-shaped zero gradient (torch's AsStridedBackward0).
class AsStridedBackward final : public Node {
 public:
  AsStridedBackward(const Tensor& base, const Tensor& view)
      : Node(1), base_(base), view_(view, base.storageOffset()), dtype_(base.dtype()) {
    inputGeometry().push_back({DimVector(view.sizes()), view.dtype()});
    nextEdges().push_back(gradientEdge(base));
  }
  std::string name() const override { return "AsStridedBackward0"; }

  TensorList apply(TensorList&& grads) override {
    if (grads.empty() || !grads[0].defined()) return {Tensor()};
    Tensor flat = zeros({std::max(base_.extent(), view_.extent())}, dtype_);
    copy_(makeView(flat, view_.sizes, view_.strides, view_.offset), grads[0]);
    return {makeView(flat, base_.sizes, base_.strides, 0)};
  }

 private:
  Layout base_;
  Layout view_;
  ScalarType dtype_;
};

// An in-place op through `view` recorded as `node`: the base's history
// becomes a CopySlices over the node, the view's an AsStridedBackward of it.
void rebaseHistory(const Tensor& view, const std::shared_ptr<Node>& node, size_t self_edge) {
  Tensor base = autogradMeta(view)->view_base_;
  auto copy_slices = std::make_shared<CopySlices>(base, view, node, self_edge);
  setGradFn(base, copy_slices, 0);
  setGradFn(view, std::make_shared<AsStridedBackward>(base, view), 0);
}

// The base of a view made by a recorded view op, or an undefined tensor.
Tensor viewBase(const Tensor& t) {
  AutogradMeta* meta = autogradMeta(t);
  return meta ? meta->view_base_ : Tensor();
}

// torch's grad_fn name where it depends on the arguments: matmul is a
// composite in torch, and its grad_fn is that of the op it dispatched to.
std::string runtimeNodeName(const FunctionSchema& schema, const Stack& stack, size_t base) {
  if (schema.name() != "aten::matmul" || !stack[base].isTensor() || !stack[base + 1].isTensor()) return "";
  int64_t a = stack[base].toTensor().dim();
  int64_t b = stack[base + 1].toTensor().dim();
  if (a == 1 && b == 1) return "DotBackward0";
  if (a == 2 && b == 1) return "MvBackward0";
  if (a == 1 && b == 2) return "SqueezeBackward3";
  if (a == 2 && b == 2) return "MmBackward0";
  if (a == 2 && b >= 3) return "CloneBackward0";
  return "UnsafeViewBackward0";
}

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

// A view op: a result aliases `self` without writing it.
bool isViewOp(const FunctionSchema& schema) {
  if (schema.arguments().empty() || schema.arguments()[0].type->kind() != TypeKind::Tensor) return false;
  for (const Argument& ret : schema.returns()) {
    if (ret.alias_info && !ret.alias_info->is_write) return true;
  }
  return false;
}

// The results of a view op that share `view_source`'s memory become views
// of its base (the root of a chain of views).
void markViews(const FunctionSchema& schema, const Tensor& view_source, const std::vector<Tensor>& results,
               const std::string& creator) {
  if (!view_source.defined()) return;
  Tensor root = viewBase(view_source);
  if (!root.defined()) root = view_source;
  std::vector<uint32_t> views;
  for (uint32_t k = 0; k < results.size(); ++k) {
    const Tensor& t = results[k];
    if (t.defined() && t.impl() != view_source.impl() && t.storage().get() == view_source.storage().get()) {
      views.push_back(k);
    }
  }
  bool multi = views.size() > 1;
  for (const Argument& ret : schema.returns()) multi |= ret.type->kind() == TypeKind::List;
  for (uint32_t k : views) {
    AutogradMeta& meta = materializeAutogradMeta(results[k]);
    meta.view_base_ = root;
    meta.multi_output_view_ = multi;
    meta.view_creator_ = creator;
    meta.view_output_nr_ = k;
  }
}

// Collects the tensors of a result value (a tensor, or a list of them).
void resultTensors(const IValue& v, std::vector<Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTensorList()) {
    for (const IValue& e : v.toListRef().elements) out.push_back(e.toTensor());
  }
}

void runViewOp(const Operator& op, Stack& stack);

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
  if (!anyInputRequiresGrad(stack, base, n)) {
    // Only view ops come here without an argument that requires grad.
    if (isViewOp(schema) && stack[base].isTensor()) {
      runViewOp(op, stack);
    } else {
      op.operation()(stack);
    }
    return;
  }
  // In-place and out= forms.
  bool inplace = false;
  Tensor inplace_view;  // self, when it is a view whose base's history the op rewrites
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
      if (Tensor view_base = viewBase(self); view_base.defined()) {
        const AutogradMeta& meta = *autogradMeta(self);
        KILN_CHECK(!meta.multi_output_view_, "Output ", meta.view_output_nr_, " of ", meta.view_creator_,
                   " is a view and is being modified inplace. This view is the output of a function that returns "
                   "multiple views. Such functions do not allow the output views to be modified inplace. You should "
                   "replace the inplace operation by an out-of-place one.");
        KILN_CHECK(!(isLeaf(view_base) && requiresGrad(view_base)),
                   "a view of a leaf Variable that requires grad is being used in an in-place operation.");
        inplace_view = self;
      }
    }
  }
  const OpDerivative* derivative = derivativeFor(op);
  bool missing = false;
  size_t self_edge = static_cast<size_t>(-1);  // the next edge of self's gradient

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
      if (formulas[f].argument == 0) self_edge = first;
      if (any) needed |= uint64_t{1} << f;
    }
    // A tensor argument that requires grad and that no formula covers.
    for (size_t i = 0; i < n && !missing; ++i) {
      bool covered = false;
      for (const auto& f : formulas) covered |= f.argument == i;
      missing = !covered && anyInputRequiresGrad(stack, base + i, 1);
    }
    if (!needed && !missing) {
      op.operation()(stack);
      return;
    }
  }

  std::shared_ptr<Node> node;
  FormulaNode* formula_node = nullptr;
  const CompiledFormula* compiled_formula = nullptr;
  if (derivative && !missing) {
    compiled_formula = &derivative->compiled(needed);
    const CompiledFormula& compiled = *compiled_formula;
    auto made = std::make_shared<FormulaNode>(*derivative, compiled, 0);
    formula_node = made.get();
    formula_node->name_ = runtimeNodeName(schema, stack, base);
    node = std::move(made);
    formula_node->saved_.resize(compiled.inputs.size());
    // Arguments are saved before the op runs (an in-place op changes `self`: its old value is kept).
    for (size_t i = 0; i < compiled.inputs.size(); ++i) {
      const FormulaInput& in = compiled.inputs[i];
      if (in.kind != FormulaInput::Kind::Argument) continue;
      const IValue& v = stack[base + in.index];
      if (compiled.geometry_only[i] && v.isTensor() && v.toTensor().defined()) {
        formula_node->saved_[i] = save(IValue(geometryStandIn(v.toTensor())), false, 0);
      } else if (inplace && in.index == 0 && v.isTensor()) {
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
      if (v.isTensor() && requiresGrad(v.toTensor())) {
        if (i == 0) self_edge = all.size();
        all.push_back(gradientEdge(v.toTensor()));
      }
    }
    if (derivative) {
      std::string base_name = baseName(schema.name());
      if (inplace && base_name.size() > 1 && base_name.back() == '_') base_name.pop_back();
      node = std::make_shared<NotImplementedNode>(derivative->nodeName(),
                                                  "the derivative for '" + base_name + "' is not implemented.");
    } else {
      node = std::make_shared<NotImplementedNode>("torch::autograd::NotImplemented",
                                                  "derivative for " + schema.name() + " is not implemented");
    }
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

  // A view op's results share self's memory: they become views of its base.
  Tensor view_source;
  if (!inplace && n > 0 && stack[base].isTensor()) {
    for (const Argument& ret : schema.returns()) {
      if (ret.alias_info && !ret.alias_info->is_write) view_source = stack[base].toTensor();
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
      const IValue& v = stack[base + in.index];
      if (compiled.geometry_only[i] && v.isTensor() && v.toTensor().defined()) {
        formula_node->saved_[i] = save(IValue(geometryStandIn(v.toTensor())), false, 0);
      } else {
        formula_node->saved_[i] = save(v, true, output_nr);
      }
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
  if (inplace_view.defined()) rebaseHistory(inplace_view, node, self_edge);
  if (view_source.defined()) markViews(schema, view_source, results, node->name());
}

// A view op run without gradients (no argument requires grad): its results
// still become views of the base, so that a later in-place write of a
// tensor that requires grad into them gives the base a history (torch's
// views of tensors that do not require grad).
void runViewOp(const Operator& op, Stack& stack) {
  const FunctionSchema& schema = op.schema();
  const size_t base = stack.size() - schema.arguments().size();
  Tensor view_source = stack[base].toTensor();
  op.operation()(stack);
  std::vector<Tensor> results;
  for (size_t r = base; r < stack.size(); ++r) resultTensors(stack[r], results);
  const OpDerivative* derivative = derivativeFor(op);
  markViews(schema, view_source, results, derivative ? derivative->nodeName() : baseName(schema.name()));
}

}  // namespace

// Installs autograd into the layers below at load time.
const bool kInstalled = [] {
  setAutogradMetaFactory([]() -> std::unique_ptr<AutogradMetaInterface> { return std::make_unique<AutogradMeta>(); });
  setAutogradDispatch(&recordOperator);
  return true;
}();

}  // namespace kiln::autograd
