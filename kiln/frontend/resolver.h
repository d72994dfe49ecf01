#pragma once
// How the IR emitter learns what a name means when the source does not
// define it (PyTorch's Resolver). The Python bindings resolve names through
// a function's globals and closure; C++ callers may supply their own.
// Builtins (`len`, `range`, `print`, `torch`, `math`, `kiln`, ...) need no
// resolver: the emitter knows them when no resolver claims the name.
#include <memory>
#include <optional>
#include <string>

#include "kiln/core/function.h"
#include "kiln/core/ivalue.h"
#include "kiln/frontend/tree.h"
#include "kiln/ir/source_range.h"

namespace kiln {

class Graph;
class SugaredValue;
using SugaredValuePtr = std::shared_ptr<SugaredValue>;

class Resolver;
using ResolverPtr = std::shared_ptr<Resolver>;

// A method's `def` (self first) and the resolver for the names it does not define.
struct MethodSource {
  TreeRef def;
  ResolverPtr resolver;
};

class Resolver {
 public:
  virtual ~Resolver() = default;
  // What `name` stands for, or null when the resolver does not know it.
  virtual SugaredValuePtr resolveValue(const std::string& name, Graph& graph, const SourceRange& loc) = 0;
  // The source of method `name` of `cls`, which the emitter met (`self.f(x)`,
  // `self.sub.f(x)`, hasattr) before it was compiled: the embedder holds the
  // classes' source (a Python class, an archive) and the emitter compiles
  // each method the first time a compiled one uses it. Nullopt when `cls`
  // has no such method in source.
  virtual std::optional<MethodSource> resolveMethod(const ClassTypePtr& cls, const std::string& name) {
    (void)cls;
    (void)name;
    return std::nullopt;
  }
  // The type a name of a type annotation stands for when it names no class
  // (`x: tensor_t` with `tensor_t = torch.Tensor` in Python), or null.
  virtual TypePtr resolveType(const std::string& name, const SourceRange& loc) {
    (void)name;
    (void)loc;
    return nullptr;
  }
  // Why `cls` has no attribute `name` though the object it was made from has
  // one (torch's "(This attribute exists on the Python module, but ...)"),
  // said after "Module 'M' has no attribute 'name'"; empty when there is nothing to add.
  virtual std::string explainMissingAttribute(const ClassTypePtr& cls, const std::string& name) {
    (void)cls;
    (void)name;
    return {};
  }
};

// The sugared values a resolver hands back.
// A Python constant (None, bool, int, float, str, or a tuple of these): a
// prim::Constant wherever it is used.
SugaredValuePtr makeConstantValue(IValue value);
// A compiled function: calls become prim::CallFunction.
SugaredValuePtr makeFunctionValue(std::shared_ptr<Function> function);
// A TorchScript class: calls construct objects, annotations name the type.
SugaredValuePtr makeClassValue(std::shared_ptr<ClassType> type);
// The class a sugared value stands for, or null.
std::shared_ptr<ClassType> classOfValue(const SugaredValuePtr& value);
// A module of builtins by its Python name: "torch", "math", "kiln",
// "torch.nn.functional" (also "F" style aliases map here), "torch.jit".
// Null for a module the emitter knows nothing about.
SugaredValuePtr makeBuiltinModule(const std::string& python_name);

}  // namespace kiln
