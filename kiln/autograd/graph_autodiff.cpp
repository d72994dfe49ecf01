#include "kiln/autograd/graph_autodiff.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "kiln/autograd/formula.h"
#include "kiln/autograd/function.h"
#include "kiln/core/op_registration.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/subgraph_utils.h"
#include "kiln/ops/prim_ops.h"
#include "kiln/passes/common_subexpression_elimination.h"
#include "kiln/passes/constant_pooling.h"
#include "kiln/passes/constant_propagation.h"
#include "kiln/passes/create_autodiff_subgraphs.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/pass_registry.h"
#include "kiln/runtime/code.h"
#include "kiln/runtime/interpreter.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"

namespace kiln::autograd {

namespace {

bool floatTensor(const Value* v) {
  auto t = v->type()->cast<TensorType>();
  if (!t) return false;
  auto dtype = t->scalarType();
  return !dtype || isFloatingType(*dtype) || isComplexType(*dtype);
}

// A graph input requires grad unless its type says it does not.
bool inputRequiresGrad(const Value* v) {
  auto t = v->type()->cast<TensorType>();
  return t && t->requiresGrad() != std::optional<bool>(false) && floatTensor(v);
}

TypePtr withoutRequiresGrad(const TypePtr& type) {
  auto t = type->cast<TensorType>();
  return t && t->requiresGrad() ? t->withRequiresGrad(false) : type;
}

// f runs on detached inputs and df without grad mode: no value in them
// requires grad (what lets the fuser in).
void clearRequiresGrad(Block* block) {
  for (Value* v : block->inputs()) v->setType(withoutRequiresGrad(v->type()));
  for (kiln::Node* n : block->nodes()) {
    for (Value* v : n->outputs()) v->setType(withoutRequiresGrad(v->type()));
    for (Block* b : n->blocks()) clearRequiresGrad(b);
  }
}

bool sameCompleteSizes(const Value* a, const Value* b) {
  auto ta = a->type()->cast<TensorType>(), tb = b->type()->cast<TensorType>();
  if (!ta || !tb) return false;
  auto sa = ta->sizes().concrete(), sb = tb->sizes().concrete();
  return sa && sb && *sa == *sb;
}

class Differentiator {
 public:
  // `with_temporaries`: df also takes the gradients of the temporaries it
  // captures (torch's df does), for the backward that records.
  Differentiator(const std::shared_ptr<Graph>& graph, bool with_temporaries) : with_temporaries_(with_temporaries) {
    result_.f = graph->copy();
    result_.df = std::make_shared<Graph>();
    f_ = result_.f.get();
    df_ = result_.df.get();
  }

  Gradient run() {
    for (Value* in : f_->inputs()) {
      if (inputRequiresGrad(in)) requires_.insert(in);
    }
    std::vector<kiln::Node*> nodes;
    for (kiln::Node* n : f_->block()->nodes()) {
      nodes.push_back(n);
      bool any = false;
      for (Value* in : n->inputs()) any |= requires_.count(in) > 0;
      if (!any) continue;
      for (Value* out : n->outputs()) {
        if (floatTensor(out)) requires_.insert(out);
      }
    }
    result_.f_real_outputs = f_->outputs().size();
    for (size_t k = 0; k < f_->outputs().size(); ++k) {
      Value* out = f_->outputs()[k];
      real_outputs_.insert(out);
      if (!requires_.count(out)) continue;
      Value* vjp = df_->addInput();
      vjp->setType(withoutRequiresGrad(out->type()));
      result_.df_input_vjps.push_back(static_cast<int64_t>(k));
      accumulate(out, vjp);
    }
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) differentiateNode(*it);
    for (size_t i = 0; i < f_->inputs().size(); ++i) {
      Value* in = f_->inputs()[i];
      if (!requires_.count(in)) continue;
      result_.df_output_vjps.push_back(static_cast<int64_t>(i));
      auto g = grads_.find(in);
      df_->registerOutput(g != grads_.end() ? g->second : df_->insertConstant(IValue()));
    }
    orderCaptures();
    eliminateDeadCode(result_.df);
    return std::move(result_);
  }

 private:
  void accumulate(Value* v, Value* g) {
    auto it = grads_.find(v);
    if (it == grads_.end()) {
      grads_[v] = g;
      return;
    }
    it->second = df_->insert(aten::add, {it->second, g});
  }

  // `v` of f as a value of df: constants are copied, the rest become inputs.
  Value* capture(Value* v) {
    if (v->node()->kind() == prim::Constant) {
      if (auto c = toIValue(v)) return df_->insertConstant(*c);
    }
    auto it = captured_.find(v);
    if (it != captured_.end()) return it->second;
    Value* in = df_->addInput();
    in->setType(withoutRequiresGrad(v->type()));
    captured_[v] = in;
    capture_order_.push_back(v);
    return in;
  }

  // The formula graph of `n` (null when no gradient flows through it).
  const CompiledFormula* formulaOf(kiln::Node* n) {
    if (!requires_.count(n->output(0))) return nullptr;
    auto op = n->maybeOperator();
    const OpDerivative* derivative = op ? derivativeFor(*op) : nullptr;
    if (!derivative) return nullptr;
    const auto& formulas = derivative->formulas();
    uint64_t needed = 0;
    for (size_t f = 0; f < formulas.size(); ++f) {
      size_t a = formulas[f].argument;
      if (a < n->inputs().size() && requires_.count(n->input(a))) needed |= uint64_t{1} << f;
    }
    return needed ? &derivative->compiled(needed) : nullptr;
  }

  // A temporary df reads (captured by a consumer, or by n's own formula)
  // gets a gradient input of its own, added to what flows into it.
  void addTemporaryVjps(kiln::Node* n) {
    const CompiledFormula* own = n->kind() == prim::ConstantChunk ? nullptr : formulaOf(n);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Value* out = n->output(i);
      if (!requires_.count(out) || real_outputs_.count(out) || !floatTensor(out)) continue;
      bool captured = captured_.count(out) > 0;
      if (own) {
        for (const FormulaInput& in : own->inputs) captured |= in.kind == FormulaInput::Kind::Result && in.index == i;
      }
      if (!captured) continue;
      Value* vjp = df_->addInput();
      vjp->setType(withoutRequiresGrad(out->type()));
      temporary_vjps_[out] = vjp;
      accumulate(out, vjp);
    }
  }

  void differentiateNode(kiln::Node* n) {
    if (n->kind() == prim::Constant) return;
    if (with_temporaries_) addTemporaryVjps(n);
    bool any_grad = false;
    for (Value* out : n->outputs()) any_grad |= grads_.count(out) > 0;
    if (!any_grad) return;
    if (n->kind() == prim::ConstantChunk) {
      if (!requires_.count(n->input(0))) return;
      // The pieces' gradients side by side; a piece without one contributes zeros.
      std::vector<Value*> pieces;
      for (Value* out : n->outputs()) {
        auto g = grads_.find(out);
        pieces.push_back(g != grads_.end() ? g->second : df_->insert(aten::zeros_like, {capture(out)}));
      }
      Value* list = df_->insertNode(df_->createList(TensorType::get(), pieces))->output();
      accumulate(n->input(0), df_->insert(aten::cat, {list, df_->insertConstant(IValue(n->i(attr::dim)))}));
      return;
    }
    if (!requires_.count(n->output(0))) return;  // a result without gradient (a comparison)
    auto op = n->maybeOperator();
    const OpDerivative* derivative = op ? derivativeFor(*op) : nullptr;
    KILN_INTERNAL_ASSERT(derivative, "no derivative for ", n->kind().toQualString(), " in a DifferentiableGraph");
    const auto& formulas = derivative->formulas();
    uint64_t needed = 0;
    for (size_t f = 0; f < formulas.size(); ++f) {
      size_t a = formulas[f].argument;
      if (a < n->inputs().size() && requires_.count(n->input(a))) needed |= uint64_t{1} << f;
    }
    if (!needed) return;
    const CompiledFormula& compiled = derivative->compiled(needed);
    std::vector<Value*> inputs;
    for (const FormulaInput& in : compiled.inputs) {
      switch (in.kind) {
        case FormulaInput::Kind::Grad: inputs.push_back(grads_.at(n->output(0))); break;
        case FormulaInput::Kind::Grads:
          KILN_INTERNAL_ASSERT(false, "a Tensor[] result in a DifferentiableGraph");
          break;
        case FormulaInput::Kind::Argument: inputs.push_back(capture(n->input(in.index))); break;
        case FormulaInput::Kind::Result: inputs.push_back(capture(n->output(in.index))); break;
      }
    }
    std::vector<Value*> outs = df_->insertGraph(*compiled.graph, inputs);
    std::vector<Value*> values;
    if (outs.size() == 1 && outs[0]->type()->kind() == TypeKind::Tuple) {
      kiln::Node* producer = outs[0]->node();
      if (producer->kind() == prim::TupleConstruct) {
        values.assign(producer->inputs().begin(), producer->inputs().end());
      } else {
        kiln::Node* unpack = df_->insertNode(df_->createTupleUnpack(outs[0]));
        values.assign(unpack->outputs().begin(), unpack->outputs().end());
      }
    } else {
      values = outs;
    }
    for (size_t k = 0; k < compiled.outputs.size() && k < values.size(); ++k) {
      Value* input = n->input(formulas[compiled.outputs[k]].argument);
      if (!requires_.count(input) || values[k]->type()->kind() == TypeKind::None) continue;
      Value* g = values[k];
      if (!sameCompleteSizes(input, n->output(0))) {
        // The op may have broadcast the input: its size, taken in f.
        Value* size;
        {
          WithInsertPoint guard(n);
          size = f_->insert(aten::size, {input});
        }
        g = df_->insert(aten::_grad_sum_to_size, {g, capture(size)});
      }
      accumulate(input, g);
    }
  }

  // df's inputs after the vjps: the captured f inputs, then the captured f
  // values, which become extra outputs of f.
  void orderCaptures() {
    std::vector<Value*> ordered;
    for (Value* v : capture_order_) {
      if (v->node() == f_->block()->paramNode()) ordered.push_back(v);
    }
    size_t num_inputs = ordered.size();
    for (Value* v : capture_order_) {
      if (v->node() != f_->block()->paramNode()) ordered.push_back(v);
    }
    std::unordered_set<Value*> placeholders;
    std::vector<int64_t> index(ordered.size());
    for (size_t k = 0; k < ordered.size(); ++k) {
      Value* v = ordered[k];
      placeholders.insert(captured_[v]);
      if (k < num_inputs) {
        auto inputs = f_->inputs();
        index[k] = std::find(inputs.begin(), inputs.end(), v) - inputs.begin();
      } else {
        index[k] = static_cast<int64_t>(f_->registerOutput(v));
      }
    }
    // The temporaries' gradients come right after the outputs'.
    for (size_t k = num_inputs; k < ordered.size(); ++k) {
      auto vjp = temporary_vjps_.find(ordered[k]);
      if (vjp == temporary_vjps_.end()) continue;
      Value* in = df_->addInput();
      in->setType(vjp->second->type());
      vjp->second->replaceAllUsesWith(in);
      placeholders.insert(vjp->second);
      result_.df_input_temporary_vjps.push_back(index[k]);
    }
    for (auto& [v, vjp] : temporary_vjps_) placeholders.insert(vjp);
    for (size_t k = 0; k < ordered.size(); ++k) {
      Value* v = ordered[k];
      Value* in = df_->addInput();
      in->setType(captured_[v]->type());
      captured_[v]->replaceAllUsesWith(in);
      (k < num_inputs ? result_.df_input_captured_inputs : result_.df_input_captured_outputs).push_back(index[k]);
    }
    for (size_t i = df_->inputs().size(); i > 0; --i) {
      if (placeholders.count(df_->inputs()[i - 1])) df_->eraseInput(i - 1);
    }
  }

  bool with_temporaries_;
  std::unordered_set<Value*> real_outputs_;
  std::unordered_map<Value*, Value*> temporary_vjps_;
  Gradient result_;
  Graph* f_;
  Graph* df_;
  std::unordered_set<Value*> requires_;
  std::unordered_map<Value*, Value*> grads_;
  std::unordered_map<Value*, Value*> captured_;
  std::vector<Value*> capture_order_;
};

// --- running a DifferentiableGraph -------------------------------------------------------

// The backward graph df as backward with create_graph runs it: unfused (a
// fused kernel has no derivative, its decomposition does) and with every
// operator recorded, so that df's own history gives second derivatives.
// Built on first use: most plans never need it.
class RecordingBackward {
 public:
  explicit RecordingBackward(std::shared_ptr<Graph> unfused) : unfused_(std::move(unfused)) {}
  std::shared_ptr<const Code> code() {
    std::call_once(built_, [this] {
      code_ = std::make_shared<const Code>(unfused_, "DifferentiableGraph backward (recorded)", nullptr,
                                           /*record_autograd=*/true);
    });
    return code_;
  }

 private:
  std::shared_ptr<Graph> unfused_;
  std::once_flag built_;
  std::shared_ptr<const Code> code_;
};

// Gradient::df_with_temporaries and its temporaries, kept next to df (not
// printed: DifferentiableGraph nodes print no attributes).
const Symbol kRecordingReverseSubgraph = Symbol::attr("RecordingReverseSubgraph");
const Symbol kTemporaryVjps = Symbol::attr("df_input_temporary_vjps");

class DifferentiableGraphBackward final : public Node {
 public:
  // Inputs: the gradients of the real outputs (`num_vjps`), then of the
  // temporaries that only the recorded backward takes.
  DifferentiableGraphBackward(std::shared_ptr<const Code> df, std::shared_ptr<RecordingBackward> recording,
                              uint32_t num_vjps, uint32_t num_temporaries)
      : Node(num_vjps + num_temporaries), df_(std::move(df)), recording_(std::move(recording)), num_vjps_(num_vjps) {}
  std::string name() const override { return "DifferentiableGraphBackward"; }

  TensorList apply(TensorList&& grads) override {
    if (released_) throwFreedGraph();
    // A temporary's gradient comes only from a backward of the recorded
    // one's results (a second derivative): then that df runs again.
    bool recording = isGradEnabled();
    for (size_t i = num_vjps_; i < grads.size(); ++i) recording |= grads[i].defined();
    Stack stack;
    uint32_t count = recording ? numInputs() : num_vjps_;
    for (uint32_t i = 0; i < count; ++i) {
      if (i < grads.size() && grads[i].defined()) {
        stack.emplace_back(grads[i]);
      } else {
        const TensorGeometry& g = inputGeometry()[i];
        stack.emplace_back(zeros(g.sizes, g.dtype));
      }
    }
    for (const SavedValue& v : saved_) {
      stack.push_back(v.is_tensor ? IValue(v.tensor.unpack(*this)) : v.value);
    }
    if (recording) {
      // create_graph (the engine turned grad mode on): df records, as
      // torch's DifferentiableGraphBackward does.
      InterpreterState(recording_->code()).run(stack);
    } else {
      InterpreterState(df_).run(stack);
    }
    TensorList out(nextEdges().size());
    for (size_t k = 0; k < out.size() && k < stack.size(); ++k) {
      if (!stack[k].isTensor() || !nextEdges()[k].valid()) continue;
      Tensor g = stack[k].toTensor();
      const TensorGeometry& geometry = edge_geometry_[k];
      if (g.defined() && g.dtype() != geometry.dtype) g = to(g, geometry.dtype);
      out[k] = g;
    }
    return out;
  }

  void releaseVariables() override {
    saved_.clear();
    released_ = true;
  }

  // What df reads besides the gradients; tensors with their version, so
  // that an in-place change after the forward raises torch's error.
  struct SavedValue {
    IValue value;
    SavedVariable tensor;
    bool is_tensor = false;
  };
  // Inputs keep their history (df's uses of them are differentiable with
  // create_graph); outputs of this node (`output_nr` >= 0) get it back on
  // unpack under grad mode.
  static SavedValue save(const IValue& v, int64_t output_nr = -1) {
    SavedValue s;
    if (v.isTensor() && v.toTensor().defined()) {
      s.tensor = SavedVariable(v.toTensor(), /*is_output=*/output_nr >= 0,
                               output_nr >= 0 ? static_cast<uint32_t>(output_nr) : 0);
      s.is_tensor = true;
    } else {
      s.value = v;
    }
    return s;
  }
  std::vector<SavedValue> saved_;
  std::vector<TensorGeometry> edge_geometry_;

 private:
  std::shared_ptr<const Code> df_;
  std::shared_ptr<RecordingBackward> recording_;
  uint32_t num_vjps_;
  bool released_ = false;
};

IValue detached(const IValue& v) {
  if (v.isTensor() && v.toTensor().defined()) return IValue(detach(v.toTensor()));
  return v;
}

class DifferentiableGraphOp {
 public:
  explicit DifferentiableGraphOp(const kiln::Node& node)
      : f_(std::make_shared<const Code>(node.g(attr::Subgraph), "DifferentiableGraph")),
        df_(std::make_shared<const Code>(node.g(attr::ReverseSubgraph), "DifferentiableGraph backward")),
        recording_(std::make_shared<RecordingBackward>(node.g(kRecordingReverseSubgraph))),
        num_inputs_(node.inputs().size()), f_real_outputs_(static_cast<size_t>(node.i(attr::f_real_outputs))),
        df_input_vjps_(node.is(attr::df_input_vjps)), df_input_temporary_vjps_(node.is(kTemporaryVjps)),
        df_input_captured_inputs_(node.is(attr::df_input_captured_inputs)),
        df_input_captured_outputs_(node.is(attr::df_input_captured_outputs)),
        df_output_vjps_(node.is(attr::df_output_vjps)) {
    node_outputs_ = df_input_vjps_;
    node_outputs_.insert(node_outputs_.end(), df_input_temporary_vjps_.begin(), df_input_temporary_vjps_.end());
    // Which inputs each of those outputs is computed from (a group's outputs
    // from all its inputs): one gets a history only when one of them
    // requires grad at run time, as in torch, where an input typed as
    // maybe requiring grad often does not.
    const Graph& f = *node.g(attr::Subgraph);
    std::unordered_map<const Value*, std::vector<bool>> from;
    size_t n = f.inputs().size();
    for (size_t i = 0; i < n; ++i) {
      from[f.inputs()[i]] = std::vector<bool>(n, false);
      from[f.inputs()[i]][i] = true;
    }
    for (const kiln::Node* m : f.nodes()) {
      std::vector<bool> deps(n, false);
      for (const Value* in : m->inputs()) {
        auto it = from.find(in);
        if (it == from.end()) continue;
        for (size_t i = 0; i < n; ++i) deps[i] = deps[i] || it->second[i];
      }
      for (const Value* out : m->outputs()) from[out] = deps;
    }
    for (int64_t k : node_outputs_) {
      auto it = from.find(f.outputs()[static_cast<size_t>(k)]);
      std::vector<size_t> inputs;
      for (size_t i = 0; it != from.end() && i < n; ++i) {
        if (it->second[i]) inputs.push_back(i);
      }
      output_sources_.push_back(std::move(inputs));
    }
  }

  void operator()(Stack& stack) const {
    size_t base = stack.size() - num_inputs_;
    std::vector<Edge> edges;
    std::vector<TensorGeometry> edge_geometry;
    bool any = false;
    if (isGradEnabled()) {
      for (int64_t i : df_output_vjps_) {
        const IValue& v = stack[base + static_cast<size_t>(i)];
        if (v.isTensor() && requiresGrad(v.toTensor())) {
          const Tensor& t = v.toTensor();
          edges.push_back(gradientEdge(t));
          edge_geometry.push_back({DimVector(t.sizes()), t.dtype()});
          any = true;
        } else {
          edges.emplace_back();
          edge_geometry.emplace_back();
        }
      }
    }
    // Outputs computed from an input that requires grad.
    std::vector<bool> differentiable(node_outputs_.size(), false);
    if (any) {
      for (size_t k = 0; k < node_outputs_.size(); ++k) {
        for (size_t i : output_sources_[k]) {
          const IValue& v = stack[base + i];
          if (v.isTensor() && requiresGrad(v.toTensor())) differentiable[k] = true;
        }
      }
    }
    std::vector<DifferentiableGraphBackward::SavedValue> saved;
    if (any) {
      // With their history: torch saves the op's inputs as they came.
      for (int64_t i : df_input_captured_inputs_) {
        saved.push_back(DifferentiableGraphBackward::save(stack[base + static_cast<size_t>(i)]));
      }
    }
    Stack values;
    values.reserve(num_inputs_);
    for (size_t i = 0; i < num_inputs_; ++i) {
      IValue& v = stack[base + i];
      values.push_back(v.isTensor() && requiresGrad(v.toTensor()) ? detached(v) : std::move(v));
    }
    stack.resize(base);
    InterpreterState(f_).run(values);
    if (any) {
      auto node =
          std::make_shared<DifferentiableGraphBackward>(df_, recording_, static_cast<uint32_t>(df_input_vjps_.size()),
                                                        static_cast<uint32_t>(df_input_temporary_vjps_.size()));
      node->nextEdges() = std::move(edges);
      node->edge_geometry_ = std::move(edge_geometry);
      const std::vector<int64_t>& node_outputs = node_outputs_;
      for (int64_t i : df_input_captured_outputs_) {
        // An output that gets this node as grad_fn is saved as its output
        // (f may return one value at several places: compare tensors).
        const IValue& v = values[static_cast<size_t>(i)];
        int64_t output_nr = -1;
        if (v.isTensor() && v.toTensor().defined() &&
            (isFloatingType(v.toTensor().dtype()) || isComplexType(v.toTensor().dtype()))) {
          for (size_t k = 0; k < node_outputs.size() && output_nr < 0; ++k) {
            const IValue& o = values[static_cast<size_t>(node_outputs[k])];
            if (differentiable[k] && o.isTensor() && o.toTensor().impl() == v.toTensor().impl()) {
              output_nr = static_cast<int64_t>(k);
            }
          }
        }
        saved.push_back(output_nr >= 0 ? DifferentiableGraphBackward::save(v, output_nr)
                                       : DifferentiableGraphBackward::save(detached(v)));
      }
      node->saved_ = std::move(saved);
      for (size_t k = 0; k < node_outputs.size(); ++k) {
        const IValue& v = values[static_cast<size_t>(node_outputs[k])];
        const Tensor t = v.isTensor() ? v.toTensor() : Tensor();
        node->inputGeometry().push_back(t.defined() ? TensorGeometry{DimVector(t.sizes()), t.dtype()}
                                                    : TensorGeometry{});
        if (differentiable[k] && t.defined() && (isFloatingType(t.dtype()) || isComplexType(t.dtype()))) {
          setGradFn(t, node, static_cast<uint32_t>(k));
        }
      }
    }
    for (size_t k = 0; k < f_real_outputs_; ++k) stack.push_back(std::move(values[k]));
  }

 private:
  std::shared_ptr<const Code> f_;
  std::shared_ptr<const Code> df_;
  std::shared_ptr<RecordingBackward> recording_;
  size_t num_inputs_;
  size_t f_real_outputs_;
  std::vector<int64_t> df_input_vjps_, df_input_temporary_vjps_, df_input_captured_inputs_, df_input_captured_outputs_,
      df_output_vjps_;
  // df_input_vjps_ then df_input_temporary_vjps_: the node's outputs, and the
  // f inputs each is computed from.
  std::vector<int64_t> node_outputs_;
  std::vector<std::vector<size_t>> output_sources_;
};

KILN_REGISTER_SCRIPT_OPS(nodeOp("prim::DifferentiableGraph(...) -> ...",
                                [](const kiln::Node& node) -> Operation {
                                  KILN_CHECK(
                                      node.hasAttribute(attr::Subgraph) && node.hasAttribute(attr::ReverseSubgraph),
                                      "prim::DifferentiableGraph needs Subgraph and ReverseSubgraph");
                                  auto op = std::make_shared<DifferentiableGraphOp>(node);
                                  return [op](Stack& stack) { (*op)(stack); };
                                }),
                         stackOp("aten::_grad_sum_to_size(Tensor(a) self, int[]? size) -> Tensor(a)", [](Stack& stack) {
                           IValue size = std::move(stack.back());
                           stack.pop_back();
                           if (size.isNone()) return;
                           Tensor self = stack.back().toTensor();
                           stack.back() = IValue(sumToSize(self, size.toIntVector()));
                         }).derivative({"self: grad if size is None else grad.expand(self.size())"}));

// `kiln opt -p differentiate`: each DifferentiableGraph's subgraph becomes
// its f (what the op runs forward); `differentiate_backward` puts df there
// instead, to be read.
const bool kPassesRegistered = [] {
  auto each = [](const std::shared_ptr<Graph>& graph, bool backward) {
    std::vector<kiln::Node*> nodes;
    std::vector<Block*> blocks{graph->block()};
    while (!blocks.empty()) {
      Block* b = blocks.back();
      blocks.pop_back();
      for (kiln::Node* n : b->nodes()) {
        if (n->kind() == prim::DifferentiableGraph) nodes.push_back(n);
        for (Block* inner : n->blocks()) blocks.push_back(inner);
      }
    }
    for (kiln::Node* n : nodes) {
      Gradient gradient = differentiate(n->g(attr::Subgraph));
      packGradient(gradient, n);
      if (backward) n->g_(attr::Subgraph, gradient.df);
    }
  };
  registerPass("differentiate", [each](const std::shared_ptr<Graph>& g) { each(g, false); });
  registerPass("differentiate_backward", [each](const std::shared_ptr<Graph>& g) { each(g, true); });
  return true;
}();

}  // namespace

Gradient differentiate(const std::shared_ptr<Graph>& graph) {
  Gradient gradient = Differentiator(graph, false).run();
  // The same walk again, taking the temporaries' gradients too: f comes
  // out the same.
  Gradient with_temporaries = Differentiator(graph, true).run();
  KILN_INTERNAL_ASSERT(with_temporaries.f->outputs().size() == gradient.f->outputs().size() &&
                           with_temporaries.df_input_captured_outputs == gradient.df_input_captured_outputs,
                       "differentiate: the two walks disagree");
  gradient.df_with_temporaries = with_temporaries.df;
  gradient.df_input_temporary_vjps = std::move(with_temporaries.df_input_temporary_vjps);
  return gradient;
}

void packGradient(const Gradient& gradient, kiln::Node* node) {
  node->g_(attr::Subgraph, gradient.f);
  node->g_(attr::ReverseSubgraph, gradient.df);
  node->i_(attr::f_real_outputs, static_cast<int64_t>(gradient.f_real_outputs));
  node->is_(attr::df_input_vjps, gradient.df_input_vjps);
  node->is_(attr::df_input_captured_inputs, gradient.df_input_captured_inputs);
  node->is_(attr::df_input_captured_outputs, gradient.df_input_captured_outputs);
  node->is_(attr::df_output_vjps, gradient.df_output_vjps);
  if (gradient.df_with_temporaries) {
    node->g_(kRecordingReverseSubgraph, gradient.df_with_temporaries);
    node->is_(kTemporaryVjps, gradient.df_input_temporary_vjps);
  }
}

void createAndDifferentiateSubgraphs(const std::shared_ptr<Graph>& graph,
                                     void (*optimize_inside)(const std::shared_ptr<Graph>&)) {
  for (kiln::Node* node : createAutodiffSubgraphs(graph)) {
    Gradient gradient = differentiate(node->g(attr::Subgraph));
    for (const auto& g : {gradient.f, gradient.df, gradient.df_with_temporaries}) {
      clearRequiresGrad(g->block());
      constantPropagation(g);
      eliminateCommonSubexpression(g);
      constantPooling(g);
      if (optimize_inside && g != gradient.df_with_temporaries) optimize_inside(g);
    }
    packGradient(gradient, node);
  }
}

}  // namespace kiln::autograd
