#pragma once
#include <functional>
// Sugared values (PyTorch's SugaredValue): what a name or expression means
// while a function is being compiled, when that is more than a graph value:
// a builtin function, a module of builtins, a method bound to its object,
// range(...), zip/enumerate, a tuple being iterated by unrolling, print,
// an exception class. The emitter asks them to desugar themselves by how
// they are used: attribute access, call, iteration, indexing, len.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/frontend/resolver.h"
#include "kiln/frontend/schema_matching.h"
#include "kiln/ir/graph.h"

namespace kiln {

class SugaredValue : public std::enable_shared_from_this<SugaredValue> {
 public:
  virtual ~SugaredValue() = default;
  // What it is, for messages ("builtin function", "module 'math'").
  virtual std::string kind() const = 0;

  // The first-class value it stands for.
  virtual Value* asValue(const SourceRange& loc, Graph& graph);
  virtual SugaredValuePtr attr(const SourceRange& loc, Graph& graph, const std::string& field);
  virtual SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                               const std::vector<NamedValue>& kwargs, size_t n_binders);
  // What a `for` loop iterates: itself for lists, strings, tensors and
  // ranges; the keys of a dict; an unrolled tuple.
  virtual SugaredValuePtr iter(const SourceRange& loc, Graph& graph);
  virtual Value* len(const SourceRange& loc, Graph& graph);
  virtual SugaredValuePtr getitem(const SourceRange& loc, Graph& graph, Value* index);
  // Known at compile time for things iterated by unrolling.
  virtual std::optional<int64_t> staticLen() { return std::nullopt; }
  virtual bool shouldEmitUnrolled() const { return false; }
  // The elements of a tuple-like value, for unpacking `a, b = v`.
  virtual std::vector<SugaredValuePtr> asTuple(const SourceRange& loc, Graph& graph, std::optional<size_t> size_hint);
};

// A first-class graph value.
class SimpleValue : public SugaredValue {
 public:
  explicit SimpleValue(Value* value) : value_(value) {}
  std::string kind() const override;
  Value* asValue(const SourceRange&, Graph&) override { return value_; }
  SugaredValuePtr attr(const SourceRange& loc, Graph& graph, const std::string& field) override;
  // Calling a module calls its forward.
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t n_binders) override;
  SugaredValuePtr iter(const SourceRange& loc, Graph& graph) override;
  Value* len(const SourceRange& loc, Graph& graph) override;
  SugaredValuePtr getitem(const SourceRange& loc, Graph& graph, Value* index) override;
  std::optional<int64_t> staticLen() override;
  std::vector<SugaredValuePtr> asTuple(const SourceRange& loc, Graph& graph, std::optional<size_t> size_hint) override;
  Value* value() const { return value_; }

 private:
  Value* value_;
};

// An operator called by its symbol (`aten::add`), optionally bound to `self`
// (a method of a tensor, list, string or dict).
class BuiltinFunction : public SugaredValue {
 public:
  BuiltinFunction(Symbol symbol, std::optional<NamedValue> self) : symbol_(symbol), self_(std::move(self)) {}
  std::string kind() const override { return "builtin"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t n_binders) override;
  Symbol symbol() const { return symbol_; }

 private:
  Symbol symbol_;
  std::optional<NamedValue> self_;
};

// `torch`, `math`, `kiln`, `torch.nn.functional`, `torch.jit`: attributes are
// builtin operators (`aten::<name>`) or constants (`math.pi`, `torch.float32`).
// The functions torch.nn.functional and kiln.nn.functional write in Python
// (interpolate, elu with `inplace`, ...): `hook(module, field)` returns the
// compiled function, or null where the name is a builtin. The Python
// bindings install it; without it every name is a builtin.
using FunctionalHook = std::function<std::shared_ptr<Function>(const std::string& module, const std::string& field)>;
void setFunctionalHook(FunctionalHook hook);

class BuiltinModule : public SugaredValue {
 public:
  explicit BuiltinModule(std::string name) : name_(std::move(name)) {}
  std::string kind() const override { return "module '" + name_ + "'"; }
  SugaredValuePtr attr(const SourceRange& loc, Graph& graph, const std::string& field) override;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// The prim::CallFunction of `function` with arguments already matched to
// its schema (its only one, or the overload a caller chose).
SugaredValuePtr emitFunctionCall(const SourceRange& loc, Graph& graph, const std::shared_ptr<Function>& function,
                                 const MatchedSchema& matched);

// A compiled function: calls become prim::CallFunction.
class FunctionValue : public SugaredValue {
 public:
  explicit FunctionValue(std::shared_ptr<Function> function) : function_(std::move(function)) {}
  std::string kind() const override { return "function"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t n_binders) override;

 private:
  std::shared_ptr<Function> function_;
};

// A constant from outside the source (a Python global).
class ConstantValue : public SugaredValue {
 public:
  explicit ConstantValue(IValue value) : value_(std::move(value)) {}
  std::string kind() const override { return "constant"; }
  Value* asValue(const SourceRange& loc, Graph& graph) override;
  SugaredValuePtr attr(const SourceRange& loc, Graph& graph, const std::string& field) override;
  std::vector<SugaredValuePtr> asTuple(const SourceRange& loc, Graph& graph, std::optional<size_t> size_hint) override;

 private:
  IValue value_;
};

// range(end), range(start, end[, step]).
class RangeValue : public SugaredValue {
 public:
  RangeValue(const SourceRange& loc, Graph& graph, std::vector<Value*> inputs,
             std::optional<int64_t> static_len = std::nullopt);
  std::string kind() const override { return "range"; }
  SugaredValuePtr iter(const SourceRange&, Graph&) override { return shared_from_this(); }
  Value* len(const SourceRange& loc, Graph& graph) override;
  SugaredValuePtr getitem(const SourceRange& loc, Graph& graph, Value* index) override;
  std::optional<int64_t> staticLen() override { return static_len_; }

 private:
  Value* start_ = nullptr;
  Value* end_ = nullptr;
  Value* step_ = nullptr;
  bool has_only_end_ = false;
  std::optional<int64_t> static_len_;
};

// Sugared elements iterated by unrolling (a tuple's elements, a zip of them).
class SugaredTupleValue : public SugaredValue {
 public:
  explicit SugaredTupleValue(std::vector<SugaredValuePtr> elements) : elements_(std::move(elements)) {}
  std::string kind() const override { return "tuple"; }
  Value* asValue(const SourceRange& loc, Graph& graph) override;
  SugaredValuePtr iter(const SourceRange&, Graph&) override { return shared_from_this(); }
  SugaredValuePtr getitem(const SourceRange& loc, Graph& graph, Value* index) override;
  std::optional<int64_t> staticLen() override { return static_cast<int64_t>(elements_.size()); }
  bool shouldEmitUnrolled() const override { return true; }
  std::vector<SugaredValuePtr> asTuple(const SourceRange&, Graph&, std::optional<size_t>) override { return elements_; }

 private:
  std::vector<SugaredValuePtr> elements_;
};

// zip(a, b, ...) and enumerate(x): iterates its children in lock step.
class IterableTree : public SugaredValue {
 public:
  std::string kind() const override { return "iterable"; }
  void addChild(const SourceRange& loc, Graph& graph, const SugaredValuePtr& child);
  SugaredValuePtr iter(const SourceRange&, Graph&) override { return shared_from_this(); }
  Value* len(const SourceRange& loc, Graph& graph) override;
  SugaredValuePtr getitem(const SourceRange& loc, Graph& graph, Value* index) override;
  std::optional<int64_t> staticLen() override { return unroll_length_; }
  bool shouldEmitUnrolled() const override { return unroll_length_.has_value(); }

 private:
  std::vector<SugaredValuePtr> baseIterables() const;
  std::vector<SugaredValuePtr> children_;
  std::optional<int64_t> unroll_length_;
};

// `Exception`, `ValueError`, ...: calling one makes the message `raise` uses:
// the argument (a tuple of several, as a string) and the class's qualified
// name. The AssertionError that `assert` raises is builtin instead: its
// message is "AssertionError: " + the arguments, and it has no class name.
class ExceptionValue : public SugaredValue {
 public:
  explicit ExceptionValue(std::string name, bool builtin = false) : name_(std::move(name)), builtin_(builtin) {}
  std::string kind() const override { return "exception"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t n_binders) override;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  bool builtin_;
};

class ExceptionMessageValue : public SugaredValue {
 public:
  ExceptionMessageValue(Value* message, Value* qualified_class_name)
      : message_(message), qualified_class_name_(qualified_class_name) {}
  std::string kind() const override { return "exception message"; }
  Value* message() const { return message_; }
  Value* qualifiedClassName() const { return qualified_class_name_; }

 private:
  Value* message_;
  Value* qualified_class_name_;
};

// print(...): prim::Print of its arguments.
class PrintValue : public SugaredValue {
 public:
  std::string kind() const override { return "print"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t n_binders) override;
};

// int, float, bool, str used as functions: the value unchanged when it has
// the type already, else the conversion operator.
class CastValue : public BuiltinFunction {
 public:
  CastValue(TypePtr type, Symbol symbol) : BuiltinFunction(symbol, std::nullopt), type_(std::move(type)) {}
  std::string kind() const override { return "builtin cast"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t n_binders) override;
  const TypePtr& type() const { return type_; }

 private:
  TypePtr type_;
};

// `t.tolist()`: the result's type comes from an annotation
// (`x: List[List[float]] = t.tolist()`), which the emitter passes in.
class TensorToListValue : public SugaredValue {
 public:
  explicit TensorToListValue(Value* self) : self_(self) {}
  std::string kind() const override { return "tolist"; }
  Value* callWithTypeHint(const SourceRange& loc, Graph& graph, const TypePtr& type_hint);

 private:
  Value* self_;
};

// Forms the emitter handles itself because their arguments are not plain
// values (types, lambdas) or they shape control flow: isinstance,
// torch.jit.annotate, range, zip, enumerate, len of unrolled things.
class SpecialFormValue : public SugaredValue {
 public:
  explicit SpecialFormValue(Symbol form) : form_(form) {}
  std::string kind() const override { return std::string(form_.name()); }
  Symbol form() const { return form_; }

 private:
  Symbol form_;
};

// The methods 1.13 compiles a property `name` of a class into; reading and
// assigning `obj.name` call them.
inline std::string propertyGetterName(const std::string& name) { return "__" + name + "_getter"; }
inline std::string propertySetterName(const std::string& name) { return "__" + name + "_setter"; }

// `obj.method` for an object of a class type: calls become prim::CallMethod.
// The method must exist on the type (the emitter compiles methods on demand
// before it asks for them).
class MethodValue : public SugaredValue {
 public:
  MethodValue(Value* self, std::string method) : self_(self), method_(std::move(method)) {}
  std::string kind() const override { return "method"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t n_binders) override;

 private:
  Value* self_;
  std::string method_;
};

// A TorchScript class used by name: calling it constructs an object
// (prim::CreateObject, then prim::CallMethod[name="__init__"]); as an
// annotation it is the class type.
class ClassValue : public SugaredValue {
 public:
  explicit ClassValue(ClassTypePtr type) : type_(std::move(type)) {}
  std::string kind() const override { return "class"; }
  // `C.__new__(C)`: the printer's object construction, an uninitialized
  // object (prim::CreateObject) whose `__init__` the code calls next;
  // `C.method` a compiled method as a function (hooks are called so).
  SugaredValuePtr attr(const SourceRange& loc, Graph& graph, const std::string& field) override;
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t n_binders) override;
  const ClassTypePtr& type() const { return type_; }

 private:
  ClassTypePtr type_;
};

// A NamedTuple type used by name (an imported `class X(NamedTuple)`):
// calling it builds the tuple (prim::TupleConstruct typed with the named
// tuple, fields by position or keyword); as an annotation it is the type.
class NamedTupleConstructor : public SugaredValue {
 public:
  // `defaults[i]`: field i's default (`b: float = 2.0` in the class), when it has one.
  explicit NamedTupleConstructor(std::shared_ptr<const TupleType> type,
                                 std::vector<std::optional<IValue>> defaults = {})
      : type_(std::move(type)), defaults_(std::move(defaults)) {}
  std::string kind() const override { return "NamedTuple"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t n_binders) override;
  const std::shared_ptr<const TupleType>& type() const { return type_; }

 private:
  std::shared_ptr<const TupleType> type_;
  std::vector<std::optional<IValue>> defaults_;
};

// A class TorchScript defines itself (`torch.no_grad`): the emitter compiles
// it into the unit being compiled when it is first used, then it is a
// ClassValue.
class BuiltinClassRef : public SugaredValue {
 public:
  explicit BuiltinClassRef(std::string qualified_name) : qualified_name_(std::move(qualified_name)) {}
  std::string kind() const override { return "builtin class"; }
  const std::string& qualifiedName() const { return qualified_name_; }

 private:
  std::string qualified_name_;
};

// `self.d.items()` / `.keys()` / `.values()` of a ModuleDict: the entries as
// a tuple iterated by unrolling.
class ModuleDictMethod : public SugaredValue {
 public:
  ModuleDictMethod(Value* dict, std::string method) : dict_(dict), method_(std::move(method)) {}
  std::string kind() const override { return "ModuleDict method"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t n_binders) override;

 private:
  Value* dict_;
  std::string method_;
};

// prim::GetAttr of an attribute of a class-typed value, named after the field.
Value* emitGetAttr(const SourceRange& loc, Graph& graph, Value* object, const std::string& field);

// The value of `v` if it is a SimpleValue, else null.
Value* asSimple(const SugaredValuePtr& v);

// Python's builtins by name (print, len, range, int, Exception, ...), and the
// modules torch/math/kiln; null for anything else.
SugaredValuePtr builtinGlobal(const std::string& name);

}  // namespace kiln
