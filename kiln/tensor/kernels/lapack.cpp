// Batched LAPACK calls (Debian's OpenBLAS exports LAPACK with the BLAS, so
// this links what the matrix products already link). Every matrix is copied
// to a column-major buffer LAPACK may overwrite; the batch runs one matrix
// after another, each call free to use OpenBLAS's threads.
#include "kiln/tensor/lapack.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/shape.h"

// LAPACK's Fortran interface (no lapack.h in Debian's openblas-dev): every
// argument by pointer, then, as gfortran's calling convention has it, the
// hidden length (a size_t) of each character argument. LAPACK reads only
// their first character, but leaving the lengths out is not safe: a routine
// that passes its own character argument on to another in a tail call
// hands over whatever the caller left in that slot (the failures R saw with
// gfortran 9). Lapack<T> below appends them.
#define KILN_LAPACK_DECLARE(T, p)                                                                                     \
  void p##getrf_(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);                             \
  void p##getrs_(const char* trans, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv, T* b, \
                 const int* ldb, int* info, size_t);                                                                  \
  void p##potrf_(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t);                            \
  void p##potrs_(const char* uplo, const int* n, const int* nrhs, const T* a, const int* lda, T* b, const int* ldb,   \
                 int* info, size_t);                                                                                  \
  void p##potri_(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t);                            \
  void p##geqrf_(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork, int* info);     \
  void p##orgqr_(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work,               \
                 const int* lwork, int* info);                                                                        \
  void p##ormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k, const T* a,           \
                 const int* lda, const T* tau, T* c, const int* ldc, T* work, const int* lwork, int* info, size_t,    \
                 size_t);                                                                                             \
  void p##gesdd_(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u, const int* ldu,      \
                 T* vt, const int* ldvt, T* work, const int* lwork, int* iwork, int* info, size_t);                   \
  void p##syevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, T* work,               \
                 const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);                         \
  void p##geev_(const char* jobvl, const char* jobvr, const int* n, T* a, const int* lda, T* wr, T* wi, T* vl,        \
                const int* ldvl, T* vr, const int* ldvr, T* work, const int* lwork, int* info, size_t, size_t);       \
  void p##gels_(const char* trans, const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b,           \
                const int* ldb, T* work, const int* lwork, int* info, size_t);                                        \
  void p##gelsy_(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b, const int* ldb, int* jpvt,  \
                 const T* rcond, int* rank, T* work, const int* lwork, int* info);                                    \
  void p##gelsd_(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b, const int* ldb, T* s,       \
                 const T* rcond, int* rank, T* work, const int* lwork, int* iwork, int* info);                        \
  void p##sytrf_(const char* uplo, const int* n, T* a, const int* lda, int* ipiv, T* work, const int* lwork,          \
                 int* info, size_t);                                                                                  \
  void p##sytrs_(const char* uplo, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv, T* b,  \
                 const int* ldb, int* info, size_t);                                                                  \
  void p##gelss_(const int* m, const int* n, const int* nrhs, T* a, const int* lda, T* b, const int* ldb, T* s,       \
                 const T* rcond, int* rank, T* work, const int* lwork, int* info);

extern "C" {
KILN_LAPACK_DECLARE(float, s)
KILN_LAPACK_DECLARE(double, d)
}

namespace kiln {
namespace {

template <typename T>
struct Lapack;

#define KILN_LAPACK_TRAITS(T, p)                  \
  template <>                                     \
  struct Lapack<T> {                              \
    static constexpr auto getrf = p##getrf_;      \
    template <typename... A>                      \
    static void getrs(A... a) {                   \
      p##getrs_(a..., size_t{1});                 \
    }                                             \
    template <typename... A>                      \
    static void potrf(A... a) {                   \
      p##potrf_(a..., size_t{1});                 \
    }                                             \
    template <typename... A>                      \
    static void potrs(A... a) {                   \
      p##potrs_(a..., size_t{1});                 \
    }                                             \
    template <typename... A>                      \
    static void potri(A... a) {                   \
      p##potri_(a..., size_t{1});                 \
    }                                             \
    static constexpr auto geqrf = p##geqrf_;      \
    static constexpr auto orgqr = p##orgqr_;      \
    template <typename... A>                      \
    static void ormqr(A... a) {                   \
      p##ormqr_(a..., size_t{1}, size_t{1});      \
    }                                             \
    template <typename... A>                      \
    static void gesdd(A... a) {                   \
      p##gesdd_(a..., size_t{1});                 \
    }                                             \
    template <typename... A>                      \
    static void syevd(A... a) {                   \
      p##syevd_(a..., size_t{1}, size_t{1});      \
    }                                             \
    template <typename... A>                      \
    static void geev(A... a) {                    \
      p##geev_(a..., size_t{1}, size_t{1});       \
    }                                             \
    template <typename... A>                      \
    static void gels(A... a) {                    \
      p##gels_(a..., size_t{1});                  \
    }                                             \
    static constexpr auto gelsy = p##gelsy_;      \
    static constexpr auto gelsd = p##gelsd_;      \
    static constexpr auto gelss = p##gelss_;      \
    template <typename... A>                      \
    static void sytrf(A... a) {                   \
      p##sytrf_(a..., size_t{1});                 \
    }                                             \
    template <typename... A>                      \
    static void sytrs(A... a) {                   \
      p##sytrs_(a..., size_t{1});                 \
    }                                             \
    static constexpr auto trsm = cblas_##p##trsm; \
  };
KILN_LAPACK_TRAITS(float, s)
KILN_LAPACK_TRAITS(double, d)
#undef KILN_LAPACK_TRAITS

// A matrix dimension as LAPACK's int.
int lapackInt(int64_t v) {
  KILN_CHECK(v <= INT_MAX, "linalg: matrix dimension ", v, " is too large for LAPACK");
  return static_cast<int>(v);
}

// A leading dimension: at least 1, as LAPACK requires even of empty matrices.
int leading(int64_t rows) { return lapackInt(std::max<int64_t>(1, rows)); }

DimVector batchShape(const Tensor& t) { return DimVector(t.sizes().begin(), t.sizes().end() - 2); }

DimVector withSizes(DimVector shape, std::initializer_list<int64_t> tail) {
  for (int64_t s : tail) shape.push_back(s);
  return shape;
}

int64_t batchCount(const Tensor& t) { return shapeNumel(IntArrayRef(batchShape(t))); }

// An uninitialized column-major batch of rows x cols matrices: its storage is
// [..., cols, rows] row-major; asMatrices gives the [..., rows, cols] view.
Tensor columnMajorEmpty(const DimVector& batch, int64_t rows, int64_t cols, ScalarType dtype) {
  return empty(IntArrayRef(withSizes(batch, {cols, rows})), dtype);
}

Tensor asMatrices(const Tensor& buffer) { return transpose(buffer, -2, -1); }

// A column-major copy of the matrices of `t`, LAPACK's to overwrite.
Tensor columnMajorCopy(const Tensor& t) {
  Tensor buffer = columnMajorEmpty(batchShape(t), t.size(-2), t.size(-1), t.dtype());
  Tensor matrices = asMatrices(buffer);
  copy_(matrices, t);
  return buffer;
}

// LAPACK's optimal workspace size from a query (lwork = -1) result.
template <typename T>
int workspaceSize(T queried) {
  return std::max(1, static_cast<int>(queried));
}

// Zeroes the triangle of each n x n column-major matrix that a Cholesky
// factor does not use, or mirrors `upper`'s triangle into it (potri leaves
// only one triangle of the inverse).
template <typename T>
void fillOtherTriangle(T* data, int64_t batch, int64_t n, bool upper, bool mirror) {
  for (int64_t b = 0; b < batch; ++b) {
    T* a = data + b * n * n;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < n; ++i) {
        bool unused = upper ? i > j : i < j;
        if (unused) a[i + j * n] = mirror ? a[j + i * n] : T(0);
      }
    }
  }
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lapackLuFactor(const Tensor& A) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), batch = batchCount(A);
  Tensor lu = columnMajorCopy(A);
  Tensor pivots = empty(IntArrayRef(withSizes(batchShape(A), {k})), ScalarType::Int);
  Tensor info = zeros(IntArrayRef(batchShape(A)), ScalarType::Int);
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), "lu_cpu", [&] {
    const int mi = lapackInt(m), ni = lapackInt(n), lda = leading(m);
    for (int64_t b = 0; b < batch; ++b) {
      Lapack<scalar_t>::getrf(&mi, &ni, lu.data<scalar_t>() + b * m * n, &lda, pivots.data<int32_t>() + b * k,
                              info.data<int32_t>() + b);
    }
  });
  return {asMatrices(lu), pivots, info};
}

Tensor lapackLuSolve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool transpose) {
  const int64_t n = LU.size(-1), k = B.size(-1), batch = batchCount(LU);
  Tensor lu = contiguous(asMatrices(LU));  // the factors' own column-major layout, copied only when not in it
  Tensor piv = contiguous(pivots);
  Tensor x = columnMajorCopy(B);
  KILN_DISPATCH_FLOATING_TYPES(LU.dtype(), "lu_solve_cpu", [&] {
    const int ni = lapackInt(n), nrhs = lapackInt(k), ld = leading(n);
    int info = 0;
    const char trans = transpose ? 'T' : 'N';
    for (int64_t b = 0; b < batch && n > 0 && k > 0; ++b) {
      Lapack<scalar_t>::getrs(&trans, &ni, &nrhs, lu.data<scalar_t>() + b * n * n, &ld, piv.data<int32_t>() + b * n,
                              x.data<scalar_t>() + b * n * k, &ld, &info);
    }
  });
  return asMatrices(x);
}

std::tuple<Tensor, Tensor> lapackCholesky(const Tensor& A, bool upper) {
  const int64_t n = A.size(-1), batch = batchCount(A);
  Tensor factor = columnMajorCopy(A);
  Tensor info = zeros(IntArrayRef(batchShape(A)), ScalarType::Int);
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), "cholesky_cpu", [&] {
    const int ni = lapackInt(n), lda = leading(n);
    const char uplo = upper ? 'U' : 'L';
    for (int64_t b = 0; b < batch; ++b) {
      Lapack<scalar_t>::potrf(&uplo, &ni, factor.data<scalar_t>() + b * n * n, &lda, info.data<int32_t>() + b);
    }
    fillOtherTriangle(factor.data<scalar_t>(), batch, n, upper, /*mirror=*/false);
  });
  return {asMatrices(factor), info};
}

Tensor lapackCholeskySolve(const Tensor& B, const Tensor& factor, bool upper) {
  const int64_t n = factor.size(-1), k = B.size(-1), batch = batchCount(factor);
  Tensor f = columnMajorCopy(factor);
  Tensor x = columnMajorCopy(B);
  KILN_DISPATCH_FLOATING_TYPES(B.dtype(), "cholesky_solve_cpu", [&] {
    const int ni = lapackInt(n), nrhs = lapackInt(k), ld = leading(n);
    const char uplo = upper ? 'U' : 'L';
    int info = 0;
    for (int64_t b = 0; b < batch && n > 0 && k > 0; ++b) {
      Lapack<scalar_t>::potrs(&uplo, &ni, &nrhs, f.data<scalar_t>() + b * n * n, &ld, x.data<scalar_t>() + b * n * k,
                              &ld, &info);
    }
  });
  return asMatrices(x);
}

Tensor lapackCholeskyInverse(const Tensor& factor, bool upper) {
  const int64_t n = factor.size(-1), batch = batchCount(factor);
  Tensor inverse = columnMajorCopy(factor);
  KILN_DISPATCH_FLOATING_TYPES(factor.dtype(), "cholesky_inverse_cpu", [&] {
    const int ni = lapackInt(n), lda = leading(n);
    const char uplo = upper ? 'U' : 'L';
    int info = 0;
    for (int64_t b = 0; b < batch; ++b) {
      // A zero on the factor's diagonal (info > 0) leaves that matrix as
      // LAPACK left it; torch does not check either.
      Lapack<scalar_t>::potri(&uplo, &ni, inverse.data<scalar_t>() + b * n * n, &lda, &info);
    }
    fillOtherTriangle(inverse.data<scalar_t>(), batch, n, upper, /*mirror=*/true);
  });
  return asMatrices(inverse);
}

Tensor lapackTriangularSolve(const Tensor& A, const Tensor& B, bool upper, bool left, bool transpose,
                             bool unitriangular) {
  const int64_t n = A.size(-1), rows = B.size(-2), cols = B.size(-1), batch = batchCount(B);
  Tensor a = columnMajorCopy(A);
  Tensor x = columnMajorCopy(B);
  KILN_DISPATCH_FLOATING_TYPES(B.dtype(), "triangular_solve_cpu", [&] {
    const int lda = leading(n), ldb = leading(rows);
    for (int64_t b = 0; b < batch && rows > 0 && cols > 0; ++b) {
      Lapack<scalar_t>::trsm(CblasColMajor, left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower,
                             transpose ? CblasTrans : CblasNoTrans, unitriangular ? CblasUnit : CblasNonUnit,
                             lapackInt(rows), lapackInt(cols), scalar_t(1), a.data<scalar_t>() + b * n * n, lda,
                             x.data<scalar_t>() + b * rows * cols, ldb);
    }
  });
  return asMatrices(x);
}

std::tuple<Tensor, Tensor> lapackGeqrf(const Tensor& A) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), batch = batchCount(A);
  Tensor a = columnMajorCopy(A);
  Tensor tau = zeros(IntArrayRef(withSizes(batchShape(A), {k})), A.dtype());
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), "geqrf_cpu", [&] {
    const int mi = lapackInt(m), ni = lapackInt(n), lda = leading(m);
    int info = 0, lwork = -1;
    scalar_t query = 0;
    Lapack<scalar_t>::geqrf(&mi, &ni, nullptr, &lda, nullptr, &query, &lwork, &info);
    lwork = workspaceSize(query);
    std::vector<scalar_t> work(lwork);
    for (int64_t b = 0; b < batch; ++b) {
      Lapack<scalar_t>::geqrf(&mi, &ni, a.data<scalar_t>() + b * m * n, &lda, tau.data<scalar_t>() + b * k, work.data(),
                              &lwork, &info);
    }
  });
  return {asMatrices(a), tau};
}

Tensor lapackOrgqr(const Tensor& A, const Tensor& tau) {
  const int64_t m = A.size(-2), n = A.size(-1), k = tau.size(-1), batch = batchCount(A);
  Tensor q = columnMajorCopy(A);
  Tensor t = contiguous(tau);
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), "orgqr_cpu", [&] {
    const int mi = lapackInt(m), ni = lapackInt(n), ki = lapackInt(k), lda = leading(m);
    int info = 0, lwork = -1;
    scalar_t query = 0;
    Lapack<scalar_t>::orgqr(&mi, &ni, &ki, nullptr, &lda, nullptr, &query, &lwork, &info);
    lwork = workspaceSize(query);
    std::vector<scalar_t> work(lwork);
    for (int64_t b = 0; b < batch && n > 0; ++b) {
      Lapack<scalar_t>::orgqr(&mi, &ni, &ki, q.data<scalar_t>() + b * m * n, &lda, t.data<scalar_t>() + b * k,
                              work.data(), &lwork, &info);
    }
  });
  return asMatrices(q);
}

Tensor lapackOrmqr(const Tensor& A, const Tensor& tau, const Tensor& C, bool left, bool transpose) {
  const int64_t rows = C.size(-2), cols = C.size(-1), k = tau.size(-1), batch = batchCount(C);
  const int64_t a_rows = A.size(-2), a_cols = A.size(-1);
  Tensor a = columnMajorCopy(A);
  Tensor t = contiguous(tau);
  Tensor c = columnMajorCopy(C);
  KILN_DISPATCH_FLOATING_TYPES(C.dtype(), "ormqr_cpu", [&] {
    const int mi = lapackInt(rows), ni = lapackInt(cols), ki = lapackInt(k), lda = leading(a_rows), ldc = leading(rows);
    const char side = left ? 'L' : 'R', trans = transpose ? 'T' : 'N';
    int info = 0, lwork = -1;
    scalar_t query = 0;
    Lapack<scalar_t>::ormqr(&side, &trans, &mi, &ni, &ki, nullptr, &lda, nullptr, nullptr, &ldc, &query, &lwork, &info);
    lwork = workspaceSize(query);
    std::vector<scalar_t> work(lwork);
    for (int64_t b = 0; b < batch && rows > 0 && cols > 0; ++b) {
      Lapack<scalar_t>::ormqr(&side, &trans, &mi, &ni, &ki, a.data<scalar_t>() + b * a_rows * a_cols, &lda,
                              t.data<scalar_t>() + b * k, c.data<scalar_t>() + b * rows * cols, &ldc, work.data(),
                              &lwork, &info);
    }
  });
  return asMatrices(c);
}

std::tuple<Tensor, Tensor, Tensor, Tensor> lapackSvd(const Tensor& A, bool full_matrices, bool compute_uv) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), batch = batchCount(A);
  const DimVector shape = batchShape(A);
  const int64_t u_cols = full_matrices ? m : k, vh_rows = full_matrices ? n : k;
  Tensor a = columnMajorCopy(A);
  Tensor s = empty(IntArrayRef(withSizes(shape, {k})), A.dtype());
  Tensor u = compute_uv ? columnMajorEmpty(shape, m, u_cols, A.dtype()) : empty({0}, A.dtype());
  Tensor vh = compute_uv ? columnMajorEmpty(shape, vh_rows, n, A.dtype()) : empty({0}, A.dtype());
  Tensor info = zeros(IntArrayRef(shape), ScalarType::Int);
  if (compute_uv && k == 0) {
    // Nothing for LAPACK to do; the full bases of an empty matrix are identities.
    fill_(u, 0);
    fill_(vh, 0);
    if (full_matrices) {
      Tensor u_diagonal = diagonal(asMatrices(u), 0, -2, -1), vh_diagonal = diagonal(asMatrices(vh), 0, -2, -1);
      fill_(u_diagonal, 1);
      fill_(vh_diagonal, 1);
    }
  }
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg_svd_cpu", [&] {
    if (k == 0) return;
    const char jobz = !compute_uv ? 'N' : full_matrices ? 'A' : 'S';
    const int mi = lapackInt(m), ni = lapackInt(n), lda = leading(m), ldu = leading(m), ldvt = leading(vh_rows);
    std::vector<int> iwork(8 * k);
    int info_query = 0, lwork = -1;
    scalar_t query = 0;
    Lapack<scalar_t>::gesdd(&jobz, &mi, &ni, nullptr, &lda, nullptr, nullptr, &ldu, nullptr, &ldvt, &query, &lwork,
                            iwork.data(), &info_query);
    lwork = workspaceSize(query);
    std::vector<scalar_t> work(lwork);
    for (int64_t b = 0; b < batch; ++b) {
      Lapack<scalar_t>::gesdd(&jobz, &mi, &ni, a.data<scalar_t>() + b * m * n, &lda, s.data<scalar_t>() + b * k,
                              compute_uv ? u.data<scalar_t>() + b * m * u_cols : nullptr, &ldu,
                              compute_uv ? vh.data<scalar_t>() + b * vh_rows * n : nullptr, &ldvt, work.data(), &lwork,
                              iwork.data(), info.data<int32_t>() + b);
    }
  });
  return {compute_uv ? asMatrices(u) : u, s, compute_uv ? asMatrices(vh) : vh, info};
}

std::tuple<Tensor, Tensor, Tensor> lapackLdlFactor(const Tensor& A) {
  const int64_t n = A.size(-1), batch = batchCount(A);
  Tensor ld = columnMajorCopy(A);
  Tensor pivots = empty(IntArrayRef(withSizes(batchShape(A), {n})), ScalarType::Int);
  Tensor info = zeros(IntArrayRef(batchShape(A)), ScalarType::Int);
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg_ldl_factor_cpu", [&] {
    if (n == 0) return;
    const char uplo = 'L';
    const int ni = lapackInt(n), lda = leading(n);
    int info_query = 0, lwork = -1;
    scalar_t query = 0;
    Lapack<scalar_t>::sytrf(&uplo, &ni, nullptr, &lda, nullptr, &query, &lwork, &info_query);
    lwork = workspaceSize(query);
    std::vector<scalar_t> work(lwork);
    for (int64_t b = 0; b < batch; ++b) {
      Lapack<scalar_t>::sytrf(&uplo, &ni, ld.data<scalar_t>() + b * n * n, &lda, pivots.data<int32_t>() + b * n,
                              work.data(), &lwork, info.data<int32_t>() + b);
    }
    // sytrf leaves the upper triangle as it was.
    fillOtherTriangle(ld.data<scalar_t>(), batch, n, /*upper=*/false, /*mirror=*/false);
  });
  return {asMatrices(ld), pivots, info};
}

Tensor lapackLdlSolve(const Tensor& LD, const Tensor& pivots, const Tensor& B) {
  const int64_t n = LD.size(-1), k = B.size(-1), batch = batchCount(LD);
  Tensor ld = columnMajorCopy(LD);
  Tensor piv = contiguous(pivots);
  Tensor x = columnMajorCopy(B);
  KILN_DISPATCH_FLOATING_TYPES(LD.dtype(), "linalg_ldl_solve_cpu", [&] {
    const char uplo = 'L';
    const int ni = lapackInt(n), nrhs = lapackInt(k), ld_ = leading(n);
    int info = 0;
    for (int64_t b = 0; b < batch && n > 0 && k > 0; ++b) {
      Lapack<scalar_t>::sytrs(&uplo, &ni, &nrhs, ld.data<scalar_t>() + b * n * n, &ld_, piv.data<int32_t>() + b * n,
                              x.data<scalar_t>() + b * n * k, &ld_, &info);
    }
  });
  return asMatrices(x);
}

std::tuple<Tensor, Tensor, Tensor> lapackEigh(const Tensor& A, bool upper, bool compute_v) {
  const int64_t n = A.size(-1), batch = batchCount(A);
  Tensor a = columnMajorCopy(A);
  Tensor w = empty(IntArrayRef(withSizes(batchShape(A), {n})), A.dtype());
  Tensor info = zeros(IntArrayRef(batchShape(A)), ScalarType::Int);
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg_eigh_cpu", [&] {
    if (n == 0) return;
    const char jobz = compute_v ? 'V' : 'N', uplo = upper ? 'U' : 'L';
    const int ni = lapackInt(n), lda = leading(n);
    int info_query = 0, lwork = -1, liwork = -1, iquery = 0;
    scalar_t query = 0;
    Lapack<scalar_t>::syevd(&jobz, &uplo, &ni, nullptr, &lda, nullptr, &query, &lwork, &iquery, &liwork, &info_query);
    lwork = workspaceSize(query);
    liwork = std::max(1, iquery);
    std::vector<scalar_t> work(lwork);
    std::vector<int> iwork(liwork);
    for (int64_t b = 0; b < batch; ++b) {
      Lapack<scalar_t>::syevd(&jobz, &uplo, &ni, a.data<scalar_t>() + b * n * n, &lda, w.data<scalar_t>() + b * n,
                              work.data(), &lwork, iwork.data(), &liwork, info.data<int32_t>() + b);
    }
  });
  return {w, compute_v ? asMatrices(a) : empty({0}, A.dtype()), info};
}

std::tuple<Tensor, Tensor, Tensor> lapackEig(const Tensor& A, bool compute_v) {
  const int64_t n = A.size(-1), batch = batchCount(A);
  const DimVector shape = batchShape(A);
  const ScalarType complex = toComplexType(A.dtype());
  Tensor a = columnMajorCopy(A);
  Tensor values = empty(IntArrayRef(withSizes(shape, {n})), complex);
  Tensor vectors = compute_v ? columnMajorEmpty(shape, n, n, complex) : empty({0}, complex);
  Tensor info = zeros(IntArrayRef(shape), ScalarType::Int);
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg_eig_cpu", [&] {
    if (n == 0) return;
    using Complex = std::complex<scalar_t>;
    const char jobvl = 'N', jobvr = compute_v ? 'V' : 'N';
    const int ni = lapackInt(n), lda = leading(n), ldvl = 1, ldvr = leading(n);
    int info_query = 0, lwork = -1;
    scalar_t query = 0;
    Lapack<scalar_t>::geev(&jobvl, &jobvr, &ni, nullptr, &lda, nullptr, nullptr, nullptr, &ldvl, nullptr, &ldvr, &query,
                           &lwork, &info_query);
    lwork = workspaceSize(query);
    std::vector<scalar_t> work(lwork), wr(n), wi(n), vr(compute_v ? n * n : 1);
    for (int64_t b = 0; b < batch; ++b) {
      Lapack<scalar_t>::geev(&jobvl, &jobvr, &ni, a.data<scalar_t>() + b * n * n, &lda, wr.data(), wi.data(), nullptr,
                             &ldvl, vr.data(), &ldvr, work.data(), &lwork, info.data<int32_t>() + b);
      Complex* w = values.data<Complex>() + b * n;
      for (int64_t j = 0; j < n; ++j) w[j] = Complex(wr[j], wi[j]);
      if (!compute_v) continue;
      // A complex pair's vectors are stored as the real and imaginary parts
      // in columns j and j + 1 (LAPACK's geev convention).
      Complex* v = vectors.data<Complex>() + b * n * n;
      for (int64_t j = 0; j < n; ++j) {
        const bool pair = wi[j] != 0 && j + 1 < n;
        for (int64_t i = 0; i < n; ++i) {
          if (!pair) {
            v[i + j * n] = Complex(vr[i + j * n], 0);
          } else {
            v[i + j * n] = Complex(vr[i + j * n], vr[i + (j + 1) * n]);
            v[i + (j + 1) * n] = std::conj(v[i + j * n]);
          }
        }
        if (pair) ++j;
      }
    }
  });
  return {values, compute_v ? asMatrices(vectors) : vectors, info};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> lapackLstsq(const Tensor& A, const Tensor& B, double rcond,
                                                       LstsqDriver driver) {
  const int64_t m = A.size(-2), n = A.size(-1), k = B.size(-1), rows = std::max(m, n), batch = batchCount(A);
  const DimVector shape = batchShape(A);
  Tensor a = columnMajorCopy(A);
  // LAPACK writes X (n rows) over B (m rows): the buffer holds the larger.
  Tensor x = columnMajorEmpty(shape, rows, k, B.dtype());
  fill_(x, 0);
  Tensor b_rows = narrow(asMatrices(x), -2, 0, m);
  copy_(b_rows, B);
  const bool has_rank = driver != LstsqDriver::Gels;
  const bool has_values = driver == LstsqDriver::Gelsd || driver == LstsqDriver::Gelss;
  Tensor rank = has_rank ? zeros(IntArrayRef(shape), ScalarType::Long) : empty({0}, ScalarType::Long);
  Tensor values =
      has_values ? zeros(IntArrayRef(withSizes(shape, {std::min(m, n)})), A.dtype()) : empty({0}, A.dtype());
  Tensor info = zeros(IntArrayRef(shape), ScalarType::Int);
  KILN_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg_lstsq_cpu", [&] {
    if (m == 0 || n == 0 || k == 0) return;
    using L = Lapack<scalar_t>;
    const int mi = lapackInt(m), ni = lapackInt(n), nrhs = lapackInt(k), lda = leading(m), ldb = leading(rows);
    const scalar_t rc = static_cast<scalar_t>(rcond);
    const char trans = 'N';
    std::vector<int> jpvt(n);
    int rank_b = 0, info_query = 0, lwork = -1, iquery = 0;
    scalar_t query = 0;
    switch (driver) {
      case LstsqDriver::Gels:
        L::gels(&trans, &mi, &ni, &nrhs, nullptr, &lda, nullptr, &ldb, &query, &lwork, &info_query);
        break;
      case LstsqDriver::Gelsy:
        L::gelsy(&mi, &ni, &nrhs, nullptr, &lda, nullptr, &ldb, nullptr, &rc, &rank_b, &query, &lwork, &info_query);
        break;
      case LstsqDriver::Gelsd:
        L::gelsd(&mi, &ni, &nrhs, nullptr, &lda, nullptr, &ldb, nullptr, &rc, &rank_b, &query, &lwork, &iquery,
                 &info_query);
        break;
      case LstsqDriver::Gelss:
        L::gelss(&mi, &ni, &nrhs, nullptr, &lda, nullptr, &ldb, nullptr, &rc, &rank_b, &query, &lwork, &info_query);
        break;
    }
    lwork = workspaceSize(query);
    std::vector<scalar_t> work(lwork);
    std::vector<int> iwork(std::max(1, iquery));
    for (int64_t b = 0; b < batch; ++b) {
      scalar_t* ab = a.data<scalar_t>() + b * m * n;
      scalar_t* xb = x.data<scalar_t>() + b * rows * k;
      scalar_t* sb = has_values ? values.data<scalar_t>() + b * std::min(m, n) : nullptr;
      int* info_b = info.data<int32_t>() + b;
      switch (driver) {
        case LstsqDriver::Gels:
          L::gels(&trans, &mi, &ni, &nrhs, ab, &lda, xb, &ldb, work.data(), &lwork, info_b);
          break;
        case LstsqDriver::Gelsy:
          std::fill(jpvt.begin(), jpvt.end(), 0);  // every column free to move
          L::gelsy(&mi, &ni, &nrhs, ab, &lda, xb, &ldb, jpvt.data(), &rc, &rank_b, work.data(), &lwork, info_b);
          break;
        case LstsqDriver::Gelsd:
          L::gelsd(&mi, &ni, &nrhs, ab, &lda, xb, &ldb, sb, &rc, &rank_b, work.data(), &lwork, iwork.data(), info_b);
          break;
        case LstsqDriver::Gelss:
          L::gelss(&mi, &ni, &nrhs, ab, &lda, xb, &ldb, sb, &rc, &rank_b, work.data(), &lwork, info_b);
          break;
      }
      if (has_rank) rank.data<int64_t>()[b] = rank_b;
    }
  });
  return {asMatrices(x), rank, values, info};
}

}  // namespace kiln
