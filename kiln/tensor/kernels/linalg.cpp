// Matrix products: BLAS for float32/float64, loops for integer dtypes.
#include "kiln/tensor/linalg.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/kernels/loops.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/scalar_convert.h"

namespace kiln {

namespace {

// A strided matrix operand, strides in elements.
template <typename T>
struct Mat {
  const T* data;
  int64_t row_stride;
  int64_t col_stride;
};

// How BLAS can read a rows x cols matrix: row-major with leading dimension
// `ld` (no transpose), or column-major (transpose). Strides of size-1 dims
// do not matter; anything else (broadcast rows, gaps in both dims) cannot be
// described and the operand is copied first.
struct BlasLayout {
  bool ok = false;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int ld = 1;
};

BlasLayout blasLayout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  auto fits = [](int64_t v) { return v <= INT_MAX; };
  if (!fits(rows) || !fits(cols)) return {};
  if ((cols <= 1 || col_stride == 1) && (rows <= 1 || row_stride >= std::max<int64_t>(1, cols))) {
    int64_t ld = rows <= 1 ? std::max<int64_t>(1, cols) : row_stride;
    if (fits(ld)) return {true, CblasNoTrans, static_cast<int>(ld)};
  }
  if ((rows <= 1 || row_stride == 1) && (cols <= 1 || col_stride >= std::max<int64_t>(1, rows))) {
    int64_t ld = cols <= 1 ? std::max<int64_t>(1, rows) : col_stride;
    if (fits(ld)) return {true, CblasTrans, static_cast<int>(ld)};
  }
  return {};
}

// `t` unchanged when BLAS can read its last two dims (or its dtype does not
// use BLAS), else a contiguous copy. Call before broadcasting batch dims, so
// a broadcast operand is copied once, not once per batch.
Tensor blasReady(const Tensor& t) {
  if ((t.dtype() != ScalarType::Float && t.dtype() != ScalarType::Double) || t.dim() < 2) return t;
  if (blasLayout(t.size(-2), t.size(-1), t.stride(-2), t.stride(-1)).ok) return t;
  return contiguous(t);
}

// OpenBLAS keeps its own thread pool; follow kiln's thread setting so that
// set_num_threads(1) also means one BLAS thread.
void syncBlasThreads() {
  static std::atomic<int> current{0};
  const int wanted = getNumThreads();
  if (current.exchange(wanted) != wanted) openblas_set_num_threads(wanted);
}

// Which library runs a float GEMM. Debian's OpenBLAS 0.3.21 runs its AVX2
// (Haswell) kernel even on AVX-512 CPUs; oneDNN's JIT sgemm uses AVX-512
// there and measured about twice as fast on the products of a transformer
// layer or an LSTM step (64 x 256 by 256 x 768: 138 against 282 us), so
// with AVX-512 it takes every float GEMM. With AVX2 alone (AMD Zen 3, one
// thread, medians of 200) oneDNN still wins the small products, where
// OpenBLAS's packing of both operands at every call is a large part of the
// work (64 x 256 by 256 x 768: 276 against 332 us; 8 x 512 by 512 x 2048:
// 310 against 403), and loses the large ones (280 x 512 by 512 x 2048: 7.8
// against 7.0 ms; 35 x 512 by 512 x 5000: 4.8 against 4.3): there it takes
// products under kDnnlAvx2MaxWork multiply-adds. KILN_DNNL_GEMM=0 keeps
// OpenBLAS everywhere, =1 puts every float GEMM on oneDNN.
enum class DnnlGemmUse { Never, Small, Always };

DnnlGemmUse dnnlGemmUse() {
  static const DnnlGemmUse use = [] {
    const char* env = std::getenv("KILN_DNNL_GEMM");
    if (env && std::strcmp(env, "0") == 0) return DnnlGemmUse::Never;
    if (env && std::strcmp(env, "1") == 0) return DnnlGemmUse::Always;
    try {
      const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
      if (isa >= dnnl::cpu_isa::avx512_core) return DnnlGemmUse::Always;
      return isa >= dnnl::cpu_isa::avx2 ? DnnlGemmUse::Small : DnnlGemmUse::Never;
    } catch (const dnnl::error&) {
      return DnnlGemmUse::Never;
    }
  }();
  return use;
}

// Below about 16^3 multiply-adds oneDNN's call overhead outweighs its kernel.
constexpr int64_t kDnnlGemmMinWork = 8192;
constexpr int64_t kDnnlAvx2MaxWork = int64_t{1} << 25;

// oneDNN's sgemm, row-major like cblas_sgemm; false when it declines.
bool dnnlSgemm(const BlasLayout& la, const BlasLayout& lb, int n, int m, int k, float alpha, const float* a,
               const float* b, float beta, float* c, int ldc) {
  const int64_t work = static_cast<int64_t>(n) * m * k;
  const DnnlGemmUse use = dnnlGemmUse();
  if (use == DnnlGemmUse::Never || work < kDnnlGemmMinWork || (use == DnnlGemmUse::Small && work >= kDnnlAvx2MaxWork))
    return false;
  // oneDNN's OpenMP runtime reads the calling thread's setting: make it kiln's.
  const int threads = getNumThreads();
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
  return dnnl_sgemm(la.trans == CblasTrans ? 'T' : 'N', lb.trans == CblasTrans ? 'T' : 'N', n, m, k, alpha, a, la.ld, b,
                    lb.ld, beta, c, ldc) == dnnl_success;
}

// One BLAS call for c = beta * c + alpha * a @ b (float or double); a
// single row or column of output is a matrix-vector product, which gemv does
// several times faster than gemm.
template <typename T>
void blasGemm(int n, int m, int k, T alpha, Mat<T> a, Mat<T> b, T beta, T* c, int ldc) {
  const BlasLayout la = blasLayout(n, k, a.row_stride, a.col_stride);
  const BlasLayout lb = blasLayout(k, m, b.row_stride, b.col_stride);
  KILN_INTERNAL_ASSERT(la.ok && lb.ok, "gemm operands must be BLAS-ready");
  constexpr bool kFloat = std::is_same_v<T, float>;
  auto stride = [](int64_t s) { return static_cast<int>(std::max<int64_t>(s, 1)); };
  syncBlasThreads();
  if (m == 1 && b.row_stride <= INT_MAX) {
    // c (n) = a (n x k) @ b (k): gemv over a as stored (k x n when transposed).
    const bool trans = la.trans == CblasTrans;
    const int rows = trans ? k : n, cols = trans ? n : k;
    if constexpr (kFloat) {
      cblas_sgemv(CblasRowMajor, la.trans, rows, cols, alpha, a.data, la.ld, b.data, stride(b.row_stride), beta, c,
                  ldc);
    } else {
      cblas_dgemv(CblasRowMajor, la.trans, rows, cols, alpha, a.data, la.ld, b.data, stride(b.row_stride), beta, c,
                  ldc);
    }
    return;
  }
  if (n == 1 && a.col_stride <= INT_MAX) {
    // c (m) = b^T (m x k) @ a (k): gemv over b with the transpose flipped.
    const bool trans = lb.trans == CblasTrans;
    const int rows = trans ? m : k, cols = trans ? k : m;
    const CBLAS_TRANSPOSE flipped = trans ? CblasNoTrans : CblasTrans;
    if constexpr (kFloat) {
      cblas_sgemv(CblasRowMajor, flipped, rows, cols, alpha, b.data, lb.ld, a.data, stride(a.col_stride), beta, c, 1);
    } else {
      cblas_dgemv(CblasRowMajor, flipped, rows, cols, alpha, b.data, lb.ld, a.data, stride(a.col_stride), beta, c, 1);
    }
    return;
  }
  if constexpr (kFloat) {
    if (dnnlSgemm(la, lb, n, m, k, alpha, a.data, b.data, beta, c, ldc)) return;
    cblas_sgemm(CblasRowMajor, la.trans, lb.trans, n, m, k, alpha, a.data, la.ld, b.data, lb.ld, beta, c, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, la.trans, lb.trans, n, m, k, alpha, a.data, la.ld, b.data, lb.ld, beta, c, ldc);
  }
}

// The int64 product, in register tiles of kTile x kTile outputs: each step
// over k loads kTile values of a and of b for kTile^2 multiply-adds. (AVX2
// has no 64-bit multiply, so the row loop of rowGemm stays scalar there.)
template <typename T>
void tileGemm(int64_t n, int64_t m, int64_t k, T alpha, Mat<T> a, Mat<T> b, T beta, T* c, int64_t ldc) {
  constexpr int64_t kTile = 4;
  auto store = [&](T* out, T sum) {
    *out = beta == T(0) ? static_cast<T>(alpha * sum) : static_cast<T>(beta * *out + alpha * sum);
  };
  // One output element, for the edges that fill no whole tile.
  auto single = [&](int64_t i, int64_t j) {
    T sum = 0;
    for (int64_t p = 0; p < k; ++p) {
      sum = static_cast<T>(sum +
                           a.data[i * a.row_stride + p * a.col_stride] * b.data[p * b.row_stride + j * b.col_stride]);
    }
    store(c + i * ldc + j, sum);
  };
  const int64_t row_tiles = n / kTile, col_end = m / kTile * kTile;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, kTile * m * k));
  parallelFor(0, row_tiles + (n % kTile ? 1 : 0), grain, [&](int64_t begin, int64_t end) {
    for (int64_t tile = begin; tile < end; ++tile) {
      const int64_t i0 = tile * kTile;
      if (i0 + kTile > n) {
        for (int64_t i = i0; i < n; ++i)
          for (int64_t j = 0; j < m; ++j) single(i, j);
        continue;
      }
      for (int64_t j0 = 0; j0 < col_end; j0 += kTile) {
        T sum[kTile][kTile] = {};
        for (int64_t p = 0; p < k; ++p) {
          T av[kTile], bv[kTile];
          for (int64_t r = 0; r < kTile; ++r) av[r] = a.data[(i0 + r) * a.row_stride + p * a.col_stride];
          for (int64_t q = 0; q < kTile; ++q) bv[q] = b.data[p * b.row_stride + (j0 + q) * b.col_stride];
          for (int64_t r = 0; r < kTile; ++r)
            for (int64_t q = 0; q < kTile; ++q) sum[r][q] = static_cast<T>(sum[r][q] + av[r] * bv[q]);
        }
        for (int64_t r = 0; r < kTile; ++r)
          for (int64_t q = 0; q < kTile; ++q) store(c + (i0 + r) * ldc + j0 + q, sum[r][q]);
      }
      for (int64_t i = i0; i < i0 + kTile; ++i)
        for (int64_t j = col_end; j < m; ++j) single(i, j);
    }
  });
}

// The narrow integer products: blocks of rows accumulate a[i, p] * (row p
// of b), so each row of b is read once per block and the inner loop walks it
// in order and vectorizes. Sums are kept in an unsigned type of at least 16
// bits (AVX2 multiplies no bytes): integer results wrap, and wrapping sums
// agree with T's in T's bits.
template <typename T>
void rowGemm(int64_t n, int64_t m, int64_t k, T alpha, Mat<T> a, Mat<T> b, T beta, T* c, int64_t ldc) {
  using Acc = std::conditional_t<sizeof(T) == 1, uint16_t, std::make_unsigned_t<T>>;
  // The product in (at least) unsigned int, so it never overflows a signed int.
  auto mul = [](Acc x, Acc y) { return static_cast<Acc>(static_cast<uint32_t>(x) * y); };
  constexpr int64_t kBlockRows = 4;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, m * k));
  parallelFor(0, n, grain, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(static_cast<size_t>(kBlockRows * m));
    for (int64_t i0 = begin; i0 < end; i0 += kBlockRows) {
      const int64_t rows = std::min(kBlockRows, end - i0);
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (int64_t p = 0; p < k; ++p) {
        const T* brow = b.data + p * b.row_stride;
        for (int64_t r = 0; r < rows; ++r) {
          const Acc av = static_cast<Acc>(a.data[(i0 + r) * a.row_stride + p * a.col_stride]);
          Acc* out = acc.data() + r * m;
          if (b.col_stride == 1) {
            for (int64_t j = 0; j < m; ++j) out[j] = static_cast<Acc>(out[j] + mul(av, static_cast<Acc>(brow[j])));
          } else {
            for (int64_t j = 0; j < m; ++j) {
              out[j] = static_cast<Acc>(out[j] + mul(av, static_cast<Acc>(brow[j * b.col_stride])));
            }
          }
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        T* crow = c + (i0 + r) * ldc;
        const Acc* sum = acc.data() + r * m;
        for (int64_t j = 0; j < m; ++j) {
          const T product = static_cast<T>(sum[j]);
          crow[j] = beta == T(0) ? static_cast<T>(alpha * product) : static_cast<T>(beta * crow[j] + alpha * product);
        }
      }
    }
  });
}

// The dtypes of matrix products: every arithmetic type but bool.
#define KILN_PRODUCT_CASES(...) \
  KILN_FLOATING_CASES(__VA_ARGS__) KILN_INTEGRAL_CASES(__VA_ARGS__) KILN_COMPLEX_CASES(__VA_ARGS__)

template <typename T>
constexpr bool kIsComplex = false;
template <typename T>
constexpr bool kIsComplex<std::complex<T>> = true;

// alpha or beta of a product in T (complex products take complex ones).
template <typename T>
T productScalar(const Scalar& s) {
  if constexpr (kIsComplex<T>) {
    return T(s.toComplexDouble());
  } else {
    return checkedScalarTo<T>(s);
  }
}

// c = beta * c + alpha * a @ b for an n x k by k x m product into a row-major
// c with leading dimension ldc. beta == 0 never reads c (NaN there does not
// propagate, as in BLAS and PyTorch).
template <typename T>
void gemm(int64_t n, int64_t m, int64_t k, T alpha, Mat<T> a, Mat<T> b, T beta, T* c, int64_t ldc) {
  if (n == 0 || m == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : static_cast<T>(beta * c[i * ldc + j]);
    }
    return;
  }
  if constexpr (kIsComplex<T>) {
    tileGemm<T>(n, m, k, alpha, a, b, beta, c, ldc);
  } else if constexpr (std::is_floating_point_v<T>) {
    KILN_INTERNAL_ASSERT(n <= INT_MAX && m <= INT_MAX && k <= INT_MAX && ldc <= INT_MAX, "matrix too large for BLAS");
    blasGemm<T>(static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha, a, b, beta, c,
                static_cast<int>(ldc));
  } else {
    if constexpr (sizeof(T) == 8) {
      tileGemm<T>(n, m, k, alpha, a, b, beta, c, ldc);
    } else {
      rowGemm<T>(n, m, k, alpha, a, b, beta, c, ldc);
    }
  }
}

template <typename T>
Mat<T> matOf(const Tensor& t, int64_t offset = 0) {
  return {static_cast<const T*>(t.rawData()) + offset, t.stride(-2), t.stride(-1)};
}

DimVector batchShape(const Tensor& t) { return DimVector(IntArrayRef(t.sizes().data(), t.sizes().size() - 2)); }

// `t` viewed with `sizes` (same rank or more leading dims), broadcast dims
// getting stride 0; PyTorch's expand errors.
Tensor expandTo(const Tensor& t, IntArrayRef sizes) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  KILN_CHECK(ndim >= t.dim(), "expand: the number of sizes provided (", ndim,
             ") must be greater or equal to the number of dimensions in the tensor (", t.dim(), ")");
  DimVector strides(sizes.size(), 0);
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t target = d + ndim - t.dim();
    if (t.size(d) == sizes[target]) {
      strides[target] = t.stride(d);
    } else {
      KILN_CHECK(t.size(d) == 1, "The expanded size of the tensor (", sizes[target], ") must match the existing size (",
                 t.size(d), ") at non-singleton dimension ", target, ".  Target sizes: ", shapeString(sizes),
                 ".  Tensor sizes: ", shapeString(t.sizes()));
    }
  }
  return makeView(t, sizes, strides, t.storageOffset());
}

// A contiguous tensor seen with another shape of the same numel.
Tensor reshapeContiguous(const Tensor& t, IntArrayRef sizes) {
  return makeView(t, sizes, contiguousStrides(sizes), t.storageOffset());
}

bool sharesStorage(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.storage().get() == b.storage().get();
}

void checkSameDtype(const Tensor& expected, const Tensor& found) {
  KILN_CHECK(expected.dtype() == found.dtype(), "expected scalar type ", scalarTypeShortName(expected.dtype()),
             " but found ", scalarTypeShortName(found.dtype()));
}

void checkOutDtype(const Tensor& out, ScalarType dtype) {
  KILN_CHECK(out.dtype() == dtype, "Expected out tensor to have dtype ", scalarTypeName(dtype), ", but got ",
             scalarTypeName(out.dtype()), " instead");
}

// Runs compute(c) with a contiguous c that becomes `out`'s result: `out`
// itself when it is contiguous and shares no memory with the inputs (so BLAS
// never reads what it writes), else a temporary copied into it. `out` is
// resized to `sizes` first.
template <typename Compute>
Tensor& computeInto(Tensor& out, IntArrayRef sizes, std::initializer_list<const Tensor*> inputs,
                    const Compute& compute) {
  resizeOutput(out, sizes);
  bool direct = out.isContiguous();
  for (const Tensor* in : inputs) direct = direct && !sharesStorage(out, *in);
  if (direct) {
    compute(out);
    return out;
  }
  Tensor c = empty(sizes, out.dtype());
  compute(c);
  copy_(out, c);
  return out;
}

// c (batch..., n, m, contiguous) = beta * c + alpha * a @ b, where a
// (batch..., n, k) and b (batch..., k, m) already have c's batch dims
// (broadcast ones with stride 0).
void batchedGemm(const Tensor& a, const Tensor& b, Tensor& c, const Scalar& beta, const Scalar& alpha) {
  const int64_t n = c.size(-2), m = c.size(-1), k = a.size(-1);
  const int64_t batch_dims = c.dim() - 2;
  int64_t batches = 1;
  for (int64_t d = 0; d < batch_dims; ++d) batches *= c.size(d);
  KILN_DISPATCH_SWITCH(c.dtype(), "addmm_impl_cpu_", KILN_PRODUCT_CASES([&] {
                         const scalar_t alpha_v = productScalar<scalar_t>(alpha);
                         const scalar_t beta_v =
                             beta.toComplexDouble() == 0.0 ? scalar_t(0) : productScalar<scalar_t>(beta);
                         scalar_t* c_data = static_cast<scalar_t*>(c.rawData());
                         for (int64_t batch = 0; batch < batches; ++batch) {
                           int64_t a_offset = 0, b_offset = 0;
                           for (int64_t d = batch_dims - 1, rest = batch; d >= 0; --d) {
                             const int64_t index = rest % c.size(d);
                             rest /= c.size(d);
                             a_offset += index * a.stride(d);
                             b_offset += index * b.stride(d);
                           }
                           gemm<scalar_t>(n, m, k, alpha_v, matOf<scalar_t>(a, a_offset), matOf<scalar_t>(b, b_offset),
                                          beta_v, c_data + batch * n * m, m);
                         }
                       }));
}

void checkMatrix(const Tensor& t, const char* name) {
  KILN_CHECK(t.dim() == 2, name, " must be a matrix, got ", t.dim(), "-D tensor");
}

void checkMmShapes(const Tensor& mat1, const Tensor& mat2) {
  KILN_CHECK(mat1.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", mat1.size(0), "x",
             mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
}

// out = beta * self + alpha * (a @ b), the tail of addmm, addmv and
// baddbmm: checks an in-place call, broadcasts self to the result's `sizes`
// (converting its dtype) and runs the product, seen as `product_sizes`
// matrices, into out. An undefined self means no addend (bmm).
Tensor& addProduct(const Tensor& self, const Tensor& a, const Tensor& b, IntArrayRef sizes, IntArrayRef product_sizes,
                   const Scalar& beta, const Scalar& alpha, Tensor& out) {
  const ScalarType dtype = a.dtype();
  const bool in_place = out.isSame(self);
  if (in_place) {
    KILN_CHECK(self.sizes() == sizes, "Bad in-place call: input tensor size ", shapeString(self.sizes()),
               " and output tensor size ", shapeString(sizes), " should match");
    KILN_CHECK(self.dtype() == dtype, "Bad in-place call: input tensor dtype ", scalarTypeName(self.dtype()),
               " and output tensor dtype ", scalarTypeName(dtype), " should match");
  } else {
    checkOutDtype(out, dtype);
  }
  const Tensor addend = self.defined() ? expandTo(self, sizes) : Tensor();
  const bool uses_self = addend.defined() && beta.toDouble() != 0;
  // In place, self is the output: only its aliasing of a or b matters.
  const Tensor read_self = in_place ? Tensor() : addend;
  const Tensor a_ready = blasReady(a), b_ready = blasReady(b);
  return computeInto(out, sizes, {&a_ready, &b_ready, &read_self}, [&](Tensor& c) {
    if (uses_self && !c.isSame(self)) copy_(c, addend);
    if (uses_self && a.size(-1) == 0) {
      // An empty sum: PyTorch scales self with mul_, which casts beta like
      // any Python number (no overflow check, a float beta fails on ints).
      mul_(c, scalarToTensor(beta));
      return;
    }
    Tensor product = reshapeContiguous(c, product_sizes);
    batchedGemm(a_ready, b_ready, product, uses_self ? beta : Scalar(0.0), alpha);
  });
}

Tensor& addmmImpl(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
                  Tensor& out) {
  checkMatrix(mat1, "mat1");
  checkMatrix(mat2, "mat2");
  checkMmShapes(mat1, mat2);
  KILN_CHECK(mat1.dtype() == mat2.dtype(), "mat1 and mat2 must have the same dtype");
  KILN_CHECK(self.dtype() == mat2.dtype(), "self and mat2 must have the same dtype");
  const DimVector sizes{mat1.size(0), mat2.size(1)};
  return addProduct(self, mat1, mat2, sizes, sizes, beta, alpha, out);
}

Tensor& baddbmmImpl(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                    const Scalar& alpha, Tensor& out) {
  KILN_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  KILN_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  const int64_t batches = batch1.size(0), k = batch1.size(2);
  KILN_CHECK(batch2.size(0) == batches && batch2.size(1) == k,
             "Expected size for first two dimensions of batch2 "
             "tensor to be: [",
             batches, ", ", k, "] but got: [", batch2.size(0), ", ", batch2.size(1), "].");
  checkSameDtype(batch1, batch2);
  const DimVector sizes{batches, batch1.size(1), batch2.size(2)};
  return addProduct(self, batch1, batch2, sizes, sizes, beta, alpha, out);
}

Tensor& addmvImpl(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha,
                  Tensor& out) {
  // mv passes no self: PyTorch's mv is addmv with an unused self of the result's shape.
  const int64_t self_dim = self.defined() ? self.dim() : 1;
  KILN_CHECK(mat.dim() == 2 && vec.dim() == 1 && self_dim <= 1, "vector + matrix @ vector expected, got ", self_dim,
             ", ", mat.dim(), ", ", vec.dim());
  const int64_t self_numel = self.defined() ? self.numel() : mat.size(0);
  KILN_CHECK(mat.size(1) == vec.size(0) && (mat.size(0) == self_numel || self_numel == 1), "size mismatch, got ",
             self_numel, ", ", mat.size(0), "x", mat.size(1), ",", vec.size(0));
  checkSameDtype(mat, vec);
  // The vector as a k x 1 matrix, the result as an n x 1 one.
  const Tensor column = makeView(vec, {vec.size(0), 1}, {vec.stride(0), 1}, vec.storageOffset());
  return addProduct(self, mat, column, {mat.size(0)}, {mat.size(0), 1}, beta, alpha, out);
}

template <typename T>
T dotKernel(const T* x, int64_t x_stride, const T* y, int64_t y_stride, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    if (n > 0 && n <= INT_MAX && x_stride <= INT_MAX && y_stride <= INT_MAX) {
      syncBlasThreads();
      const int in = static_cast<int>(n), ix = static_cast<int>(x_stride), iy = static_cast<int>(y_stride);
      if constexpr (std::is_same_v<T, float>) {
        return cblas_sdot(in, x, ix, y, iy);
      } else {
        return cblas_ddot(in, x, ix, y, iy);
      }
    }
  }
  T result = 0;
  for (int64_t i = 0; i < n; ++i) result = static_cast<T>(result + x[i * x_stride] * y[i * y_stride]);
  return result;
}

void checkVector(const Tensor& t, const char* op, const char* name) {
  KILN_CHECK(t.dim() == 1, op, ": Expected 1-D argument ", name, ", but got ", t.dim(), "-D");
}

// `t` (..., k) as a (rows, k) matrix: a view when its leading dims merge
// into one stride, else a contiguous copy.
Tensor foldRows(const Tensor& t) {
  const int64_t k = t.size(-1);
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < t.dim(); ++d) rows *= t.size(d);
  int64_t row_stride = -1, span = 0;
  bool mergeable = true;
  for (int64_t d = t.dim() - 2; d >= 0 && mergeable; --d) {
    if (t.size(d) == 1) continue;
    if (row_stride < 0) {
      row_stride = t.stride(d);
    } else {
      mergeable = t.stride(d) == span;
    }
    span = t.stride(d) * t.size(d);
  }
  // Without elements any strides do (and contiguous() would not change them).
  if (!mergeable && t.numel() > 0) return foldRows(contiguous(t));
  if (row_stride < 0) row_stride = std::max<int64_t>(k, 1);
  return makeView(t, {rows, k}, {row_stride, t.stride(-1)}, t.storageOffset());
}

}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2) {
  Tensor out = empty({0}, self.dtype());
  return mmOut(self, mat2, out);
}

Tensor& mmOut(const Tensor& self, const Tensor& mat2, Tensor& out) {
  KILN_CHECK(self.dim() == 2, "self must be a matrix");
  KILN_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  checkMmShapes(self, mat2);
  checkSameDtype(self, mat2);
  const DimVector sizes{self.size(0), mat2.size(1)};
  return addProduct(Tensor(), self, mat2, sizes, sizes, Scalar(0.0), Scalar(1.0), out);
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  Tensor out = empty({0}, self.dtype());
  return bmmOut(self, mat2, out);
}

Tensor& bmmOut(const Tensor& self, const Tensor& mat2, Tensor& out) {
  return baddbmmImpl(Tensor(), self, mat2, Scalar(0.0), Scalar(1.0), out);
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  Tensor out = empty({0}, mat1.dtype());
  return addmmImpl(self, mat1, mat2, beta, alpha, out);
}

Tensor& addmmOut(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
                 Tensor& out) {
  return addmmImpl(self, mat1, mat2, beta, alpha, out);
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  Tensor out = empty({0}, batch1.dtype());
  return baddbmmImpl(self, batch1, batch2, beta, alpha, out);
}

Tensor& baddbmmOut(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                   const Scalar& alpha, Tensor& out) {
  return baddbmmImpl(self, batch1, batch2, beta, alpha, out);
}

Tensor mv(const Tensor& self, const Tensor& vec) {
  Tensor out = empty({0}, self.dtype());
  return mvOut(self, vec, out);
}

Tensor& mvOut(const Tensor& self, const Tensor& vec, Tensor& out) {
  return addmvImpl(Tensor(), self, vec, Scalar(0.0), Scalar(1.0), out);
}

Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  Tensor out = empty({0}, mat.dtype());
  return addmvImpl(self, mat, vec, beta, alpha, out);
}

Tensor& addmvOut(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha,
                 Tensor& out) {
  return addmvImpl(self, mat, vec, beta, alpha, out);
}

Tensor dot(const Tensor& self, const Tensor& other) {
  Tensor out = empty({}, self.dtype());
  return dotOut(self, other, out);
}

Tensor& dotOut(const Tensor& self, const Tensor& other, Tensor& out) {
  KILN_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ", other.dim(),
             "D tensors");
  KILN_CHECK(self.dtype() == other.dtype(), "dot : expected both vectors to have same dtype, but found ",
             scalarTypeShortName(self.dtype()), " and ", scalarTypeShortName(other.dtype()));
  KILN_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [", self.numel(), "] and src [",
             other.numel(), "] to have the same number of elements, but got ", self.numel(), " and ", other.numel(),
             " elements respectively");
  KILN_CHECK(out.dtype() == self.dtype(), "result dtype ", scalarTypeShortName(out.dtype()),
             " does not match input dtype ", scalarTypeShortName(self.dtype()));
  const int64_t n = self.numel();
  resizeOutput(out, {});
  KILN_DISPATCH_SWITCH(self.dtype(), "dot", KILN_PRODUCT_CASES([&] {
                         *static_cast<scalar_t*>(out.rawData()) =
                             dotKernel(static_cast<const scalar_t*>(self.rawData()), self.stride(0),
                                       static_cast<const scalar_t*>(other.rawData()), other.stride(0), n);
                       }));
  return out;
}

namespace {

// self[i] * vec2[j] elementwise over the broadcast (n, m), with type
// promotion; into `out` when defined.
Tensor outerImpl(const Tensor& self, const Tensor& vec2, Tensor out) {
  checkVector(self, "outer", "self");
  checkVector(vec2, "outer", "vec2");
  if (out.defined()) resizeOutput(out, {self.size(0), vec2.size(0)});
  const Tensor column = makeView(self, {self.size(0), 1}, {self.stride(0), 1}, self.storageOffset());
  TensorIter iter("outer");
  iter.addOutput(out).addInput(column).addInput(vec2).build();
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.computeDtype(), "outer", [&] {
    kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [](auto a, auto b) -> scalar_t {
      if constexpr (std::is_same_v<decltype(a), bool>) {
        return a && b;
      } else {
        return static_cast<scalar_t>(a * b);
      }
    });
  });
  return iter.output();
}

}  // namespace

Tensor outer(const Tensor& self, const Tensor& vec2) { return outerImpl(self, vec2, Tensor()); }

Tensor& outerOut(const Tensor& self, const Tensor& vec2, Tensor& out) {
  outerImpl(self, vec2, out);
  return out;
}

Tensor matmul(const Tensor& self, const Tensor& other) {
  const int64_t dim1 = self.dim(), dim2 = other.dim();
  KILN_CHECK(dim1 >= 1 && dim2 >= 1, "both arguments to matmul need to be at least 1D, but they are ", dim1, "D and ",
             dim2, "D");
  if (dim1 == 1 && dim2 == 1) return dot(self, other);
  if (dim1 == 2 && dim2 == 1) return mv(self, other);
  if (dim1 == 1 && dim2 == 2) {
    const Tensor row =
        makeView(self, {1, self.size(0)}, {self.size(0) * self.stride(0), self.stride(0)}, self.storageOffset());
    return reshapeContiguous(mm(row, other), {other.size(1)});
  }
  if (dim1 == 2 && dim2 == 2) return mm(self, other);
  if (dim1 >= 3 && dim2 <= 2) {
    // Fold self's batch into its rows: one big product instead of a batch of small ones.
    DimVector out_sizes(IntArrayRef(self.sizes().data(), self.sizes().size() - 1));
    const Tensor folded = foldRows(self);
    if (dim2 == 1) return reshapeContiguous(mv(folded, other), out_sizes);
    out_sizes.push_back(other.size(1));
    return reshapeContiguous(mm(folded, other), out_sizes);
  }
  // Batched: broadcast the batch dims; vectors become 1-row / 1-column matrices.
  checkSameDtype(self, other);
  // A vector operand is a 1-row / 1-column matrix, as BLAS-ready as any
  // other (an expanded vector has stride 0 and is copied).
  const Tensor a3 =
      blasReady(dim1 == 1 ? makeView(self, {1, self.size(0)}, {0, self.stride(0)}, self.storageOffset()) : self);
  const Tensor b3 =
      blasReady(dim2 == 1 ? makeView(other, {other.size(0), 1}, {other.stride(0), 1}, other.storageOffset()) : other);
  const int64_t n = a3.size(-2), k1 = a3.size(-1), k2 = b3.size(-2), p = b3.size(-1);
  DimVector batch = broadcastShapes(batchShape(a3), batchShape(b3), "matmul");
  int64_t batches = 1;
  for (int64_t s : batch) batches *= s;
  KILN_CHECK(k1 == k2, "Expected size for first two dimensions of batch2 tensor to be: [", batches, ", ", k1,
             "] but got: [", batches, ", ", k2, "].");
  DimVector a_sizes = batch, b_sizes = batch, c_sizes = batch;
  a_sizes.push_back(n);
  a_sizes.push_back(k1);
  b_sizes.push_back(k2);
  b_sizes.push_back(p);
  c_sizes.push_back(n);
  c_sizes.push_back(p);
  Tensor c = empty(c_sizes, self.dtype());
  batchedGemm(expandTo(a3, a_sizes), expandTo(b3, b_sizes), c, Scalar(0.0), Scalar(1.0));
  DimVector out_sizes = batch;
  if (dim1 > 1) out_sizes.push_back(n);
  if (dim2 > 1) out_sizes.push_back(p);
  return reshapeContiguous(c, out_sizes);
}

Tensor& matmulOut(const Tensor& self, const Tensor& other, Tensor& out) {
  Tensor result = matmul(self, other);
  KILN_CHECK(out.dtype() == result.dtype(), "result dtype ", scalarTypeShortName(out.dtype()),
             " does not match input dtype ", scalarTypeShortName(result.dtype()));
  resizeOutput(out, result.sizes());
  copy_(out, result);
  return out;
}

namespace {

// weight.t(), with t()'s rank check.
Tensor transposed(const Tensor& weight) {
  KILN_CHECK(weight.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", weight.dim(), "D");
  if (weight.dim() < 2) return weight;
  return makeView(weight, {weight.size(1), weight.size(0)}, {weight.stride(1), weight.stride(0)},
                  weight.storageOffset());
}

}  // namespace

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  const bool has_bias = bias && bias->defined();
  const Tensor weight_t = transposed(weight);
  if (input.dim() == 2 && has_bias) return addmm(*bias, input, weight_t);
  if (input.dim() == 3 && has_bias && input.isContiguous()) {
    // PyTorch folds contiguous 3-D input into one addmm (so bias must broadcast to 2-D).
    const Tensor rows = reshapeContiguous(input, {input.size(0) * input.size(1), input.size(2)});
    Tensor result = addmm(*bias, rows, weight_t);
    return reshapeContiguous(result, {input.size(0), input.size(1), result.size(1)});
  }
  Tensor output = matmul(input, weight_t);
  if (has_bias) add_(output, *bias);
  return output;
}

Tensor& linearOut(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, Tensor& out) {
  const bool has_bias = bias && bias->defined();
  const Tensor weight_t = transposed(weight);
  if (input.dim() == 2 && has_bias) {
    return addmmOut(*bias, input, weight_t, Scalar(int64_t{1}), Scalar(int64_t{1}), out);
  }
  matmulOut(input, weight_t, out);
  if (has_bias) add_(out, *bias);
  return out;
}

void gemmFloat(int64_t n, int64_t m, int64_t k, float alpha, const float* a, int64_t a_row_stride, int64_t a_col_stride,
               const float* b, int64_t b_row_stride, int64_t b_col_stride, float beta, float* c, int64_t ldc) {
  gemm<float>(n, m, k, alpha, Mat<float>{a, a_row_stride, a_col_stride}, Mat<float>{b, b_row_stride, b_col_stride},
              beta, c, ldc);
}

}  // namespace kiln
