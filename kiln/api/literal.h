#pragma once
// Python literals as IValues: how `kiln run` takes its arguments on the
// command line (`3`, `-1.5`, `True`, `None`, `'text'`, `[1, 2]`, `(1, 'a')`,
// `{'k': [1.0]}`).
#include <string>

#include "kiln/core/ivalue.h"
#include "kiln/core/type.h"

namespace kiln {

// The value of `text`, a literal (int, float, bool, None, str, and list,
// tuple and dict displays of literals; numbers may carry a sign), as an
// argument of `type` takes it: ints widen to floats where `type` wants a
// float, containers take `type`'s element types, and where `type` says
// nothing (Any, a type variable) the literal keeps its own type. Raises
// kiln::Error when `text` is not a literal or does not fit `type`.
IValue parseLiteral(const std::string& text, const TypePtr& type);

}  // namespace kiln
