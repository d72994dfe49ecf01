// Per-operator shape and dtype formulas for the shape analysis, by category.
// Each formula sees the node's arguments by schema name and returns what it
// can say of every output; it never guesses: a fact it cannot derive stays
// unknown. Dtypes follow kiln's kernels (which follow PyTorch 1.13): type
// promotion through the same resultType the TensorIterator uses.
#include "kiln/ops/shape_rules.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <unordered_set>

#include "kiln/core/operator.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/type_promotion.h"

namespace kiln::shapes {

// --- what is known of values -----------------------------------------------

const ValueFacts::Facts* ValueFacts::find(const Value* v) const {
  auto it = facts_.find(v);
  return it == facts_.end() ? nullptr : &it->second;
}

std::optional<IValue> ValueFacts::known(const Value* v) const {
  if (v->node()->kind() == prim::Constant) return toIValue(v);
  const Facts* f = find(v);
  return f ? f->known : std::nullopt;
}

std::optional<DimList> ValueFacts::intList(const Value* v) const {
  if (auto value = known(v); value && value->isIntList()) {
    DimList out;
    for (int64_t i : value->toIntVector()) out.push_back(i);
    return out;
  }
  const Facts* f = find(v);
  return f ? f->int_list : std::nullopt;
}

const ListFacts* ValueFacts::tensorList(const Value* v) const {
  const Facts* f = find(v);
  return f && f->tensor_list ? &*f->tensor_list : nullptr;
}

Wrapped ValueFacts::wrapped(const Value* v) const {
  const Facts* f = find(v);
  return f ? f->wrapped : Wrapped::No;
}

bool isValidDtype(int64_t code) {
  switch (code) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
    case 11:
    case 15: return true;
    default: return false;
  }
}

// --- arguments ----------------------------------------------------------------

std::optional<size_t> Args::index(std::string_view name) const {
  auto i = schema_.argumentIndex(name);
  if (!i || *i >= node_->inputs().size()) return std::nullopt;
  return i;
}

const Value* Args::value(std::string_view name) const {
  auto i = index(name);
  return i ? node_->input(*i) : nullptr;
}

const TensorType* Args::tensor(std::string_view name) const {
  const Value* v = value(name);
  return v ? v->type()->cast<TensorType>() : nullptr;
}

std::optional<IValue> Args::known(std::string_view name) const {
  const Value* v = value(name);
  return v ? facts_.known(v) : std::nullopt;
}

std::optional<int64_t> Args::knownInt(std::string_view name) const {
  auto v = known(name);
  if (!v || !v->isInt()) return std::nullopt;
  return v->toInt();
}

std::optional<bool> Args::knownBool(std::string_view name) const {
  auto v = known(name);
  if (!v || !v->isBool()) return std::nullopt;
  return v->toBool();
}

bool Args::isNone(std::string_view name) const {
  const Value* v = value(name);
  if (!v) return true;
  if (v->type()->kind() == TypeKind::None) return true;
  auto k = facts_.known(v);
  return k && k->isNone();
}

std::optional<ScalarType> Args::dtypeArg(std::string_view name) const {
  if (isNone(name)) return ScalarType::Undefined;
  auto i = knownInt(name);
  if (!i || !isValidDtype(*i)) return std::nullopt;
  return static_cast<ScalarType>(*i);
}

std::optional<DimList> Args::intList(std::string_view name) const {
  const Value* v = value(name);
  return v ? facts_.intList(v) : std::nullopt;
}

const ListFacts* Args::tensorList(std::string_view name) const {
  const Value* v = value(name);
  return v ? facts_.tensorList(v) : nullptr;
}

// --- type promotion -------------------------------------------------------------

std::optional<ScalarType> promoteOperands(const std::vector<Operand>& operands) {
  // Each unknown (a Python number of unknown kind, rank 0 or not, wrapped or
  // not) doubles the cases; all of them must agree.
  struct Choice {
    std::vector<ScalarType> dtypes;
    std::vector<bool> zero_dims;
    std::vector<bool> wrapped;
  };
  std::vector<Choice> choices;
  size_t cases = 1;
  for (const Operand& op : operands) {
    Choice c;
    if (op.dtype) {
      c.dtypes = {*op.dtype};
    } else if (op.wrapped == Wrapped::Yes) {
      c.dtypes = {ScalarType::Long, ScalarType::Double};
    } else {
      return std::nullopt;
    }
    c.zero_dims = op.zero_dim ? std::vector<bool>{*op.zero_dim} : std::vector<bool>{false, true};
    c.wrapped =
        op.wrapped == Wrapped::Maybe ? std::vector<bool>{false, true} : std::vector<bool>{op.wrapped == Wrapped::Yes};
    cases *= c.dtypes.size() * c.zero_dims.size() * c.wrapped.size();
    if (cases > 64) return std::nullopt;
    choices.push_back(std::move(c));
  }
  std::optional<ScalarType> result;
  std::vector<PromotionOperand> promoted(choices.size());
  for (size_t k = 0; k < cases; ++k) {
    size_t rest = k;
    for (size_t i = 0; i < choices.size(); ++i) {
      const Choice& c = choices[i];
      ScalarType dtype = c.dtypes[rest % c.dtypes.size()];
      rest /= c.dtypes.size();
      bool zero_dim = c.zero_dims[rest % c.zero_dims.size()];
      rest /= c.zero_dims.size();
      bool wrapped = c.wrapped[rest % c.wrapped.size()];
      rest /= c.wrapped.size();
      // Only a 0-dim tensor can be a wrapped number.
      promoted[i] = {dtype, !zero_dim ? PromotionTier::Dimensioned
                            : wrapped ? PromotionTier::WrappedNumber
                                      : PromotionTier::ZeroDim};
    }
    ScalarType t = resultType(ArrayRef<PromotionOperand>(promoted.data(), promoted.size()));
    if (result && *result != t) return std::nullopt;
    result = t;
  }
  return result;
}

namespace {

using Out = std::vector<OutputFacts>;

// --- building results ------------------------------------------------------------

}  // namespace

OutputFacts tensorOut(std::optional<ScalarType> dtype, VaryingShape sizes) {
  OutputFacts o;
  o.kind = OutputFacts::Kind::Tensor;
  o.tensor.dtype = dtype;
  o.tensor.sizes = std::move(sizes);
  return o;
}

OutputFacts contiguousOut(std::optional<ScalarType> dtype, VaryingShape sizes) {
  OutputFacts o = tensorOut(dtype, std::move(sizes));
  o.tensor.contiguous = true;
  return o;
}

namespace {

// A fresh result laid out like its inputs.
OutputFacts freshOut(std::optional<ScalarType> dtype, VaryingShape sizes) {
  OutputFacts o = tensorOut(dtype, std::move(sizes));
  o.tensor.contiguous_like_inputs = true;
  return o;
}

OutputFacts listOut(TensorFacts each, std::optional<std::vector<TensorFacts>> elements = std::nullopt) {
  OutputFacts o;
  o.kind = OutputFacts::Kind::TensorList;
  o.tensor = std::move(each);
  o.elements = std::move(elements);
  return o;
}

// --- shapes --------------------------------------------------------------------------

std::optional<ScalarType> dtypeOf(const TensorType* t) { return t ? t->scalarType() : std::nullopt; }
std::optional<size_t> rankOf(const TensorType* t) { return t ? t->dim() : std::nullopt; }
VaryingShape sizesOf(const TensorType* t) { return t ? t->sizes() : VaryingShape(); }

// Dims as known, when the rank is.
std::optional<DimList> dimsOf(const TensorType* t) {
  if (!t || !t->sizes().dims()) return std::nullopt;
  return *t->sizes().dims();
}

// `dim` wrapped into [0, rank) (a 0-dim tensor takes 0 and -1); nullopt
// when out of range (the op raises).
std::optional<size_t> wrapDim(int64_t dim, size_t rank) {
  int64_t r = std::max<int64_t>(static_cast<int64_t>(rank), 1);
  if (dim < -r || dim >= r) return std::nullopt;
  return static_cast<size_t>(dim < 0 ? dim + r : dim);
}

std::optional<int64_t> product(const DimList& dims) {
  int64_t p = 1;
  for (const auto& d : dims) {
    if (!d) return std::nullopt;
    p *= *d;
  }
  return p;
}

std::optional<int64_t> numelOf(const TensorType* t) {
  auto dims = dimsOf(t);
  return dims ? product(*dims) : std::nullopt;
}

// Broadcasting: a known size other than 1 decides its dim (the other sizes
// must be 1 or equal, or the op raises).
std::optional<DimList> broadcastDims(const std::vector<std::optional<DimList>>& inputs) {
  size_t rank = 0;
  for (const auto& in : inputs) {
    if (!in) return std::nullopt;
    rank = std::max(rank, in->size());
  }
  DimList out(rank);
  for (size_t i = 0; i < rank; ++i) {
    bool all_one = true;
    for (const auto& in : inputs) {
      size_t r = in->size();
      if (i + r < rank) continue;  // a leading dim this input lacks: 1
      const auto& d = (*in)[i + r - rank];
      if (d && *d != 1) {
        out[i] = d;
        break;
      }
      if (!d) all_one = false;
    }
    if (!out[i] && all_one) out[i] = 1;
  }
  return out;
}

VaryingShape broadcast(const std::vector<const TensorType*>& inputs) {
  std::vector<std::optional<DimList>> dims;
  for (const TensorType* t : inputs) dims.push_back(dimsOf(t));
  auto out = broadcastDims(dims);
  return out ? VaryingShape(std::move(*out)) : VaryingShape();
}

// Sizes after a reduction over `dims` (count known, values perhaps not),
// over every dim (`all`), or over dims nothing is known of (nullopt).
VaryingShape reduceSizes(const TensorType* self, bool all, const std::optional<DimList>& dims,
                         std::optional<bool> keepdim) {
  if (all && keepdim == false) return VaryingShape(0);
  auto in = dimsOf(self);
  if (!in) return VaryingShape();
  size_t rank = in->size();
  if (rank == 0) return VaryingShape(0);
  if (!keepdim) return VaryingShape();
  if (all) return VaryingShape::complete(std::vector<int64_t>(rank, 1));
  if (!dims) return *keepdim ? VaryingShape(rank) : VaryingShape();
  std::vector<bool> reduced(rank, false);
  bool all_known = true;
  for (const auto& d : *dims) {
    if (!d) {
      all_known = false;
      continue;
    }
    auto w = wrapDim(*d, rank);
    if (!w) return VaryingShape();
    reduced[*w] = true;
  }
  DimList out;
  for (size_t i = 0; i < rank; ++i) {
    if (*keepdim) {
      out.push_back(reduced[i] ? std::optional<int64_t>(1) : all_known ? (*in)[i] : std::nullopt);
    } else if (!reduced[i]) {
      out.push_back(all_known ? (*in)[i] : std::nullopt);
    }
  }
  if (*keepdim) return VaryingShape(std::move(out));
  if (dims->size() > rank) return VaryingShape();
  size_t out_rank = rank - dims->size();
  if (!all_known) return VaryingShape(out_rank);
  if (out.size() != out_rank) return VaryingShape();  // a repeated dim raises
  return VaryingShape(std::move(out));
}

// Sizes given as an int list (`view`, `reshape`, `new_zeros`): one -1 is
// inferred from the element count when everything else is known.
std::optional<DimList> sizesFromList(const std::optional<DimList>& list, std::optional<int64_t> numel) {
  if (!list) return std::nullopt;
  DimList out = *list;
  std::optional<size_t> infer;
  int64_t known_product = 1;
  bool all_known = true;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i]) {
      all_known = false;
    } else if (*out[i] == -1) {
      if (infer) return std::nullopt;  // two -1: raises
      infer = i;
    } else if (*out[i] < 0) {
      return std::nullopt;
    } else {
      known_product *= *out[i];
    }
  }
  if (infer) {
    out[*infer] = std::nullopt;
    if (all_known && numel && known_product != 0 && *numel % known_product == 0) out[*infer] = *numel / known_product;
  }
  return out;
}

// --- dtype rules ----------------------------------------------------------------------

std::optional<ScalarType> toFloat(std::optional<ScalarType> t) {
  if (!t) return std::nullopt;
  return isFloatingType(*t) || isComplexType(*t) ? *t : defaultFloatType();
}

// Integral and bool inputs of sum/prod/cumsum accumulate in int64.
std::optional<ScalarType> upcastIntegral(std::optional<ScalarType> t) {
  if (!t) return std::nullopt;
  return isIntegralType(*t, true) ? ScalarType::Long : *t;
}

// A `ScalarType? dtype` argument, else `otherwise`.
std::optional<ScalarType> dtypeOr(const Args& a, std::optional<ScalarType> otherwise, std::string_view name = "dtype") {
  auto d = a.dtypeArg(name);
  if (!d) return std::nullopt;
  return *d == ScalarType::Undefined ? otherwise : *d;
}

// The dtype a Python number argument has as a wrapped number.
std::optional<ScalarType> numberDtype(const Value* v, const ValueFacts& facts) {
  if (auto k = facts.known(v)) {
    if (k->isInt()) return ScalarType::Long;
    if (k->isDouble()) return ScalarType::Double;
    if (k->isBool()) return ScalarType::Bool;
  }
  switch (v->type()->kind()) {
    case TypeKind::Int: return ScalarType::Long;
    case TypeKind::Float: return ScalarType::Double;
    case TypeKind::Bool: return ScalarType::Bool;
    default: return std::nullopt;
  }
}

// PyTorch's result_type over the named tensor and number arguments (absent
// or None ones skipped).
std::optional<ScalarType> promote(const Args& a, std::initializer_list<std::string_view> names) {
  std::vector<Operand> operands;
  for (std::string_view name : names) {
    const Value* v = a.value(name);
    if (!v || a.isNone(name)) continue;
    if (auto t = v->type()->cast<TensorType>()) {
      operands.push_back(
          {t->scalarType(), t->dim() ? std::optional<bool>(*t->dim() == 0) : std::nullopt, a.facts().wrapped(v)});
    } else if (v->type()->kind() == TypeKind::Optional) {
      return std::nullopt;  // None or not: unknown
    } else {
      operands.push_back({numberDtype(v, a.facts()), true, Wrapped::Yes});
    }
  }
  if (operands.empty()) return std::nullopt;
  return promoteOperands(operands);
}

std::vector<const TensorType*> tensorsOf(const Args& a, std::initializer_list<std::string_view> names) {
  std::vector<const TensorType*> out;
  for (std::string_view name : names) {
    if (a.isNone(name)) continue;
    const Value* v = a.value(name);
    if (auto t = v->type()->cast<TensorType>()) {
      out.push_back(t);
    } else if (auto opt = v->type()->cast<OptionalType>(); opt && opt->elementType()->kind() == TypeKind::Tensor) {
      out.push_back(nullptr);  // None or a tensor: unknown
    }
  }
  return out;
}

// --- pointwise ------------------------------------------------------------------------

// The `self` argument (the first one of prim ops that name it otherwise).
const TensorType* self(const Args& a) {
  if (a.has("self")) return a.tensor("self");
  const auto& args = a.schema().arguments();
  return args.empty() ? nullptr : a.tensor(args[0].name);
}

}  // namespace

// The rules pointwise declarations name (shape_rules.h).
Out sameDtype(const Args& a) { return {freshOut(dtypeOf(self(a)), sizesOf(self(a)))}; }
Out floatDtype(const Args& a) { return {freshOut(toFloat(dtypeOf(self(a))), sizesOf(self(a)))}; }
Out boolDtype(const Args& a) { return {freshOut(ScalarType::Bool, sizesOf(self(a)))}; }

Out frexp(const Args& a) {
  return {freshOut(dtypeOf(self(a)), sizesOf(self(a))), freshOut(ScalarType::Int, sizesOf(self(a)))};
}

// Binary and ternary ops: broadcast shapes, promoted dtype.
template <bool ToFloat>
Out binary(const Args& a, std::initializer_list<std::string_view> names) {
  auto dtype = promote(a, names);
  return {freshOut(ToFloat ? toFloat(dtype) : dtype, broadcast(tensorsOf(a, names)))};
}

Out arithmetic(const Args& a) { return binary<false>(a, {"self", "other"}); }
Out trueDivide(const Args& a) { return binary<true>(a, {"self", "other"}); }
Out powOp(const Args& a) { return binary<false>(a, {"self", "exponent"}); }
Out clampOp(const Args& a) { return binary<false>(a, {"self", "min", "max"}); }
Out clampMinOp(const Args& a) { return binary<false>(a, {"self", "min"}); }
Out clampMaxOp(const Args& a) { return binary<false>(a, {"self", "max"}); }
Out addcOp(const Args& a) { return binary<false>(a, {"self", "tensor1", "tensor2"}); }
Out whereOp(const Args& a) {
  auto dtype = promote(a, {"self", "other"});
  return {freshOut(dtype, broadcast(tensorsOf(a, {"condition", "self", "other"})))};
}
Out thresholdBackwardOp(const Args& a) { return binary<false>(a, {"grad_output", "self"}); }
Out lerpOp(const Args& a) { return {freshOut(dtypeOf(self(a)), broadcast(tensorsOf(a, {"self", "end", "weight"})))}; }

Out comparison(const Args& a) { return {freshOut(ScalarType::Bool, broadcast(tensorsOf(a, {"self", "other"})))}; }

// div with rounding_mode: true division when the mode is None.
Out divMode(const Args& a) {
  auto dtype = promote(a, {"self", "other"});
  auto mode = a.known("rounding_mode");
  if (!mode) {
    if (dtype && !isFloatingType(*dtype)) dtype = std::nullopt;  // int or float, by the mode
  } else if (mode->isNone()) {
    dtype = toFloat(dtype);
  }
  return {freshOut(dtype, broadcast(tensorsOf(a, {"self", "other"})))};
}

Out maskedFill(const Args& a) { return {freshOut(dtypeOf(self(a)), broadcast(tensorsOf(a, {"self", "mask"})))}; }

// Ops that write into a copy of self: self's dtype and sizes.
Out likeSelf(const Args& a) { return {freshOut(dtypeOf(self(a)), sizesOf(self(a)))}; }

namespace {

// --- reductions -----------------------------------------------------------------------

// The dims a reduction's `dim` argument names: {all, dims}.
std::pair<bool, std::optional<DimList>> reductionDims(const Args& a, std::string_view name = "dim") {
  if (!a.has(name) || a.isNone(name)) return {true, std::nullopt};
  const Value* v = a.value(name);
  if (v->type()->kind() == TypeKind::Int) return {false, DimList{a.knownInt(name)}};
  if (v->type()->kind() == TypeKind::Optional) return {false, std::nullopt};
  auto list = a.intList(name);
  if (list && list->empty()) return {true, std::nullopt};  // dim=[] reduces every dim
  return {false, list};
}

std::optional<bool> keepdimArg(const Args& a) {
  if (!a.has("keepdim")) return false;
  return a.knownBool("keepdim");
}

VaryingShape reduced(const Args& a) {
  auto [all, dims] = reductionDims(a);
  return reduceSizes(self(a), all, dims, keepdimArg(a));
}

}  // namespace

Out reduceSame(const Args& a) { return {freshOut(dtypeOf(self(a)), reduced(a))}; }

Out reduceFloat(const Args& a) { return {freshOut(toFloat(dtypeOf(self(a))), reduced(a))}; }

Out reduceLong(const Args& a) { return {freshOut(ScalarType::Long, reduced(a))}; }

Out reduceUpcast(const Args& a) { return {freshOut(dtypeOr(a, upcastIntegral(dtypeOf(self(a)))), reduced(a))}; }

Out reduceDtype(const Args& a) { return {freshOut(dtypeOr(a, dtypeOf(self(a))), reduced(a))}; }

Out reduceBool(const Args& a) {
  auto t = dtypeOf(self(a));
  return {freshOut(t == ScalarType::Byte ? t
                   : t                   ? std::optional<ScalarType>(ScalarType::Bool)
                                         : std::nullopt,
                   reduced(a))};
}

Out reduceWithIndices(const Args& a) {
  VaryingShape sizes = reduced(a);
  return {freshOut(dtypeOf(self(a)), sizes), freshOut(ScalarType::Long, sizes)};
}

Out reducePair(const Args& a) {
  VaryingShape sizes = reduced(a);
  return {freshOut(dtypeOf(self(a)), sizes), freshOut(dtypeOf(self(a)), sizes)};
}

Out cumulative(const Args& a) { return {freshOut(dtypeOr(a, upcastIntegral(dtypeOf(self(a)))), sizesOf(self(a)))}; }

Out softmaxOp(const Args& a) { return {freshOut(dtypeOr(a, dtypeOf(self(a))), sizesOf(self(a)))}; }

Out internalSoftmax(const Args& a) {
  auto t = dtypeOf(self(a));
  if (t == ScalarType::Half) {
    auto half_to_float = a.knownBool("half_to_float");
    t = !half_to_float ? std::nullopt : *half_to_float ? std::optional(ScalarType::Float) : t;
  }
  return {freshOut(t, sizesOf(self(a)))};
}

Out sortOp(const Args& a) {
  return {freshOut(dtypeOf(self(a)), sizesOf(self(a))), freshOut(ScalarType::Long, sizesOf(self(a)))};
}

Out argsortOp(const Args& a) { return {freshOut(ScalarType::Long, sizesOf(self(a)))}; }

Out topk(const Args& a) {
  VaryingShape sizes = sizesOf(self(a));
  if (auto dims = dimsOf(self(a))) {
    auto dim = a.knownInt("dim");
    auto w = dim ? wrapDim(*dim, dims->size()) : std::nullopt;
    if (dims->empty()) {
      sizes = VaryingShape(0);
    } else if (w) {
      (*dims)[*w] = a.knownInt("k");
      sizes = VaryingShape(*dims);
    } else {
      sizes = VaryingShape(dims->size());
    }
  }
  return {freshOut(dtypeOf(self(a)), sizes), freshOut(ScalarType::Long, sizes)};
}

namespace {

// --- matrix products -------------------------------------------------------------------

VaryingShape matmulSizes(const TensorType* x, const TensorType* y) {
  auto a = dimsOf(x), b = dimsOf(y);
  if (!a || !b || a->empty() || b->empty()) return VaryingShape();
  size_t ra = a->size(), rb = b->size();
  DimList batch_a(a->begin(), a->end() - std::min<size_t>(ra, 2));
  DimList batch_b(b->begin(), b->end() - std::min<size_t>(rb, 2));
  DimList out = *broadcastDims({batch_a, batch_b});
  if (ra >= 2) out.push_back((*a)[ra - 2]);
  if (rb >= 2) out.push_back((*b)[rb - 1]);
  return VaryingShape(std::move(out));
}

}  // namespace

Out matmul(const Args& a) { return {freshOut(dtypeOf(self(a)), matmulSizes(self(a), a.tensor("other")))}; }

// mm, bmm, mv, dot: every operand has a fixed rank.
Out mm(const Args& a) {
  auto x = dimsOf(self(a)), y = dimsOf(a.tensor("mat2"));
  DimList out{x && x->size() == 2 ? (*x)[0] : std::nullopt, y && y->size() == 2 ? (*y)[1] : std::nullopt};
  return {freshOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out bmm(const Args& a) {
  auto x = dimsOf(self(a)), y = dimsOf(a.tensor("mat2"));
  DimList out{x && x->size() == 3 ? (*x)[0] : std::nullopt, x && x->size() == 3 ? (*x)[1] : std::nullopt,
              y && y->size() == 3 ? (*y)[2] : std::nullopt};
  return {freshOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out mv(const Args& a) {
  auto x = dimsOf(self(a));
  return {freshOut(dtypeOf(self(a)), VaryingShape(DimList{x && x->size() == 2 ? (*x)[0] : std::nullopt}))};
}

Out dot(const Args& a) { return {freshOut(dtypeOf(self(a)), VaryingShape(0))}; }

Out addmm(const Args& a) {
  auto x = dimsOf(a.tensor("mat1")), y = dimsOf(a.tensor("mat2"));
  DimList out{x && x->size() == 2 ? (*x)[0] : std::nullopt, y && y->size() == 2 ? (*y)[1] : std::nullopt};
  return {freshOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out addmv(const Args& a) {
  auto x = dimsOf(a.tensor("mat"));
  return {freshOut(dtypeOf(self(a)), VaryingShape(DimList{x && x->size() == 2 ? (*x)[0] : std::nullopt}))};
}

Out addr(const Args& a) {
  auto x = dimsOf(a.tensor("vec1")), y = dimsOf(a.tensor("vec2"));
  DimList out{x && x->size() == 1 ? (*x)[0] : std::nullopt, y && y->size() == 1 ? (*y)[0] : std::nullopt};
  return {freshOut(dtypeOf(self(a)), VaryingShape(out))};
}

// The batch's products summed: [n, m].
Out addbmm(const Args& a) {
  auto x = dimsOf(a.tensor("batch1")), y = dimsOf(a.tensor("batch2"));
  DimList out{x && x->size() == 3 ? (*x)[1] : std::nullopt, y && y->size() == 3 ? (*y)[2] : std::nullopt};
  return {freshOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out baddbmm(const Args& a) {
  auto x = dimsOf(a.tensor("batch1")), y = dimsOf(a.tensor("batch2"));
  DimList out{x && x->size() == 3 ? (*x)[0] : std::nullopt, x && x->size() == 3 ? (*x)[1] : std::nullopt,
              y && y->size() == 3 ? (*y)[2] : std::nullopt};
  return {freshOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out linear(const Args& a) {
  auto x = dimsOf(a.tensor("input")), w = dimsOf(a.tensor("weight"));
  if (!x || !w || x->empty() || w->empty() || w->size() > 2) {
    return {freshOut(dtypeOf(a.tensor("input")), VaryingShape())};
  }
  DimList out(x->begin(), x->end() - 1);
  if (w->size() == 2) out.push_back((*w)[0]);
  return {freshOut(dtypeOf(a.tensor("input")), VaryingShape(out))};
}

Out outer(const Args& a) {
  auto x = dimsOf(self(a)), y = dimsOf(a.tensor("vec2"));
  DimList out{x && x->size() == 1 ? (*x)[0] : std::nullopt, y && y->size() == 1 ? (*y)[0] : std::nullopt};
  return {freshOut(promote(a, {"self", "vec2"}), VaryingShape(out))};
}

namespace {

// --- views and reshapes ---------------------------------------------------------------

// Self's dtype, sizes unknown: what a shape op whose sizes are not known says.
Out unknownShape(const Args& a) { return {tensorOut(dtypeOf(self(a)), VaryingShape())}; }

}  // namespace

Out view(const Args& a) {
  std::string_view name = a.has("size") ? "size" : "shape";
  auto sizes = sizesFromList(a.intList(name), numelOf(self(a)));
  if (!sizes) return unknownShape(a);
  return {tensorOut(dtypeOf(self(a)), VaryingShape(*sizes))};
}

Out viewAsOther(const Args& a) { return {tensorOut(dtypeOf(self(a)), sizesOf(a.tensor("other")))}; }

Out flatten(const Args& a) {
  auto in = dimsOf(self(a));
  if (!in) return unknownShape(a);
  if (in->empty()) return {tensorOut(dtypeOf(self(a)), VaryingShape::complete({1}))};
  auto start = a.knownInt("start_dim"), end = a.knownInt("end_dim");
  auto s = start ? wrapDim(*start, in->size()) : std::nullopt;
  auto e = end ? wrapDim(*end, in->size()) : std::nullopt;
  if (!s || !e || *s > *e) return unknownShape(a);
  DimList out(in->begin(), in->begin() + static_cast<std::ptrdiff_t>(*s));
  out.push_back(product(
      DimList(in->begin() + static_cast<std::ptrdiff_t>(*s), in->begin() + static_cast<std::ptrdiff_t>(*e) + 1)));
  out.insert(out.end(), in->begin() + static_cast<std::ptrdiff_t>(*e) + 1, in->end());
  return {tensorOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out ravel(const Args& a) { return {tensorOut(dtypeOf(self(a)), VaryingShape(DimList{numelOf(self(a))}))}; }

Out unflatten(const Args& a) {
  auto in = dimsOf(self(a));
  auto dim = a.knownInt("dim");
  auto w = in && dim ? wrapDim(*dim, in->size()) : std::nullopt;
  if (!w || in->empty()) return unknownShape(a);
  auto sizes = sizesFromList(a.intList("sizes"), (*in)[*w]);
  if (!sizes) return unknownShape(a);
  DimList out(in->begin(), in->begin() + static_cast<std::ptrdiff_t>(*w));
  out.insert(out.end(), sizes->begin(), sizes->end());
  out.insert(out.end(), in->begin() + static_cast<std::ptrdiff_t>(*w) + 1, in->end());
  return {tensorOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out squeeze(const Args& a) {
  auto in = dimsOf(self(a));
  if (!in) return unknownShape(a);
  DimList out;
  if (a.has("dim")) {
    auto dim = a.knownInt("dim");
    auto w = dim ? wrapDim(*dim, in->size()) : std::nullopt;
    if (in->empty()) return {tensorOut(dtypeOf(self(a)), VaryingShape(0))};
    if (!w || !(*in)[*w]) return unknownShape(a);
    out = *in;
    if (*(*in)[*w] == 1) out.erase(out.begin() + static_cast<std::ptrdiff_t>(*w));
  } else {
    for (const auto& d : *in) {
      if (!d) return unknownShape(a);  // size-1 or not decides the rank
      if (*d != 1) out.push_back(d);
    }
  }
  return {tensorOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out unsqueeze(const Args& a) {
  auto in = dimsOf(self(a));
  auto dim = a.knownInt("dim");
  if (!in) return unknownShape(a);
  auto w = dim ? wrapDim(*dim, in->size() + 1) : std::nullopt;
  if (!w) return {tensorOut(dtypeOf(self(a)), VaryingShape(in->size() + 1))};
  in->insert(in->begin() + static_cast<std::ptrdiff_t>(*w), 1);
  return {tensorOut(dtypeOf(self(a)), VaryingShape(*in))};
}

namespace {

// Sizes permuted by `order` (new dim i is old dim order[i]).
Out permuted(const Args& a, const DimList& in, const std::vector<size_t>& order) {
  DimList out;
  for (size_t i : order) out.push_back(in[i]);
  return {tensorOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out transposeDims(const Args& a, std::optional<int64_t> d0, std::optional<int64_t> d1) {
  auto in = dimsOf(self(a));
  if (!in) return unknownShape(a);
  auto w0 = d0 ? wrapDim(*d0, in->size()) : std::nullopt;
  auto w1 = d1 ? wrapDim(*d1, in->size()) : std::nullopt;
  if (in->empty()) return {tensorOut(dtypeOf(self(a)), VaryingShape(0))};
  if (!w0 || !w1) return {tensorOut(dtypeOf(self(a)), VaryingShape(in->size()))};
  std::swap((*in)[*w0], (*in)[*w1]);
  return {tensorOut(dtypeOf(self(a)), VaryingShape(*in))};
}

}  // namespace

Out transpose(const Args& a) {
  bool axes = a.has("axis0");  // swapaxes
  return transposeDims(a, a.knownInt(axes ? "axis0" : "dim0"), a.knownInt(axes ? "axis1" : "dim1"));
}

Out transpose2d(const Args& a) {
  auto r = rankOf(self(a));
  if (r && *r > 2) return unknownShape(a);
  return r && *r == 2 ? transposeDims(a, 0, 1) : Out{tensorOut(dtypeOf(self(a)), sizesOf(self(a)))};
}

Out mT(const Args& a) {
  auto r = rankOf(self(a));
  if (r && *r < 2) return unknownShape(a);
  return transposeDims(a, -2, -1);
}

Out numpyT(const Args& a) {
  auto in = dimsOf(self(a));
  if (!in) return unknownShape(a);
  std::reverse(in->begin(), in->end());
  return {tensorOut(dtypeOf(self(a)), VaryingShape(*in))};
}

Out permute(const Args& a) {
  auto in = dimsOf(self(a));
  auto dims = a.intList("dims");
  if (!in || !dims || dims->size() != in->size()) return unknownShape(a);
  std::vector<size_t> order;
  for (const auto& d : *dims) {
    auto w = d ? wrapDim(*d, in->size()) : std::nullopt;
    if (!w) return {tensorOut(dtypeOf(self(a)), VaryingShape(in->size()))};
    order.push_back(*w);
  }
  return permuted(a, *in, order);
}

Out movedim(const Args& a) {
  auto in = dimsOf(self(a));
  if (!in) return unknownShape(a);
  size_t rank = in->size();
  auto listOf = [&](std::string_view name) -> std::optional<DimList> {
    if (a.value(name)->type()->kind() == TypeKind::Int) return DimList{a.knownInt(name)};
    return a.intList(name);
  };
  auto src = listOf("source"), dst = listOf("destination");
  if (!src || !dst || src->size() != dst->size()) return unknownShape(a);
  std::vector<size_t> from, to;
  for (size_t i = 0; i < src->size(); ++i) {
    auto s = (*src)[i] ? wrapDim(*(*src)[i], rank) : std::nullopt;
    auto d = (*dst)[i] ? wrapDim(*(*dst)[i], rank) : std::nullopt;
    if (!s || !d) return {tensorOut(dtypeOf(self(a)), VaryingShape(rank))};
    from.push_back(*s);
    to.push_back(*d);
  }
  std::vector<std::optional<size_t>> order(std::max<size_t>(rank, 1));
  for (size_t i = 0; i < from.size(); ++i) order[to[i]] = from[i];
  std::vector<size_t> rest;
  for (size_t i = 0; i < rank; ++i) {
    if (std::find(from.begin(), from.end(), i) == from.end()) rest.push_back(i);
  }
  size_t next = 0;
  std::vector<size_t> final_order;
  for (size_t i = 0; i < rank; ++i) {
    if (!order[i]) {
      if (next >= rest.size()) return unknownShape(a);
      order[i] = rest[next++];
    }
    final_order.push_back(*order[i]);
  }
  return permuted(a, *in, final_order);
}

Out expand(const Args& a) {
  auto list = a.intList("size");
  auto in = dimsOf(self(a));
  if (!list) return unknownShape(a);
  if (!in) return {tensorOut(dtypeOf(self(a)), VaryingShape(list->size()))};
  if (list->size() < in->size()) return unknownShape(a);
  size_t lead = list->size() - in->size();
  DimList out(list->size());
  for (size_t i = 0; i < out.size(); ++i) {
    std::optional<int64_t> old = i >= lead ? (*in)[i - lead] : std::optional<int64_t>(1);
    const auto& want = (*list)[i];
    if (want && *want == -1) {
      out[i] = i >= lead ? old : std::nullopt;
    } else if (want) {
      out[i] = want;
    } else if (old && *old != 1) {
      out[i] = old;  // a non-singleton dim expands only to itself
    }
  }
  return {tensorOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out expandAs(const Args& a) { return {tensorOut(dtypeOf(self(a)), sizesOf(a.tensor("other")))}; }

namespace {

// The size of `self` along the `dim` argument, wrapped.
std::optional<size_t> dimArg(const Args& a, const DimList& in, std::string_view name = "dim") {
  auto dim = a.knownInt(name);
  return dim ? wrapDim(*dim, in.size()) : std::nullopt;
}

}  // namespace

Out select(const Args& a) {
  auto in = dimsOf(self(a));
  if (!in || in->empty()) return unknownShape(a);
  auto w = dimArg(a, *in);
  if (!w) return {tensorOut(dtypeOf(self(a)), VaryingShape(in->size() - 1))};
  in->erase(in->begin() + static_cast<std::ptrdiff_t>(*w));
  return {tensorOut(dtypeOf(self(a)), VaryingShape(*in))};
}

namespace {

// Replaces the size along `dim` (or every size when `dim` is unknown).
Out withDimSize(const Args& a, std::string_view dim_name,
                const std::function<std::optional<int64_t>(std::optional<int64_t>)>& size) {
  auto in = dimsOf(self(a));
  if (!in) return unknownShape(a);
  if (in->empty()) return unknownShape(a);
  auto w = dimArg(a, *in, dim_name);
  if (!w) return {tensorOut(dtypeOf(self(a)), VaryingShape(in->size()))};
  (*in)[*w] = size((*in)[*w]);
  return {tensorOut(dtypeOf(self(a)), VaryingShape(*in))};
}

}  // namespace

Out slice(const Args& a) {
  auto start = a.isNone("start") ? std::optional<int64_t>(0) : a.knownInt("start");
  auto end = a.isNone("end") ? std::optional<int64_t>(INT64_MAX) : a.knownInt("end");
  auto step = a.knownInt("step");
  return withDimSize(a, "dim", [&](std::optional<int64_t> size) -> std::optional<int64_t> {
    if (!size || !start || !end || !step || *step <= 0) return std::nullopt;
    int64_t s = *start, e = *end, n = *size;
    if (s < 0) s += n;
    if (e < 0) e += n;
    s = std::clamp<int64_t>(s, 0, n);
    e = std::clamp<int64_t>(e, s, n);
    return (e - s + *step - 1) / *step;
  });
}

Out narrow(const Args& a) {
  auto length = a.knownInt("length");
  return withDimSize(a, "dim", [&](std::optional<int64_t>) { return length; });
}

Out indexSelect(const Args& a) {
  auto index = a.tensor("index");
  auto n = numelOf(index);
  return withDimSize(a, "dim", [&](std::optional<int64_t>) { return n; });
}

Out diagonal(const Args& a) {
  auto in = dimsOf(self(a));
  if (!in || in->size() < 2) return unknownShape(a);
  auto d1 = dimArg(a, *in, "dim1"), d2 = dimArg(a, *in, "dim2");
  auto offset = a.knownInt("offset");
  if (!d1 || !d2 || *d1 == *d2) return {tensorOut(dtypeOf(self(a)), VaryingShape(in->size() - 1))};
  std::optional<int64_t> n;
  auto s1 = (*in)[*d1], s2 = (*in)[*d2];
  if (s1 && s2 && offset) {
    n = *offset >= 0 ? std::min(*s1, *s2 - *offset) : std::min(*s1 + *offset, *s2);
    n = std::max<int64_t>(*n, 0);
  }
  DimList out;
  for (size_t i = 0; i < in->size(); ++i) {
    if (i != *d1 && i != *d2) out.push_back((*in)[i]);
  }
  out.push_back(n);
  return {tensorOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out unfold(const Args& a) {
  auto in = dimsOf(self(a));
  auto size = a.knownInt("size"), step = a.knownInt("step");
  if (!in) return unknownShape(a);
  if (in->empty()) return {tensorOut(dtypeOf(self(a)), VaryingShape(DimList{size}))};
  auto w = dimArg(a, *in, "dimension");
  if (!w) return {tensorOut(dtypeOf(self(a)), VaryingShape(in->size() + 1))};
  auto& d = (*in)[*w];
  d = d && size && step && *step > 0 && *d >= *size ? std::optional<int64_t>((*d - *size) / *step + 1) : std::nullopt;
  in->push_back(size);
  return {tensorOut(dtypeOf(self(a)), VaryingShape(*in))};
}

Out asStrided(const Args& a) {
  auto sizes = a.intList("size");
  if (!sizes) return unknownShape(a);
  OutputFacts o = tensorOut(dtypeOf(self(a)), VaryingShape(*sizes));
  if (auto strides = a.intList("stride"); strides && strides->size() == sizes->size()) {
    o.tensor.strides = VaryingShape(*strides);
  }
  return {o};
}

Out repeat(const Args& a) {
  auto in = dimsOf(self(a));
  auto reps = a.intList("repeats");
  if (!reps) return unknownShape(a);
  if (!in) return unknownShape(a);
  if (reps->size() < in->size()) return unknownShape(a);
  size_t lead = reps->size() - in->size();
  DimList out(reps->size());
  for (size_t i = 0; i < out.size(); ++i) {
    std::optional<int64_t> old = i >= lead ? (*in)[i - lead] : std::optional<int64_t>(1);
    if (old && (*reps)[i]) out[i] = *old * *(*reps)[i];
  }
  return {freshOut(dtypeOf(self(a)), VaryingShape(out))};
}

Out take(const Args& a) { return {freshOut(dtypeOf(self(a)), sizesOf(a.tensor("index")))}; }

// Advanced indexing (x[idx0, :, idx2]): the indexed dims are replaced by the
// broadcast shape of the indices, in place when they are adjacent, else in
// front. A bool mask stands for as many long indices as it has dims, of a
// length its values decide.
Out index(const Args& a) {
  auto in = dimsOf(self(a));
  const ListFacts* list = a.tensorList("indices");
  if (!in || !list || !list->elements) return unknownShape(a);
  const auto& indices = *list->elements;
  if (indices.size() > in->size()) return unknownShape(a);
  std::vector<std::optional<DimList>> broadcast_inputs;
  std::vector<bool> indexed(in->size(), false);
  size_t dim = 0;
  for (const TypePtr& index : indices) {
    if (index->kind() == TypeKind::None) {
      ++dim;
      continue;
    }
    auto t = index->cast<TensorType>();
    if (!t || !t->scalarType() || !t->dim()) return unknownShape(a);
    if (*t->scalarType() == ScalarType::Bool || *t->scalarType() == ScalarType::Byte) {
      if (*t->dim() == 0 || dim + *t->dim() > in->size()) return unknownShape(a);
      for (size_t i = 0; i < *t->dim(); ++i) indexed[dim++] = true;
      broadcast_inputs.push_back(DimList{std::nullopt});
    } else {
      if (dim >= in->size()) return unknownShape(a);
      indexed[dim++] = true;
      broadcast_inputs.push_back(dimsOf(t));
    }
  }
  if (broadcast_inputs.empty()) return unknownShape(a);
  auto b = broadcastDims(broadcast_inputs);
  if (!b) return unknownShape(a);
  auto first = std::find(indexed.begin(), indexed.end(), true) - indexed.begin();
  auto last = indexed.rend() - std::find(indexed.rbegin(), indexed.rend(), true);
  bool adjacent = std::all_of(indexed.begin() + first, indexed.begin() + last, [](bool x) { return x; });
  DimList out;
  if (adjacent) out.insert(out.end(), in->begin(), in->begin() + first);
  out.insert(out.end(), b->begin(), b->end());
  for (size_t i = adjacent ? static_cast<size_t>(first) : 0; i < in->size(); ++i) {
    if (!indexed[i]) out.push_back((*in)[i]);
  }
  return {freshOut(dtypeOf(self(a)), VaryingShape(out))};
}

namespace {

// --- joining and splitting --------------------------------------------------------------

// The elements of a list of tensors: all of them when the length is known
// (`count_known`), else one standing for every element.
std::optional<std::vector<TypePtr>> listElements(const Args& a, std::string_view name, bool& count_known) {
  const ListFacts* list = a.tensorList(name);
  count_known = list && list->elements;
  if (count_known && !list->elements->empty()) return *list->elements;
  if (list && list->each && !count_known) return std::vector<TypePtr>{list->each};
  return std::nullopt;
}

std::optional<ScalarType> promoteElements(const std::vector<TypePtr>& elements) {
  std::optional<ScalarType> out;
  for (const TypePtr& e : elements) {
    auto t = dtypeOf(e->cast<TensorType>());
    if (!t) return std::nullopt;
    out = out ? promoteTypes(*out, *t) : *t;
  }
  return out;
}

}  // namespace

Out cat(const Args& a) {
  bool count_known = false;
  auto elements = listElements(a, "tensors", count_known);
  if (!elements) return {};
  std::optional<size_t> rank = 0;
  for (const TypePtr& e : *elements) {
    if (!e->cast<TensorType>()) return {};  // not a list of tensors after all
    auto r = rankOf(e->cast<TensorType>());
    rank = r && rank ? std::optional<size_t>(std::max(*rank, *r)) : std::nullopt;
  }
  auto dtype = promoteElements(*elements);
  if (!rank) return {freshOut(dtype, VaryingShape())};
  if (*rank == 0) return {};
  auto dim = a.knownInt("dim");
  auto w = dim ? wrapDim(*dim, *rank) : std::nullopt;
  DimList out(*rank);
  std::optional<int64_t> total = 0;
  for (size_t i = 0; i < *rank; ++i) {
    for (const TypePtr& e : *elements) {
      auto d = dimsOf(e->cast<TensorType>());
      if (d->size() != *rank) continue;  // a legacy empty 1-d tensor, skipped by cat
      if (w && i == *w) {
        total = total && (*d)[i] ? std::optional<int64_t>(*total + *(*d)[i]) : std::nullopt;
      } else if ((*d)[i]) {
        out[i] = (*d)[i];
      }
    }
  }
  // (1-d inputs of a cat of higher rank must be empty: they add nothing.)
  if (w) {
    out[*w] = count_known ? total : std::nullopt;
  } else {
    out.assign(*rank, std::nullopt);
  }
  return {freshOut(dtype, VaryingShape(out))};
}

Out stack(const Args& a) {
  bool count_known = false;
  auto elements = listElements(a, "tensors", count_known);
  if (!elements) return {};
  if (!(*elements)[0]->cast<TensorType>()) return {};
  auto dtype = promoteElements(*elements);
  auto first = dimsOf((*elements)[0]->cast<TensorType>());
  if (!first) return {freshOut(dtype, VaryingShape())};
  DimList shape = *first;
  for (const TypePtr& e : *elements) {
    auto d = dimsOf(e->cast<TensorType>());
    if (!d || d->size() != shape.size()) return {freshOut(dtype, VaryingShape())};
    for (size_t i = 0; i < shape.size(); ++i) {
      if (!shape[i]) shape[i] = (*d)[i];
    }
  }
  auto dim = a.knownInt("dim");
  auto w = dim ? wrapDim(*dim, shape.size() + 1) : std::nullopt;
  if (!w) return {freshOut(dtype, VaryingShape(shape.size() + 1))};
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(*w),
               count_known ? std::optional<int64_t>(static_cast<int64_t>(elements->size())) : std::nullopt);
  return {freshOut(dtype, VaryingShape(shape))};
}

namespace {

// Pieces of `self` along `dim` with the given sizes (nullopt: a count and
// sizes the analysis does not know).
Out pieces(const Args& a, std::string_view dim_name,
           const std::function<std::optional<DimList>(std::optional<int64_t>)>& sizes) {
  auto in = dimsOf(self(a));
  TensorFacts each;
  each.dtype = dtypeOf(self(a));
  if (!in || in->empty()) return {listOut(each)};
  auto w = dimArg(a, *in, dim_name);
  if (!w) {
    each.sizes = VaryingShape(in->size());
    return {listOut(each)};
  }
  DimList shape = *in;
  shape[*w] = std::nullopt;
  each.sizes = VaryingShape(shape);
  auto piece_sizes = sizes((*in)[*w]);
  if (!piece_sizes) return {listOut(each)};
  std::vector<TensorFacts> elements;
  for (const auto& s : *piece_sizes) {
    TensorFacts e = each;
    shape[*w] = s;
    e.sizes = VaryingShape(shape);
    elements.push_back(std::move(e));
  }
  return {listOut(each, std::move(elements))};
}

}  // namespace

Out chunk(const Args& a) {
  auto chunks = a.knownInt("chunks");
  return pieces(a, "dim", [&](std::optional<int64_t> size) -> std::optional<DimList> {
    if (!size || !chunks || *chunks <= 0 || *size == 0) return std::nullopt;
    int64_t split = (*size + *chunks - 1) / *chunks;
    int64_t n = (*size + split - 1) / split;
    DimList out(n, split);
    out.back() = *size - split * (n - 1);
    return out;
  });
}

Out split(const Args& a) {
  auto split = a.knownInt("split_size");
  return pieces(a, "dim", [&](std::optional<int64_t> size) -> std::optional<DimList> {
    if (!size || !split || *split <= 0) return std::nullopt;
    int64_t n = std::max<int64_t>((*size + *split - 1) / *split, 1);
    DimList out(n, *split);
    out.back() = *split - (*split * n - *size);
    return out;
  });
}

Out splitWithSizes(const Args& a) {
  auto list = a.intList(a.has("split_sizes") ? "split_sizes" : "split_size");
  return pieces(a, "dim", [&](std::optional<int64_t>) { return list; });
}

Out tensorSplit(const Args& a) {
  if (a.has("sections")) {
    auto sections = a.knownInt("sections");
    return pieces(a, "dim", [&](std::optional<int64_t> size) -> std::optional<DimList> {
      if (!size || !sections || *sections <= 0) return std::nullopt;
      DimList out;
      for (int64_t i = 0; i < *sections; ++i) out.push_back(*size / *sections + (i < *size % *sections ? 1 : 0));
      return out;
    });
  }
  auto indices = a.intList("indices");
  return pieces(a, "dim", [&](std::optional<int64_t> size) -> std::optional<DimList> {
    if (!indices) return std::nullopt;
    DimList out;
    std::optional<int64_t> prev = 0;
    auto clamped = [&](std::optional<int64_t> i) -> std::optional<int64_t> {
      if (!i || !size) return std::nullopt;
      int64_t v = *i < 0 ? *i + *size : *i;
      return std::clamp<int64_t>(v, 0, *size);
    };
    for (const auto& i : *indices) {
      auto cur = clamped(i);
      out.push_back(cur && prev ? std::optional<int64_t>(std::max<int64_t>(*cur - *prev, 0)) : std::nullopt);
      prev = cur;
    }
    out.push_back(size && prev ? std::optional<int64_t>(std::max<int64_t>(*size - *prev, 0)) : std::nullopt);
    return out;
  });
}

Out unbind(const Args& a) {
  auto in = dimsOf(self(a));
  TensorFacts each;
  each.dtype = dtypeOf(self(a));
  if (!in || in->empty()) return {listOut(each)};
  auto w = dimArg(a, *in);
  if (!w) {
    each.sizes = VaryingShape(in->size() - 1);
    return {listOut(each)};
  }
  auto count = (*in)[*w];
  in->erase(in->begin() + static_cast<std::ptrdiff_t>(*w));
  each.sizes = VaryingShape(*in);
  if (!count) return {listOut(each)};
  return {listOut(each, std::vector<TensorFacts>(*count, each))};
}

Out whereCondition(const Args& a) {
  auto rank = rankOf(a.tensor("condition"));
  TensorFacts each;
  each.dtype = ScalarType::Long;
  each.sizes = VaryingShape(1);
  if (!rank) return {listOut(each)};
  return {listOut(each, std::vector<TensorFacts>(std::max<size_t>(*rank, 1), each))};
}

Out nonzero(const Args& a) {
  auto rank = rankOf(self(a));
  return {freshOut(ScalarType::Long,
                   VaryingShape(DimList{std::nullopt, rank ? std::optional<int64_t>(*rank) : std::nullopt}))};
}

Out maskedSelect(const Args& a) { return {freshOut(dtypeOf(self(a)), VaryingShape(1))}; }

namespace {

// --- conversions --------------------------------------------------------------------

}  // namespace

Out viewDtype(const Args& a) {
  auto dtype = a.dtypeArg("dtype");
  auto from = dtypeOf(self(a));
  auto in = dimsOf(self(a));
  if (!dtype || *dtype == ScalarType::Undefined) return {};
  if (!from || !in) return {tensorOut(dtype, VaryingShape())};
  size_t a_size = elementSize(*from), b_size = elementSize(*dtype);
  if (a_size != b_size) {
    if (in->empty()) return {};
    auto& last = in->back();
    if (last) last = *last * static_cast<int64_t>(a_size) / static_cast<int64_t>(b_size);
  }
  return {tensorOut(dtype, VaryingShape(*in))};
}

// aten::to, by overload: the dtype comes from an argument or from `other`.
Out to(const Args& a) {
  std::optional<ScalarType> dtype = dtypeOf(self(a));
  if (a.has("other")) {
    dtype = dtypeOf(a.tensor("other"));
  } else if (a.has("dtype")) {
    dtype = dtypeOr(a, dtype);
  }
  return {freshOut(dtype, sizesOf(self(a)))};
}

Out typeAs(const Args& a) { return {freshOut(dtypeOf(a.tensor("other")), sizesOf(self(a)))}; }

Out contiguousOp(const Args& a) {
  OutputFacts o = tensorOut(dtypeOf(self(a)), sizesOf(self(a)));
  o.tensor.contiguous = true;
  return {o};
}

// Same tensor, or a view of all of it.
Out alias(const Args& a) { return {tensorOut(dtypeOf(self(a)), sizesOf(self(a)))}; }

namespace {

// --- factories ----------------------------------------------------------------------

Out sizedFactory(const Args& a, std::optional<ScalarType> default_dtype) {
  auto sizes = sizesFromList(a.intList("size"), std::nullopt);
  return {contiguousOut(dtypeOr(a, default_dtype), sizes ? VaryingShape(*sizes) : VaryingShape())};
}

}  // namespace

Out floatFactory(const Args& a) { return sizedFactory(a, defaultFloatType()); }

Out longFactory(const Args& a) { return sizedFactory(a, ScalarType::Long); }

namespace {

std::optional<ScalarType> fillDtype(const Args& a, std::string_view name) {
  auto t = numberDtype(a.value(name), a.facts());
  if (t == ScalarType::Double) return defaultFloatType();
  return t;
}

}  // namespace

Out full(const Args& a) { return sizedFactory(a, fillDtype(a, "fill_value")); }

Out emptyStrided(const Args& a) {
  Out out = sizedFactory(a, defaultFloatType());
  auto strides = a.intList("stride");
  auto sizes = out[0].tensor.sizes;
  if (strides && sizes.size() == strides->size()) out[0].tensor.strides = VaryingShape(*strides);
  out[0].tensor.contiguous = false;
  return out;
}

Out likeFactory(const Args& a) { return {freshOut(dtypeOr(a, dtypeOf(self(a))), sizesOf(self(a)))}; }

Out newFactory(const Args& a) {
  auto sizes = sizesFromList(a.intList("size"), std::nullopt);
  return {contiguousOut(dtypeOr(a, dtypeOf(self(a))), sizes ? VaryingShape(*sizes) : VaryingShape())};
}

Out randperm(const Args& a) {
  return {contiguousOut(dtypeOr(a, ScalarType::Long), VaryingShape(DimList{a.knownInt("n")}))};
}

// arange's length, as kiln's kernel computes it.
Out arange(const Args& a) {
  auto arg = [&](std::string_view name, double fallback) -> std::optional<Scalar> {
    if (!a.has(name)) return Scalar(fallback);
    auto k = a.known(name);
    if (!k || !k->isScalar()) return std::nullopt;
    return k->toScalar();
  };
  std::optional<ScalarType> default_dtype;
  auto kinds = {a.value("start"), a.value("end"), a.value("step")};
  bool all_int = true, any_unknown = false;
  for (const Value* v : kinds) {
    if (!v) continue;
    auto t = numberDtype(v, a.facts());
    if (!t) any_unknown = true;
    if (t == ScalarType::Double) all_int = false;
  }
  if (!any_unknown) default_dtype = all_int ? ScalarType::Long : defaultFloatType();
  auto dtype = dtypeOr(a, default_dtype);
  auto start = a.has("start") ? arg("start", 0) : std::optional<Scalar>(Scalar(int64_t{0}));
  auto end = arg("end", 0);
  auto step = a.has("step") ? arg("step", 1) : std::optional<Scalar>(Scalar(int64_t{1}));
  std::optional<int64_t> length;
  if (dtype && start && end && step) {
    double size;
    if (*dtype == ScalarType::Long) {
      int64_t s = start->to<int64_t>(), e = end->to<int64_t>(), st = step->to<int64_t>();
      size = st == 0 ? -1 : std::ceil(static_cast<double>(e - s) / static_cast<double>(st));
    } else {
      size = std::ceil((end->to<double>() - start->to<double>()) / step->to<double>());
    }
    if (size >= 0 && size < 1e18) length = static_cast<int64_t>(size);
  }
  return {contiguousOut(dtype, VaryingShape(DimList{length}))};
}

Out linspace(const Args& a) {
  return {contiguousOut(dtypeOr(a, defaultFloatType()), VaryingShape(DimList{a.knownInt("steps")}))};
}

Out eye(const Args& a) {
  auto n = a.knownInt("n");
  auto m = a.has("m") ? a.knownInt("m") : n;
  return {contiguousOut(dtypeOr(a, defaultFloatType()), VaryingShape(DimList{n, m}))};
}

Out scalarTensor(const Args& a) { return {contiguousOut(dtypeOr(a, defaultFloatType()), VaryingShape(0))}; }

// torch.tensor / torch.as_tensor of a number or a (nested) list.
Out tensorFromData(const Args& a) {
  const Value* data = a.value(a.has("data") ? "data" : "t");
  if (auto t = data->type()->cast<TensorType>()) {
    return {tensorOut(dtypeOr(a, t->scalarType()), t->sizes())};
  }
  size_t depth = 0;
  TypePtr leaf = data->type();
  while (auto list = leaf->cast<ListType>()) {
    ++depth;
    leaf = list->elementType();
  }
  std::optional<ScalarType> leaf_dtype;
  switch (leaf->kind()) {
    case TypeKind::Int: leaf_dtype = ScalarType::Long; break;
    case TypeKind::Float: leaf_dtype = defaultFloatType(); break;
    case TypeKind::Bool: leaf_dtype = ScalarType::Bool; break;
    default: break;
  }
  VaryingShape sizes(depth);
  if (auto value = a.facts().known(data); value && depth > 0) {
    DimList dims;
    IValue level = *value;
    for (size_t i = 0; i < depth && level.isList(); ++i) {
      const auto& elements = level.toListRef().elements;
      dims.push_back(static_cast<int64_t>(elements.size()));
      if (elements.empty()) break;
      level = elements[0];
    }
    if (dims.size() == depth) sizes = VaryingShape(dims);
  } else if (auto list = a.facts().intList(data); list && depth == 1) {
    sizes = VaryingShape(DimList{static_cast<int64_t>(list->size())});
  }
  return {contiguousOut(dtypeOr(a, leaf_dtype), sizes)};
}

Formula findFormula(const Node* node, const FunctionSchema&) {
  if (const auto op = node->maybeOperator(); op && op->description().shape) return op->description().shape;
  return nullptr;
}

namespace {

OpTrait traitsOf(const Node* n) {
  if (!n->maybeSchema()) return OpTrait::None;
  return n->maybeOperator()->description().traits;
}

}  // namespace

bool neverRequiresGrad(const Node* n) { return hasTrait(traitsOf(n), OpTrait::NeverRequiresGrad); }

bool onlySelfRequiresGrad(const Node* n) { return hasTrait(traitsOf(n), OpTrait::OnlySelfRequiresGrad); }

bool valueDependent(const Node* n, const ValueFacts& facts) {
  if (hasTrait(traitsOf(n), OpTrait::ValueDependentShape)) return true;
  // tensor_split by a tensor of indices.
  if (n->kind() == Symbol::aten("tensor_split") && n->inputs().size() > 1 &&
      n->input(1)->type()->kind() == TypeKind::Tensor) {
    return true;
  }
  if (n->kind() == aten::index) {
    // A bool or uint8 mask selects by value.
    for (const Value* input : n->inputs()) {
      const ListFacts* list = facts.tensorList(input);
      if (!list || !list->elements) continue;
      for (const TypePtr& e : *list->elements) {
        auto t = e->cast<TensorType>();
        if (t && (!t->scalarType() || *t->scalarType() == ScalarType::Bool || *t->scalarType() == ScalarType::Byte)) {
          return true;
        }
      }
    }
  }
  return false;
}

bool expensiveToRun(const Node* n) { return hasTrait(traitsOf(n), OpTrait::Expensive); }

bool isFactory(const Node* n) { return hasTrait(traitsOf(n), OpTrait::Factory); }

}  // namespace kiln::shapes
