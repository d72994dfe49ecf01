#pragma once
// Complex tensors (complex64, complex128): the operations that are specific to
// them. Arithmetic, comparisons, the transcendental functions, copies and
// conversions take complex inputs in their own kernels.
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/tensor.h"

namespace kiln {

// Views of the real and imaginary parts (float32 for complex64): they share
// storage with `t`. `real` of a real tensor is the tensor itself; `imag` of a
// real tensor raises, as in PyTorch.
Tensor real(const Tensor& t);
Tensor imag(const Tensor& t);
// `t` as a real tensor with a last dimension of 2 (real, imaginary), a view.
Tensor viewAsReal(const Tensor& t);
// The inverse of viewAsReal: the last dimension must be 2 with stride 1.
Tensor viewAsComplex(const Tensor& t);
// The conjugate (a copy; kiln has no lazy conjugate bit). Real tensors are returned as they are.
Tensor conj(const Tensor& t);
// |z| and arg(z) of a complex tensor, in its real dtype.
Tensor complexAbs(const Tensor& t);
Tensor complexAngle(const Tensor& t);
// real + i imag and abs * (cos(angle) + i sin(angle)), from float or double tensors of one dtype.
Tensor complexFromParts(const Tensor& real, const Tensor& imag);
Tensor polar(const Tensor& abs, const Tensor& angle);
// A transcendental function of a complex tensor by its aten name ("exp", "log", "sqrt", "sin", ...);
// raises for names it does not know.
Tensor complexUnary(const char* name, const Tensor& t);
// Whether complexUnary knows `name`.
bool isComplexUnary(const char* name);
// Runs the function `name` over a built iterator whose compute dtype is complex.
void complexUnaryKernel(TensorIter& iter, const char* name);

}  // namespace kiln
