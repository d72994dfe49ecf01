// Text form of a tensor, close to PyTorch's: tensor([[1., 2.], [3., 4.]]).
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/tensor.h"

namespace kiln {

namespace {

void printElement(std::ostream& out, const Tensor& t, const char* ptr) {
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(t.dtype(), "print", [&] {
    scalar_t v = *reinterpret_cast<const scalar_t*>(ptr);
    if constexpr (std::is_same_v<scalar_t, bool>) {
      out << (v ? "True" : "False");
    } else if constexpr (std::is_floating_point_v<scalar_t>) {
      if (std::isnan(v)) {
        out << "nan";
      } else if (std::isinf(v)) {
        out << (v > 0 ? "inf" : "-inf");
      } else if (v == std::floor(v) && std::fabs(v) < 1e16) {
        out << static_cast<int64_t>(v) << ".";
      } else {
        out << std::setprecision(4) << std::fixed << static_cast<double>(v) << std::defaultfloat;
      }
    } else {
      out << static_cast<int64_t>(v);
    }
  });
}

void printDim(std::ostream& out, const Tensor& t, const char* ptr, int64_t dim) {
  if (dim == t.dim()) {
    printElement(out, t, ptr);
    return;
  }
  out << "[";
  int64_t step = t.strides()[dim] * static_cast<int64_t>(t.itemsize());
  for (int64_t i = 0; i < t.sizes()[dim]; ++i) {
    if (i) out << (dim + 1 == t.dim() ? ", " : ",\n" + std::string(static_cast<size_t>(dim) + 8, ' '));
    printDim(out, t, ptr + i * step, dim + 1);
  }
  out << "]";
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  if (!t.defined()) return out << "tensor(undefined)";
  out << "tensor(";
  // float16 and bfloat16 have no arithmetic of their own: their values print through float32.
  bool reduced = t.dtype() == ScalarType::Half || t.dtype() == ScalarType::BFloat16;
  Tensor shown = reduced ? to(t, ScalarType::Float) : t;
  printDim(out, shown, static_cast<const char*>(shown.rawData()), 0);
  if (t.dtype() != ScalarType::Float && t.dtype() != ScalarType::Long && t.dtype() != ScalarType::Bool) {
    out << ", dtype=" << scalarTypeName(t.dtype());
  }
  return out << ")";
}

std::string Tensor::toString() const {
  std::ostringstream out;
  out << *this;
  return out.str();
}

}  // namespace kiln
