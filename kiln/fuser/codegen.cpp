// Kernel generation. Type inference walks the kernel graph once, giving
// every value its kind (tensor, 0-dim tensor, number) and dtype by PyTorch's
// result_type rules, and rejects what kiln's kernels would raise on; the
// generator then writes each node as one C++ statement in an element loop,
// named after its IR value, from the element expression of the op's
// description (kiln/ops/pointwise_spec.h) and the helpers of the kernel math
// header (kiln/tensor/kernels/kernel_math.h), which opens every kernel.
#include "kiln/fuser/codegen.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "kiln/core/function_schema.h"
#include "kiln/fuser/kernel_prelude.h"
#include "kiln/ir/graph.h"
#include "kiln/ops/pointwise_spec.h"
#include "kiln/tensor/type_promotion.h"
#include "kiln/util/jit_log.h"

namespace kiln::fuser {

using pointwise::ArgRole;
using pointwise::DtypeSet;
using pointwise::OpTyping;
using pointwise::refuse;
using pointwise::TypeRule;
using pointwise::ValueType;

namespace {

std::string dtypeName(ScalarType t) { return std::string(scalarTypeName(t)); }

// PyTorch's result_type of the operands (kiln/tensor/type_promotion.h).
ScalarType resultType(const std::vector<const ValueType*>& operands) {
  std::vector<PromotionOperand> tiers;
  for (const ValueType* v : operands) {
    const PromotionTier tier = v->kind == ValueType::Kind::Number          ? PromotionTier::WrappedNumber
                               : v->kind == ValueType::Kind::ZeroDimTensor ? PromotionTier::ZeroDim
                                                                           : PromotionTier::Dimensioned;
    tiers.push_back({v->dtype, tier});
  }
  return kiln::resultType(ArrayRef<PromotionOperand>(tiers.data(), tiers.size()));
}

bool inDtypeSet(ScalarType t, DtypeSet set) {
  switch (set) {
    case DtypeSet::All: return true;
    case DtypeSet::NoBool: return t != ScalarType::Bool;
    case DtypeSet::Floating: return isFloatingType(t);
    case DtypeSet::IntegralOrBool: return isIntegralType(t, /*include_bool=*/true);
  }
  return false;
}

// The dtype a dtype argument's int names, when kernels compute in it.
std::optional<ScalarType> kernelDtypeOf(int64_t code) {
  if (code < 0 || code >= kNumScalarTypes || !pointwise::isKernelDtype(static_cast<ScalarType>(code)))
    return std::nullopt;
  return static_cast<ScalarType>(code);
}

// The dtype an aten::to / type_as converts to.
std::optional<ScalarType> castTarget(const OpTyping& t, std::string* why) {
  if (const ValueType* other = t.find("other")) return other->dtype;
  const ValueType& dtype = t.arg("dtype");
  if (dtype.isNone()) return t.arg("self").dtype;
  auto target = kernelDtypeOf(dtype.constant->toInt());
  if (!target) refuse(why, "conversion to dtype " + std::to_string(dtype.constant->toInt()) + " is not supported");
  return target;
}

bool roleAccepts(ArgRole role, const ValueType& v) {
  switch (role) {
    case ArgRole::Operand: return v.isTensor() || v.kind == ValueType::Kind::Number || v.isNone();
    case ArgRole::Condition:
    case ArgRole::DtypeSource: return v.isTensor();
    case ArgRole::Param: return v.kind == ValueType::Kind::Number;
    case ArgRole::Constant: return v.constant.has_value();
  }
  return false;
}

std::string nodeName(const Node* n) { return n->kind().toQualString(); }

// Types one op node from the types of its inputs.
std::optional<OpTyping> typeNode(const Node* n, const std::unordered_map<const Value*, ValueType>& values,
                                 std::string* why) {
  const PointwiseSpec* op = pointwiseSpecOf(n);
  if (!op || n->outputs().size() != 1 || !n->blocks().empty()) {
    refuse(why, nodeName(n) + " is not an op the kernel generator can write");
    return std::nullopt;
  }
  const FunctionSchema& schema = *n->maybeSchema();
  OpTyping t;
  t.node = n;
  t.op = op;
  std::vector<const ValueType*> operands;
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const ArgRole role = pointwise::argRole(schema.arguments()[i], *op);
    const ValueType& v = values.at(n->input(i));
    if (!roleAccepts(role, v)) {
      refuse(why, nodeName(n) + ": argument '" + schema.arguments()[i].name + "' is not what the generator supports");
      return std::nullopt;
    }
    t.roles.push_back(role);
    t.args.push_back(v);
    if (role == ArgRole::Operand && !v.isNone()) operands.push_back(&v);
    if ((role == ArgRole::Operand || role == ArgRole::Condition) && v.kind == ValueType::Kind::Tensor)
      t.dimensioned = true;
  }
  if (op->rule == TypeRule::Cast) {
    t.compute = t.arg("self").dtype;
    auto target = castTarget(t, why);
    if (!target) return std::nullopt;
    t.result = *target;
  } else {
    t.compute = resultType(operands);
    bool to_float = op->rule == TypeRule::PromoteFloat;
    if (op->rule == TypeRule::Division) to_float = t.arg("rounding_mode").isNone();
    if (to_float && !isFloatingType(t.compute)) t.compute = defaultFloatType();
    t.result = op->rule == TypeRule::Predicate ? ScalarType::Bool : t.compute;
  }
  if (!pointwise::isKernelDtype(t.compute) || !inDtypeSet(t.compute, op->dtypes)) {
    refuse(why, nodeName(n) + " on " + dtypeName(t.compute) + " is not supported by the kernel generator");
    return std::nullopt;
  }
  std::string reason;
  if (op->check && !op->check(t, &reason)) {
    refuse(why, nodeName(n) + ": " + reason);
    return std::nullopt;
  }
  return t;
}

std::optional<ValueType> constantType(const Node* n, std::string* why) {
  const std::optional<IValue> value = toIValue(n->output());
  ValueType v;
  v.constant = value;
  if (value && value->isInt()) {
    v.kind = ValueType::Kind::Number;
    v.dtype = ScalarType::Long;
  } else if (value && value->isDouble()) {
    v.kind = ValueType::Kind::Number;
    v.dtype = ScalarType::Double;
  } else if (value && value->isBool()) {
    v.kind = ValueType::Kind::Number;
    v.dtype = ScalarType::Bool;
  } else if (value && value->isNone()) {
    v.kind = ValueType::Kind::None;
  } else if (value && value->isString()) {
    v.kind = ValueType::Kind::Other;
  } else {
    refuse(why, "a constant the kernel generator does not support");
    return std::nullopt;
  }
  return v;
}

struct GraphTyping {
  std::unordered_map<const Value*, ValueType> values;
  std::unordered_map<const Node*, OpTyping> nodes;
};

std::optional<GraphTyping> typeGraph(const Graph& graph, const std::vector<KernelInput>& inputs, std::string* why) {
  GraphTyping typing;
  if (graph.inputs().size() != inputs.size()) {
    refuse(why, "the kernel graph has " + std::to_string(graph.inputs().size()) + " inputs but " +
                    std::to_string(inputs.size()) + " were described");
    return std::nullopt;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const KernelInput& in = inputs[i];
    ValueType v;
    v.dtype = in.dtype;
    switch (in.kind) {
      case InputKind::Tensor: v.kind = ValueType::Kind::Tensor; break;
      case InputKind::ZeroDimTensor: v.kind = ValueType::Kind::ZeroDimTensor; break;
      case InputKind::Scalar: v.kind = ValueType::Kind::Number; break;
    }
    const bool number_ok =
        in.dtype == ScalarType::Long || in.dtype == ScalarType::Double || in.dtype == ScalarType::Bool;
    if (in.kind == InputKind::Scalar ? !number_ok : !pointwise::isKernelDtype(in.dtype)) {
      refuse(why, "input " + std::to_string(i) + " has dtype " + dtypeName(in.dtype) +
                      ", which the kernel generator does not support");
      return std::nullopt;
    }
    typing.values.emplace(graph.inputs()[i], v);
  }
  for (const Node* n : graph.nodes()) {
    std::optional<ValueType> v;
    if (n->kind() == prim::Constant) {
      v = constantType(n, why);
    } else if (auto t = typeNode(n, typing.values, why)) {
      v = ValueType{};
      v->kind = t->dimensioned ? ValueType::Kind::Tensor : ValueType::Kind::ZeroDimTensor;
      v->dtype = t->result;
      typing.nodes.emplace(n, std::move(*t));
    }
    if (!v) return std::nullopt;
    typing.values.emplace(n->output(), std::move(*v));
  }
  for (const Value* out : graph.outputs()) {
    if (!typing.values.at(out).isTensor()) {
      refuse(why, "a kernel output is not a tensor");
      return std::nullopt;
    }
  }
  return typing;
}

}  // namespace

bool isFusibleNode(const Node* n) {
  if (n->kind() == prim::Constant) {
    const TypeKind kind = n->output()->type()->kind();
    return kind == TypeKind::Int || kind == TypeKind::Float || kind == TypeKind::Bool || kind == TypeKind::None ||
           kind == TypeKind::String;
  }
  const PointwiseSpec* op = pointwiseSpecOf(n);
  if (!op || n->outputs().size() != 1 || !n->blocks().empty()) return false;
  auto knownUnsupported = [](const Value* v) {
    const auto* tensor = v->type()->cast<TensorType>();
    return tensor && tensor->scalarType() && !pointwise::isKernelDtype(*tensor->scalarType());
  };
  if (knownUnsupported(n->output())) return false;
  const FunctionSchema& schema = *n->maybeSchema();
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const Value* in = n->input(i);
    if (knownUnsupported(in)) return false;
    switch (pointwise::argRole(schema.arguments()[i], *op)) {
      case ArgRole::Constant: {
        const std::optional<IValue> value = toIValue(in);
        if (!value) return false;
        // A conversion to a dtype kernels do not compute in.
        if (schema.arguments()[i].name == "dtype" && value->isInt() && !kernelDtypeOf(value->toInt())) return false;
        break;
      }
      case ArgRole::Operand:
        // An optional tensor must be a tensor or None, not a runtime Optional.
        if (in->type()->kind() == TypeKind::Optional) return false;
        break;
      default: break;
    }
  }
  return true;
}

std::optional<std::vector<ScalarType>> inferKernelTypes(const Graph& kernel_graph,
                                                        const std::vector<KernelInput>& inputs, std::string* why) {
  auto typing = typeGraph(kernel_graph, inputs, why);
  if (!typing) return std::nullopt;
  std::vector<ScalarType> outputs;
  for (const Value* out : kernel_graph.outputs()) outputs.push_back(typing->values.at(out).dtype);
  return outputs;
}

namespace {

// Writes the kernel for one spec. Values are named after their IR names
// (`%x.1` is v_x_1); pointers are in_<name> and out<k>.
class KernelWriter {
 public:
  KernelWriter(const KernelSpec& spec, GraphTyping typing)
      : spec_(spec), graph_(*spec.graph), typing_(std::move(typing)) {}

  std::string write() {
    nameValues();
    collectOperands();
    out_ << "// Generated by kiln's CPU fuser for this kernel graph:\n";
    std::istringstream graph_text(namedAsInKernel());
    for (std::string line; std::getline(graph_text, line);) {
      // A backslash ending a comment line would splice the next line into it.
      std::replace(line.begin(), line.end(), '\\', '/');
      out_ << "//   " << line << "\n";
    }
    out_ << "// inputs:";
    for (const KernelInput& in : spec_.inputs) out_ << " " << inputKindName(in.kind) << ":" << scalarTypeName(in.dtype);
    out_ << "\n// loop rank " << spec_.ndim << ", operand layouts:";
    for (OperandLayout l : spec_.layouts) out_ << " " << layoutName(l);
    out_ << "\n" << detail::kKernelPrelude << "\n";
    out_ << "extern \"C\" void " << kKernelSymbol
         << "(int64_t begin, int64_t end, char* const* data, const int64_t* sizes, const int64_t* strides,\n"
         << "    const KernelScalar* scalars) {\n"
         << "  if (begin >= end) return;\n";
    writeInvariants();
    if (isFlat()) {
      writeFlatLoop();
    } else {
      writeStridedLoops();
    }
    out_ << "}\n";
    return out_.str();
  }

 private:
  struct Operand {
    const Value* value;  // the output or input value
    bool is_output;
    OperandLayout layout;
    std::string pointer;  // its data pointer
    std::string strides;  // Strided: its strides
    std::string stride;   // Strided: its inner stride
    std::string cursor;   // Strided: its element offset at the row start
  };

  static const char* inputKindName(InputKind k) {
    switch (k) {
      case InputKind::Tensor: return "tensor";
      case InputKind::ZeroDimTensor: return "0-dim";
      case InputKind::Scalar: return "number";
    }
    return "";
  }
  static const char* layoutName(OperandLayout l) {
    switch (l) {
      case OperandLayout::Contiguous: return "contiguous";
      case OperandLayout::Broadcast: return "broadcast";
      case OperandLayout::Strided: return "strided";
    }
    return "";
  }

  const char* typeOf(const Value* v) const { return pointwise::cppType(typing_.values.at(v).dtype); }
  // Bool tensors are read and written as bytes: GCC does not vectorize loads
  // and stores of C++ bool.
  bool isBool(const Value* v) const { return typing_.values.at(v).dtype == ScalarType::Bool; }
  const char* storageTypeOf(const Value* v) const { return isBool(v) ? "uint8_t" : typeOf(v); }
  std::string load(const Operand& op, const std::string& at) const {
    return op.pointer + "[" + at + "]" + (isBool(op.value) ? " != 0" : "");
  }

  // Names come from the values' debug names less their numeric suffixes
  // (`cx.18` is `v_cx`), else from their position in the kernel graph, never
  // from what differs between copies of one graph: the groups of an unrolled
  // loop's steps then give the same source, and share one kernel.
  void nameValues() {
    std::unordered_set<std::string> used;
    size_t position = 0;
    auto name = [&](const Value* v) {
      std::string base = v->hasDebugName() ? v->debugNameBase() : "";
      for (char& c : base)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      // (Appended, not `"v_" + ...`: GCC 12 warns falsely (-Wrestrict) on that form.)
      std::string n = "v_";
      n += base.empty() ? std::to_string(position) : base;
      while (!used.insert(n).second) {
        n += '_';
        n += std::to_string(position);
      }
      names_[v] = n;
      ++position;
    };
    for (const Value* v : graph_.inputs()) name(v);
    for (const Node* n : graph_.nodes()) name(n->output());
  }

  // The kernel graph's text with the values named as in the source, and
  // tensors typed as plain `Tensor`: the source depends on the dtypes, ranks
  // and layouts the spec lists below the graph, not on sizes, so inputs of
  // another size reuse the kernel.
  std::string namedAsInKernel() const {
    std::shared_ptr<Graph> copy = graph_.copy();
    auto rename = [&](const Value* from, Value* to) {
      to->setDebugName(names_.at(from));
      if (to->type()->cast<TensorType>()) to->setType(TensorType::get());
    };
    for (size_t i = 0; i < graph_.inputs().size(); ++i) rename(graph_.inputs()[i], copy->inputs()[i]);
    auto node = copy->nodes().begin();
    for (const Node* n : graph_.nodes()) rename(n->output(), (*node++)->output());
    return copy->toString(false);
  }

  void collectOperands() {
    size_t k = 0;
    auto add = [&](const Value* v, bool is_output) {
      KILN_INTERNAL_ASSERT(k < spec_.layouts.size(), "kernel spec: fewer layouts than tensor operands");
      const std::string base = is_output ? "out" + std::to_string(k) : names_.at(v).substr(2);
      operands_.push_back({v, is_output, spec_.layouts[k], is_output ? base : "in_" + base, "strides_" + base,
                           "stride_" + base, "at_" + base});
      ++k;
    };
    for (const Value* v : graph_.outputs()) add(v, true);
    for (size_t i = 0; i < graph_.inputs().size(); ++i)
      if (spec_.inputs[i].kind != InputKind::Scalar) add(graph_.inputs()[i], false);
    KILN_INTERNAL_ASSERT(k == spec_.layouts.size(), "kernel spec: more layouts than tensor operands");
  }

  bool isFlat() const {
    return std::all_of(operands_.begin(), operands_.end(),
                       [](const Operand& op) { return op.layout != OperandLayout::Strided; });
  }

  // Scalars, constants, data pointers and broadcast loads: everything the loop does not change.
  void writeInvariants() {
    size_t scalar_index = 0;
    for (size_t i = 0; i < graph_.inputs().size(); ++i) {
      if (spec_.inputs[i].kind != InputKind::Scalar) continue;
      const Value* v = graph_.inputs()[i];
      const ScalarType dtype = spec_.inputs[i].dtype;
      out_ << "  const " << pointwise::cppType(dtype) << " " << names_.at(v) << " = scalars[" << scalar_index++ << "]."
           << (dtype == ScalarType::Double ? "f"
               : dtype == ScalarType::Bool ? "i != 0"
                                           : "i")
           << ";\n";
    }
    for (const Node* n : graph_.nodes()) {
      if (n->kind() != prim::Constant) continue;
      const ValueType& v = typing_.values.at(n->output());
      if (v.kind != ValueType::Kind::Number) continue;
      out_ << "  const " << pointwise::cppType(v.dtype) << " " << names_.at(n->output()) << " = "
           << pointwise::cppLiteral(*v.constant) << ";\n";
    }
    for (size_t k = 0; k < operands_.size(); ++k) {
      const Operand& op = operands_[k];
      const char* type = storageTypeOf(op.value);
      out_ << "  " << (op.is_output ? "" : "const ") << type << "* __restrict " << op.pointer << " = ("
           << (op.is_output ? "" : "const ") << type << "*)data[" << k << "];\n";
    }
    for (const Operand& op : operands_) {
      if (!op.is_output && op.layout == OperandLayout::Broadcast)
        out_ << "  const " << typeOf(op.value) << " " << names_.at(op.value) << " = " << load(op, "0") << ";\n";
    }
  }

  // The loop body: loads, one statement per node, stores. `index(op)` is the
  // element index expression of a non-broadcast operand.
  template <typename Index>
  void writeBody(const std::string& indent, const Index& index) {
    for (const Operand& op : operands_) {
      if (op.is_output || op.layout == OperandLayout::Broadcast) continue;
      out_ << indent << "const " << typeOf(op.value) << " " << names_.at(op.value) << " = " << load(op, index(op))
           << ";\n";
    }
    for (const Node* n : graph_.nodes()) {
      if (n->kind() == prim::Constant) continue;
      out_ << indent << "const " << typeOf(n->output()) << " " << names_.at(n->output()) << " = "
           << expression(typing_.nodes.at(n)) << ";  // " << n->kind().toQualString() << "\n";
    }
    for (const Operand& op : operands_) {
      if (!op.is_output) continue;
      // A broadcast output (a 0-dim loop) has one element, written by every iteration alike.
      const std::string at = op.layout == OperandLayout::Broadcast ? "0" : index(op);
      out_ << indent << op.pointer << "[" << at << "] = " << names_.at(op.value) << ";\n";
    }
  }

  void writeFlatLoop() {
    out_ << "#pragma omp simd\n"
         << "  for (int64_t i = begin; i < end; ++i) {\n";
    writeBody("    ", [](const Operand&) { return std::string("i"); });
    out_ << "  }\n";
  }

  // Rows of the innermost dim: the start index is decomposed once, each
  // strided operand's offset is recomputed per row, and the row loop has a
  // unit-stride copy the compiler vectorizes.
  void writeStridedLoops() {
    const std::string nd = std::to_string(spec_.ndim);
    const std::string last = std::to_string(spec_.ndim - 1);
    out_ << "  int64_t index[" << nd << "];\n"
         << "  {\n"
         << "    int64_t rest = begin;\n"
         << "    for (int d = " << last << "; d >= 0; --d) {\n"
         << "      index[d] = rest % sizes[d];\n"
         << "      rest /= sizes[d];\n"
         << "    }\n"
         << "  }\n";
    std::vector<const Operand*> strided;
    for (size_t k = 0; k < operands_.size(); ++k) {
      const Operand& op = operands_[k];
      if (op.layout != OperandLayout::Strided) continue;
      strided.push_back(&op);
      out_ << "  const int64_t* " << op.strides << " = strides + " << k * static_cast<size_t>(spec_.ndim) << ";\n"
           << "  const int64_t " << op.stride << " = " << op.strides << "[" << last << "];\n";
    }
    out_ << "  for (int64_t row = begin; row < end;) {\n"
         << "    const int64_t n = sizes[" << last << "] - index[" << last << "] < end - row ? sizes[" << last
         << "] - index[" << last << "] : end - row;\n";
    for (const Operand* op : strided) {
      out_ << "    int64_t " << op->cursor << " = 0;\n"
           << "    for (int d = 0; d < " << nd << "; ++d) " << op->cursor << " += index[d] * " << op->strides
           << "[d];\n";
    }
    out_ << "    if (";
    for (size_t i = 0; i < strided.size(); ++i) out_ << (i ? " && " : "") << strided[i]->stride << " == 1";
    out_ << ") {\n"
         << "#pragma omp simd\n"
         << "      for (int64_t j = 0; j < n; ++j) {\n";
    writeBody("        ", [](const Operand& op) {
      return op.layout == OperandLayout::Strided ? op.cursor + " + j" : std::string("row + j");
    });
    out_ << "      }\n"
         << "    } else {\n"
         << "      for (int64_t j = 0; j < n; ++j) {\n";
    writeBody("        ", [](const Operand& op) {
      return op.layout == OperandLayout::Strided ? op.cursor + " + j * " + op.stride : std::string("row + j");
    });
    out_ << "      }\n"
         << "    }\n"
         << "    row += n;\n"
         << "    index[" << last << "] += n;\n"
         << "    for (int d = " << last << "; d > 0 && index[d] == sizes[d]; --d) {\n"
         << "      index[d] = 0;\n"
         << "      ++index[d - 1];\n"
         << "    }\n"
         << "  }\n";
  }

  std::string expression(OpTyping t) const {
    const FunctionSchema& schema = *t.node->maybeSchema();
    for (size_t i = 0; i < schema.arguments().size(); ++i) {
      const ValueType& v = t.args[i];
      const std::string raw = v.isTensor() || v.kind == ValueType::Kind::Number ? names_.at(t.node->input(i)) : "";
      std::string expr;
      switch (t.roles[i]) {
        case ArgRole::Operand:
          if (!v.isNone()) expr = pointwise::castExpr(raw, v.dtype, t.compute);
          break;
        case ArgRole::Condition: expr = pointwise::castExpr(raw, v.dtype, ScalarType::Bool); break;
        case ArgRole::Param: expr = raw; break;
        case ArgRole::DtypeSource:
        case ArgRole::Constant: break;
      }
      t.raws.push_back(raw);
      t.exprs.push_back(std::move(expr));
    }
    if (t.op->emit) return t.op->emit(t);
    return substitute(t.op->expr, t);
  }

  // The template with `$T` and `$<argument>` replaced.
  static std::string substitute(std::string_view pattern, const OpTyping& t) {
    std::string result;
    for (size_t i = 0; i < pattern.size();) {
      if (pattern[i] != '$') {
        result += pattern[i++];
        continue;
      }
      size_t end = i + 1;
      while (end < pattern.size() && (std::isalnum(static_cast<unsigned char>(pattern[end])) || pattern[end] == '_'))
        ++end;
      const std::string name(pattern.substr(i + 1, end - i - 1));
      if (name == "T") {
        result += pointwise::cppType(t.compute);
      } else {
        result += t.expr(name.c_str());
      }
      i = end;
    }
    return result;
  }

  const KernelSpec& spec_;
  const Graph& graph_;
  GraphTyping typing_;
  std::unordered_map<const Value*, std::string> names_;
  std::vector<Operand> operands_;
  std::ostringstream out_;
};

}  // namespace

std::string generateKernelSource(const KernelSpec& spec) {
  std::string why;
  auto typing = typeGraph(*spec.graph, spec.inputs, &why);
  KILN_INTERNAL_ASSERT(typing, "generateKernelSource: the kernel graph does not type: ", why);
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    KILN_INTERNAL_ASSERT(typing->values.at(spec.graph->outputs()[i]).dtype == spec.outputs[i],
                         "generateKernelSource: spec.outputs differ from inferKernelTypes");
  }
  std::string source = KernelWriter(spec, std::move(*typing)).write();
  GRAPH_DEBUG("fused kernel source:\n", source);
  return source;
}

}  // namespace kiln::fuser
