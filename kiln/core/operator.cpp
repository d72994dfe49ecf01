#include "kiln/core/operator.h"

#include <atomic>

#include "kiln/core/op_description.h"

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace kiln {

namespace {

void bumpVersion(const IValue& v) {
  if (v.isTensor()) {
    const Tensor& t = v.toTensor();
    if (t.defined()) t.storage()->bumpVersion();
  } else if (v.isList()) {
    for (const IValue& e : v.toListRef().elements) bumpVersion(e);
  }
}

// The one place where in-place writes are counted (Storage::version): an
// operator whose schema marks arguments written (`Tensor(a!)`, out=) bumps
// their version after it ran, whoever calls it (eager calls, the
// interpreter), so that autograd can tell a saved tensor was modified.
Operation countWrites(const FunctionSchema& schema, Operation op) {
  if (schema.isVararg()) return op;
  std::vector<size_t> written;
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].isOutOrInPlace()) continue;
    // `Tensor[](a!)` (aten::append) writes the list, not its tensors: only
    // `Tensor(a!)[]` changes the elements.
    if (args[i].type->kind() == TypeKind::List) {
      bool elements_written = false;
      for (const AliasInfo& e : args[i].alias_info->contained) elements_written |= e.is_write;
      elements_written |= args[i].type_text.find("!)[]") != std::string::npos;
      if (!elements_written) continue;
    }
    written.push_back(i);
  }
  if (written.empty()) return op;
  size_t n = args.size();
  return [op = std::move(op), written = std::move(written), n](Stack& stack) {
    if (stack.size() < n) return op(stack);
    // The results replace the arguments on the stack: keep the written ones.
    size_t base = stack.size() - n;
    if (written.size() == 1) {
      IValue target = stack[base + written[0]];
      op(stack);
      bumpVersion(target);
      return;
    }
    std::vector<IValue> targets;
    for (size_t i : written) targets.push_back(stack[base + i]);
    op(stack);
    for (const IValue& v : targets) bumpVersion(v);
  };
}

}  // namespace

Operator::Operator(FunctionSchema schema, Operation op, OpExposure exposure,
                   std::shared_ptr<const OpDescription> description)
    : schema_(std::move(schema)), op_(countWrites(schema_, std::move(op))),
      symbol_(Symbol::fromQualString(schema_.name())), exposure_(exposure), description_(std::move(description)) {}

Operator::Operator(FunctionSchema schema, OperationCreator creator, OpExposure exposure,
                   std::shared_ptr<const OpDescription> description)
    : schema_(std::move(schema)), creator_(std::move(creator)), symbol_(Symbol::fromQualString(schema_.name())),
      exposure_(exposure), description_(std::move(description)) {}

const OpDescription& Operator::description() const {
  static const OpDescription* none = new OpDescription();
  return description_ ? *description_ : *none;
}

const Operation& Operator::operation() const {
  KILN_INTERNAL_ASSERT(!creator_, "operator ", schema_, " needs its node to make an operation");
  return op_;
}

Operation Operator::operationFor(const Node& node) const { return creator_ ? creator_(node) : op_; }

namespace {

struct Registry {
  std::shared_mutex mutex;
  std::atomic<uint64_t> version{0};
  std::unordered_map<Symbol, std::vector<OperatorPtr>> by_symbol;
  std::vector<OperatorPtr> all;
  std::unordered_map<Symbol, OperationCreator> node_operations;
};

Registry& registry() {
  static Registry* r = new Registry();  // outlives static destructors of other libraries
  return *r;
}

}  // namespace

namespace {

OperatorPtr addOperator(OperatorPtr entry) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto& overloads = r.by_symbol[entry->symbol()];
  for (const auto& existing : overloads) {
    KILN_CHECK(existing->schema().overloadName() != entry->schema().overloadName(), "operator ", entry->schema(),
               " is already registered");
  }
  overloads.push_back(entry);
  r.all.push_back(entry);
  r.version.fetch_add(1, std::memory_order_release);
  return entry;
}

}  // namespace

OperatorPtr registerOperator(FunctionSchema schema, Operation op, OpExposure exposure,
                             std::shared_ptr<const OpDescription> description) {
  return addOperator(
      std::make_shared<const Operator>(std::move(schema), std::move(op), exposure, std::move(description)));
}

OperatorPtr registerOperator(FunctionSchema schema, OperationCreator creator, OpExposure exposure,
                             std::shared_ptr<const OpDescription> description) {
  return addOperator(
      std::make_shared<const Operator>(std::move(schema), std::move(creator), exposure, std::move(description)));
}

void registerNodeOperation(Symbol kind, OperationCreator creator) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  KILN_CHECK(r.node_operations.emplace(kind, std::move(creator)).second, "a node operation for ", kind,
             " is already registered");
}

const OperationCreator* findNodeOperation(Symbol kind) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.node_operations.find(kind);
  // Entries are never erased, so the pointer stays valid after the lock.
  return it == r.node_operations.end() ? nullptr : &it->second;
}

std::vector<OperatorPtr> getAllOperatorsFor(Symbol name) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.by_symbol.find(name);
  return it == r.by_symbol.end() ? std::vector<OperatorPtr>{} : it->second;
}

uint64_t operatorRegistryVersion() { return registry().version.load(std::memory_order_acquire); }

std::vector<OperatorPtr> getAllOperators() {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  return r.all;
}

OperatorPtr findOperator(Symbol name, std::string_view overload_name) {
  for (const auto& op : getAllOperatorsFor(name)) {
    if (op->schema().overloadName() == overload_name) return op;
  }
  return nullptr;
}

}  // namespace kiln
