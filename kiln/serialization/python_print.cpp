#include "kiln/serialization/python_print.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "kiln/ir/graph.h"
#include "kiln/runtime/function.h"
#include "kiln/tensor/copy.h"
#include "kiln/util/error.h"

namespace kiln {

namespace {

bool isValidIdentifierChar(char c, size_t pos) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (pos > 0 && c >= '0' && c <= '9');
}

bool isValidIdentifier(const std::string& name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!isValidIdentifierChar(name[i], i)) return false;
  }
  return true;
}

// Names the printed code cannot give a value: the parser's own names and the
// Python keywords (PyTorch 1.13's list).
const std::unordered_set<std::string>& reservedNames() {
  // clang-format off
  static const std::unordered_set<std::string> names = {
      "_", "as", "aten", "attribute", "CONSTANTS", "fork", "getattr", "inf", "nan", "infj", "nanj", "ops",
      "__torch__", "and", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
      "else", "except", "False", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
      "None", "nonlocal", "not", "or", "pass", "raise", "return", "True", "try", "with", "while", "yield",
      "uninitialized", "unchecked_cast"};
  // clang-format on
  return names;
}

// The last component of a qualified name: `forward` of `__torch__.M.forward`.
std::string baseName(const std::string& qualified) {
  auto dot = qualified.rfind('.');
  return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
}

std::string qualifierOf(const std::string& qualified) {
  auto dot = qualified.rfind('.');
  return dot == std::string::npos ? std::string() : qualified.substr(0, dot);
}

// Whether a list or dict of this element type prints without `annotate`:
// unions, optionals, numbers and Any cannot be read off the elements.
bool elementTypeCanBeInferredFromMembers(const TypePtr& t) {
  TypeKind k = t->kind();
  return k != TypeKind::Union && k != TypeKind::Optional && k != TypeKind::Number && k != TypeKind::Any;
}

bool containsNonAsciiString(const IValue& v) {
  if (v.isString()) {
    for (char c : v.toStringRef()) {
      if (static_cast<unsigned char>(c) > 0x7f) return true;
    }
    return false;
  }
  if (v.isList()) {
    for (const IValue& e : v.toListRef().elements) {
      if (containsNonAsciiString(e)) return true;
    }
  } else if (v.isTuple()) {
    for (const IValue& e : v.toTupleRef().elements) {
      if (containsNonAsciiString(e)) return true;
    }
  } else if (v.isDict()) {
    for (const auto& [key, value] : v.toDictRef().items()) {
      if (containsNonAsciiString(key) || containsNonAsciiString(value)) return true;
    }
  }
  return false;
}

// Whether two tensor constants can share one CONSTANTS entry: same dtype,
// shape and values (compared as bytes: -0. and 0. stay apart, which only
// costs an entry).
bool sameTensorValues(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.sizes() == b.sizes())) return false;
  if (a.numel() == 0) return true;
  Tensor ca = contiguous(a), cb = contiguous(b);
  return std::memcmp(ca.rawData(), cb.rawData(), ca.nbytes()) == 0;
}

bool isNamedType(const Type& t) {
  if (t.kind() == TypeKind::Class || t.kind() == TypeKind::Function) return true;
  if (const auto* tuple = t.cast<TupleType>()) return tuple->name().has_value();
  return false;
}

// The argument is an `out=` argument (keyword-only and written to).
// Symbols without a builtin constant, interned on first use.
Symbol toListSymbol() {
  static const Symbol s = Symbol::fromQualString("prim::tolist");
  return s;
}
Symbol sortedSymbol() {
  static const Symbol s = Symbol::fromQualString("aten::sorted");
  return s;
}
Symbol unwrapOptionalSymbol() {
  static const Symbol s = Symbol::fromQualString("aten::_unwrap_optional");
  return s;
}

bool isOutArgument(const Argument& a) { return a.kwarg_only && a.alias_info && a.alias_info->is_write; }

// How many inputs a call must print: trailing arguments equal to their
// schema defaults are left out (trailing out= arguments are printed apart,
// as keywords), as PyTorch 1.13's CalculateNecessaryArgs decides.
std::pair<size_t, size_t> necessaryArguments(const std::vector<Argument>& args, ArrayRef<const Value*> inputs) {
  if (args.empty()) return {0, 0};
  int64_t idx = static_cast<int64_t>(args.size()) - 1;
  while (idx >= 0 && isOutArgument(args[static_cast<size_t>(idx)])) --idx;
  size_t num_out = args.size() - static_cast<size_t>(idx + 1);
  if (args.size() < inputs.size()) return {inputs.size(), num_out};
  while (idx >= 0) {
    const Argument& a = args[static_cast<size_t>(idx)];
    if (!a.default_value) return {static_cast<size_t>(idx + 1), num_out};
    auto actual = toIValue(inputs[static_cast<size_t>(idx)]);
    if (!actual || !(*a.default_value == *actual)) return {static_cast<size_t>(idx + 1), num_out};
    --idx;
  }
  return {0, num_out};
}

}  // namespace

void PrintDeps::add(const TypePtr& type) {
  for (const TypePtr& t : table_) {
    if (t == type || *t == *type) return;
  }
  table_.push_back(type);
}

// --- the printer ---------------------------------------------------------------------

class PythonPrinterImpl {
 public:
  PythonPrinterImpl(std::vector<IValue>& constants, PrintDeps& deps, TypeNamer namer, bool enforce_importable)
      : constant_table_(constants), deps_(deps), namer_(std::move(namer)), enforce_importable_(enforce_importable) {}

  std::ostringstream body_;

  void printFunction(const Function& function, bool print_first_argument_type) {
    auto graph_ptr = function.inlinableGraph();
    KILN_CHECK(graph_ptr, "cannot print function ", function.name(), ": it is not made of a graph");
    Graph& graph = *graph_ptr;
    const FunctionSchema& schema = function.getSchema();
    used_names_.clear();  // each function may reuse local names

    indent();
    body_ << "def " << baseName(function.name()) << "(";
    auto inputs = graph.inputs();
    KILN_CHECK(inputs.size() == schema.arguments().size(), "cannot print function ", function.name(),
               ": its schema has ", schema.arguments().size(), " arguments, its graph ", inputs.size(), " inputs");
    for (size_t i = 0; i < schema.arguments().size(); ++i) {
      const Argument& arg = schema.arguments()[i];
      registerClassDependencies(arg.type);
      std::string name = genName(arg.name);
      if (i == 0) {
        body_ << name;
        if (print_first_argument_type) {
          body_ << ": " << annotation(arg.type);
          annotated_unions_.insert(inputs[i]);
        }
      } else {
        body_ << ",\n    " << name << ": " << annotation(arg.type);
        annotated_unions_.insert(inputs[i]);
      }
      if (arg.default_value) printDefaultValue(arg, *arg.default_value);
      assignValue(inputs[i], name);
    }
    KILN_CHECK(!schema.returns().empty(), "cannot print function ", function.name(), ": it has no return");
    const TypePtr& return_type = schema.returns()[0].type;
    body_ << ") -> " << annotation(return_type) << ":\n";
    registerClassDependencies(return_type);
    printBody(graph.block());
  }

  void printNamedType(const TypePtr& type) {
    if (const auto* fn = type->cast<FunctionType>()) {
      KILN_CHECK(fn->function(), "cannot print function ", fn->name(), ": its definition is not known");
      printFunction(*fn->function(), true);
    } else if (type->kind() == TypeKind::Class) {
      printClass(std::static_pointer_cast<const ClassType>(type));
    } else if (const auto* tuple = type->cast<TupleType>()) {
      KILN_CHECK(tuple->name(), "cannot print an unnamed tuple type as a class");
      body_ << "class " << baseName(*tuple->name()) << "(NamedTuple):\n";
      ++level_;
      for (size_t i = 0; i < tuple->elements().size(); ++i) {
        indent();
        if (i < tuple->fieldNames().size()) {
          body_ << tuple->fieldNames()[i];
        } else {
          body_ << "_" << i;
        }
        body_ << " : " << annotation(tuple->elements()[i]) << "\n";
      }
      --level_;
    } else {
      KILN_ERROR("cannot print type ", type->str(), " as a class");
    }
  }

 private:
  // --- names ---------------------------------------------------------------------------

  std::string genName(const std::string& candidate) {
    std::string name = candidate;
    // The counter is keyed by the name tried, and it lives as long as the
    // printer: names of one archive file count on from the previous function.
    while (used_names_.count(name) || reservedNames().count(name)) {
      name = candidate + std::to_string(next_id_[name]++);
    }
    used_names_.insert(name);
    return name;
  }

  static std::string makeValidIdentifier(const std::string& candidate) {
    std::string out;
    if (candidate.empty() || (candidate[0] >= '0' && candidate[0] <= '9')) out += '_';
    for (char c : candidate) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      out += ok ? c : '_';
    }
    return out;
  }

  std::string genUniqueNameFor(const Value* v) {
    return genName(v->hasDebugName() ? makeValidIdentifier(v->debugNameBase()) : "_");
  }

  // How each value prints where it is used: a name (once assigned), else
  // the expression it was inlined as.
  using Expr = std::shared_ptr<const std::string>;
  std::unordered_map<const Value*, Expr> expr_table_;
  std::unordered_map<const Value*, std::string> ident_refs_;

  std::string useOf(const Value* v) const {
    auto ident = ident_refs_.find(v);
    if (ident != ident_refs_.end()) return ident->second;
    auto expr = expr_table_.find(v);
    KILN_INTERNAL_ASSERT(expr != expr_table_.end(), "python printer: value %", v->debugName(), " has no name");
    return *expr->second;
  }
  Expr exprOf(const Value* v) const {
    auto ident = ident_refs_.find(v);
    if (ident != ident_refs_.end()) return std::make_shared<const std::string>(ident->second);
    auto expr = expr_table_.find(v);
    KILN_INTERNAL_ASSERT(expr != expr_table_.end(), "python printer: value %", v->debugName(), " has no name");
    return expr->second;
  }
  void assignValue(const Value* v, const std::string& name) { ident_refs_[v] = name; }
  void assignExpr(const Value* v, Expr e) { expr_table_[v] = std::move(e); }
  void assignValuesToTheirUniqueNames(ArrayRef<const Value*> values) {
    for (const Value* v : values) assignValue(v, genUniqueNameFor(v));
  }
  void assignValuesToTheirUniqueNames(const Value* v) { assignValue(v, genUniqueNameFor(v)); }

  // --- inlining ------------------------------------------------------------------------
  //
  // A single-use temporary is printed inside its use when reparsing the
  // expression would emit its nodes in the same order: scanning a node's
  // inputs right to left must meet the nodes just before it, right to left.

  std::unordered_set<const Node*> output_inline_;
  std::unordered_map<const Node*, int64_t> visited_split_inline_uses_;

  bool canInline(const Value* v) const {
    const Node* n = v->node();
    if (n->outputs().size() != 1) return false;
    if (v->uses().size() != 1) return false;
    const Use& use = v->uses()[0];
    // A named value was a variable in the source: keep it, unless it is only returned.
    if (v->hasDebugName() && use.user->kind() != prim::Return) return false;
    if (!n->blocks().empty()) return false;
    // Loop-carried inputs need a variable, or the condition and trip count
    // would be evaluated in the wrong order with respect to them.
    if (use.user->kind() == prim::Loop && use.offset >= 2) return false;
    if (use.user->kind() == prim::fork) return false;
    // isinstance refined the types already: inlining it into an `if` would refine again.
    if (n->kind() == prim::isinstance) return false;
    return true;
  }

  const Node* scanValue(const Node* block_point, const Value* v) {
    const Node* n = v->node();
    if (n == block_point && canInline(v)) {
      block_point = scanNode(block_point);
      output_inline_.insert(n);
    } else if (n->kind() == prim::Constant) {
      output_inline_.insert(n);
    }
    return block_point;
  }

  static const Node* previousNonConstant(const Node* n) {
    do {
      n = n->prev();
    } while (n->kind() == prim::Constant);
    return n;
  }

  const Node* scanNode(const Node* n) {
    if (output_inline_.count(n)) return n;
    for (const Block* b : n->blocks()) scanBlock(b);
    const Node* block_point = previousNonConstant(n);
    auto inputs = n->inputs();
    for (size_t i = inputs.size(); i-- > 0;) block_point = scanValue(block_point, inputs[i]);
    return block_point;
  }

  void scanBlock(const Block* b) {
    scanNode(b->returnNode());
    for (const Node* n : b->nodes().reverse()) scanNode(n);
  }

  // --- constants -----------------------------------------------------------------------

  std::vector<IValue>& constant_table_;

  size_t getOrAddConstant(const IValue& value) {
    if (value.isTensor()) {
      const Tensor& t = value.toTensor();
      for (size_t i = 0; i < constant_table_.size(); ++i) {
        if (!constant_table_[i].isTensor()) continue;
        const Tensor& other = constant_table_[i].toTensor();
        if (sameTensorValues(t, other)) return i;
      }
    }
    constant_table_.push_back(value);
    return constant_table_.size() - 1;
  }

  std::unordered_set<const Node*> seen_constants_;
  void buildConstantList(const Node* n, std::vector<const Node*>& constants) {
    for (const Value* input : n->inputs()) {
      const Node* def = input->node();
      if (def->kind() == prim::Constant && seen_constants_.insert(def).second) constants.push_back(def);
    }
    for (const Block* b : n->blocks()) buildConstantList(b, constants);
  }
  void buildConstantList(const Block* b, std::vector<const Node*>& constants) {
    for (const Node* n : b->nodes()) buildConstantList(n, constants);
    buildConstantList(b->returnNode(), constants);
  }

  void printConstant(std::ostream& out, const IValue& v) {
    v.repr(out, [this](std::ostream& o, const IValue& value) {
      if (value.isTensor() || value.isObject() || containsNonAsciiString(value)) {
        o << "CONSTANTS.c" << getOrAddConstant(value);
        return true;
      }
      if (value.isTuple()) {
        TypePtr type = value.type();
        const auto* tuple = type->cast<TupleType>();
        if (tuple && tuple->name()) o << annotation(type);
      }
      return false;
    });
  }

  void printDefaultValue(const Argument& arg, const IValue& value) {
    body_ << "=";
    // A broadcasting list (`int[2] x=1`) prints its default as the list.
    if (arg.type->kind() == TypeKind::List && (value.isInt() || value.isDouble() || value.isBool())) {
      size_t n = arg.fixed_size ? static_cast<size_t>(*arg.fixed_size) : 1;
      TypePtr elem = value.isInt() ? IntType::get() : value.isDouble() ? FloatType::get() : BoolType::get();
      printConstant(body_, IValue::list(elem, std::vector<IValue>(n, value)));
    } else {
      printConstant(body_, value);
    }
  }

  // --- types ---------------------------------------------------------------------------

  PrintDeps& deps_;
  TypeNamer namer_;
  bool enforce_importable_;

 public:
  std::string annotation(const TypePtr& t) const {
    if (namer_ && isNamedType(*t)) {
      if (auto name = namer_(*t)) return *name;
    }
    switch (t->kind()) {
      case TypeKind::List: return "List[" + annotation(t->containedTypes()[0]) + "]";
      case TypeKind::Optional: return "Optional[" + annotation(t->containedTypes()[0]) + "]";
      case TypeKind::Future: return "Future[" + annotation(t->containedTypes()[0]) + "]";
      case TypeKind::RRef: return "RRef[" + annotation(t->containedTypes()[0]) + "]";
      case TypeKind::Dict: {
        auto c = t->containedTypes();
        return "Dict[" + annotation(c[0]) + ", " + annotation(c[1]) + "]";
      }
      case TypeKind::Tuple: {
        const auto* tuple = t->cast<TupleType>();
        if (tuple->name()) return *tuple->name();
        if (tuple->elements().empty()) return "Tuple[()]";
        std::string s = "Tuple[";
        for (size_t i = 0; i < tuple->elements().size(); ++i) s += (i ? ", " : "") + annotation(tuple->elements()[i]);
        return s + "]";
      }
      case TypeKind::Function: {
        const auto* fn = t->cast<FunctionType>();
        return fn->name().empty() ? t->annotationStr() : fn->name();
      }
      default: return t->annotationStr();
    }
  }

 private:
  void registerClassDependencies(const TypePtr& type) {
    if (isNamedType(*type) && type->kind() != TypeKind::Function) deps_.add(type);
    for (const TypePtr& contained : type->containedTypes()) registerClassDependencies(contained);
  }

  void scanTypeDependencies(const Node* node) {
    for (const Value* v : node->inputs()) registerClassDependencies(v->type());
    for (const Value* v : node->outputs()) registerClassDependencies(v->type());
    for (Symbol name : node->attributeNames()) {
      if (node->kindOf(name) == AttributeKind::ty) {
        registerClassDependencies(node->ty(name));
      } else if (node->kindOf(name) == AttributeKind::tys) {
        for (const TypePtr& t : node->tys(name)) registerClassDependencies(t);
      }
    }
  }

  // --- statements ----------------------------------------------------------------------

  size_t level_ = 0;
  std::unordered_set<std::string> used_names_;
  std::unordered_map<std::string, size_t> next_id_;

  std::ostream& indent() {
    for (size_t i = 0; i < level_; ++i) body_ << "  ";
    return body_;
  }

  std::string valueList(ArrayRef<const Value*> values, const char* begin = "", const char* end = "") const {
    std::string s = begin;
    const char* delimiter = "";
    for (const Value* v : values) {
      s += delimiter;
      s += useOf(v);
      delimiter = ", ";
    }
    return s + end;
  }

  // Values whose Optional or Union type was written down already: the first
  // assignment of such a value says its type, so reading the code back does
  // not narrow it to the assigned value's type.
  std::unordered_set<const Value*> annotated_unions_;

  static bool isUnionLike(const TypePtr& t) { return t->kind() == TypeKind::Union || t->kind() == TypeKind::Optional; }

  void printAssignment(ArrayRef<const Value*> lhs, ArrayRef<const Value*> rhs) {
    if (lhs.empty()) return;
    indent() << valueList(lhs);
    // (Python allows no annotation in a tuple assignment.)
    if (lhs.size() == 1) {
      const Value* v = lhs[0];
      if (!annotated_unions_.count(v) && !expr_table_.count(v) && isUnionLike(v->type())) {
        body_ << " : " << v->type()->annotationStr();
        annotated_unions_.insert(v);
      }
    }
    body_ << " = " << valueList(rhs) << "\n";
  }

  bool requiresAnnotation(const Value* lhs, const Value* rhs) {
    if (isUnionLike(lhs->type())) return annotated_unions_.insert(lhs).second;
    return *lhs->type() != *rhs->type();
  }

  void printAnnotatedAssignment(ArrayRef<const Value*> lhs, ArrayRef<const Value*> rhs) {
    for (size_t i = 0; i < lhs.size(); ++i) {
      indent() << useOf(lhs[i]);
      if (requiresAnnotation(lhs[i], rhs[i])) body_ << ": " << annotation(lhs[i]->type());
      body_ << " = " << useOf(rhs[i]) << "\n";
    }
  }

  void printIf(const Node* node) {
    assignValuesToTheirUniqueNames(node->outputs());
    indent() << "if " << useOf(node->input(0)) << ":\n";
    const Block* then_block = node->blocks()[0];
    const Block* else_block = node->blocks()[1];
    {
      ++level_;
      printBlock(then_block, !node->outputs().empty());
      printAssignment(node->outputs(), then_block->outputs());
      --level_;
    }
    indent() << "else:\n";
    {
      ++level_;
      printBlock(else_block, !node->outputs().empty());
      printAssignment(node->outputs(), else_block->outputs());
      --level_;
    }
  }

  enum class LoopKind { While, For, Modified };

  static LoopKind loopKind(const Node* node) {
    const Block* body = node->blocks()[0];
    auto trip_count = toIValue(node->input(0));
    auto cond_input = toIValue(node->input(1));
    auto cond_next = toIValue(body->outputs()[0]);
    bool always_true = cond_input && cond_input->isBool() && cond_input->toBool() && cond_next && cond_next->isBool() &&
                       cond_next->toBool();
    bool trip_count_specified = !trip_count || !trip_count->isInt() ||
                                trip_count->toInt() != std::numeric_limits<int64_t>::max() ||
                                body->inputs()[0]->hasUses();
    if (always_true) return trip_count_specified ? LoopKind::For : LoopKind::While;
    return trip_count_specified ? LoopKind::Modified : LoopKind::While;
  }

  void printLoop(const Node* node) {
    LoopKind kind = loopKind(node);
    KILN_CHECK(kind != LoopKind::Modified,
               "loop cannot be printed as python because it has gone through an optimization that combined while "
               "and for loops");
    bool as_for = kind == LoopKind::For;
    const Block* body = node->blocks()[0];
    auto carried_outputs = node->outputs();
    auto carried_inputs = node->inputs().slice(2);
    auto body_carried_inputs = body->inputs().slice(1);

    assignValuesToTheirUniqueNames(carried_outputs);
    for (size_t i = 0; i < body_carried_inputs.size(); ++i) {
      assignExpr(body_carried_inputs[i], exprOf(carried_outputs[i]));
    }
    printAnnotatedAssignment(carried_outputs, carried_inputs);

    const Value* trip = body->inputs()[0];
    assignValuesToTheirUniqueNames(trip);
    if (as_for) {
      indent() << "for " << useOf(trip) << " in range(" << useOf(node->input(0)) << "):\n";
    } else {
      // The trip count is unused in a while loop: its name holds the condition.
      printAssignment(ArrayRef<const Value*>(&trip, 1), node->inputs().slice(1, 1));
      indent() << "while " << useOf(trip) << ":\n";
    }
    ++level_;
    size_t offset = as_for ? 1 : 0;
    auto block_inputs = body->inputs().slice(offset);
    printBlock(body, !block_inputs.empty());
    printAssignment(block_inputs, body->outputs().slice(offset));
    --level_;
  }

  bool isLongLine(const std::string& s) const { return s.size() + level_ * 2 >= 40; }

  bool isNonConstantInline(const Value* v) const {
    return v->node()->kind() != prim::Constant && output_inline_.count(v->node());
  }

  // An inlined expression grew too long: it gets a line of its own, and so
  // does every inlined input before it in the same statement, or the split
  // would change the order things run in.
  void splitLongInlines(const Value* v) {
    std::vector<const Value*> to_split_reversed;
    const Use& u = v->uses()[0];
    scanLongInlines(u.user, static_cast<int64_t>(u.offset), to_split_reversed);
    for (auto it = to_split_reversed.rbegin(); it != to_split_reversed.rend(); ++it) {
      printOutputDefinition((*it)->node(), useOf(*it));
    }
  }

  void scanLongInlines(const Node* user, int64_t offset, std::vector<const Value*>& to_split_reversed) {
    auto it = visited_split_inline_uses_.find(user);
    bool present = it != visited_split_inline_uses_.end();
    for (int64_t i = offset; i >= (present ? it->second + 1 : 0); --i) {
      const Value* prev_arg = user->input(static_cast<size_t>(i));
      if (isNonConstantInline(prev_arg)) to_split_reversed.push_back(prev_arg);
    }
    visited_split_inline_uses_[user] = offset;
    if (!present && output_inline_.count(user)) {
      const Use& u = user->output()->uses()[0];
      // -1: the use itself is still being printed and cannot be split.
      scanLongInlines(u.user, static_cast<int64_t>(u.offset) - 1, to_split_reversed);
    }
  }

  void printOutputDefinition(const Node* node, const std::string& expr) {
    assignValuesToTheirUniqueNames(node->outputs());
    indent();
    if (!node->outputs().empty()) body_ << valueList(node->outputs()) << " = ";
    body_ << expr << "\n";
  }

  void printNode(const Node* node, bool print_const) {
    scanTypeDependencies(node);
    if (!print_const && node->kind() == prim::Constant) return;
    Symbol kind = node->kind();
    if (kind == prim::Return) {
      if (enforce_importable_ && node->inputs().size() != 1) {
        KILN_ERROR(
            "Exportable methods must have a single return value. Normal use of ScriptMethods should enforce this");
      }
      if (!node->inputs().empty()) indent() << "return " << valueList(node->inputs()) << "\n";
    } else if (kind == prim::Loop) {
      printLoop(node);
    } else if (kind == prim::If) {
      printIf(node);
    } else if (kind == prim::TupleUnpack || kind == prim::ListUnpack) {
      assignValuesToTheirUniqueNames(node->outputs());
      indent();
      // `a, b, = t`: the trailing comma makes even one target an unpack.
      if (!node->outputs().empty()) body_ << valueList(node->outputs(), "", ", = ");
      body_ << useOf(node->input(0)) << "\n";
    } else if (kind == prim::SetAttr) {
      indent() << useOf(node->input(0)) << "." << node->s(attr::name) << " = " << useOf(node->input(1)) << "\n";
    } else if (kind == prim::Enter) {
      const Value* out = node->output(0);
      indent() << "with " << useOf(node->input(0));
      if (out->hasUses()) {
        assignValuesToTheirUniqueNames(out);
        body_ << " as " << useOf(out);
      }
      body_ << ":\n";
      ++level_;
    } else if (kind == prim::Exit) {
      if (node->prev()->kind() == prim::Enter) indent() << "pass\n";
      --level_;
    } else if (kind == prim::Closure || kind == prim::fork) {
      KILN_ERROR("cannot print ", kind.toQualString(), " as Python");
    } else {
      std::string rhs = printRHS(node);
      // Long constants get a line of their own; other long inlines split
      // below (see splitLongInlines), since they cannot simply be left out.
      if (!output_inline_.count(node) || (kind == prim::Constant && isLongLine(rhs))) {
        printOutputDefinition(node, rhs);
      } else {
        auto expr = std::make_shared<const std::string>(std::move(rhs));
        assignExpr(node->output(0), expr);
        if (isLongLine(*expr)) splitLongInlines(node->output(0));
      }
    }
  }

  static std::string opName(Symbol kind) {
    if (kind.isAten()) return "torch." + std::string(kind.name());
    return "ops." + std::string(kind.ns()) + "." + std::string(kind.name());
  }

  std::string printRHS(const Node* node) {
    std::ostringstream s;
    Symbol kind = node->kind();
    if (kind == prim::PythonOp) {
      KILN_ERROR("Could not export Python function call. Remove calls to Python functions before export.");
    } else if (kind == prim::Uninitialized) {
      s << "uninitialized(" << annotation(node->output(0)->type()) << ")";
    } else if (kind == prim::Constant) {
      const Value* out = node->output(0);
      if (out->type()->kind() == TypeKind::Function) {
        const auto* fn = out->type()->cast<FunctionType>();
        if (fn->function() || !fn->name().empty()) deps_.add(out->type());
        std::string name = fn->name();
        if (name.empty() && node->hasAttribute(attr::name)) name = node->s(attr::name);
        if (namer_) {
          if (auto renamed = namer_(*out->type())) name = *renamed;
        }
        s << name;
      } else {
        auto value = toIValue(out);
        KILN_CHECK(value, "cannot print constant %", out->debugName(), " of type ", out->type()->str());
        printConstant(s, *value);
      }
    } else if (kind == aten::ScalarImplicit || kind == aten::FloatImplicit || kind == aten::IntImplicit) {
      s << "annotate(" << annotation(node->output(0)->type()) << ", " << useOf(node->input(0)) << ")";
    } else if (kind == aten::Int) {
      s << valueList(node->inputs(), "int(", ")");
    } else if (kind == aten::Float) {
      s << valueList(node->inputs(), "float(", ")");
    } else if (kind == aten::Bool) {
      s << valueList(node->inputs(), "bool(", ")");
    } else if (kind == aten::str) {
      s << valueList(node->inputs(), "str(", ")");
    } else if (kind == aten::__getitem__) {
      std::string container = useOf(node->input(0));
      if (isValidIdentifier(container)) {
        s << container;
      } else {
        s << "(" << container << ")";
      }
      s << "[" << useOf(node->input(1)) << "]";
    } else if (kind == prim::Print) {
      s << valueList(node->inputs(), "print(", ")");
    } else if (kind == sortedSymbol()) {
      s << valueList(node->inputs(), "sorted(", ")");
    } else if (kind == prim::TupleConstruct) {
      const auto* tuple = node->output(0)->type()->cast<TupleType>();
      if (tuple && tuple->name()) s << annotation(node->output(0)->type());
      s << valueList(node->inputs(), "(", node->inputs().size() == 1 ? ",)" : ")");
    } else if (kind == prim::TupleIndex) {
      s << "(" << useOf(node->input(0)) << ")[" << useOf(node->input(1)) << "]";
    } else if (kind == prim::TupleSlice) {
      s << "(" << useOf(node->input(0)) << ")[" << node->i(attr::beg) << ":" << node->i(attr::end) << "]";
    } else if (kind == prim::ListConstruct) {
      const TypePtr& type = node->output(0)->type();
      TypePtr elem = type->containedTypes().at(0);
      if (node->inputs().empty()) {
        s << "annotate(" << annotation(type) << ", [])";
      } else if (!elementTypeCanBeInferredFromMembers(elem)) {
        s << "annotate(" << annotation(type) << ", " << valueList(node->inputs(), "[", "]") << ")";
      } else {
        s << valueList(node->inputs(), "[", "]");
      }
    } else if (kind == prim::DictConstruct) {
      const TypePtr& type = node->output(0)->type();
      auto kv = type->containedTypes();
      std::string dict = "{";
      for (size_t i = 0; i + 1 < node->inputs().size(); i += 2) {
        if (i) dict += ", ";
        dict += useOf(node->input(i)) + ": " + useOf(node->input(i + 1));
      }
      dict += "}";
      if (node->inputs().empty() || !elementTypeCanBeInferredFromMembers(kv[0]) ||
          !elementTypeCanBeInferredFromMembers(kv[1])) {
        s << "annotate(" << annotation(type) << ", " << dict << ")";
      } else {
        s << dict;
      }
    } else if (kind == prim::CreateObject) {
      std::string name = annotation(node->output(0)->type());
      s << name << ".__new__(" << name << ")";
    } else if (kind == prim::GetAttr) {
      const std::string& field = node->s(attr::name);
      if (isValidIdentifier(field)) {
        s << useOf(node->input(0)) << "." << field;
      } else {
        s << "getattr(" << useOf(node->input(0)) << ", ";
        printQuotedString(s, field);
        s << ")";
      }
    } else if (kind == prim::CallFunction) {
      s << useOf(node->input(0)) << "(";
      for (size_t i = 1; i < node->inputs().size(); ++i) s << useOf(node->input(i)) << ", ";
      s << ")";
    } else if (kind == prim::CallMethod) {
      const Value* self = node->input(0);
      s << "(" << useOf(self) << ")." << node->s(attr::name) << "(";
      for (size_t i = 1; i < node->inputs().size(); ++i) s << useOf(node->input(i)) << ", ";
      s << ")";
      KILN_CHECK(self->type()->kind() == TypeKind::Class, "method call on a value of type ", self->type()->str(),
                 " cannot be printed");
      deps_.add(self->type());
    } else if (kind == unwrapOptionalSymbol()) {
      s << opName(kind) << "(";
      const Value* in = node->input(0);
      if (in->type()->kind() == TypeKind::None) {
        s << "annotate(" << annotation(OptionalType::create(node->output(0)->type())) << ", " << useOf(in) << ")";
      } else {
        s << useOf(in);
      }
      s << ")";
    } else if (kind == prim::unchecked_cast || kind == prim::unchecked_unwrap_optional) {
      s << "unchecked_cast(" << annotation(node->output(0)->type()) << ", " << useOf(node->input(0)) << ")";
    } else if (kind == prim::isinstance) {
      s << "isinstance(" << useOf(node->input(0)) << ", ";
      const auto& types = node->tys(attr::types);
      if (types.size() == 1) {
        s << annotation(types[0]);
      } else {
        s << "(";
        for (size_t i = 0; i < types.size(); ++i) s << (i ? ", " : "") << annotation(types[i]);
        s << ")";
      }
      s << ")";
    } else if (kind == toListSymbol()) {
      s << "annotate(" << annotation(node->output(0)->type()) << ", " << useOf(node->input(0)) << ".tolist())";
    } else {
      s << opName(kind) << "(";
      const FunctionSchema* schema = node->maybeSchema();
      auto inputs = static_cast<const Node*>(node)->inputs();
      if (schema && !schema->arguments().empty()) {
        const auto& args = schema->arguments();
        auto [necessary, num_out] = necessaryArguments(args, inputs);
        for (size_t i = 0; i < necessary; ++i) {
          if (i > 0) s << ", ";
          if (i < args.size() && args[i].kwarg_only) s << args[i].name << "=";
          s << useOf(inputs[i]);
        }
        for (size_t i = args.size() - num_out; i < args.size(); ++i) {
          s << ", " << args[i].name << "=" << useOf(inputs[i]);
        }
      } else {
        for (size_t i = 0; i < inputs.size(); ++i) s << (i ? ", " : "") << useOf(inputs[i]);
      }
      s << ")";
    }
    return s.str();
  }

  void printBlock(const Block* block, bool block_has_other_statements) {
    // An empty block is `pass`, unless assignments or a return follow it.
    if (!block_has_other_statements && block->nodes().empty()) indent() << "pass\n";
    for (const Node* n : block->nodes()) printNode(n, false);
  }

  void printBody(const Block* body) {
    // Constants come first, in order of use: most are inlined, long ones get a line.
    std::vector<const Node*> constants;
    buildConstantList(body, constants);
    scanBlock(body);
    ++level_;
    for (const Node* n : constants) printNode(n, true);
    printBlock(body, !body->returnNode()->inputs().empty());
    printNode(body->returnNode(), false);
    --level_;
  }

  void printClass(const std::shared_ptr<const ClassType>& cls) {
    bool is_module = cls->isModule();
    body_ << "class " << baseName(annotation(cls));
    if (is_module) body_ << "(Module)";
    body_ << ":\n";
    ++level_;
    size_t num_attrs = cls->numAttributes();
    if (is_module) {
      indent() << "__parameters__ = [";
      for (size_t i = 0; i < num_attrs; ++i) {
        if (cls->attributeKind(i) == SlotKind::Parameter) body_ << "\"" << cls->attributeName(i) << "\", ";
      }
      body_ << "]\n";
      indent() << "__buffers__ = [";
      for (size_t i = 0; i < num_attrs; ++i) {
        if (cls->attributeKind(i) == SlotKind::Buffer) body_ << "\"" << cls->attributeName(i) << "\", ";
      }
      body_ << "]\n";
    }
    for (size_t i = 0; i < num_attrs; ++i) {
      const std::string& name = cls->attributeName(i);
      const TypePtr& type = cls->attributeType(i);
      registerClassDependencies(type);
      indent();
      if (!isValidIdentifier(name)) {
        // (As 1.13: the annotations dict is only started when the first attribute needs it.)
        if (i == 0) {
          body_ << "__annotations__ = []\n";
          indent();
        }
        body_ << "__annotations__[\"" << name << "\"] = " << annotation(type) << "\n";
      } else {
        body_ << name << " : " << annotation(type) << "\n";
      }
    }
    for (const auto& [name, value] : cls->constants()) {
      indent() << name << " : Final[" << annotation(value->type()) << "] = ";
      std::ostringstream v;
      printConstant(v, *value);
      body_ << v.str() << "\n";
    }
    for (const Function* method : cls->methods()) printFunction(*method, true);
    --level_;
  }
};

PythonPrinter::PythonPrinter(std::vector<IValue>& constants, PrintDeps& deps, TypeNamer namer, bool enforce_importable)
    : impl_(std::make_unique<PythonPrinterImpl>(constants, deps, std::move(namer), enforce_importable)) {}
PythonPrinter::~PythonPrinter() = default;
PythonPrinter::PythonPrinter(PythonPrinter&&) noexcept = default;
PythonPrinter& PythonPrinter::operator=(PythonPrinter&&) noexcept = default;

void PythonPrinter::printFunction(const Function& function) { impl_->printFunction(function, true); }
void PythonPrinter::printMethod(const Function& function) { impl_->printFunction(function, false); }
void PythonPrinter::printNamedType(const TypePtr& type) { impl_->printNamedType(type); }
std::string PythonPrinter::str() const { return impl_->body_.str(); }

std::string printFunctionCode(const Function& function) { return printFunctionCodeWithConstants(function).code; }
std::string printMethodCode(const Function& method) { return printMethodCodeWithConstants(method).code; }

CodeWithConstants printFunctionCodeWithConstants(const Function& function) {
  CodeWithConstants result;
  PrintDeps deps;
  PythonPrinter printer(result.constants, deps);
  printer.printFunction(function);
  result.code = printer.str();
  return result;
}

CodeWithConstants printMethodCodeWithConstants(const Function& method) {
  CodeWithConstants result;
  PrintDeps deps;
  PythonPrinter printer(result.constants, deps);
  printer.printMethod(method);
  result.code = printer.str();
  return result;
}

// --- archives -------------------------------------------------------------------------

std::string qualifierToArchivePath(const std::string& qualifier, const std::string& code_dir) {
  std::string path = qualifier;
  std::replace(path.begin(), path.end(), '.', '/');
  return code_dir + path + ".py";
}

ArchiveCodeWriter::ArchiveCodeWriter(TypeNamer namer) {
  // Functions compiled from a bare source string have bare names (`f`); an
  // archive's code names everything under `__torch__`, as torch does.
  namer_ = [outer = std::move(namer)](const Type& t) -> std::optional<std::string> {
    if (outer) {
      if (auto name = outer(t)) return name;
    }
    if (const auto* fn = t.cast<FunctionType>()) {
      if (!fn->name().empty() && fn->name().find('.') == std::string::npos) return "__torch__." + fn->name();
    }
    return std::nullopt;
  };
}
ArchiveCodeWriter::~ArchiveCodeWriter() = default;

std::string ArchiveCodeWriter::qualifiedNameOf(const TypePtr& type) const {
  if (namer_) {
    if (auto name = namer_(*type)) return *name;
  }
  if (const auto* cls = type->cast<ClassType>()) return cls->name();
  if (const auto* fn = type->cast<FunctionType>()) return fn->name();
  if (const auto* tuple = type->cast<TupleType>()) {
    if (tuple->name()) return *tuple->name();
  }
  KILN_ERROR("type ", type->str(), " has no name to print it under");
}

void ArchiveCodeWriter::convertTypes(const TypePtr& root) {
  deps_.add(root);
  // Printing a type may add more: the size is read again each time.
  for (size_t i = 0; i < deps_.size(); ++i) convertNamedType(deps_[i]);
}

void ArchiveCodeWriter::convertNamedType(const TypePtr& type) {
  for (const TypePtr& done : converted_) {
    if (done == type) return;
  }
  converted_.push_back(type);
  std::string qualifier = qualifierOf(qualifiedNameOf(type));
  PythonPrinter* printer = nullptr;
  for (auto& [q, p] : files_) {
    if (q == qualifier) printer = p.get();
  }
  if (!printer) {
    files_.emplace_back(qualifier, std::make_unique<PythonPrinter>(constants_, deps_, namer_, true));
    printer = files_.back().second.get();
  }
  printer->printNamedType(type);
}

std::vector<CodeFile> ArchiveCodeWriter::files() const {
  std::vector<CodeFile> out;
  for (const auto& [qualifier, printer] : files_) {
    out.push_back(CodeFile{qualifier, qualifierToArchivePath(qualifier), printer->str()});
  }
  return out;
}

}  // namespace kiln
