#pragma once
// TorchScript helpers that the operators' derivative formulas (kiln/ops/*.cpp)
// call by name, as derivatives.yaml's formulas call FunctionsManual.cpp: the
// pieces several formulas share (a reduction's gradient restored to the
// input's shape, var's and prod's gradients...). Compiled with every formula
// and inlined into its backward graph.

namespace kiln::autograd {

// The helpers' source (TorchScript defs).
const char* formulaPrelude();

}  // namespace kiln::autograd
