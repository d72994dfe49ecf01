#include "kiln/runtime/function.h"

#include <sstream>

#include "kiln/core/dispatch_hook.h"
#include "kiln/core/interface_type.h"
#include "kiln/ir/graph.h"

namespace kiln {

namespace {

FunctionSchema schemaFromGraph(const std::string& name, const Graph& graph) {
  std::vector<Argument> arguments;
  for (const Value* v : graph.inputs()) {
    Argument a;
    a.name = v->hasDebugName() ? v->debugNameBase() : "arg" + std::to_string(arguments.size());
    a.type = v->type();
    arguments.push_back(std::move(a));
  }
  std::vector<Argument> returns;
  for (const Value* v : graph.outputs()) {
    Argument r;
    r.type = v->type();
    returns.push_back(std::move(r));
  }
  return FunctionSchema(name, "", std::move(arguments), std::move(returns));
}

// Cheap checks for the common types; the general subtype test otherwise.
bool fitsType(const IValue& v, const TypePtr& type) {
  switch (type->kind()) {
    case TypeKind::Tensor: return v.isTensor();
    case TypeKind::Int: return v.isInt();
    case TypeKind::Float: return v.isDouble();
    case TypeKind::Bool: return v.isBool();
    case TypeKind::String: return v.isString();
    case TypeKind::Any: return true;
    case TypeKind::Optional: return v.isNone() || fitsType(v, type->cast<OptionalType>()->elementType());
    case TypeKind::List:
      // An empty list fits any list type.
      if (v.isList() && v.toListRef().elements.empty()) return true;
      break;
    case TypeKind::Dict:
      if (v.isDict() && v.toDictRef().empty()) return true;
      break;
    default: break;
  }
  return v.type()->isSubtypeOf(*type);
}

}  // namespace

GraphFunction::GraphFunction(std::string name, std::shared_ptr<Graph> graph, FunctionResolver resolver,
                             std::optional<FunctionSchema> schema, bool check_graph)
    : name_(std::move(name)), graph_(std::move(graph)),
      schema_(schema ? std::move(schema) : schemaFromGraph(name_, *graph_)),
      executor_(graph_, name_, std::move(resolver)) {
  // Graphs may come from IR text, which is not linted when parsed: a broken
  // graph is an error here, before anything runs.
  if (check_graph) graph_->lint();
  KILN_CHECK(schema_->arguments().size() == graph_->inputs().size(), "function ", name_, ": the schema has ",
             schema_->arguments().size(), " arguments but the graph has ", graph_->inputs().size(), " inputs");
}

GraphFunction::~GraphFunction() = default;

void GraphFunction::checkInputs(const Stack& stack) const {
  const auto& args = schema_->arguments();
  KILN_CHECK(stack.size() == args.size(), name_, "() expected ", args.size(), " argument", args.size() == 1 ? "" : "s",
             " but ", stack.size(), (stack.size() == 1 ? " was" : " were"), " given.", "\nDeclaration: ", *schema_);
  for (size_t i = 0; i < args.size(); ++i) {
    if (!fitsType(stack[i], args[i].type)) {
      std::ostringstream value;
      value << stack[i];
      throwTypeMismatch(i, stack[i].type()->str(), value.str());
    }
  }
}

void GraphFunction::checkPositionalCount(size_t count) const {
  size_t n = schema_->arguments().size();
  KILN_CHECK(count <= n, name_, "() expected at most ", n, " argument", n == 1 ? "" : "s", " but received ", count,
             " argument", count == 1 ? "" : "s", ".\nDeclaration: ", *schema_);
}

size_t GraphFunction::keywordIndex(std::string_view name) const {
  auto index = schema_->argumentIndex(name);
  KILN_CHECK(index, name_, "() got an unexpected keyword argument '", name, "'.\nDeclaration: ", *schema_);
  return *index;
}

void GraphFunction::throwTypeMismatch(size_t position, const std::string& actual_type, const std::string& value) const {
  const Argument& formal = schema_->arguments()[position];
  KILN_ERROR(name_, "() Expected a value of type '", formal.type->annotationStr(), "' for argument '", formal.name,
             "' but instead found type '", actual_type, "'.\nPosition: ", position, "\nValue: ", value,
             "\nDeclaration: ", *schema_);
}

void GraphFunction::run(Stack& stack) {
  // An eager call while a hook (the tracer) watches this thread: it decides.
  if (DispatchHook* hook = dispatchHook()) return hook->runFunction(*this, stack);
  checkInputs(stack);
  executor_.run(stack);
}

IntrusivePtr<FutureObj> GraphFunction::runAsync(Stack& stack) {
  checkInputs(stack);
  return executor_.runAsync(stack);
}

IValue GraphFunction::operator()(Stack args, const Kwargs& kwargs) {
  args = bindArguments(std::move(args), kwargs);
  run(args);
  KILN_INTERNAL_ASSERT(!args.empty() || graph_->outputs().empty(), "a function returned nothing");
  if (args.size() == 1) return std::move(args[0]);
  return IValue::tuple(std::move(args));
}

Stack GraphFunction::bindArguments(Stack args, const Kwargs& kwargs) const {
  const auto& formals = schema_->arguments();
  checkPositionalCount(args.size());
  std::vector<bool> given(formals.size(), false);
  for (size_t i = 0; i < args.size(); ++i) given[i] = true;
  args.resize(formals.size());
  for (const auto& [key, value] : kwargs) {
    size_t index = keywordIndex(key);
    KILN_CHECK(!given[index], name_, "() got multiple values for argument '", key, "'.\nDeclaration: ", *schema_);
    args[index] = value;
    given[index] = true;
  }
  for (size_t i = 0; i < formals.size(); ++i) {
    if (given[i]) continue;
    KILN_CHECK(formals[i].default_value, name_, "() is missing value for argument '", formals[i].name,
               "'.\nDeclaration: ", *schema_);
    args[i] = *formals[i].default_value;
  }
  return args;
}

CompilationUnit::CompilationUnit() = default;
CompilationUnit::~CompilationUnit() {
  // Types may outlive the unit (graphs elsewhere name them): they must not
  // name methods that are gone.
  for (const OwnedMethod& m : methods_) {
    if (ClassTypePtr cls = m.owner.lock()) cls->removeMethod(m.function.get());
  }
  for (const ClassTypePtr& cls : classes_) {
    if (auto* iface = dynamic_cast<InterfaceType*>(cls.get())) iface->releaseMethods();
  }
}

void CompilationUnit::registerClass(const std::shared_ptr<CompilationUnit>& self, const ClassTypePtr& cls) {
  KILN_CHECK(self, "registerClass needs the unit as a shared pointer");
  for (const ClassTypePtr& c : self->classes_) {
    if (c == cls) return;
  }
  cls->setCompilationUnit(self);
  self->classes_.push_back(cls);
}

ClassTypePtr CompilationUnit::findClass(std::string_view qualified_name) const {
  for (const ClassTypePtr& c : classes_) {
    if (c->name() == qualified_name) return c;
  }
  return nullptr;
}

GraphFunction& CompilationUnit::createMethod(const ClassTypePtr& cls, const std::string& name,
                                             std::shared_ptr<Graph> graph, std::optional<FunctionSchema> schema,
                                             bool check_graph) {
  KILN_CHECK(!cls->findMethod(name), "class '", cls->name(), "' already has a method '", name, "'");
  // A derived schema is named after the method (`forward(...)`), as compiled ones are.
  if (!schema) schema = schemaFromGraph(name, *graph);
  auto function = std::make_shared<GraphFunction>(cls->name() + "." + name, std::move(graph), resolver(),
                                                  std::move(schema), check_graph);
  methods_.push_back({cls, function});
  cls->addMethod(function.get());
  return *function;
}

std::shared_ptr<GraphFunction> CompilationUnit::findMethodShared(const Function* method) const {
  for (const OwnedMethod& m : methods_) {
    if (m.function.get() == method) return m.function;
  }
  return nullptr;
}

GraphFunction& CompilationUnit::createFunction(std::string name, std::shared_ptr<Graph> graph,
                                               std::optional<FunctionSchema> schema, bool check_graph) {
  KILN_CHECK(!by_name_.count(name), "the compilation unit already has a function named '", name, "'");
  functions_.push_back(
      std::make_shared<GraphFunction>(name, std::move(graph), resolver(), std::move(schema), check_graph));
  GraphFunction& f = *functions_.back();
  by_name_.emplace(std::move(name), &f);
  return f;
}

GraphFunction* CompilationUnit::findFunction(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::shared_ptr<GraphFunction> CompilationUnit::findFunctionShared(std::string_view name) const {
  for (const auto& f : functions_) {
    if (f->name() == name) return f;
  }
  return nullptr;
}

GraphFunction& CompilationUnit::getFunction(std::string_view name) const {
  GraphFunction* f = findFunction(name);
  KILN_CHECK(f, "no function named '", name, "' in the compilation unit");
  return *f;
}

std::vector<GraphFunction*> CompilationUnit::functions() const {
  std::vector<GraphFunction*> out;
  for (const auto& f : functions_) out.push_back(f.get());
  return out;
}

FunctionResolver CompilationUnit::resolver() const {
  return [this](const Node& constant) -> Function* {
    const std::string& name = constant.s(attr::name);
    if (GraphFunction* f = findFunction(name)) return f;
    // Graphs name callees by their qualified name (`__torch__.helper`).
    auto dot = name.rfind('.');
    return dot == std::string::npos ? nullptr : findFunction(std::string_view(name).substr(dot + 1));
  };
}

}  // namespace kiln
