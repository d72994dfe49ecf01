#pragma once
// The fuser's op table (private to kiln/fuser): every pointwise op the kernel
// generator can write, by its exact registered schema, with how its result is
// typed and the C++ expression that computes one element. isFusibleNode,
// inferKernelTypes and generateKernelSource all read this one table, so an op
// is fusible exactly when the generator can type it and write it.
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/ivalue.h"
#include "kiln/tensor/scalar_type.h"

namespace kiln {
class Node;
struct Argument;

namespace fuser::detail {

// What type inference knows of one kernel-graph value.
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

// The compute dtypes kiln's kernel accepts; on any other it raises.
enum class DtypeSet : uint8_t { All, NoBool, Floating, IntegralOrBool };

// How the generator uses one schema argument.
enum class ArgRole : uint8_t {
  Operand,      // a tensor or number that takes part in type promotion (None allowed where optional)
  Condition,    // where's condition: read as bool, not promoted
  Param,        // a number used as given: alpha, value, weight (never promoted)
  DtypeSource,  // type_as/to's `other`: only its dtype matters
  Constant,     // must be a constant: modes, dtypes, flags
};

struct FusibleOp;

// One node during inference and generation.
struct OpTyping {
  const Node* node = nullptr;
  const FusibleOp* op = nullptr;
  std::vector<ArgRole> roles;      // per schema argument
  std::vector<ValueType> args;     // per schema argument
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

struct FusibleOp {
  const char* schema;  // exactly as kiln registers it
  TypeRule rule;
  DtypeSet dtypes;
  // One element's value: `$arg` is the named argument's expression (operands
  // already cast to the compute type), `$T` the compute type. Helpers (k_*,
  // m_*) live in the kernel prelude.
  const char* expr;
  // Conditions on dtypes and constant values under which kiln's kernel would
  // raise (or the generator cannot follow it): false with `why` set.
  bool (*check)(const OpTyping& t, std::string* why) = nullptr;
  // Writes the expression where the template is not enough.
  std::string (*emit)(const OpTyping& t) = nullptr;
};

// Sets `*why` (when given) and returns false: how the checks say no.
bool refuse(std::string* why, std::string reason);

// The table's rows whose schema kiln does not register as written (a test
// keeps this empty).
std::vector<std::string> unregisteredFusibleOps();
// The table entry for the overload `n` calls, or null.
const FusibleOp* findFusibleOp(const Node* n);
// How `arg` of an op with `rule` is used.
ArgRole argRole(const Argument& arg, TypeRule rule);

// The dtypes kernels compute in: bool, the integers, float32 and float64.
bool isKernelDtype(ScalarType t);
// The C++ type of a kernel dtype.
const char* cppType(ScalarType t);
// The expression `v` (of dtype `from`) converted to `to`, as kiln converts.
std::string castExpr(const std::string& v, ScalarType from, ScalarType to);
// A C++ literal of a constant number (exact for doubles).
std::string cppLiteral(const IValue& v);
std::string cppLiteral(double v);

}  // namespace fuser::detail
}  // namespace kiln
