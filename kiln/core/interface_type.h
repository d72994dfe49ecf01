#pragma once
// Interfaces (`@torch.jit.interface`, PyTorch's InterfaceType): a class type
// that only declares methods. A class whose methods have compatible schemas
// is a subtype of the interface (Type::isSubtypeOf asks isImplementedBy),
// so a module slot typed by a module interface holds any module that has
// those methods. Calling a method of an interface value calls the method of
// the object's own class, found when the call runs (the interface's methods
// are dispatchers that the type owns).
// Kept out of type.h: only the importer, the emitter and subtyping need it.
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/function.h"
#include "kiln/core/type.h"

namespace kiln {

class InterfaceType : public ClassType {
 public:
  // `is_module`: a module interface (its values are submodules).
  InterfaceType(std::string qualified_name, bool is_module) : ClassType(std::move(qualified_name), is_module) {}
  static std::shared_ptr<InterfaceType> create(std::string qualified_name, bool is_module) {
    return std::make_shared<InterfaceType>(std::move(qualified_name), is_module);
  }
  ~InterfaceType() override;

  // Declares method `schema.name()`; its first argument is self (of this type).
  void addMethodSchema(FunctionSchema schema);
  // Drops the declared methods. Their schemas name this type (self), a
  // cycle of shared pointers: the compilation unit that holds the type
  // breaks it when it goes, as it removes the methods of the classes it
  // holds.
  void releaseMethods();
  const std::vector<FunctionSchema>& methodSchemas() const { return schemas_; }
  // Whether `cls` has every method with a schema that fits: the same
  // arguments after self, each declared type a subtype of the class's, and
  // the class's returns subtypes of the declared ones.
  bool isImplementedBy(const ClassType& cls) const;

  // As TorchScript prints it: `InterfaceType<Iface>` in IR, the qualified
  // name in annotations.
  std::string str() const override { return "InterfaceType<" + unqualifiedName() + ">"; }
  std::string annotationStr() const override { return name(); }

 private:
  std::vector<FunctionSchema> schemas_;
  std::vector<std::unique_ptr<Function>> dispatchers_;
};

}  // namespace kiln
