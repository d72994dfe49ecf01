#include "kiln/frontend/ir_emitter.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "kiln/core/operator.h"
#include "kiln/frontend/class_definition.h"
#include "kiln/frontend/convert_to_ssa.h"
#include "kiln/frontend/error_report.h"
#include "kiln/frontend/parser.h"
#include "kiln/frontend/script_type_parser.h"
#include "kiln/frontend/sugared_value.h"
#include "kiln/frontend/tree_views.h"
#include "kiln/ir/graph.h"

namespace kiln {

namespace {

// --- refinement of Optional types (`x is not None`) ----------------------------------------

struct Refinement {
  std::string name;
  TypePtr type;
};

// What holds when a condition is true, and when it is false.
struct RefinementSet {
  std::vector<Refinement> true_refinements;
  std::vector<Refinement> false_refinements;

  static std::vector<Refinement> unite(const std::vector<Refinement>& a, const std::vector<Refinement>& b) {
    std::vector<Refinement> out = a;
    for (const auto& r : b) {
      bool seen = false;
      for (const auto& o : out) seen = seen || o.name == r.name;
      if (!seen) out.push_back(r);
    }
    return out;
  }
  static std::vector<Refinement> intersect(const std::vector<Refinement>& a, const std::vector<Refinement>& b) {
    std::vector<Refinement> out;
    for (const auto& r : a) {
      for (const auto& o : b) {
        if (o.name == r.name && *o.type == *r.type) out.push_back(r);
      }
    }
    return out;
  }
  // `a and b` is true when both are; false when either is false.
  RefinementSet And(const RefinementSet& rhs) const {
    return {unite(true_refinements, rhs.true_refinements), intersect(false_refinements, rhs.false_refinements)};
  }
  RefinementSet Or(const RefinementSet& rhs) const {
    return {intersect(true_refinements, rhs.true_refinements), unite(false_refinements, rhs.false_refinements)};
  }
  RefinementSet Not() const { return {false_refinements, true_refinements}; }
};

struct CondValue {
  Value* value;
  RefinementSet refinements;
  // Known at compile time: only that branch is emitted.
  std::optional<bool> static_if;
};

// --- the environment: variables of the function being compiled ----------------------------

// One frame per block (function body, branch, loop body, comprehension).
// Sugared values live only here; first-class values are stored to and
// loaded from the graph (prim::Store / prim::Load), with their type here.
struct Environment {
  Environment(Block* b, std::shared_ptr<Environment> parent) : block(b), next(std::move(parent)) {}
  Block* block;
  std::shared_ptr<Environment> next;
  std::unordered_map<std::string, SugaredValuePtr> value_table;
  std::map<std::string, TypePtr> type_table;
  // Variables that may not be used: defined in one branch only, or with
  // different types in the two branches.
  std::unordered_map<std::string, std::string> error_messages;

  std::vector<std::string> definedVariables() const {
    std::vector<std::string> out;
    for (const auto& [name, type] : type_table) out.push_back(name);
    return out;
  }
  TypePtr findTypeInFrame(const std::string& name) const {
    auto it = type_table.find(name);
    return it == type_table.end() ? nullptr : it->second;
  }
};

enum class LoopStatus { NotInLoop, InLoop, InUnrolledLoop };

// The classes TorchScript writes in TorchScript (1.13's torch/autograd/grad_mode.py).
const char* builtinClassSource(const std::string& qualified_name) {
  if (qualified_name == "__torch__.torch.autograd.grad_mode.no_grad") {
    return R"PY(
class no_grad:
    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = torch.is_grad_enabled()
        torch.set_grad_enabled(False)

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any):
        torch.set_grad_enabled(self.prev)
)PY";
  }
  return nullptr;
}

// The def as a class compiles it: a `@property` getter as the method
// `__<name>_getter` and its `@<name>.setter` as `__<name>_setter` (1.13's
// names; reading and assigning the property call them), others unchanged.
Def classMethodDef(const Def& def) {
  const std::string& name = def.name().name();
  std::string renamed;
  for (Expr decorator : def.decorators()) {
    const std::string text = decorator.range().text();
    if (text == "property") renamed = propertyGetterName(name);
    if (text == name + ".setter") renamed = propertySetterName(name);
  }
  if (renamed.empty()) return def;
  // The same def under the accessor's name, without its decorators.
  const SourceRange& at = def.name().range();
  TreeRef ident = Tree::create(TK_IDENT, at, {Tree::atom(renamed, at)});
  TreeRef decorators = Tree::create(TK_LIST, def.decorators().range(), {});
  return Def(Tree::create(TK_DEF, def.range(), {ident, def.decl().tree(), def.statements().tree(), decorators}));
}

// Compiles functions on demand, so that a callee is compiled before its callers.
class DefinitionCompiler;

// An object of a script class (not a module).
bool isScriptObject(const Value* v) {
  const auto* cls = v->type()->cast<ClassType>();
  return cls && !cls->isModule();
}

// The class a method belongs to, while it is compiled.
struct MethodContext {
  ClassTypePtr cls;
  // `self.x = v` may add attributes (the __init__ of a script class).
  bool defines_attributes = false;
};

class FunctionEmitter {
 public:
  FunctionEmitter(DefinitionCompiler& compiler, std::shared_ptr<Graph> graph, ResolverPtr resolver,
                  std::optional<MethodContext> method = std::nullopt)
      : compiler_(compiler), graph_(std::move(graph)), g_(*graph_), resolver_(std::move(resolver)),
        method_(std::move(method)) {}

  FunctionSchema emitDef(const Def& def);
  // For default arguments: an expression emitted into an empty function.
  Value* emitStandaloneExpr(const Expr& e) {
    pushFrame(g_.block());
    return emitExpr(e);
  }

 private:
  // --- environment
  void pushFrame(Block* b) { env_ = std::make_shared<Environment>(b, env_); }
  std::shared_ptr<Environment> popFrame() {
    auto old = env_;
    env_ = env_->next;
    return old;
  }
  Block* currentBlock() const { return env_->block; }

  TypePtr findTypeInParentFrames(const std::string& name) const {
    for (auto e = env_->next; e; e = e->next) {
      if (auto t = e->findTypeInFrame(name)) return t;
    }
    return nullptr;
  }
  SugaredValuePtr findInParentFrames(const std::string& name) const {
    for (auto e = env_->next; e; e = e->next) {
      if (auto it = e->value_table.find(name); it != e->value_table.end()) return it->second;
      if (e->findTypeInFrame(name)) return std::make_shared<SimpleValue>(nullptr);
    }
    return nullptr;
  }
  Value* insertLoad(const std::string& name, const TypePtr& type) {
    Node* load = g_.insertNode(g_.create(prim::Load, {}, 1));
    load->s_(attr::name, name);
    load->output()->setType(type);
    if (meaningfulName(name)) load->output()->setDebugName(name);
    return load->output();
  }
  void insertStore(const std::string& name, const SourceRange& loc, Value* v, TypePtr type) {
    Node* store = g_.insertNode(g_.create(prim::Store, {v}, 0));
    store->s_(attr::name, name);
    store->setSourceRange(loc);
    env_->type_table[name] = std::move(type);
    env_->error_messages.erase(name);
  }
  // The variable in the innermost frame that has it, or null.
  SugaredValuePtr findInAnyFrame(const std::string& name, const SourceRange& loc) {
    for (auto e = env_; e; e = e->next) {
      if (auto it = e->error_messages.find(name); it != e->error_messages.end()) {
        throwSourceError(loc, it->second + "\nand was used here");
      }
      if (auto it = e->value_table.find(name); it != e->value_table.end()) return it->second;
      if (auto t = e->findTypeInFrame(name)) return std::make_shared<SimpleValue>(insertLoad(name, t));
    }
    return nullptr;
  }
  SugaredValuePtr getSugaredVar(const std::string& name, const SourceRange& loc);
  Value* getVar(const std::string& name, const SourceRange& loc) { return getSugaredVar(name, loc)->asValue(loc, g_); }
  void setVar(const SourceRange& loc, const std::string& name, Value* v) {
    setSugaredVar(loc, name, std::make_shared<SimpleValue>(v), nullptr);
  }
  void setSugaredVar(const SourceRange& loc, const std::string& name, SugaredValuePtr value, TypePtr annotated);

  // --- statements
  void emitStatements(const List<Stmt>& statements);
  void emitStatement(const Stmt& stmt);
  void emitAssignment(const Assign& stmt);
  void emitSingleAssignment(const SourceRange& range, const Expr& lhs, const Expr& rhs, TypePtr type);
  void emitTupleAssign(const TupleLiteral& tl, const SugaredValuePtr& rhs, const SourceRange& rhs_loc, size_t n_binders,
                       bool starred);
  void emitExprsAssign(const List<Expr>& lhs, const std::vector<SugaredValuePtr>& outputs, const SourceRange& rhs_loc,
                       size_t n_binders);
  bool validateAssignLhs(const List<Expr>& lhs, const SourceRange& r);
  void emitSubscriptAssign(const SourceRange& range, const Subscript& lhs, Value* rhs);
  void emitAttributeAssign(const SourceRange& range, const Select& lhs, const Expr& rhs, const TypePtr& annotated);
  void emitAugAssignment(const AugAssign& stmt);
  Symbol augOp(const AugAssign& stmt, const TypePtr& type);
  void emitIf(const If& stmt);
  void emitIfElseBlocks(const SourceRange& loc, const CondValue& cond, const List<Stmt>& true_branch,
                        const List<Stmt>& false_branch);
  std::shared_ptr<Environment> emitSingleIfBranch(Block* b, const List<Stmt>& branch, const RefinementSet& refs);
  void insertRefinements(const SourceRange& loc, const RefinementSet& refs);
  void emitWhile(const While& stmt);
  void emitFor(const For& stmt);
  void emitFor(const List<Expr>& targets, const List<Expr>& itrs, const SourceRange& loc,
               const std::function<void()>& emit_body);
  void emitLoopCommon(const SourceRange& range, const std::function<void()>& emit_body, const SugaredValuePtr& iter_val,
                      std::optional<List<Expr>> targets, std::optional<Expr> cond);
  void emitUnrolledLoop(const SourceRange& loc, const std::function<void()>& emit_body, const SugaredValuePtr& iterable,
                        const List<Expr>& targets);
  void emitBreakOrContinue(const Stmt& stmt, Symbol kind);
  void emitReturn(const Return& stmt);
  void emitRaise(const Raise& stmt);
  void emitAssert(const Assert& stmt);
  void emitWith(const With& stmt);
  void emitDelete(const Delete& stmt);

  // --- expressions
  Value* emitExpr(const Expr& e, const TypePtr& type_hint = nullptr) {
    return emitSugaredExpr(e, 1, type_hint)->asValue(e.range(), g_);
  }
  SugaredValuePtr emitSugaredExpr(const Expr& e, size_t n_binders, const TypePtr& type_hint = nullptr);
  // Before `object.field` on an object of `cls`: the method `field` compiles
  // when first used, and a field the class lacks is explained as the
  // embedder can (an attribute the Python module has but TorchScript cannot type).
  void ensureField(const ClassTypePtr& cls, const std::string& field, const SourceRange& loc);
  Value* emitSimpleExpr(const TreeRef& tree, const TypePtr& type_hint);
  SugaredValuePtr emitApplyExpr(const Apply& apply, size_t n_binders, const TypePtr& type_hint);
  SugaredValuePtr emitApplySpecialForm(Symbol form, const Apply& apply, const TypePtr& type_hint);
  void checkSpecialFormInputs(const Apply& apply, const std::string& form, size_t n);
  // One per special form: isinstance(v, T), annotate(T, v), range(...),
  // zip(...), enumerate(it, start), list(it), hasattr/getattr(obj, "name"), tuple(it).
  SugaredValuePtr emitIsInstanceForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitAnnotateForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitRangeForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitZipForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitEnumerateForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitListForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitHasattrForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitGetattrForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitTupleForm(const Apply& apply, const TypePtr& type_hint);
  // builtin_forms.inc: dict(...), slice(...), torch.tensordot; slice objects
  // and Ellipsis in subscripts.
  SugaredValuePtr emitDictForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitSliceForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitTensordotForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitJitIsInstanceForm(const Apply& apply, const TypePtr& type_hint);
  void checkJitIsInstanceTypes(const Expr& classinfo);
  List<Expr> desugarSubscripts(const List<Expr>& subscripts);
  TreeRef boundVarTree(const SourceRange& r, const SugaredValuePtr& v);
  // The forms printed code uses (imported archives): unchecked_cast(T, v)
  // and uninitialized(T).
  SugaredValuePtr emitUncheckedCastForm(const Apply& apply, const TypePtr& type_hint);
  SugaredValuePtr emitUninitializedForm(const Apply& apply, const TypePtr& type_hint);
  // C.__new__(C): an object of class C whose __init__ is not run yet.
  SugaredValuePtr emitCreateObjectForm(const Apply& apply, const TypePtr& type_hint);
  std::pair<SugaredValuePtr, ClassTypePtr> emitAttributeQuery(const Apply& apply, const std::string& form,
                                                              std::string& field);
  std::vector<NamedValue> getNamedValues(const List<Expr>& exprs);
  std::vector<NamedValue> emitAttributes(const List<Attribute>& attributes);
  CondValue emitCondExpr(const Expr& e);
  CondValue constantCond(const SourceRange& loc, bool value) { return {g_.insertConstant(value, loc), {}, value}; }
  CondValue emitShortCircuit(const SourceRange& loc, const Expr& first, const Expr& second, bool is_or);
  CondValue emitChainCompare(const ChainCompare& chain);
  CondValue emitIsInstance(const Expr& obj, const Expr& classinfo);
  Value* emitIfExpr(const SourceRange& range, const CondValue& cond, const std::function<Value*()>& true_expr,
                    const std::function<Value*()>& false_expr);
  Value* emitToBool(const SourceRange& loc, Value* v);
  // `obj + x`, `obj < x`, `-obj`, `obj[i]`, `x in obj`...: on an object of a
  // script class that defines the magic method `name`, its call (as 1.13);
  // null for any other value.
  Value* emitMagicCall(const SourceRange& loc, Value* self, const std::string& name, const std::vector<Value*>& args);
  Value* emitBinaryOp(const BinOp& op);
  Value* emitCompare(const SourceRange& loc, int kind, Value* lhs, Value* rhs);
  Value* emitUnaryOp(const UnaryOp& op);
  Value* emitListLiteral(const ListLiteral& ll, const TypePtr& type_hint);
  Value* emitDictLiteral(const DictLiteral& dl, const TypePtr& type_hint);
  Value* emitListComprehension(const ListComp& lc, const TypePtr& type_hint);
  Value* emitDictComprehension(const DictComp& dc, const TypePtr& type_hint);
  // The loop of a comprehension, in a scope of its own: emit_item for each
  // element (that passes the filter `cond`, when there is one).
  void emitComprehensionLoop(const SourceRange& loc, const Expr& target, const Expr& iter, const Maybe<Expr>& cond,
                             const std::function<void()>& emit_item);
  Value* emitSubscript(const Subscript& subscript);
  std::pair<Value*, std::vector<Value*>> emitIntAndSliceIndexing(const SourceRange& loc, Value* sliceable,
                                                                 const List<Expr>& subscripts);
  Value* emitSliceOp(const SourceRange& loc, Value* sliceable, Value* dim, const SliceExpr& slice);
  Value* emitTupleIndex(const SourceRange& loc, Value* tuple, Value* index);
  Value* emitTupleSlice(const SourceRange& loc, Value* tuple, const SliceExpr& slice);
  Value* call(const SourceRange& loc, Symbol op, const std::vector<Value*>& inputs) {
    return emitBuiltinCall(loc, g_, op, inputs);
  }
  TypePtr parseType(const Expr& e);

  DefinitionCompiler& compiler_;
  std::shared_ptr<Graph> graph_;
  Graph& g_;
  ResolverPtr resolver_;
  std::optional<MethodContext> method_;
  std::string self_name_;
  std::shared_ptr<Environment> env_;
  std::unordered_set<const Block*> exit_blocks_;
  LoopStatus loop_status_ = LoopStatus::NotInLoop;
  TypePtr declared_return_type_;
  TypePtr merged_return_type_;
  size_t temp_counter_ = 0;
};

class DefinitionCompiler {
 public:
  DefinitionCompiler(const ResolverPtr& resolver, CompilationTarget& target) : resolver_(resolver), target_(target) {}

  void add(const Def& def) {
    const std::string& name = def.name().name();
    if (pending_.count(name) || classes_.count(name) || target_.find(name)) {
      throwSourceError(def.name().range(), "function '" + name + "' is already defined");
    }
    pending_.emplace(name, def);
    order_.push_back(name);
  }
  // A class of the source (or the class being compiled): its name resolves
  // to it, and its methods compile on demand.
  void addClass(const std::string& name, const ClassTypePtr& cls, const SourceRange& loc) {
    if (classes_.count(name) || pending_.count(name)) throwSourceError(loc, "class '" + name + "' is already defined");
    classes_[name] = cls;
    pending_classes_[cls.get()];
    class_order_.push_back(cls);
  }
  void addMethod(const ClassTypePtr& cls, const Def& source_def, const ResolverPtr& resolver) {
    Def def = classMethodDef(source_def);
    auto& methods = pending_classes_[cls.get()];
    const std::string& name = def.name().name();
    if (methods.count(name) || cls->findMethod(name)) {
      throwSourceError(def.name().range(), "method '" + name + "' is already defined");
    }
    methods.emplace(name, PendingMethod{def, resolver ? resolver : resolver_, isStaticMethod(def)});
  }
  // Whether method `name` of `cls` (a class of this source) is a @classmethod.
  bool isClassMethodOf(const ClassTypePtr& cls, const std::string& name) {
    auto methods = pending_classes_.find(cls.get());
    if (methods == pending_classes_.end()) return false;
    auto it = methods->second.find(name);
    return it != methods->second.end() && isClassMethod(it->second.def);
  }
  // A NamedTuple class of the source: its type is built when first used
  // (its fields may name classes defined after it).
  void addNamedTuple(const ClassDef& def, const std::string& qualified_name) {
    const std::string& name = def.name().name();
    if (classes_.count(name) || pending_.count(name) || named_tuple_defs_.count(name)) {
      throwSourceError(def.name().range(), "class '" + name + "' is already defined");
    }
    named_tuple_defs_.emplace(name, std::make_pair(def, qualified_name));
  }
  // Script classes: every method, __init__ first (it defines the attributes).
  void compileClasses() {
    for (const ClassTypePtr& cls : class_order_) {
      std::vector<std::string> names;
      for (const auto& entry : pending_classes_[cls.get()]) names.push_back(entry.first);
      std::stable_partition(names.begin(), names.end(), [](const std::string& n) { return n == "__init__"; });
      for (const std::string& name : names) ensureMethod(cls, name, nullptr);
    }
  }
  void compileAll() {
    compileClasses();
    for (const std::string& name : order_) ensureDefined(name, nullptr);
  }

  // A function of the source being compiled, compiled now if it was not yet.
  std::shared_ptr<Function> ensureDefined(const std::string& name, const SourceRange* use) {
    if (auto it = defined_.find(name); it != defined_.end()) return it->second;
    auto it = pending_.find(name);
    if (it == pending_.end()) return nullptr;
    if (in_progress_.count(name)) {
      throwSourceError(use ? *use : it->second.range(),
                       "function '" + name + "' is called recursively. Recursive calls are not supported");
    }
    in_progress_.insert(name);
    auto graph = std::make_shared<Graph>();
    compiling_.push_back(name);
    FunctionSchema schema = FunctionEmitter(*this, graph, resolver_).emitDef(it->second);
    compiling_.pop_back();
    convertToSSA(graph);
    std::shared_ptr<Function> fn = target_.define(name, graph, std::move(schema));
    in_progress_.erase(name);
    defined_[name] = fn;
    return fn;
  }

  // A method of `cls`, compiled now when it is one of the pending ones or the
  // resolver has its source (the embedder knows the classes' source: only
  // the methods in use are ever compiled); null when there is no such method.
  Function* ensureMethod(const ClassTypePtr& cls, const std::string& name, const SourceRange* use) {
    if (Function* m = cls->findMethod(name)) return m;
    auto& pending = pending_classes_[cls.get()];
    auto it = pending.find(name);
    if (it == pending.end()) {
      std::optional<MethodSource> source = resolver_ ? resolver_->resolveMethod(cls, name) : std::nullopt;
      if (!source) return nullptr;
      if (!source->def || source->def->kind() != TK_DEF) {
        throwSourceError(source->def ? source->def->range() : (use ? *use : SourceRange()),
                         "expected the definition of method '" + name + "'");
      }
      Def def(source->def);
      if (def.name().name() != name) {
        throwSourceError(def.name().range(),
                         "expected the definition of method '" + name + "' but found '" + def.name().name() + "'");
      }
      addMethod(cls, def, source->resolver);
      it = pending.find(name);
    }
    std::string key = cls->name() + "." + name;
    const Def& def = it->second.def;
    if (in_progress_.count(key)) {
      throwSourceError(use ? *use : def.range(),
                       "method '" + name + "' is called recursively. Recursive calls are not supported");
    }
    KILN_CHECK(target_.define_method, "this compilation target cannot take methods");
    in_progress_.insert(key);
    auto graph = std::make_shared<Graph>();
    MethodContext context{cls, name == "__init__" && !cls->isModule()};
    // An error in a method called from another says so, as TorchScript does:
    // "'Net.helper' is being compiled since it was called from 'Net.forward'".
    std::string label = cls->unqualifiedName() + "." + name;
    std::string caller = compiling_.empty() ? std::string() : compiling_.back();
    compiling_.push_back(label);
    std::optional<FunctionSchema> schema;
    try {
      schema = FunctionEmitter(*this, graph, it->second.resolver,
                               it->second.is_static ? std::nullopt : std::optional<MethodContext>(context))
                   .emitDef(def);
    } catch (const Error& e) {
      if (!use || caller.empty()) throw;
      std::string message =
          std::string(e.what()) + "\n'" + label + "' is being compiled since it was called from '" + caller + "'";
      if (auto where = use->fileLineCol()) {
        message += "\n  File \"" + std::get<0>(*where) + "\", line " + std::to_string(std::get<1>(*where)) + "\n" +
                   use->underlinedLine();
      }
      throw Error(message);
    }
    compiling_.pop_back();
    convertToSSA(graph);
    Function* fn = target_.define_method(cls, name, graph, std::move(*schema));
    in_progress_.erase(key);
    return fn;
  }

  // A class TorchScript defines itself (torch.no_grad), compiled into the
  // target the first time this source uses it.
  ClassTypePtr builtinClass(const std::string& qualified_name, const SourceRange& loc) {
    if (auto it = builtin_classes_.find(qualified_name); it != builtin_classes_.end()) return it->second;
    const char* source = builtinClassSource(qualified_name);
    if (!source) throwSourceError(loc, "unknown builtin class " + qualified_name);
    if (!target_.define_class || !target_.define_method) {
      throwSourceError(loc, qualified_name + " is a class, and this compilation unit cannot hold classes");
    }
    Parser parser(std::make_shared<const Source>(source, "<builtin>", 1));
    ClassDef def(parser.parseFile().at(0));
    auto cls = ClassType::create(qualified_name);
    target_.define_class(cls);
    builtin_classes_[qualified_name] = cls;
    pending_classes_[cls.get()];
    std::vector<std::string> names;
    for (Stmt stmt : def.body()) {
      if (stmt.kind() != TK_DEF) continue;
      addMethod(cls, Def(stmt.tree()), nullptr);
      names.push_back(Def(stmt.tree()).name().name());
    }
    for (const std::string& name : names) ensureMethod(cls, name, &loc);
    return cls;
  }

  // `__len__` of a ModuleList/ModuleDict type: the number of its entries.
  void ensureLenMethod(const ClassTypePtr& cls, int64_t length) {
    if (cls->findMethod("__len__")) return;
    KILN_CHECK(target_.define_method, "this compilation target cannot take methods");
    auto graph = std::make_shared<Graph>();
    Value* self = graph->addInput("self");
    self->setType(cls);
    graph->registerOutput(graph->insertConstant(length));
    Argument self_arg;
    self_arg.name = "self";
    self_arg.type = cls;
    Argument ret;
    ret.type = IntType::get();
    target_.define_method(cls, "__len__", graph, FunctionSchema("__len__", "", {self_arg}, {ret}));
  }

  SugaredValuePtr resolve(const std::string& name, Graph& graph, const SourceRange& loc, const ResolverPtr& resolver) {
    if (auto it = classes_.find(name); it != classes_.end()) return makeClassValue(it->second);
    if (auto named_tuple = namedTuple(name, graph)) return named_tuple;
    if (auto fn = ensureDefined(name, &loc)) return makeFunctionValue(fn);
    if (auto fn = target_.find ? target_.find(name) : nullptr) return makeFunctionValue(fn);
    if (resolver) {
      if (auto v = resolver->resolveValue(name, graph, loc)) return v;
    }
    return builtinGlobal(name);
  }

  // A class (or an imported NamedTuple) named in a type annotation, or null.
  TypePtr resolveClass(const std::string& name, Graph& graph, const SourceRange& loc, const ResolverPtr& resolver) {
    if (auto it = classes_.find(name); it != classes_.end()) return it->second;
    if (auto named_tuple = namedTuple(name, graph)) return named_tuple->type();
    if (pending_.count(name)) return nullptr;
    if (!resolver) return nullptr;
    SugaredValuePtr value = resolver->resolveValue(name, graph, loc);
    if (auto named_tuple = std::dynamic_pointer_cast<NamedTupleConstructor>(value)) return named_tuple->type();
    if (auto cls = classOfValue(value)) return cls;
    return resolver->resolveType(name, loc);
  }

  const ResolverPtr& resolver() const { return resolver_; }

  // Why `cls` lacks `field`, from the embedder ("" when it has nothing to say).
  std::string explainMissingAttribute(const ClassTypePtr& cls, const std::string& field) {
    return resolver_ ? resolver_->explainMissingAttribute(cls, field) : std::string();
  }

  // The value of a default argument: an expression made only of constants.
  IValue evaluateDefault(const Expr& e);

 private:
  struct PendingMethod {
    Def def;
    ResolverPtr resolver;
    // A @staticmethod: compiled as a function (no self), called as `C.f(...)`.
    bool is_static = false;
  };
  std::shared_ptr<NamedTupleConstructor> namedTuple(const std::string& name, Graph& graph);
  std::map<std::string, std::pair<ClassDef, std::string>> named_tuple_defs_;
  std::map<std::string, std::shared_ptr<NamedTupleConstructor>> named_tuples_;
  ResolverPtr resolver_;
  CompilationTarget& target_;
  std::map<std::string, Def> pending_;
  std::vector<std::string> order_;
  std::unordered_map<std::string, std::shared_ptr<Function>> defined_;
  std::unordered_set<std::string> in_progress_;
  // The functions and methods being compiled, innermost last ("Net.forward").
  std::vector<std::string> compiling_;
  std::map<std::string, ClassTypePtr> classes_;
  std::vector<ClassTypePtr> class_order_;
  std::map<const ClassType*, std::map<std::string, PendingMethod>> pending_classes_;
  std::map<std::string, ClassTypePtr> builtin_classes_;
};

void FunctionEmitter::ensureField(const ClassTypePtr& cls, const std::string& field, const SourceRange& loc) {
  if (cls->hasAttribute(field) || cls->findConstant(field) || compiler_.ensureMethod(cls, field, &loc)) return;
  // A property: 1.13 compiles its getter into the method `__<name>_getter` (the sugared value calls it).
  if (compiler_.ensureMethod(cls, propertyGetterName(field), &loc)) return;
  std::string why = compiler_.explainMissingAttribute(cls, field);
  if (why.empty()) return;  // the sugared value says it has no such attribute, or knows what it means
  std::string what =
      cls->isModule() ? "Module '" + cls->unqualifiedName() + "'" : "'" + cls->unqualifiedName() + "' object";
  throwSourceError(loc, what + " has no attribute '" + field + "' " + why);
}

// --- environment operations ------------------------------------------------------------------

SugaredValuePtr FunctionEmitter::getSugaredVar(const std::string& name, const SourceRange& loc) {
  if (auto v = findInAnyFrame(name, loc)) return v;
  if (auto v = compiler_.resolve(name, g_, loc, resolver_)) return v;
  throwSourceError(loc, "undefined value " + name);
}

void FunctionEmitter::setSugaredVar(const SourceRange& loc, const std::string& name, SugaredValuePtr value,
                                    TypePtr annotated) {
  // A constant from outside the source (a module's Final, a Python global)
  // is a value once assigned, as in torch, so the variable can be reassigned
  // (`x = self.momentum` in one branch, `x = 0.0` in another); tuples stay
  // sugared for unrolled iteration.
  if (std::dynamic_pointer_cast<ConstantValue>(value)) {
    Value* constant = value->asValue(loc, g_);
    if (constant->type()->kind() != TypeKind::Tuple) value = std::make_shared<SimpleValue>(constant);
  }
  Value* simple = asSimple(value);
  if (simple && !simple->hasDebugName() && meaningfulName(name) && simple->node()->owningBlock() == currentBlock()) {
    simple->setDebugName(name);
  }
  if (auto parent = findInParentFrames(name)) {
    if (annotated) {
      throwSourceError(loc, "Attempting to declare and annotate the type of variable '" + name +
                                "' but it is already defined in an outer block");
    }
    if (!simple) {
      throwSourceError(loc, "Cannot re-assign '" + name + "' to a value of type " + value->kind() + " because " + name +
                                " is not a first-class value.  Only reassignments to first-class values are allowed");
    }
    TypePtr parent_type = findTypeInParentFrames(name);
    if (!parent_type) {
      throwSourceError(loc, "Cannot re-assign '" + name + "' because it has type " + value->kind() + " and " + name +
                                " is not a first-class value.  Only reassignments to first-class values are allowed");
    }
    parent_type = unshapedType(parent_type);
    simple = tryConvertToType(loc, g_, parent_type, simple, true);
    if (!simple->type()->isSubtypeOf(*parent_type)) {
      std::string message = "Variable '" + name + "' previously had type " + parent_type->annotationStr() +
                            " but is now being assigned to a value of type " + simple->type()->annotationStr();
      if (parent_type->kind() == TypeKind::List && simple->type()->kind() == TypeKind::List) {
        message +=
            "\nEmpty lists default to List[Tensor]. Add a variable annotation to the assignment to create an "
            "empty list of another type (torch.jit.annotate(List[T, []]) where T is the type of elements in "
            "the list for Python 2)";
      }
      throwSourceError(loc, message + "\n");
    }
  }
  if (simple) {
    if (annotated && !simple->type()->isSubtypeOf(*annotated)) {
      throwSourceError(loc, "Variable '" + name + "' is annotated with type " + annotated->annotationStr() +
                                " but is being assigned to a value of type " + simple->type()->annotationStr());
    }
    TypePtr store_type = annotated ? annotated : simple->type();
    env_->value_table.erase(name);
    insertStore(name, loc, simple, store_type);
  } else {
    env_->type_table.erase(name);
    env_->value_table[name] = std::move(value);
  }
}

TypePtr FunctionEmitter::parseType(const Expr& e) {
  return typeFromExpr(e, [&](const std::string& name, const SourceRange& loc) -> TypePtr {
    return compiler_.resolveClass(name, g_, loc, resolver_);
  });
}

// --- the function -----------------------------------------------------------------------------

std::string defaultText(const IValue& v) {
  if (v.isString()) {
    std::string out = "\"";
    for (char c : v.toStringRef()) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }
  if (v.isNone()) return "None";
  if (v.isBool()) return v.toBool() ? "True" : "False";
  std::ostringstream out;
  out << v;
  return out.str();
}

FunctionSchema FunctionEmitter::emitDef(const Def& def) {
  pushFrame(g_.block());
  Decl decl = def.decl();
  std::vector<Argument> arguments;
  std::unordered_set<std::string> seen;
  for (Param param : decl.params()) {
    const std::string& name = param.ident().name();
    if (!seen.insert(name).second)
      throwSourceError(param.ident().range(), "duplicate argument '" + name + "' in function definition");
    Argument arg;
    arg.name = name;
    bool is_self = method_ && arguments.empty();
    if (is_self) {
      arg.type = method_->cls;
      // A @classmethod's `cls` is bound to the object as self is.
      if (isClassMethod(def)) arg.name = "self";
    } else {
      arg.type = param.type().present() ? parseType(param.type().get()) : TensorType::get();
    }
    arg.kwarg_only = param.kwargOnly();
    if (param.defaultValue().present()) {
      IValue d = compiler_.evaluateDefault(param.defaultValue().get());
      TypePtr dtype = d.type();
      if (!dtype->isSubtypeOf(*arg.type) && !(arg.type->kind() == TypeKind::Float && dtype->kind() == TypeKind::Int)) {
        throwSourceError(
            param.defaultValue().get().range(),
            "Expected a default value of type " + arg.type->annotationStr() + " on parameter \"" + name + "\".");
      }
      if (arg.type->kind() == TypeKind::Float && d.isInt()) d = IValue(static_cast<double>(d.toInt()));
      arg.default_text = defaultText(d);
      arg.default_value = std::move(d);
    }
    Value* input = g_.addInput(name);
    input->setType(arg.type);
    if (is_self && method_->cls->isModule()) {
      // A module's self is not a variable (TorchScript's ModuleValue): it
      // cannot be reassigned, and its input keeps the name `self`.
      env_->value_table[name] = std::make_shared<SimpleValue>(input);
    } else if (is_self && isClassMethod(def)) {
      // A @classmethod is called on an object (`x.create(a)`) and its first
      // parameter names the class: 1.13 starts its body with `cls = C`.
      env_->value_table[name] = makeClassValue(method_->cls);
    } else {
      setVar(param.range(), name, input);
    }
    if (is_self) self_name_ = name;
    arguments.push_back(std::move(arg));
  }
  if (method_ && arguments.empty()) throwSourceError(def.range(), "methods must have a self argument");
  if (decl.returnType().present()) declared_return_type_ = parseType(decl.returnType().get());

  List<Stmt> body = def.statements();
  emitStatements(body);
  if (!exit_blocks_.count(g_.block())) {
    if (declared_return_type_ && declared_return_type_->kind() != TypeKind::None) {
      // TorchScript's range for a def starts at its name.
      SourceRange from_name(def.range().source(), def.name().range().start(), def.range().end());
      throwSourceError(from_name,
                       "Function was not annotated as having type None, but does not return along all paths");
    }
    Value* none = g_.insertNode(g_.createNone())->output();
    if (!merged_return_type_) merged_return_type_ = declared_return_type_ ? declared_return_type_ : NoneType::get();
    auto merged = unifyTypes(merged_return_type_, NoneType::get());
    if (!declared_return_type_ && !merged) {
      throwSourceError(def.range(), "Previous return statement returned a value of type " +
                                        merged_return_type_->annotationStr() +
                                        " but this return statement returns a value of type NoneType");
    }
    if (!declared_return_type_) merged_return_type_ = *merged;
    g_.insertNode(g_.create(prim::ReturnStmt, {none}, 0));
  } else if (!merged_return_type_) {
    merged_return_type_ = declared_return_type_ ? declared_return_type_ : NoneType::get();
  }
  // convertToSSA replaces this placeholder with the returned value.
  Value* placeholder = g_.insertNode(g_.createUninitialized(merged_return_type_))->output();
  g_.registerOutput(placeholder);

  // Empty list literals no call claimed are lists of tensors.
  std::vector<Node*> empty_lists;
  std::function<void(Block*)> find_empty_lists = [&](Block* b) {
    for (Node* n : b->nodes()) {
      for (Block* sub : n->blocks()) find_empty_lists(sub);
      if (n->kind() == prim::EmptyListLiteral) empty_lists.push_back(n);
    }
  };
  find_empty_lists(g_.block());
  for (Node* n : empty_lists) {
    Node* list = g_.createList(TensorType::get(), {});
    list->insertBefore(n);
    list->setSourceRange(n->sourceRange());
    n->output()->replaceAllUsesWith(list->output());
    n->destroy();
  }

  Argument ret;
  ret.name = "";
  ret.type = merged_return_type_;
  return FunctionSchema(def.name().name(), "", std::move(arguments), {ret});
}

std::shared_ptr<NamedTupleConstructor> DefinitionCompiler::namedTuple(const std::string& name, Graph& graph) {
  if (auto it = named_tuples_.find(name); it != named_tuples_.end()) return it->second;
  auto def = named_tuple_defs_.find(name);
  if (def == named_tuple_defs_.end()) return nullptr;
  std::vector<std::string> names;
  std::vector<TypePtr> types;
  std::vector<std::optional<IValue>> defaults;
  for (const NamedTupleField& field : namedTupleFields(def->second.first)) {
    names.push_back(field.name);
    types.push_back(typeFromExpr(field.type, [&](const std::string& n, const SourceRange& loc) -> TypePtr {
      return resolveClass(n, graph, loc, resolver_);
    }));
    std::optional<IValue> value;
    if (field.default_value) {
      value = evaluateDefault(*field.default_value);
      // 1.13 checks defaults as arguments: `scale: float = 2` is an error (no int-to-float here).
      TypePtr value_type = value->type();
      if (!value_type->isSubtypeOf(*types.back())) {
        throwSourceError(field.default_value->range(),
                         "Expected a value of type '" + types.back()->annotationStr() + "' for argument '" +
                             field.name + "' but instead found type '" + value_type->annotationStr() + "'.");
      }
    }
    defaults.push_back(std::move(value));
  }
  auto type = std::static_pointer_cast<const TupleType>(
      TupleType::createNamed(def->second.second, std::move(names), std::move(types)));
  auto ctor = std::make_shared<NamedTupleConstructor>(type, std::move(defaults));
  named_tuples_[name] = ctor;
  return ctor;
}

IValue DefinitionCompiler::evaluateDefault(const Expr& e) {
  auto graph = std::make_shared<Graph>();
  FunctionEmitter emitter(*this, graph, resolver_);
  Value* v = emitter.emitStandaloneExpr(e);
  // Run every node: defaults are made of constants (literals, -1, tuples, math.pi).
  std::unordered_map<const Value*, IValue> values;
  for (Node* n : graph->nodes()) {
    if (n->kind() == prim::Constant) {
      values[n->output()] = *toIValue(n->output());
      continue;
    }
    if (!n->blocks().empty() || n->kind() == prim::Load || n->kind() == prim::Store) {
      throwSourceError(e.range(), "default arguments must be constants");
    }
    Stack stack;
    for (Value* in : n->inputs()) stack.push_back(values.at(in));
    Operation op = findOperation(*n);
    if (!op) throwSourceError(e.range(), "default arguments must be constants");
    op(stack);
    for (size_t i = 0; i < n->outputs().size(); ++i) values[n->output(i)] = stack.at(i);
  }
  return values.at(v);
}

// --- statements -------------------------------------------------------------------------------

void FunctionEmitter::emitStatements(const List<Stmt>& statements) {
  for (Stmt stmt : statements) {
    emitStatement(stmt);
    // Nothing after an exit runs.
    if (exit_blocks_.count(currentBlock())) return;
  }
}

void FunctionEmitter::emitStatement(const Stmt& stmt) {
  switch (stmt.kind()) {
    case TK_IF: emitIf(If(stmt.tree())); break;
    case TK_WHILE: emitWhile(While(stmt.tree())); break;
    case TK_FOR: emitFor(For(stmt.tree())); break;
    case TK_ASSIGN: emitAssignment(Assign(stmt.tree())); break;
    case TK_AUG_ASSIGN: emitAugAssignment(AugAssign(stmt.tree())); break;
    case TK_EXPR_STMT: {
      Expr e = ExprStmt(stmt.tree()).expr();
      // A bare string is a docstring or comment.
      if (e.kind() != TK_STRINGLITERAL) emitSugaredExpr(e, 0);
      break;
    }
    case TK_RAISE: emitRaise(Raise(stmt.tree())); break;
    case TK_ASSERT: emitAssert(Assert(stmt.tree())); break;
    case TK_RETURN: emitReturn(Return(stmt.tree())); break;
    case TK_CONTINUE: emitBreakOrContinue(stmt, prim::ContinueStmt); break;
    case TK_BREAK: emitBreakOrContinue(stmt, prim::BreakStmt); break;
    case TK_PASS: break;
    case TK_WITH: emitWith(With(stmt.tree())); break;
    case TK_DELETE: emitDelete(Delete(stmt.tree())); break;
    case TK_IMPORT:
    case TK_IMPORT_FROM: break;
    case TK_DEF: throwSourceError(stmt.range(), "nested functions are not supported"); break;
    case TK_CLASS: throwSourceError(stmt.range(), "class definitions inside functions are not supported"); break;
    default: throwSourceError(stmt.range(), "Unrecognized statement kind " + kindToString(stmt.kind()));
  }
}

bool FunctionEmitter::validateAssignLhs(const List<Expr>& lhs, const SourceRange& r) {
  size_t starred = 0;
  for (Expr e : lhs) {
    if (e.kind() == TK_STARRED) {
      ++starred;
      if (Starred(e.tree()).expr().kind() != TK_VAR)
        throwSourceError(e.range(), "Cannot pack a tuple into a non-variable");
    }
  }
  if (starred > 1) throwSourceError(r, "Only one starred expression is allowed on the lhs");
  if (starred > 0 && lhs.size() == 1)
    throwSourceError(
        r, "A Starred expression may only appear on the lhs within the presence of another non-starred expression");
  return starred == 1;
}

void FunctionEmitter::emitAssignment(const Assign& stmt) {
  List<Expr> targets = stmt.lhsList();
  if (!stmt.rhs().present()) {
    throwSourceError(stmt.range(), "For an assignment, expected an expression on the right-hand side");
  }
  Expr rhs = stmt.rhs().get();
  TypePtr type = stmt.type().present() ? parseType(stmt.type().get()) : nullptr;
  if (targets.size() == 1) return emitSingleAssignment(stmt.range(), targets[0], rhs, type);
  // a = b = expr: the right side once, then the targets left to right.
  std::string tmp = "$tmp_assign_" + std::to_string(temp_counter_++);
  setSugaredVar(rhs.range(), tmp, emitSugaredExpr(rhs, 1), nullptr);
  for (Expr target : targets) {
    SugaredValuePtr value = getSugaredVar(tmp, rhs.range());
    switch (target.kind()) {
      case TK_VAR: setSugaredVar(target.range(), Var(target.tree()).name().name(), value, nullptr); break;
      case TK_TUPLE_LITERAL: {
        TupleLiteral tl(target.tree());
        bool starred = validateAssignLhs(tl.inputs(), tl.range());
        emitTupleAssign(tl, value, rhs.range(), tl.inputs().size() - (starred ? 1 : 0), starred);
        break;
      }
      case TK_SUBSCRIPT:
        emitSubscriptAssign(stmt.range(), Subscript(target.tree()), value->asValue(rhs.range(), g_));
        break;
      default: throwSourceError(target.range(), "unexpected expression on left-hand side of assignment");
    }
  }
}

void FunctionEmitter::emitSingleAssignment(const SourceRange& range, const Expr& lhs, const Expr& rhs, TypePtr type) {
  switch (lhs.kind()) {
    case TK_VAR: {
      SugaredValuePtr value = emitSugaredExpr(rhs, 1, type);
      if (type) {
        if (Value* v = asSimple(value)) {
          v = tryConvertToType(rhs.range(), g_, type, v, true);
          value = std::make_shared<SimpleValue>(v);
        }
      }
      setSugaredVar(lhs.range(), Var(lhs.tree()).name().name(), value, type);
      break;
    }
    case TK_TUPLE_LITERAL: {
      TupleLiteral tl(lhs.tree());
      bool starred = validateAssignLhs(tl.inputs(), tl.range());
      size_t n_binders = tl.inputs().size() - (starred ? 1 : 0);
      emitTupleAssign(tl, emitSugaredExpr(rhs, n_binders), rhs.range(), n_binders, starred);
      break;
    }
    case TK_SUBSCRIPT: {
      Value* value = emitExpr(rhs);
      emitSubscriptAssign(range, Subscript(lhs.tree()), value);
      break;
    }
    case '.': emitAttributeAssign(range, Select(lhs.tree()), rhs, type); break;
    default: throwSourceError(lhs.range(), "unexpected expression on left-hand side of assignment");
  }
}

void FunctionEmitter::emitAttributeAssign(const SourceRange& range, const Select& lhs, const Expr& rhs,
                                          const TypePtr& annotated) {
  Value* object = emitExpr(lhs.value());
  auto cls = std::const_pointer_cast<ClassType>(std::dynamic_pointer_cast<const ClassType>(object->type()));
  const std::string& field = lhs.selector().name();
  if (!cls) {
    throwSourceError(lhs.range(), "Tried to set an attribute '" + field + "' of a value of type " +
                                      object->type()->annotationStr() + ", which is not an object");
  }
  if (cls->findConstant(field)) throwSourceError(lhs.range(), "Cannot set constant attribute '" + field + "'");
  auto slot = cls->findAttributeSlot(field);
  if (!slot && !annotated && compiler_.ensureMethod(cls, propertySetterName(field), &lhs.range())) {
    // Assigning a property with a setter calls `__<name>_setter`, as 1.13 does.
    Value* value = emitExpr(rhs);
    MethodValue(object, propertySetterName(field)).call(range, g_, {NamedValue(value)}, {}, 0);
    return;
  }
  TypePtr expected = annotated ? annotated : (slot ? cls->attributeType(*slot) : nullptr);
  Value* value = emitExpr(rhs, expected);
  if (expected) value = tryConvertToType(rhs.range(), g_, expected, value, true);
  if (!slot) {
    bool may_define = method_ && method_->defines_attributes && lhs.value().kind() == TK_VAR &&
                      Var(lhs.value().tree()).name().name() == self_name_;
    if (!may_define) {
      throwSourceError(lhs.range(), "Tried to set nonexistent attribute: " + field +
                                        ". Did you forget to initialize it in __init__()?");
    }
    TypePtr type = annotated ? annotated : unshapedType(value->type());
    if (value->type()->kind() == TypeKind::None && !annotated) {
      throwSourceError(range, "Attribute '" + field + "' of class '" + cls->unqualifiedName() +
                                  "' is set to None without a type annotation; annotate it "
                                  "(self." +
                                  field + ": Optional[T] = None)");
    }
    if (!value->type()->isSubtypeOf(*type)) {
      throwSourceError(range, "Variable '" + field + "' is annotated with type " + type->annotationStr() +
                                  " but is being assigned to a value of type " + value->type()->annotationStr());
    }
    slot = cls->addAttribute(field, type);
  } else {
    if (annotated && *annotated != *cls->attributeType(*slot)) {
      throwSourceError(range, "Attribute '" + field + "' was already declared with type " +
                                  cls->attributeType(*slot)->annotationStr());
    }
    if (cls->isModule() && cls->attributeKind(*slot) == SlotKind::Module) {
      throwSourceError(lhs.range(), "Cannot re-assign submodule '" + field + "' in TorchScript");
    }
    const TypePtr& type = cls->attributeType(*slot);
    if (!value->type()->isSubtypeOf(*type)) {
      throwSourceError(range, "Wrong type for attribute assignment. Expected " + type->annotationStr() + " but got " +
                                  value->type()->annotationStr());
    }
  }
  // 1.13 gives attribute nodes no source range.
  g_.insertNode(g_.createSetAttr(object, field, value));
}

void FunctionEmitter::emitTupleAssign(const TupleLiteral& tl, const SugaredValuePtr& rhs, const SourceRange& rhs_loc,
                                      size_t n_binders, bool starred) {
  auto outputs = rhs->asTuple(rhs_loc, g_, starred ? std::nullopt : std::optional<size_t>(n_binders));
  if (outputs.size() < n_binders) {
    throwSourceError(tl.range(), std::string("need ") + (starred ? "at least " : "") + std::to_string(n_binders) +
                                     " values to unpack but found only " + std::to_string(outputs.size()));
  }
  if (outputs.size() > n_binders && !starred) {
    throwSourceError(tl.range(), "too many values to unpack: need " + std::to_string(n_binders) + " but found " +
                                     std::to_string(outputs.size()));
  }
  emitExprsAssign(tl.inputs(), outputs, rhs_loc, n_binders);
}

void FunctionEmitter::emitExprsAssign(const List<Expr>& lhs, const std::vector<SugaredValuePtr>& outputs,
                                      const SourceRange& rhs_loc, size_t n_binders) {
  size_t i = 0;
  for (Expr target : lhs) {
    switch (target.kind()) {
      case TK_SUBSCRIPT:
        emitSubscriptAssign(rhs_loc, Subscript(target.tree()), outputs.at(i)->asValue(rhs_loc, g_));
        ++i;
        break;
      case TK_VAR:
        setSugaredVar(target.range(), Var(target.tree()).name().name(), outputs.at(i), nullptr);
        ++i;
        break;
      case TK_STARRED: {
        Expr var = Starred(target.tree()).expr();
        size_t n_matched = outputs.size() - n_binders;
        std::vector<Value*> values;
        for (size_t k = i; k < i + n_matched; ++k) values.push_back(outputs[k]->asValue(target.range(), g_));
        Value* tuple = g_.insertNode(g_.createTuple(values))->output();
        setVar(var.range(), Var(var.tree()).name().name(), tuple);
        i += n_matched;
        break;
      }
      case TK_TUPLE_LITERAL: {
        TupleLiteral sub(target.tree());
        bool starred = validateAssignLhs(sub.inputs(), sub.range());
        emitTupleAssign(sub, outputs.at(i), rhs_loc, sub.inputs().size() - (starred ? 1 : 0), starred);
        ++i;
        break;
      }
      default: throwSourceError(target.range(), "unexpected expression on the left-hand side");
    }
  }
}

void FunctionEmitter::emitSubscriptAssign(const SourceRange& range, const Subscript& lhs, Value* rhs) {
  Value* sliceable = emitExpr(lhs.value());
  if (lhs.subscriptExprs().size() == 1 && isScriptObject(sliceable)) {
    Value* index = emitExpr(lhs.subscriptExprs()[0]);
    if (emitMagicCall(range, sliceable, "__setitem__", {index, rhs})) return;
  }
  if (sliceable->type()->isSubtypeOf(*TensorType::get())) {
    auto [sliced, tensor_indices] =
        emitIntAndSliceIndexing(lhs.range(), sliceable, desugarSubscripts(lhs.subscriptExprs()));
    Value* value = rhs;
    if (!value->type()->isSubtypeOf(*TensorType::get())) {
      // A number becomes a tensor of the target's dtype and device.
      Value* target = sliced;
      Value* dtype = g_.insert(prim::dtype, {target}, {}, range);
      Value* device = g_.insert(prim::device, {target}, {}, range);
      value = emitBuiltinCall(range, g_, aten::tensor, {NamedValue(range, value)},
                              {NamedValue(range, "dtype", dtype), NamedValue(range, "device", device),
                               NamedValue(range, "requires_grad", g_.insertConstant(false, range))});
    }
    if (tensor_indices.empty()) {
      emitBuiltinCall(range, g_, aten::copy_, {NamedValue(range, sliced), NamedValue(range, value)}, {});
    } else {
      Value* indices = g_.insertNode(g_.createList(OptionalType::create(TensorType::get()), tensor_indices))->output();
      emitBuiltinCall(range, g_, Symbol::fromQualString("aten::index_put_"),
                      {NamedValue(range, sliced), NamedValue(range, indices), NamedValue(range, value)}, {});
    }
    return;
  }
  List<Expr> subscripts = lhs.subscriptExprs();
  if (subscripts.size() != 1 || subscripts[0].kind() == TK_SLICE_EXPR) {
    // TorchScript points at the brackets.
    SourceRange brackets(lhs.range().source(), lhs.value().range().end(), lhs.range().end());
    throwSourceError(brackets,
                     "Sliced expression not yet supported for subscripted assignment. File a bug if you want this");
  }
  if (sliceable->type()->cast<TupleType>()) {
    throwSourceError(lhs.range(), sliceable->type()->annotationStr() + " does not support subscripted assignment");
  }
  Value* index = emitExpr(subscripts[0]);
  emitBuiltinCall(range, g_, aten::_set_item,
                  {NamedValue(range, sliceable), NamedValue(range, index), NamedValue(range, rhs)}, {});
}

const char* magicMethodName(int kind);

Symbol FunctionEmitter::augOp(const AugAssign& stmt, const TypePtr& type) {
  bool inplace = type->isSubtypeOf(*TensorType::get()) || type->kind() == TypeKind::List;
  auto s = [](const char* q) { return Symbol::fromQualString(q); };
  switch (stmt.augOp()) {
    case '+': return inplace ? aten::add_ : aten::add;
    case '-': return inplace ? aten::sub_ : aten::sub;
    case '/': return inplace ? aten::div_ : aten::div;
    case '*': return inplace ? aten::mul_ : aten::mul;
    case '%': return inplace ? s("aten::fmod_") : aten::fmod;
    case '|': return inplace ? s("aten::bitwise_or") : aten::__or__;
    case '&': return inplace ? s("aten::bitwise_and") : aten::__and__;
    case '^': return inplace ? s("aten::bitwise_xor") : s("aten::__xor__");
    case TK_LSHIFT: return s("aten::__lshift__");
    case TK_RSHIFT: return inplace ? s("aten::__irshift__") : s("aten::__rshift__");
    case TK_POW: return aten::pow;
    case TK_FLOOR_DIV: return inplace ? s("aten::floor_divide_") : aten::floordiv;
    default: throwSourceError(stmt.range(), "Unknown augmented assignment: " + kindToString(stmt.augOp()));
  }
}

void FunctionEmitter::emitAugAssignment(const AugAssign& stmt) {
  Expr lhs = stmt.lhs();
  if (lhs.kind() == TK_VAR) {
    Var var(lhs.tree());
    Value* current = emitExpr(lhs);
    Value* rhs = emitExpr(stmt.rhs());
    if (auto cls = current->type()->cast<ClassType>(); cls && !cls->isModule()) {
      // An object: `a += b` calls a.__iadd__(b), else a.__add__(b), as 1.13.
      const char* magic = magicMethodName(stmt.augOp());
      std::string inplace = magic ? "__i" + std::string(magic + 2) : "__i?__";
      Value* result = magic ? emitMagicCall(stmt.range(), current, inplace, {rhs}) : nullptr;
      if (!result && magic) result = emitMagicCall(stmt.range(), current, magic, {rhs});
      if (!result) {
        throwSourceError(stmt.range(), "Cannot emit inplace op on " + cls->annotationStr() +
                                           " since it does not define an " + inplace + " method");
      }
      setVar(lhs.range(), var.name().name(), result);
      return;
    }
    Value* result = emitBuiltinCall(stmt.range(), g_, augOp(stmt, current->type()),
                                    {NamedValue(lhs.range(), current), NamedValue(stmt.rhs().range(), rhs)}, {});
    setVar(lhs.range(), var.name().name(), result);
    return;
  }
  if (lhs.kind() == '.') {
    // self.x += v: read, operate (in place for tensors and lists), write back.
    Select select(lhs.tree());
    Value* object = emitExpr(select.value());
    Value* current = SimpleValue(object).attr(lhs.range(), g_, select.selector().name())->asValue(lhs.range(), g_);
    Value* rhs = emitExpr(stmt.rhs());
    Value* result = emitBuiltinCall(stmt.range(), g_, augOp(stmt, current->type()),
                                    {NamedValue(lhs.range(), current), NamedValue(stmt.rhs().range(), rhs)}, {});
    auto cls = object->type()->cast<ClassType>();
    if (!cls || !cls->hasAttribute(select.selector().name())) {
      throwSourceError(lhs.range(),
                       "augmented assignment to '" + select.selector().name() + "', which is not an attribute");
    }
    const TypePtr& type = cls->attributeType(*cls->findAttributeSlot(select.selector().name()));
    result = tryConvertToType(stmt.range(), g_, type, result, true);
    if (!result->type()->isSubtypeOf(*type)) {
      throwSourceError(stmt.range(), "Wrong type for attribute assignment. Expected " + type->annotationStr() +
                                         " but got " + result->type()->annotationStr());
    }
    g_.insertNode(g_.createSetAttr(object, select.selector().name(), result));
    return;
  }
  if (lhs.kind() != TK_SUBSCRIPT) {
    throwSourceError(lhs.range(), "unexpected expression on left-hand side of augmented assignment");
  }
  Subscript sub(lhs.tree());
  Value* sliceable = emitExpr(sub.value());
  if (sliceable->type()->isSubtypeOf(*TensorType::get())) {
    auto [sliced, tensor_indices] = emitIntAndSliceIndexing(sub.range(), sliceable, sub.subscriptExprs());
    Value* rhs = emitExpr(stmt.rhs());
    Symbol op = augOp(stmt, sliceable->type());
    if (tensor_indices.empty()) {
      emitBuiltinCall(stmt.range(), g_, op, {NamedValue(stmt.rhs().range(), rhs)}, {}, NamedValue(lhs.range(), sliced));
    } else {
      Value* indices = g_.insertNode(g_.createList(OptionalType::create(TensorType::get()), tensor_indices))->output();
      Value* indexed = call(stmt.range(), aten::index, {sliced, indices});
      Value* augmented = emitBuiltinCall(stmt.range(), g_, op, {NamedValue(stmt.rhs().range(), rhs)}, {},
                                         NamedValue(lhs.range(), indexed));
      call(stmt.range(), Symbol::fromQualString("aten::index_put_"), {sliced, indices, augmented});
    }
    return;
  }
  List<Expr> subscripts = sub.subscriptExprs();
  if (subscripts.size() != 1 || subscripts[0].kind() == TK_SLICE_EXPR) {
    throwSourceError(
        subscripts.range(),
        "Sliced expression not yet supported for subscripted list augmented assignment. File a bug if you want this");
  }
  Value* index = emitExpr(subscripts[0]);
  Value* rhs = emitExpr(stmt.rhs());
  Value* item = call(stmt.range(), aten::__getitem__, {sliceable, index});
  Value* augmented = call(stmt.range(), augOp(stmt, item->type()), {item, rhs});
  call(stmt.range(), aten::_set_item, {sliceable, index, augmented});
}

void FunctionEmitter::insertRefinements(const SourceRange& loc, const RefinementSet& refs) {
  for (const Refinement& r : refs.true_refinements) {
    Value* v = getVar(r.name, loc);
    Node* cast = g_.insertNode(g_.create(prim::unchecked_cast, {v}));
    cast->output()->setType(r.type);
    setVar(loc, r.name, cast->output());
  }
}

std::shared_ptr<Environment> FunctionEmitter::emitSingleIfBranch(Block* b, const List<Stmt>& branch,
                                                                 const RefinementSet& refs) {
  pushFrame(b);
  WithInsertPoint guard(b);
  insertRefinements(branch.range(), refs);
  emitStatements(branch);
  return popFrame();
}

void FunctionEmitter::emitIf(const If& stmt) {
  CondValue cond = emitCondExpr(stmt.cond());
  emitIfElseBlocks(stmt.range(), cond, stmt.trueBranch(), stmt.falseBranch());
}

void FunctionEmitter::emitIfElseBlocks(const SourceRange& loc, const CondValue& cond, const List<Stmt>& true_branch,
                                       const List<Stmt>& false_branch) {
  if (cond.static_if) {
    if (*cond.static_if) {
      insertRefinements(loc, cond.refinements);
      emitStatements(true_branch);
    } else {
      emitStatements(false_branch);
    }
    return;
  }
  Node* n = g_.insertNode(g_.create(prim::If, {cond.value}, 0));
  n->setSourceRange(loc);
  Block* true_block = n->addBlock();
  Block* false_block = n->addBlock();
  auto save_true = emitSingleIfBranch(true_block, true_branch, cond.refinements);
  auto save_false = emitSingleIfBranch(false_block, false_branch, cond.refinements.Not());
  bool true_exits = exit_blocks_.count(true_block);
  bool false_exits = exit_blocks_.count(false_block);
  if (true_exits && false_exits) exit_blocks_.insert(n->owningBlock());

  // A variable assigned in one branch is defined after the if only when the
  // other branch defines it too (or exits).
  auto defined_in = [&](const std::shared_ptr<Environment>& frame, const std::string& name) {
    for (auto e = frame; e; e = e->next) {
      if (e->findTypeInFrame(name) || e->value_table.count(name)) return true;
    }
    return false;
  };
  std::set<std::string> mutated;
  for (const std::string& v : save_true->definedVariables()) {
    if (defined_in(save_false, v) || false_exits) {
      mutated.insert(v);
    } else {
      env_->error_messages[v] = formatSourceError(loc, v + " is not defined in the false branch");
    }
  }
  for (const std::string& v : save_false->definedVariables()) {
    if (defined_in(save_true, v) || true_exits) {
      mutated.insert(v);
    } else {
      env_->error_messages[v] = formatSourceError(loc, v + " is not defined in the true branch");
    }
  }
  auto type_in = [&](const std::shared_ptr<Environment>& frame, const std::string& name) -> TypePtr {
    for (auto e = frame; e; e = e->next) {
      if (auto t = e->findTypeInFrame(name)) return t;
    }
    return nullptr;
  };
  // When both branches exit, nothing is defined after the if.
  if (true_exits && false_exits) mutated.clear();
  for (const std::string& x : mutated) {
    TypePtr tt = true_exits ? nullptr : type_in(save_true, x);
    TypePtr ft = false_exits ? nullptr : type_in(save_false, x);
    if (!tt || !ft) {
      // The exiting branch gets an uninitialized value of the other's type.
      Block* exiting = tt ? false_block : true_block;
      TypePtr type = tt ? tt : ft;
      Node* uninit = g_.createUninitialized(type)->insertBefore(exiting->returnNode());
      Node* store = g_.create(prim::Store, {uninit->output()}, 0);
      store->s_(attr::name, x);
      store->insertBefore(exiting->returnNode());
      tt = ft = type;
    }
    TypePtr full_type = type_in(env_, x);
    bool default_to_union =
        full_type && (full_type->kind() == TypeKind::Union || full_type->kind() == TypeKind::Optional ||
                      full_type->kind() == TypeKind::Number);
    auto unified = unifyTypes(tt, ft, default_to_union);
    if (!unified) {
      std::string message =
          formatSourceError(loc, "Type mismatch: " + x + " is set to type " + tt->annotationStr() +
                                     " in the true branch and type " + ft->annotationStr() + " in the false branch");
      // Already in scope before the if: the mismatch is an error now;
      // otherwise only a later use is.
      if (type_in(env_, x)) throw Error(message);
      env_->error_messages[x] = message;
      continue;
    }
    env_->type_table[x] = *unified;
    env_->value_table.erase(x);
    env_->error_messages.erase(x);
  }
}

void FunctionEmitter::emitWhile(const While& stmt) {
  emitLoopCommon(
      stmt.range(), [&] { emitStatements(stmt.body()); }, nullptr, std::nullopt, stmt.cond());
}

void FunctionEmitter::emitFor(const For& stmt) {
  emitFor(stmt.targets(), stmt.itrs(), stmt.range(), [&] { emitStatements(stmt.body()); });
}

void FunctionEmitter::emitFor(const List<Expr>& targets, const List<Expr>& itrs, const SourceRange& loc,
                              const std::function<void()>& emit_body) {
  if (itrs.size() != 1) throwSourceError(loc, "List of iterables is not supported currently");
  SugaredValuePtr sv = emitSugaredExpr(itrs[0], 1);
  SugaredValuePtr iterable = sv->iter(loc, g_);
  if (iterable->shouldEmitUnrolled()) {
    emitUnrolledLoop(loc, emit_body, iterable, targets);
  } else {
    emitLoopCommon(loc, emit_body, iterable, targets, std::nullopt);
  }
}

void FunctionEmitter::emitUnrolledLoop(const SourceRange& loc, const std::function<void()>& emit_body,
                                       const SugaredValuePtr& iterable, const List<Expr>& targets) {
  int64_t len = *iterable->staticLen();
  LoopStatus saved = loop_status_;
  loop_status_ = LoopStatus::InUnrolledLoop;
  for (int64_t i = 0; i < len; ++i) {
    Value* index = g_.insertConstant(i, loc);
    SugaredValuePtr item = iterable->getitem(loc, g_, index);
    emitExprsAssign(targets, {item}, targets.range(), 1);
    emit_body();
  }
  loop_status_ = saved;
}

void FunctionEmitter::emitLoopCommon(const SourceRange& range, const std::function<void()>& emit_body,
                                     const SugaredValuePtr& iter_val, std::optional<List<Expr>> targets,
                                     std::optional<Expr> cond) {
  Value* max_trip_count =
      iter_val ? iter_val->len(range, g_) : g_.insertConstant(std::numeric_limits<int64_t>::max(), range);
  Node* n = g_.insertNode(g_.create(prim::Loop, {max_trip_count}, 0));
  n->setSourceRange(range);
  Block* body = n->addBlock();
  {
    Block* condition = n->addBlock();
    pushFrame(condition);
    Value* out;
    if (cond) {
      WithInsertPoint guard(condition);
      out = emitToBool(cond->range(), emitExpr(*cond));
    } else {
      WithInsertPoint guard(n);
      out = g_.insertConstant(true, range);
    }
    condition->registerOutput(out);
    popFrame();
  }
  LoopStatus saved = loop_status_;
  loop_status_ = LoopStatus::InLoop;
  Value* trip_count = body->addInput();
  trip_count->setType(IntType::get());
  {
    pushFrame(body);
    WithInsertPoint guard(body);
    if (iter_val && targets) {
      Value* element = iter_val->getitem(range, g_, trip_count)->asValue(range, g_);
      emitExprsAssign(*targets, {std::make_shared<SimpleValue>(element)}, range, 1);
    }
    emit_body();
    popFrame();
  }
  loop_status_ = saved;
}

void FunctionEmitter::emitBreakOrContinue(const Stmt& stmt, Symbol kind) {
  const char* word = kind == prim::BreakStmt ? "break" : "continue";
  if (loop_status_ == LoopStatus::NotInLoop)
    throwSourceError(stmt.range(), std::string("SyntaxError: '") + word + "' outside loop");
  if (loop_status_ == LoopStatus::InUnrolledLoop) {
    throwSourceError(stmt.range(),
                     "Because we emit iteration over modulelists or tuples as unrolled loops, we do not support "
                     "break or continue inside the body of these loops");
  }
  g_.insertNode(g_.create(kind, {}, 0))->setSourceRange(stmt.range());
  exit_blocks_.insert(currentBlock());
}

void FunctionEmitter::emitReturn(const Return& stmt) {
  TypePtr declared = declared_return_type_;
  Value* result;
  if (stmt.expr().present()) {
    result = emitExpr(stmt.expr().get(), declared);
  } else {
    result = g_.insertNode(g_.createNone())->output();
  }
  if (declared) {
    if (!(result->type()->isSubtypeOf(*TensorType::get()) && result->type()->kind() == TypeKind::None)) {
      result = tryConvertToType(stmt.range(), g_, declared, result, true);
    }
    if (!result->type()->isSubtypeOf(*declared)) {
      throwSourceError(stmt.range(), "Return value was annotated as having type " + declared->annotationStr() +
                                         " but is actually of type " + result->type()->annotationStr());
    }
  } else {
    declared = merged_return_type_ ? merged_return_type_ : result->type();
    auto merged = unifyTypes(declared, result->type());
    if (!merged) {
      throwSourceError(stmt.range(), "Previous return statement returned a value of type " + declared->annotationStr() +
                                         " but this return statement returns a value of type " +
                                         result->type()->annotationStr());
    }
    declared = *merged;
  }
  merged_return_type_ = declared;
  if (declared->kind() == TypeKind::Any && result->type()->kind() != TypeKind::Any) {
    Node* cast = g_.insertNode(g_.create(prim::unchecked_cast, {result}));
    cast->output()->setType(declared);
    result = cast->output();
  }
  g_.insertNode(g_.create(prim::ReturnStmt, {result}, 0))->setSourceRange(stmt.range());
  exit_blocks_.insert(currentBlock());
}

void FunctionEmitter::emitRaise(const Raise& stmt) {
  if (!stmt.expr().present()) throwSourceError(stmt.range(), "bare 'raise' (re-raising) is not supported");
  SugaredValuePtr sv = emitSugaredExpr(stmt.expr().get(), 1);
  Value* message = nullptr;
  Value* class_name = nullptr;
  if (auto instance = std::dynamic_pointer_cast<ExceptionMessageValue>(sv)) {
    message = instance->message();
    class_name = instance->qualifiedClassName();
  } else if (std::dynamic_pointer_cast<ExceptionValue>(sv)) {
    message = g_.insertConstant(std::string(), stmt.range());
    class_name = g_.insertNode(g_.createNone())->output();
  } else {
    throwSourceError(stmt.range(), "exceptions must derive from BaseException");
  }
  if (message->type()->kind() != TypeKind::String) message = call(stmt.range(), aten::str, {message});
  g_.insertNode(g_.create(prim::RaiseException, {message, class_name}, 0))->setSourceRange(stmt.range());
  exit_blocks_.insert(currentBlock());
}

void FunctionEmitter::emitAssert(const Assert& stmt) {
  // `assert c, msg` is `if c: pass` / `else: raise AssertionError(msg)`, so
  // that c's refinements hold afterwards through the if's outputs.
  const SourceRange& r = stmt.range();
  TreeRef message =
      stmt.msg().present() ? stmt.msg().get().tree() : Tree::create(TK_STRINGLITERAL, r, {Tree::atom("", r)});
  TreeRef callee = Tree::create(TK_VAR, r, {Tree::create(TK_IDENT, r, {Tree::atom("AssertionError", r)})});
  TreeRef apply =
      Tree::create(TK_APPLY, r, {callee, Tree::create(TK_LIST, r, {message}), Tree::create(TK_LIST, r, {})});
  TreeRef raise = Tree::create(TK_RAISE, r, {Tree::create(TK_OPTION, r, {apply}), Tree::create(TK_OPTION, r, {})});
  CondValue cond = emitCondExpr(stmt.test());
  emitIfElseBlocks(r, cond, List<Stmt>(Tree::create(TK_LIST, r, {})), List<Stmt>(Tree::create(TK_LIST, r, {raise})));
}

void FunctionEmitter::emitWith(const With& stmt) {
  std::vector<Value*> entered;
  for (WithItem item : stmt.targets()) {
    Expr e = item.target();
    Value* obj = emitExpr(e);
    auto cls = std::const_pointer_cast<ClassType>(std::dynamic_pointer_cast<const ClassType>(obj->type()));
    if (!cls) throwSourceError(e.range(), "With item expression must return an object");
    compiler_.ensureMethod(cls, "__enter__", &e.range());
    compiler_.ensureMethod(cls, "__exit__", &e.range());
    Function* enter = cls->findMethod("__enter__");
    Function* exit = cls->findMethod("__exit__");
    if (!enter || !exit) {
      throwSourceError(e.range(),
                       "Object returned by with item expression does not define __enter__ and __exit__ methods");
    }
    Node* n = g_.insertNode(g_.create(prim::Enter, {obj}));
    n->output()->setType(enter->getSchema().returns().empty() ? NoneType::get() : enter->getSchema().returns()[0].type);
    entered.push_back(obj);
    if (item.var().present()) {
      Expr var = item.var().get();
      if (var.kind() != TK_VAR) throwSourceError(var.range(), "with ... as must bind a name");
      setVar(var.range(), Var(var.tree()).name().name(), n->output());
    }
  }
  emitStatements(stmt.body());
  for (auto it = entered.rbegin(); it != entered.rend(); ++it) {
    // One output, as 1.13's: what __exit__ returns (the interpreter stores it).
    Function* exit = (*it)->type()->cast<ClassType>()->findMethod("__exit__");
    Node* n = g_.insertNode(g_.create(prim::Exit, {*it}, 1));
    const auto& returns = exit->getSchema().returns();
    n->output()->setType(returns.empty() ? NoneType::get() : returns[0].type);
  }
}

void FunctionEmitter::emitDelete(const Delete& stmt) {
  for (Expr target : stmt.targets()) {
    if (target.kind() == TK_SUBSCRIPT) {
      Subscript sub(target.tree());
      if (sub.subscriptExprs().size() != 1)
        throwSourceError(target.range(), "del statements only support a single index");
      Value* container = emitExpr(sub.value());
      Value* index = emitExpr(sub.subscriptExprs()[0]);
      if (isScriptObject(container)) {
        // `del obj[k]` calls the class's __delitem__, as 1.13 does.
        if (!emitMagicCall(target.range(), container, "__delitem__", {index})) {
          throwSourceError(target.range(), "Class does not define __delitem__");
        }
        continue;
      }
      call(target.range(), Symbol::fromQualString("aten::Delete"), {container, index});
    } else if (target.kind() == TK_VAR) {
      const std::string& name = Var(target.tree()).name().name();
      bool found = false;
      for (auto e = env_; e; e = e->next) {
        found = found || e->type_table.erase(name) || e->value_table.erase(name);
      }
      if (!found) throwSourceError(target.range(), "undefined value " + name);
    } else {
      throwSourceError(target.range(),
                       "del statements are only supported for deleting list and dict items and variables");
    }
  }
}

// --- expressions ------------------------------------------------------------------------------

std::vector<NamedValue> FunctionEmitter::getNamedValues(const List<Expr>& exprs) {
  std::vector<NamedValue> out;
  for (Expr e : exprs) {
    if (e.kind() == TK_STARRED) {
      // f(*t) passes a tuple's elements.
      Expr inner = Starred(e.tree()).expr();
      for (const SugaredValuePtr& v : emitSugaredExpr(inner, 1)->asTuple(inner.range(), g_, std::nullopt)) {
        out.emplace_back(e.range(), v->asValue(e.range(), g_));
      }
      continue;
    }
    out.emplace_back(e.range(), emitExpr(e));
  }
  return out;
}

std::vector<NamedValue> FunctionEmitter::emitAttributes(const List<Attribute>& attributes) {
  std::vector<NamedValue> out;
  for (Attribute a : attributes) out.emplace_back(a.range(), a.name().name(), emitExpr(a.value()));
  return out;
}

SugaredValuePtr FunctionEmitter::emitSugaredExpr(const Expr& e, size_t n_binders, const TypePtr& type_hint) {
  switch (e.kind()) {
    case TK_VAR: return getSugaredVar(Var(e.tree()).name().name(), e.range());
    case '.': {
      Select select(e.tree());
      SugaredValuePtr value = emitSugaredExpr(select.value(), 1);
      const std::string& field = select.selector().name();
      if (Value* object = asSimple(value)) {
        if (auto cls = std::const_pointer_cast<ClassType>(std::dynamic_pointer_cast<const ClassType>(object->type()))) {
          ensureField(cls, field, select.range());
        }
      } else if (auto cls = classOfValue(value)) {
        if (compiler_.isClassMethodOf(cls, field)) {
          throwSourceError(select.range(), "'" + cls->unqualifiedName() + "." + field +
                                               "' is a @classmethod: TorchScript cannot call class methods on the "
                                               "class (1.13 calls them on an object)");
        }
        compiler_.ensureMethod(cls, field, &select.range());  // `C.static_method`
      }
      return value->attr(select.range(), g_, field);
    }
    case TK_APPLY: return emitApplyExpr(Apply(e.tree()), n_binders, type_hint);
    case TK_SUBSCRIPT: return std::make_shared<SimpleValue>(emitSubscript(Subscript(e.tree())));
    default: return std::make_shared<SimpleValue>(emitSimpleExpr(e.tree(), type_hint));
  }
}

SugaredValuePtr FunctionEmitter::emitApplyExpr(const Apply& apply, size_t n_binders, const TypePtr& type_hint) {
  SugaredValuePtr callee = emitSugaredExpr(apply.callee(), 1);
  if (auto special = std::dynamic_pointer_cast<SpecialFormValue>(callee)) {
    return emitApplySpecialForm(special->form(), apply, type_hint);
  }
  if (auto builtin = std::dynamic_pointer_cast<BuiltinClassRef>(callee)) {
    callee = makeClassValue(compiler_.builtinClass(builtin->qualifiedName(), apply.callee().range()));
  }
  if (auto cls = classOfValue(callee)) compiler_.ensureMethod(cls, "__init__", &apply.range());
  if (Value* object = asSimple(callee)) {
    // Calling a module calls its forward.
    if (auto cls = std::const_pointer_cast<ClassType>(std::dynamic_pointer_cast<const ClassType>(object->type()))) {
      compiler_.ensureMethod(cls, cls->isModule() ? "forward" : "__call__", &apply.range());
    }
  }
  if (auto tolist = std::dynamic_pointer_cast<TensorToListValue>(callee)) {
    if (!apply.inputs().empty() || !apply.attributes().empty())
      throwSourceError(apply.range(), "tolist() takes no arguments");
    return std::make_shared<SimpleValue>(tolist->callWithTypeHint(apply.range(), g_, type_hint));
  }
  if (auto builtin = std::dynamic_pointer_cast<BuiltinFunction>(callee);
      builtin && builtin->symbol() == aten::len && apply.inputs().size() == 1 && apply.attributes().empty() &&
      apply.inputs()[0].kind() != TK_STARRED) {
    // len of a ModuleList/ModuleDict is known statically.
    SugaredValuePtr arg = emitSugaredExpr(apply.inputs()[0], 1);
    Value* v = asSimple(arg);
    if (v && v->type()->kind() == TypeKind::Class) {
      // As 1.13: a call of the type's __len__, which returns the constant.
      auto cls = std::const_pointer_cast<ClassType>(std::dynamic_pointer_cast<const ClassType>(v->type()));
      if (cls->iterableKind() != IterableKind::None) {
        compiler_.ensureLenMethod(cls, *arg->staticLen());
        return MethodValue(v, "__len__").call(apply.range(), g_, {}, {}, n_binders);
      }
      if (Value* r = emitMagicCall(apply.range(), v, "__len__", {})) return std::make_shared<SimpleValue>(r);
      return std::make_shared<SimpleValue>(arg->len(apply.range(), g_));
    }
    std::vector<NamedValue> args = {NamedValue(apply.inputs()[0].range(), arg->asValue(apply.inputs()[0].range(), g_))};
    return callee->call(apply.callee().range(), g_, args, {}, n_binders);
  }
  std::vector<NamedValue> args = getNamedValues(apply.inputs());
  std::vector<NamedValue> kwargs = emitAttributes(apply.attributes());
  return callee->call(apply.callee().range(), g_, args, kwargs, n_binders);
}

// Calls the emitter handles itself (builtins that are not operators: their
// arguments are types, iterables or names): one member function per form.
SugaredValuePtr FunctionEmitter::emitApplySpecialForm(Symbol form, const Apply& apply, const TypePtr& type_hint) {
  using FormEmitter = SugaredValuePtr (FunctionEmitter::*)(const Apply&, const TypePtr&);
  static const std::unordered_map<std::string, FormEmitter> emitters = {
      {"isinstance", &FunctionEmitter::emitIsInstanceForm},
      {"annotate", &FunctionEmitter::emitAnnotateForm},
      {"range", &FunctionEmitter::emitRangeForm},
      {"zip", &FunctionEmitter::emitZipForm},
      {"enumerate", &FunctionEmitter::emitEnumerateForm},
      {"list", &FunctionEmitter::emitListForm},
      {"hasattr", &FunctionEmitter::emitHasattrForm},
      {"getattr", &FunctionEmitter::emitGetattrForm},
      {"TupleConstruct", &FunctionEmitter::emitTupleForm},
      {"dict", &FunctionEmitter::emitDictForm},
      {"slice", &FunctionEmitter::emitSliceForm},
      {"tensordot", &FunctionEmitter::emitTensordotForm},
      {"jit_isinstance", &FunctionEmitter::emitJitIsInstanceForm},
      {"unchecked_cast", &FunctionEmitter::emitUncheckedCastForm},
      {"Uninitialized", &FunctionEmitter::emitUninitializedForm},
      {"CreateObject", &FunctionEmitter::emitCreateObjectForm},
  };
  auto it = emitters.find(std::string(form.name()));
  if (it == emitters.end()) throwSourceError(apply.range(), "unsupported special form " + std::string(form.name()));
  return (this->*(it->second))(apply, type_hint);
}

void FunctionEmitter::checkSpecialFormInputs(const Apply& apply, const std::string& form, size_t n) {
  if (!apply.attributes().empty()) throwSourceError(apply.range(), form + " takes no keyword arguments");
  if (apply.inputs().size() != n) {
    throwSourceError(apply.range(), form + " expected exactly " + std::to_string(n) + " arguments but found " +
                                        std::to_string(apply.inputs().size()));
  }
}

SugaredValuePtr FunctionEmitter::emitIsInstanceForm(const Apply& apply, const TypePtr&) {
  checkSpecialFormInputs(apply, "isinstance", 2);
  return std::make_shared<SimpleValue>(emitIsInstance(apply.inputs()[0], apply.inputs()[1]).value);
}

SugaredValuePtr FunctionEmitter::emitAnnotateForm(const Apply& apply, const TypePtr&) {
  const SourceRange& loc = apply.range();
  checkSpecialFormInputs(apply, "annotate", 2);
  TypePtr type = parseType(apply.inputs()[0]);
  Value* v = tryConvertToType(loc, g_, type, emitExpr(apply.inputs()[1], type), true);
  if (!v->type()->isSubtypeOf(*type)) {
    throwSourceError(apply.inputs().range(), "expected an expression of type " + type->annotationStr() + " but found " +
                                                 v->type()->annotationStr());
  }
  if (type->kind() == TypeKind::Optional && v->type()->kind() == TypeKind::None) {
    Node* none = g_.insertNode(g_.createNone());
    none->output()->setType(type);
    v = none->output();
  }
  return std::make_shared<SimpleValue>(v);
}

SugaredValuePtr FunctionEmitter::emitUncheckedCastForm(const Apply& apply, const TypePtr&) {
  checkSpecialFormInputs(apply, "unchecked_cast", 2);
  TypePtr type = parseType(apply.inputs()[0]);
  Value* v = emitExpr(apply.inputs()[1]);
  // The printer writes the casts refinement inserted; one is enough.
  if (v->node()->kind() != prim::unchecked_cast || *v->type() != *type) {
    Node* cast = g_.insertNode(g_.create(prim::unchecked_cast, {v}));
    cast->setSourceRange(apply.range());
    cast->output()->setType(type);
    v = cast->output();
  }
  return std::make_shared<SimpleValue>(v);
}

SugaredValuePtr FunctionEmitter::emitUninitializedForm(const Apply& apply, const TypePtr&) {
  checkSpecialFormInputs(apply, "uninitialized", 1);
  TypePtr type = parseType(apply.inputs()[0]);
  Node* n = g_.insertNode(g_.createUninitialized(type));
  n->setSourceRange(apply.range());
  return std::make_shared<SimpleValue>(n->output());
}

SugaredValuePtr FunctionEmitter::emitCreateObjectForm(const Apply& apply, const TypePtr&) {
  checkSpecialFormInputs(apply, "__new__", 1);
  TypePtr type = parseType(apply.inputs()[0]);
  auto cls = std::dynamic_pointer_cast<ClassType>(std::const_pointer_cast<Type>(type));
  if (!cls) throwSourceError(apply.inputs()[0].range(), "__new__ expected a class but found " + type->annotationStr());
  if (cls->isModule()) throwSourceError(apply.range(), "cannot construct module '" + cls->name() + "' in TorchScript");
  Node* create = g_.insertNode(g_.create(prim::CreateObject));
  create->setSourceRange(apply.range());
  create->output()->setType(cls);
  return std::make_shared<SimpleValue>(create->output());
}

SugaredValuePtr FunctionEmitter::emitRangeForm(const Apply& apply, const TypePtr&) {
  const SourceRange& loc = apply.range();
  if (!apply.attributes().empty()) throwSourceError(loc, "range does not take keyword arguments");
  std::vector<Value*> inputs;
  for (const NamedValue& nv : getNamedValues(apply.inputs())) inputs.push_back(nv.value);
  return std::make_shared<RangeValue>(loc, g_, inputs);
}

SugaredValuePtr FunctionEmitter::emitZipForm(const Apply& apply, const TypePtr&) {
  const SourceRange& loc = apply.range();
  if (!apply.attributes().empty()) throwSourceError(loc, "zip does not take keyword arguments");
  if (apply.inputs().empty()) throwSourceError(loc, "zip expected at least 1 arguments, got 0");
  auto tree = std::make_shared<IterableTree>();
  for (Expr e : apply.inputs()) tree->addChild(loc, g_, emitSugaredExpr(e, 1)->iter(loc, g_));
  return tree;
}

SugaredValuePtr FunctionEmitter::emitEnumerateForm(const Apply& apply, const TypePtr&) {
  const SourceRange& loc = apply.range();
  size_t n_args = apply.inputs().size() + apply.attributes().size();
  if (apply.inputs().empty()) throwSourceError(loc, "enumerate expected at least 1 arguments, got 0");
  if (n_args > 2) throwSourceError(loc, "enumerate expected at most 2 arguments, got " + std::to_string(n_args));
  Value* start = nullptr;
  if (apply.inputs().size() == 2) start = emitExpr(apply.inputs()[1]);
  if (apply.attributes().size() == 1) {
    if (apply.attributes()[0].name().name() != "start") {
      throwSourceError(loc, "enumerate expected kwarg name 'start', got '" + apply.attributes()[0].name().name() + "'");
    }
    start = emitExpr(apply.attributes()[0].value());
  }
  std::vector<Value*> range_inputs;
  if (start) range_inputs.push_back(start);
  range_inputs.push_back(g_.insertConstant(std::numeric_limits<int64_t>::max(), loc));
  SugaredValuePtr iterable = emitSugaredExpr(apply.inputs()[0], 1)->iter(loc, g_);
  auto range = std::make_shared<RangeValue>(loc, g_, range_inputs, iterable->staticLen());
  auto tree = std::make_shared<IterableTree>();
  tree->addChild(loc, g_, range);
  tree->addChild(loc, g_, iterable);
  return tree;
}

SugaredValuePtr FunctionEmitter::emitListForm(const Apply& apply, const TypePtr& type_hint) {
  const SourceRange& loc = apply.range();
  if (apply.inputs().empty()) {
    TypePtr type = type_hint ? type_hint : ListType::create(TensorType::get());
    if (!type->cast<ListType>())
      throwSourceError(loc, "Expected list type annotation for list(), found " + type->annotationStr());
    Value* list = g_.insertNode(g_.createList(type->cast<ListType>()->elementType(), {}))->output();
    return std::make_shared<SimpleValue>(list);
  }
  checkSpecialFormInputs(apply, "list", 1);
  SugaredValuePtr arg = emitSugaredExpr(apply.inputs()[0], 1);
  Value* v = asSimple(arg);
  if (v && v->type()->cast<ListType>()) return std::make_shared<SimpleValue>(call(loc, aten::list, {v}));
  // Anything iterable becomes a list by iterating it.
  SugaredValuePtr iterable = arg->iter(loc, g_);
  if (auto tuple = std::dynamic_pointer_cast<SugaredTupleValue>(iterable)) {
    std::vector<Value*> values;
    for (const auto& e : tuple->asTuple(loc, g_, std::nullopt)) values.push_back(e->asValue(loc, g_));
    auto unified =
        values.empty() ? std::optional<TypePtr>(TensorType::get()) : std::optional<TypePtr>(values[0]->type());
    for (Value* e : values) unified = unified ? unifyTypes(*unified, e->type()) : unified;
    if (!unified) throwSourceError(loc, "list() of a tuple whose elements have different types");
    return std::make_shared<SimpleValue>(g_.insertNode(g_.createList(*unified, values))->output());
  }
  if (v && v->type()->kind() == TypeKind::String) return std::make_shared<SimpleValue>(call(loc, aten::list, {v}));
  // list(range(n)) and the like: [e for e in iterable], the iterable
  // already emitted and held by a compiler-made name.
  const SourceRange& r = apply.inputs()[0].range();
  auto var = [&](const std::string& name) {
    return Tree::create(TK_VAR, r, {Tree::create(TK_IDENT, r, {Tree::atom(name, r)})});
  };
  std::string iterable_name = "$list_iterable_" + std::to_string(temp_counter_++);
  setSugaredVar(r, iterable_name, arg, nullptr);
  TreeRef element = var("$list_element");
  TreeRef comprehension =
      Tree::create(TK_LIST_COMP, loc, {element, element, var(iterable_name), Tree::create(TK_OPTION, loc, {})});
  return std::make_shared<SimpleValue>(emitListComprehension(ListComp(comprehension), type_hint));
}

SugaredValuePtr FunctionEmitter::emitTupleForm(const Apply& apply, const TypePtr&) {
  const SourceRange& loc = apply.range();
  if (apply.inputs().size() != 1) {
    throwSourceError(loc, "tuple expected exactly 1 arguments but found " + std::to_string(apply.inputs().size()));
  }
  SugaredValuePtr arg = emitSugaredExpr(apply.inputs()[0], 1);
  std::vector<Value*> values;
  for (const auto& e : arg->asTuple(loc, g_, std::nullopt)) values.push_back(e->asValue(loc, g_));
  return std::make_shared<SimpleValue>(g_.insertNode(g_.createTuple(values))->output());
}

// hasattr(obj, "name") / getattr(obj, "name"): on objects, with the name a
// string literal, answered when compiling (as 1.13 does). The object and its
// class; `field` is set to the name.
std::pair<SugaredValuePtr, ClassTypePtr> FunctionEmitter::emitAttributeQuery(const Apply& apply,
                                                                             const std::string& form,
                                                                             std::string& field) {
  checkSpecialFormInputs(apply, form, 2);
  Expr name = apply.inputs()[1];
  if (name.kind() != TK_STRINGLITERAL)
    throwSourceError(name.range(), form + "'s second argument must be a string literal");
  field = StringLiteral(name.tree()).text();
  SugaredValuePtr object = emitSugaredExpr(apply.inputs()[0], 1);
  Value* v = asSimple(object);
  auto cls = v ? std::const_pointer_cast<ClassType>(std::dynamic_pointer_cast<const ClassType>(v->type())) : nullptr;
  if (!cls) throwSourceError(apply.inputs()[0].range(), form + "'s first argument must be an object or a module");
  return {object, cls};
}

SugaredValuePtr FunctionEmitter::emitHasattrForm(const Apply& apply, const TypePtr&) {
  std::string field;
  auto [object, cls] = emitAttributeQuery(apply, "hasattr", field);
  bool has = cls->hasAttribute(field) || cls->findConstant(field) || compiler_.ensureMethod(cls, field, &apply.range());
  return std::make_shared<SimpleValue>(g_.insertConstant(has, apply.range()));
}

SugaredValuePtr FunctionEmitter::emitGetattrForm(const Apply& apply, const TypePtr&) {
  std::string field;
  auto [object, cls] = emitAttributeQuery(apply, "getattr", field);
  ensureField(cls, field, apply.range());
  return object->attr(apply.range(), g_, field);
}

CondValue FunctionEmitter::emitIsInstance(const Expr& obj, const Expr& classinfo) {
  Value* v = emitExpr(obj);
  std::vector<TypePtr> types;
  std::function<void(const Expr&)> gather = [&](const Expr& e) {
    if (e.kind() == TK_TUPLE_LITERAL) {
      for (Expr sub : TupleLiteral(e.tree()).inputs()) gather(sub);
      return;
    }
    std::string text = e.range().text();
    if (text == "list" || text == "List") {
      types.push_back(ListType::create(AnyType::get()));
    } else if (text == "dict" || text == "Dict") {
      types.push_back(DictType::create(AnyType::get(), AnyType::get()));
    } else if (text == "tuple" || text == "Tuple") {
      types.push_back(nullptr);  // any tuple
    } else {
      types.push_back(parseType(e));
    }
  };
  gather(classinfo);
  const TypePtr& actual = v->type();
  // What the value may be at run time: the members of an Optional or Union
  // (an Optional[Union[...]] flattened), or nothing to go by for Any and
  // Scalar. The check is decided when compiling unless some members match a
  // type and some do not; the true branch then sees the members that matched
  // any of the types (the types themselves for Any and Scalar).
  std::vector<TypePtr> members;
  std::function<void(const TypePtr&)> flatten = [&](const TypePtr& t) {
    if (auto opt = t->cast<OptionalType>()) {
      flatten(opt->elementType());
      members.push_back(NoneType::get());
    } else if (auto u = t->cast<UnionType>()) {
      for (const TypePtr& m : u->members()) flatten(m);
    } else {
      members.push_back(t);
    }
  };
  bool opaque = actual->kind() == TypeKind::Any || actual->kind() == TypeKind::Number;
  if (!opaque) flatten(actual);
  auto fits = [](const TypePtr& candidate, const TypePtr& t) {
    if (!t) return candidate->kind() == TypeKind::Tuple;
    if (auto list = t->cast<ListType>(); list && list->elementType()->kind() == TypeKind::Any)
      return candidate->kind() == TypeKind::List;
    if (auto dict = t->cast<DictType>(); dict && dict->keyType()->kind() == TypeKind::Any)
      return candidate->kind() == TypeKind::Dict;
    return candidate->isSubtypeOf(*t);
  };
  std::optional<bool> result = false;
  std::vector<TypePtr> matched;
  for (const TypePtr& t : types) {
    if (fits(actual, t)) {
      result = true;
      break;
    }
    if (opaque) {
      // A Scalar is an int, a float or a complex: nothing else can match.
      bool possible =
          actual->kind() == TypeKind::Any || (t && (t->kind() == TypeKind::Int || t->kind() == TypeKind::Float ||
                                                    t->kind() == TypeKind::Complex || t->kind() == TypeKind::Number));
      if (possible) {
        result = std::nullopt;
        if (t) matched.push_back(t);
      }
      continue;
    }
    for (const TypePtr& m : members) {
      if (fits(m, t)) {
        result = std::nullopt;
        matched.push_back(m);
      }
    }
  }
  // Every member matching some type: always true.
  if (!result && !opaque && std::all_of(members.begin(), members.end(), [&](const TypePtr& m) {
        return std::any_of(types.begin(), types.end(), [&](const TypePtr& t) { return fits(m, t); });
      })) {
    result = true;
  }
  TypePtr refined = matched.empty() ? nullptr : UnionType::create(matched);
  if (result) return constantCond(obj.range(), *result);
  // Only an Optional, a Union or Any can be undecided: prim::isinstance checks at run time.
  std::vector<TypePtr> checked;
  bool plain = true;
  for (const TypePtr& t : types) {
    // A bare `tuple` is checked as `Tuple[()]`, which prim::isinstance takes for any tuple.
    checked.push_back(t ? t : TupleType::create({}));
    // A bare `list`, `dict` or `tuple` (List[Any], ...) has no place in 1.13's order.
    plain = plain && t && !(t->cast<ListType>() && t->cast<ListType>()->elementType()->kind() == TypeKind::Any) &&
            !(t->cast<DictType>() && t->cast<DictType>()->keyType()->kind() == TypeKind::Any);
  }
  // 1.13 lists the types in a Union's order (isinstance(x, (int, float)) checks [float, int]).
  if (TypePtr u = plain ? UnionType::create(checked) : nullptr; u && u->kind() == TypeKind::Union)
    checked = u->cast<UnionType>()->members();
  Node* check = g_.insertNode(g_.create(prim::isinstance, {v}));
  check->tys_(attr::types, checked);
  check->output()->setType(BoolType::get());
  RefinementSet refs;
  if (obj.kind() == TK_VAR) {
    const std::string& name = Var(obj.tree()).name().name();
    if (refined) refs.true_refinements.push_back({name, refined});
    // A Union is, when the check fails, one of the members it did not match.
    if (actual->kind() == TypeKind::Union || actual->kind() == TypeKind::Optional) {
      std::vector<TypePtr> rest;
      for (const TypePtr& m : members) {
        bool hit = false;
        for (const TypePtr& t : types) hit = hit || fits(m, t);
        if (!hit) rest.push_back(m);
      }
      if (!rest.empty()) refs.false_refinements.push_back({name, UnionType::create(std::move(rest))});
    } else if (actual->kind() == TypeKind::Any) {
      refs.false_refinements.push_back({name, actual});  // still Any, as 1.13 casts it
    }
  }
  return {check->output(), refs, std::nullopt};
}

Value* FunctionEmitter::emitToBool(const SourceRange& loc, Value* v) {
  Value* out;
  try {
    out = asSimple(builtinGlobal("bool")->call(loc, g_, {NamedValue(loc, v)}, {}, 0));
  } catch (const Error&) {
    throwSourceError(loc, "Could not cast value of type " + v->type()->annotationStr() + " to bool");
  }
  if (!out->type()->isSubtypeOf(*BoolType::get())) {
    throwSourceError(loc, "expected a bool expression for condition but found " + out->type()->annotationStr());
  }
  return out;
}

CondValue FunctionEmitter::emitCondExpr(const Expr& e) {
  switch (e.kind()) {
    case TK_AND:
    case TK_OR: {
      BinOp op(e.tree());
      return emitShortCircuit(op.range(), op.lhs(), op.rhs(), e.kind() == TK_OR);
    }
    case TK_NOT: {
      CondValue v = emitCondExpr(UnaryOp(e.tree()).operand());
      Value* result = call(e.range(), aten::__not__, {v.value});
      std::optional<bool> static_if;
      if (v.static_if) static_if = !*v.static_if;
      return {result, v.refinements.Not(), static_if};
    }
    case TK_IS:
    case TK_ISNOT: {
      BinOp op(e.tree());
      Value* lhs = emitExpr(op.lhs());
      Value* rhs = emitExpr(op.rhs());
      enum NoneStatus { Always, Maybe, Never };
      auto can_be_none = [](const Value* v) {
        if (v->type()->kind() == TypeKind::None) return Always;
        if (v->type()->kind() == TypeKind::Optional) return Maybe;
        if (auto u = v->type()->cast<UnionType>(); u && u->canHoldType(*NoneType::get())) return Maybe;
        return Never;
      };
      NoneStatus ln = can_be_none(lhs), rn = can_be_none(rhs);
      bool is = e.kind() == TK_IS;
      if (ln == Always && rn == Always) return constantCond(e.range(), is);
      if ((ln == Always && rn == Never) || (ln == Never && rn == Always)) return constantCond(e.range(), !is);
      Value* result = call(e.range(), is ? aten::__is__ : aten::__isnot__, {lhs, rhs});
      RefinementSet refs;
      // `x is None` / `None is x` on a variable refines x.
      std::optional<Expr> var;
      const Value* var_value = nullptr;
      if (op.lhs().kind() == TK_VAR && op.rhs().kind() == TK_NONE) {
        var = op.lhs(), var_value = lhs;
      } else if (op.rhs().kind() == TK_VAR && op.lhs().kind() == TK_NONE) {
        var = op.rhs(), var_value = rhs;
      }
      if (var) {
        if (auto opt = var_value->type()->cast<OptionalType>()) {
          Refinement present{Var(var->tree()).name().name(), opt->elementType()};
          if (is) {
            refs.false_refinements.push_back(present);
          } else {
            refs.true_refinements.push_back(present);
          }
        }
      }
      return {result, refs, std::nullopt};
    }
    case TK_CHAIN_COMPARE: return emitChainCompare(ChainCompare(e.tree()));
    case TK_APPLY: {
      Apply apply(e.tree());
      std::string callee = apply.callee().range().text();
      bool jit_isinstance = callee == "torch.jit.isinstance" || callee == "kiln.jit.isinstance";
      if ((apply.callee().kind() == TK_VAR && Var(apply.callee().tree()).name().name() == "isinstance") ||
          jit_isinstance) {
        if (apply.inputs().size() != 2) throwSourceError(apply.range(), "isinstance expected exactly 2 arguments");
        if (jit_isinstance) checkJitIsInstanceTypes(apply.inputs()[1]);
        return emitIsInstance(apply.inputs()[0], apply.inputs()[1]);
      }
      break;
    }
    default: break;
  }
  Value* v = emitToBool(e.range(), emitExpr(e));
  std::optional<bool> static_if;
  if (auto c = toIValue(v)) static_if = c->toBool();
  if (v->node()->kind() == Symbol::fromQualString("aten::is_scripting")) static_if = true;
  return {v, {}, static_if};
}

CondValue FunctionEmitter::emitShortCircuit(const SourceRange& loc, const Expr& first, const Expr& second, bool is_or) {
  CondValue lhs = emitCondExpr(first);
  std::optional<CondValue> rhs;
  auto constant = [&] { return g_.insertConstant(is_or, loc); };
  auto continuation = [&] {
    rhs = emitCondExpr(second);
    return rhs->value;
  };
  Value* result;
  RefinementSet refs;
  std::optional<bool> static_if;
  if (is_or) {
    result = emitIfExpr(loc, lhs, constant, continuation);
    refs = lhs.refinements.Or(rhs ? rhs->refinements : RefinementSet{});
    if (lhs.static_if && rhs && rhs->static_if) static_if = *lhs.static_if || *rhs->static_if;
    if (lhs.static_if && *lhs.static_if) static_if = true;
  } else {
    result = emitIfExpr(loc, lhs, continuation, constant);
    refs = lhs.refinements.And(rhs ? rhs->refinements : RefinementSet{});
    if ((lhs.static_if && !*lhs.static_if) || (rhs && rhs->static_if && !*rhs->static_if)) {
      static_if = false;
    } else if (lhs.static_if && rhs && rhs->static_if) {
      static_if = *lhs.static_if && *rhs->static_if;
    }
  }
  return {result, refs, static_if};
}

CondValue FunctionEmitter::emitChainCompare(const ChainCompare& chain) {
  // a < b < c is (a < b) and (b < c), b evaluated once: the operands are
  // emitted left to right as the comparisons need them.
  auto comparisons = chain.comparisons();
  std::unordered_map<const Tree*, Value*> evaluated;
  auto operand = [&](const Expr& e) {
    auto it = evaluated.find(e.tree().get());
    if (it != evaluated.end()) return it->second;
    Value* v = emitExpr(e);
    evaluated[e.tree().get()] = v;
    return v;
  };
  std::function<Value*(size_t)> emit_from = [&](size_t i) -> Value* {
    BinOp cmp = comparisons[i];
    Value* result = emitCompare(cmp.range(), cmp.kind(), operand(cmp.lhs()), operand(cmp.rhs()));
    if (i + 1 == comparisons.size()) return result;
    CondValue cond{result, {}, std::nullopt};
    return emitIfExpr(
        chain.range(), cond, [&] { return emit_from(i + 1); }, [&] { return g_.insertConstant(false, chain.range()); });
  };
  return {emit_from(0), {}, std::nullopt};
}

Value* FunctionEmitter::emitIfExpr(const SourceRange& range, const CondValue& cond,
                                   const std::function<Value*()>& true_expr,
                                   const std::function<Value*()>& false_expr) {
  Node* n = g_.insertNode(g_.create(prim::If, {cond.value}, 0));
  n->setSourceRange(range);
  Block* true_block = n->addBlock();
  Block* false_block = n->addBlock();
  auto emit_branch = [&](Block* b, const RefinementSet& refs, const std::function<Value*()>& expr) {
    pushFrame(b);
    WithInsertPoint guard(b);
    insertRefinements(range, refs);
    b->registerOutput(expr());
    popFrame();
  };
  emit_branch(true_block, cond.refinements, true_expr);
  emit_branch(false_block, cond.refinements.Not(), false_expr);
  const TypePtr& tt = true_block->outputs()[0]->type();
  const TypePtr& ft = false_block->outputs()[0]->type();
  auto unified = unifyTypes(tt, ft);
  if (!unified) {
    throwSourceError(range, "if-expression's true branch has type " + tt->annotationStr() +
                                " but false branch has type " + ft->annotationStr());
  }
  return n->addOutput()->setType(*unified);
}

Value* FunctionEmitter::emitMagicCall(const SourceRange& loc, Value* self, const std::string& name,
                                      const std::vector<Value*>& args) {
  auto cls = std::const_pointer_cast<ClassType>(std::dynamic_pointer_cast<const ClassType>(self->type()));
  if (!cls || cls->isModule() || !compiler_.ensureMethod(cls, name, &loc)) return nullptr;
  std::vector<NamedValue> named;
  for (Value* a : args) named.emplace_back(loc, a);
  return MethodValue(self, name).call(loc, g_, named, {}, 1)->asValue(loc, g_);
}

// The magic method a binary operator or comparison calls on a script object
// (1.13 calls none for `//` and `@`).
const char* magicMethodName(int kind) {
  switch (kind) {
    case '+': return "__add__";
    case '-': return "__sub__";
    case '*': return "__mul__";
    case '/': return "__truediv__";
    case '%': return "__mod__";
    case TK_POW: return "__pow__";
    case '&': return "__and__";
    case '|': return "__or__";
    case '^': return "__xor__";
    case TK_LSHIFT: return "__lshift__";
    case TK_RSHIFT: return "__rshift__";
    case TK_EQ: return "__eq__";
    case TK_NE: return "__ne__";
    case '<': return "__lt__";
    case '>': return "__gt__";
    case TK_LE: return "__le__";
    case TK_GE: return "__ge__";
    default: return nullptr;
  }
}

Value* FunctionEmitter::emitCompare(const SourceRange& loc, int kind, Value* lhs, Value* rhs) {
  if (const char* magic = magicMethodName(kind)) {
    if (Value* v = emitMagicCall(loc, lhs, magic, {rhs})) return v;
  }
  if (kind == TK_IN || kind == TK_NOTIN) {
    if (Value* v = emitMagicCall(loc, rhs, "__contains__", {lhs})) {
      return kind == TK_IN ? v : call(loc, aten::__not__, {v});
    }
  }
  switch (kind) {
    case TK_EQ: return call(loc, aten::eq, {lhs, rhs});
    case TK_NE: return call(loc, aten::ne, {lhs, rhs});
    case '<': return call(loc, aten::lt, {lhs, rhs});
    case '>': return call(loc, aten::gt, {lhs, rhs});
    case TK_LE: return call(loc, aten::le, {lhs, rhs});
    case TK_GE: return call(loc, aten::ge, {lhs, rhs});
    case TK_IS: return call(loc, aten::__is__, {lhs, rhs});
    case TK_ISNOT: return call(loc, aten::__isnot__, {lhs, rhs});
    case TK_IN:
    case TK_NOTIN: {
      Value* contains;
      if (rhs->type()->kind() == TypeKind::String) {
        // TorchScript's str.__contains__: s.find(item, 0, len(s)) != -1.
        Value* length = call(loc, aten::len, {rhs});
        Value* found =
            call(loc, Symbol::fromQualString("aten::find"), {rhs, lhs, g_.insertConstant(int64_t(0), loc), length});
        contains = call(loc, aten::ne, {found, g_.insertConstant(int64_t(-1), loc)});
      } else {
        contains = call(loc, aten::__contains__, {rhs, lhs});
      }
      return kind == TK_IN ? contains : call(loc, aten::__not__, {contains});
    }
    default: throwSourceError(loc, "unknown comparison " + kindToString(kind));
  }
}

Value* FunctionEmitter::emitBinaryOp(const BinOp& op) {
  Value* lhs = emitExpr(op.lhs());
  Value* rhs = emitExpr(op.rhs());
  if (const char* magic = magicMethodName(op.kind()); magic && op.kind() != TK_EQ && op.kind() != TK_NE &&
                                                      op.kind() != '<' && op.kind() != '>' && op.kind() != TK_LE &&
                                                      op.kind() != TK_GE) {
    if (Value* v = emitMagicCall(op.range(), lhs, magic, {rhs})) return v;
  }
  // Tuples concatenate here: no operator schema can say their lengths.
  if (op.kind() == '+' && lhs->type()->kind() == TypeKind::Tuple && rhs->type()->kind() == TypeKind::Tuple) {
    std::vector<Value*> elements;
    for (Value* t : {lhs, rhs}) {
      for (const SugaredValuePtr& e : SimpleValue(t).asTuple(op.range(), g_, std::nullopt)) {
        elements.push_back(e->asValue(op.range(), g_));
      }
    }
    return g_.insertNode(g_.createTuple(elements))->output();
  }
  auto s = [](const char* q) { return Symbol::fromQualString(q); };
  // "%d items" % n: printf-style formatting of one value or a tuple of them.
  if (op.kind() == '%' && lhs->type()->kind() == TypeKind::String) {
    return call(op.range(), s("aten::percentFormat"), {lhs, rhs});
  }
  Symbol kind;
  switch (op.kind()) {
    case '+': kind = aten::add; break;
    case '-': kind = aten::sub; break;
    case '*': kind = aten::mul; break;
    case '/': kind = aten::div; break;
    case '%': kind = aten::remainder; break;
    case '@': kind = aten::matmul; break;
    case TK_POW: kind = aten::pow; break;
    case TK_FLOOR_DIV: kind = aten::floordiv; break;
    case '&': kind = aten::__and__; break;
    case '|': kind = aten::__or__; break;
    case '^': kind = s("aten::__xor__"); break;
    case TK_LSHIFT: kind = s("aten::__lshift__"); break;
    case TK_RSHIFT: kind = s("aten::__rshift__"); break;
    default: return emitCompare(op.range(), op.kind(), lhs, rhs);
  }
  return call(op.range(), kind, {lhs, rhs});
}

Value* FunctionEmitter::emitUnaryOp(const UnaryOp& op) {
  Value* v = emitExpr(op.operand());
  if (op.kind() == TK_UNARY_MINUS) {
    if (Value* r = emitMagicCall(op.range(), v, "__neg__", {})) return r;
  }
  switch (op.kind()) {
    case TK_UNARY_MINUS: {
      // -1 is a constant, not a negation.
      if (auto c = toIValue(v)) {
        if (c->isInt()) return g_.insertConstant(-c->toInt(), op.range());
        if (c->isDouble()) return g_.insertConstant(-c->toDouble(), op.range());
      }
      return call(op.range(), aten::neg, {v});
    }
    case TK_UNARY_PLUS: return v;
    case '~': return call(op.range(), Symbol::fromQualString("aten::bitwise_not"), {v});
    default: throwSourceError(op.range(), "unknown unary operator " + kindToString(op.kind()));
  }
}

Value* FunctionEmitter::emitSimpleExpr(const TreeRef& tree, const TypePtr& type_hint) {
  const SourceRange& loc = tree->range();
  switch (tree->kind()) {
    case TK_CONST: {
      Const c(tree);
      if (!c.text().empty() && (c.text().back() | 0x20) == 'j') {  // an imaginary literal: 2j, 1.5e3j
        std::string digits;
        for (char ch : c.text()) {
          if (ch != '_') digits += ch;
        }
        return g_.insertConstant(std::complex<double>(0, std::strtod(digits.c_str(), nullptr)), loc);
      }
      if (c.isFloatingPoint()) return g_.insertConstant(c.asDouble(), loc);
      auto value = parseIntLiteral(c.text());
      if (!value) throwSourceError(loc, "integer literal out of range");
      return g_.insertConstant(*value, loc);
    }
    case TK_STRINGLITERAL: return g_.insertConstant(StringLiteral(tree).text(), loc);
    case TK_TRUE: return g_.insertConstant(true, loc);
    case TK_FALSE: return g_.insertConstant(false, loc);
    case TK_NONE: return g_.insertNode(g_.createNone())->output();
    case TK_AND:
    case TK_OR:
    case TK_NOT:
    case TK_IS:
    case TK_ISNOT:
    case TK_CHAIN_COMPARE: return emitCondExpr(Expr(tree)).value;
    case TK_UNARY_MINUS:
    case TK_UNARY_PLUS:
    case '~': return emitUnaryOp(UnaryOp(tree));
    case TK_IF_EXPR: {
      TernaryIf expr(tree);
      CondValue cond = emitCondExpr(expr.cond());
      if (cond.static_if) return emitExpr(*cond.static_if ? expr.trueExpr() : expr.falseExpr(), type_hint);
      return emitIfExpr(
          loc, cond, [&] { return emitExpr(expr.trueExpr(), type_hint); },
          [&] { return emitExpr(expr.falseExpr(), type_hint); });
    }
    case TK_LIST_LITERAL: return emitListLiteral(ListLiteral(tree), type_hint);
    case TK_TUPLE_LITERAL: {
      TupleLiteral tl(tree);
      std::vector<TypePtr> hints;
      if (auto t = type_hint ? type_hint->cast<TupleType>() : nullptr;
          t && t->elements().size() == tl.inputs().size()) {
        hints = t->elements();
      }
      std::vector<Value*> values;
      size_t i = 0;
      for (Expr e : tl.inputs()) {
        if (e.kind() == TK_STARRED) {
          Expr inner = Starred(e.tree()).expr();
          for (const auto& v : emitSugaredExpr(inner, 1)->asTuple(inner.range(), g_, std::nullopt)) {
            values.push_back(v->asValue(e.range(), g_));
          }
          ++i;
          continue;
        }
        values.push_back(emitExpr(e, hints.empty() ? nullptr : hints[i]));
        ++i;
      }
      return g_.insertNode(g_.createTuple(values))->output();
    }
    case TK_DICT_LITERAL: return emitDictLiteral(DictLiteral(tree), type_hint);
    case TK_LIST_COMP: return emitListComprehension(ListComp(tree), type_hint);
    case TK_DICT_COMP: return emitDictComprehension(DictComp(tree), type_hint);
    case TK_DOTS: throwSourceError(loc, "'...' is only allowed in subscripts");
    case TK_STARRED: throwSourceError(loc, "Unexpected starred expansion. File a bug report");
    default:
      if (isBinaryOpKind(tree->kind())) return emitBinaryOp(BinOp(tree));
      throwSourceError(loc, "Unsupported expression of kind " + kindToString(tree->kind()));
  }
}

Value* FunctionEmitter::emitListLiteral(const ListLiteral& ll, const TypePtr& type_hint) {
  TypePtr elem_hint;
  if (type_hint) {
    auto list = type_hint->cast<ListType>();
    if (auto opt = type_hint->cast<OptionalType>()) list = opt->elementType()->cast<ListType>();
    // A Union with one list member types the literal; with several, the elements must.
    size_t lists = 0;
    if (auto u = type_hint->cast<UnionType>()) {
      for (const TypePtr& m : u->members()) {
        if (m->kind() == TypeKind::List) list = ++lists == 1 ? m->cast<ListType>() : nullptr;
      }
    }
    if (lists > 1 && ll.inputs().empty()) {
      throwSourceError(ll.range(),
                       "Cannot assign an empty list to a variable annotated to be type " + type_hint->annotationStr() +
                           " because there are multiple possible List type candidates in the Union annotation");
    }
    if (list) elem_hint = list->elementType();
  }
  std::vector<Value*> values;
  for (Expr e : ll.inputs()) values.push_back(emitExpr(e, elem_hint));
  if (values.empty() && !elem_hint) {
    // Matched against a schema, `[]` takes the list type it needs.
    Node* n = g_.insertNode(g_.create(prim::EmptyListLiteral));
    n->output()->setType(ListType::create(TensorType::get()));
    return n->output();
  }
  TypePtr elem = elem_hint;
  if (!values.empty()) {
    std::optional<TypePtr> unified = values[0]->type();
    for (Value* v : values) {
      if (unified) unified = unifyTypes(*unified, v->type(), /*default_to_union=*/true);
    }
    if (!unified) throwSourceError(ll.range(), "List elements have types that cannot be unified");
    if (elem_hint) {
      if (!(*unified)->isSubtypeOf(*elem_hint)) {
        throwSourceError(ll.range(), "List type annotation `" + type_hint->annotationStr() +
                                         "` did not match the types of the given list elements, which were " +
                                         (*unified)->annotationStr());
      }
    } else {
      elem = *unified;
    }
  }
  return g_.insertNode(g_.createList(elem, values))->output();
}

Value* FunctionEmitter::emitDictLiteral(const DictLiteral& dl, const TypePtr& type_hint) {
  std::vector<Value*> keys, values;
  auto dict_hint = type_hint ? type_hint->cast<DictType>() : nullptr;
  for (Expr k : dl.keyInputs()) keys.push_back(emitExpr(k, dict_hint ? dict_hint->keyType() : nullptr));
  for (Expr v : dl.valueInputs()) values.push_back(emitExpr(v, dict_hint ? dict_hint->valueType() : nullptr));
  TypePtr key_type, value_type;
  if (dict_hint) {
    key_type = dict_hint->keyType();
    value_type = dict_hint->valueType();
  } else if (keys.empty()) {
    key_type = StringType::get();
    value_type = TensorType::get();
  } else {
    std::optional<TypePtr> k = keys[0]->type(), v = values[0]->type();
    for (Value* x : keys) k = k ? unifyTypes(*k, x->type()) : k;
    for (Value* x : values) v = v ? unifyTypes(*v, x->type(), /*default_to_union=*/true) : v;
    if (!k) throwSourceError(dl.range(), "Dict keys must contain only a single type");
    if (!v) throwSourceError(dl.range(), "Dict values must contain only a single type");
    key_type = *k;
    value_type = *v;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!keys[i]->type()->isSubtypeOf(*key_type) || !values[i]->type()->isSubtypeOf(*value_type)) {
      throwSourceError(dl.range(), "Dict type annotation `" + type_hint->annotationStr() +
                                       "` did not match the types of the actual dict items");
    }
  }
  return g_.insertNode(g_.createDict(key_type, value_type, keys, values))->output();
}

void FunctionEmitter::emitComprehensionLoop(const SourceRange& loc, const Expr& target, const Expr& iter,
                                            const Maybe<Expr>& cond, const std::function<void()>& emit_item) {
  // The comprehension's variables do not leak out of it.
  Node* scope = g_.insertNode(g_.create(prim::ComprehensionScope, 0));
  scope->setSourceRange(loc);
  Block* block = scope->addBlock();
  pushFrame(block);
  WithInsertPoint guard(block);
  auto emit_body = [&] {
    if (!cond.present()) return emit_item();
    // The filter `if cond` (which 1.13 rejects) guards the item.
    CondValue c = emitCondExpr(cond.get());
    Node* n = g_.insertNode(g_.create(prim::If, {c.value}, 0));
    pushFrame(n->addBlock());
    {
      WithInsertPoint inner(env_->block);
      emit_item();
    }
    popFrame();
    n->addBlock();
  };
  List<Expr> targets(Tree::create(TK_LIST, loc, {target.tree()}));
  List<Expr> itrs(Tree::create(TK_LIST, loc, {iter.tree()}));
  emitFor(targets, itrs, loc, emit_body);
  popFrame();
}

Value* FunctionEmitter::emitListComprehension(const ListComp& lc, const TypePtr& type_hint) {
  const SourceRange& loc = lc.range();
  Value* list = g_.insertNode(g_.create(prim::ListConstruct, 1))->output();
  list->setType(ListType::create(TensorType::get()));
  bool type_set = false;
  TypePtr hint = type_hint;
  // A Union (or Optional) annotation gives the list type when it has one
  // list member; with several, the elements decide, as in 1.13.
  if (hint && (hint->kind() == TypeKind::Union || hint->kind() == TypeKind::Optional)) {
    std::vector<TypePtr> lists;
    for (const TypePtr& m : hint->containedTypes()) {
      if (m->kind() == TypeKind::List) lists.push_back(m);
    }
    if (lists.empty())
      throwSourceError(lc.elt().range(),
                       "Expected an Union type annotation with an inner List type, but got " + hint->annotationStr());
    hint = lists.size() == 1 ? lists[0] : nullptr;
  }
  if (hint) {
    if (!hint->cast<ListType>()) {
      throwSourceError(loc, "Expected list type annotation for list comprehension, found " + hint->annotationStr());
    }
    list->setType(hint);
    type_set = true;
  }
  auto emit_element = [&] {
    Value* out = emitExpr(lc.elt());
    if (!type_set) {
      list->setType(ListType::create(out->type()));
      type_set = true;
    }
    emitBuiltinCall(loc, g_, aten::append, {NamedValue(loc, out)}, {}, NamedValue(loc, "self", list));
  };
  emitComprehensionLoop(loc, lc.target(), lc.iter(), lc.cond(), emit_element);
  return list;
}

Value* FunctionEmitter::emitDictComprehension(const DictComp& dc, const TypePtr& type_hint) {
  const SourceRange& loc = dc.range();
  TypePtr key_type, value_type;
  if (type_hint) {
    auto dict = type_hint->cast<DictType>();
    if (!dict)
      throwSourceError(loc,
                       "Expected Dict type annotation for dict comprehension, found " + type_hint->annotationStr());
    key_type = dict->keyType();
    value_type = dict->valueType();
  }
  Value* dict = g_.insertNode(g_.create(prim::DictConstruct, 1))->output();
  dict->setType(DictType::create(key_type ? key_type : StringType::get(), value_type ? value_type : TensorType::get()));
  bool type_set = type_hint != nullptr;
  auto emit_item = [&] {
    Value* k = emitExpr(dc.key());
    Value* v = emitExpr(dc.value());
    if (!type_set) {
      dict->setType(DictType::create(k->type(), v->type()));
      type_set = true;
    }
    call(loc, aten::_set_item, {dict, k, v});
  };
  emitComprehensionLoop(loc, dc.target(), dc.iter(), dc.cond(), emit_item);
  return dict;
}

// --- subscripts ---------------------------------------------------------------------------------

Value* FunctionEmitter::emitSliceOp(const SourceRange& loc, Value* sliceable, Value* dim, const SliceExpr& slice) {
  auto part = [&](const Maybe<Expr>& m) -> Value* {
    return m.present() ? emitExpr(m.get()) : g_.insertNode(g_.createNone())->output();
  };
  Value* start = part(slice.start());
  Value* end = part(slice.end());
  Value* step = slice.step().present() ? emitExpr(slice.step().get()) : g_.insertConstant(int64_t(1), loc);
  std::vector<NamedValue> args = {NamedValue(loc, "self", sliceable)};
  if (dim) args.emplace_back(loc, dim);
  args.emplace_back(loc, "start", start);
  args.emplace_back(loc, "end", end);
  args.emplace_back(loc, "step", step);
  return emitBuiltinCall(loc, g_, aten::slice, args, {});
}

Value* FunctionEmitter::emitTupleIndex(const SourceRange& loc, Value* tuple, Value* index) {
  auto type = tuple->type()->cast<TupleType>();
  if (index->type()->kind() != TypeKind::Int) throwSourceError(loc, "tuple index must be an integer");
  const auto& elements = type->elements();
  TypePtr output;
  auto constant = toIValue(index);
  if (!constant) {
    if (elements.empty())
      throwSourceError(loc, "Cannot index into a " + type->annotationStr() +
                                " with a non-integer literal because we cannot resolve the output type");
    for (const TypePtr& e : elements) {
      if (*e != *elements[0]) {
        throwSourceError(loc, "Cannot index into a " + type->annotationStr() +
                                  " with a non-integer literal because we cannot resolve the output type");
      }
    }
    output = elements[0];
  } else {
    int64_t n = static_cast<int64_t>(elements.size());
    int64_t i = constant->toInt() < 0 ? constant->toInt() + n : constant->toInt();
    if (i < 0 || i >= n) {
      throwSourceError(loc, "Tuple index out of range. Tuple is length " + std::to_string(n) + " and index is " +
                                std::to_string(constant->toInt()));
    }
    output = elements[static_cast<size_t>(i)];
  }
  return g_.insertNode(g_.createTupleIndex(tuple, index, output))->output();
}

Value* FunctionEmitter::emitTupleSlice(const SourceRange& loc, Value* tuple, const SliceExpr& slice) {
  int64_t n = static_cast<int64_t>(tuple->type()->cast<TupleType>()->elements().size());
  auto bound = [&](const Maybe<Expr>& m, int64_t fallback) -> int64_t {
    if (!m.present()) return fallback;
    auto c = toIValue(emitExpr(m.get()));
    if (!c || !c->isInt()) throwSourceError(loc, "tuple slice indices must be integer constants");
    return c->toInt();
  };
  int64_t step = bound(slice.step(), 1);
  if (step == 0) throwSourceError(loc, "slice step cannot be zero");
  int64_t start = bound(slice.start(), step > 0 ? 0 : n - 1);
  int64_t end = bound(slice.end(), step > 0 ? n : -n - 1);
  auto clamp = [&](int64_t i, bool is_end) {
    if (i < 0) i += n;
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
    (void)is_end;
    return std::max(lo, std::min(i, hi));
  };
  start = clamp(start, false);
  end = clamp(end, true);
  const auto& types = tuple->type()->cast<TupleType>()->elements();
  std::vector<Value*> values;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) {
    Value* index = g_.insertConstant(i, loc);
    values.push_back(g_.insertNode(g_.createTupleIndex(tuple, index, types[static_cast<size_t>(i)]))->output());
  }
  return g_.insertNode(g_.createTuple(values))->output();
}

std::pair<Value*, std::vector<Value*>> FunctionEmitter::emitIntAndSliceIndexing(const SourceRange& loc,
                                                                                Value* sliceable,
                                                                                const List<Expr>& subscripts) {
  // Ints remove a dimension, None adds one, slices keep it; an ellipsis
  // stands for the dimensions in between, so indices after it count from the end.
  size_t count = subscripts.size();
  std::vector<int64_t> dims(count);
  std::vector<Value*> exprs(count, nullptr);
  auto handle = [&](const Expr& e, size_t i, int64_t dim, bool reverse) -> int64_t {
    dims[i] = dim;
    if (e.kind() == TK_SLICE_EXPR) return reverse ? dim - 1 : dim + 1;
    Value* index = emitExpr(e, e.kind() == TK_NONE ? NoneType::get() : nullptr);
    if (index->type()->kind() == TypeKind::List) {
      // x[[0, 2]] indexes with a long tensor.
      index = emitBuiltinCall(loc, g_, aten::tensor, {NamedValue(loc, index)},
                              {NamedValue(loc, "dtype", g_.insertConstant(int64_t(4), loc))});
    }
    exprs[i] = index;
    const TypePtr& t = index->type();
    if (t->kind() == TypeKind::None) return reverse ? dim : dim + 1;
    if (t->kind() == TypeKind::Int) return reverse ? dim - 1 : dim;
    if (t->isSubtypeOf(*OptionalType::create(TensorType::get()))) {
      if (reverse) throwSourceError(loc, "Ellipses followed by tensor indexing is currently not supported");
      return dim + 1;
    }
    throwSourceError(loc, "Unsupported operation: indexing tensor with unsupported index type '" + t->annotationStr() +
                              "'. Only ints, slices, lists and tensors are supported");
  };
  size_t idx = 0;
  int64_t dim = 0;
  for (; idx < count; ++idx) {
    if (subscripts[idx].kind() == TK_DOTS) break;
    dim = handle(subscripts[idx], idx, dim, false);
  }
  int64_t rdim = -1;
  for (size_t r = count; r-- > idx + 1;) {
    if (subscripts[r].kind() == TK_DOTS) throwSourceError(loc, "An index can only have a single ellipsis ('...')");
    rdim = handle(subscripts[r], r, rdim, true);
  }
  std::vector<Value*> tensor_indices;
  for (size_t i = 0; i < count; ++i) {
    Expr e = subscripts[i];
    if (!exprs[i]) {
      if (e.kind() == TK_SLICE_EXPR) {
        sliceable = emitSliceOp(loc, sliceable, g_.insertConstant(dims[i], loc), SliceExpr(e.tree()));
      }
      continue;
    }
    Value* index = exprs[i];
    Value* d = nullptr;
    if (index->type()->kind() == TypeKind::None) {
      d = g_.insertConstant(dims[i], loc);
      sliceable = call(loc, aten::unsqueeze, {sliceable, d});
    } else if (index->type()->kind() == TypeKind::Int) {
      d = g_.insertConstant(dims[i], loc);
      sliceable = call(loc, aten::select, {sliceable, d, index});
    } else {
      if (dims[i] < 0) throwSourceError(loc, "Ellipses followed by tensor indexing is currently not supported");
      tensor_indices.resize(static_cast<size_t>(dims[i] + 1), nullptr);
      tensor_indices[static_cast<size_t>(dims[i])] = index;
    }
  }
  for (Value*& index : tensor_indices) {
    if (!index) index = g_.insertNode(g_.createNone())->output();
  }
  return {sliceable, tensor_indices};
}

Value* FunctionEmitter::emitSubscript(const Subscript& subscript) {
  SugaredValuePtr sv = emitSugaredExpr(subscript.value(), 1);
  List<Expr> subscripts = desugarSubscripts(subscript.subscriptExprs());
  const SourceRange& range = subscript.range();
  const SourceRange& value_range = subscript.value().range();
  Value* sliceable = sv->asValue(value_range, g_);
  if (subscripts.size() == 1 && subscripts[0].kind() != TK_SLICE_EXPR && isScriptObject(sliceable)) {
    if (Value* v = emitMagicCall(range, sliceable, "__getitem__", {emitExpr(subscripts[0])})) return v;
  }
  if (sliceable->type()->isSubtypeOf(*TensorType::get())) {
    auto [sliced, tensor_indices] = emitIntAndSliceIndexing(range, sliceable, subscripts);
    if (tensor_indices.empty()) return sliced;
    Value* indices = g_.insertNode(g_.createList(OptionalType::create(TensorType::get()), tensor_indices))->output();
    return call(range, aten::index, {sliced, indices});
  }
  if (subscripts.size() != 1) {
    throwSourceError(range, "Unsupported operation: attempted to use multidimensional indexing on a non-tensor type");
  }
  if (subscripts[0].kind() == TK_SLICE_EXPR) {
    if (sliceable->type()->cast<TupleType>()) return emitTupleSlice(range, sliceable, SliceExpr(subscripts[0].tree()));
    return emitSliceOp(range, sliceable, nullptr, SliceExpr(subscripts[0].tree()));
  }
  Value* index = emitExpr(subscripts[0]);
  if (sliceable->type()->cast<TupleType>()) return emitTupleIndex(range, sliceable, index);
  return sv->getitem(range, g_, index)->asValue(range, g_);
}

#include "kiln/frontend/builtin_forms.inc"

}  // namespace

namespace {

// The defs of a class body (docstrings and `pass` skipped); `name: T`
// declares an attribute.
void addClassBody(DefinitionCompiler& compiler, const ClassTypePtr& cls, const ClassDef& def,
                  const ResolverPtr& resolver) {
  for (Stmt stmt : def.body()) {
    switch (stmt.kind()) {
      case TK_DEF: compiler.addMethod(cls, Def(stmt.tree()), resolver); break;
      default:
        if (isIgnoredClassStatement(stmt)) break;
        throwSourceError(stmt.range(), "expected def in the body of class '" + def.name().name() + "' but found '" +
                                           kindToString(stmt.kind()) + "'");
    }
  }
}

}  // namespace

void defineFunctions(const std::vector<TreeRef>& definitions, const ResolverPtr& resolver, CompilationTarget& target) {
  DefinitionCompiler compiler(resolver, target);
  for (const TreeRef& tree : definitions) {
    switch (tree->kind()) {
      case TK_DEF: compiler.add(Def(tree)); break;
      case TK_CLASS: {
        ClassDef def(tree);
        if (classKind(def) == ClassKind::NamedTuple) {
          compiler.addNamedTuple(def, "__torch__." + def.name().name());
          break;
        }
        KILN_CHECK(target.define_class && target.define_method, "this compilation target cannot take classes");
        auto cls = ClassType::create("__torch__." + def.name().name());
        target.define_class(cls);
        compiler.addClass(def.name().name(), cls, def.name().range());
        addClassBody(compiler, cls, def, resolver);
        break;
      }
      case TK_IMPORT:
      case TK_IMPORT_FROM: break;
      case TK_EXPR_STMT:
        // A module docstring.
        if (ExprStmt(tree).expr().kind() == TK_STRINGLITERAL) break;
        throwSourceError(tree->range(), "expected def but found a statement");
      default: throwSourceError(tree->range(), "expected def but found '" + kindToString(tree->kind()) + "'");
    }
  }
  compiler.compileAll();
}

void defineClass(const ClassTypePtr& cls, const TreeRef& class_def, const ResolverPtr& resolver,
                 CompilationTarget& target) {
  if (class_def->kind() != TK_CLASS) throwSourceError(class_def->range(), "expected a class definition");
  ClassDef def(class_def);
  if (classKind(def) == ClassKind::NamedTuple) {
    throwSourceError(def.name().range(), "a NamedTuple class is a type, not a script class");
  }
  DefinitionCompiler compiler(resolver, target);
  compiler.addClass(def.name().name(), cls, def.name().range());
  addClassBody(compiler, cls, def, resolver);
  compiler.compileClasses();
}

std::shared_ptr<InterfaceType> defineInterface(const TreeRef& class_def, const std::string& qualified_name,
                                               bool is_module, const ResolverPtr& resolver) {
  ClassDef def(class_def);
  auto iface = InterfaceType::create(qualified_name, is_module);
  Graph scratch;  // the resolver emits nothing for class names
  auto lookup_class = [&](const std::string& name, const SourceRange& loc) -> TypePtr {
    if (name == def.name().name()) return iface;
    if (!resolver) return nullptr;
    SugaredValuePtr value = resolver->resolveValue(name, scratch, loc);
    if (auto named_tuple = std::dynamic_pointer_cast<NamedTupleConstructor>(value)) return named_tuple->type();
    if (auto cls = classOfValue(value)) return cls;
    return resolver->resolveType(name, loc);
  };
  declareInterfaceMethods(
      def, iface, [&](const Expr& type) { return typeFromExpr(type, lookup_class); }, nullptr, TensorType::get());
  return iface;
}

SugaredValuePtr defineNamedTuple(const TreeRef& class_def, const std::string& qualified_name,
                                 const ResolverPtr& resolver) {
  if (class_def->kind() != TK_CLASS) throwSourceError(class_def->range(), "expected a class definition");
  ClassDef def(class_def);
  if (classKind(def) != ClassKind::NamedTuple) throwSourceError(def.name().range(), "expected a NamedTuple class");
  CompilationTarget target;
  DefinitionCompiler compiler(resolver, target);
  compiler.addNamedTuple(def, qualified_name);
  Graph graph;
  return compiler.resolve(def.name().name(), graph, def.name().range(), resolver);
}

void defineMethods(const ClassTypePtr& cls, const std::vector<MethodSource>& methods,
                   const std::vector<std::string>& roots, CompilationTarget& target, const ResolverPtr& classes) {
  DefinitionCompiler compiler(classes, target);
  for (const MethodSource& m : methods) {
    if (m.def->kind() != TK_DEF) throwSourceError(m.def->range(), "expected a method definition");
    compiler.addMethod(cls, Def(m.def), m.resolver);
  }
  for (const std::string& root : roots) {
    if (!compiler.ensureMethod(cls, root, nullptr)) {
      KILN_ERROR("class '", cls->name(), "' has no method '", root, "' to compile");
    }
  }
}

}  // namespace kiln
