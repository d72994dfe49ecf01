#pragma once
// How one element of a pointwise operator is typed and computed: the part
// of an operator's description (kiln/core/op_description.h) that the fuser
// generates kernels from. An operator declares it where it is registered:
//
//   op("aten::exp(Tensor self) -> Tensor", [](const Tensor& self) { return exp(self); })
//       .pointwise(elementwise(TypeRule::PromoteFloat, DtypeSet::Floating, "m_exp($self)"))
//
// The expression is C++ over one element, written with the helpers of
// kiln/tensor/kernels/kernel_math.h (k_*, m_*), which the eager kernel of the
// same operator calls too, so that eager and fused results are bit-identical.
// `$name` is the named argument's expression (operands already cast to the
// compute type), `$T` the compute type.
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/ivalue.h"
#include "kiln/core/op_description.h"
#include "kiln/tensor/scalar_type.h"

namespace kiln {
struct Argument;
struct PointwiseSpec;

namespace pointwise {

// What type inference knows of one value of a kernel.
struct ValueType {
  enum class Kind : uint8_t {
    Tensor,         // at least one dimension
    ZeroDimTensor,  // 0-dim: every tensor it was computed from was 0-dim
    Number,         // a Python number (int, float, bool): a wrapped number in promotion
    None,
    Other,  // a constant the generator only reads (strings)
  };
  Kind kind = Kind::Other;
  ScalarType dtype = ScalarType::Undefined;  // tensors; numbers: Long, Double or Bool
  std::optional<IValue> constant;            // prim::Constant values

  bool isTensor() const { return kind == Kind::Tensor || kind == Kind::ZeroDimTensor; }
  bool isNone() const { return kind == Kind::None; }
};

// How an op's result dtype follows from its operands.
enum class TypeRule : uint8_t {
  Promote,       // PyTorch's result_type of the operands
  PromoteFloat,  // result_type, with integers and bool computed in the default float dtype
  Predicate,     // computed in result_type of the operands; the result is bool
  Division,      // PromoteFloat without a rounding_mode, Promote with one
  Cast,          // the `dtype` argument, or `other`'s dtype; computed in self's dtype
};

// The compute dtypes the op's eager kernel accepts; on any other it raises.
enum class DtypeSet : uint8_t { All, NoBool, Floating, IntegralOrBool };

// How the generator uses one schema argument.
enum class ArgRole : uint8_t {
  Operand,      // a tensor or number that takes part in type promotion (None allowed where optional)
  Condition,    // where's condition: read as bool, not promoted
  Param,        // a number used as given: alpha, value, weight (never promoted)
  DtypeSource,  // type_as/to's `other`: only its dtype matters
  Constant,     // must be a constant: modes, dtypes, flags
};

// One node during kernel type inference and generation.
struct OpTyping {
  const Node* node = nullptr;
  const PointwiseSpec* op = nullptr;
  std::vector<ArgRole> roles;   // per schema argument
  std::vector<ValueType> args;  // per schema argument
  // Per schema argument, only while generating: the C++ expression of its
  // value (`raws`) and of that value cast to `compute` for operands.
  std::vector<std::string> raws;
  std::vector<std::string> exprs;
  ScalarType compute = ScalarType::Undefined;
  ScalarType result = ScalarType::Undefined;
  bool dimensioned = false;  // some tensor operand has dimensions: so has the result

  // The argument named `name`, which the schema must have.
  size_t index(const char* name) const;
  const ValueType& arg(const char* name) const { return args[index(name)]; }
  const std::string& expr(const char* name) const { return exprs[index(name)]; }
  const std::string& raw(const char* name) const { return raws[index(name)]; }
  // The argument named `name`, or null when the schema has none.
  const ValueType* find(const char* name) const;
};

// Conditions on dtypes and constant values under which the eager kernel
// would raise (a generated kernel cannot): false with `why` set.
using PointwiseCheck = bool (*)(const OpTyping& t, std::string* why);
// Writes the element expression where the template is not enough.
using PointwiseEmit = std::string (*)(const OpTyping& t);

// Sets `*why` (when given) and returns false: how the checks say no.
bool refuse(std::string* why, std::string reason);
// Whether the number argument `s` converts to `t` without the overflow on
// which the eager kernel raises. A runtime number passes only when no value
// of its type could overflow.
bool numberFits(const ValueType& s, ScalarType t, const char* what, std::string* why);

// How `arg` of an op with `rule` is used.
ArgRole argRole(const Argument& arg, TypeRule rule);
// How `arg` of the op `spec` describes is used: its `params` are Params.
ArgRole argRole(const Argument& arg, const PointwiseSpec& spec);
// The dtypes kernels compute in: bool, the integers, float32 and float64.
bool isKernelDtype(ScalarType t);
// The C++ type of a kernel dtype.
const char* cppType(ScalarType t);
// The expression `v` (of dtype `from`) converted to `to`, as kiln converts.
std::string castExpr(const std::string& v, ScalarType from, ScalarType to);
// A C++ literal of a constant number (exact for doubles).
std::string cppLiteral(const IValue& v);
std::string cppLiteral(double v);

}  // namespace pointwise

struct PointwiseSpec {
  pointwise::TypeRule rule;
  pointwise::DtypeSet dtypes;
  // One element's value (see the top of this file); empty when `emit` writes it.
  std::string expr;
  pointwise::PointwiseCheck check = nullptr;
  pointwise::PointwiseEmit emit = nullptr;
  // Number arguments read as parameters (never promoted) besides alpha,
  // value and weight: elu's alpha, scale and input_scale, hardtanh's bounds.
  std::vector<std::string> params;
};

// A spec to hang on a declaration with `.pointwise(...)`; `expr` may be null
// when `emit` writes the expression.
inline std::shared_ptr<const PointwiseSpec> elementwise(pointwise::TypeRule rule, pointwise::DtypeSet dtypes,
                                                        const char* expr, pointwise::PointwiseCheck check = nullptr,
                                                        pointwise::PointwiseEmit emit = nullptr) {
  return std::make_shared<const PointwiseSpec>(PointwiseSpec{rule, dtypes, expr ? expr : "", check, emit, {}});
}

// The spec of an element expression written as C++ over the schema's
// argument names and the compute type `T` (the text of the lambda that the
// eager kernel runs, kiln/ops/elementwise_ops.h): each of `argument_names`
// and `T` becomes a `$` template name.
std::shared_ptr<const PointwiseSpec> elementwiseFromCpp(pointwise::TypeRule rule, pointwise::DtypeSet dtypes,
                                                        std::string_view cpp,
                                                        std::initializer_list<std::string_view> argument_names);

// The same, for an expression that also reads the number parameters named
// in `params` (written "(a, b)", the macro's list): each is converted to `T`,
// as the eager kernel converts them before the loop.
std::shared_ptr<const PointwiseSpec> elementwiseFromCpp(pointwise::TypeRule rule, pointwise::DtypeSet dtypes,
                                                        std::string_view cpp, std::string_view params);

// The pointwise spec of the overload `n` calls, or null.
const PointwiseSpec* pointwiseSpecOf(const Node* n);

}  // namespace kiln
