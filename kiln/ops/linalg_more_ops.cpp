// torch.linalg and its legacy names, with PyTorch 1.13's schemas, over the
// batched LAPACK calls of kiln/tensor/lapack.h. As in torch, a few operators
// are primitives with derivative formulas (linalg_lu_factor_ex, _linalg_det,
// _linalg_slogdet, _linalg_solve_ex, linalg_inv_ex, linalg_cholesky_ex,
// linalg_qr, _linalg_svd, _linalg_eigh, ...; the formulas' helpers are in
// kiln/autograd/formula_prelude_linalg.cpp) and the rest are composed of
// them through the dispatcher (callOp below), so that autograd records the
// same primitives torch's grad_fns name.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kiln/core/op_registration.h"
#include "kiln/ops/composite.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/lapack.h"
#include "kiln/tensor/linalg.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using Dtype = std::optional<ScalarType>;
using Tensor2 = std::tuple<Tensor, Tensor>;
using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;
using Tensor4 = std::tuple<Tensor, Tensor, Tensor, Tensor>;

// ---- argument checks, with torch's messages ----

void checkFloating(const Tensor& A, const char* fn) {
  KILN_CHECK(isFloatingType(A.dtype()) || isComplexType(A.dtype()), fn,
             ": Expected a floating point or complex tensor as input. Got ", scalarTypeShortName(A.dtype()));
}

void checkMatrix(const Tensor& A, const char* fn, const char* name = "A") {
  KILN_CHECK(A.dim() >= 2, fn, ": The input tensor ", name, " must have at least 2 dimensions.");
}

void checkSquare(const Tensor& A, const char* fn, const char* name = "A") {
  checkMatrix(A, fn, name);
  KILN_CHECK(A.size(-1) == A.size(-2), fn, ": ", name, " must be batches of square matrices, but they are ", A.size(-2),
             " by ", A.size(-1), " matrices");
}

void checkSameDtype(const Tensor& A, const Tensor& B, const char* fn, const char* a = "A", const char* b = "B") {
  KILN_CHECK(A.dtype() == B.dtype(), fn, ": Expected ", a, " and ", b, " to have the same dtype, but found ", a,
             " of type ", scalarTypeShortName(A.dtype()), " and ", b, " of type ", scalarTypeShortName(B.dtype()),
             " instead");
}

// What a LAPACK `info` code means, worded by the API that failed, as torch's
// _linalg_check_errors words it.
std::string linalgErrorMessage(const std::string& api, int32_t code) {
  const std::string c = std::to_string(code);
  auto names = [&](const char* part) { return api.find(part) != std::string::npos; };
  // LAPACK's gesdd rejects a matrix holding NaN or inf as its 4th argument.
  if (code == -4 && names("svd")) {
    return "The algorithm failed to converge because the input matrix contained non-finite values.";
  }
  if (code < 0) {
    return "Argument " + std::to_string(-code) +
           " has illegal value. Most certainly there is a bug in the implementation calling the backend library.";
  }
  if (names("inv")) {
    return "The diagonal element " + c +
           " is zero, the inversion could not be completed because the input matrix "
           "is singular.";
  }
  if (names("solve")) return "The solver failed because the input matrix is singular.";
  if (names("cholesky")) {
    return "The factorization could not be completed because the input is not positive-definite (the leading minor "
           "of order " +
           c + " is not positive-definite).";
  }
  if (names("svd")) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "singular values (error code: " +
           c + ").";
  }
  if (names("eig") || names("syevd")) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "eigenvalues (error code: " +
           c + ").";
  }
  if (names("lstsq")) {
    return "The least squares solution could not be computed because the input matrix does not have full rank (error "
           "code: " +
           c + ").";
  }
  if (names("lu_factor")) {
    return "U[" + c + "," + c +
           "] is zero and using it on lu_solve would result in a division by zero. If you still "
           "want to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)";
  }
  return "Unknown error code: " + c + ".";
}

// Raises for the first matrix whose `info` is not 0, as torch's
// _linalg_check_errors: "api: (Batch element i): what went wrong".
void checkLinalgErrors(const Tensor& info, const std::string& api, bool is_matrix) {
  Tensor flat = contiguous(info);
  const int32_t* codes = flat.data<int32_t>();
  for (int64_t b = 0; b < flat.numel(); ++b) {
    if (codes[b] == 0) continue;
    std::string batch = is_matrix ? "" : "(Batch element " + std::to_string(b) + "): ";
    KILN_ERROR(api, ": ", batch, linalgErrorMessage(api, codes[b]));
  }
}

void checkInfo(const Tensor& info, const std::string& api) { checkLinalgErrors(info, api, info.dim() == 0); }

// ---- shapes ----

DimVector batchOf(const Tensor& t) { return DimVector(t.sizes().begin(), t.sizes().end() - 2); }

DimVector withMatrix(DimVector batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

// A and B with their batch dims broadcast to a common shape.
Tensor2 broadcastBatch(const Tensor& A, const Tensor& B, const char* fn) {
  DimVector batch = broadcastShapes(IntArrayRef(batchOf(A)), IntArrayRef(batchOf(B)), fn);
  return {expand(A, IntArrayRef(withMatrix(batch, A.size(-2), A.size(-1)))),
          expand(B, IntArrayRef(withMatrix(batch, B.size(-2), B.size(-1))))};
}

Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }

// torch's rule for a right-hand side given as a vector: B (*, n) against A (*, n, n).
bool isVectorRhs(const Tensor& A, const Tensor& B) {
  if (B.dim() == 1) return true;
  if (B.dim() != A.dim() - 1) return false;
  for (int64_t i = 0; i < B.dim(); ++i) {
    if (B.size(i) != A.size(i)) return false;
  }
  return true;
}

// Calls aten::name.overload through the dispatcher, so that autograd records it.
Stack callOp(std::string_view name, std::string_view overload, Stack args) {
  return composite::call(name, overload, std::move(args));
}
Tensor callTensor(std::string_view name, std::string_view overload, Stack args) {
  return callOp(name, overload, std::move(args)).at(0).toTensor();
}

// ---- LU ----

Tensor3 luFactorEx(const Tensor& A, bool pivot, bool check_errors) {
  KILN_CHECK(A.dim() >= 2,
             "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: ", shapeString(A.sizes()),
             " instead");
  KILN_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  auto result = lapackLuFactor(A);
  if (check_errors) checkInfo(std::get<2>(result), "torch.linalg.lu_factor_ex");
  return result;
}

// (sign of the permutation, as A's dtype) of getrf's 1-based pivots.
Tensor pivotSign(const Tensor& pivots, ScalarType dtype) {
  Tensor flat = contiguous(pivots);
  const int64_t k = pivots.size(-1);
  DimVector shape(pivots.sizes().begin(), pivots.sizes().end() - 1);
  Tensor sign = empty(IntArrayRef(shape), ScalarType::Double);
  const int32_t* p = flat.data<int32_t>();
  for (int64_t b = 0; b < shapeNumel(IntArrayRef(shape)); ++b) {
    double s = 1;
    for (int64_t i = 0; i < k; ++i) s = p[b * k + i] != i + 1 ? -s : s;
    sign.data<double>()[b] = s;
  }
  return to(sign, dtype);
}

// The permutation matrices P of getrf's pivots (A = P L U), m x m.
Tensor permutationMatrices(const Tensor& pivots, int64_t m, ScalarType dtype) {
  Tensor flat = contiguous(pivots);
  const int64_t k = pivots.size(-1);
  DimVector batch(pivots.sizes().begin(), pivots.sizes().end() - 1);
  Tensor P = zeros(IntArrayRef(withMatrix(batch, m, m)), ScalarType::Double);
  std::vector<int64_t> perm(m);
  for (int64_t b = 0; b < shapeNumel(IntArrayRef(batch)); ++b) {
    for (int64_t i = 0; i < m; ++i) perm[i] = i;
    for (int64_t i = 0; i < k; ++i) {
      int64_t j = flat.data<int32_t>()[b * k + i] - 1;
      KILN_CHECK(j >= i && j < m, "lu_unpack: pivots must be 1-based row indices not below their position, got ", j + 1,
                 " at position ", i + 1);
      std::swap(perm[i], perm[j]);
    }
    double* p = P.data<double>() + b * m * m;
    for (int64_t i = 0; i < m; ++i) p[perm[i] * m + i] = 1;
  }
  return to(P, dtype);
}

Tensor3 luUnpack(const Tensor& LU, const Tensor& pivots, bool unpack_data, bool unpack_pivots) {
  KILN_CHECK(LU.dim() >= 2,
             "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: ", shapeString(LU.sizes()),
             " instead");
  KILN_CHECK(pivots.dtype() == ScalarType::Int,
             "lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. Note: this function "
             "is intended to be used with the output produced by torch.linalg.lu_factor");
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  DimVector expected = batchOf(LU);
  expected.push_back(k);
  KILN_CHECK(pivots.sizes() == IntArrayRef(expected), "torch.lu_unpack: Expected LU_pivots of shape ",
             shapeString(IntArrayRef(expected)), " (LU_data.shape[:-2] + [min(m, n)]), but got ",
             shapeString(pivots.sizes()));
  Tensor L = empty({0}, LU.dtype()), U = empty({0}, LU.dtype()), P = empty({0}, LU.dtype());
  if (unpack_data) {
    L = add(tril(narrow(LU, -1, 0, k), -1), eye(m, k, LU.dtype()));
    U = triu(narrow(LU, -2, 0, k));
  }
  if (unpack_pivots) P = permutationMatrices(pivots, m, LU.dtype());
  return {P, L, U};
}

// getrs swaps rows by the pivots: each must name a row, 1..n.
void checkPivotRange(const Tensor& pivots, int64_t n, const char* fn) {
  Tensor flat = contiguous(pivots);
  const int32_t* p = flat.data<int32_t>();
  for (int64_t i = 0; i < flat.numel(); ++i) {
    KILN_CHECK(p[i] >= 1 && p[i] <= n, fn, ": pivots must be 1-based row indices between 1 and ", n, ", got ", p[i]);
  }
}

Tensor luSolve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  checkSquare(LU, "linalg.lu_solve", "LU");
  checkMatrix(B, "linalg.lu_solve", "B");
  checkSameDtype(LU, B, "linalg.lu_solve", "LU", "B");
  KILN_CHECK(pivots.dtype() == ScalarType::Int,
             "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32");
  const int64_t n = LU.size(-1);
  KILN_CHECK(pivots.dim() >= 1 && pivots.size(-1) == n,
             "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix");
  checkPivotRange(pivots, n, "linalg.lu_solve");
  KILN_CHECK(left ? B.size(-2) == n : B.size(-1) == n,
             "linalg.lu_solve: Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B", " (", n,
             "x", n, " and ", B.size(-2), "x", B.size(-1), ")");
  // X A = B is A^T X^T = B^T: a left solve with the other transpose.
  Tensor rhs = left ? B : mT(B);
  auto [lu, b] = broadcastBatch(LU, rhs, "linalg.lu_solve");
  DimVector pivots_shape = batchOf(lu);
  pivots_shape.push_back(n);
  // getrs: A^T X = B when left == adjoint (A^H X = B, or X A = B transposed).
  Tensor X = lapackLuSolve(lu, expand(pivots, IntArrayRef(pivots_shape)), b, left == adjoint);
  return left ? X : mT(X);
}

// ---- solve, inverse, determinants ----

Tensor4 linalgSolveEx(const Tensor& A, const Tensor& B, bool left, bool check_errors) {
  checkFloating(A, "linalg.solve");
  checkSameDtype(A, B, "linalg.solve");
  checkSquare(A, "linalg.solve");
  const bool vector = isVectorRhs(A, B);
  KILN_CHECK(left || !vector,
             "linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. In this case "
             "linalg.solve is equivalent to B / A.squeeze(-1)");
  Tensor rhs = vector ? unsqueeze(B, -1) : B;
  const int64_t n = A.size(-1);
  KILN_CHECK(rhs.dim() >= 2 && (left ? rhs.size(-2) : rhs.size(-1)) == n,
             "linalg.solve: Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B", " (", n, "x",
             n, " and ", rhs.size(-2), "x", rhs.size(-1), ")");
  auto [LU, pivots, info] = lapackLuFactor(A);
  if (check_errors) checkInfo(info, "torch.linalg.solve_ex");
  Tensor X = luSolve(LU, pivots, rhs, left, false);
  if (vector) X = squeeze(X, -1);
  return {X, LU, pivots, info};
}

Tensor linalgSolve(const Tensor& A, const Tensor& B, bool left) {
  Stack out = callOp("aten::_linalg_solve_ex", "", {IValue(A), IValue(B), IValue(left), IValue(false)});
  checkInfo(out.at(3).toTensor(), "torch.linalg.solve");
  return out.at(0).toTensor();
}

Tensor2 linalgInvEx(const Tensor& A, bool check_errors) {
  checkMatrix(A, "linalg.inv");
  checkFloating(A, "linalg.inv");
  checkSquare(A, "linalg.inv");
  auto [LU, pivots, info] = lapackLuFactor(A);
  if (check_errors) checkInfo(info, "linalg.inv_ex");
  Tensor identity = expand(eye(A.size(-1), A.size(-1), A.dtype()), A.sizes());
  return {luSolve(LU, pivots, identity, true, false), info};
}

Tensor linalgInv(const Tensor& A) {
  Stack out = callOp("aten::linalg_inv_ex", "", {IValue(A), IValue(false)});
  checkInfo(out.at(1).toTensor(), "linalg.inv");
  return out.at(0).toTensor();
}

Tensor3 linalgDetWithLu(const Tensor& A) {
  checkMatrix(A, "linalg.det");
  checkFloating(A, "linalg.det");
  checkSquare(A, "linalg.det");
  auto [LU, pivots, info] = lapackLuFactor(A);
  Tensor det = mul(prod(diagonal(LU, 0, -2, -1), -1), pivotSign(pivots, A.dtype()));
  return {det, LU, pivots};
}

Tensor linalgDet(const Tensor& A) { return callTensor("aten::_linalg_det", "", {IValue(A)}); }

Tensor4 linalgSlogdetWithLu(const Tensor& A, const char* fn) {
  checkMatrix(A, fn);
  checkFloating(A, fn);
  checkSquare(A, fn);
  auto [LU, pivots, info] = lapackLuFactor(A);
  Tensor diag = diagonal(LU, 0, -2, -1);
  Tensor sign_ = mul(prod(kiln::sign(diag), -1), pivotSign(pivots, A.dtype()));
  Tensor logabsdet = sum(log(abs(diag)), IntArrayRef({-1}));
  return {sign_, logabsdet, LU, pivots};
}

Tensor2 linalgSlogdet(const Tensor& A) {
  Stack out = callOp("aten::_linalg_slogdet", "", {IValue(A)});
  return {out.at(0).toTensor(), out.at(1).toTensor()};
}

Tensor logdet(const Tensor& A) {
  checkMatrix(A, "logdet");
  checkFloating(A, "logdet");
  checkSquare(A, "logdet");
  // As torch: nan where the determinant is negative.
  auto [sign_, logabsdet] = linalgSlogdet(A);
  Tensor negative = eq(sign_, scalarToTensor(Scalar(-1.0)));
  return callTensor("aten::where", "ScalarSelf", {IValue(negative), IValue(Scalar(std::nan(""))), IValue(logabsdet)});
}

// ---- Cholesky and triangular solves ----

Tensor2 choleskyEx(const Tensor& A, bool upper, bool check_errors, const char* fn) {
  checkMatrix(A, fn);
  checkFloating(A, fn);
  checkSquare(A, fn);
  auto result = lapackCholesky(A, upper);
  if (check_errors) checkInfo(std::get<1>(result), fn);
  return result;
}

Tensor linalgCholesky(const Tensor& A, bool upper) {
  checkMatrix(A, "linalg.cholesky");
  checkFloating(A, "linalg.cholesky");
  checkSquare(A, "linalg.cholesky");
  Stack out = callOp("aten::linalg_cholesky_ex", "", {IValue(A), IValue(upper), IValue(false)});
  checkInfo(out.at(1).toTensor(), "linalg.cholesky");
  return out.at(0).toTensor();
}

Tensor choleskySolve(const Tensor& B, const Tensor& factor, bool upper) {
  KILN_CHECK(B.dim() >= 2, "b should have at least 2 dimensions, but has ", B.dim(), " dimensions instead");
  KILN_CHECK(factor.dim() >= 2, "u should have at least 2 dimensions, but has ", factor.dim(), " dimensions instead");
  checkSameDtype(B, factor, "cholesky_solve", "self", "input2");
  checkSquare(factor, "cholesky_solve", "input2");
  KILN_CHECK(B.size(-2) == factor.size(-1), "Incompatible matrix sizes for cholesky_solve: each A matrix is ",
             factor.size(-1), " by ", factor.size(-1), " but each b matrix is ", B.size(-2), " by ", B.size(-1));
  auto [b, f] = broadcastBatch(B, factor, "cholesky_solve");
  return lapackCholeskySolve(b, f, upper);
}

Tensor choleskyInverse(const Tensor& factor, bool upper) {
  checkMatrix(factor, "cholesky_inverse", "input");
  checkFloating(factor, "cholesky_inverse");
  checkSquare(factor, "cholesky_inverse", "input");
  return lapackCholeskyInverse(factor, upper);
}

Tensor solveTriangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  checkMatrix(A, "linalg.solve_triangular");
  checkMatrix(B, "linalg.solve_triangular", "B");
  checkSameDtype(A, B, "linalg.solve_triangular");
  checkSquare(A, "linalg.solve_triangular");
  const int64_t n = A.size(-1);
  KILN_CHECK(left ? B.size(-2) == n : B.size(-1) == n,
             "linalg.solve_triangular: Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B",
             " (", n, "x", n, " and ", B.size(-2), "x", B.size(-1), ")");
  auto [a, b] = broadcastBatch(A, B, "linalg.solve_triangular");
  return lapackTriangularSolve(a, b, upper, left, /*transpose=*/false, unitriangular);
}

Tensor2 triangularSolve(const Tensor& B, const Tensor& A, bool upper, bool transpose, bool unitriangular) {
  KILN_CHECK(B.dim() >= 2, "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has ", B.dim(),
             " dimensions instead");
  KILN_CHECK(A.dim() >= 2, "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has ", A.dim(),
             " dimensions instead");
  checkSameDtype(B, A, "triangular_solve", "self", "A");
  checkSquare(A, "triangular_solve");
  KILN_CHECK(B.size(-2) == A.size(-1), "Incompatible matrix sizes for triangular_solve: each A matrix is ", A.size(-1),
             " by ", A.size(-1), " but each b matrix is ", B.size(-2), " by ", B.size(-1));
  auto [b, a] = broadcastBatch(B, A, "triangular_solve");
  return {lapackTriangularSolve(a, b, upper, true, transpose, unitriangular), clone(a)};
}

// ---- QR ----

Tensor2 linalgQr(const Tensor& A, const std::string& mode) {
  checkMatrix(A, "linalg.qr");
  checkFloating(A, "linalg.qr");
  KILN_CHECK(mode == "reduced" || mode == "complete" || mode == "r", "qr received unrecognized mode '", mode,
             "' but expected one of 'reduced' (default), 'r', or 'complete'");
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  auto [a, tau] = lapackGeqrf(A);
  const bool complete = mode == "complete" && m > n;
  Tensor R = triu(narrow(a, -2, 0, complete ? m : k));
  if (mode == "r") return {empty({0}, A.dtype()), R};
  // complete Q of a tall A: orgqr over m columns, the reflectors in the first n.
  Tensor reflectors =
      complete ? cat({a, zeros(IntArrayRef(withMatrix(batchOf(A), m, m - n)), A.dtype())}, -1) : narrow(a, -1, 0, k);
  return {lapackOrgqr(reflectors, tau), R};
}

// The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T with v_i the
// unit-diagonal column i of tril(A); LAPACK's orgqr. Under autograd the
// reflectors are applied one at a time through the dispatcher, and the
// gradient is that of the products (torch 1.13 has a formula that equals it).
Tensor householderProduct(const Tensor& A, const Tensor& tau) {
  checkMatrix(A, "torch.linalg.householder_product", "input");
  KILN_CHECK(tau.dim() >= 1, "torch.linalg.householder_product: input.dim() - tau.dim() must be 1");
  KILN_CHECK(A.size(-2) >= A.size(-1),
             "torch.linalg.householder_product: input.shape[-2] must be greater than or equal to input.shape[-1]");
  KILN_CHECK(A.size(-1) >= tau.size(-1),
             "torch.linalg.householder_product: input.shape[-1] must be greater than or equal to tau.shape[-1]");
  KILN_CHECK(A.dim() - tau.dim() == 1, "torch.linalg.householder_product: input.dim() - tau.dim() must be 1");
  for (int64_t i = 0; i + 2 < A.dim(); ++i) {
    KILN_CHECK(A.size(i) == tau.size(i),
               "torch.linalg.householder_product: Expected batch dimensions of tau to be equal to input.shape[:-2], "
               "but got ",
               shapeString(tau.sizes().slice(0, tau.dim() - 1)));
  }
  checkSameDtype(A, tau, "torch.linalg.householder_product", "input", "tau");
  if (!composite::recording({A, tau})) return lapackOrgqr(A, tau);
  const int64_t m = A.size(-2), n = A.size(-1);
  Tensor V = callTensor("aten::add", "Tensor",
                        {IValue(callTensor("aten::tril", "", {IValue(A), IValue(int64_t{-1})})),
                         IValue(eye(m, n, A.dtype())), IValue(Scalar(int64_t{1}))});
  Tensor Q = expand(eye(m, n, A.dtype()), A.sizes());
  for (int64_t i = tau.size(-1) - 1; i >= 0; --i) {
    Tensor v = callTensor("aten::narrow", "", {IValue(V), IValue(int64_t{-1}), IValue(i), IValue(int64_t{1})});
    Tensor t = callTensor("aten::narrow", "", {IValue(tau), IValue(int64_t{-1}), IValue(i), IValue(int64_t{1})});
    t = callTensor("aten::unsqueeze", "", {IValue(t), IValue(int64_t{-1})});
    Tensor vtQ =
        callTensor("aten::matmul", "",
                   {IValue(callTensor("aten::transpose", "int", {IValue(v), IValue(int64_t{-2}), IValue(int64_t{-1})})),
                    IValue(Q)});
    Tensor update = callTensor("aten::mul", "Tensor",
                               {IValue(t), IValue(callTensor("aten::matmul", "", {IValue(v), IValue(vtQ)}))});
    Q = callTensor("aten::sub", "Tensor", {IValue(Q), IValue(update), IValue(Scalar(int64_t{1}))});
  }
  return Q;
}

Tensor ormqr(const Tensor& A, const Tensor& tau, const Tensor& C, bool left, bool transpose) {
  KILN_CHECK(A.dim() >= 2, "torch.ormqr: input must have at least 2 dimensions.");
  KILN_CHECK(C.dim() >= 2, "torch.ormqr: other must have at least 2 dimensions.");
  const int64_t q = left ? C.size(-2) : C.size(-1);
  KILN_CHECK(A.size(-2) == q, "torch.ormqr: other.shape[", left ? -2 : -1, "] must be equal to input.shape[-2]");
  KILN_CHECK(tau.size(-1) <= A.size(-1), "torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]");
  KILN_CHECK(tau.size(-1) <= A.size(-2), "torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-2]");
  KILN_CHECK(A.dim() - tau.dim() == 1, "torch.ormqr: input.dim() - tau.dim() must be 1");
  KILN_CHECK(A.dim() == C.dim(), "torch.ormqr: input.dim() must be equal to other.dim()");
  for (int64_t i = 0; i + 2 < A.dim(); ++i) {
    KILN_CHECK(C.size(i) == A.size(i),
               "torch.ormqr: Expected batch dimensions of other to be equal to input.shape[:-2], "
               "but got ",
               shapeString(C.sizes().slice(0, C.dim() - 2)));
    KILN_CHECK(tau.size(i) == A.size(i),
               "torch.ormqr: Expected batch dimensions of tau to be equal to input.shape[:-2], "
               "but got ",
               shapeString(tau.sizes().slice(0, tau.dim() - 1)));
  }
  checkSameDtype(A, tau, "torch.ormqr", "input", "tau");
  checkSameDtype(A, C, "torch.ormqr", "input", "other");
  return lapackOrmqr(A, tau, C, left, transpose);
}

// ---- SVD and eigen-decompositions ----

Tensor3 linalgSvdPrimitive(const Tensor& A, bool full_matrices, bool compute_uv,
                           const std::optional<std::string>& driver) {
  checkMatrix(A, "linalg.svd");
  checkFloating(A, "linalg.svd");
  KILN_CHECK(!driver,
             "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER "
             "backend.");
  auto [U, S, Vh, info] = lapackSvd(A, full_matrices, compute_uv);
  checkInfo(info, "linalg.svd");
  return {U, S, Vh};
}

Tensor3 linalgSvd(const Tensor& A, bool full_matrices, const std::optional<std::string>& driver) {
  checkMatrix(A, "linalg.svd");
  Stack out = callOp("aten::_linalg_svd", "",
                     {IValue(A), IValue(full_matrices), IValue(true), driver ? IValue(*driver) : IValue()});
  return {out.at(0).toTensor(), out.at(1).toTensor(), out.at(2).toTensor()};
}

Tensor linalgSvdvals(const Tensor& A, const std::optional<std::string>& driver) {
  checkMatrix(A, "linalg.svdvals");
  // With gradients, the values come with the vectors their derivative needs.
  const bool uv = composite::recording({A});
  Stack out =
      callOp("aten::_linalg_svd", "", {IValue(A), IValue(false), IValue(uv), driver ? IValue(*driver) : IValue()});
  return out.at(1).toTensor();
}

// torch.svd: V rather than Vh, and zero-filled U and V without compute_uv.
Tensor3 legacySvd(const Tensor& A, bool some, bool compute_uv) {
  checkMatrix(A, "svd");
  if (!compute_uv) {
    const int64_t m = A.size(-2), n = A.size(-1);
    return {zeros(IntArrayRef(withMatrix(batchOf(A), m, m)), A.dtype()), linalgSvdvals(A, std::nullopt),
            zeros(IntArrayRef(withMatrix(batchOf(A), n, n)), A.dtype())};
  }
  auto [U, S, Vh] = linalgSvd(A, !some, std::nullopt);
  return {U, S, callTensor("aten::transpose", "int", {IValue(Vh), IValue(int64_t{-2}), IValue(int64_t{-1})})};
}

void checkUplo(const std::string& uplo) {
  KILN_CHECK(uplo == "L" || uplo == "l" || uplo == "U" || uplo == "u",
             "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
}

Tensor2 linalgEighPrimitive(const Tensor& A, const std::string& uplo, bool compute_v) {
  checkMatrix(A, "linalg.eigh");
  checkSquare(A, "linalg.eigh");
  checkUplo(uplo);
  auto [L, V, info] = lapackEigh(A, uplo == "U" || uplo == "u", compute_v);
  checkInfo(info, "linalg.eigh");
  return {L, V};
}

Tensor2 linalgEigh(const Tensor& A, const std::string& uplo) {
  checkMatrix(A, "linalg.eigh");
  Stack out = callOp("aten::_linalg_eigh", "", {IValue(A), IValue(uplo), IValue(true)});
  return {out.at(0).toTensor(), out.at(1).toTensor()};
}

Tensor linalgEigvalsh(const Tensor& A, const std::string& uplo) {
  checkMatrix(A, "linalg.eigvalsh");
  const bool v = composite::recording({A});
  Stack out = callOp("aten::_linalg_eigh", "", {IValue(A), IValue(uplo), IValue(v)});
  return out.at(0).toTensor();
}

Tensor2 linalgEig(const Tensor& A, bool compute_v) {
  checkMatrix(A, "linalg.eig");
  checkSquare(A, "linalg.eig");
  KILN_CHECK(isFloatingType(A.dtype()), "linalg.eig: Expected a floating point tensor as input. Got ",
             scalarTypeShortName(A.dtype()));
  auto [values, vectors, info] = lapackEig(A, compute_v);
  checkInfo(info, "linalg.eig");
  return {values, vectors};
}

// torch.symeig (deprecated in 1.13): eigh's values, and its vectors only when asked.
Tensor2 symeig(const Tensor& A, bool eigenvectors, bool upper) {
  checkMatrix(A, "linalg.eigh");
  Stack out =
      callOp("aten::_linalg_eigh", "", {IValue(A), IValue(std::string(upper ? "U" : "L")), IValue(eigenvectors)});
  return {out.at(0).toTensor(), out.at(1).toTensor()};
}

// ---- LDL^T ----

Tensor3 ldlFactorEx(const Tensor& A, bool hermitian, bool check_errors) {
  checkMatrix(A, "torch.linalg.ldl_factor_ex");
  checkSquare(A, "torch.linalg.ldl_factor_ex");
  checkFloating(A, "torch.linalg.ldl_factor_ex");
  // For real matrices symmetric and Hermitian are the same factorization.
  (void)hermitian;
  auto result = lapackLdlFactor(A);
  if (check_errors) checkInfo(std::get<2>(result), "torch.linalg.ldl_factor_ex");
  return result;
}

Tensor ldlSolve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  checkMatrix(LD, "torch.linalg.ldl_solve", "LD");
  checkSquare(LD, "torch.linalg.ldl_solve", "LD");
  checkFloating(LD, "torch.linalg.ldl_solve");
  KILN_CHECK(B.dim() >= 2, "torch.linalg.ldl_solve: Expected B to have at least 2 dimensions, but it has ", B.dim(),
             " dimensions instead");
  KILN_CHECK(pivots.dim() == LD.dim() - 1 && pivots.sizes() == LD.sizes().slice(0, LD.dim() - 1),
             "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
             "shape ",
             shapeString(pivots.sizes()), " instead");
  KILN_CHECK(isIntegralType(pivots.dtype(), false), "torch.linalg.ldl_solve: Expected pivots to be integers. Got ",
             scalarTypeName(pivots.dtype()));
  KILN_CHECK(LD.dtype() == B.dtype(), "torch.linalg.ldl_solve: LD dtype", scalarTypeName(LD.dtype()),
             " does not match b dtype ", scalarTypeName(B.dtype()));
  const int64_t n = LD.size(-1);
  KILN_CHECK(B.size(-2) == n, "torch.linalg.ldl_solve: Incompatible shapes of A and B for the equation AX = B (", n,
             "x", n, " and ", B.size(-2), "x", B.size(-1), ")");
  (void)hermitian;
  // sytrs follows the pivots (k or -k, a 1x1 or 2x2 block): each must name a row.
  Tensor piv = to(pivots, ScalarType::Int);
  Tensor flat = contiguous(piv);
  for (int64_t i = 0; i < flat.numel(); ++i) {
    const int32_t p = flat.data<int32_t>()[i];
    KILN_CHECK(p != 0 && std::abs(p) <= n, "torch.linalg.ldl_solve: pivots must be row indices between -", n, " and ",
               n, " other than 0, got ", p);
  }
  auto [ld, b] = broadcastBatch(LD, B, "torch.linalg.ldl_solve");
  DimVector pivots_shape = batchOf(ld);
  pivots_shape.push_back(n);
  return lapackLdlSolve(ld, expand(piv, IntArrayRef(pivots_shape)), b);
}

// ---- least squares, rank, pseudo-inverse ----

LstsqDriver lstsqDriver(const std::optional<std::string>& driver) {
  const std::string name = driver.value_or("gelsy");
  if (name == "gels") return LstsqDriver::Gels;
  if (name == "gelsy") return LstsqDriver::Gelsy;
  if (name == "gelsd") return LstsqDriver::Gelsd;
  if (name == "gelss") return LstsqDriver::Gelss;
  KILN_ERROR("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
}

Tensor4 linalgLstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond,
                    const std::optional<std::string>& driver_name) {
  KILN_CHECK(A.dim() >= 2, "torch.linalg.lstsq: input must have at least 2 dimensions.");
  KILN_CHECK(B.dim() >= 1, "torch.linalg.lstsq: other must have at least 1 dimension.");
  checkFloating(A, "torch.linalg.lstsq");
  checkSameDtype(A, B, "torch.linalg.lstsq", "input", "other");
  const bool vector = B.dim() == A.dim() - 1;
  Tensor rhs = vector ? unsqueeze(B, -1) : B;
  KILN_CHECK(rhs.size(-2) == A.size(-2), "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  const LstsqDriver driver = lstsqDriver(driver_name);
  const int64_t m = A.size(-2), n = A.size(-1);
  const double eps =
      A.dtype() == ScalarType::Float ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  const double rc = rcond.value_or(eps * static_cast<double>(std::max(m, n)));
  auto [a, b] = broadcastBatch(A, rhs, "torch.linalg.lstsq");
  auto [buffer, rank, values, info] = lapackLstsq(a, b, rc, driver);
  checkInfo(info, "torch.linalg.lstsq");
  Tensor solution = narrow(buffer, -2, 0, n);
  // Residuals: for a tall A of full rank (every matrix) and a driver other than gelsy.
  Tensor residuals = empty({0}, A.dtype());
  if (m > n && driver != LstsqDriver::Gelsy) {
    bool full =
        driver == LstsqDriver::Gels || rank.numel() == 0 || all(eq(rank, scalarToTensor(Scalar(n)))).item().toBool();
    if (full) residuals = sum(pow(narrow(buffer, -2, n, m - n), Scalar(2)), IntArrayRef({-2}));
  }
  if (vector) solution = squeeze(solution, -1);
  return {contiguous(solution), residuals, rank, values};
}

// (atol, rtol) as torch resolves them: an absent atol is 0; an absent rtol
// is eps * max(m, n) where atol is absent or not positive, else 0.
Tensor2 tolerances(const Tensor& A, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol) {
  const ScalarType real = A.dtype();
  const double eps =
      real == ScalarType::Float ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  Tensor a = atol ? *atol : zeros({}, real);
  Tensor r;
  if (rtol) {
    r = *rtol;
  } else {
    const double default_rtol = eps * static_cast<double>(std::max(A.size(-2), A.size(-1)));
    // The default applies only where atol is absent or zero.
    r = atol ? where(gt(*atol, scalarToTensor(Scalar(0.0))), zeros({}, real), full({}, default_rtol, real))
             : full({}, default_rtol, real);
  }
  return {a, r};
}

// Singular values (or |eigenvalues| of a Hermitian A), descending along the last dim.
Tensor spectrumMagnitudes(const Tensor& A, bool hermitian) {
  if (!hermitian) return linalgSvdvals(A, std::nullopt);
  Tensor values = callTensor("aten::abs", "", {IValue(linalgEigvalsh(A, "L"))});
  return callTensor("aten::sort", "", {IValue(values), IValue(int64_t{-1}), IValue(true)});
}

Tensor matrixRank(const Tensor& A, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol,
                  bool hermitian) {
  KILN_CHECK(A.dim() >= 2 && (A.dtype() == ScalarType::Float || A.dtype() == ScalarType::Double),
             "This function doesn't handle types other than float and double");
  Tensor S = spectrumMagnitudes(A, hermitian);
  auto [a, r] = tolerances(A, atol, rtol);
  Tensor largest =
      A.size(-1) == 0 || A.size(-2) == 0 ? zeros(IntArrayRef(batchOf(A)), A.dtype()) : squeeze(narrow(S, -1, 0, 1), -1);
  Tensor tol = maximum(a, mul(r, largest));
  return sum(gt(S, unsqueeze(tol, -1)), IntArrayRef({-1}), false, ScalarType::Long);
}

std::optional<Tensor> scalarTolerance(std::optional<double> v) {
  if (!v) return std::nullopt;
  return scalarToTensor(Scalar(*v), ScalarType::Double);
}

Tensor pinvPrimitive(const Tensor& A, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol,
                     bool hermitian) {
  KILN_CHECK(A.dim() >= 2 && (isFloatingType(A.dtype()) || isComplexType(A.dtype())), "linalg.pinv(",
             scalarTypeShortName(A.dtype()), "{", shapeString(A.sizes()),
             "}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types");
  auto [a, r] = tolerances(A, atol, rtol);
  if (A.numel() == 0) return empty(IntArrayRef(withMatrix(batchOf(A), A.size(-1), A.size(-2))), A.dtype());
  if (hermitian) {
    auto [L, V, info] = lapackEigh(A, false, true);
    Tensor magnitude = abs(L);
    Tensor largest = unsqueeze(amax(magnitude, IntArrayRef({-1}), false), -1);
    Tensor tol = maximum(unsqueeze(a, -1), mul(unsqueeze(r, -1), largest));
    Tensor inverted = where(gt(magnitude, tol), reciprocal(L), zeros({}, A.dtype()));
    return matmul(mul(V, unsqueeze(inverted, -2)), mT(V));
  }
  auto [U, S, Vh, info] = lapackSvd(A, false, true);
  Tensor largest = narrow(S, -1, 0, 1);
  Tensor tol = maximum(unsqueeze(a, -1), mul(unsqueeze(r, -1), largest));
  Tensor inverted = where(gt(S, tol), reciprocal(S), zeros({}, A.dtype()));
  return matmul(mul(mT(Vh), unsqueeze(inverted, -2)), mT(U));
}

// ---- matrix functions ----

Tensor matrixPower(const Tensor& A, int64_t n) {
  checkSquare(A, "linalg.matrix_power");
  if (n == 0) return clone(expand(eye(A.size(-1), A.size(-1), A.dtype()), A.sizes()));
  if (n == 1) return callTensor("aten::clone", "", {IValue(A), IValue()});
  Tensor base = n < 0 ? linalgInv(A) : A;
  int64_t k = n < 0 ? -n : n;
  // Binary powering, as torch: each product through the dispatcher.
  std::optional<Tensor> result;
  Tensor z = base;
  while (true) {
    if (k & 1) result = result ? callTensor("aten::matmul", "", {IValue(*result), IValue(z)}) : z;
    k >>= 1;
    if (k == 0) break;
    z = callTensor("aten::matmul", "", {IValue(z), IValue(z)});
  }
  return *result;
}

// exp(A) by scaling and squaring with a degree-13 Pade approximant (Higham,
// "The scaling and squaring method for the matrix exponential revisited", 2005).
Tensor matrixExp(const Tensor& A) {
  checkSquare(A, "linalg.matrix_exp");
  KILN_CHECK(isFloatingType(A.dtype()) || isComplexType(A.dtype()),
             "matrix_exp: Expected a floating point or complex tensor as input. Got ", scalarTypeShortName(A.dtype()));
  const int64_t n = A.size(-1);
  if (A.numel() == 0) return clone(A);
  static const double b[] = {64764752532480000.0,
                             32382376266240000.0,
                             7771770303897600.0,
                             1187353796428800.0,
                             129060195264000.0,
                             10559470521600.0,
                             670442572800.0,
                             33522128640.0,
                             1323241920.0,
                             40840800.0,
                             960960.0,
                             16380.0,
                             182.0,
                             1.0};
  const double theta13 = 5.371920351148152;
  // One scaling for the whole batch, from its largest 1-norm.
  const double norm1 = amax(sum(abs(A), IntArrayRef({-2}))).item().toDouble();
  // (No scaling for a norm that is not finite: the result is nan or inf anyway.)
  const int64_t s =
      std::isfinite(norm1) && norm1 > theta13 ? static_cast<int64_t>(std::ceil(std::log2(norm1 / theta13))) : 0;
  Tensor X = s > 0 ? div(A, scalarToTensor(Scalar(std::ldexp(1.0, static_cast<int>(s))))) : A;
  Tensor I = expand(eye(n, n, A.dtype()), A.sizes());
  Tensor X2 = matmul(X, X), X4 = matmul(X2, X2), X6 = matmul(X4, X2);
  auto scaled = [](const Tensor& t, double c) { return mul(t, scalarToTensor(Scalar(c))); };
  Tensor U = matmul(X6, add(add(scaled(X6, b[13]), scaled(X4, b[11])), scaled(X2, b[9])));
  U = matmul(X, add(add(add(add(U, scaled(X6, b[7])), scaled(X4, b[5])), scaled(X2, b[3])), scaled(I, b[1])));
  Tensor V = matmul(X6, add(add(scaled(X6, b[12]), scaled(X4, b[10])), scaled(X2, b[8])));
  V = add(add(add(add(V, scaled(X6, b[6])), scaled(X4, b[4])), scaled(X2, b[2])), scaled(I, b[0]));
  auto [LU, pivots, info] = lapackLuFactor(sub(V, U));
  Tensor R = luSolve(LU, pivots, add(V, U), true, false);
  for (int64_t i = 0; i < s; ++i) R = matmul(R, R);
  return contiguous(R);
}

// ---- norms ----

// self in `dtype` (when given), recorded for autograd.
Tensor castTo(const Tensor& self, Dtype dtype) {
  if (!dtype) return self;
  return callTensor("aten::to", "dtype",
                    {IValue(self), IValue(static_cast<int64_t>(*dtype)), IValue(false), IValue(false), IValue()});
}

Tensor vectorNorm(const Tensor& self, const Scalar& ord, OptionalDims dim, bool keepdim, Dtype dtype) {
  checkFloating(self, "linalg.vector_norm");
  if (dtype) {
    KILN_CHECK(isFloatingType(*dtype) || isComplexType(*dtype),
               "linalg.vector_norm: dtype should be floating point or complex, but got ", scalarTypeShortName(*dtype));
  }
  Tensor input = dtype ? to(self, *dtype) : self;
  const double p = ord.toDouble();
  if (input.numel() == 0 && (p < 0 || std::isinf(p))) {
    KILN_CHECK(dim && !dim->empty(), "linalg.vector_norm cannot compute the ", ord.toDouble(),
               " norm on an empty tensor because the operation does not have an identity");
  }
  return norm(input, ord, dim && dim->empty() ? std::nullopt : dim, keepdim);
}

// dim as a pair of distinct wrapped dims.
std::pair<int64_t, int64_t> matrixDims(const Tensor& A, IntArrayRef dim, const char* fn) {
  KILN_CHECK(dim.size() == 2, fn, ": dim must be a 2-tuple. Got ", shapeString(dim));
  const int64_t d0 = wrapDim(dim[0], A.dim()), d1 = wrapDim(dim[1], A.dim());
  KILN_CHECK(d0 != d1, fn, ": dims must be different. Got (", dim[0], ", ", dim[1], ")");
  return {d0, d1};
}

// The norms that reduce the matrices' singular values: nuc (sum), 2 (max), -2 (min).
Tensor spectralNorm(const Tensor& A, double ord, int64_t d0, int64_t d1, bool keepdim) {
  const std::vector<int64_t> src{d0, d1}, dst{-2, -1};
  Tensor moved =
      callTensor("aten::movedim", "intlist", {IValue(A), IValue(IntArrayRef(src)), IValue(IntArrayRef(dst))});
  Tensor S = linalgSvdvals(moved, std::nullopt);
  const std::vector<int64_t> last{-1};
  Tensor reduced = ord == 2    ? callTensor("aten::amax", "", {IValue(S), IValue(IntArrayRef(last)), IValue(false)})
                   : ord == -2 ? callTensor("aten::amin", "", {IValue(S), IValue(IntArrayRef(last)), IValue(false)})
                               : callTensor("aten::sum", "dim_IntList",
                                            {IValue(S), IValue(IntArrayRef(last)), IValue(false), IValue()});
  if (!keepdim) return reduced;
  reduced = callTensor("aten::unsqueeze", "", {IValue(reduced), IValue(std::min(d0, d1))});
  return callTensor("aten::unsqueeze", "", {IValue(reduced), IValue(std::max(d0, d1))});
}

Tensor matrixNorm(const Tensor& self, const Scalar& ord, IntArrayRef dim, bool keepdim, Dtype dtype) {
  checkMatrix(self, "linalg.matrix_norm");
  checkFloating(self, "linalg.matrix_norm");
  auto [d0, d1] = matrixDims(self, dim, "linalg.matrix_norm");
  const double p = ord.toDouble();
  KILN_CHECK(p == 1 || p == -1 || p == 2 || p == -2 || std::isinf(p), "linalg.matrix_norm: Order ", ord.toDouble(),
             " not supported.");
  Tensor A = castTo(self, dtype);
  if (p == 2 || p == -2) return spectralNorm(A, p, d0, d1, keepdim);
  // 1: the largest column sum of |A|; inf: the largest row sum (min for the negative orders).
  int64_t summed = std::isinf(p) ? d1 : d0, maxed = std::isinf(p) ? d0 : d1;
  const std::vector<int64_t> sum_dim{summed};
  Tensor sums = callTensor(
      "aten::sum", "dim_IntList",
      {IValue(callTensor("aten::abs", "", {IValue(A)})), IValue(IntArrayRef(sum_dim)), IValue(keepdim), IValue()});
  if (!keepdim && maxed > summed) --maxed;
  const std::vector<int64_t> max_dim{maxed};
  return callTensor(p > 0 ? "aten::amax" : "aten::amin", "",
                    {IValue(sums), IValue(IntArrayRef(max_dim)), IValue(keepdim)});
}

Tensor matrixNormStr(const Tensor& self, const std::string& ord, IntArrayRef dim, bool keepdim, Dtype dtype) {
  checkMatrix(self, "linalg.matrix_norm");
  KILN_CHECK(ord == "fro" || ord == "nuc", "linalg.matrix_norm: Order ", ord, " not supported.");
  auto [d0, d1] = matrixDims(self, dim, "linalg.matrix_norm");
  if (ord == "fro") {
    checkFloating(self, "linalg.matrix_norm");
    return callTensor("aten::linalg_vector_norm", "",
                      {IValue(self), IValue(Scalar(2.0)), IValue(dim), IValue(keepdim),
                       dtype ? IValue(static_cast<int64_t>(*dtype)) : IValue()});
  }
  checkFloating(self, "linalg.matrix_norm");
  return spectralNorm(castTo(self, dtype), 0, d0, d1, keepdim);
}

Tensor matrixNorm(const Tensor& self, const std::string& ord, IntArrayRef dim, bool keepdim, Dtype dtype) {
  return matrixNormStr(self, ord, dim, keepdim, dtype);
}

Tensor linalgNorm(const Tensor& self, const std::optional<Scalar>& ord, OptionalDims dim, bool keepdim, Dtype dtype) {
  if (dim) {
    KILN_CHECK(dim->size() == 1 || dim->size() == 2,
               "linalg.norm: If dim is specified, it must be of length 1 or 2. Got ", shapeString(*dim));
  } else if (ord) {
    KILN_CHECK(self.dim() == 1 || self.dim() == 2,
               "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got ", self.dim(), "D.");
  }
  const bool matrix = dim ? dim->size() == 2 : (ord && self.dim() == 2);
  if (ord && matrix) {
    std::vector<int64_t> dims = dim ? std::vector<int64_t>(dim->begin(), dim->end()) : std::vector<int64_t>{0, 1};
    return matrixNorm(self, *ord, IntArrayRef(dims), keepdim, dtype);
  }
  return callTensor("aten::linalg_vector_norm", "",
                    {IValue(self), IValue(ord.value_or(Scalar(2.0))), dim ? IValue(*dim) : IValue(), IValue(keepdim),
                     dtype ? IValue(static_cast<int64_t>(*dtype)) : IValue()});
}

Tensor linalgNormStr(const Tensor& self, const std::string& ord, OptionalDims dim, bool keepdim, Dtype dtype) {
  if (dim) {
    KILN_CHECK(dim->size() == 1 || dim->size() == 2,
               "linalg.norm: If dim is specified, it mut be of length 1 or 2. Got ", shapeString(*dim));
  } else {
    KILN_CHECK(self.dim() == 2, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got ",
               self.dim(), "D.");
  }
  std::vector<int64_t> dims = dim ? std::vector<int64_t>(dim->begin(), dim->end()) : std::vector<int64_t>{0, 1};
  return matrixNormStr(self, ord, IntArrayRef(dims), keepdim, dtype);
}

// norm(A) * norm(A^-1), inf for a singular A (torch's _linalg_cond_helper).
template <typename Ord>
Tensor condFromNorms(const Tensor& A, const Ord& ord) {
  Stack inverted = callOp("aten::linalg_inv_ex", "", {IValue(A), IValue(false)});
  Tensor singular = gt(inverted.at(1).toTensor(), scalarToTensor(Scalar(int64_t{0})));
  singular = unsqueeze(unsqueeze(singular, -1), -1);
  const double inf = std::numeric_limits<double>::infinity();
  Tensor inverse = callTensor("aten::masked_fill", "Scalar", {inverted.at(0), IValue(singular), IValue(Scalar(inf))});
  const std::vector<int64_t> dims{-2, -1};
  Tensor product = callTensor("aten::mul", "Tensor",
                              {IValue(matrixNorm(A, ord, IntArrayRef(dims), false, std::nullopt)),
                               IValue(matrixNorm(inverse, ord, IntArrayRef(dims), false, std::nullopt))});
  // 0 * inf: inf, as NumPy.
  return callTensor("aten::nan_to_num", "", {IValue(product), IValue(inf), IValue(inf), IValue(-inf)});
}

// The condition number of an empty matrix: 0, as torch.
Tensor emptyCond(const Tensor& A) { return zeros(IntArrayRef(batchOf(A)), A.dtype()); }

Tensor linalgCond(const Tensor& A, const std::optional<Scalar>& p) {
  KILN_CHECK(A.dim() >= 2, "linalg.cond: The input tensor must have at least 2 dimensions.");
  const Scalar ord = p.value_or(Scalar(int64_t{2}));
  const double o = ord.toDouble();
  KILN_CHECK(std::abs(o) == 2 || std::abs(o) == 1 || std::isinf(o), "linalg.cond got an invalid norm type: ",
             ord.isFloatingPoint() ? std::to_string(o) : std::to_string(ord.toLong()));
  if (A.numel() == 0) return emptyCond(A);
  if (std::abs(o) == 2) {
    Tensor S = linalgSvdvals(A, std::nullopt);
    auto narrowed = [&](int64_t start) {
      return callTensor("aten::narrow", "", {IValue(S), IValue(int64_t{-1}), IValue(start), IValue(int64_t{1})});
    };
    Tensor largest = narrowed(0), smallest = narrowed(S.size(-1) - 1);
    Tensor ratio = o == 2 ? callTensor("aten::div", "Tensor", {IValue(largest), IValue(smallest)})
                          : callTensor("aten::div", "Tensor", {IValue(smallest), IValue(largest)});
    return callTensor("aten::squeeze", "dim", {IValue(ratio), IValue(int64_t{-1})});
  }
  checkSquare(A, "linalg.cond");
  return condFromNorms(A, ord);
}

Tensor linalgCondStr(const Tensor& A, const std::string& p) {
  KILN_CHECK(A.dim() >= 2, "linalg.cond: The input tensor must have at least 2 dimensions.");
  KILN_CHECK(p == "fro" || p == "nuc", "linalg.cond got an invalid norm type: ", p);
  if (A.numel() == 0) return emptyCond(A);
  checkSquare(A, "linalg.cond");
  return condFromNorms(A, p);
}

// torch's matrix_exp_backward: the adjoint of exp's Frechet derivative at
// `self` applied to `grad`, the top-right block of exp([[A^T, G], [0, A^T]]).
Tensor matrixExpBackward(const Tensor& self, const Tensor& grad) {
  checkSquare(self, "linalg.matrix_exp");
  const int64_t n = self.size(-1);
  auto cat = [](const Tensor& a, const Tensor& b, int64_t dim) {
    return callTensor("aten::cat", "", {IValue(std::vector<Tensor>{a, b}), IValue(dim)});
  };
  Tensor At = callTensor("aten::transpose", "int", {IValue(self), IValue(int64_t{-2}), IValue(int64_t{-1})});
  Tensor zero = callTensor("aten::zeros_like", "", {IValue(At), IValue(), IValue(), IValue(), IValue(), IValue()});
  Tensor block = cat(cat(At, grad, -1), cat(zero, At, -1), -2);
  Tensor exp = callTensor("aten::linalg_matrix_exp", "", {IValue(block)});
  Tensor rows = callTensor("aten::narrow", "", {IValue(exp), IValue(int64_t{-2}), IValue(int64_t{0}), IValue(n)});
  return callTensor("aten::narrow", "", {IValue(rows), IValue(int64_t{-1}), IValue(n), IValue(n)});
}

// [1, x, x^2, ..., x^(N-1)] along a new last dim, as cumulative products (torch's linalg_vander).
Tensor linalgVander(const Tensor& x, std::optional<int64_t> N) {
  const ScalarType t = x.dtype();
  KILN_CHECK(t == ScalarType::Float || t == ScalarType::Double || isComplexType(t) || isIntegralType(t, false),
             "linalg.vander supports floating point, complex, and integer tensors, but got ", scalarTypeShortName(t));
  Tensor base = x.dim() == 0 ? callTensor("aten::unsqueeze", "", {IValue(x), IValue(int64_t{-1})}) : x;
  const int64_t n = N.value_or(base.size(-1));
  KILN_CHECK(n > 1, "N must be greater than 1.");
  DimVector shape(base.sizes());
  shape.push_back(n - 1);
  Tensor column = callTensor("aten::unsqueeze", "", {IValue(base), IValue(int64_t{-1})});
  Tensor powers =
      callTensor("aten::cumprod", "",
                 {IValue(callTensor("aten::expand", "", {IValue(column), IValue(IntArrayRef(shape)), IValue(false)})),
                  IValue(int64_t{-1}), IValue()});
  shape.back() = 1;
  return callTensor(
      "aten::cat", "",
      {IValue(std::vector<Tensor>{ones(IntArrayRef(shape), powers.dtype()), powers}), IValue(int64_t{-1})});
}

// ---- tensor forms ----

Tensor tensorinv(const Tensor& self, int64_t ind) {
  KILN_CHECK(ind > 0, "Expected a strictly positive integer for 'ind', but got ", ind);
  KILN_CHECK(ind <= self.dim(), "Expected ind to be at most self.dim(), but got ", ind);
  DimVector out_shape(self.sizes().begin() + ind, self.sizes().end());
  for (int64_t i = 0; i < ind; ++i) out_shape.push_back(self.size(i));
  const int64_t rows = shapeNumel(self.sizes().slice(0, ind));
  const int64_t cols = shapeNumel(self.sizes().slice(ind));
  KILN_CHECK(rows == cols,
             "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
             "but got ",
             cols, " != ", rows);
  const std::vector<int64_t> square{rows, cols};
  Tensor inverse = linalgInv(callTensor("aten::reshape", "", {IValue(self), IValue(IntArrayRef(square))}));
  return callTensor("aten::reshape", "", {IValue(inverse), IValue(IntArrayRef(out_shape))});
}

Tensor tensorsolve(const Tensor& self, const Tensor& other, const std::optional<DimVector>& dims) {
  Tensor A = self;
  if (dims && !dims->empty()) {
    std::vector<int64_t> dest;
    for (size_t i = 0; i < dims->size(); ++i) dest.push_back(self.dim() - static_cast<int64_t>(dims->size()) + i);
    A = callTensor("aten::movedim", "intlist", {IValue(self), IValue(IntArrayRef(*dims)), IValue(IntArrayRef(dest))});
  }
  const int64_t rows = other.numel();
  DimVector result_shape(A.sizes().begin() + other.dim(), A.sizes().end());
  const int64_t cols = shapeNumel(IntArrayRef(result_shape));
  KILN_CHECK(rows == cols,
             "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
             "prod(self.shape[:other.ndim]), but got ",
             cols, " != ", rows);
  const std::vector<int64_t> square{rows, cols}, flat{rows};
  Tensor matrix = callTensor("aten::reshape", "", {IValue(A), IValue(IntArrayRef(square))});
  Tensor vector = callTensor("aten::reshape", "", {IValue(other), IValue(IntArrayRef(flat))});
  Tensor x = linalgSolve(matrix, vector, true);
  return callTensor("aten::reshape", "", {IValue(x), IValue(IntArrayRef(result_shape))});
}

Tensor vecdot(const Tensor& x, const Tensor& y, int64_t dim) {
  checkSameDtype(x, y, "linalg.vecdot", "x", "y");
  Tensor product = callTensor("aten::mul", "Tensor", {IValue(x), IValue(y)});
  const std::vector<int64_t> dims{dim};
  return callTensor("aten::sum", "dim_IntList", {IValue(product), IValue(IntArrayRef(dims)), IValue(false), IValue()});
}

void checkNuclearNormInput(const Tensor& self) {
  KILN_CHECK(self.dim() == 2, "Expected a tensor with 2 dimensions, but got a tensor with ", self.dim(), " dimension",
             self.dim() == 1 ? "" : "s", " instead.");
}

void checkFrobeniusDims(IntArrayRef dim) {
  KILN_CHECK(dim.size() <= 2, "Expected at most 2 dimensions, but got ", dim.size(), " dimensions instead.");
}

// ---- out= helpers ----

Tensor2 writeOut2(const Tensor2& result, Tensor a, Tensor b, const char* fn) {
  writeOut(a, std::get<0>(result), fn);
  writeOut(b, std::get<1>(result), fn);
  return {a, b};
}

Tensor3 writeOut3(const Tensor3& result, Tensor a, Tensor b, Tensor c, const char* fn) {
  writeOut(a, std::get<0>(result), fn);
  writeOut(b, std::get<1>(result), fn);
  writeOut(c, std::get<2>(result), fn);
  return {a, b, c};
}

Tensor4 writeOut4(const Tensor4& result, Tensor a, Tensor b, Tensor c, Tensor d, const char* fn) {
  writeOut(a, std::get<0>(result), fn);
  writeOut(b, std::get<1>(result), fn);
  writeOut(c, std::get<2>(result), fn);
  writeOut(d, std::get<3>(result), fn);
  return {a, b, c, d};
}

}  // namespace

// LU: factorization, unpacking, solves.
KILN_REGISTER_OPS(
    op("aten::linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> (Tensor LU, Tensor "
       "pivots, Tensor info)",
       [](const Tensor& A, bool pivot, bool check_errors) { return luFactorEx(A, pivot, check_errors); })
        .derivative({"A: _linalg_lu_factor_ex_backward(grad, LU, pivots)", "non_differentiable: pivots",
                     "non_differentiable: info"}),
    op("aten::linalg_lu_factor_ex.out(Tensor A, *, bool pivot=True, bool check_errors=False, Tensor(a!) LU, "
       "Tensor(b!) pivots, Tensor(c!) info) -> (Tensor(a!) LU, Tensor(b!) pivots, Tensor(c!) info)",
       [](const Tensor& A, bool pivot, bool check_errors, Tensor LU, Tensor pivots, Tensor info) {
         return writeOut3(luFactorEx(A, pivot, check_errors), LU, pivots, info, "linalg.lu_factor_ex");
       }),
    op("aten::linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)",
       [](const Tensor& A, bool pivot) {
         Stack out = callOp("aten::linalg_lu_factor_ex", "", {IValue(A), IValue(pivot), IValue(false)});
         checkInfo(out.at(2).toTensor(), "torch.linalg.lu_factor");
         return Tensor2{out.at(0).toTensor(), out.at(1).toTensor()};
       }),
    op("aten::linalg_lu_factor.out(Tensor A, *, bool pivot=True, Tensor(a!) LU, Tensor(b!) pivots) -> (Tensor(a!) "
       "LU, Tensor(b!) pivots)",
       [](const Tensor& A, bool pivot, Tensor LU, Tensor pivots) {
         auto [lu, piv, info] = luFactorEx(A, pivot, false);
         checkInfo(info, "torch.linalg.lu_factor");
         return writeOut2({lu, piv}, LU, pivots, "linalg.lu_factor");
       }),
    op("aten::linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)",
       [](const Tensor& A, bool pivot) {
         auto [LU, pivots, info] = luFactorEx(A, pivot, false);
         return luUnpack(LU, pivots, true, true);
       })
        .derivative({"A: _linalg_lu_backward(grads[1], grads[2], P, L, U)", "non_differentiable: P"}),
    op("aten::linalg_lu.out(Tensor A, *, bool pivot=True, Tensor(a!) P, Tensor(b!) L, Tensor(c!) U) -> (Tensor(a!) "
       "P, Tensor(b!) L, Tensor(c!) U)",
       [](const Tensor& A, bool pivot, Tensor P, Tensor L, Tensor U) {
         auto [LU, pivots, info] = luFactorEx(A, pivot, false);
         return writeOut3(luUnpack(LU, pivots, true, true), P, L, U, "linalg.lu");
       }),
    op("aten::lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True) -> (Tensor "
       "P, Tensor L, Tensor U)",
       [](const Tensor& LU, const Tensor& pivots, bool unpack_data, bool unpack_pivots) {
         return luUnpack(LU, pivots, unpack_data, unpack_pivots);
       })
        .derivative({"LU_data: _linalg_lu_unpack_backward(grads[1], grads[2], LU_data.size(-2), LU_data.size(-1))",
                     "non_differentiable: P"}),
    op("aten::lu_unpack.out(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True, *, "
       "Tensor(a!) P, Tensor(b!) L, Tensor(c!) U) -> (Tensor(a!) P, Tensor(b!) L, Tensor(c!) U)",
       [](const Tensor& LU, const Tensor& pivots, bool unpack_data, bool unpack_pivots, Tensor P, Tensor L, Tensor U) {
         return writeOut3(luUnpack(LU, pivots, unpack_data, unpack_pivots), P, L, U, "lu_unpack");
       }),
    op("aten::linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False) -> Tensor",
       [](const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
         return luSolve(LU, pivots, B, left, adjoint);
       })
        .derivative({"LU: _linalg_lu_solve_LU_backward(grad, LU, pivots, result, left, adjoint)",
                     "B: torch.linalg_lu_solve(LU, pivots, grad, left=left, adjoint=not adjoint)"}),
    op("aten::linalg_lu_solve.out(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint, Tensor out) {
         return writeOut(out, luSolve(LU, pivots, B, left, adjoint), "linalg.lu_solve");
       }),
    op("aten::_lu_with_info(Tensor self, bool pivot=True, bool check_errors=True) -> (Tensor LU, Tensor pivots, Tensor "
       "info)",
       [](const Tensor& self, bool pivot, bool check_errors) {
         Stack out = callOp("aten::linalg_lu_factor_ex", "", {IValue(self), IValue(pivot), IValue(check_errors)});
         return Tensor3{out.at(0).toTensor(), out.at(1).toTensor(), out.at(2).toTensor()};
       }),
    op("aten::linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> (Tensor LD, "
       "Tensor pivots, Tensor info)",
       [](const Tensor& self, bool hermitian, bool check_errors) { return ldlFactorEx(self, hermitian, check_errors); })
        .notDifferentiable("torch 1.13: derivative for aten::linalg_ldl_factor_ex is not implemented"),
    op("aten::linalg_ldl_factor_ex.out(Tensor self, *, bool hermitian=False, bool check_errors=False, Tensor(a!) LD, "
       "Tensor(b!) pivots, Tensor(c!) info) -> (Tensor(a!) LD, Tensor(b!) pivots, Tensor(c!) info)",
       [](const Tensor& self, bool hermitian, bool check_errors, Tensor LD, Tensor pivots, Tensor info) {
         return writeOut3(ldlFactorEx(self, hermitian, check_errors), LD, pivots, info, "linalg.ldl_factor_ex");
       }),
    op("aten::linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)",
       [](const Tensor& self, bool hermitian) {
         Stack out = callOp("aten::linalg_ldl_factor_ex", "", {IValue(self), IValue(hermitian), IValue(false)});
         checkInfo(out.at(2).toTensor(), "torch.linalg.ldl_factor");
         return Tensor2{out.at(0).toTensor(), out.at(1).toTensor()};
       }),
    op("aten::linalg_ldl_factor.out(Tensor self, *, bool hermitian=False, Tensor(a!) LD, Tensor(b!) pivots) -> "
       "(Tensor(a!) LD, Tensor(b!) pivots)",
       [](const Tensor& self, bool hermitian, Tensor LD, Tensor pivots) {
         auto [ld, piv, info] = ldlFactorEx(self, hermitian, false);
         checkInfo(info, "torch.linalg.ldl_factor");
         return writeOut2({ld, piv}, LD, pivots, "linalg.ldl_factor");
       }),
    op("aten::linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor",
       [](const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
         return ldlSolve(LD, pivots, B, hermitian);
       })
        .notDifferentiable("torch 1.13: derivative for aten::linalg_ldl_solve is not implemented"),
    op("aten::linalg_ldl_solve.out(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian, Tensor out) {
         return writeOut(out, ldlSolve(LD, pivots, B, hermitian), "linalg.ldl_solve");
       }),
    op("aten::_linalg_check_errors(Tensor info, str api_name, *, bool is_matrix) -> ()",
       [](const Tensor& info, const std::string& api_name, bool is_matrix) {
         KILN_CHECK(info.dtype() == ScalarType::Int, api_name, ": info must be an int32 tensor");
         checkLinalgErrors(info, api_name, is_matrix);
       }),
    op("aten::lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor",
       [](const Tensor& self, const Tensor& LU, const Tensor& pivots) {
         return callTensor("aten::linalg_lu_solve", "",
                           {IValue(LU), IValue(pivots), IValue(self), IValue(true), IValue(false)});
       }),
    op("aten::lu_solve.out(Tensor self, Tensor LU_data, Tensor LU_pivots, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& LU, const Tensor& pivots, Tensor out) {
         return writeOut(out, luSolve(LU, pivots, self, true, false), "lu_solve");
       }), );

// Solves, inverses, determinants.
KILN_REGISTER_OPS(
    op("aten::_linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, "
       "Tensor LU, Tensor pivots, Tensor info)",
       [](const Tensor& A, const Tensor& B, bool left, bool check_errors) {
         return linalgSolveEx(A, B, left, check_errors);
       })
        .derivative({"A, B: _linalg_solve_backward(grad, result, A, B, left)", "non_differentiable: LU",
                     "non_differentiable: pivots", "non_differentiable: info", "grad_fn: LinalgSolveExBackward0"}),
    op("aten::_linalg_solve_ex.result(Tensor A, Tensor B, *, bool left=True, bool check_errors=False, Tensor(a!) "
       "result, Tensor(b!) LU, Tensor(c!) pivots, Tensor(d!) info) -> (Tensor(a!) result, Tensor(b!) LU, Tensor(c!) "
       "pivots, Tensor(d!) info)",
       [](const Tensor& A, const Tensor& B, bool left, bool check_errors, Tensor result, Tensor LU, Tensor pivots,
          Tensor info) {
         return writeOut4(linalgSolveEx(A, B, left, check_errors), result, LU, pivots, info, "linalg.solve_ex");
       }),
    op("aten::linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, "
       "Tensor info)",
       [](const Tensor& A, const Tensor& B, bool left, bool check_errors) {
         Stack out = callOp("aten::_linalg_solve_ex", "", {IValue(A), IValue(B), IValue(left), IValue(check_errors)});
         return Tensor2{out.at(0).toTensor(), out.at(3).toTensor()};
       }),
    op("aten::linalg_solve_ex.out(Tensor A, Tensor B, *, bool left=True, bool check_errors=False, Tensor(a!) result, "
       "Tensor(b!) info) -> (Tensor(a!) result, Tensor(b!) info)",
       [](const Tensor& A, const Tensor& B, bool left, bool check_errors, Tensor result, Tensor info) {
         auto solved = linalgSolveEx(A, B, left, check_errors);
         return writeOut2({std::get<0>(solved), std::get<3>(solved)}, result, info, "linalg.solve_ex");
       }),
    op("aten::linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor",
       [](const Tensor& A, const Tensor& B, bool left) { return linalgSolve(A, B, left); }),
    op("aten::linalg_solve.out(Tensor A, Tensor B, *, bool left=True, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& A, const Tensor& B, bool left, Tensor out) {
         return writeOut(out, linalgSolve(A, B, left), "linalg.solve");
       }),
    op("aten::linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)",
       [](const Tensor& A, bool check_errors) { return linalgInvEx(A, check_errors); })
        .derivative({"A: -torch.matmul(inverse.transpose(-2, -1), torch.matmul(grad, inverse.transpose(-2, -1)))",
                     "non_differentiable: info"}),
    op("aten::linalg_inv_ex.inverse(Tensor A, *, bool check_errors=False, Tensor(a!) inverse, Tensor(b!) info) -> "
       "(Tensor(a!) inverse, Tensor(b!) info)",
       [](const Tensor& A, bool check_errors, Tensor inverse, Tensor info) {
         return writeOut2(linalgInvEx(A, check_errors), inverse, info, "linalg.inv_ex");
       }),
    op("aten::linalg_inv(Tensor A) -> Tensor", [](const Tensor& A) { return linalgInv(A); }),
    op("aten::linalg_inv.out(Tensor A, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& A, Tensor out) { return writeOut(out, linalgInv(A), "linalg.inv"); }),
    op("aten::inverse(Tensor self) -> Tensor", [](const Tensor& self) { return linalgInv(self); }),
    op("aten::inverse.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return writeOut(out, linalgInv(self), "inverse"); }),
    op("aten::_linalg_det(Tensor A) -> (Tensor result, Tensor LU, Tensor pivots)",
       [](const Tensor& A) { return linalgDetWithLu(A); })
        .derivative({"A: _linalg_det_backward(grad, result, A)", "non_differentiable: LU", "non_differentiable: pivots",
                     "grad_fn: LinalgDetBackward0"}),
    op("aten::_linalg_det.result(Tensor A, *, Tensor(a!) result, Tensor(b!) LU, Tensor(c!) pivots) -> (Tensor(a!) "
       "result, Tensor(b!) LU, Tensor(c!) pivots)",
       [](const Tensor& A, Tensor result, Tensor LU, Tensor pivots) {
         return writeOut3(linalgDetWithLu(A), result, LU, pivots, "linalg.det");
       }),
    op("aten::linalg_det(Tensor A) -> Tensor", [](const Tensor& A) { return linalgDet(A); }),
    op("aten::linalg_det.out(Tensor A, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& A, Tensor out) { return writeOut(out, linalgDet(A), "linalg.det"); }),
    op("aten::det(Tensor self) -> Tensor", [](const Tensor& self) { return linalgDet(self); }),
    op("aten::_linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet, Tensor LU, Tensor pivots)",
       [](const Tensor& A) { return linalgSlogdetWithLu(A, "linalg.slogdet"); })
        .derivative({"A: _linalg_slogdet_backward(grads[1], A)", "non_differentiable: sign", "non_differentiable: LU",
                     "non_differentiable: pivots", "grad_fn: LinalgSlogdetBackward0"}),
    op("aten::_linalg_slogdet.sign(Tensor A, *, Tensor(a!) sign, Tensor(b!) logabsdet, Tensor(c!) LU, Tensor(d!) "
       "pivots) -> (Tensor(a!) sign, Tensor(b!) logabsdet, Tensor(c!) LU, Tensor(d!) pivots)",
       [](const Tensor& A, Tensor sign_, Tensor logabsdet, Tensor LU, Tensor pivots) {
         return writeOut4(linalgSlogdetWithLu(A, "linalg.slogdet"), sign_, logabsdet, LU, pivots, "linalg.slogdet");
       }),
    op("aten::linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)",
       [](const Tensor& A) { return linalgSlogdet(A); }),
    op("aten::linalg_slogdet.out(Tensor A, *, Tensor(a!) sign, Tensor(b!) logabsdet) -> (Tensor(a!) sign, Tensor(b!) "
       "logabsdet)",
       [](const Tensor& A, Tensor sign_, Tensor logabsdet) {
         return writeOut2(linalgSlogdet(A), sign_, logabsdet, "linalg.slogdet");
       }),
    op("aten::slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)",
       [](const Tensor& self) { return linalgSlogdet(self); }),
    op("aten::slogdet.out(Tensor self, *, Tensor(a!) sign, Tensor(b!) logabsdet) -> (Tensor(a!) sign, Tensor(b!) "
       "logabsdet)",
       [](const Tensor& self, Tensor sign_, Tensor logabsdet) {
         return writeOut2(linalgSlogdet(self), sign_, logabsdet, "slogdet");
       }),
    op("aten::logdet(Tensor self) -> Tensor", [](const Tensor& self) { return logdet(self); }), );

// Cholesky, triangular solves, QR.
KILN_REGISTER_OPS(
    op("aten::linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> (Tensor L, Tensor "
       "info)",
       [](const Tensor& self, bool upper, bool check_errors) {
         return choleskyEx(self, upper, check_errors, "linalg.cholesky_ex");
       })
        .derivative({"self: _linalg_cholesky_backward(grad, upper, L)", "non_differentiable: info"}),
    op("aten::linalg_cholesky_ex.L(Tensor self, *, bool upper=False, bool check_errors=False, Tensor(a!) L, "
       "Tensor(b!) info) -> (Tensor(a!) L, Tensor(b!) info)",
       [](const Tensor& self, bool upper, bool check_errors, Tensor L, Tensor info) {
         return writeOut2(choleskyEx(self, upper, check_errors, "linalg.cholesky_ex"), L, info, "linalg.cholesky_ex");
       }),
    op("aten::linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor",
       [](const Tensor& self, bool upper) { return linalgCholesky(self, upper); }),
    op("aten::linalg_cholesky.out(Tensor self, *, bool upper=False, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, bool upper, Tensor out) {
         return writeOut(out, linalgCholesky(self, upper), "linalg.cholesky");
       }),
    op("aten::cholesky(Tensor self, bool upper=False) -> Tensor",
       [](const Tensor& self, bool upper) { return std::get<0>(choleskyEx(self, upper, true, "cholesky")); })
        .derivative({"self: _linalg_cholesky_backward(grad, upper, result)"}),
    op("aten::cholesky.out(Tensor self, bool upper=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, bool upper, Tensor out) {
         return writeOut(out, std::get<0>(choleskyEx(self, upper, true, "cholesky")), "cholesky");
       }),
    op("aten::cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor",
       [](const Tensor& self, const Tensor& input2, bool upper) { return choleskySolve(self, input2, upper); })
        .derivative({"self, input2: _linalg_cholesky_solve_backward(grad, self, input2, result, upper)"}),
    op("aten::cholesky_solve.out(Tensor self, Tensor input2, bool upper=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& input2, bool upper, Tensor out) {
         return writeOut(out, choleskySolve(self, input2, upper), "cholesky_solve");
       }),
    // (cholesky_solve without the broadcasting; torch 1.13 has no derivative for it)
    op("aten::_cholesky_solve_helper(Tensor self, Tensor A, bool upper) -> Tensor",
       [](const Tensor& self, const Tensor& A, bool upper) { return choleskySolve(self, A, upper); })
        .notDifferentiable("torch 1.13: derivative for aten::_cholesky_solve_helper is not implemented"),
    op("aten::_cholesky_solve_helper.out(Tensor self, Tensor A, bool upper, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& A, bool upper, Tensor out) {
         return writeOut(out, choleskySolve(self, A, upper), "_cholesky_solve_helper");
       }),
    op("aten::cholesky_inverse(Tensor self, bool upper=False) -> Tensor",
       [](const Tensor& self, bool upper) { return choleskyInverse(self, upper); })
        .derivative({"self: _linalg_cholesky_inverse_backward(grad, self, upper, result)"}),
    op("aten::cholesky_inverse.out(Tensor self, bool upper=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, bool upper, Tensor out) {
         return writeOut(out, choleskyInverse(self, upper), "cholesky_inverse");
       }),
    op("aten::linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False) "
       "-> Tensor",
       [](const Tensor& self, const Tensor& B, bool upper, bool left, bool unitriangular) {
         return solveTriangular(self, B, upper, left, unitriangular);
       })
        .derivative({"self, B: _linalg_solve_triangular_backward(grad, self, result, upper, left, unitriangular)"}),
    op("aten::linalg_solve_triangular.out(Tensor self, Tensor B, *, bool upper, bool left=True, bool "
       "unitriangular=False, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& B, bool upper, bool left, bool unitriangular, Tensor out) {
         return writeOut(out, solveTriangular(self, B, upper, left, unitriangular), "linalg.solve_triangular");
       }),
    op("aten::triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, bool "
       "unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)",
       [](const Tensor& self, const Tensor& A, bool upper, bool transpose, bool unitriangular) {
         return triangularSolve(self, A, upper, transpose, unitriangular);
       })
        .derivative({"self, A: _linalg_triangular_solve_backward(grads[0], grads[1], A, solution, upper, transpose, "
                     "unitriangular)"}),
    op("aten::triangular_solve.X(Tensor self, Tensor A, bool upper=True, bool transpose=False, bool "
       "unitriangular=False, *, Tensor(a!) X, Tensor(b!) M) -> (Tensor(a!) solution, Tensor(b!) cloned_coefficient)",
       [](const Tensor& self, const Tensor& A, bool upper, bool transpose, bool unitriangular, Tensor X, Tensor M) {
         return writeOut2(triangularSolve(self, A, upper, transpose, unitriangular), X, M, "triangular_solve");
       }),
    op("aten::linalg_qr(Tensor A, str mode=\"reduced\") -> (Tensor Q, Tensor R)",
       [](const Tensor& A, const std::string& mode) { return linalgQr(A, mode); })
        .derivative({"A: _linalg_qr_backward(grads[0], grads[1], Q, R, mode)"}),
    op("aten::linalg_qr.out(Tensor A, str mode=\"reduced\", *, Tensor(a!) Q, Tensor(b!) R) -> (Tensor(a!) Q, "
       "Tensor(b!) R)",
       [](const Tensor& A, const std::string& mode, Tensor Q, Tensor R) {
         return writeOut2(linalgQr(A, mode), Q, R, "linalg.qr");
       }),
    op("aten::qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)",
       [](const Tensor& self, bool some) {
         Stack out = callOp("aten::linalg_qr", "", {IValue(self), IValue(std::string(some ? "reduced" : "complete"))});
         return Tensor2{out.at(0).toTensor(), out.at(1).toTensor()};
       }),
    op("aten::qr.Q(Tensor self, bool some=True, *, Tensor(a!) Q, Tensor(b!) R) -> (Tensor(a!) Q, Tensor(b!) R)",
       [](const Tensor& self, bool some, Tensor Q, Tensor R) {
         return writeOut2(linalgQr(self, some ? "reduced" : "complete"), Q, R, "qr");
       }),
    op("aten::geqrf(Tensor self) -> (Tensor a, Tensor tau)",
       [](const Tensor& self) {
         checkMatrix(self, "torch.geqrf", "input");
         return lapackGeqrf(self);
       })
        .notDifferentiable("torch 1.13: the derivative for 'geqrf' is not implemented"),
    op("aten::geqrf.a(Tensor self, *, Tensor(a!) a, Tensor(b!) tau) -> (Tensor(a!) a, Tensor(b!) tau)",
       [](const Tensor& self, Tensor a, Tensor tau) {
         checkMatrix(self, "torch.geqrf", "input");
         return writeOut2(lapackGeqrf(self), a, tau, "geqrf");
       }),
    op("aten::linalg_householder_product(Tensor input, Tensor tau) -> Tensor",
       [](const Tensor& input, const Tensor& tau) { return householderProduct(input, tau); }),
    op("aten::linalg_householder_product.out(Tensor input, Tensor tau, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& input, const Tensor& tau, Tensor out) {
         return writeOut(out, householderProduct(input, tau), "linalg.householder_product");
       }),
    op("aten::orgqr(Tensor self, Tensor input2) -> Tensor",
       [](const Tensor& self, const Tensor& input2) { return householderProduct(self, input2); }),
    op("aten::orgqr.out(Tensor self, Tensor input2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& input2, Tensor out) {
         return writeOut(out, householderProduct(self, input2), "orgqr");
       }),
    op("aten::ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor",
       [](const Tensor& self, const Tensor& input2, const Tensor& input3, bool left, bool transpose) {
         return ormqr(self, input2, input3, left, transpose);
       })
        .notDifferentiable("torch 1.13: the derivative for 'ormqr' is not implemented"),
    op("aten::ormqr.out(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False, *, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& input2, const Tensor& input3, bool left, bool transpose, Tensor out) {
         return writeOut(out, ormqr(self, input2, input3, left, transpose), "ormqr");
       }), );

// SVD and eigen-decompositions.
KILN_REGISTER_OPS(
    op("aten::_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True, *, str? driver=None) -> (Tensor "
       "U, Tensor S, Tensor Vh)",
       [](const Tensor& A, bool full_matrices, bool compute_uv, const std::optional<std::string>& driver) {
         return linalgSvdPrimitive(A, full_matrices, compute_uv, driver);
       })
        .derivative({"A: _linalg_svd_backward(grads[0], grads[1], grads[2], U, S, Vh, full_matrices, compute_uv)",
                     "grad_fn: LinalgSvdBackward0"}),
    op("aten::_linalg_svd.U(Tensor A, bool full_matrices=False, bool compute_uv=True, *, str? driver=None, Tensor(a!) "
       "U, Tensor(b!) S, Tensor(c!) Vh) -> (Tensor(a!) U, Tensor(b!) S, Tensor(c!) Vh)",
       [](const Tensor& A, bool full_matrices, bool compute_uv, const std::optional<std::string>& driver, Tensor U,
          Tensor S, Tensor Vh) {
         return writeOut3(linalgSvdPrimitive(A, full_matrices, compute_uv, driver), U, S, Vh, "linalg.svd");
       }),
    op("aten::linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)",
       [](const Tensor& A, bool full_matrices, const std::optional<std::string>& driver) {
         return linalgSvd(A, full_matrices, driver);
       }),
    op("aten::linalg_svd.U(Tensor A, bool full_matrices=True, *, str? driver=None, Tensor(a!) U, Tensor(b!) S, "
       "Tensor(c!) Vh) -> (Tensor(a!) U, Tensor(b!) S, Tensor(c!) Vh)",
       [](const Tensor& A, bool full_matrices, const std::optional<std::string>& driver, Tensor U, Tensor S,
          Tensor Vh) { return writeOut3(linalgSvd(A, full_matrices, driver), U, S, Vh, "linalg.svd"); }),
    op("aten::linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor",
       [](const Tensor& A, const std::optional<std::string>& driver) { return linalgSvdvals(A, driver); }),
    op("aten::linalg_svdvals.out(Tensor A, *, str? driver=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& A, const std::optional<std::string>& driver, Tensor out) {
         return writeOut(out, linalgSvdvals(A, driver), "linalg.svdvals");
       }),
    op("aten::svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)",
       [](const Tensor& self, bool some, bool compute_uv) { return legacySvd(self, some, compute_uv); }),
    op("aten::svd.U(Tensor self, bool some=True, bool compute_uv=True, *, Tensor(a!) U, Tensor(b!) S, Tensor(c!) V) "
       "-> (Tensor(a!) U, Tensor(b!) S, Tensor(c!) V)",
       [](const Tensor& self, bool some, bool compute_uv, Tensor U, Tensor S, Tensor V) {
         return writeOut3(legacySvd(self, some, compute_uv), U, S, V, "svd");
       }),
    op("aten::_linalg_eigh(Tensor A, str UPLO=\"L\", bool compute_v=True) -> (Tensor eigenvalues, Tensor "
       "eigenvectors)",
       [](const Tensor& A, const std::string& uplo, bool compute_v) { return linalgEighPrimitive(A, uplo, compute_v); })
        .derivative({"A: _linalg_eigh_backward(grads[0], grads[1], eigenvalues, eigenvectors, compute_v)",
                     "grad_fn: LinalgEighBackward0"}),
    op("aten::_linalg_eigh.eigenvalues(Tensor A, str UPLO=\"L\", bool compute_v=True, *, Tensor(a!) eigenvalues, "
       "Tensor(b!) eigenvectors) -> (Tensor(a!) eigenvalues, Tensor(b!) eigenvectors)",
       [](const Tensor& A, const std::string& uplo, bool compute_v, Tensor values, Tensor vectors) {
         return writeOut2(linalgEighPrimitive(A, uplo, compute_v), values, vectors, "linalg.eigh");
       }),
    op("aten::linalg_eigh(Tensor self, str UPLO=\"L\") -> (Tensor eigenvalues, Tensor eigenvectors)",
       [](const Tensor& self, const std::string& uplo) { return linalgEigh(self, uplo); }),
    op("aten::linalg_eigh.eigvals(Tensor self, str UPLO=\"L\", *, Tensor(a!) eigvals, Tensor(b!) eigvecs) -> "
       "(Tensor(a!) eigenvalues, Tensor(b!) eigenvectors)",
       [](const Tensor& self, const std::string& uplo, Tensor values, Tensor vectors) {
         return writeOut2(linalgEigh(self, uplo), values, vectors, "linalg.eigh");
       }),
    op("aten::symeig(Tensor self, bool eigenvectors=False, bool upper=True) -> (Tensor eigenvalues, Tensor "
       "eigenvectors)",
       [](const Tensor& self, bool eigenvectors, bool upper) { return symeig(self, eigenvectors, upper); }),
    op("aten::symeig.e(Tensor self, bool eigenvectors=False, bool upper=True, *, Tensor(a!) e, Tensor(b!) V) -> "
       "(Tensor(a!) eigenvalues, Tensor(b!) eigenvectors)",
       [](const Tensor& self, bool eigenvectors, bool upper, Tensor e, Tensor V) {
         return writeOut2(symeig(self, eigenvectors, upper), e, V, "symeig");
       }),
    op("aten::linalg_eigvalsh(Tensor self, str UPLO=\"L\") -> Tensor",
       [](const Tensor& self, const std::string& uplo) { return linalgEigvalsh(self, uplo); }),
    op("aten::linalg_eigvalsh.out(Tensor self, str UPLO=\"L\", *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::string& uplo, Tensor out) {
         return writeOut(out, linalgEigvalsh(self, uplo), "linalg.eigvalsh");
       }),
    // Complex results: kiln's autograd has no complex formulas yet, so the
    // backward of linalg_eig raises (torch 1.13 differentiates it).
    op("aten::linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)",
       [](const Tensor& self) { return linalgEig(self, true); })
        .derivative({"self: _linalg_eig_backward(self)"}),
    op("aten::linalg_eig.out(Tensor self, *, Tensor(a!) eigenvalues, Tensor(b!) eigenvectors) -> (Tensor(a!) "
       "eigenvalues, Tensor(b!) eigenvectors)",
       [](const Tensor& self, Tensor values, Tensor vectors) {
         return writeOut2(linalgEig(self, true), values, vectors, "linalg.eig");
       }),
    op("aten::linalg_eigvals(Tensor self) -> Tensor",
       [](const Tensor& self) { return std::get<0>(linalgEig(self, false)); })
        .derivative({"self: _linalg_eig_backward(self)"}),
    op("aten::linalg_eigvals.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", [](const Tensor& self, Tensor out) {
      return writeOut(out, std::get<0>(linalgEig(self, false)), "linalg.eigvals");
    }), );

// Least squares, rank, pseudo-inverse, matrix functions.
KILN_REGISTER_OPS(
    op("aten::linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> (Tensor solution, Tensor "
       "residuals, Tensor rank, Tensor singular_values)",
       [](const Tensor& self, const Tensor& b, std::optional<double> rcond, const std::optional<std::string>& driver) {
         return linalgLstsq(self, b, rcond, driver);
       })
        .derivative({"self, b: _linalg_lstsq_backward(grad, self, b)", "non_differentiable: residuals",
                     "non_differentiable: rank", "non_differentiable: singular_values"}),
    op("aten::linalg_lstsq.out(Tensor self, Tensor b, float? rcond=None, *, str? driver=None, Tensor(a!) solution, "
       "Tensor(b!) residuals, Tensor(c!) rank, Tensor(d!) singular_values) -> (Tensor(a!) solution, Tensor(b!) "
       "residuals, Tensor(c!) rank, Tensor(d!) singular_values)",
       [](const Tensor& self, const Tensor& b, std::optional<double> rcond, const std::optional<std::string>& driver,
          Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values) {
         return writeOut4(linalgLstsq(self, b, rcond, driver), solution, residuals, rank, singular_values,
                          "linalg.lstsq");
       }),
    op("aten::linalg_matrix_rank.atol_rtol_tensor(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool "
       "hermitian=False) -> Tensor",
       [](const Tensor& input, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol, bool hermitian) {
         return matrixRank(input, atol, rtol, hermitian);
       })
        .derivative({"non_differentiable: result"}),
    op("aten::linalg_matrix_rank.atol_rtol_tensor_out(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool "
       "hermitian=False, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& input, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol, bool hermitian,
          Tensor out) { return writeOut(out, matrixRank(input, atol, rtol, hermitian), "linalg.matrix_rank"); }),
    op("aten::linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool "
       "hermitian=False) -> Tensor",
       [](const Tensor& self, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
         return matrixRank(self, scalarTolerance(atol), scalarTolerance(rtol), hermitian);
       })
        .derivative({"non_differentiable: result"}),
    op("aten::linalg_matrix_rank.atol_rtol_float_out(Tensor self, *, float? atol=None, float? rtol=None, bool "
       "hermitian=False, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, std::optional<double> atol, std::optional<double> rtol, bool hermitian, Tensor out) {
         return writeOut(out, matrixRank(self, scalarTolerance(atol), scalarTolerance(rtol), hermitian),
                         "linalg.matrix_rank");
       }),
    // The legacy tol: an absolute tolerance, no relative one.
    op("aten::linalg_matrix_rank(Tensor self, float tol, bool hermitian=False) -> Tensor",
       [](const Tensor& self, double tol, bool hermitian) {
         return matrixRank(self, scalarTolerance(tol), scalarTolerance(0.0), hermitian);
       })
        .derivative({"non_differentiable: result"}),
    op("aten::linalg_matrix_rank.out(Tensor self, float tol, bool hermitian=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, double tol, bool hermitian, Tensor out) {
         return writeOut(out, matrixRank(self, scalarTolerance(tol), scalarTolerance(0.0), hermitian),
                         "linalg.matrix_rank");
       }),
    op("aten::linalg_matrix_rank.tol_tensor(Tensor input, Tensor tol, bool hermitian=False) -> Tensor",
       [](const Tensor& input, const Tensor& tol, bool hermitian) {
         return matrixRank(input, tol, scalarTolerance(0.0), hermitian);
       })
        .derivative({"non_differentiable: result"}),
    op("aten::linalg_matrix_rank.out_tol_tensor(Tensor input, Tensor tol, bool hermitian=False, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& input, const Tensor& tol, bool hermitian, Tensor out) {
         return writeOut(out, matrixRank(input, tol, scalarTolerance(0.0), hermitian), "linalg.matrix_rank");
       }),
    op("aten::linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool "
       "hermitian=False) -> Tensor",
       [](const Tensor& self, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol, bool hermitian) {
         return pinvPrimitive(self, atol, rtol, hermitian);
       })
        .derivative({"self: _linalg_pinv_backward(grad, result, self)", "grad_fn: LinalgPinvBackward0"}),
    op("aten::linalg_pinv.atol_rtol_tensor_out(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool "
       "hermitian=False, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol, bool hermitian,
          Tensor out) { return writeOut(out, pinvPrimitive(self, atol, rtol, hermitian), "linalg.pinv"); }),
    op("aten::linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) "
       "-> Tensor",
       [](const Tensor& self, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
         return pinvPrimitive(self, scalarTolerance(atol), scalarTolerance(rtol), hermitian);
       })
        .derivative({"self: _linalg_pinv_backward(grad, result, self)", "grad_fn: LinalgPinvBackward0"}),
    op("aten::linalg_pinv.atol_rtol_float_out(Tensor self, *, float? atol=None, float? rtol=None, bool "
       "hermitian=False, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, std::optional<double> atol, std::optional<double> rtol, bool hermitian, Tensor out) {
         return writeOut(out, pinvPrimitive(self, scalarTolerance(atol), scalarTolerance(rtol), hermitian),
                         "linalg.pinv");
       }),
    // The legacy rcond: a relative tolerance, no absolute one.
    op("aten::linalg_pinv(Tensor self, float rcond, bool hermitian=False) -> Tensor",
       [](const Tensor& self, double rcond, bool hermitian) {
         return pinvPrimitive(self, scalarTolerance(0.0), scalarTolerance(rcond), hermitian);
       })
        .derivative({"self: _linalg_pinv_backward(grad, result, self)", "grad_fn: LinalgPinvBackward0"}),
    op("aten::linalg_pinv.out(Tensor self, float rcond, bool hermitian=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, double rcond, bool hermitian, Tensor out) {
         return writeOut(out, pinvPrimitive(self, scalarTolerance(0.0), scalarTolerance(rcond), hermitian),
                         "linalg.pinv");
       }),
    op("aten::linalg_pinv.rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False) -> Tensor",
       [](const Tensor& self, const Tensor& rcond, bool hermitian) {
         return pinvPrimitive(self, scalarTolerance(0.0), rcond, hermitian);
       })
        .derivative({"self: _linalg_pinv_backward(grad, result, self)", "grad_fn: LinalgPinvBackward0"}),
    op("aten::linalg_pinv.out_rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, const Tensor& rcond, bool hermitian, Tensor out) {
         return writeOut(out, pinvPrimitive(self, scalarTolerance(0.0), rcond, hermitian), "linalg.pinv");
       }),
    op("aten::pinverse(Tensor self, float rcond=1.0000000000000001e-15) -> Tensor",
       [](const Tensor& self, double rcond) {
         return callTensor("aten::linalg_pinv", "", {IValue(self), IValue(rcond), IValue(false)});
       }),
    op("aten::linalg_matrix_power(Tensor self, int n) -> Tensor",
       [](const Tensor& self, int64_t n) { return matrixPower(self, n); }),
    op("aten::linalg_matrix_power.out(Tensor self, int n, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t n, Tensor out) {
         return writeOut(out, matrixPower(self, n), "linalg.matrix_power");
       }),
    op("aten::matrix_power(Tensor self, int n) -> Tensor",
       [](const Tensor& self, int64_t n) { return matrixPower(self, n); }),
    op("aten::matrix_power.out(Tensor self, int n, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t n, Tensor out) { return writeOut(out, matrixPower(self, n), "matrix_power"); }),
    op("aten::linalg_matrix_exp(Tensor self) -> Tensor", [](const Tensor& self) { return matrixExp(self); })
        .derivative({"self: _linalg_matrix_exp_backward(grad, self)"}),
    op("aten::linalg_matrix_exp.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return writeOut(out, matrixExp(self), "linalg.matrix_exp"); }),
    op("aten::matrix_exp_backward(Tensor self, Tensor grad) -> Tensor",
       [](const Tensor& self, const Tensor& grad) { return matrixExpBackward(self, grad); }),
    op("aten::matrix_exp(Tensor self) -> Tensor", [](const Tensor& self) {
      return matrixExp(self);
    }).derivative({"self: _linalg_matrix_exp_backward(grad, self)", "grad_fn: LinalgMatrixExpBackward0"}), );

// Norms and the rest of torch.linalg.
KILN_REGISTER_OPS(
    op("aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
       "dtype=None) -> Tensor",
       [](const Tensor& self, const Scalar& ord, OptionalDims dim, bool keepdim, Dtype dtype) {
         return vectorNorm(self, ord, dim, keepdim, dtype);
       })
        .derivative({"self: _norm_backward(grad, self, result, float(ord), dim, keepdim)"}),
    op("aten::linalg_vector_norm.out(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
       "ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& ord, OptionalDims dim, bool keepdim, Dtype dtype, Tensor out) {
         return writeOut(out, vectorNorm(self, ord, dim, keepdim, dtype), "linalg.vector_norm", OutDtype::Castable);
       }),
    op("aten::linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2, -1], bool keepdim=False, *, ScalarType? "
       "dtype=None) -> Tensor",
       [](const Tensor& self, const Scalar& ord, IntArrayRef dim, bool keepdim, Dtype dtype) {
         return matrixNorm(self, ord, dim, keepdim, dtype);
       }),
    op("aten::linalg_matrix_norm.str_ord(Tensor self, str ord=\"fro\", int[] dim=[-2, -1], bool keepdim=False, *, "
       "ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, const std::string& ord, IntArrayRef dim, bool keepdim, Dtype dtype) {
         return matrixNormStr(self, ord, dim, keepdim, dtype);
       }),
    op("aten::linalg_matrix_norm.out(Tensor self, Scalar ord, int[] dim=[-2, -1], bool keepdim=False, *, "
       "ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& ord, IntArrayRef dim, bool keepdim, Dtype dtype, Tensor out) {
         return writeOut(out, matrixNorm(self, ord, dim, keepdim, dtype), "linalg.matrix_norm", OutDtype::Castable);
       }),
    op("aten::linalg_matrix_norm.str_ord_out(Tensor self, str ord=\"fro\", int[] dim=[-2, -1], bool keepdim=False, "
       "*, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::string& ord, IntArrayRef dim, bool keepdim, Dtype dtype, Tensor out) {
         return writeOut(out, matrixNormStr(self, ord, dim, keepdim, dtype), "linalg.matrix_norm", OutDtype::Castable);
       }),
    op("aten::linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
       "dtype=None) -> Tensor",
       [](const Tensor& self, const std::optional<Scalar>& ord, OptionalDims dim, bool keepdim, Dtype dtype) {
         return linalgNorm(self, ord, dim, keepdim, dtype);
       }),
    op("aten::linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
       "dtype=None) -> Tensor",
       [](const Tensor& self, const std::string& ord, OptionalDims dim, bool keepdim, Dtype dtype) {
         return linalgNormStr(self, ord, dim, keepdim, dtype);
       }),
    op("aten::linalg_norm.out(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
       "dtype=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::optional<Scalar>& ord, OptionalDims dim, bool keepdim, Dtype dtype,
          Tensor out) {
         return writeOut(out, linalgNorm(self, ord, dim, keepdim, dtype), "linalg.norm", OutDtype::Castable);
       }),
    op("aten::linalg_norm.ord_str_out(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
       "dtype=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::string& ord, OptionalDims dim, bool keepdim, Dtype dtype, Tensor out) {
         return writeOut(out, linalgNormStr(self, ord, dim, keepdim, dtype), "linalg.norm", OutDtype::Castable);
       }),
    op("aten::frobenius_norm(Tensor self) -> Tensor",
       [](const Tensor& self) {
         return callTensor("aten::linalg_vector_norm", "",
                           {IValue(self), IValue(Scalar(2.0)), IValue(), IValue(false), IValue()});
       }),
    op("aten::frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
       [](const Tensor& self, IntArrayRef dim, bool keepdim) {
         checkFrobeniusDims(dim);
         return callTensor("aten::linalg_vector_norm", "",
                           {IValue(self), IValue(Scalar(2.0)), IValue(dim), IValue(keepdim), IValue()});
       }),
    op("aten::frobenius_norm.out(Tensor self, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef dim, bool keepdim, Tensor out) {
         checkFrobeniusDims(dim);
         return writeOut(out, vectorNorm(self, Scalar(2.0), dim, keepdim, std::nullopt), "frobenius_norm");
       }),
    op("aten::nuclear_norm(Tensor self, bool keepdim=False) -> Tensor",
       [](const Tensor& self, bool keepdim) {
         checkNuclearNormInput(self);
         return matrixNormStr(self, "nuc", IntArrayRef({0, 1}), keepdim, std::nullopt);
       }),
    op("aten::nuclear_norm.dim(Tensor self, int[2] dim, bool keepdim=False) -> Tensor",
       [](const Tensor& self, IntArrayRef dim, bool keepdim) {
         return matrixNormStr(self, "nuc", dim, keepdim, std::nullopt);
       }),
    op("aten::nuclear_norm.out(Tensor self, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, bool keepdim, Tensor out) {
         checkNuclearNormInput(self);
         return writeOut(out, matrixNormStr(self, "nuc", IntArrayRef({0, 1}), keepdim, std::nullopt), "nuclear_norm");
       }),
    op("aten::nuclear_norm.dim_out(Tensor self, int[2] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef dim, bool keepdim, Tensor out) {
         return writeOut(out, matrixNormStr(self, "nuc", dim, keepdim, std::nullopt), "nuclear_norm");
       }),
    // The norm over every dim but `dim` (weight_norm's), kept as size-1 dims.
    op("aten::norm_except_dim(Tensor v, int pow=2, int dim=0) -> Tensor",
       [](const Tensor& v, int64_t pow, int64_t dim) {
         if (dim == -1) return callTensor("aten::norm", "Scalar", {IValue(v), IValue(Scalar(pow))});
         const int64_t d = wrapDim(dim, v.dim());
         std::vector<int64_t> others;
         for (int64_t i = 0; i < v.dim(); ++i) {
           if (i != d) others.push_back(i);
         }
         return callTensor("aten::norm", "ScalarOpt_dim",
                           {IValue(v), IValue(Scalar(pow)), IValue(IntArrayRef(others)), IValue(true)});
       }),
    op("aten::linalg_cond(Tensor self, Scalar? p=None) -> Tensor",
       [](const Tensor& self, const std::optional<Scalar>& p) { return linalgCond(self, p); }),
    op("aten::linalg_cond.p_str(Tensor self, str p) -> Tensor",
       [](const Tensor& self, const std::string& p) { return linalgCondStr(self, p); }),
    op("aten::linalg_cond.out(Tensor self, Scalar? p=None, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::optional<Scalar>& p, Tensor out) {
         return writeOut(out, linalgCond(self, p), "linalg.cond");
       }),
    op("aten::linalg_cond.p_str_out(Tensor self, str p, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::string& p, Tensor out) {
         return writeOut(out, linalgCondStr(self, p), "linalg.cond");
       }),
    op("aten::linalg_tensorinv(Tensor self, int ind=2) -> Tensor",
       [](const Tensor& self, int64_t ind) { return tensorinv(self, ind); }),
    op("aten::linalg_tensorinv.out(Tensor self, int ind=2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t ind, Tensor out) {
         return writeOut(out, tensorinv(self, ind), "linalg.tensorinv");
       }),
    op("aten::linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor",
       [](const Tensor& self, const Tensor& other, const std::optional<DimVector>& dims) {
         return tensorsolve(self, other, dims);
       }),
    op("aten::linalg_tensorsolve.out(Tensor self, Tensor other, int[]? dims=None, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, const std::optional<DimVector>& dims, Tensor out) {
         return writeOut(out, tensorsolve(self, other, dims), "linalg.tensorsolve");
       }),
    op("aten::linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor",
       [](const Tensor& x, const Tensor& y, int64_t dim) { return vecdot(x, y, dim); }),
    op("aten::linalg_vecdot.out(Tensor x, Tensor y, *, int dim=-1, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& x, const Tensor& y, int64_t dim, Tensor out) {
         return writeOut(out, vecdot(x, y, dim), "linalg.vecdot");
       }),
    op("aten::linalg_vander(Tensor x, *, int? N=None) -> Tensor",
       [](const Tensor& x, std::optional<int64_t> N) { return linalgVander(x, N); }),
    op("aten::linalg_diagonal(Tensor(a) A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor(a)",
       [](const Tensor& A, int64_t offset, int64_t dim1, int64_t dim2) {
         return callTensor("aten::diagonal", "", {IValue(A), IValue(offset), IValue(dim1), IValue(dim2)});
       }),
    op("aten::linalg_matmul(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) {
         return callTensor("aten::matmul", "", {IValue(self), IValue(other)});
       }),
    op("aten::linalg_matmul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return matmulOut(self, other, out); }), );

}  // namespace kiln
