#pragma once
// TorchScript helpers that the operators' derivative formulas (kiln/ops/*.cpp)
// call by name, as derivatives.yaml's formulas call FunctionsManual.cpp: the
// pieces several formulas share (a reduction's gradient restored to the
// input's shape, var's and prod's gradients...). Compiled with every formula
// and inlined into its backward graph.

namespace kiln::autograd {

// The helpers' source (TorchScript defs).
const char* formulaPrelude();
// The linear algebra formulas' helpers (formula_prelude_linalg.cpp).
const char* linalgFormulaPrelude();

}  // namespace kiln::autograd
