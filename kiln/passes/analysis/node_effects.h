#pragma once
// What passes need to know about a node or value, besides aliasing (see
// alias_analysis.h), before they may delete, fold, merge or move it: whether
// a type can be mutated in place, whether a node has effects beyond its
// outputs, whether it is random, whether two constants are equal.
#include "kiln/ir/graph.h"

namespace kiln {

// Tensors, lists, dicts, objects, Any, and tuples/optionals/unions/futures
// holding one of those (PyTorch's AliasDb::isMutableType).
bool isMutableType(const Type& type);
bool isMutableType(const Value* v);

// Prints, raises, warns, calls, attribute writes, fork/wait, with-blocks:
// nodes that must run even when nothing uses their outputs.
bool hasSideEffects(const Node* n);

// Random ops: two runs may differ, so they are never folded or merged.
bool isNondeterministic(const Node* n);

// Whether two prim::Constant values hold the same value of the same type
// (floats compared with their sign, so -0.0 and 0.0 stay apart).
bool sameConstant(const Value* a, const Value* b);

}  // namespace kiln
