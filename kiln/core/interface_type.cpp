#include "kiln/core/interface_type.h"

#include "kiln/util/error.h"

namespace kiln {

namespace {

// A method of an interface: runs the method of the same name of the class
// of the object it is called on.
class InterfaceMethod : public Function {
 public:
  InterfaceMethod(std::string qualified_name, FunctionSchema schema)
      : name_(std::move(qualified_name)), schema_(std::move(schema)) {}
  const std::string& name() const override { return name_; }
  const FunctionSchema& getSchema() const override { return schema_; }
  void run(Stack& stack) override {
    size_t n = schema_.arguments().size();
    KILN_CHECK(n > 0 && stack.size() >= n, "interface method '", name_, "' called without its object");
    const IValue& self = stack[stack.size() - n];
    KILN_CHECK(self.isObject(), "interface method '", name_, "' called on a value that is not an object");
    const ClassTypePtr& cls = self.toObject()->type;
    Function* method = cls->findMethod(schema_.name());
    KILN_CHECK(method, "'", cls->name(), "' has no method '", schema_.name(), "' that interface method '", name_,
               "' can call");
    method->run(stack);
  }

 private:
  std::string name_;
  FunctionSchema schema_;
};

}  // namespace

InterfaceType::~InterfaceType() {
  for (const auto& d : dispatchers_) removeMethod(d.get());
}

void InterfaceType::addMethodSchema(FunctionSchema schema) {
  KILN_CHECK(!findMethod(schema.name()), "interface '", name(), "' declares method '", schema.name(), "' twice");
  auto dispatcher = std::make_unique<InterfaceMethod>(name() + "." + schema.name(), schema);
  addMethod(dispatcher.get());
  dispatchers_.push_back(std::move(dispatcher));
  schemas_.push_back(std::move(schema));
}

void InterfaceType::releaseMethods() {
  for (const auto& d : dispatchers_) removeMethod(d.get());
  dispatchers_.clear();
  schemas_.clear();
}

bool InterfaceType::isImplementedBy(const ClassType& cls) const {
  if (cls.name() == name()) return true;
  if (isModule() && !cls.isModule()) return false;
  for (const FunctionSchema& declared : schemas_) {
    Function* method = cls.findMethod(declared.name());
    if (!method) return false;
    const FunctionSchema& actual = method->getSchema();
    const auto& want = declared.arguments();
    const auto& have = actual.arguments();
    if (want.size() != have.size() || declared.returns().size() != actual.returns().size()) return false;
    for (size_t i = 1; i < want.size(); ++i) {
      if (want[i].name != have[i].name || !want[i].type->isSubtypeOf(*have[i].type)) return false;
    }
    for (size_t i = 0; i < declared.returns().size(); ++i) {
      if (!actual.returns()[i].type->isSubtypeOf(*declared.returns()[i].type)) return false;
    }
  }
  return true;
}

}  // namespace kiln
