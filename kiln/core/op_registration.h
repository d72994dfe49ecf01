#pragma once
// Declaring operators. One declaration gives an operator its schema and its
// kernel; the boxing (popping typed arguments from the Stack, pushing the
// results) is generated from the C++ signature of the kernel:
//
//   KILN_REGISTER_OPS(
//     op("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
//        [](const Tensor& self, const Tensor& other, const Scalar& alpha) { return add(self, other, alpha); }),
//   );
//
// Parameter types: Tensor, Scalar, int64_t, double, bool, std::string,
// ScalarType (from an int), IntArrayRef/DimVector (from int[]),
// std::vector<double>, std::vector<Tensor>, IValue, and std::optional of
// those. Return types: Tensor, scalars, std::vector<Tensor>, std::tuple of
// them, IValue, or void.
#include <optional>
#include <tuple>
#include <type_traits>

#include "kiln/core/derivative_spec.h"
#include "kiln/core/op_description.h"
#include "kiln/core/operator.h"

namespace kiln {
namespace detail {

template <typename T>
struct ArgFrom;

template <>
struct ArgFrom<Tensor> {
  static Tensor get(const IValue& v) { return v.toTensor(); }
};
template <>
struct ArgFrom<Scalar> {
  static Scalar get(const IValue& v) { return v.toScalar(); }
};
template <>
struct ArgFrom<int64_t> {
  static int64_t get(const IValue& v) { return v.toInt(); }
};
template <>
struct ArgFrom<double> {
  static double get(const IValue& v) { return v.toDouble(); }
};
template <>
struct ArgFrom<bool> {
  static bool get(const IValue& v) { return v.toBool(); }
};
template <>
struct ArgFrom<std::string> {
  static std::string get(const IValue& v) { return v.toStringRef(); }
};
template <>
struct ArgFrom<ScalarType> {
  static ScalarType get(const IValue& v) { return scalarTypeFromInt(v.toInt()); }
};
template <>
struct ArgFrom<DimVector> {
  static DimVector get(const IValue& v) { return v.toDimVector(); }
};
template <>
struct ArgFrom<std::vector<double>> {
  static std::vector<double> get(const IValue& v) { return v.toDoubleVector(); }
};
template <>
struct ArgFrom<std::vector<Tensor>> {
  static std::vector<Tensor> get(const IValue& v) { return v.toTensorVector(); }
};
template <>
struct ArgFrom<IValue> {
  static IValue get(const IValue& v) { return v; }
};
template <typename T>
struct ArgFrom<std::optional<T>> {
  static std::optional<T> get(const IValue& v) {
    if (v.isNone()) return std::nullopt;
    return ArgFrom<T>::get(v);
  }
};

// IntArrayRef parameters need storage that outlives the call: a DimVector.
template <typename T>
struct ArgStorage {
  using type = std::decay_t<T>;
};
template <>
struct ArgStorage<IntArrayRef> {
  using type = DimVector;
};
template <>
struct ArgStorage<std::optional<IntArrayRef>> {
  using type = std::optional<DimVector>;
};

// One result as an IValue.
inline IValue resultValue(Tensor v) { return IValue(std::move(v)); }
inline IValue resultValue(const Scalar& v) { return IValue(v); }
inline IValue resultValue(int64_t v) { return IValue(v); }
inline IValue resultValue(double v) { return IValue(v); }
inline IValue resultValue(bool v) { return IValue(v); }
inline IValue resultValue(std::string v) { return IValue(std::move(v)); }
inline IValue resultValue(IValue v) { return v; }
inline IValue resultValue(const std::vector<Tensor>& v) { return IValue(v); }
inline IValue resultValue(const DimVector& v) { return IValue(IntArrayRef(v)); }

template <typename T>
void pushResult(Stack& stack, T v) {
  stack.push_back(resultValue(std::move(v)));
}
template <typename... Ts>
void pushResult(Stack& stack, std::tuple<Ts...> v) {
  std::apply([&](auto&&... elems) { (pushResult(stack, std::move(elems)), ...); }, std::move(v));
}

template <typename T>
constexpr bool kIsTuple = false;
template <typename... Ts>
constexpr bool kIsTuple<std::tuple<Ts...>> = true;

template <typename F>
struct FunctionTraits : FunctionTraits<decltype(&F::operator())> {};
template <typename R, typename... Args>
struct FunctionTraits<R (*)(Args...)> {
  using result = R;
  using args = std::tuple<Args...>;
  static constexpr size_t arity = sizeof...(Args);
};
template <typename C, typename R, typename... Args>
struct FunctionTraits<R (C::*)(Args...) const> : FunctionTraits<R (*)(Args...)> {};
template <typename C, typename R, typename... Args>
struct FunctionTraits<R (C::*)(Args...)> : FunctionTraits<R (*)(Args...)> {};

template <typename F, size_t... I>
void callBoxed(const F& f, Stack& stack, std::index_sequence<I...>) {
  using Args = typename FunctionTraits<F>::args;
  constexpr size_t n = sizeof...(I);
  using Result = typename FunctionTraits<F>::result;
  const size_t base = stack.size() - n;
  // Convert every argument first: they all read the stack before it shrinks.
  std::tuple<typename ArgStorage<std::decay_t<std::tuple_element_t<I, Args>>>::type...> args{
      ArgFrom<typename ArgStorage<std::decay_t<std::tuple_element_t<I, Args>>>::type>::get(stack[base + I])...};
  if constexpr (n > 0 && !std::is_void_v<Result> && !kIsTuple<Result>) {
    // One result: it takes the first argument's slot, so the common case
    // neither shrinks nor grows the vector. The arguments are released
    // before the kernel runs, as a moved value must be.
    while (stack.size() > base + 1) stack.pop_back();
    stack[base] = IValue();
    stack[base] = resultValue(f(std::get<I>(args)...));
  } else {
    stack.resize(base);
    if constexpr (std::is_void_v<Result>) {
      f(std::get<I>(args)...);
    } else {
      pushResult(stack, f(std::get<I>(args)...));
    }
  }
}

template <typename F>
Operation boxKernel(F f) {
  return
      [f = std::move(f)](Stack& stack) { callBoxed(f, stack, std::make_index_sequence<FunctionTraits<F>::arity>()); };
}

}  // namespace detail

// One operator's declaration: its schema, its kernel and, given with the
// builders below, its description (op_description.h):
//
//   op("aten::exp(Tensor self) -> Tensor", kernel).shape(shapes::floatDtype).pointwise(spec)
struct OpDeclaration {
  const char* schema;
  Operation operation;
  OperationCreator creator;
  size_t kernel_arity;
  std::shared_ptr<OpDescription> description;  // null: the operator has none

  OpDeclaration shape(ShapeRule rule) && {
    return std::move(describe([&](OpDescription& d) { d.shape = rule; }));
  }
  OpDeclaration pointwise(std::shared_ptr<const PointwiseSpec> spec) && {
    return std::move(describe([&](OpDescription& d) { d.pointwise = std::move(spec); }));
  }
  // Marks an alias: `target` is the qualified name of the operator it is
  // another name of ("aten::abs").
  OpDeclaration aliasOf(const char* target) && {
    return std::move(describe([&](OpDescription& d) { d.alias_of = Symbol::fromQualString(target); }));
  }
  OpDeclaration normalize(NormalizeRule rule) && {
    return std::move(describe([&](OpDescription& d) { d.normalize = rule; }));
  }
  OpDeclaration fold(FoldRule rule) && {
    return std::move(describe([&](OpDescription& d) { d.fold = rule; }));
  }
  OpDeclaration traits(OpTrait traits) && {
    return std::move(describe([&](OpDescription& d) { d.traits = d.traits | traits; }));
  }
  // The derivative (derivative_spec.h), one "input: expression" per
  // differentiable input, as in derivatives.yaml:
  //   .derivative({"self: grad * other", "other: grad * self"})
  // An entry "non_differentiable: name" marks a result that carries no gradient.
  OpDeclaration derivative(std::initializer_list<const char*> formulas) && {
    auto spec = std::make_shared<DerivativeSpec>();
    for (const char* entry : formulas) {
      std::string text(entry);
      size_t colon = text.find(':');
      if (colon == std::string::npos) continue;
      std::string name = text.substr(0, colon);
      size_t start = text.find_first_not_of(' ', colon + 1);
      std::string expr = start == std::string::npos ? "" : text.substr(start);
      if (name == "non_differentiable") {
        spec->non_differentiable_outputs.push_back(expr);
      } else {
        spec->formulas.emplace_back(std::move(name), std::move(expr));
      }
    }
    return std::move(describe([&](OpDescription& d) { d.derivative = std::move(spec); }));
  }
  // Marks an operator torch 1.13 has no derivative for either (an
  // inference-only fast path, a forward-only kernel): `why` says so, and
  // the autograd coverage test checks it against torch.
  OpDeclaration notDifferentiable(const char* why) && {
    auto spec = std::make_shared<DerivativeSpec>();
    spec->not_differentiable = why;
    return std::move(describe([&](OpDescription& d) { d.derivative = std::move(spec); }));
  }

 private:
  template <typename F>
  OpDeclaration& describe(const F& f) {
    if (!description) description = std::make_shared<OpDescription>();
    f(*description);
    return *this;
  }
};

// A typed kernel for a schema.
template <typename F>
OpDeclaration op(const char* schema, F kernel) {
  return {schema, detail::boxKernel(std::move(kernel)), nullptr, detail::FunctionTraits<F>::arity, nullptr};
}
// A kernel that works on the stack itself (variadic and generic ops).
inline OpDeclaration stackOp(const char* schema, Operation operation) {
  return {schema, std::move(operation), nullptr, static_cast<size_t>(-1), nullptr};
}
// An operation made per node (see OperationCreator). `schema` may be a bare
// kind such as "prim::TupleConstruct" for nodes PyTorch gives no schema.
inline OpDeclaration nodeOp(const char* schema, OperationCreator creator) {
  return {schema, nullptr, std::move(creator), static_cast<size_t>(-1), nullptr};
}

// Registers the declarations when constructed (at static initialization for
// namespace-scope objects). A schema that does not parse, or whose argument
// count differs from its kernel's, aborts registration with a message.
class RegisterOps {
 public:
  RegisterOps(std::initializer_list<OpDeclaration> declarations, OpExposure exposure = OpExposure::Library);
};

}  // namespace kiln

#define KILN_OPS_CONCAT_INNER(a, b) a##b
#define KILN_OPS_CONCAT(a, b) KILN_OPS_CONCAT_INNER(a, b)
#define KILN_REGISTER_OPS(...) \
  static const ::kiln::RegisterOps KILN_OPS_CONCAT(kiln_register_ops_, __COUNTER__)({__VA_ARGS__})
// TorchScript builtins that are not part of the Python tensor API (see OpExposure).
#define KILN_REGISTER_SCRIPT_OPS(...)                                                              \
  static const ::kiln::RegisterOps KILN_OPS_CONCAT(kiln_register_ops_, __COUNTER__)({__VA_ARGS__}, \
                                                                                    ::kiln::OpExposure::ScriptOnly)
