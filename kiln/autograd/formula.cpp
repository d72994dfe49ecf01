#include "kiln/autograd/formula.h"

#include <cctype>
#include <set>
#include <shared_mutex>
#include <unordered_map>

#include "kiln/autograd/formula_prelude.h"
#include "kiln/core/derivative_spec.h"
#include "kiln/core/dispatch_hook.h"
#include "kiln/core/op_description.h"
#include "kiln/core/op_registration.h"
#include "kiln/frontend/ir_emitter.h"
#include "kiln/frontend/parser.h"
#include "kiln/ir/graph.h"
#include "kiln/passes/cleanup.h"
#include "kiln/passes/constant_propagation.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/inliner.h"
#include "kiln/runtime/code.h"
#include "kiln/runtime/function.h"

namespace kiln::autograd {

namespace {

// Helpers the formulas call, as derivatives.yaml's formulas call the C++
// functions of FunctionsManual.cpp; written in TorchScript, so that they
// inline into the backward graphs.
const char* kPrelude = R"(
def _sum_backward(grad: Tensor, sizes: List[int], dims: Optional[List[int]], keepdim: bool) -> Tensor:
    n = len(sizes)
    if keepdim or n == 0 or dims is None:
        return grad.expand(sizes)
    if len(dims) == 0:
        return grad.expand(sizes)
    shape: List[int] = []
    for i in range(n):
        reduced = False
        for d in dims:
            if d == i or d + n == i:
                reduced = True
        if reduced:
            shape.append(1)
        else:
            shape.append(sizes[i])
    return grad.reshape(shape).expand(sizes)

def _reduced_count(sizes: List[int], dims: Optional[List[int]]) -> int:
    n = len(sizes)
    count = 1
    for i in range(n):
        reduced = dims is None
        if dims is not None:
            if len(dims) == 0:
                reduced = True
            for d in dims:
                if d == i or d + n == i:
                    reduced = True
        if reduced:
            count *= sizes[i]
    return count

def _select_backward(grad: Tensor, self: Tensor, dims: int, keepdim: bool, indices: Tensor) -> Tensor:
    if not keepdim and self.dim() > 0:
        grad = grad.unsqueeze(dims)
        indices = indices.unsqueeze(dims)
    return torch.zeros_like(self).scatter(dims, indices, grad)

def _evenly_distribute(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    mask = self == result
    return mask * (grad / mask.sum())

def _unsqueeze_to(grad: Tensor, dim: List[int], sizes: List[int]) -> Tensor:
    n = len(sizes)
    for i in range(n):
        for d in dim:
            if (d == i or d + n == i) and sizes[i] == 1:
                grad = grad.unsqueeze(i)
    return grad

def _permute_backward(grad: Tensor, dims: List[int]) -> Tensor:
    n = len(dims)
    inverse = [0 for _ in range(n)]
    for i in range(n):
        inverse[dims[i] % n] = i
    return grad.permute(inverse)

def _cat_backward(grad: Tensor, tensors: List[Tensor], dim: int) -> List[Tensor]:
    sizes: List[int] = []
    for t in tensors:
        sizes.append(t.size(dim))
    return grad.split_with_sizes(sizes, dim)

def _gelu_backward(grad: Tensor, self: Tensor, approximate: str) -> Tensor:
    if approximate == "tanh":
        x_sq = self * self
        inner = 0.7978845608028654 * (self + 0.044715 * x_sq * self)
        t = inner.tanh()
        left = 0.5 * self
        right = 1 + t
        right_derivative = left * (1 - t * t) * 0.7978845608028654 * (1 + 3 * 0.044715 * x_sq)
        return grad * (0.5 * right + right_derivative)
    cdf = 0.5 * (1 + (self * 0.7071067811865476).erf())
    pdf = (-0.5 * self * self).exp() * 0.3989422804014327
    return grad * (cdf + self * pdf)

def _digamma(x: Tensor) -> Tensor:
    # Reflection below 1/2, six recurrence steps up, then the asymptotic series (error < 1e-11).
    reflect = x < 0.5
    y = torch.where(reflect, 1 - x, x)
    result = torch.zeros_like(y)
    for _ in range(6):
        result = result - 1 / y
        y = y + 1
    inv2 = 1 / (y * y)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132)))))
    result = result + y.log() - 0.5 / y - series
    return torch.where(reflect, result - 3.141592653589793 / (3.141592653589793 * x).tan(), result)

def _pow_scalar_backward_exponent(grad: Tensor, self: number, exponent: Tensor, result: Tensor) -> Tensor:
    base = float(self)
    if base == 0.0:
        return grad * torch.where(exponent >= 0, torch.zeros_like(result), result * -math.inf)
    return grad * result * math.log(base)

def _clamp_backward(grad: Tensor, self: Tensor, min: Optional[Tensor], max: Optional[Tensor]) -> Tensor:
    if min is not None and max is not None:
        return torch.where((self >= min) & (self <= max), grad, 0.)
    if min is not None:
        return torch.where(self >= min, grad, 0.)
    if max is not None:
        return torch.where(self <= max, grad, 0.)
    return grad

def _clamp_backward_min(grad: Tensor, self: Tensor, min: Optional[Tensor], max: Optional[Tensor]) -> Tensor:
    if min is None:
        return torch.zeros_like(grad)
    if max is not None:
        return torch.where((self < min) & (min < max), grad, 0.)
    return torch.where(self < min, grad, 0.)

def _clamp_backward_max(grad: Tensor, self: Tensor, min: Optional[Tensor], max: Optional[Tensor]) -> Tensor:
    if max is None:
        return torch.zeros_like(grad)
    if min is not None:
        return torch.where((self > max) | (max < min), grad, 0.)
    return torch.where(self > max, grad, 0.)

def _matmul_backward_self(grad: Tensor, self: Tensor, other: Tensor) -> Tensor:
    if self.dim() == 1 and other.dim() == 1:
        return grad * other
    if self.dim() == 1:
        return torch.matmul(grad.unsqueeze(-2), other.transpose(-1, -2)).squeeze(-2)
    if other.dim() == 1:
        return grad.unsqueeze(-1) * other
    return torch.matmul(grad, other.transpose(-1, -2))

def _matmul_backward_other(grad: Tensor, self: Tensor, other: Tensor) -> Tensor:
    if self.dim() == 1 and other.dim() == 1:
        return grad * self
    if other.dim() == 1:
        return torch.matmul(self.transpose(-1, -2), grad.unsqueeze(-1)).squeeze(-1)
    if self.dim() == 1:
        return torch.matmul(self.unsqueeze(-1), grad.unsqueeze(-2))
    return torch.matmul(self.transpose(-1, -2), grad)

)";

// "log_softmax" -> "LogSoftmax"; as torch, a letter after a digit is
// upper case: "log1p" -> "Log1P", "max_pool2d" -> "MaxPool2D".
std::string camelCase(const std::string& name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = std::isdigit(static_cast<unsigned char>(c)) != 0;
  }
  return out;
}

// The identifiers an expression names (not attributes: `x.cos` names x only).
std::set<std::string> namesIn(const std::string& expr) {
  std::set<std::string> names;
  size_t i = 0;
  while (i < expr.size()) {
    char c = expr[i];
    if (c == '"' || c == '\'') {
      size_t end = expr.find(c, i + 1);
      i = end == std::string::npos ? expr.size() : end + 1;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i;
      while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '_')) ++i;
      bool attribute = start > 0 && expr[start - 1] == '.';
      if (!attribute) names.insert(expr.substr(start, i - start));
      continue;
    }
    ++i;
  }
  return names;
}

// Renames `self` (a method's receiver in TorchScript) in an expression.
std::string renameSelf(const std::string& expr) {
  std::string out;
  size_t i = 0;
  while (i < expr.size()) {
    if (std::isalpha(static_cast<unsigned char>(expr[i])) || expr[i] == '_') {
      size_t start = i;
      while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '_')) ++i;
      std::string word = expr.substr(start, i - start);
      bool attribute = start > 0 && expr[start - 1] == '.';
      out += (!attribute && word == "self") ? "self_" : word;
      continue;
    }
    out += expr[i++];
  }
  return out;
}

// An operator call made through runOperator (autograd records it when grad
// mode is on); attr::name holds the operator's qualified name and overload.
const Symbol kRecordedCall = Symbol::fromQualString("autograd::recorded_call");

OperatorPtr operatorNamed(const std::string& qualified) {
  size_t dot = qualified.find('.', qualified.find("::"));
  std::string overload = dot == std::string::npos ? "" : qualified.substr(dot + 1);
  return findOperator(Symbol::fromQualString(qualified.substr(0, dot)), overload);
}

KILN_REGISTER_SCRIPT_OPS(nodeOp("autograd::recorded_call", [](const Node& node) -> Operation {
  OperatorPtr op = operatorNamed(node.s(Symbol::attr("name")));
  KILN_INTERNAL_ASSERT(op, "no operator ", node.s(Symbol::attr("name")));
  return [op](Stack& stack) { runOperator(*op, stack); };
}));

bool takesTensor(const Node& n) {
  for (const Value* v : n.inputs()) {
    TypeKind kind = v->type()->kind();
    if (kind == TypeKind::Tensor || kind == TypeKind::List || kind == TypeKind::Optional) return true;
  }
  return false;
}

// Replaces the tensor operator calls of `block` by recorded calls.
void routeThroughDispatch(Graph& graph, Block* block) {
  std::vector<Node*> nodes;
  for (Node* n : block->nodes()) nodes.push_back(n);
  for (Node* n : nodes) {
    for (Block* b : n->blocks()) routeThroughDispatch(graph, b);
    std::shared_ptr<const Operator> op = n->maybeOperator();
    if (!op || op->isNodeDependent() || !takesTensor(*n)) continue;
    Node* call = graph.create(kRecordedCall, n->inputs(), n->outputs().size());
    const std::string& overload = op->schema().overloadName();
    call->s_(Symbol::attr("name"), op->schema().name() + (overload.empty() ? "" : "." + overload));
    call->insertBefore(n);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      call->output(i)->copyMetadata(n->output(i));
      n->output(i)->replaceAllUsesWith(call->output(i));
    }
    n->destroy();
  }
}

// Whether every use of a tensor input reads only its geometry.
bool readsOnlyGeometry(const Value& input) {
  if (input.type()->kind() != TypeKind::Tensor || input.uses().empty()) return false;
  static const std::set<std::string> kGeometry = {"aten::size",     "aten::dim",       "aten::numel", "prim::dtype",
                                                  "aten::sym_size", "aten::sym_numel", "prim::device"};
  for (const Use& use : input.uses()) {
    if (!kGeometry.count(use.user->kind().toQualString())) return false;
  }
  return true;
}

// "input, weight, bias" -> {"input", "weight", "bias"}.
std::vector<std::string> argumentNames(const std::string& names) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= names.size()) {
    size_t comma = names.find(',', start);
    size_t end = comma == std::string::npos ? names.size() : comma;
    size_t first = names.find_first_not_of(' ', start);
    size_t last = names.find_last_not_of(' ', end == 0 ? 0 : end - 1);
    out.push_back(first < end && last != std::string::npos && last >= first ? names.substr(first, last - first + 1)
                                                                            : std::string());
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string resultName(const FunctionSchema& schema, size_t i) {
  const auto& returns = schema.returns();
  if (!returns[i].name.empty()) return returns[i].name;
  return returns.size() == 1 ? "result" : "result" + std::to_string(i);
}

}  // namespace

OpDerivative::OpDerivative(const Operator& op, const DerivativeSpec& spec, const Operator& formula_owner)
    : op_(op), formula_owner_(formula_owner) {
  const FunctionSchema& schema = op.schema();
  const std::string& owner_name = formula_owner.schema().name();
  std::string base = owner_name.substr(owner_name.find("::") + 2);
  if (!base.empty() && base.back() == '_' && !(base.size() > 1 && base[base.size() - 2] == '_')) base.pop_back();
  node_name_ = camelCase(base) + "Backward0";
  size_t groups = 0;
  for (const auto& [names, expr] : spec.formulas) {
    if (names == "grad_fn") {
      node_name_ = expr;
      continue;
    }
    std::vector<std::string> split = argumentNames(names);
    size_t group = split.size() > 1 ? groups++ : Formula::kNoGroup;
    for (size_t e = 0; e < split.size(); ++e) {
      const std::string& name = split[e];
      auto index = formula_owner.schema().argumentIndex(name);
      KILN_INTERNAL_ASSERT(index && *index < schema.arguments().size(), "derivative of ", formula_owner.schema(),
                           " names no argument '", name, "' of ", schema);
      bool is_list = schema.arguments()[*index].type->kind() == TypeKind::List;
      formulas_.push_back({*index, is_list, expr, group, e});
    }
  }
  KILN_INTERNAL_ASSERT(formulas_.size() <= 64, "too many derivative formulas for ", schema);
  const auto& returns = schema.returns();
  for (size_t i = 0; i < returns.size(); ++i) {
    TypeKind kind = returns[i].type->kind();
    bool tensor = kind == TypeKind::Tensor || (kind == TypeKind::List);
    bool excluded = false;
    for (const std::string& name : spec.non_differentiable_outputs) excluded |= name == resultName(schema, i);
    differentiable_results_.push_back(tensor && !excluded);
  }
}

const CompiledFormula& OpDerivative::compiled(uint64_t needed) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [mask, formula] : cache_) {
    if (mask == needed) return *formula;
  }
  cache_.emplace_back(needed, compile(needed));
  return *cache_.back().second;
}

std::shared_ptr<CompiledFormula> OpDerivative::compile(uint64_t needed) const {
  const FunctionSchema& schema = op_.schema();
  auto result = std::make_shared<CompiledFormula>();
  std::set<std::string> used;
  std::string statements;  // one per formula group: its tuple of gradients
  std::string body;
  std::set<size_t> emitted;
  for (size_t f = 0; f < formulas_.size(); ++f) {
    if (!(needed & (uint64_t{1} << f))) continue;
    result->outputs.push_back(f);
    const Formula& formula = formulas_[f];
    for (const std::string& name : namesIn(formula.expression)) used.insert(name);
    if (formula.group == Formula::kNoGroup) {
      body += renameSelf(formula.expression) + ", ";
      continue;
    }
    std::string tuple = "_grads_of_group" + std::to_string(formula.group);
    if (emitted.insert(formula.group).second) {
      // The group's grad_input_mask: which of its inputs' gradients are needed.
      std::string mask;
      for (size_t g = 0; g < formulas_.size(); ++g) {
        if (formulas_[g].group != formula.group) continue;
        if (!mask.empty()) mask += ", ";
        mask += (needed & (uint64_t{1} << g)) ? "True" : "False";
      }
      statements +=
          "    grad_input_mask = [" + mask + "]\n    " + tuple + " = " + renameSelf(formula.expression) + "\n";
    }
    body += tuple + "[" + std::to_string(formula.element) + "], ";
  }
  std::string params;
  auto addParam = [&](const std::string& name, const std::string& type, FormulaInput input) {
    if (!params.empty()) params += ", ";
    params += (name == "self" ? std::string("self_") : name) + ": " + type;
    result->inputs.push_back(input);
  };
  if (used.count("grad")) addParam("grad", "Tensor", {FormulaInput::Kind::Grad, 0});
  if (used.count("grads")) addParam("grads", "List[Tensor]", {FormulaInput::Kind::Grads, 0});
  // The formulas' names for the arguments, with this operator's types.
  const auto& names = formula_owner_.schema().arguments();
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size() && i < names.size(); ++i) {
    // In a formula `grad` is the output's gradient, as in derivatives.yaml,
    // even for an operator with an argument of that name (a *_backward op).
    if (names[i].name == "grad" || names[i].name == "grads") continue;
    if (used.count(names[i].name))
      addParam(names[i].name, args[i].type->annotationStr(), {FormulaInput::Kind::Argument, i});
  }
  const auto& returns = schema.returns();
  for (size_t i = 0; i < returns.size(); ++i) {
    std::string name = resultName(schema, i);
    if (used.count(name)) addParam(name, returns[i].type->annotationStr(), {FormulaInput::Kind::Result, i});
  }
  // The linear algebra helpers (all named _linalg_*) only for the formulas that call them.
  bool linalg = false;
  for (const std::string& name : used) linalg |= name.rfind("_linalg_", 0) == 0;
  std::string source = std::string(kPrelude) + formulaPrelude() + (linalg ? linalgFormulaPrelude() : "") +
                       "def backward(" + params + "):\n" + statements + "    return (" + body + ")\n";

  auto unit = std::make_shared<CompilationUnit>();
  CompilationTarget target;
  CompilationUnit* raw = unit.get();
  target.find = [raw](const std::string& name) -> std::shared_ptr<Function> { return raw->findFunctionShared(name); };
  target.define = [raw](const std::string& name, std::shared_ptr<Graph> graph,
                        FunctionSchema fn_schema) -> std::shared_ptr<Function> {
    runCleanupPasses(graph);
    raw->createFunction(name, std::move(graph), std::move(fn_schema), /*check_graph=*/false);
    return raw->findFunctionShared(name);
  };
  target.define_class = [](const ClassTypePtr&) { KILN_ERROR("derivative formulas define no classes"); };
  try {
    Parser parser(std::make_shared<const Source>(source, "<derivative of " + schema.name() + ">", 1));
    defineFunctions(parser.parseFile(), nullptr, target);
  } catch (const Error& e) {
    KILN_INTERNAL_ASSERT(false, "the derivative formulas of ", schema, " do not compile: ", e.what());
  }
  std::shared_ptr<Graph> graph = unit->getFunction("backward").graph()->copy();
  inlineCalls(graph);
  constantPropagation(graph);
  eliminateDeadCode(graph);
  result->graph = graph;
  for (size_t i = 0; i < result->inputs.size(); ++i)
    result->geometry_only.push_back(readsOnlyGeometry(*graph->inputs()[i]));
  result->code = std::make_shared<const Code>(graph, "backward of " + schema.name());
  std::shared_ptr<Graph> recording = graph->copy();
  routeThroughDispatch(*recording, recording->block());
  result->recording_code = std::make_shared<const Code>(recording, "backward of " + schema.name());
  return result;
}

namespace {

struct DerivativeCache {
  std::shared_mutex mutex;
  std::unordered_map<const Operator*, std::unique_ptr<OpDerivative>> by_op;
  std::unordered_map<const Operator*, bool> missing;
};

DerivativeCache& derivativeCache() {
  static auto* cache = new DerivativeCache();
  return *cache;
}

// The operator whose derivative declaration `op` uses: its own; for an alias (multiply)
// those of the operator it names; for `name_` those of `name` with the same
// overload.
const Operator* declarationOwner(const Operator& op) {
  if (op.description().derivative) return &op;
  const std::string& name = op.schema().name();
  Symbol target = op.description().alias_of;
  if (target == Symbol() && name.size() > 2 && name.back() == '_' && name[name.size() - 2] != '_') {
    target = Symbol::fromQualString(name.substr(0, name.size() - 1));
  }
  if (target == Symbol()) return nullptr;
  OperatorPtr owner = findOperator(target, op.schema().overloadName());
  if (!owner) return nullptr;
  // registered operators live as long as the registry
  return owner.get() == &op ? nullptr : declarationOwner(*owner);
}

// The owner of `op`'s formulas; none for an operator declared not differentiable.
const Operator* formulaOwner(const Operator& op) {
  const Operator* owner = declarationOwner(op);
  return owner && owner->description().derivative->not_differentiable.empty() ? owner : nullptr;
}

}  // namespace

const OpDerivative* derivativeFor(const Operator& op) {
  DerivativeCache& cache = derivativeCache();
  {
    std::shared_lock lock(cache.mutex);
    auto it = cache.by_op.find(&op);
    if (it != cache.by_op.end()) return it->second.get();
    if (cache.missing.count(&op)) return nullptr;
  }
  std::unique_lock lock(cache.mutex);
  const Operator* owner = formulaOwner(op);
  if (!owner) {
    cache.missing[&op] = true;
    return nullptr;
  }
  auto made = std::make_unique<OpDerivative>(op, *owner->description().derivative, *owner);
  const OpDerivative* raw = made.get();
  cache.by_op[&op] = std::move(made);
  return raw;
}

std::string notDifferentiableReason(const Operator& op) {
  const Operator* owner = declarationOwner(op);
  return owner ? owner->description().derivative->not_differentiable : std::string();
}

}  // namespace kiln::autograd
