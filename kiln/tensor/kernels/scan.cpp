// cumsum and cumprod. The input (converted to the result dtype, as PyTorch
// does) is walked as [outer, n, inner]: a running accumulator per inner
// column, updated row by row, so a scan along an outer dim is vectorized across
// the columns. Floats accumulate in double and integers in int64, PyTorch's
// accumulation types on CPU.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/reduce_utils.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/reduce.h"

namespace kiln {
namespace {

constexpr int64_t kColumnBlock = 256;  // columns scanned together

template <typename T>
using ScanAcc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <bool kProd, typename A, typename T>
void accumulate(A& acc, T x) {
  if constexpr (kProd) {
    acc *= static_cast<A>(x);
  } else {
    acc += static_cast<A>(x);
  }
}

// Scans `width` adjacent columns of n rows, `stride` apart.
template <bool kProd, typename T>
void scanBlock(const T* x, T* y, int64_t n, int64_t stride, int64_t width) {
  using A = ScanAcc<T>;
  if (width == 1) {  // a scan along the last dim: keep the accumulator in a register
    A acc(kProd ? 1 : 0);
    for (int64_t i = 0; i < n; ++i) {
      accumulate<kProd>(acc, x[i * stride]);
      y[i * stride] = static_cast<T>(acc);
    }
    return;
  }
  A acc[kColumnBlock];
  std::fill(acc, acc + width, A(kProd ? 1 : 0));
  for (int64_t i = 0; i < n; ++i) {
    const T* xi = x + i * stride;
    T* yi = y + i * stride;
    for (int64_t j = 0; j < width; ++j) {
      accumulate<kProd>(acc[j], xi[j]);
      yi[j] = static_cast<T>(acc[j]);
    }
  }
}

template <bool kProd>
Tensor scan(const char* op, const Tensor& self, int64_t dim, OptionalDtype dtype, const Tensor* out) {
  const int64_t d = wrapDim(dim, self.dim());
  const ScalarType natural = isIntegralType(self.dtype(), true) ? ScalarType::Long : self.dtype();
  const Tensor in = contiguous(to(self, detail::reductionDtype(dtype, out, natural)));
  Tensor result = empty(in.sizes(), in.dtype());
  if (in.numel() == 0) return result;
  // PyTorch's CPU scan kernels have no bool version; a 0-dim input is copied, not scanned.
  KILN_CHECK(in.dtype() != ScalarType::Bool || in.dim() == 0, "\"", op, "_out_cpu\" not implemented for 'Bool'");
  const int64_t n = in.dim() == 0 ? 1 : in.sizes()[d];
  int64_t inner = 1;
  for (int64_t k = d + 1; k < in.dim(); ++k) inner *= in.sizes()[k];
  const int64_t outer = in.numel() / (n * inner);
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(in.dtype(), op, [&] {
    using T = scalar_t;
    const T* x = in.data<T>();
    T* y = result.data<T>();
    const int64_t task_elems = n * std::min(inner, kColumnBlock);
    parallelFor(0, outer * blocks, std::max<int64_t>(1, kGrainSize / task_elems), [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t start = t / blocks * n * inner + t % blocks * kColumnBlock;
        const int64_t width = std::min(kColumnBlock, inner - t % blocks * kColumnBlock);
        scanBlock<kProd>(x + start, y + start, n, inner, width);
      }
    });
  });
  return result;
}

}  // namespace

Tensor cumsum(const Tensor& self, int64_t dim, OptionalDtype dtype) {
  return scan<false>("cumsum", self, dim, dtype, nullptr);
}

Tensor cumprod(const Tensor& self, int64_t dim, OptionalDtype dtype) {
  return scan<true>("cumprod", self, dim, dtype, nullptr);
}

Tensor& cumsumOut(const Tensor& self, int64_t dim, OptionalDtype dtype, Tensor& out) {
  return detail::assignOut(out, scan<false>("cumsum", self, dim, dtype, &out));
}

Tensor& cumprodOut(const Tensor& self, int64_t dim, OptionalDtype dtype, Tensor& out) {
  return detail::assignOut(out, scan<true>("cumprod", self, dim, dtype, &out));
}

}  // namespace kiln
