#pragma once
// Objects and modules (PyTorch's torch::jit::Object and Module). An Object
// is an instance of a TorchScript class together with the compilation unit
// holding its methods; a Module is an object of a module type: parameters,
// buffers, submodules and plain attributes in typed slots, and methods
// compiled with `self` bound to the module's type.
//
//   kiln::Module m("Scale");
//   m.register_parameter("w", kiln::Tensor::ones({2}));
//   m.define("def forward(self, x: Tensor) -> Tensor:\n    return x * self.w\n");
//   kiln::IValue y = m.forward({kiln::IValue(x)});
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/ivalue.h"
#include "kiln/frontend/ir_emitter.h"
#include "kiln/frontend/resolver.h"
#include "kiln/runtime/function.h"

namespace kiln {

class Object;

// A method bound to its object.
class Method {
 public:
  Method(IntrusivePtr<ObjectObj> owner, GraphFunction* function) : owner_(std::move(owner)), function_(function) {}
  // Calls with `self` prepended; keyword arguments and defaults as for functions.
  IValue operator()(Stack args, const Kwargs& kwargs = {}) const;
  const std::string& name() const;
  const std::shared_ptr<Graph>& graph() const { return function_->graph(); }
  GraphFunction& function() const { return *function_; }
  IValue owner() const { return IValue(owner_); }

 private:
  IntrusivePtr<ObjectObj> owner_;
  GraphFunction* function_;
};

class Object {
 public:
  Object() = default;
  explicit Object(IntrusivePtr<ObjectObj> object) : object_(std::move(object)) {}
  // A new object of `type`, whose methods live in `unit` (registered there).
  Object(const std::shared_ptr<CompilationUnit>& unit, const ClassTypePtr& type);

  const IntrusivePtr<ObjectObj>& _ivalue() const;
  IValue toIValue() const { return IValue(_ivalue()); }
  const ClassTypePtr& type() const { return _ivalue()->type; }
  // The unit holding the type's methods.
  std::shared_ptr<CompilationUnit> compilationUnit() const { return _ivalue()->unit; }

  // Raises naming the class and the attribute when there is none.
  IValue attr(const std::string& name) const;
  IValue attr(const std::string& name, IValue or_else) const;
  bool hasattr(const std::string& name) const;
  // Sets an existing attribute; the value must fit its type (the error names
  // the field, its type and the value's).
  void setattr(const std::string& name, IValue value);
  // Adds an attribute to the type (if new) and sets it.
  void register_attribute(const std::string& name, const TypePtr& type, IValue value, bool is_param = false,
                          bool is_buffer = false);

  std::optional<Method> find_method(const std::string& name) const;
  Method get_method(const std::string& name) const;
  IValue run_method(const std::string& name, Stack args, const Kwargs& kwargs = {}) const;
  // Compiles every def of `source` as a method of this object's type
  // (`self` first). Names the source does not define go to `resolver`.
  // (Implemented in kiln/api/compile.cpp: compiling runs the cleanup
  // passes, which the runtime layer does not include.)
  void define(const std::string& source, const ResolverPtr& resolver = nullptr,
              const std::string& filename = "<string>");
  // Adds a method made of a graph (a trace, IR text) whose first input is
  // `self`: it gets this object's type. The schema comes from the graph.
  void create_method(const std::string& name, const std::shared_ptr<Graph>& graph);

 protected:
  IntrusivePtr<ObjectObj> object_;
};

struct NamedTensor {
  std::string name;
  Tensor value;
};

class Module : public Object {
 public:
  Module() = default;
  // A new module of a new type `__torch__.<class_name>` (class_name may be
  // qualified already), with `training` set.
  explicit Module(const std::string& class_name);
  explicit Module(IntrusivePtr<ObjectObj> object);

  void register_parameter(const std::string& name, Tensor value, bool is_buffer = false);
  void register_buffer(const std::string& name, Tensor value) { register_parameter(name, std::move(value), true); }
  void register_module(const std::string& name, const Module& module);

  IValue forward(Stack inputs, const Kwargs& kwargs = {}) const {
    return run_method("forward", std::move(inputs), kwargs);
  }

  // Recursively (prefixed `sub.w`) unless recurse is false, in registration order.
  std::vector<NamedTensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  std::vector<NamedTensor> named_buffers(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, Module>> named_children() const;
  std::vector<Module> children() const;
  // This module (named "") and every submodule below it, prefixed.
  std::vector<std::pair<std::string, Module>> named_modules() const;

  // Sets `training` here and in every submodule.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const;

 private:
  void collectTensors(SlotKind kind, bool recurse, const std::string& prefix, std::vector<NamedTensor>& out) const;
};

}  // namespace kiln
