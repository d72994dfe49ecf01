#pragma once
// What a `class` statement of TorchScript source declares, before its
// methods compile: its kind (a script class, a NamedTuple), its body's
// attribute annotations, and which of its defs are static methods. The IR
// emitter compiles the methods; this file reads the statement as TorchScript
// 1.13 does, and raises 1.13's errors for the forms it refuses.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/interface_type.h"
#include "kiln/frontend/resolver.h"
#include "kiln/frontend/tree_views.h"

namespace kiln {

enum class ClassKind {
  Class,       // no base, or `object`
  NamedTuple,  // `class P(NamedTuple)` (also `typing.NamedTuple`)
};

// The kind the bases of `def` make; an error for any other base (1.13 has no
// class inheritance, and Enum classes are not compiled from source).
ClassKind classKind(const ClassDef& def);

// One field of a NamedTuple class: `name: Type` or `name: Type = default`.
struct NamedTupleField {
  std::string name;
  Expr type;
  std::optional<Expr> default_value;
};
std::vector<NamedTupleField> namedTupleFields(const ClassDef& def);

// True for a def decorated `@staticmethod`.
bool isStaticMethod(const Def& def);

// True for a def decorated `@classmethod`: compiled as a method (called on
// an object, as 1.13 allows) whose first parameter names the class.
bool isClassMethod(const Def& def);

// True for a statement a script class body may hold besides defs: `pass`, a
// docstring, an attribute annotation `name: Type` (1.13 takes the types of
// attributes from __init__ and ignores these).
bool isIgnoredClassStatement(const Stmt& stmt);

// Adds to `iface` the method schemas the defs of an interface's class body
// declare (`def m(self, x: T) -> R: ...`, bodies ignored): self is the
// interface, unannotated parameters are Tensors, a method without a return
// annotation returns `default_return`. `parse_type` reads an annotation;
// `default_value`, when given, a parameter's default. Both the compiler and
// the source importer declare interfaces through it.
void declareInterfaceMethods(const ClassDef& def, const std::shared_ptr<InterfaceType>& iface,
                             const std::function<TypePtr(const Expr&)>& parse_type,
                             const std::function<IValue(const Expr&)>& default_value, const TypePtr& default_return);

// An interface class of an embedder (the source of a Python class decorated
// `@torch.jit.interface`): the methods its defs declare (bodies ignored;
// unannotated parameters are Tensors, self is the interface), as
// `qualified_name`. `is_module`: a module interface. Class names in the
// annotations resolve through `resolver`. Defined in ir_emitter.cpp.
std::shared_ptr<InterfaceType> defineInterface(const TreeRef& class_def, const std::string& qualified_name,
                                               bool is_module, const ResolverPtr& resolver);

// A NamedTuple class of an embedder (the source of a Python
// `class P(NamedTuple)`) as the value its name stands for in script code:
// calling it builds the tuple (defaults filled in), as an annotation it is
// the named tuple type `qualified_name`. Defined in ir_emitter.cpp.
SugaredValuePtr defineNamedTuple(const TreeRef& class_def, const std::string& qualified_name,
                                 const ResolverPtr& resolver);

}  // namespace kiln
