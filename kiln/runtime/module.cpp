#include "kiln/runtime/module.h"

#include "kiln/ir/graph.h"
#include "kiln/util/error.h"

namespace kiln {

IValue Method::operator()(Stack args, const Kwargs& kwargs) const {
  args.insert(args.begin(), IValue(owner_));
  return (*function_)(std::move(args), kwargs);
}

const std::string& Method::name() const { return function_->getSchema().name(); }

Object::Object(const std::shared_ptr<CompilationUnit>& unit, const ClassTypePtr& type) {
  CompilationUnit::registerClass(unit, type);
  object_ = makeIntrusive<ObjectObj>(type);
}

const IntrusivePtr<ObjectObj>& Object::_ivalue() const {
  KILN_CHECK(object_, "the object is empty (default-constructed)");
  return object_;
}

IValue Object::attr(const std::string& name) const {
  const ClassType& cls = *type();
  if (auto slot = cls.findAttributeSlot(name)) return _ivalue()->slot(*slot);
  if (const IValue* constant = cls.findConstant(name)) return *constant;
  KILN_ERROR(cls.isModule() ? "Module" : "Object", " '", cls.unqualifiedName(), "' has no attribute '", name, "'");
}

IValue Object::attr(const std::string& name, IValue or_else) const {
  return hasattr(name) ? attr(name) : std::move(or_else);
}

bool Object::hasattr(const std::string& name) const { return type()->hasAttribute(name) || type()->findConstant(name); }

void Object::setattr(const std::string& name, IValue value) {
  const ClassType& cls = *type();
  auto slot = cls.findAttributeSlot(name);
  if (!slot) {
    KILN_CHECK(!cls.findConstant(name), "cannot set the constant '", name, "' of '", cls.unqualifiedName(), "'");
    KILN_ERROR(cls.isModule() ? "Module" : "Object", " '", cls.unqualifiedName(), "' has no attribute '", name, "'");
  }
  const TypePtr& expected = cls.attributeType(*slot);
  TypePtr actual = value.type();
  KILN_CHECK(actual->isSubtypeOf(*expected), "cannot set attribute '", name, "' of '", cls.unqualifiedName(),
             "' (of type ", expected->annotationStr(), ") to a value of type ", unshapedType(actual)->annotationStr());
  _ivalue()->slot(*slot) = std::move(value);
}

void Object::register_attribute(const std::string& name, const TypePtr& type, IValue value, bool is_param,
                                bool is_buffer) {
  SlotKind kind = is_param ? SlotKind::Parameter : is_buffer ? SlotKind::Buffer : SlotKind::Attribute;
  ClassType& cls = *this->type();
  if (auto slot = cls.findAttributeSlot(name)) {
    KILN_CHECK(cls.attributeKind(*slot) == kind && *cls.attributeType(*slot) == *type, "'", cls.unqualifiedName(),
               "' already has an attribute '", name, "' of another kind or type");
  } else {
    cls.addAttribute(name, type, kind);
  }
  setattr(name, std::move(value));
}

std::optional<Method> Object::find_method(const std::string& name) const {
  Function* f = type()->findMethod(name);
  if (!f) return std::nullopt;
  auto* graph_function = dynamic_cast<GraphFunction*>(f);
  if (!graph_function) return std::nullopt;
  return Method(_ivalue(), graph_function);
}

Method Object::get_method(const std::string& name) const {
  auto m = find_method(name);
  KILN_CHECK(m, "Method '", name, "' is not defined on '", type()->unqualifiedName(), "'");
  return *m;
}

void Object::create_method(const std::string& name, const std::shared_ptr<Graph>& graph) {
  std::shared_ptr<CompilationUnit> unit = compilationUnit();
  KILN_CHECK(unit, "the methods of '", type()->name(), "' have no compilation unit to go to");
  KILN_CHECK(!graph->inputs().empty(), "the graph of method '", name, "' needs `self` as its first input");
  auto copy = graph->copy();
  copy->inputs()[0]->setType(type());
  unit->createMethod(type(), name, std::move(copy));
}

IValue Object::run_method(const std::string& name, Stack args, const Kwargs& kwargs) const {
  return get_method(name)(std::move(args), kwargs);
}

namespace {

std::string qualifiedClassName(const std::string& name) {
  return name.rfind("__torch__.", 0) == 0 ? name : "__torch__." + name;
}

}  // namespace

Module::Module(const std::string& class_name)
    : Object(std::make_shared<CompilationUnit>(),
             ClassType::create(qualifiedClassName(class_name), /*is_module=*/true)) {
  register_attribute("training", BoolType::get(), IValue(true));
}

Module::Module(IntrusivePtr<ObjectObj> object) : Object(std::move(object)) {
  KILN_CHECK(type()->isModule(), "'", type()->name(), "' is not a module type");
}

void Module::register_parameter(const std::string& name, Tensor value, bool is_buffer) {
  register_attribute(name, TensorType::get(), IValue(std::move(value)), !is_buffer, is_buffer);
}

void Module::register_module(const std::string& name, const Module& module) {
  ClassType& cls = *type();
  if (auto slot = cls.findAttributeSlot(name)) {
    KILN_CHECK(cls.attributeKind(*slot) == SlotKind::Module, "'", cls.unqualifiedName(), "' already has a ",
               slotKindName(cls.attributeKind(*slot)), " '", name, "'");
  } else {
    cls.addAttribute(name, module.type(), SlotKind::Module);
  }
  setattr(name, module.toIValue());
}

void Module::collectTensors(SlotKind kind, bool recurse, const std::string& prefix,
                            std::vector<NamedTensor>& out) const {
  const ClassType& cls = *type();
  for (size_t i = 0; i < cls.numAttributes(); ++i) {
    const IValue& v = _ivalue()->slot(i);
    if (cls.attributeKind(i) == kind && v.isTensor()) out.push_back({prefix + cls.attributeName(i), v.toTensor()});
  }
  if (!recurse) return;
  for (const auto& [name, child] : named_children()) child.collectTensors(kind, true, prefix + name + ".", out);
}

std::vector<NamedTensor> Module::named_parameters(bool recurse) const {
  std::vector<NamedTensor> out;
  collectTensors(SlotKind::Parameter, recurse, "", out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& p : named_parameters(recurse)) out.push_back(p.value);
  return out;
}

std::vector<NamedTensor> Module::named_buffers(bool recurse) const {
  std::vector<NamedTensor> out;
  collectTensors(SlotKind::Buffer, recurse, "", out);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& b : named_buffers(recurse)) out.push_back(b.value);
  return out;
}

std::vector<std::pair<std::string, Module>> Module::named_children() const {
  std::vector<std::pair<std::string, Module>> out;
  const ClassType& cls = *type();
  for (size_t i = 0; i < cls.numAttributes(); ++i) {
    const IValue& v = _ivalue()->slot(i);
    if (cls.attributeKind(i) == SlotKind::Module && v.isObject())
      out.emplace_back(cls.attributeName(i), Module(v.toObject()));
  }
  return out;
}

std::vector<Module> Module::children() const {
  std::vector<Module> out;
  for (auto& [name, m] : named_children()) out.push_back(m);
  return out;
}

std::vector<std::pair<std::string, Module>> Module::named_modules() const {
  std::vector<std::pair<std::string, Module>> out = {{"", *this}};
  for (const auto& [name, child] : named_children()) {
    for (auto& [sub_name, sub] : child.named_modules())
      out.emplace_back(sub_name.empty() ? name : name + "." + sub_name, sub);
  }
  return out;
}

void Module::train(bool on) {
  if (type()->hasAttribute("training")) setattr("training", IValue(on));
  for (auto& [name, child] : named_children()) child.train(on);
}

bool Module::is_training() const {
  IValue t = attr("training", IValue(true));
  return t.isBool() ? t.toBool() : true;
}

}  // namespace kiln
