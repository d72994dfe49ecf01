#pragma once
// Types written as expressions in TorchScript source: annotations
// (`x: List[int]`, `-> Optional[Tensor]`, quoted `'Dict[str, int]'`), the
// first argument of torch.jit.annotate and the classes of isinstance.
// Errors are TorchScript's ("Unknown type name 'Foo'", "Expression of type
// const cannot be used in a type expression") at the expression's position.
#include <functional>
#include <string>

#include "kiln/core/type.h"
#include "kiln/frontend/tree_views.h"

namespace kiln {

// Finds a class type by the name an annotation uses (`Foo`); null when
// there is none.
using ClassLookup = std::function<TypePtr(const std::string& name, const SourceRange& loc)>;

TypePtr typeFromExpr(const Expr& e, const ClassLookup& lookup_class = nullptr);

}  // namespace kiln
