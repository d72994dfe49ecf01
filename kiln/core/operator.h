#pragma once
// The operator registry: every operator is a schema plus an Operation that
// pops its arguments from a Stack and pushes its results. Operators register
// at static initialization (see op_registration.h) or at run time (a shared
// library loaded later); lookups are by symbol.
#include <functional>
#include <memory>
#include <vector>

#include "kiln/core/function_schema.h"

namespace kiln {

using Operation = std::function<void(Stack&)>;

class Operator {
 public:
  Operator(FunctionSchema schema, Operation op);
  const FunctionSchema& schema() const { return schema_; }
  const Operation& operation() const { return op_; }
  Symbol symbol() const { return symbol_; }

 private:
  FunctionSchema schema_;
  Operation op_;
  Symbol symbol_;
};

using OperatorPtr = std::shared_ptr<const Operator>;

// Adds an operator; an identical schema registered twice is an error.
OperatorPtr registerOperator(FunctionSchema schema, Operation op);
// All overloads of a symbol, in registration order (empty when unknown).
std::vector<OperatorPtr> getAllOperatorsFor(Symbol name);
// Every registered operator.
std::vector<OperatorPtr> getAllOperators();
// The operator with this exact name and overload name, or null.
OperatorPtr findOperator(Symbol name, std::string_view overload_name);

}  // namespace kiln
