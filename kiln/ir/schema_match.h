#pragma once
// Matching values' types against schema types with type variables
// (`t[] self, t el`), as node overload resolution and Graph::insert do. The
// matching itself lives with the argument binder in core: TypeEnv,
// matchTypeVariables and evalTypeVariables come from there.
#include "kiln/core/argument_binder.h"
