#pragma once
// Batched LAPACK: the factorizations and solvers under torch.linalg. Each
// function takes float32 or float64 tensors whose last two dims are the
// matrices and whose leading (batch) dims, where there are two operands,
// are already the same; it works on a column-major copy of every matrix
// (LAPACK's layout, which it overwrites) and returns new tensors, matrices
// as column-major views ([..., rows, cols] with strides (1, rows)), the
// layout torch's CPU results have too. Argument checks and torch's error
// messages belong to the operators (kiln/ops/linalg_more_ops.cpp); these
// functions report LAPACK's `info` per matrix (int32, the batch shape) and
// raise only on what LAPACK itself rejects.
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

// P A = L U with partial pivoting (getrf) of A (*, m, n): (LU, pivots, info),
// pivots int32 (*, min(m, n)) and 1-based, info > 0 where U[info-1, info-1] is 0.
std::tuple<Tensor, Tensor, Tensor> lapackLuFactor(const Tensor& A);
// Solves A X = B, or A^T X = B with `transpose`, from getrf's factors (getrs);
// LU (*, n, n), pivots (*, n), B (*, n, k).
Tensor lapackLuSolve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool transpose);
// The Cholesky factor (potrf) of the symmetric A (*, n, n), read from its
// lower (or `upper`) triangle: (L or U with the other triangle zero, info),
// info > 0 where the leading minor of that order is not positive-definite.
std::tuple<Tensor, Tensor> lapackCholesky(const Tensor& A, bool upper);
// Solves A X = B from A's Cholesky factor (potrs); factor (*, n, n), B (*, n, k).
Tensor lapackCholeskySolve(const Tensor& B, const Tensor& factor, bool upper);
// A^-1 from A's Cholesky factor (potri), both triangles filled.
Tensor lapackCholeskyInverse(const Tensor& factor, bool upper);
// Solves op(A) X = B (`left`) or X op(A) = B with the triangular A (trsm),
// op(A) = A^T with `transpose`; a zero on the diagonal gives inf/nan, as in torch.
Tensor lapackTriangularSolve(const Tensor& A, const Tensor& B, bool upper, bool left, bool transpose,
                             bool unitriangular);
// Householder QR (geqrf) of A (*, m, n): (R and the reflectors below it, tau (*, min(m, n))).
std::tuple<Tensor, Tensor> lapackGeqrf(const Tensor& A);
// The first n columns of the product of the k reflectors of A (*, m, n), tau (*, k) (orgqr).
Tensor lapackOrgqr(const Tensor& A, const Tensor& tau);
// op(Q) C or C op(Q) (`left`), Q the product of the reflectors in A and tau (ormqr).
Tensor lapackOrmqr(const Tensor& A, const Tensor& tau, const Tensor& C, bool left, bool transpose);
// A = U diag(S) Vh (gesdd): U (*, m, m or k), S (*, k), Vh (*, n or k, n),
// k = min(m, n); without `compute_uv`, U and Vh are empty (shape [0]).
// The last result is info (> 0: no convergence).
std::tuple<Tensor, Tensor, Tensor, Tensor> lapackSvd(const Tensor& A, bool full_matrices, bool compute_uv);
// Bunch-Kaufman LDL^T of the symmetric A (*, n, n) read from its lower
// triangle (sytrf): (LD lower, pivots int32 (*, n) in LAPACK's signed
// convention, info).
std::tuple<Tensor, Tensor, Tensor> lapackLdlFactor(const Tensor& A);
// Solves A X = B from sytrf's factors (sytrs); LD (*, n, n), B (*, n, k).
Tensor lapackLdlSolve(const Tensor& LD, const Tensor& pivots, const Tensor& B);
// Eigen-decomposition of the symmetric A read from one triangle (syevd):
// (eigenvalues ascending, eigenvectors in columns or empty, info).
std::tuple<Tensor, Tensor, Tensor> lapackEigh(const Tensor& A, bool upper, bool compute_v);
// Eigen-decomposition of a general real A (geev): complex eigenvalues (*, n)
// and right eigenvectors (*, n, n, unit norm) or empty, and info.
std::tuple<Tensor, Tensor, Tensor> lapackEig(const Tensor& A, bool compute_v);

enum class LstsqDriver { Gels, Gelsy, Gelsd, Gelss };
// Least squares min ||A X - B|| of A (*, m, n), B (*, m, k): (the (*, max(m, n), k)
// buffer LAPACK leaves, X in its first n rows; rank (int64, *) but for gels;
// singular values (*, min(m, n)) for gelsd and gelss; info).
std::tuple<Tensor, Tensor, Tensor, Tensor> lapackLstsq(const Tensor& A, const Tensor& B, double rcond,
                                                       LstsqDriver driver);

}  // namespace kiln
