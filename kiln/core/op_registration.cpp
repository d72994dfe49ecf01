#include "kiln/core/op_registration.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kiln {

RegisterOps::RegisterOps(std::initializer_list<OpDeclaration> declarations, OpExposure exposure) {
  for (const OpDeclaration& decl : declarations) {
    try {
      if (decl.creator && !std::strchr(decl.schema, '(')) {
        registerNodeOperation(Symbol::fromQualString(decl.schema), decl.creator);
        continue;
      }
      FunctionSchema schema = parseSchema(decl.schema);
      KILN_CHECK(decl.kernel_arity == static_cast<size_t>(-1) || decl.kernel_arity == schema.arguments().size(),
                 "the kernel takes ", decl.kernel_arity, " arguments but the schema has ", schema.arguments().size());
      if (decl.creator) {
        registerOperator(std::move(schema), decl.creator, exposure, decl.description);
      } else {
        registerOperator(std::move(schema), decl.operation, exposure, decl.description);
      }
    } catch (const std::exception& e) {
      // A bad declaration is a bug in kiln found at load time; say which one.
      std::fprintf(stderr, "kiln: cannot register operator '%s': %s\n", decl.schema, e.what());
      std::abort();
    }
  }
}

}  // namespace kiln
