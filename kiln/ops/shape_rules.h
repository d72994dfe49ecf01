#pragma once
// Shape rules: what an operator's formula sees of a node's inputs and what it
// says of its outputs, and the library of formulas. Every operator names its
// rule in its declaration (`.shape(shapes::sameDtype)`, see
// kiln/core/op_description.h); the shape analysis (kiln/passes/analysis)
// applies it. Formulas derive dtype and sizes only; the analysis adds
// device, requires_grad and strides.
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/core/op_description.h"
#include "kiln/ir/graph.h"

namespace kiln::shapes {

using DimList = std::vector<std::optional<int64_t>>;

// Whether a tensor may be a wrapped number (a Python number the program
// turned into a 0-dim tensor: it promotes only by category).
enum class Wrapped { No, Yes, Maybe };

// What a formula says of one tensor output.
struct TensorFacts {
  std::optional<ScalarType> dtype;
  VaryingShape sizes;
  // A fresh result laid out like its inputs: contiguous when every tensor
  // input is known to be (pointwise ops, reductions, copies).
  bool contiguous_like_inputs = false;
  // Always contiguous, whatever the inputs (factories, contiguous()).
  bool contiguous = false;
  // Exact strides when the op takes them as an argument.
  VaryingShape strides;
};

// A list of tensors: its elements when the length is known, and a type
// every element has.
struct ListFacts {
  std::optional<std::vector<TypePtr>> elements;
  TypePtr each;
};

// What a formula says of one output; a formula returns one per schema
// return, or nothing at all when it cannot refine.
struct OutputFacts {
  enum class Kind { Unknown, Tensor, TensorList } kind = Kind::Unknown;
  TensorFacts tensor;                                // the tensor, or what every element of the list has
  std::optional<std::vector<TensorFacts>> elements;  // a list of known length
};

// What the analysis knows of values beyond their types.
class ValueFacts {
 public:
  // The value when it is known: a constant, or computed from known values
  // (sizes of refined tensors, arithmetic on them, lists of them).
  std::optional<IValue> known(const Value* v) const;
  // An int list whose length (and maybe some elements) is known.
  std::optional<DimList> intList(const Value* v) const;
  const ListFacts* tensorList(const Value* v) const;
  Wrapped wrapped(const Value* v) const;

  void setKnown(const Value* v, IValue value) { facts_[v].known = std::move(value); }
  void setIntList(const Value* v, DimList list) { facts_[v].int_list = std::move(list); }
  void setTensorList(const Value* v, ListFacts facts) { facts_[v].tensor_list = std::move(facts); }
  void setWrapped(const Value* v, Wrapped w) { facts_[v].wrapped = w; }
  void forget(const Value* v) { facts_.erase(v); }

 private:
  struct Facts {
    std::optional<IValue> known;
    std::optional<DimList> int_list;
    std::optional<ListFacts> tensor_list;
    Wrapped wrapped = Wrapped::No;
  };
  const Facts* find(const Value* v) const;
  std::unordered_map<const Value*, Facts> facts_;
};

// A node's arguments as a formula sees them, by schema argument name.
class Args {
 public:
  Args(const Node* node, const FunctionSchema& schema, const ValueFacts& facts)
      : node_(node), schema_(schema), facts_(facts) {}
  const Node* node() const { return node_; }
  const FunctionSchema& schema() const { return schema_; }
  const ValueFacts& facts() const { return facts_; }
  bool has(std::string_view name) const { return index(name).has_value(); }
  std::optional<size_t> index(std::string_view name) const;
  const Value* value(std::string_view name) const;
  // The refined tensor type of an argument (null when it is not a tensor).
  const TensorType* tensor(std::string_view name) const;
  std::optional<IValue> known(std::string_view name) const;
  std::optional<int64_t> knownInt(std::string_view name) const;
  std::optional<bool> knownBool(std::string_view name) const;
  // Whether the argument is None (absent or known to be).
  bool isNone(std::string_view name) const;
  // A ScalarType? argument: nullopt when unknown; a known None is Undefined.
  std::optional<ScalarType> dtypeArg(std::string_view name) const;
  std::optional<DimList> intList(std::string_view name) const;
  const ListFacts* tensorList(std::string_view name) const;

 private:
  const Node* node_;
  const FunctionSchema& schema_;
  const ValueFacts& facts_;
};

using Formula = ShapeRule;

// The formula for a node calling the operator of `schema`: the one its
// declaration names, or null.
Formula findFormula(const Node* node, const FunctionSchema& schema);

// One tensor output of `dtype` and `sizes` (either may be unknown); the
// second is also known to be contiguous (a freshly allocated result).
OutputFacts tensorOut(std::optional<ScalarType> dtype, VaryingShape sizes);
OutputFacts contiguousOut(std::optional<ScalarType> dtype, VaryingShape sizes);

// The rules of pointwise operators, named by their declarations.
// One tensor: its dtype, float (integers promote), or bool; its sizes.
std::vector<OutputFacts> sameDtype(const Args& a);
std::vector<OutputFacts> floatDtype(const Args& a);
std::vector<OutputFacts> boolDtype(const Args& a);
std::vector<OutputFacts> frexp(const Args& a);
// Broadcasting ops with promoted dtypes (trueDivide: integers give float).
std::vector<OutputFacts> arithmetic(const Args& a);
std::vector<OutputFacts> trueDivide(const Args& a);
std::vector<OutputFacts> divMode(const Args& a);
std::vector<OutputFacts> powOp(const Args& a);
std::vector<OutputFacts> clampOp(const Args& a);
std::vector<OutputFacts> clampMinOp(const Args& a);
std::vector<OutputFacts> clampMaxOp(const Args& a);
std::vector<OutputFacts> addcOp(const Args& a);
std::vector<OutputFacts> whereOp(const Args& a);
std::vector<OutputFacts> lerpOp(const Args& a);
std::vector<OutputFacts> thresholdBackwardOp(const Args& a);
// Broadcast sizes, bool results.
std::vector<OutputFacts> comparison(const Args& a);
// where(condition): one int64 index tensor per dim of condition.
std::vector<OutputFacts> whereCondition(const Args& a);

// The rules of the other operators, named by their declarations
// (kiln/ops/*_ops.cpp), in alphabetical order.
std::vector<OutputFacts> addmm(const Args& a);
std::vector<OutputFacts> addmv(const Args& a);
std::vector<OutputFacts> addr(const Args& a);
std::vector<OutputFacts> addbmm(const Args& a);
std::vector<OutputFacts> alias(const Args& a);
std::vector<OutputFacts> arange(const Args& a);
std::vector<OutputFacts> argsortOp(const Args& a);
std::vector<OutputFacts> asStrided(const Args& a);
std::vector<OutputFacts> baddbmm(const Args& a);
std::vector<OutputFacts> bmm(const Args& a);
std::vector<OutputFacts> cat(const Args& a);
std::vector<OutputFacts> chunk(const Args& a);
std::vector<OutputFacts> contiguousOp(const Args& a);
std::vector<OutputFacts> cumulative(const Args& a);
std::vector<OutputFacts> diagonal(const Args& a);
std::vector<OutputFacts> dot(const Args& a);
std::vector<OutputFacts> emptyStrided(const Args& a);
std::vector<OutputFacts> expand(const Args& a);
std::vector<OutputFacts> expandAs(const Args& a);
std::vector<OutputFacts> eye(const Args& a);
std::vector<OutputFacts> flatten(const Args& a);
std::vector<OutputFacts> floatFactory(const Args& a);
std::vector<OutputFacts> full(const Args& a);
std::vector<OutputFacts> index(const Args& a);
std::vector<OutputFacts> indexSelect(const Args& a);
std::vector<OutputFacts> internalSoftmax(const Args& a);
std::vector<OutputFacts> likeFactory(const Args& a);
std::vector<OutputFacts> likeSelf(const Args& a);
std::vector<OutputFacts> linear(const Args& a);
std::vector<OutputFacts> linspace(const Args& a);
std::vector<OutputFacts> longFactory(const Args& a);
std::vector<OutputFacts> mT(const Args& a);
std::vector<OutputFacts> maskedFill(const Args& a);
std::vector<OutputFacts> maskedSelect(const Args& a);
std::vector<OutputFacts> matmul(const Args& a);
std::vector<OutputFacts> mm(const Args& a);
std::vector<OutputFacts> movedim(const Args& a);
std::vector<OutputFacts> mv(const Args& a);
std::vector<OutputFacts> narrow(const Args& a);
std::vector<OutputFacts> newFactory(const Args& a);
std::vector<OutputFacts> nonzero(const Args& a);
std::vector<OutputFacts> numpyT(const Args& a);
std::vector<OutputFacts> outer(const Args& a);
std::vector<OutputFacts> permute(const Args& a);
std::vector<OutputFacts> randperm(const Args& a);
std::vector<OutputFacts> ravel(const Args& a);
std::vector<OutputFacts> reduceBool(const Args& a);
std::vector<OutputFacts> reduceDtype(const Args& a);
std::vector<OutputFacts> reduceFloat(const Args& a);
std::vector<OutputFacts> reduceLong(const Args& a);
std::vector<OutputFacts> reducePair(const Args& a);
std::vector<OutputFacts> reduceSame(const Args& a);
std::vector<OutputFacts> reduceUpcast(const Args& a);
std::vector<OutputFacts> reduceWithIndices(const Args& a);
std::vector<OutputFacts> repeat(const Args& a);
std::vector<OutputFacts> scalarTensor(const Args& a);
std::vector<OutputFacts> select(const Args& a);
std::vector<OutputFacts> slice(const Args& a);
std::vector<OutputFacts> softmaxOp(const Args& a);
std::vector<OutputFacts> sortOp(const Args& a);
std::vector<OutputFacts> split(const Args& a);
std::vector<OutputFacts> splitWithSizes(const Args& a);
std::vector<OutputFacts> squeeze(const Args& a);
std::vector<OutputFacts> stack(const Args& a);
std::vector<OutputFacts> take(const Args& a);
std::vector<OutputFacts> tensorFromData(const Args& a);
std::vector<OutputFacts> tensorSplit(const Args& a);
std::vector<OutputFacts> to(const Args& a);
std::vector<OutputFacts> topk(const Args& a);
std::vector<OutputFacts> transpose(const Args& a);
std::vector<OutputFacts> transpose2d(const Args& a);
std::vector<OutputFacts> typeAs(const Args& a);
std::vector<OutputFacts> unbind(const Args& a);
std::vector<OutputFacts> unflatten(const Args& a);
std::vector<OutputFacts> unfold(const Args& a);
std::vector<OutputFacts> unsqueeze(const Args& a);
std::vector<OutputFacts> view(const Args& a);
std::vector<OutputFacts> viewAsOther(const Args& a);
std::vector<OutputFacts> viewDtype(const Args& a);

// What the operator's description says of a node (OpDescription::traits):
// ops that never produce a tensor requiring grad (factories, detach, ...);
bool neverRequiresGrad(const Node* n);
// ops whose other tensor arguments only give metadata (x.to(y), x.view_as(y));
bool onlySelfRequiresGrad(const Node* n);
// ops whose output sizes depend on tensor values (nonzero, masked_select,
// indexing with a bool mask, ...);
bool valueDependent(const Node* n, const ValueFacts& facts);
// ops whose run time grows faster than their inputs (matrix products,
// repeat): the analysis uses their formulas rather than running them;
bool expensiveToRun(const Node* n);
// factories: formulas know their results exactly, running them is waste.
bool isFactory(const Node* n);

// The result dtype of PyTorch's type promotion over these operands, when
// every possibility for the unknowns agrees.
struct Operand {
  std::optional<ScalarType> dtype;
  std::optional<bool> zero_dim;  // a 0-dim tensor (or a Python number)
  Wrapped wrapped = Wrapped::No;
};
std::optional<ScalarType> promoteOperands(const std::vector<Operand>& operands);

}  // namespace kiln::shapes
