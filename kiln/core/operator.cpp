#include "kiln/core/operator.h"

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace kiln {

Operator::Operator(FunctionSchema schema, Operation op)
    : schema_(std::move(schema)), op_(std::move(op)), symbol_(Symbol::fromQualString(schema_.name())) {}

namespace {

struct Registry {
  std::shared_mutex mutex;
  std::unordered_map<Symbol, std::vector<OperatorPtr>> by_symbol;
  std::vector<OperatorPtr> all;
};

Registry& registry() {
  static Registry* r = new Registry();  // outlives static destructors of other libraries
  return *r;
}

}  // namespace

OperatorPtr registerOperator(FunctionSchema schema, Operation op) {
  auto entry = std::make_shared<const Operator>(std::move(schema), std::move(op));
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto& overloads = r.by_symbol[entry->symbol()];
  for (const auto& existing : overloads) {
    KILN_CHECK(existing->schema().overloadName() != entry->schema().overloadName(),
               "operator ", entry->schema(), " is already registered");
  }
  overloads.push_back(entry);
  r.all.push_back(entry);
  return entry;
}

std::vector<OperatorPtr> getAllOperatorsFor(Symbol name) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.by_symbol.find(name);
  return it == r.by_symbol.end() ? std::vector<OperatorPtr>{} : it->second;
}

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
