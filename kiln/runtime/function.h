#pragma once
// GraphFunction: a TorchScript function made of a graph, run by its own
// GraphExecutor, and CompilationUnit, the namespace of functions that calls
// between them resolve in.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/function.h"
#include "kiln/runtime/graph_executor.h"

namespace kiln {

using Kwargs = std::vector<std::pair<std::string, IValue>>;

class GraphFunction : public Function {
 public:
  // Without a schema, one is derived from the graph: arguments named after
  // the inputs' debug names (`x.1` -> `x`) with their types, one return of
  // the output's type.
  // `check_graph` lints the graph first: graphs from IR text need it; the
  // compiler's own graphs are well formed by construction.
  GraphFunction(std::string name, std::shared_ptr<Graph> graph, FunctionResolver resolver = nullptr,
                std::optional<FunctionSchema> schema = std::nullopt, bool check_graph = true);
  ~GraphFunction() override;

  const std::string& name() const override { return name_; }
  const FunctionSchema& getSchema() const override { return *schema_; }
  const std::shared_ptr<Graph>& graph() const { return graph_; }
  std::shared_ptr<Graph> inlinableGraph() const override { return graph_; }
  GraphExecutor& executor() { return executor_; }

  // Runs with exactly the graph's inputs on the stack (checked against the
  // schema: count and types, with errors naming the argument).
  void run(Stack& stack) override;
  // Binds positional and keyword arguments to the schema (filling defaults),
  // checks them, runs, and returns the single result.
  IValue operator()(Stack args, const Kwargs& kwargs = {});
  // The full argument list of a call: positional and keyword arguments in
  // schema order, defaults filled in. Raises naming the argument when one
  // is missing, repeated or unknown (types are checked by run()).
  Stack bindArguments(Stack args, const Kwargs& kwargs = {}) const;
  // As run(), but may finish later on another thread (see GraphExecutor::runAsync).
  IntrusivePtr<FutureObj> runAsync(Stack& stack);

  // Raises kiln::Error naming the argument when `stack` does not fit the schema.
  void checkInputs(const Stack& stack) const;
  // The checks and messages of binding arguments, shared with the bindings
  // that convert arguments themselves: too many positional arguments, an
  // unknown keyword (else its position), a value of the wrong type.
  void checkPositionalCount(size_t count) const;
  size_t keywordIndex(std::string_view name) const;
  [[noreturn]] void throwTypeMismatch(size_t position, const std::string& actual_type, const std::string& value) const;

 private:
  std::string name_;
  std::shared_ptr<Graph> graph_;
  std::optional<FunctionSchema> schema_;
  GraphExecutor executor_;
};

class CompilationUnit {
 public:
  CompilationUnit();
  ~CompilationUnit();
  CompilationUnit(const CompilationUnit&) = delete;
  CompilationUnit& operator=(const CompilationUnit&) = delete;

  // Adds a function; its graph's calls (prim::CallFunction) resolve in this unit.
  GraphFunction& createFunction(std::string name, std::shared_ptr<Graph> graph,
                                std::optional<FunctionSchema> schema = std::nullopt, bool check_graph = true);
  GraphFunction* findFunction(std::string_view name) const;
  // The function as shared ownership (what bindings hand out); null when absent.
  std::shared_ptr<GraphFunction> findFunctionShared(std::string_view name) const;
  // Raises kiln::Error when there is no such function.
  GraphFunction& getFunction(std::string_view name) const;
  std::vector<GraphFunction*> functions() const;
  // Finds callees for Code: prim::Constant[name="f"] -> the unit's `f`.
  FunctionResolver resolver() const;

  // Classes: the unit holds them and owns their methods (named
  // `<class name>.<method>`, kept apart from the free functions).
  // `self` owns this unit: classes know it weakly, objects keep it alive.
  static void registerClass(const std::shared_ptr<CompilationUnit>& self, const ClassTypePtr& cls);
  ClassTypePtr findClass(std::string_view qualified_name) const;
  const std::vector<ClassTypePtr>& classes() const { return classes_; }
  // Adds a method to a class of this unit (replacing none: the name must be new).
  GraphFunction& createMethod(const ClassTypePtr& cls, const std::string& name, std::shared_ptr<Graph> graph,
                              std::optional<FunctionSchema> schema = std::nullopt, bool check_graph = true);
  std::shared_ptr<GraphFunction> findMethodShared(const Function* method) const;

 private:
  std::vector<std::shared_ptr<GraphFunction>> functions_;
  std::vector<ClassTypePtr> classes_;
  struct OwnedMethod {
    std::weak_ptr<ClassType> owner;
    std::shared_ptr<GraphFunction> function;
  };
  std::vector<OwnedMethod> methods_;
  std::map<std::string, GraphFunction*, std::less<>> by_name_;
};

}  // namespace kiln
