// The operator of prim::FusionGroup nodes (docs/fuser.md):
// runs a group's subgraph as one generated kernel.
//
// When the node's operation is created, the subgraph is split into the
// parts the kernel does not compute:
//   - prim::ConstantChunk of a group input: each piece becomes a kernel input,
//     a view of the input made at run time;
//   - prim::FusedConcat at a group output: its inputs become kernel outputs,
//     written straight into slices of the concatenated result;
// and what remains, the *kernel graph* (kernel_spec.h), is specialized per
// call to the input dtypes, ranks and layouts seen. Each specialization is
// generated and compiled once (kernel_compiler.h caches it on disk too).
//
// Whatever the kernel cannot do (a dtype the generator rejects, a failed
// compilation, inputs that do not broadcast, an output smaller than the
// loop) runs the subgraph node by node instead, with the ops the interpreter
// would have used, so results and errors are those of the unfused graph.
// Why a group fell back is counted in fusionStats() and logged once per
// group and reason (KILN_JIT_LOG_LEVEL=fusion_group_op).
#include <algorithm>
#include <deque>
#include <mutex>
#include <numeric>
#include <unordered_set>

#include "kiln/core/op_registration.h"
#include "kiln/fuser/codegen.h"
#include "kiln/fuser/fuser.h"
#include "kiln/fuser/kernel_compiler.h"
#include "kiln/ir/graph.h"
#include "kiln/ops/pointwise_spec.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/loop_dims.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/shape.h"
#include "kiln/util/jit_log.h"

namespace kiln::fuser {
namespace {

// Runs a graph of registered ops node by node (no control flow): the
// fallback, and the operation of groups whose kernel graph is unusable.
class SubgraphRunner {
 public:
  explicit SubgraphRunner(const std::shared_ptr<Graph>& graph) : graph_(graph) {
    std::unordered_map<const Value*, size_t> slot;
    for (const Value* in : graph->inputs()) slot.emplace(in, num_slots_++);
    for (const Node* n : graph->nodes()) {
      KILN_CHECK(n->blocks().empty(), "a fusion group cannot hold ", n->kind().toQualString(), ", which has blocks");
      Step step;
      if (n->kind() == prim::Constant) {
        auto value = toIValue(n->output());
        KILN_CHECK(value, "a constant in a fusion group has no value");
        step.constant = std::move(*value);
      } else {
        step.op = findOperation(*n);
        KILN_CHECK(step.op, "no operator for ", n->kind().toQualString(), " in a fusion group");
        for (const Value* in : n->inputs()) step.inputs.push_back(slot.at(in));
      }
      for (const Value* out : n->outputs()) {
        step.outputs.push_back(num_slots_);
        slot.emplace(out, num_slots_++);
      }
      steps_.push_back(std::move(step));
    }
    for (const Value* out : graph->outputs()) outputs_.push_back(slot.at(out));
    num_inputs_ = graph->inputs().size();
  }

  // Pops the graph's inputs from `stack` and pushes its outputs.
  void run(Stack& stack) const {
    std::vector<IValue> slots(num_slots_);
    size_t base = stack.size() - num_inputs_;
    for (size_t i = 0; i < num_inputs_; ++i) slots[i] = std::move(stack[base + i]);
    stack.resize(base);
    Stack frame;
    for (const Step& step : steps_) {
      if (!step.op) {
        slots[step.outputs[0]] = step.constant;
        continue;
      }
      for (size_t in : step.inputs) frame.push_back(slots[in]);
      step.op(frame);
      KILN_CHECK(frame.size() == step.outputs.size(), "an op in a fusion group returned ", frame.size(),
                 " values, expected ", step.outputs.size());
      for (size_t i = 0; i < step.outputs.size(); ++i) slots[step.outputs[i]] = std::move(frame[i]);
      frame.clear();
    }
    for (size_t out : outputs_) stack.push_back(slots[out]);
  }

 private:
  struct Step {
    Operation op;  // empty for a constant
    IValue constant;
    std::vector<size_t> inputs;
    std::vector<size_t> outputs;
  };
  std::shared_ptr<Graph> graph_;  // keeps the nodes the operations were made from alive
  std::vector<Step> steps_;
  std::vector<size_t> outputs_;
  size_t num_slots_ = 0;
  size_t num_inputs_ = 0;
};

// Where a kernel input comes from.
struct KernelInputSource {
  size_t group_input;
  // A piece of prim::ConstantChunk[chunks, dim](group input), or the input
  // itself when chunks == 0.
  int64_t chunks = 0;
  int64_t dim = 0;
  int64_t piece = 0;
};

// What a group output is made of: one kernel output, or several
// concatenated along `dim` (prim::FusedConcat).
struct GroupOutput {
  std::vector<size_t> kernel_outputs;
  std::optional<int64_t> concat_dim;
};

bool isScalarType(const TypePtr& type) {
  return type->kind() == TypeKind::Int || type->kind() == TypeKind::Float || type->kind() == TypeKind::Bool;
}

// The subgraph split into chunks, the kernel graph and concats.
struct KernelPlan {
  std::shared_ptr<Graph> kernel_graph;
  std::vector<KernelInputSource> inputs;  // one per kernel graph input
  std::vector<bool> input_is_scalar;
  std::vector<GroupOutput> outputs;  // one per group output
  // For each kernel output, the kernel inputs it reads (transitively): its
  // shape is their broadcast shape.
  std::vector<std::vector<size_t>> output_inputs;
};

// Splits `subgraph`; returns nullopt when it holds something the kernel path
// does not model (the group then always runs node by node).
std::optional<KernelPlan> planKernel(const Graph& subgraph, std::string* why) {
  KernelPlan plan;
  plan.kernel_graph = std::make_shared<Graph>();
  Graph& kg = *plan.kernel_graph;
  std::unordered_map<const Value*, Value*> env;
  std::unordered_map<const Value*, size_t> input_index;  // subgraph value -> kernel input

  auto addKernelInput = [&](const Value* from, KernelInputSource source) {
    Value* in = kg.addInput()->copyMetadata(const_cast<Value*>(from));
    env[from] = in;
    input_index[from] = plan.inputs.size();
    plan.inputs.push_back(source);
    plan.input_is_scalar.push_back(isScalarType(from->type()));
  };

  const auto& group_inputs = subgraph.inputs();
  for (size_t i = 0; i < group_inputs.size(); ++i) {
    const Value* in = group_inputs[i];
    bool direct_use = false;
    for (const Use& use : in->uses()) direct_use |= use.user->kind() != prim::ConstantChunk;
    if (!direct_use) continue;
    if (!isScalarType(in->type()) && !in->type()->cast<TensorType>()) {
      *why = "group input of type " + in->type()->str();
      return std::nullopt;
    }
    addKernelInput(in, {i});
  }

  for (const Node* n : subgraph.nodes()) {
    if (n->kind() == prim::ConstantChunk) {
      const Value* chunked = n->input(0);
      auto it = std::find(group_inputs.begin(), group_inputs.end(), chunked);
      if (it == group_inputs.end()) {
        *why = "prim::ConstantChunk of a value computed in the group";
        return std::nullopt;
      }
      size_t group_input = static_cast<size_t>(it - group_inputs.begin());
      for (size_t p = 0; p < n->outputs().size(); ++p) {
        if (!n->output(p)->hasUses()) continue;
        addKernelInput(n->output(p), {group_input, n->i(attr::chunks), n->i(attr::dim), static_cast<int64_t>(p)});
      }
      continue;
    }
    if (n->kind() == prim::FusedConcat) continue;  // at the outputs, handled below
    if (!n->blocks().empty()) {
      *why = n->kind().toQualString() + std::string(" has blocks");
      return std::nullopt;
    }
    Node* copy = kg.createClone(n, [&](const Value* v) { return env.at(v); });
    kg.insertNode(copy);
    for (size_t o = 0; o < n->outputs().size(); ++o) env[n->output(o)] = copy->output(o);
  }

  auto addKernelOutput = [&](const Value* v) -> size_t {
    auto it = env.find(v);
    KILN_CHECK(it != env.end(), "a fusion group output is not computed in the group");
    if (v->node()->kind() == prim::Param && !isScalarType(v->type())) {
      // A kernel output must be computed: an input passed through is copied.
      return SIZE_MAX;
    }
    return kg.registerOutput(it->second);
  };
  for (const Value* out : subgraph.outputs()) {
    GroupOutput group_output;
    const Node* producer = out->node();
    std::vector<const Value*> parts;
    if (producer->kind() == prim::FusedConcat) {
      group_output.concat_dim = producer->i(attr::dim);
      for (const Value* part : producer->inputs()) parts.push_back(part);
    } else {
      parts.push_back(out);
    }
    for (const Value* part : parts) {
      if (isScalarType(part->type()) || !part->type()->cast<TensorType>()) {
        *why = "a group output of type " + part->type()->str();
        return std::nullopt;
      }
      size_t index = addKernelOutput(part);
      if (index == SIZE_MAX) {
        *why = "a group input is also a group output";
        return std::nullopt;
      }
      group_output.kernel_outputs.push_back(index);
    }
    plan.outputs.push_back(std::move(group_output));
  }

  // Which kernel inputs each kernel output reads.
  std::unordered_map<const Value*, std::vector<bool>> reads;
  size_t num_inputs = kg.inputs().size();
  for (size_t i = 0; i < num_inputs; ++i) {
    std::vector<bool> only(num_inputs, false);
    only[i] = true;
    reads.emplace(kg.inputs()[i], std::move(only));
  }
  for (const Node* n : kg.nodes()) {
    std::vector<bool> acc(num_inputs, false);
    const PointwiseSpec* op = pointwiseSpecOf(n);
    for (size_t a = 0; a < n->inputs().size(); ++a) {
      // type_as(x, other) has x's shape: `other` gives only its dtype.
      if (op && pointwise::argRole(n->maybeSchema()->arguments()[a], *op) == pointwise::ArgRole::DtypeSource) {
        continue;
      }
      auto it = reads.find(n->input(a));
      if (it == reads.end()) continue;
      for (size_t i = 0; i < num_inputs; ++i) acc[i] = acc[i] || it->second[i];
    }
    for (const Value* out : n->outputs()) reads.emplace(out, acc);
  }
  for (const Value* out : kg.outputs()) {
    std::vector<size_t> used;
    const auto& acc = reads.at(out);
    for (size_t i = 0; i < num_inputs; ++i)
      if (acc[i] && !plan.input_is_scalar[i]) used.push_back(i);
    plan.output_inputs.push_back(std::move(used));
  }
  return plan;
}

// The key of one kernel specialization.
struct SpecKey {
  std::vector<KernelInput> inputs;
  int ndim = 1;
  std::vector<OperandLayout> layouts;

  bool operator==(const SpecKey& o) const {
    if (ndim != o.ndim || layouts != o.layouts || inputs.size() != o.inputs.size()) return false;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].kind != o.inputs[i].kind || inputs[i].dtype != o.inputs[i].dtype) return false;
    return true;
  }
};

struct TypesEntry {
  std::vector<KernelInput> inputs;
  std::optional<std::vector<ScalarType>> outputs;
  std::string why;
};

struct KernelEntry {
  SpecKey key;
  FusedKernelFn fn = nullptr;
  std::string why;  // why there is no kernel
};

bool sameInputs(const std::vector<KernelInput>& a, const std::vector<KernelInput>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].dtype != b[i].dtype) return false;
  return true;
}

// Strides for a new tensor of `sizes` laid out like `like` (same order of
// dims in memory), as PyTorch's pointwise ops give outputs the memory
// format of their first input. Contiguous when `like` is.
DimVector stridesLike(IntArrayRef sizes, const Tensor* like) {
  if (!like || like->isContiguous()) return contiguousStrides(sizes);
  int64_t rank = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> order(static_cast<size_t>(rank));
  std::iota(order.begin(), order.end(), 0);
  // Outermost first: larger strides first; ties keep the logical order.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return like->stride(a) > like->stride(b); });
  DimVector strides(sizes.size(), 1);
  int64_t next = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[static_cast<size_t>(*it)] = next;
    next *= std::max<int64_t>(sizes[static_cast<size_t>(*it)], 1);
  }
  return strides;
}

// Whether `t` covers its elements exactly once with no gaps (any dim order).
bool isDense(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1) dims.emplace_back(t.stride(d), t.size(d));
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (auto [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

class FusionGroupOp {
 public:
  explicit FusionGroupOp(const Node& node)
      : subgraph_(node.g(attr::Subgraph)), runner_(subgraph_), num_inputs_(node.inputs().size()) {
    std::string why;
    plan_ = planKernel(*subgraph_, &why);
    if (!plan_) no_kernel_reason_ = why;
    std::ostringstream name;
    name << "prim::FusionGroup with " << node.inputs().size() << " inputs and " << node.outputs().size() << " outputs";
    name_ = name.str();
  }

  void operator()(Stack& stack) {
    if (!plan_) return fallBack(stack, no_kernel_reason_);
    std::string why;
    if (!tryKernel(stack, &why)) fallBack(stack, why);
  }

 private:
  void fallBack(Stack& stack, const std::string& why) {
    recordFallback(why);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (logged_reasons_.insert(why).second) GRAPH_UPDATE(name_, " runs node by node: ", why, "\n", *subgraph_);
    }
    runner_.run(stack);
  }

  // One call's kernel operands, filled in by the phases of tryKernel.
  struct KernelCall {
    std::vector<Tensor> tensors;  // per kernel input (undefined for scalars); chunk pieces are views
    std::vector<KernelScalar> scalars;
    std::vector<KernelInput> kinds;         // per kernel input
    DimVector loop_shape;                   // every tensor input broadcast together
    const Tensor* layout_source = nullptr;  // the input whose layout the outputs copy
    std::vector<Tensor> kernel_outputs;     // per kernel output
    std::vector<Tensor> group_outputs;      // per group output (a concatenation holds several kernel outputs)
  };

  // The loop the kernel runs, its dims ordered and merged (outermost first).
  struct LoopLayout {
    std::vector<const Tensor*> operands;  // outputs first
    DimVector sizes;
    std::vector<int64_t> strides;  // element strides, operand-major, sizes.size() per operand
    std::vector<OperandLayout> layouts;
  };

  // Runs the kernel; false (stack untouched) when the call must fall back.
  bool tryKernel(Stack& stack, std::string* why) {
    size_t base = stack.size() - num_inputs_;
    KernelCall call;
    if (!gatherInputs(stack.data() + base, call, why)) return false;
    const TypesEntry& types = typesFor(call.kinds);
    if (!types.outputs) {
      *why = types.why;
      return false;
    }
    if (!computeLoopShape(call, why) || !allocateOutputs(*types.outputs, call, why)) return false;
    LoopLayout loop = layoutLoop(call);
    SpecKey key{std::move(call.kinds), static_cast<int>(loop.sizes.size()), std::move(loop.layouts)};
    FusedKernelFn fn = kernelFor(key, *types.outputs, why);
    if (!fn) return false;
    runKernel(fn, loop, call.scalars);
    recordKernelRun();
    stack.resize(base);
    for (Tensor& t : call.group_outputs) stack.emplace_back(std::move(t));
    return true;
  }

  // The kernel's inputs from the group's arguments `args`: tensors (chunk
  // pieces as views) and scalars.
  bool gatherInputs(const IValue* args, KernelCall& call, std::string* why) const {
    const KernelPlan& plan = *plan_;
    size_t n_in = plan.inputs.size();
    call.tensors.resize(n_in);
    call.kinds.resize(n_in);
    for (size_t i = 0; i < n_in; ++i) {
      const KernelInputSource& source = plan.inputs[i];
      const IValue& arg = args[source.group_input];
      if (plan.input_is_scalar[i]) {
        KernelScalar s{};
        if (arg.isDouble()) {
          s.f = arg.toDouble();
          call.kinds[i] = {InputKind::Scalar, ScalarType::Double};
        } else if (arg.isInt()) {
          s.i = arg.toInt();
          call.kinds[i] = {InputKind::Scalar, ScalarType::Long};
        } else if (arg.isBool()) {
          s.i = arg.toBool() ? 1 : 0;
          call.kinds[i] = {InputKind::Scalar, ScalarType::Bool};
        } else {
          *why = "a scalar input that is not a number";
          return false;
        }
        call.scalars.push_back(s);
        continue;
      }
      if (!arg.isTensor()) {
        *why = "a tensor input that is not a tensor";
        return false;
      }
      Tensor t = arg.toTensor();
      if (t.isWrappedNumber()) {
        *why = "a wrapped-number tensor input";
        return false;
      }
      if (source.chunks > 0) {
        if (t.dim() == 0) {
          *why = "chunk of a 0-dim tensor";
          return false;
        }
        std::vector<Tensor> pieces = chunk(t, source.chunks, source.dim);
        if (static_cast<size_t>(source.piece) >= pieces.size()) {
          *why = "chunk gave fewer pieces than the group reads";
          return false;
        }
        t = pieces[static_cast<size_t>(source.piece)];
      }
      call.kinds[i] = {t.dim() == 0 ? InputKind::ZeroDimTensor : InputKind::Tensor, t.dtype()};
      call.tensors[i] = std::move(t);
    }
    return true;
  }

  // The loop shape, every tensor input broadcast together, and the input
  // the outputs are laid out like (the first dense one of the loop's shape).
  bool computeLoopShape(KernelCall& call, std::string* why) const {
    const KernelPlan& plan = *plan_;
    size_t n_in = plan.inputs.size();
    for (size_t i = 0; i < n_in; ++i) {
      if (plan.input_is_scalar[i]) continue;
      IntArrayRef s = call.tensors[i].sizes();
      if (!std::equal(s.begin(), s.end(), call.loop_shape.begin(), call.loop_shape.end())) {
        try {
          call.loop_shape = broadcastShapes(call.loop_shape, s);
        } catch (const Error&) {
          *why = "inputs that do not broadcast";
          return false;
        }
      }
    }
    for (size_t i = 0; i < n_in; ++i) {
      if (plan.input_is_scalar[i] || call.tensors[i].sizes() != IntArrayRef(call.loop_shape)) continue;
      if (isDense(call.tensors[i])) call.layout_source = &call.tensors[i];
      break;
    }
    // Every output must cover the whole loop: one computed from a smaller
    // broadcast of the inputs would be a different shape.
    for (const auto& reads : plan.output_inputs) {
      DimVector shape;
      for (size_t i : reads) shape = broadcastShapes(shape, call.tensors[i].sizes());
      if (shape.size() != call.loop_shape.size() || !std::equal(shape.begin(), shape.end(), call.loop_shape.begin())) {
        *why = "an output smaller than the loop";
        return false;
      }
    }
    return true;
  }

  // Outputs: fresh tensors, or slices of a concatenated result.
  bool allocateOutputs(const std::vector<ScalarType>& out_dtypes, KernelCall& call, std::string* why) const {
    const KernelPlan& plan = *plan_;
    const DimVector& loop_shape = call.loop_shape;
    call.kernel_outputs.resize(plan.kernel_graph->outputs().size());
    call.group_outputs.reserve(plan.outputs.size());
    DimVector out_strides = stridesLike(loop_shape, call.layout_source);
    for (const GroupOutput& out : plan.outputs) {
      if (!out.concat_dim) {
        size_t k = out.kernel_outputs[0];
        call.kernel_outputs[k] = emptyStrided(loop_shape, out_strides, out_dtypes[k]);
        call.group_outputs.push_back(call.kernel_outputs[k]);
        continue;
      }
      ScalarType dtype = out_dtypes[out.kernel_outputs[0]];
      for (size_t k : out.kernel_outputs) {
        if (out_dtypes[k] != dtype) {
          *why = "concatenated outputs of different dtypes";
          return false;
        }
      }
      if (loop_shape.empty()) {
        *why = "concatenation of 0-dim values";
        return false;
      }
      int64_t dim = wrapDim(*out.concat_dim, static_cast<int64_t>(loop_shape.size()));
      DimVector cat_shape = loop_shape;
      int64_t part = loop_shape[static_cast<size_t>(dim)];
      cat_shape[static_cast<size_t>(dim)] = part * static_cast<int64_t>(out.kernel_outputs.size());
      Tensor whole = empty(cat_shape, dtype);
      for (size_t j = 0; j < out.kernel_outputs.size(); ++j)
        call.kernel_outputs[out.kernel_outputs[j]] = narrow(whole, dim, static_cast<int64_t>(j) * part, part);
      call.group_outputs.push_back(std::move(whole));
    }
    return true;
  }

  // The operands (outputs first) and the loop over them, its dims ordered
  // and merged as TensorIter orders and merges its own (loop_dims.h), so
  // that an output laid out like a transposed input is still walked in
  // memory order, and most loops become one flat dim.
  LoopLayout layoutLoop(const KernelCall& call) const {
    LoopLayout loop;
    for (const Tensor& t : call.kernel_outputs) loop.operands.push_back(&t);
    for (size_t i = 0; i < call.tensors.size(); ++i)
      if (!plan_->input_is_scalar[i]) loop.operands.push_back(&call.tensors[i]);
    const int n_ops = static_cast<int>(loop.operands.size());
    const size_t rank = call.loop_shape.size();
    // Element strides over the loop's dims; broadcasting aligns trailing dims.
    std::vector<DimVector> dim_strides(static_cast<size_t>(n_ops), DimVector(rank, 0));
    for (int k = 0; k < n_ops; ++k) {
      const Tensor& t = *loop.operands[static_cast<size_t>(k)];
      size_t offset = rank - static_cast<size_t>(t.dim());
      for (size_t d = 0; d < static_cast<size_t>(t.dim()); ++d) {
        int64_t size = t.size(static_cast<int64_t>(d));
        dim_strides[static_cast<size_t>(k)][offset + d] = size == 1 ? 0 : t.stride(static_cast<int64_t>(d));
      }
    }
    // In loop order (innermost first) to order and merge, then back to
    // the kernels' order (outermost first).
    const DimVector perm = loopDimOrder(call.loop_shape, dim_strides.data(), n_ops);
    DimVector shape(rank);
    std::vector<DimVector> strides(static_cast<size_t>(n_ops), DimVector(rank));
    for (size_t i = 0; i < rank; ++i) {
      auto dim = static_cast<size_t>(perm[i]);
      shape[i] = call.loop_shape[dim];
      for (size_t k = 0; k < strides.size(); ++k) strides[k][i] = dim_strides[k][dim];
    }
    coalesceLoopDims(shape, strides.data(), n_ops);
    const size_t ndim = shape.size();
    loop.sizes.resize(ndim);
    loop.strides.resize(static_cast<size_t>(n_ops) * ndim);
    for (size_t d = 0; d < ndim; ++d) {
      loop.sizes[d] = shape[ndim - 1 - d];
      for (size_t k = 0; k < strides.size(); ++k) loop.strides[k * ndim + d] = strides[k][ndim - 1 - d];
    }
    for (size_t k = 0; k < strides.size(); ++k)
      loop.layouts.push_back(layoutOf(loop.sizes, loop.strides, k, static_cast<int>(ndim)));
    return loop;
  }

  // Runs `fn` over the loop, split across threads above the grain size.
  static void runKernel(FusedKernelFn fn, const LoopLayout& loop, const std::vector<KernelScalar>& scalars) {
    int64_t total = 1;
    for (int64_t s : loop.sizes) total *= s;
    if (total <= 0) return;
    std::vector<char*> data;
    data.reserve(loop.operands.size());
    for (const Tensor* t : loop.operands) data.push_back(static_cast<char*>(t->rawData()));
    const KernelScalar* scalar_data = scalars.empty() ? nullptr : scalars.data();
    parallelFor(0, total, kGrainSize, [&](int64_t begin, int64_t end) {
      fn(begin, end, data.data(), loop.sizes.data(), loop.strides.data(), scalar_data);
    });
  }

  static OperandLayout layoutOf(const DimVector& sizes, const std::vector<int64_t>& strides, size_t k, int ndim) {
    const int64_t* s = &strides[k * static_cast<size_t>(ndim)];
    bool all_zero = true;
    bool contiguous = true;
    int64_t expected = 1;
    for (int d = ndim - 1; d >= 0; --d) {
      all_zero = all_zero && s[d] == 0;
      contiguous = contiguous && s[d] == expected;
      expected *= sizes[static_cast<size_t>(d)];
    }
    if (all_zero) return OperandLayout::Broadcast;
    return contiguous ? OperandLayout::Contiguous : OperandLayout::Strided;
  }

  const TypesEntry& typesFor(const std::vector<KernelInput>& kinds) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const TypesEntry& e : types_)
      if (sameInputs(e.inputs, kinds)) return e;
    TypesEntry entry{kinds, std::nullopt, {}};
    entry.outputs = inferKernelTypes(*plan_->kernel_graph, kinds, &entry.why);
    types_.push_back(std::move(entry));
    return types_.back();
  }

  FusedKernelFn kernelFor(const SpecKey& key, const std::vector<ScalarType>& out_dtypes, std::string* why) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const KernelEntry& e : kernels_) {
      if (e.key == key) {
        if (!e.fn) *why = e.why;
        return e.fn;
      }
    }
    KernelSpec spec{plan_->kernel_graph, key.inputs, out_dtypes, key.ndim, key.layouts};
    std::string source = generateKernelSource(spec);
    CompiledKernel compiled =
        source.empty() ? CompiledKernel{nullptr, "no kernel source was generated"} : compileKernel(source);
    KernelEntry entry{key, compiled.fn, {}};
    if (!compiled.fn) {
      entry.why = "kernel compilation failed: " + compiled.error;
      *why = entry.why;
    }
    kernels_.push_back(std::move(entry));
    return compiled.fn;
  }

  std::shared_ptr<Graph> subgraph_;
  SubgraphRunner runner_;
  size_t num_inputs_;
  std::optional<KernelPlan> plan_;
  std::string no_kernel_reason_;
  std::string name_;
  std::mutex mutex_;
  // A group sees few specializations, so they are searched linearly; a
  // deque keeps the references typesFor returns valid as entries are added.
  std::deque<TypesEntry> types_;
  std::vector<KernelEntry> kernels_;
  std::unordered_set<std::string> logged_reasons_;
};

KILN_REGISTER_SCRIPT_OPS(nodeOp("prim::FusionGroup(...) -> ...",
                                [](const Node& node) -> Operation {
                                  KILN_CHECK(node.hasAttribute(attr::Subgraph),
                                             "prim::FusionGroup needs a Subgraph attribute");
                                  auto op = std::make_shared<FusionGroupOp>(node);
                                  return [op](Stack& stack) { (*op)(stack); };
                                }),
                         nodeOp("prim::FusedConcat(...) -> ...", [](const Node& node) -> Operation {
                           int64_t dim = node.i(attr::dim);
                           size_t count = node.inputs().size();
                           return [dim, count](Stack& stack) {
                             std::vector<Tensor> parts;
                             parts.reserve(count);
                             for (size_t i = stack.size() - count; i < stack.size(); ++i)
                               parts.push_back(stack[i].toTensor());
                             stack.resize(stack.size() - count);
                             stack.emplace_back(cat(parts, dim));
                           };
                         }), );

}  // namespace
}  // namespace kiln::fuser
