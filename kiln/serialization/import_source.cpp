#include "kiln/serialization/import_source.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "kiln/core/interface_type.h"
#include "kiln/frontend/class_definition.h"
#include "kiln/frontend/error_report.h"
#include "kiln/frontend/ir_emitter.h"
#include "kiln/frontend/parser.h"
#include "kiln/frontend/script_type_parser.h"
#include "kiln/frontend/sugared_value.h"
#include "kiln/frontend/tree_views.h"
#include "kiln/passes/cleanup.h"
#include "kiln/runtime/function.h"
#include "kiln/serialization/pickle.h"

namespace kiln {

namespace {

constexpr const char* kRootQualifier = "__torch__";

// How deep definitions may need one another while they are imported (a
// class typed by a class typed by ..., a function calling a function ...):
// each level is a nested compilation, so an archive must not make the stack
// overflow. Real models need a few levels.
constexpr int kMaxImportNesting = 128;

bool isQualifiedName(const std::string& name) { return name.rfind(std::string(kRootQualifier) + ".", 0) == 0; }

// `a.b.C` -> {"a.b", "C"}.
std::pair<std::string, std::string> splitQualified(const std::string& name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos) return {"", name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

}  // namespace

// What the importer knows: the files read so far, the classes and functions
// they define (parsed, defined when first needed), and the unit they go to.
struct SourceImporter::Impl {
  enum class ClassKind { Module, Class, NamedTuple, Interface, ModuleInterface };
  struct ClassEntry {
    TreeRef def;
    std::map<std::string, TreeRef> methods;
    std::vector<std::string> method_order;
    bool defining = false;
  };

  std::shared_ptr<CompilationUnit> unit;
  std::vector<IValue> constants;
  SourceLoader loader;
  ResolverPtr resolver;
  CompilationTarget target;

  std::set<std::string> parsed_files;
  // Qualified names in each file's order.
  std::map<std::string, std::vector<std::string>> file_definitions;
  std::unordered_map<std::string, ClassEntry> classes;
  std::unordered_map<std::string, TypePtr> types;
  std::unordered_map<std::string, TreeRef> function_defs;
  std::unordered_map<std::string, std::shared_ptr<Function>> functions;
  std::set<std::string> functions_in_progress;
  // Classes whose import failed, with the error.
  std::unordered_map<std::string, std::string> failed;
  // Classes whose methods are still to compile: the outermost import step
  // compiles them (or code that names the class, earlier), so that the
  // types a class needs are all defined before code using them compiles.
  std::vector<ClassTypePtr> to_compile;
  int depth = 0;
  int nesting = 0;

  // Counts one level of nested definition (see kMaxImportNesting).
  class Nesting {
   public:
    Nesting(Impl& impl, const std::string& what) : impl_(impl) {
      if (impl_.nesting >= kMaxImportNesting) {
        throw Error("importing '" + what + "' needs definitions nested deeper than " +
                    std::to_string(kMaxImportNesting) + " levels");
      }
      ++impl_.nesting;
    }
    ~Nesting() { --impl_.nesting; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Impl& impl_;
  };

  void parseFile(const std::string& qualifier);
  TypePtr findType(const std::string& qualified_name);
  TypePtr defineClass(const std::string& qualified_name, ClassEntry& entry);
  TypePtr defineInterface(const std::string& qualified_name, ClassEntry& entry);
  std::shared_ptr<Function> findFunction(const std::string& qualified_name);
  void compilePending();
  void compileMethods(const ClassTypePtr& cls);
  bool hasDefinition(const std::string& qualified_name) {
    auto [qualifier, name] = splitQualified(qualified_name);
    if (qualifier.empty()) return false;
    parseFile(qualifier);
    return classes.count(qualified_name) || function_defs.count(qualified_name);
  }
  // The sugared value of a definition (class, named tuple, function); null if none.
  SugaredValuePtr definitionValue(const std::string& qualified_name);

  TypePtr parseType(const Expr& e) {
    return typeFromExpr(e, [this](const std::string& name, const SourceRange&) -> TypePtr {
      if (!isQualifiedName(name)) return nullptr;
      return findType(name);
    });
  }
};

namespace {

using Impl = SourceImporter::Impl;

// The definition `name`, imported now if it was not yet; an error in its
// file also says where the code that needed it uses it.
SugaredValuePtr definitionUsedAt(Impl& importer, const std::string& name, const SourceRange& loc) {
  try {
    return importer.definitionValue(name);
  } catch (const Error& e) {
    std::string message = std::string(e.what()) + "\n'" + name + "' is being imported since it was used here";
    if (auto where = loc.fileLineCol()) {
      message += "\n  File \"" + std::get<0>(*where) + "\", line " + std::to_string(std::get<1>(*where)) + "\n" +
                 loc.underlinedLine();
    }
    throw Error(message);
  }
}

// `__torch__`, `__torch__.a`, ...: a prefix of qualified names; an attribute
// is the definition of that name or a longer prefix.
class QualifierValue : public SugaredValue {
 public:
  QualifierValue(std::weak_ptr<Impl> importer, std::string qualifier)
      : importer_(std::move(importer)), qualifier_(std::move(qualifier)) {}
  std::string kind() const override { return "module '" + qualifier_ + "'"; }
  SugaredValuePtr attr(const SourceRange& loc, Graph&, const std::string& field) override {
    auto importer = importer_.lock();
    if (!importer) throwSourceError(loc, "the importer of " + qualifier_ + " is gone");
    std::string name = qualifier_ + "." + field;
    if (auto v = definitionUsedAt(*importer, name, loc)) return v;
    return std::make_shared<QualifierValue>(importer_, name);
  }

 private:
  std::weak_ptr<Impl> importer_;
  std::string qualifier_;
};

// `ops.aten.f`, `ops.prim.f`: the operator of that namespace and name.
class OpsValue : public SugaredValue {
 public:
  explicit OpsValue(std::string ns = "") : ns_(std::move(ns)) {}
  std::string kind() const override { return ns_.empty() ? "ops" : "ops." + ns_; }
  SugaredValuePtr attr(const SourceRange& loc, Graph&, const std::string& field) override {
    if (ns_.empty()) return std::make_shared<OpsValue>(field);
    Symbol symbol = Symbol::fromQualString(ns_ + "::" + field);
    if (symbol == prim::Uninitialized || symbol == prim::unchecked_cast)
      return std::make_shared<SpecialFormValue>(symbol);
    if (!isBuiltinOperator(symbol)) throwSourceError(loc, "kiln has no operator " + ns_ + "::" + field);
    return std::make_shared<BuiltinFunction>(symbol, std::nullopt);
  }

 private:
  std::string ns_;
};

// `torch` in imported code. The printer writes every aten operator as
// `torch.<name>`, so an attribute that is neither one of kiln's operators
// nor another builtin (torch.float32, torch.jit) is an operator the model
// needs and kiln lacks: the error says so, rather than that `torch` has no
// such attribute.
class ArchiveTorchModule : public SugaredValue {
 public:
  std::string kind() const override { return "module 'torch'"; }
  SugaredValuePtr attr(const SourceRange& loc, Graph& graph, const std::string& field) override {
    try {
      return torch_.attr(loc, graph, field);
    } catch (const Error&) {
      if (isBuiltinOperator(Symbol::fromQualString("aten::" + field))) throw;
      throwSourceError(loc, "kiln has no operator aten::" + field + " (the code calls torch." + field + ")");
    }
  }

 private:
  BuiltinModule torch_{"torch"};
};

// `CONSTANTS.c<N>`: the N-th value of the archive's constants.pkl.
class ConstantTableValue : public SugaredValue {
  // A constant typed `Tensor`, not by the tensor it holds: a specialized
  // type would change how the code type-checks (TorchScript's importer does the same).
  class TableEntry : public SugaredValue {
   public:
    explicit TableEntry(IValue value) : value_(std::move(value)) {}
    std::string kind() const override { return "constant"; }
    Value* asValue(const SourceRange& loc, Graph& graph) override {
      Value* v = graph.insertConstant(value_, loc);
      v->setType(unshapedType(v->type()));
      return v;
    }
    SugaredValuePtr attr(const SourceRange& loc, Graph& graph, const std::string& field) override {
      return SimpleValue(asValue(loc, graph)).attr(loc, graph, field);
    }

   private:
    IValue value_;
  };

 public:
  explicit ConstantTableValue(const std::vector<IValue>* constants) : constants_(constants) {}
  std::string kind() const override { return "CONSTANTS"; }
  SugaredValuePtr attr(const SourceRange& loc, Graph&, const std::string& field) override {
    std::optional<size_t> index;
    if (field.size() > 1 && field[0] == 'c' && field.size() < 12) {
      size_t n = 0;
      bool digits = true;
      for (size_t i = 1; i < field.size(); ++i) {
        if (!isdigit(static_cast<unsigned char>(field[i]))) digits = false;
        n = n * 10 + static_cast<size_t>(field[i] - '0');
      }
      if (digits) index = n;
    }
    if (!index) throwSourceError(loc, "invalid constant specifier: " + field);
    if (*index >= constants_->size()) {
      throwSourceError(loc, "constant " + field + " is out of range: the archive has " +
                                std::to_string(constants_->size()) + " constants");
    }
    return std::make_shared<TableEntry>((*constants_)[*index]);
  }

 private:
  const std::vector<IValue>* constants_;
};

// Names in imported code: qualified definitions, and what the printer writes
// besides builtins (ops, CONSTANTS, annotate, unchecked_cast, uninitialized, inf, nan).
class ImportResolver : public Resolver {
 public:
  explicit ImportResolver(std::weak_ptr<Impl> importer) : importer_(std::move(importer)) {}

  SugaredValuePtr resolveValue(const std::string& name, Graph&, const SourceRange& loc) override {
    auto importer = importer_.lock();
    if (!importer) return nullptr;
    if (name == kRootQualifier) return std::make_shared<QualifierValue>(importer_, name);
    if (isQualifiedName(name)) return definitionUsedAt(*importer, name, loc);
    if (name == "ops") return std::make_shared<OpsValue>();
    if (name == "torch") return std::make_shared<ArchiveTorchModule>();
    if (name == "CONSTANTS") return std::make_shared<ConstantTableValue>(&importer->constants);
    if (name == "annotate") return std::make_shared<SpecialFormValue>(Symbol::fromQualString("prim::annotate"));
    if (name == "unchecked_cast") return std::make_shared<SpecialFormValue>(prim::unchecked_cast);
    if (name == "uninitialized") return std::make_shared<SpecialFormValue>(prim::Uninitialized);
    if (name == "inf") return makeConstantValue(IValue(std::numeric_limits<double>::infinity()));
    if (name == "nan") return makeConstantValue(IValue(std::numeric_limits<double>::quiet_NaN()));
    return nullptr;
  }

  std::optional<MethodSource> resolveMethod(const ClassTypePtr& cls, const std::string& name) override {
    auto importer = importer_.lock();
    if (!importer) return std::nullopt;
    auto it = importer->classes.find(cls->name());
    if (it == importer->classes.end()) return std::nullopt;
    auto m = it->second.methods.find(name);
    if (m == it->second.methods.end()) return std::nullopt;
    return MethodSource{m->second, importer->resolver};
  }

 private:
  std::weak_ptr<Impl> importer_;
};

// The value of a constant's initializer (`x : Final[int] = 3`): literals,
// negated numbers, tuples and lists of them.
IValue evaluateConstant(const Expr& e) {
  switch (e.kind()) {
    case TK_CONST: {
      Const c(e.tree());
      return c.isFloatingPoint() ? IValue(c.asDouble()) : IValue(c.asInt());
    }
    case TK_STRINGLITERAL: return IValue(StringLiteral(e.tree()).text());
    case TK_TRUE: return IValue(true);
    case TK_FALSE: return IValue(false);
    case TK_NONE: return IValue();
    case TK_UNARY_MINUS: {
      IValue v = evaluateConstant(Expr(e.tree()->trees()[0]));
      if (v.isInt()) return IValue(-v.toInt());
      if (v.isDouble()) return IValue(-v.toDouble());
      break;
    }
    case TK_VAR: {
      const std::string& name = Var(e.tree()).name().name();
      if (name == "inf") return IValue(std::numeric_limits<double>::infinity());
      if (name == "nan") return IValue(std::numeric_limits<double>::quiet_NaN());
      break;
    }
    case TK_TUPLE_LITERAL: {
      std::vector<IValue> elements;
      for (Expr item : TupleLiteral(e.tree()).inputs()) elements.push_back(evaluateConstant(item));
      return IValue::tuple(std::move(elements));
    }
    case TK_LIST_LITERAL: {
      std::vector<IValue> elements;
      for (Expr item : ListLiteral(e.tree()).inputs()) elements.push_back(evaluateConstant(item));
      return IValue::list(commonElementType(elements), std::move(elements));
    }
    case TK_APPLY: {
      // torch.device("cpu")
      Apply apply(e.tree());
      if (apply.callee().range().text() == "torch.device" && apply.inputs().size() == 1 && apply.attributes().empty() &&
          apply.inputs()[0].kind() == TK_STRINGLITERAL) {
        try {
          return IValue(Device::parse(StringLiteral(apply.inputs()[0].tree()).text()));
        } catch (const Error& err) {
          throwSourceError(e.range(), err.what());
        }
      }
      break;
    }
    default: break;
  }
  throwSourceError(e.range(), "expected a constant value (a literal, a device, or a tuple or list of these)");
}

// `__parameters__ = ["w", "b", ]`: the names listed.
std::set<std::string> nameList(const Expr& e) {
  if (e.kind() != TK_LIST_LITERAL) throwSourceError(e.range(), "expected a list of names");
  std::set<std::string> names;
  for (Expr item : ListLiteral(e.tree()).inputs()) {
    if (item.kind() != TK_STRINGLITERAL) throwSourceError(item.range(), "expected a name in quotes");
    names.insert(StringLiteral(item.tree()).text());
  }
  return names;
}

}  // namespace

void SourceImporter::Impl::parseFile(const std::string& qualifier) {
  if (!parsed_files.insert(qualifier).second) return;
  std::optional<std::string> text = loader(qualifier);
  if (!text) return;
  Parser parser(std::make_shared<const Source>(std::move(*text), SourceImporter::filenameOf(qualifier), 1));
  std::vector<std::string>& defined = file_definitions[qualifier];
  for (const TreeRef& tree : parser.parseFile()) {
    switch (tree->kind()) {
      case TK_CLASS: {
        std::string name = qualifier + "." + ClassDef(tree).name().name();
        if (classes.count(name) || function_defs.count(name)) {
          throwSourceError(ClassDef(tree).name().range(), "'" + name + "' is already defined");
        }
        ClassEntry& entry = classes[name];
        entry.def = tree;
        defined.push_back(name);
        break;
      }
      case TK_DEF: {
        std::string name = qualifier + "." + Def(tree).name().name();
        if (classes.count(name) || function_defs.count(name)) {
          throwSourceError(Def(tree).name().range(), "'" + name + "' is already defined");
        }
        function_defs[name] = tree;
        defined.push_back(name);
        break;
      }
      case TK_IMPORT:
      case TK_IMPORT_FROM: break;
      case TK_EXPR_STMT:
        if (ExprStmt(tree).expr().kind() == TK_STRINGLITERAL) break;
        throwSourceError(tree->range(), "expected a class or def but found a statement");
      default:
        throwSourceError(tree->range(), "expected a class or def but found '" + kindToString(tree->kind()) + "'");
    }
  }
}

TypePtr SourceImporter::Impl::findType(const std::string& qualified_name) {
  // A class that failed to import fails the same way again (its type may be
  // half made: no code may use it).
  if (auto it = failed.find(qualified_name); it != failed.end()) throw Error(it->second);
  if (auto it = types.find(qualified_name); it != types.end()) return it->second;
  auto [qualifier, name] = splitQualified(qualified_name);
  if (qualifier.empty()) return nullptr;
  parseFile(qualifier);
  auto it = classes.find(qualified_name);
  if (it == classes.end()) return nullptr;
  try {
    Nesting nesting(*this, qualified_name);
    return defineClass(qualified_name, it->second);
  } catch (const Error& e) {
    failed.emplace(qualified_name, e.what());
    throw;
  }
}

TypePtr SourceImporter::Impl::defineClass(const std::string& qualified_name, ClassEntry& entry) {
  ClassDef def(entry.def);
  if (entry.defining) {
    throwSourceError(def.name().range(), "class '" + qualified_name + "' refers to itself while it is defined");
  }
  ClassKind kind = ClassKind::Class;
  for (Expr base : def.bases()) {
    std::string text = base.range().text();
    if (text == "Module") {
      kind = ClassKind::Module;
    } else if (text == "NamedTuple") {
      kind = ClassKind::NamedTuple;
    } else if (text == "ModuleInterface") {
      kind = ClassKind::ModuleInterface;
    } else if (text == "Interface") {
      kind = ClassKind::Interface;
    } else if (text == "Enum") {
      throwSourceError(base.range(), "enums are not supported yet (class '" + qualified_name + "')");
    } else {
      throwSourceError(base.range(), "unknown base class '" + text + "' of class '" + qualified_name + "'");
    }
  }
  if (def.bases().size() > 1) throwSourceError(def.bases().range(), "a class may have one base at most");
  entry.defining = true;

  if (kind == ClassKind::NamedTuple) {
    std::vector<std::string> names;
    std::vector<TypePtr> field_types;
    for (Stmt stmt : def.body()) {
      if (stmt.kind() == TK_PASS) continue;
      if (stmt.kind() == TK_EXPR_STMT && ExprStmt(stmt.tree()).expr().kind() == TK_STRINGLITERAL) continue;
      if (stmt.kind() != TK_ASSIGN) throwSourceError(stmt.range(), "expected a field of the NamedTuple");
      Assign assign(stmt.tree());
      if (assign.lhsList().size() != 1 || assign.lhsList()[0].kind() != TK_VAR || !assign.type().present()) {
        throwSourceError(stmt.range(), "expected a field `name : Type` of the NamedTuple");
      }
      if (assign.rhs().present()) {
        throwSourceError(assign.rhs().get().range(), "NamedTuple fields with defaults are not supported yet");
      }
      names.push_back(Var(assign.lhsList()[0].tree()).name().name());
      field_types.push_back(parseType(assign.type().get()));
    }
    TypePtr type = TupleType::createNamed(qualified_name, std::move(names), std::move(field_types));
    types[qualified_name] = type;
    entry.defining = false;
    return type;
  }

  if (kind == ClassKind::Interface || kind == ClassKind::ModuleInterface) return defineInterface(qualified_name, entry);

  auto cls = ClassType::create(qualified_name, kind == ClassKind::Module);
  // Registered before the attributes are typed: an attribute may have the
  // class's own type (a linked list of script objects).
  types[qualified_name] = cls;
  target.define_class(cls);
  std::set<std::string> parameters, buffers;
  struct Declared {
    std::string name;
    Expr type;
  };
  std::vector<Declared> attributes;
  std::vector<Declared> hooks;
  for (Stmt stmt : def.body()) {
    switch (stmt.kind()) {
      case TK_DEF: {
        const std::string& name = Def(stmt.tree()).name().name();
        if (entry.methods.count(name)) throwSourceError(stmt.range(), "method '" + name + "' is already defined");
        entry.methods[name] = stmt.tree();
        entry.method_order.push_back(name);
        break;
      }
      case TK_PASS: break;
      case TK_EXPR_STMT:
        if (ExprStmt(stmt.tree()).expr().kind() == TK_STRINGLITERAL) break;
        throwSourceError(stmt.range(), "expected a def or an attribute in the body of class '" + qualified_name + "'");
      case TK_ASSIGN: {
        Assign assign(stmt.tree());
        if (assign.lhsList().size() != 1) throwSourceError(stmt.range(), "expected one name to assign");
        Expr lhs = assign.lhsList()[0];
        if (lhs.kind() == TK_SUBSCRIPT) {
          // __annotations__["0"] = T: an attribute whose name is no identifier.
          Subscript sub(lhs.tree());
          if (sub.value().kind() != TK_VAR || Var(sub.value().tree()).name().name() != "__annotations__" ||
              sub.subscriptExprs().size() != 1 || sub.subscriptExprs()[0].kind() != TK_STRINGLITERAL ||
              !assign.rhs().present()) {
            throwSourceError(stmt.range(), "expected __annotations__[\"name\"] = Type");
          }
          attributes.push_back({StringLiteral(sub.subscriptExprs()[0].tree()).text(), assign.rhs().get()});
          break;
        }
        if (lhs.kind() != TK_VAR) throwSourceError(lhs.range(), "expected a name to assign");
        const std::string& name = Var(lhs.tree()).name().name();
        if (name == "__parameters__" || name == "__buffers__") {
          if (!assign.rhs().present()) throwSourceError(stmt.range(), "expected a list of names");
          (name == "__parameters__" ? parameters : buffers) = nameList(assign.rhs().get());
          break;
        }
        if (name == "__annotations__" && !assign.type().present() && assign.rhs().present() &&
            assign.rhs().get().kind() == TK_LIST_LITERAL) {
          // `__annotations__ = []`, which 1.13 prints before `__annotations__["0"] = T` lines in some
          // classes (ParameterList): nothing to declare.
          break;
        }
        if (name == "__forward_pre_hooks__" || name == "__forward_hooks__") {
          // The hooks are methods of the class (called by the code of the
          // modules that hold it); the lists only say which ones are hooks.
          if (!assign.rhs().present()) throwSourceError(stmt.range(), "expected a list of names");
          for (const std::string& hook : nameList(assign.rhs().get())) hooks.push_back({hook, assign.rhs().get()});
          break;
        }
        if (!assign.type().present()) {
          throwSourceError(stmt.range(),
                           "expected an attribute `name : Type` in the body of class '" + qualified_name + "'");
        }
        Expr type = assign.type().get();
        bool is_final = type.kind() == TK_SUBSCRIPT && Subscript(type.tree()).value().range().text() == "Final";
        if (is_final) {
          Subscript sub(type.tree());
          if (sub.subscriptExprs().size() != 1) throwSourceError(type.range(), "Final takes one type");
          if (!assign.rhs().present()) throwSourceError(stmt.range(), "a Final attribute needs a value");
          TypePtr constant_type = parseType(sub.subscriptExprs()[0]);
          IValue value = evaluateConstant(assign.rhs().get());
          if (constant_type->kind() == TypeKind::Float && value.isInt()) {
            value = IValue(static_cast<double>(value.toInt()));
          }
          if (!value.type()->isSubtypeOf(*constant_type)) {
            throwSourceError(assign.rhs().get().range(), "expected a value of type " + constant_type->annotationStr() +
                                                             " for constant '" + name + "' but found " +
                                                             value.type()->annotationStr());
          }
          if (cls->hasAttribute(name) || cls->findConstant(name)) {
            throwSourceError(lhs.range(), "'" + name + "' is already defined in class '" + qualified_name + "'");
          }
          cls->addConstant(name, std::make_shared<const IValue>(std::move(value)));
          break;
        }
        if (assign.rhs().present()) {
          throwSourceError(assign.rhs().get().range(), "only Final attributes have values in a class body");
        }
        attributes.push_back({name, type});
        break;
      }
      default:
        throwSourceError(stmt.range(), "expected a def or an attribute in the body of class '" + qualified_name +
                                           "' but found '" + kindToString(stmt.kind()) + "'");
    }
  }
  for (const Declared& a : attributes) {
    TypePtr type = parseType(a.type);
    SlotKind slot = SlotKind::Attribute;
    if (parameters.count(a.name)) {
      slot = SlotKind::Parameter;
    } else if (buffers.count(a.name)) {
      slot = SlotKind::Buffer;
    } else if (auto sub = type->cast<ClassType>(); sub && sub->isModule()) {
      slot = SlotKind::Module;
    }
    if (cls->hasAttribute(a.name) || cls->findConstant(a.name)) {
      throwSourceError(a.type.range(), "'" + a.name + "' is already defined in class '" + qualified_name + "'");
    }
    cls->addAttribute(a.name, type, slot);
  }
  for (const Declared& hook : hooks) {
    if (!entry.methods.count(hook.name)) {
      throwSourceError(hook.type.range(), "hook '" + hook.name + "' is not a method of class '" + qualified_name + "'");
    }
  }
  for (const std::string& name : parameters) {
    if (!cls->hasAttribute(name)) {
      throwSourceError(def.name().range(), "parameter '" + name + "' of class '" + qualified_name + "' has no type");
    }
  }
  for (const std::string& name : buffers) {
    if (!cls->hasAttribute(name)) {
      throwSourceError(def.name().range(), "buffer '" + name + "' of class '" + qualified_name + "' has no type");
    }
  }
  entry.defining = false;
  to_compile.push_back(cls);
  return cls;
}

// `class I(ModuleInterface):` / `class I(Interface):` declares methods
// (`def forward(self, x: Tensor) -> Tensor: pass`): their schemas, self first.
TypePtr SourceImporter::Impl::defineInterface(const std::string& qualified_name, ClassEntry& entry) {
  ClassDef def(entry.def);
  bool is_module = def.bases()[0].range().text() == "ModuleInterface";
  auto iface = InterfaceType::create(qualified_name, is_module);
  types[qualified_name] = iface;
  target.define_class(iface);
  declareInterfaceMethods(
      def, iface, [this](const Expr& type) { return parseType(type); }, evaluateConstant, NoneType::get());
  entry.defining = false;
  return iface;
}

void SourceImporter::Impl::compilePending() {
  while (!to_compile.empty()) {
    ClassTypePtr cls = to_compile.front();
    to_compile.erase(to_compile.begin());
    compileMethods(cls);
  }
}

void SourceImporter::Impl::compileMethods(const ClassTypePtr& cls) {
  try {
    Nesting nesting(*this, cls->name());
    ClassEntry& entry = classes.at(cls->name());
    std::vector<MethodSource> methods;
    std::vector<std::string> roots;
    for (const std::string& name : entry.method_order) {
      if (cls->findMethod(name)) continue;
      methods.push_back({entry.methods.at(name), resolver});
      roots.push_back(name);
    }
    // __init__ first: the methods of a script class construct it.
    std::stable_partition(roots.begin(), roots.end(), [](const std::string& n) { return n == "__init__"; });
    if (!roots.empty()) defineMethods(cls, methods, roots, target, resolver);
  } catch (const Error& e) {
    failed.emplace(cls->name(), e.what());
    throw;
  }
}

std::shared_ptr<Function> SourceImporter::Impl::findFunction(const std::string& qualified_name) {
  if (auto it = functions.find(qualified_name); it != functions.end()) return it->second;
  auto [qualifier, name] = splitQualified(qualified_name);
  if (qualifier.empty()) return nullptr;
  parseFile(qualifier);
  auto it = function_defs.find(qualified_name);
  if (it == function_defs.end()) return nullptr;
  if (!functions_in_progress.insert(qualified_name).second) {
    throwSourceError(Def(it->second).name().range(),
                     "function '" + qualified_name + "' is called recursively. Recursive calls are not supported");
  }
  // The function alone, named by its qualified name in the unit.
  CompilationTarget one = target;
  std::string prefix = qualifier + ".";
  CompilationUnit* raw = unit.get();
  one.find = [raw, prefix](const std::string& n) -> std::shared_ptr<Function> {
    return raw->findFunctionShared(prefix + n);
  };
  one.define = [raw, prefix](const std::string& n, std::shared_ptr<Graph> graph,
                             FunctionSchema schema) -> std::shared_ptr<Function> {
    runCleanupPasses(graph);
    raw->createFunction(prefix + n, std::move(graph), std::move(schema), /*check_graph=*/false);
    return raw->findFunctionShared(prefix + n);
  };
  try {
    Nesting nesting(*this, qualified_name);
    defineFunctions({it->second}, resolver, one);
  } catch (...) {
    functions_in_progress.erase(qualified_name);
    throw;
  }
  functions_in_progress.erase(qualified_name);
  std::shared_ptr<Function> fn = unit->findFunctionShared(qualified_name);
  functions[qualified_name] = fn;
  return fn;
}

SugaredValuePtr SourceImporter::Impl::definitionValue(const std::string& qualified_name) {
  if (!hasDefinition(qualified_name)) return nullptr;
  if (classes.count(qualified_name)) {
    TypePtr type = findType(qualified_name);
    if (auto cls = std::dynamic_pointer_cast<ClassType>(std::const_pointer_cast<Type>(type))) {
      // Code that names a class may construct it and pass it where an
      // interface is expected, which asks for its methods: compile them now.
      if (auto it = std::find(to_compile.begin(), to_compile.end(), cls); it != to_compile.end()) {
        to_compile.erase(it);
        compileMethods(cls);
      }
      return makeClassValue(cls);
    }
    if (auto tuple = std::dynamic_pointer_cast<const TupleType>(type)) {
      return std::make_shared<NamedTupleConstructor>(tuple);
    }
    return nullptr;
  }
  return makeFunctionValue(findFunction(qualified_name));
}

SourceImporter::SourceImporter(std::shared_ptr<CompilationUnit> unit, std::vector<IValue> constants,
                               SourceLoader loader)
    : impl_(std::make_shared<Impl>()) {
  KILN_CHECK(unit, "SourceImporter needs a compilation unit");
  KILN_CHECK(loader, "SourceImporter needs a loader of source files");
  impl_->unit = std::move(unit);
  impl_->constants = std::move(constants);
  impl_->loader = std::move(loader);
  impl_->resolver = std::make_shared<ImportResolver>(impl_);
  CompilationUnit* raw = impl_->unit.get();
  std::weak_ptr<CompilationUnit> weak = impl_->unit;
  CompilationTarget& target = impl_->target;
  target.find = [raw](const std::string& name) -> std::shared_ptr<Function> { return raw->findFunctionShared(name); };
  target.define = [raw](const std::string& name, std::shared_ptr<Graph> graph,
                        FunctionSchema schema) -> std::shared_ptr<Function> {
    runCleanupPasses(graph);
    raw->createFunction(name, std::move(graph), std::move(schema), /*check_graph=*/false);
    return raw->findFunctionShared(name);
  };
  target.define_class = [weak](const ClassTypePtr& cls) { CompilationUnit::registerClass(weak.lock(), cls); };
  target.define_method = [raw](const ClassTypePtr& cls, const std::string& name, std::shared_ptr<Graph> graph,
                               FunctionSchema schema) -> Function* {
    runCleanupPasses(graph);
    std::shared_ptr<CompilationUnit> owner = cls->compilationUnit();
    CompilationUnit* dest = owner ? owner.get() : raw;
    return &dest->createMethod(cls, name, std::move(graph), std::move(schema), /*check_graph=*/false);
  };
}

SourceImporter::~SourceImporter() = default;

namespace {

// Runs `body` as the outermost import step: the methods of the classes it
// defined compile when it is done (also when it fails, nothing is left half-queued).
template <typename F>
auto asImportStep(SourceImporter::Impl& impl, F&& body) {
  struct Depth {
    SourceImporter::Impl& impl;
    explicit Depth(SourceImporter::Impl& i) : impl(i) { ++impl.depth; }
    ~Depth() { --impl.depth; }
  };
  try {
    Depth depth(impl);
    auto result = body();
    if (impl.depth == 1) impl.compilePending();
    return result;
  } catch (...) {
    if (impl.depth == 0) impl.to_compile.clear();
    throw;
  }
}

}  // namespace

TypePtr SourceImporter::loadType(const std::string& qualified_name) {
  return asImportStep(*impl_, [&] { return impl_->findType(qualified_name); });
}

std::shared_ptr<Function> SourceImporter::loadFunction(const std::string& qualified_name) {
  return asImportStep(*impl_, [&] { return impl_->findFunction(qualified_name); });
}

std::vector<std::string> SourceImporter::loadFile(const std::string& qualifier) {
  return asImportStep(*impl_, [&] {
    impl_->parseFile(qualifier);
    std::vector<std::string> names = impl_->file_definitions[qualifier];
    for (const std::string& name : names) {
      if (impl_->classes.count(name)) {
        impl_->findType(name);
      } else {
        impl_->findFunction(name);
      }
    }
    return names;
  });
}

std::string SourceImporter::filenameOf(const std::string& qualifier) {
  std::string path = qualifier;
  for (char& c : path) {
    if (c == '.') c = '/';
  }
  return "code/" + path + ".py";
}

}  // namespace kiln
