// The derivative formulas of torch.linalg's primitives (kiln/ops/linalg_more_ops.cpp),
// as FunctionsManual.cpp of torch 1.13 computes them, for real matrices (the
// adjoint is the transpose). Undefined output gradients arrive as zeros,
// which every formula below treats as torch treats an absent gradient.
#include "kiln/autograd/formula_prelude.h"

namespace kiln::autograd {

const char* linalgFormulaPrelude() {
  return R"(
def _linalg_mT(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)

def _linalg_det_backward(grad: Tensor, det: Tensor, A: Tensor) -> Tensor:
    if bool((det == 0).any()):
        # A singular matrix has no inverse: d det / dA from the SVD, whose
        # singular values' product rule handles the zeros.
        U, S, Vh = torch.linalg_svd(A, False)
        alpha = torch.linalg_det(U) * torch.linalg_det(Vh)
        D = _prod_backward_with_zeros((grad * alpha).unsqueeze(-1), S, S.dim() - 1)
        return torch.matmul(U * D.unsqueeze(-2), Vh)
    return (grad * det).unsqueeze(-1).unsqueeze(-1) * _linalg_mT(torch.linalg_inv(A))

def _linalg_slogdet_backward(grad_logabsdet: Tensor, A: Tensor) -> Tensor:
    return grad_logabsdet.unsqueeze(-1).unsqueeze(-1) * _linalg_mT(torch.linalg_inv_ex(A)[0])

def _linalg_solve_backward(grad: Tensor, result: Tensor, A: Tensor, B: Tensor, left: bool) -> Tuple[Tensor, Tensor]:
    vector = B.dim() == 1 or (A.dim() - 1 == B.dim() and B.size() == A.size()[:-1])
    gB = torch.linalg_solve(_linalg_mT(A), grad, left=left)
    if vector:
        gA = -(gB.unsqueeze(-1) * result.unsqueeze(-2))
    elif left:
        gA = -torch.matmul(gB, _linalg_mT(result))
    else:
        gA = -torch.matmul(_linalg_mT(result), gB)
    return gA, gB

def _linalg_cholesky_backward(grad: Tensor, upper: bool, L: Tensor) -> Tensor:
    if upper:
        L = _linalg_mT(L)
        grad = _linalg_mT(grad)
    phi = torch.matmul(_linalg_mT(L), grad).tril()
    phi = 0.5 * (phi + _linalg_mT(phi.tril(-1)))
    gA = torch.linalg_solve_triangular(_linalg_mT(L), phi, upper=True, left=True)
    return torch.linalg_solve_triangular(L, gA, upper=False, left=False)

def _linalg_cholesky_solve_backward(grad: Tensor, self: Tensor, input2: Tensor, result: Tensor, upper: bool) -> Tuple[Tensor, Tensor]:
    grad_self = torch.cholesky_solve(grad, input2, upper)
    common = torch.matmul(grad_self, _linalg_mT(result))
    common = common + _linalg_mT(common)
    if upper:
        return grad_self, -torch.matmul(input2, common)
    return grad_self, -torch.matmul(common, input2)

def _linalg_cholesky_inverse_backward(grad: Tensor, self: Tensor, upper: bool, result: Tensor) -> Tensor:
    common = torch.matmul(result, torch.matmul(grad + _linalg_mT(grad), result))
    if upper:
        return -torch.matmul(self, common)
    return -torch.matmul(common, self)

def _linalg_triangular_part(x: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    if upper:
        return x.triu(int(unitriangular))
    return x.tril(-int(unitriangular))

def _linalg_solve_triangular_backward(grad: Tensor, A: Tensor, X: Tensor, upper: bool, left: bool, unitriangular: bool) -> Tuple[Tensor, Tensor]:
    gB = torch.linalg_solve_triangular(_linalg_mT(A), grad, upper=not upper, left=left, unitriangular=unitriangular)
    if left:
        gA = -torch.matmul(gB, _linalg_mT(X))
    else:
        gA = -torch.matmul(_linalg_mT(X), gB)
    return _linalg_triangular_part(gA, upper, unitriangular), gB

def _linalg_triangular_solve_backward(grad_x: Tensor, grad_m: Tensor, A: Tensor, X: Tensor, upper: bool, transpose: bool, unitriangular: bool) -> Tuple[Tensor, Tensor]:
    grad_b = torch.triangular_solve(grad_x, A, upper, not transpose, unitriangular)[0]
    if transpose:
        grad_a = -torch.matmul(X, _linalg_mT(grad_b))
    else:
        grad_a = -torch.matmul(grad_b, _linalg_mT(X))
    return grad_b, _linalg_triangular_part(grad_a, upper, unitriangular) + grad_m

def _linalg_lu_backward(gL: Tensor, gU: Tensor, P: Tensor, L: Tensor, U: Tensor) -> Tensor:
    m = L.size(-2)
    n = U.size(-1)
    k = min(m, n)
    if m == n:
        # P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T
        phi = torch.matmul(_linalg_mT(L), gL).tril(-1) + torch.matmul(gU, _linalg_mT(U)).triu()
        gA = torch.linalg_solve_triangular(_linalg_mT(L), phi, upper=True, left=True, unitriangular=True)
        return torch.matmul(P, torch.linalg_solve_triangular(_linalg_mT(U), gA, upper=False, left=False))
    if m < n:
        U1 = U.narrow(-1, 0, k)
        gA = torch.matmul(_linalg_mT(L), gL) - torch.matmul(gU.triu(), _linalg_mT(U))
        gA = torch.linalg_solve_triangular(_linalg_mT(U1), gA.tril(-1), upper=False, left=False)
        gA = torch.cat([gA + gU.narrow(-1, 0, k).triu(), gU.narrow(-1, k, n - k)], -1)
        gA = torch.linalg_solve_triangular(_linalg_mT(L), gA, upper=True, left=True, unitriangular=True)
        return torch.matmul(P, gA)
    L1 = L.narrow(-2, 0, k)
    gA = torch.matmul(gU, _linalg_mT(U)) - torch.matmul(_linalg_mT(L), gL.tril(-1))
    gA = torch.linalg_solve_triangular(_linalg_mT(L1), gA.triu(), upper=True, left=True, unitriangular=True)
    gA = torch.cat([gA + gL.narrow(-2, 0, k).tril(-1), gL.narrow(-2, k, m - k)], -2)
    gA = torch.linalg_solve_triangular(_linalg_mT(U), gA, upper=False, left=False)
    return torch.matmul(P, gA)

def _linalg_lu_factor_ex_backward(grad: Tensor, LU: Tensor, pivots: Tensor) -> Tensor:
    P, L, U = torch.lu_unpack(LU, pivots)
    k = min(LU.size(-2), LU.size(-1))
    return _linalg_lu_backward(grad.narrow(-1, 0, k).tril(-1), grad.narrow(-2, 0, k).triu(), P, L, U)

def _linalg_lu_unpack_backward(gL: Tensor, gU: Tensor, m: int, n: int) -> Tensor:
    k = min(m, n)
    if m == n:
        return gL.tril(-1) + gU.triu()
    if m < n:
        return torch.cat([gL.tril(-1), torch.zeros_like(gU.narrow(-1, k, n - k))], -1) + gU.triu()
    return gL.tril(-1) + torch.cat([gU.triu(), torch.zeros_like(gL.narrow(-2, k, m - k))], -2)

def _linalg_lu_solve_LU_backward(gX: Tensor, LU: Tensor, pivots: Tensor, X: Tensor, left: bool, adjoint: bool) -> Tensor:
    P, L, U = torch.lu_unpack(LU, pivots)
    if left != adjoint:
        # gR = U^-T op(-gX) op(X)^T, gL = tril(L^-T gR U^T, -1), gU = triu(gR)
        if left:
            prod = torch.matmul(-gX, _linalg_mT(X))
        else:
            prod = torch.matmul(-_linalg_mT(gX), X)
        gR = torch.linalg_solve_triangular(_linalg_mT(U), prod, upper=False)
        gL = torch.linalg_solve_triangular(_linalg_mT(L), torch.matmul(gR, _linalg_mT(U)), upper=True, left=True, unitriangular=True).tril(-1)
        return gL + gR.triu()
    # gR = -P^T op(X) op(gX)^T P L^-T, gU = triu(L^T gR U^-T), gL = tril(gR, -1)
    if left:
        gR = -torch.matmul(torch.matmul(torch.matmul(_linalg_mT(P), X), _linalg_mT(gX)), P)
    else:
        gR = -torch.matmul(torch.matmul(torch.matmul(_linalg_mT(P), _linalg_mT(X)), gX), P)
    gR = torch.linalg_solve_triangular(_linalg_mT(L), gR, upper=True, left=False, unitriangular=True)
    gU = torch.linalg_solve_triangular(_linalg_mT(U), torch.matmul(_linalg_mT(L), gR), upper=False, left=False).triu()
    return gR.tril(-1) + gU

def _linalg_qr_backward(gQ: Tensor, gR: Tensor, Q: Tensor, R: Tensor, mode: str) -> Tensor:
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m = Q.size(-2)
    n = R.size(-1)
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    M = torch.matmul(gR, _linalg_mT(R)) - torch.matmul(_linalg_mT(Q), gQ)
    if m >= n:
        # Q (X + X^T with X's diagonal once), X = triu(M); then R^-T from the right.
        X = M.triu()
        b = torch.matmul(Q, X + _linalg_mT(X.triu(1))) + gQ
        return torch.linalg_solve_triangular(_linalg_mT(R), b, upper=False, left=False)
    Y = -M
    b = torch.matmul(Q, (Y - _linalg_mT(Y)).tril())
    gA = torch.linalg_solve_triangular(_linalg_mT(R.narrow(-1, 0, m)), b, upper=False, left=False)
    gA = torch.cat([gA, torch.zeros_like(R.narrow(-1, m, n - m))], -1)
    return gA + torch.matmul(Q, gR)

def _linalg_svd_backward(gU: Tensor, gS: Tensor, gVh: Tensor, U: Tensor, S: Tensor, Vh: Tensor, full_matrices: bool, compute_uv: bool) -> Tensor:
    if not compute_uv:
        raise RuntimeError("linalg.svd: the derivative needs the singular vectors; call it with compute_uv=True")
    k = S.size(-1)
    if full_matrices:
        gU = gU.narrow(-1, 0, k)
        gVh = gVh.narrow(-2, 0, k)
        U = U.narrow(-1, 0, k)
        Vh = Vh.narrow(-2, 0, k)
    m = U.size(-2)
    n = Vh.size(-1)
    eye = torch.eye(k, dtype=S.dtype)
    UhgU = torch.matmul(_linalg_mT(U), gU)
    UhgU = UhgU - _linalg_mT(UhgU)
    VhgV = torch.matmul(Vh, _linalg_mT(gVh))
    VhgV = VhgV - _linalg_mT(VhgV)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye
    gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E + gS.unsqueeze(-1) * eye
    if m > n:
        gA = torch.matmul(U, gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - torch.matmul(U, torch.matmul(_linalg_mT(U), gUSinv))
        return torch.matmul(gA, Vh)
    if m < n:
        gA = torch.matmul(gA, Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - torch.matmul(torch.matmul(SinvgVh, _linalg_mT(Vh)), Vh)
        return torch.matmul(U, gA)
    return torch.matmul(U, torch.matmul(gA, Vh))

def _linalg_eigh_backward(gL: Tensor, gV: Tensor, L: Tensor, V: Tensor, compute_v: bool) -> Tensor:
    if not compute_v:
        raise RuntimeError("linalg.eigh: the derivative needs the eigenvectors; call it with compute_v=True")
    eye = torch.eye(L.size(-1), dtype=L.dtype)
    VhgV = torch.matmul(_linalg_mT(V), gV)
    VhgV = 0.5 * (VhgV - _linalg_mT(VhgV))
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye
    inner = VhgV / E + gL.unsqueeze(-1) * eye
    return torch.matmul(V, torch.matmul(inner, _linalg_mT(V)))

def _linalg_eig_backward(self: Tensor) -> Tensor:
    raise RuntimeError("linalg.eig: kiln has no derivative for complex eigen-decompositions yet; use linalg.eigh for symmetric matrices")

def _linalg_pinv_backward(grad: Tensor, pinvA: Tensor, A: Tensor) -> Tensor:
    m = A.size(-2)
    n = A.size(-1)
    pinvAh = _linalg_mT(pinvA)
    gradh = _linalg_mT(grad)
    if m <= n:
        K = torch.matmul(gradh, pinvA)
        KpinvAh = torch.matmul(K, pinvAh)
        return -_linalg_mT(torch.matmul(pinvA, K)) + KpinvAh - torch.matmul(torch.matmul(A, pinvA), KpinvAh) + torch.matmul(torch.matmul(pinvAh, pinvA), gradh - torch.matmul(K, A))
    K = torch.matmul(pinvA, gradh)
    pinvAhK = torch.matmul(pinvAh, K)
    return -_linalg_mT(torch.matmul(K, pinvA)) + torch.matmul(torch.matmul(gradh - torch.matmul(A, K), pinvA), pinvAh) + pinvAhK - torch.matmul(torch.matmul(pinvAhK, pinvA), A)

def _linalg_lstsq_backward(grad: Tensor, A: Tensor, B: Tensor) -> Tuple[Tensor, Tensor]:
    vector = B.dim() == A.dim() - 1
    gX = grad.unsqueeze(-1) if vector else grad
    b = B.unsqueeze(-1) if vector else B
    pinvA = torch.linalg_pinv(A)
    gA = _linalg_pinv_backward(torch.matmul(gX, _linalg_mT(b)), pinvA, A)
    gB = torch.matmul(_linalg_mT(pinvA), gX)
    return gA, gB.squeeze(-1) if vector else gB

def _linalg_matrix_exp_backward(grad: Tensor, self: Tensor) -> Tensor:
    # The adjoint of the Frechet derivative: the top-right block of
    # exp([[A^T, G], [0, A^T]]).
    n = self.size(-1)
    At = _linalg_mT(self)
    block = torch.cat([torch.cat([At, grad], -1), torch.cat([torch.zeros_like(At), At], -1)], -2)
    return torch.linalg_matrix_exp(block).narrow(-2, 0, n).narrow(-1, n, n)

)";
}

}  // namespace kiln::autograd
