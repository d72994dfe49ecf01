#pragma once
// The operator registry: every operator is a schema plus an Operation that
// pops its arguments from a Stack and pushes its results. Operators register
// at static initialization (see op_registration.h) or at run time (a shared
// library loaded later); lookups are by symbol.
//
// A few operators need their node to know what to do (how many values
// prim::ListUnpack produces, which slot prim::GetAttr reads, how many
// arguments a vararg aten::format takes). They register an OperationCreator,
// which the interpreter calls once per node when it builds its code. Nodes
// that have no schema at all in PyTorch (prim::TupleConstruct, prim::GetAttr,
// ...) register a creator under their kind alone.
#include <functional>
#include <memory>
#include <vector>

#include "kiln/core/function_schema.h"

namespace kiln {

class Node;
struct OpDescription;  // kiln/core/op_description.h

using Operation = std::function<void(Stack&)>;
using OperationCreator = std::function<Operation(const Node&)>;

// Who sees an operator: the tensor library's operators are also `kiln.*`
// functions and Tensor methods; TorchScript's own builtins (list, dict and
// string methods, number conversions) are reached from graphs only, as in
// PyTorch.
enum class OpExposure { Library, ScriptOnly };

class Operator {
 public:
  Operator(FunctionSchema schema, Operation op, OpExposure exposure = OpExposure::Library,
           std::shared_ptr<const OpDescription> description = nullptr);
  Operator(FunctionSchema schema, OperationCreator creator, OpExposure exposure = OpExposure::Library,
           std::shared_ptr<const OpDescription> description = nullptr);
  const FunctionSchema& schema() const { return schema_; }
  Symbol symbol() const { return symbol_; }
  OpExposure exposure() const { return exposure_; }
  // True when the operation depends on the node (see operationFor).
  bool isNodeDependent() const { return creator_ != nullptr; }
  // The operation of a node-independent operator.
  const Operation& operation() const;
  // The operation for one node: the creator's result, or operation().
  Operation operationFor(const Node& node) const;
  // What else kiln knows of the operator (an empty description when it was
  // declared with none); include kiln/core/op_description.h to read it.
  const OpDescription& description() const;

 private:
  FunctionSchema schema_;
  Operation op_;
  OperationCreator creator_;
  Symbol symbol_;
  OpExposure exposure_;
  std::shared_ptr<const OpDescription> description_;
};

using OperatorPtr = std::shared_ptr<const Operator>;

// Adds an operator; an identical schema registered twice is an error.
OperatorPtr registerOperator(FunctionSchema schema, Operation op, OpExposure exposure = OpExposure::Library,
                             std::shared_ptr<const OpDescription> description = nullptr);
OperatorPtr registerOperator(FunctionSchema schema, OperationCreator creator, OpExposure exposure = OpExposure::Library,
                             std::shared_ptr<const OpDescription> description = nullptr);
// All overloads of a symbol, in registration order (empty when unknown).
std::vector<OperatorPtr> getAllOperatorsFor(Symbol name);
// Grows with every registration: caches of the registry compare it to know they are current.
uint64_t operatorRegistryVersion();
// A node-dependent operation for a kind that has no schema.
void registerNodeOperation(Symbol kind, OperationCreator creator);
// The creator registered for a schema-less kind, or null.
const OperationCreator* findNodeOperation(Symbol kind);
// Every registered operator.
std::vector<OperatorPtr> getAllOperators();
// The operator with this exact name and overload name, or null.
OperatorPtr findOperator(Symbol name, std::string_view overload_name);

}  // namespace kiln
