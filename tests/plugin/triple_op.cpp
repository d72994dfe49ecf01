// A shared library that adds an operator when it is loaded: the registry
// test dlopens it after kiln is already running.
#include "kiln/core/op_registration.h"
#include "kiln/tensor/pointwise.h"

namespace {

KILN_REGISTER_OPS(kiln::op("kiln_test::triple(Tensor self) -> Tensor",
                           [](const kiln::Tensor& self) { return kiln::add(kiln::add(self, self), self); }), );

}  // namespace
