// declareInterfaceMethods (class_definition.h): kept out of
// class_definition.cpp, where its inlining makes g++ 12 warn falsely
// (-Wuse-after-free) about the NamedTuple field parser.
#include "kiln/frontend/class_definition.h"
#include "kiln/frontend/error_report.h"

namespace kiln {

void declareInterfaceMethods(const ClassDef& def, const std::shared_ptr<InterfaceType>& iface,
                             const std::function<TypePtr(const Expr&)>& parse_type,
                             const std::function<IValue(const Expr&)>& default_value, const TypePtr& default_return) {
  for (Stmt stmt : def.body()) {
    if (stmt.kind() != TK_DEF) {
      if (isIgnoredClassStatement(stmt)) continue;
      throwSourceError(stmt.range(), "interfaces declare methods only: expected def in the body of interface '" +
                                         def.name().name() + "'");
    }
    Def method(stmt.tree());
    Decl decl = method.decl();
    std::vector<Argument> arguments;
    for (Param param : decl.params()) {
      Argument arg;
      arg.name = param.ident().name();
      if (arguments.empty()) {
        arg.type = iface;
      } else {
        arg.type = param.type().present() ? parse_type(param.type().get()) : TensorType::get();
      }
      arg.kwarg_only = param.kwargOnly();
      if (default_value && param.defaultValue().present())
        arg.default_value = default_value(param.defaultValue().get());
      arguments.push_back(std::move(arg));
    }
    if (arguments.empty()) throwSourceError(method.range(), "methods must have a self argument");
    Argument ret;
    ret.type = decl.returnType().present() ? parse_type(decl.returnType().get()) : default_return;
    const std::string& name = method.name().name();
    if (iface->findMethod(name)) throwSourceError(method.name().range(), "method '" + name + "' is already declared");
    iface->addMethodSchema(FunctionSchema(name, "", std::move(arguments), {ret}));
  }
}

}  // namespace kiln
