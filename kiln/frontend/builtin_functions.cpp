#include "kiln/frontend/builtin_functions.h"

#include <map>
#include <mutex>
#include <string>

#include "kiln/frontend/ir_emitter.h"
#include "kiln/frontend/parser.h"
#include "kiln/ir/graph.h"

namespace kiln {

namespace {

// The sources, as in TorchScript 1.13 (${Scalar} stands for int, float and complex).
const char* const kScalarFirstOps = R"(
def mul(a : ${Scalar}, b : Tensor) -> Tensor:
  return b * a
def add(a : ${Scalar}, b : Tensor) -> Tensor:
  return b + a
def ne(a : ${Scalar}, b : Tensor) -> Tensor:
  return b != a
def eq(a : ${Scalar}, b : Tensor) -> Tensor:
  return b == a
def sub(a : ${Scalar}, b : Tensor) -> Tensor:
  return torch.neg(b) + a
def div(a : ${Scalar}, b : Tensor) -> Tensor:
  return torch.reciprocal(b) * a
)";

// Ordering has no complex form.
const char* const kScalarFirstOrderings = R"(
def lt(a : ${Scalar}, b : Tensor) -> Tensor:
  return b > a
def le(a : ${Scalar}, b : Tensor) -> Tensor:
  return b >= a
def gt(a : ${Scalar}, b : Tensor) -> Tensor:
  return b < a
def ge(a : ${Scalar}, b : Tensor) -> Tensor:
  return b <= a
)";

const char* const kTensorFloordiv = R"(
def floordiv(self : Tensor, other : ${Rhs}) -> Tensor:
  return torch.floor_divide(self, other)
)";

std::string substitute(std::string text, const std::string& key, const std::string& value) {
  for (size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, key.size(), value);
  return text;
}

// Compiling the builtins emits calls, which must not look for builtins.
thread_local bool compiling_builtins = false;

class Function0 : public Function {
 public:
  Function0(std::string name, FunctionSchema schema) : name_(std::move(name)), schema_(std::move(schema)) {}
  const std::string& name() const override { return name_; }
  const FunctionSchema& getSchema() const override { return schema_; }
  void run(Stack&) override { KILN_INTERNAL_ASSERT(false, "builtin functions are inlined, never run"); }

 private:
  std::string name_;
  FunctionSchema schema_;
};

std::map<Symbol, std::vector<ScriptBuiltin>> compileBuiltins() {
  std::map<Symbol, std::vector<ScriptBuiltin>> out;
  std::vector<std::string> sources;
  for (const char* scalar : {"int", "float", "complex"}) {
    sources.push_back(substitute(kScalarFirstOps, "${Scalar}", scalar));
  }
  for (const char* scalar : {"int", "float"}) sources.push_back(substitute(kScalarFirstOrderings, "${Scalar}", scalar));
  for (const char* rhs : {"number", "Tensor"}) sources.push_back(substitute(kTensorFloordiv, "${Rhs}", rhs));
  compiling_builtins = true;
  for (const std::string& source : sources) {
    // One def at a time: the same name has several overloads.
    for (const TreeRef& def : parseSource(source, "<builtins>")) {
      CompilationTarget target;
      target.find = [](const std::string&) -> std::shared_ptr<Function> { return nullptr; };
      target.define = [&](const std::string& name, std::shared_ptr<Graph> graph, FunctionSchema schema) {
        FunctionSchema qualified("aten::" + name, "", schema.arguments(), schema.returns());
        out[Symbol::aten(name)].push_back(ScriptBuiltin{qualified, graph});
        return std::make_shared<Function0>(name, std::move(schema));
      };
      defineFunctions({def}, nullptr, target);
    }
  }
  compiling_builtins = false;
  return out;
}

}  // namespace

const std::vector<ScriptBuiltin>& scriptBuiltinsFor(Symbol name) {
  static const std::vector<ScriptBuiltin> none;
  if (compiling_builtins) return none;
  static const std::map<Symbol, std::vector<ScriptBuiltin>> builtins = compileBuiltins();
  auto it = builtins.find(name);
  return it == builtins.end() ? none : it->second;
}

}  // namespace kiln
