#include "kiln/passes/analysis/node_effects.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kiln/tensor/copy.h"

namespace kiln {

bool isMutableType(const Type& type) {
  switch (type.kind()) {
    case TypeKind::Tensor:
    case TypeKind::List:
    case TypeKind::Dict:
    case TypeKind::Class:
    case TypeKind::Any: return true;
    case TypeKind::Future:
    case TypeKind::RRef:
    case TypeKind::Tuple:
    case TypeKind::Optional:
    case TypeKind::Union: {
      auto contained = type.containedTypes();
      return std::any_of(contained.begin(), contained.end(), [](const TypePtr& t) { return isMutableType(*t); });
    }
    default: return false;
  }
}

bool isMutableType(const Value* v) { return isMutableType(*v->type()); }

bool hasSideEffects(const Node* n) {
  static const std::unordered_set<Symbol> kinds = {
      prim::PythonOp,
      Symbol::prim("IgnoredPythonOp"),
      prim::Print,
      prim::RaiseException,
      prim::SetAttr,
      aten::warn,
      Symbol::aten("save"),
      Symbol::aten("manual_seed"),
      prim::AddStatValue,
      prim::TimePoint,
      prim::CallFunction,
      prim::CallMethod,
      prim::BailoutTemplate,
      prim::BailOut,
      prim::rpc_async,
      Symbol::prim("rpc_sync"),
      Symbol::prim("rpc_remote"),
      aten::wait,
      prim::fork,
      prim::awaitable,
      prim::Enter,
      prim::Exit,
      Symbol::aten("set_grad_enabled"),
      Symbol::aten("is_grad_enabled"),
      // Autograd in scripts: backward writes .grad, which prim::grad reads.
      // (An aten::grad whose result is unused goes, as in 1.13.)
      Symbol::aten("backward"),
      Symbol::prim("grad"),
  };
  return kinds.count(n->kind()) > 0;
}

bool isNondeterministic(const Node* n) {
  static const std::unordered_set<Symbol> random_kinds = [] {
    std::unordered_set<Symbol> s;
    for (const char* name :
         {"dropout",        "dropout_",       "feature_dropout",  "alpha_dropout", "feature_alpha_dropout",
          "_fused_dropout", "native_dropout", "_standard_gamma",  "bernoulli",     "bernoulli_",
          "multinomial",    "normal",         "normal_",          "poisson",       "binomial",
          "rrelu",          "rrelu_",         "rrelu_with_noise", "rand",          "rand_like",
          "randn",          "randn_like",     "randint",          "randint_like",  "randperm",
          "uniform_",       "exponential_",   "geometric_",       "cauchy_",       "log_normal_",
          "random_"}) {
      s.insert(Symbol::aten(name));
    }
    return s;
  }();
  const FunctionSchema* schema = n->maybeSchema();
  if (n->kind() == aten::dropout && schema) {
    // Dropout outside training returns its input unchanged.
    auto i = schema->argumentIndex("train");
    auto train = i && *i < n->inputs().size() ? toIValue(n->input(*i)) : std::nullopt;
    if (train && train->isBool() && !train->toBool()) return false;
  }
  if (random_kinds.count(n->kind())) return true;
  if (!schema) return false;
  return std::any_of(schema->arguments().begin(), schema->arguments().end(), [](const Argument& a) {
    const Type* t = a.type.get();
    if (auto opt = t->cast<OptionalType>()) t = opt->getElementType().get();
    return t->kind() == TypeKind::Generator;
  });
}

namespace {

// Same dtype, shape and bytes: -0.0 and 0.0 differ, a NaN equals itself.
bool sameTensor(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.isSame(b)) return true;
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes() || a.requiresGrad() != b.requiresGrad()) return false;
  Tensor x = contiguous(a);
  Tensor y = contiguous(b);
  return std::memcmp(x.rawData(), y.rawData(), x.nbytes()) == 0;
}

bool sameIValue(const IValue& a, const IValue& b) {
  if (a.tag() != b.tag()) return false;
  auto all_same = [](const std::vector<IValue>& x, const std::vector<IValue>& y) {
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), sameIValue);
  };
  switch (a.tag()) {
    case IValue::Tag::Double:
      return a.toDouble() == b.toDouble() && std::signbit(a.toDouble()) == std::signbit(b.toDouble());
    case IValue::Tag::Tensor: return sameTensor(a.toTensor(), b.toTensor());
    case IValue::Tag::List: return all_same(a.toListRef().elements, b.toListRef().elements);
    case IValue::Tag::Tuple: return all_same(a.toTupleRef().elements, b.toTupleRef().elements);
    case IValue::Tag::Dict: {
      const DictObj& x = a.toDictRef();
      const DictObj& y = b.toDictRef();
      return x.size() == y.size() && std::all_of(x.items().begin(), x.items().end(), [&](const auto& item) {
               const IValue* other = y.find(item.first);
               return other && sameIValue(item.second, *other);
             });
    }
    default: return a == b;
  }
}

}  // namespace

bool sameConstant(const Value* a, const Value* b) {
  if (a->node()->kind() != prim::Constant || b->node()->kind() != prim::Constant) return false;
  if (*a->type() != *b->type()) return false;
  // Function constants name their callee.
  if (a->type()->kind() == TypeKind::Function) {
    return a->node()->hasAttribute(attr::name) && b->node()->hasAttribute(attr::name) &&
           a->node()->s(attr::name) == b->node()->s(attr::name);
  }
  auto x = toIValue(a);
  auto y = toIValue(b);
  return x && y && sameIValue(*x, *y);
}

}  // namespace kiln
