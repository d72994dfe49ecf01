"""torch.linalg and its legacy names (kiln/ops/linalg_more_ops.cpp over LAPACK)
against torch 1.13: values (1e-5 in float32, 1e-10 in float64), shapes and
dtypes, batches and non-contiguous inputs, every overload (out= included),
torch's errors, scripts (torch.linalg.name in TorchScript), and gradients
(against torch, and by float64 finite differences). Eigenvectors and singular
vectors are compared through what their sign does not change (|U|,
reconstructions), as torch's own tests do."""
import numpy as np
import pytest
import torch

import kiln
from autograd_check import assert_gradients_match_torch, gradcheck
from conftest import assert_same

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-10)}


def _rng(seed):
    return np.random.default_rng(seed)


def _general(shape, dtype=np.float64, seed=0):
    """Well-conditioned square matrices: noise plus a dominant diagonal."""
    a = _rng(seed).standard_normal(shape)
    return (a + 3 * np.eye(shape[-1])).astype(dtype)


def _spd(shape, dtype=np.float64, seed=0):
    a = _rng(seed).standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _triangular(shape, upper, dtype=np.float64, seed=0):
    a = _general(shape, dtype, seed)
    return np.triu(a) if upper else np.tril(a)


def _randn(shape, dtype=np.float64, seed=0):
    return _rng(seed).standard_normal(shape).astype(dtype)


def _tensors(lib, arrays, transposed=False):
    out = []
    for a in arrays:
        if not isinstance(a, np.ndarray):
            out.append(a)
        elif transposed and a.ndim >= 2:
            # The same values stored transposed: a non-contiguous view.
            out.append(lib.from_numpy(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2))
        else:
            out.append(lib.from_numpy(a.copy()))
    return out


def _check(fn, *arrays, transposed=False, tol=None):
    """fn(lib, *tensors) agrees between kiln and torch."""
    dtype = next(a.dtype.type for a in arrays if isinstance(a, np.ndarray))
    tol = tol or TOL.get(dtype, dict(rtol=1e-5, atol=1e-5))
    theirs = fn(torch, *_tensors(torch, arrays, transposed))
    ours = fn(kiln, *_tensors(kiln, arrays, transposed))
    assert_same(ours, theirs, **tol)


# ---------------------------------------------------------------- deterministic results

SQUARE_OPS = {
    "inv": lambda lib, a: lib.linalg.inv(a),
    "inverse": lambda lib, a: lib.inverse(a),
    "inverse_method": lambda lib, a: a.inverse(),
    "inv_ex": lambda lib, a: tuple(lib.linalg.inv_ex(a)),
    "det": lambda lib, a: lib.linalg.det(a),
    "det_legacy": lambda lib, a: lib.det(a),
    "det_method": lambda lib, a: a.det(),
    "slogdet": lambda lib, a: tuple(lib.linalg.slogdet(a)),
    "slogdet_legacy": lambda lib, a: tuple(lib.slogdet(a)),
    "logdet": lambda lib, a: lib.logdet(a),
    "lu_factor": lambda lib, a: tuple(lib.linalg.lu_factor(a)),
    "lu_factor_ex": lambda lib, a: tuple(lib.linalg.lu_factor_ex(a)),
    "lu": lambda lib, a: tuple(lib.linalg.lu(a)),
    "lu_unpack": lambda lib, a: tuple(lib.lu_unpack(*lib.linalg.lu_factor(a))),
    "matrix_power_3": lambda lib, a: lib.linalg.matrix_power(a, 3),
    "matrix_power_0": lambda lib, a: lib.linalg.matrix_power(a, 0),
    "matrix_power_-2": lambda lib, a: lib.matrix_power(a, -2),
    "matrix_exp": lambda lib, a: lib.linalg.matrix_exp(a),
    "matrix_exp_legacy": lambda lib, a: lib.matrix_exp(a),
    "matrix_exp_large": lambda lib, a: lib.linalg.matrix_exp(a * 3),
    "cond": lambda lib, a: lib.linalg.cond(a),
    "cond_-2": lambda lib, a: lib.linalg.cond(a, -2),
    "cond_1": lambda lib, a: lib.linalg.cond(a, 1),
    "cond_inf": lambda lib, a: lib.linalg.cond(a, float("inf")),
    "cond_fro": lambda lib, a: lib.linalg.cond(a, "fro"),
    "cond_nuc": lambda lib, a: lib.linalg.cond(a, "nuc"),
    "pinv_square": lambda lib, a: lib.linalg.pinv(a),
    "matrix_rank": lambda lib, a: lib.linalg.matrix_rank(a),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1), (0, 0), (2, 0, 0)])
@pytest.mark.parametrize("name", sorted(SQUARE_OPS))
def test_square_matrix_ops(name, shape, dtype):
    if shape[-1] == 0 and name.startswith(("matrix_exp", "cond", "lu")):
        pytest.skip("empty matrices: checked in test_empty_matrices")
    a = _general(shape, dtype, seed=len(name))
    if name == "logdet":
        a = _spd(shape, dtype)
    tol = None
    if dtype == np.float32 and name.startswith(("matrix_exp", "cond")):
        # Products of many float32 terms: agreement relative to the result's size.
        scale = np.abs(torch.linalg.matrix_exp(torch.from_numpy(a * 3)).numpy()).max() if a.size else 1.0
        tol = dict(rtol=1e-4, atol=1e-5 * max(1.0, scale if name == "matrix_exp_large" else 1.0))
    _check(SQUARE_OPS[name], a, tol=tol)
    if len(shape) == 3:
        _check(SQUARE_OPS[name], a, transposed=True, tol=tol)


def test_determinants_of_singular_and_negative_matrices():
    s = np.diag([2.0, 0.0, 3.0])
    neg = np.diag([-2.0, 1.0, 3.0])
    for a in (s, neg, np.stack([s, neg, _general((3, 3))])):
        _check(lambda lib, x: (lib.linalg.det(x), *lib.linalg.slogdet(x), lib.logdet(x)), a)


def test_matrix_power_integer_dtype():
    a = _rng(3).integers(-3, 4, (2, 3, 3))
    for n in (0, 1, 2, 5):
        _check(lambda lib, x: lib.linalg.matrix_power(x, n), a)


SOLVE_CASES = {
    "matrix": ((3, 3), (3, 2), {}),
    "vector": ((3, 3), (3,), {}),
    "batched_vector": ((2, 3, 3), (2, 3), {}),
    "broadcast": ((2, 1, 3, 3), (4, 3, 2), {}),
    "right": ((3, 3), (2, 3), {"left": False}),
    "right_batched": ((2, 3, 3), (2, 4, 3), {"left": False}),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", sorted(SOLVE_CASES))
def test_solve(case, dtype):
    a_shape, b_shape, kw = SOLVE_CASES[case]
    a, b = _general(a_shape, dtype), _randn(b_shape, dtype, 1)
    _check(lambda lib, x, y: lib.linalg.solve(x, y, **kw), a, b)
    _check(lambda lib, x, y: tuple(lib.linalg.solve_ex(x, y, **kw)), a, b, transposed=True)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve(left, adjoint):
    a, b = _general((2, 4, 4)), _randn((2, 4, 3) if left else (2, 3, 4), seed=1)
    _check(lambda lib, x, y: lib.linalg.lu_solve(*lib.linalg.lu_factor(x), y, left=left, adjoint=adjoint), a, b)
    if left and not adjoint:
        _check(lambda lib, x, y: lib.lu_solve(y, *lib.linalg.lu_factor(x)), a, b)


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (2, 3, 5), (5, 2)])
def test_lu_of_rectangular_matrices(shape):
    a = _randn(shape, seed=4)
    _check(lambda lib, x: tuple(lib.linalg.lu(x)), a)
    _check(lambda lib, x: tuple(lib.lu_unpack(*lib.linalg.lu_factor_ex(x)[:2])), a)
    _check(lambda lib, x: tuple(lib.lu_unpack(*lib.linalg.lu_factor(x), unpack_data=False)), a)
    _check(lambda lib, x: tuple(lib.lu_unpack(*lib.linalg.lu_factor(x), unpack_pivots=False)), a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_family(upper, dtype):
    a = _spd((2, 4, 4), dtype)
    b = _randn((2, 4, 3), dtype, 1)
    _check(lambda lib, x: lib.linalg.cholesky(x, upper=upper), a)
    _check(lambda lib, x: tuple(lib.linalg.cholesky_ex(x, upper=upper)), a, transposed=True)
    _check(lambda lib, x: lib.cholesky(x, upper), a)
    _check(lambda lib, x, y: lib.cholesky_solve(y, lib.linalg.cholesky(x, upper=upper), upper), a, b)
    _check(lambda lib, x: lib.cholesky_inverse(lib.linalg.cholesky(x, upper=upper), upper), a)
    _check(lambda lib, x, y: lib.cholesky_solve(y, x), _spd((4, 4), dtype), _randn((3, 4, 2), dtype))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular(upper, left, unitriangular):
    a = _triangular((2, 4, 4), upper)
    b = _randn((2, 4, 3) if left else (2, 3, 4), seed=1)
    _check(lambda lib, x, y: lib.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unitriangular),
           a, b, transposed=True)
    if left:
        for transpose in (False, True):
            _check(lambda lib, x, y: tuple(lib.triangular_solve(y, x, upper, transpose, unitriangular)), a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3), (2, 3, 5)])
def test_qr(shape, dtype):
    a = _randn(shape, dtype, seed=2)
    for mode in ("reduced", "complete", "r"):
        _check(lambda lib, x: tuple(lib.linalg.qr(x, mode)), a)
    _check(lambda lib, x: tuple(lib.qr(x)), a, transposed=True)
    _check(lambda lib, x: tuple(lib.qr(x, some=False)), a)
    _check(lambda lib, x: tuple(lib.geqrf(x)), a)
    geqrf_a, tau = torch.geqrf(torch.from_numpy(a))
    c = _randn(shape[:-2] + (shape[-2], 2), dtype, 5)
    for transpose in (False, True):
        _check(lambda lib, x, t, y: lib.ormqr(x, t, y, True, transpose), geqrf_a.numpy(), tau.numpy(), c)
        _check(lambda lib, x, t, y: lib.ormqr(x, t, y, False, transpose), geqrf_a.numpy(), tau.numpy(),
               np.swapaxes(c, -1, -2).copy())


def _abs_all(values):
    return tuple(v.abs() for v in values)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3), (2, 3, 3)])
def test_svd(shape, dtype):
    a = _randn(shape, dtype, seed=3)
    tol = TOL[dtype]
    _check(lambda lib, x: lib.linalg.svdvals(x), a)
    for full in (True, False):
        _check(lambda lib, x: _abs_all(lib.linalg.svd(x, full_matrices=full)), a, transposed=True)
        U, S, Vh = kiln.linalg.svd(kiln.from_numpy(a), full_matrices=False)
        np.testing.assert_allclose((U.numpy() * S.numpy()[..., None, :]) @ Vh.numpy(), a, **tol)
    for some in (True, False):
        _check(lambda lib, x: _abs_all(lib.svd(x, some=some)), a)
    _check(lambda lib, x: tuple(lib.svd(x, compute_uv=False)), a)
    if len(shape) == 2:
        _check(lambda lib, x: lib.nuclear_norm(x, keepdim=True), a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(uplo, dtype):
    # Only the named triangle is read: the other holds garbage.
    a = _spd((2, 4, 4), dtype) + np.triu(_randn((2, 4, 4), dtype, 7), 1) * (uplo == "L")
    _check(lambda lib, x: lib.linalg.eigvalsh(x, uplo), a)
    _check(lambda lib, x: _abs_all(lib.linalg.eigh(x, uplo)), a, transposed=True)
    L, V = kiln.linalg.eigh(kiln.from_numpy(_spd((4, 4), dtype)))
    np.testing.assert_allclose((V.numpy() * L.numpy()[None, :]) @ V.numpy().T, _spd((4, 4), dtype),
                               rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-4 if dtype == np.float32 else 1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eig(dtype):
    # Rotations have complex pairs; a triangular matrix has real eigenvalues.
    rotation = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    for a in (rotation.astype(dtype), _general((2, 4, 4), dtype, 5)):
        ours = kiln.linalg.eig(kiln.from_numpy(a))
        theirs = torch.linalg.eig(torch.from_numpy(a))
        key = lambda v: np.sort_complex(np.round(v, 4))  # noqa: E731
        np.testing.assert_allclose(key(ours[0].numpy()), key(theirs[0].numpy()), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(np.sort_complex(kiln.linalg.eigvals(kiln.from_numpy(a)).numpy()),
                                   np.sort_complex(ours[0].numpy()))
        L, V = ours[0].numpy(), ours[1].numpy()
        assert str(ours[0].dtype) == str(theirs[0].dtype).replace("torch.", "kiln.")
        np.testing.assert_allclose(a @ V, V * L[..., None, :], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1, rtol=1e-5)


LSTSQ_CASES = [((6, 3), (6, 2)), ((3, 6), (3, 2)), ((4, 4), (4, 1)), ((2, 6, 3), (2, 6, 2)), ((6, 3), (6,))]


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", LSTSQ_CASES)
def test_lstsq(shapes, driver):
    a_shape, b_shape = shapes
    if driver == "gels" and a_shape[-2] < a_shape[-1]:
        pytest.skip("gels: full-rank tall or square systems")
    a, b = _randn(a_shape, seed=6), _randn(b_shape, seed=7)
    _check(lambda lib, x, y: tuple(lib.linalg.lstsq(x, y, driver=driver)), a, b, tol=dict(rtol=1e-8, atol=1e-9))


def test_matrix_rank_and_pinv_overloads():
    # Rank 2 in a 4 x 3 matrix, and a batch.
    low = _randn((4, 2), seed=1) @ _randn((2, 3), seed=2)
    batch = np.stack([low, _randn((4, 3), seed=3)])
    sym = _spd((3, 3))
    sym[0, 0] = -50.0
    for a in (low, batch):
        _check(lambda lib, x: lib.linalg.matrix_rank(x), a)
        _check(lambda lib, x: lib.linalg.matrix_rank(x, 1.5), a)
        _check(lambda lib, x: lib.linalg.matrix_rank(x, atol=1.0, rtol=0.1), a)
        _check(lambda lib, x: lib.linalg.matrix_rank(x, rtol=0.5), a)
        _check(lambda lib, x: lib.linalg.matrix_rank(x, lib.from_numpy(np.array(0.5))), a)
        _check(lambda lib, x: lib.linalg.pinv(x), a, tol=dict(rtol=1e-8, atol=1e-9))
        _check(lambda lib, x: lib.linalg.pinv(x, 0.1), a, tol=dict(rtol=1e-8, atol=1e-9))
        _check(lambda lib, x: lib.linalg.pinv(x, atol=1.0), a, tol=dict(rtol=1e-8, atol=1e-9))
        _check(lambda lib, x: lib.pinverse(x), a, tol=dict(rtol=1e-8, atol=1e-9))
    _check(lambda lib, x: lib.linalg.matrix_rank(x, hermitian=True), sym)
    _check(lambda lib, x: lib.linalg.pinv(x, hermitian=True), sym, tol=dict(rtol=1e-8, atol=1e-9))


NORMS = {
    "vector": lambda lib, x: lib.linalg.vector_norm(x),
    "vector_ord1_dim": lambda lib, x: lib.linalg.vector_norm(x, 1, dim=-1),
    "vector_inf_keepdim": lambda lib, x: lib.linalg.vector_norm(x, float("inf"), dim=(0, -1), keepdim=True),
    "vector_-inf": lambda lib, x: lib.linalg.vector_norm(x, float("-inf")),
    "vector_0": lambda lib, x: lib.linalg.vector_norm(x, 0),
    "vector_3.5_dtype": lambda lib, x: lib.linalg.vector_norm(x, 3.5, dtype=lib.float64),
    "matrix_fro": lambda lib, x: lib.linalg.matrix_norm(x),
    "matrix_nuc": lambda lib, x: lib.linalg.matrix_norm(x, "nuc"),
    "matrix_1": lambda lib, x: lib.linalg.matrix_norm(x, 1),
    "matrix_-1": lambda lib, x: lib.linalg.matrix_norm(x, -1),
    "matrix_inf": lambda lib, x: lib.linalg.matrix_norm(x, float("inf")),
    "matrix_-inf_keepdim": lambda lib, x: lib.linalg.matrix_norm(x, float("-inf"), keepdim=True),
    "matrix_2_dims": lambda lib, x: lib.linalg.matrix_norm(x, 2, dim=(0, 2)),
    "matrix_-2_keepdim": lambda lib, x: lib.linalg.matrix_norm(x, -2, dim=(2, 0), keepdim=True),
    "norm": lambda lib, x: lib.linalg.norm(x),
    "norm_matrix_ord": lambda lib, x: lib.linalg.norm(x[0], 1),
    "norm_vector_ord": lambda lib, x: lib.linalg.norm(x[0, 0], 3),
    "norm_dim2": lambda lib, x: lib.linalg.norm(x, float("inf"), dim=(1, 2)),
    "norm_str": lambda lib, x: lib.linalg.norm(x, "fro", dim=(0, 1)),
    "norm_str_nuc": lambda lib, x: lib.linalg.norm(x[1], "nuc"),
    "frobenius": lambda lib, x: lib.frobenius_norm(x),
    "frobenius_dim": lambda lib, x: lib.frobenius_norm(x, [1, 2], True),
    "nuclear_dim": lambda lib, x: lib.nuclear_norm(x, [0, 1]),
    "norm_except_dim": lambda lib, x: lib.norm_except_dim(x, 2, 1),
    "norm_except_dim_3": lambda lib, x: lib.norm_except_dim(x, 3, 0),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(NORMS))
def test_norms(name, dtype):
    x = _randn((2, 3, 4), dtype, seed=8)
    _check(NORMS[name], x)
    _check(NORMS[name], x, transposed=True)


def test_tensor_forms_and_aliases():
    a = _general((6, 6)).reshape(2, 3, 6)
    _check(lambda lib, x: lib.linalg.tensorinv(x, 2), a)
    _check(lambda lib, x: lib.linalg.tensorinv(x.reshape(6, 6), 1), a)
    t = _general((6, 6)).reshape(6, 2, 3)
    b = _randn((6,), seed=2)
    _check(lambda lib, x, y: lib.linalg.tensorsolve(x, y), t, b)
    _check(lambda lib, x, y: lib.linalg.tensorsolve(x.permute(1, 0, 2), y, dims=(0,)), t, b)
    x, y = _randn((3, 4)), _randn((2, 3, 4), seed=1)
    _check(lambda lib, p, q: lib.linalg.vecdot(p, q), x, y)
    _check(lambda lib, p, q: lib.linalg.vecdot(p, q[0], dim=0), x, y)
    _check(lambda lib, p: lib.linalg.diagonal(p, offset=1), y)
    _check(lambda lib, p, q: lib.linalg.matmul(p, q.transpose(-1, -2)), x, y)


def test_empty_matrices():
    for shape in [(0, 0), (2, 0, 0)]:
        a = np.zeros(shape)
        _check(lambda lib, x: (lib.linalg.det(x), lib.linalg.inv(x), *lib.linalg.lu_factor(x)), a)
        _check(lambda lib, x: lib.linalg.matrix_exp(x), a)
        _check(lambda lib, x: lib.linalg.cholesky(x), a)
        _check(lambda lib, x: lib.linalg.eigvalsh(x), a)
    for shape in [(3, 0), (0, 3)]:
        a = np.zeros(shape)
        _check(lambda lib, x: lib.linalg.svdvals(x), a)
        _check(lambda lib, x: tuple(lib.linalg.svd(x)), a)
        _check(lambda lib, x: tuple(lib.linalg.qr(x)), a)


# ---------------------------------------------------------------- out=

def test_out_variants():
    a, b = _general((3, 3)), _randn((3, 2), seed=1)
    spd = _spd((3, 3))

    def both(fn, *arrays, n_out=1):
        """fn(lib, outs, *tensors) fills its out= tensors as the function form does."""
        for lib in (kiln, torch):
            outs = [lib.empty(0, dtype=lib.float64) for _ in range(n_out)]
            if lib is torch:
                theirs = fn(lib, outs, *_tensors(lib, arrays))
                torch_outs = outs
            else:
                ours = fn(lib, outs, *_tensors(lib, arrays))
                kiln_outs = outs
        assert_same(kiln_outs, torch_outs, rtol=1e-10, atol=1e-10)
        assert_same(ours, theirs, rtol=1e-10, atol=1e-10)

    both(lambda lib, o, x: lib.linalg.inv(x, out=o[0]), a)
    both(lambda lib, o, x: lib.inverse(x, out=o[0]), a)
    both(lambda lib, o, x: lib.linalg.det(x, out=o[0]), a)
    both(lambda lib, o, x, y: lib.linalg.solve(x, y, out=o[0]), a, b)
    both(lambda lib, o, x: lib.linalg.cholesky(x, out=o[0]), spd)
    both(lambda lib, o, x: lib.linalg.matrix_power(x, 2, out=o[0]), a)
    both(lambda lib, o, x: lib.linalg.vector_norm(x, out=o[0]), a)
    both(lambda lib, o, x: lib.linalg.matrix_norm(x, "nuc", out=o[0]), a)
    both(lambda lib, o, x: lib.linalg.svdvals(x, out=o[0]), a)
    both(lambda lib, o, x: lib.linalg.eigvalsh(x, out=o[0]), spd)
    both(lambda lib, o, x: lib.linalg.pinv(x, out=o[0]), a)
    both(lambda lib, o, x: lib.linalg.matrix_rank(x, out=lib.empty(0, dtype=lib.int64)), a)
    # Several results: torch's Python takes out=(...), kiln's the schema's names.
    def outs(lib, names, tensors):
        return {"out": tuple(tensors)} if lib is torch else dict(zip(names, tensors))

    both(lambda lib, o, x: lib.linalg.slogdet(x, **outs(lib, ["sign", "logabsdet"], o)), a, n_out=2)
    both(lambda lib, o, x: lib.linalg.inv_ex(x, **outs(lib, ["inverse", "info"], [o[0], lib.empty(0, dtype=lib.int32)])),
         a)
    both(lambda lib, o, x: lib.linalg.qr(x, **outs(lib, ["Q", "R"], o)), a, n_out=2)
    both(lambda lib, o, x: lib.linalg.lu_factor(x, **outs(lib, ["LU", "pivots"], [o[0], lib.empty(0, dtype=lib.int32)])),
         a)
    both(lambda lib, o, x: lib.linalg.lu(x, **outs(lib, ["P", "L", "U"], o)), a, n_out=3)
    both(lambda lib, o, x: lib.linalg.eigh(x, **outs(lib, ["eigvals", "eigvecs"], o))[0], spd, n_out=2)
    both(lambda lib, o, x, y: lib.cholesky_solve(y, x, out=o[0]), spd, b)
    both(lambda lib, o, x, y: lib.linalg.solve_triangular(x, y, upper=True, out=o[0]), np.triu(a), b)


# ---------------------------------------------------------------- errors

ERRORS = {
    "inv_singular": (lambda lib: lib.linalg.inv(lib.from_numpy(np.diag([1.0, 0.0, 0.0])))),
    "inv_singular_batch": (lambda lib: lib.linalg.inv(lib.from_numpy(np.stack([np.eye(3), np.diag([1.0, 0.0, 0.0])])))),
    "inv_integer": (lambda lib: lib.linalg.inv(lib.from_numpy(np.ones((3, 3), np.int64)))),
    "inv_not_square": (lambda lib: lib.linalg.inv(lib.from_numpy(np.ones((3, 4))))),
    "inv_vector": (lambda lib: lib.linalg.inv(lib.from_numpy(np.ones(3)))),
    "inv_ex_check": (lambda lib: lib.linalg.inv_ex(lib.from_numpy(np.zeros((2, 2))), check_errors=True)),
    "solve_singular": (lambda lib: lib.linalg.solve(lib.from_numpy(np.zeros((2, 2))), lib.from_numpy(np.ones(2)))),
    "solve_dtypes": (lambda lib: lib.linalg.solve(lib.from_numpy(np.eye(2)), lib.from_numpy(np.ones(2, np.float32)))),
    "solve_shapes": (lambda lib: lib.linalg.solve(lib.from_numpy(np.eye(3)), lib.from_numpy(np.ones(4)))),
    "det_integer": (lambda lib: lib.linalg.det(lib.from_numpy(np.ones((3, 3), np.int64)))),
    "det_not_square": (lambda lib: lib.linalg.det(lib.from_numpy(np.ones((3, 4))))),
    "slogdet_not_square": (lambda lib: lib.linalg.slogdet(lib.from_numpy(np.ones((3, 4))))),
    "logdet_not_square": (lambda lib: lib.logdet(lib.from_numpy(np.ones((3, 4))))),
    "cholesky_not_pd": (lambda lib: lib.linalg.cholesky(lib.from_numpy(-np.eye(3)))),
    "cholesky_not_pd_batch": (lambda lib: lib.linalg.cholesky(lib.from_numpy(-np.ones((2, 1, 1))))),
    "cholesky_legacy": (lambda lib: lib.cholesky(lib.from_numpy(-np.eye(3)))),
    "cholesky_not_square": (lambda lib: lib.linalg.cholesky(lib.from_numpy(np.ones((3, 4))))),
    "lu_factor_singular": (lambda lib: lib.linalg.lu_factor(lib.from_numpy(np.diag([1.0, 0.0, 0.0])))),
    "lu_factor_no_pivot": (lambda lib: lib.linalg.lu_factor(lib.from_numpy(np.eye(2)), pivot=False)),
    "solve_triangular_not_square": (lambda lib: lib.linalg.solve_triangular(
        lib.from_numpy(np.ones((3, 4))), lib.from_numpy(np.ones((3, 2))), upper=True)),
    "qr_mode": (lambda lib: lib.linalg.qr(lib.from_numpy(np.ones((3, 4))), "foo")),
    "qr_integer": (lambda lib: lib.linalg.qr(lib.from_numpy(np.ones((3, 4), np.int64)))),
    "svd_integer": (lambda lib: lib.linalg.svd(lib.from_numpy(np.ones((3, 4), np.int64)))),
    "svd_driver": (lambda lib: lib.linalg.svd(lib.from_numpy(np.ones((3, 4))), driver="gesvd")),
    "eigh_uplo": (lambda lib: lib.linalg.eigh(lib.from_numpy(np.eye(3)), "X")),
    "eigh_not_square": (lambda lib: lib.linalg.eigh(lib.from_numpy(np.ones((3, 4))))),
    "eig_not_square": (lambda lib: lib.linalg.eig(lib.from_numpy(np.ones((3, 4))))),
    "matrix_power_not_square": (lambda lib: lib.linalg.matrix_power(lib.from_numpy(np.ones((3, 4))), 2)),
    "matrix_power_integer_inverse": (lambda lib: lib.linalg.matrix_power(lib.from_numpy(np.ones((3, 3), np.int64)), -1)),
    "matrix_exp_not_square": (lambda lib: lib.linalg.matrix_exp(lib.from_numpy(np.ones((3, 4))))),
    "matrix_exp_integer": (lambda lib: lib.linalg.matrix_exp(lib.from_numpy(np.ones((3, 3), np.int64)))),
    "lstsq_driver": (lambda lib: lib.linalg.lstsq(lib.from_numpy(np.ones((3, 2))), lib.from_numpy(np.ones((3, 1))),
                                                  driver="foo")),
    "lstsq_shapes": (lambda lib: lib.linalg.lstsq(lib.from_numpy(np.ones((3, 2))), lib.from_numpy(np.ones((4, 1))))),
    "matrix_norm_ord": (lambda lib: lib.linalg.matrix_norm(lib.from_numpy(np.ones((3, 4))), 3)),
    "matrix_norm_str": (lambda lib: lib.linalg.matrix_norm(lib.from_numpy(np.ones((3, 4))), "foo")),
    "vector_norm_integer": (lambda lib: lib.linalg.vector_norm(lib.from_numpy(np.ones(3, np.int64)))),
    "svd_nan": (lambda lib: lib.linalg.svd(lib.from_numpy(np.full((3, 3), np.nan)))),
    "pinv_integer": (lambda lib: lib.linalg.pinv(lib.from_numpy(np.ones((3, 3), np.int64)))),
    "matrix_rank_integer": (lambda lib: lib.linalg.matrix_rank(lib.from_numpy(np.ones((3, 3), np.int64)))),
    "ormqr_batch": (lambda lib: lib.ormqr(*lib.geqrf(lib.from_numpy(np.ones((2, 4, 3)))),
                                          lib.from_numpy(np.ones((3, 4, 2))))),
    "ormqr_tau_batch": (lambda lib: lib.ormqr(lib.from_numpy(np.ones((2, 4, 3))), lib.from_numpy(np.ones((1, 3))),
                                              lib.from_numpy(np.ones((2, 4, 2))))),
    "householder_batch": (lambda lib: lib.linalg.householder_product(lib.from_numpy(np.ones((2, 4, 3))),
                                                                      lib.from_numpy(np.ones((3, 2))))),
    "householder_wide": (lambda lib: lib.linalg.householder_product(lib.from_numpy(np.ones((3, 4))),
                                                                     lib.from_numpy(np.ones(2)))),
    "lu_solve_pivot_count": (lambda lib: lib.linalg.lu_solve(
        *(lambda lu: (lu[0], lu[1][:2]))(lib.linalg.lu_factor(lib.from_numpy(_general((3, 3))))),
        lib.from_numpy(np.ones((3, 1))))),
    "lu_solve_pivot_dtype": (lambda lib: lib.linalg.lu_solve(
        *(lambda lu: (lu[0], lu[1].long()))(lib.linalg.lu_factor(lib.from_numpy(_general((3, 3))))),
        lib.from_numpy(np.ones((3, 1))))),
    "lu_solve_dtypes": (lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.from_numpy(_general((3, 3)))),
                                                        lib.from_numpy(np.ones((3, 1), np.float32)))),
    "lu_solve_shapes": (lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.from_numpy(_general((3, 3)))),
                                                        lib.from_numpy(np.ones((4, 1))))),
}
# Messages worded differently in kiln (same exception type).
LOOSE = {"lu_factor_no_pivot", "eigh_uplo", "svd_integer", "qr_integer"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    with pytest.raises(RuntimeError) as theirs:
        ERRORS[name](torch)
    with pytest.raises(RuntimeError) as ours:
        ERRORS[name](kiln)
    if name not in LOOSE:
        assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


def test_non_finite_inputs():
    # NaN and inf run through (torch's values there are not meaningful to compare):
    # no hang, no crash, non-finite results.
    for value in (np.nan, np.inf):
        x = kiln.from_numpy(np.full((3, 3), value))
        for result in (kiln.linalg.matrix_exp(x), kiln.linalg.inv(x), kiln.linalg.qr(x)[1], kiln.linalg.det(x)):
            assert not np.isfinite(result.numpy()).all()


def test_out_of_range_pivots_raise():
    # LAPACK would read outside the matrix: kiln checks the pivots first.
    LU, _ = kiln.linalg.lu_factor(kiln.from_numpy(_general((3, 3))))
    for bad in ([0, 2, 3], [1, 4, 3], [-5, 2, 3]):
        pivots = kiln.from_numpy(np.array(bad, np.int32))
        with pytest.raises(RuntimeError, match="pivots must be 1-based row indices"):
            kiln.linalg.lu_solve(LU, pivots, kiln.from_numpy(np.ones((3, 1))))
        with pytest.raises(RuntimeError, match="pivots"):
            kiln.lu_unpack(LU, pivots)


def test_householder_product():
    for shape in [(5, 3), (4, 4), (2, 5, 2)]:
        a = _randn(shape, seed=9)
        geqrf_a, tau = torch.geqrf(torch.from_numpy(a))
        _check(lambda lib, x, t: lib.linalg.householder_product(x, t), geqrf_a.numpy(), tau.numpy())
        _check(lambda lib, x, t: lib.orgqr(x, t[..., :1]), geqrf_a.numpy(), tau.numpy(), transposed=True)


def _aten(lib, name):
    return getattr(torch.ops.aten, name) if lib is torch else kiln._functions.op(name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ldl(dtype):
    # Indefinite symmetric matrices: 2x2 pivots (negative entries) appear.
    a = _randn((2, 4, 4), dtype, seed=11)
    a = a + np.swapaxes(a, -1, -2)
    b = _randn((2, 4, 3), dtype, seed=12)
    _check(lambda lib, x: tuple(lib.linalg.ldl_factor(x)), a)
    _check(lambda lib, x: tuple(lib.linalg.ldl_factor_ex(x, hermitian=True)), a, transposed=True)
    _check(lambda lib, x, y: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(x), y), a, b)
    _check(lambda lib, x, y: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(x[0]), y), a, b)


def test_symeig_and_internal_forms():
    a = _spd((2, 3, 3))
    _check(lambda lib, x: tuple(lib.symeig(x)), a)
    _check(lambda lib, x: _abs_all(lib.symeig(x, eigenvectors=True, upper=False)), a)
    _check(lambda lib, x: tuple(_aten(lib, "_lu_with_info")(x)), a)
    _check(lambda lib, x, y: _aten(lib, "_cholesky_solve_helper")(y, lib.linalg.cholesky(x), False), a,
           _randn((2, 3, 2)))
    _check(lambda lib, x, g: _aten(lib, "matrix_exp_backward")(x, g), _randn((2, 3, 3)), _randn((2, 3, 3), seed=1))
    x = _randn((2, 4), seed=3)
    _check(lambda lib, v: lib.linalg.vander(v), x)
    _check(lambda lib, v: lib.linalg.vander(v, N=6), x)
    _check(lambda lib, v: lib.linalg.vander(v), np.arange(1, 5))


def test_check_errors_op():
    for api in ["linalg.inv", "torch.linalg.solve", "linalg.cholesky", "linalg.svd", "linalg.eigh",
                "torch.linalg.lstsq", "torch.linalg.lu_factor"]:
        for info, is_matrix in [(np.array(2, np.int32), True), (np.array([0, 3], np.int32), False)]:
            messages = []
            for lib in (torch, kiln):
                with pytest.raises(RuntimeError) as e:
                    _aten(lib, "_linalg_check_errors")(lib.from_numpy(info), api, is_matrix=is_matrix)
                messages.append(str(e.value).split("\n")[0])
            assert messages[0] == messages[1]
    _aten(kiln, "_linalg_check_errors")(kiln.from_numpy(np.zeros(3, np.int32)), "linalg.inv", is_matrix=False)


# ---------------------------------------------------------------- TorchScript

SCRIPT = """
def f(a, b, spd):
    lu, piv = torch.linalg.lu_factor(a)
    sign, logabsdet = torch.linalg.slogdet(a)
    q, r = torch.linalg.qr(a)
    return (torch.linalg.inv(a), torch.linalg.det(a), torch.det(a), torch.inverse(a), logabsdet,
            torch.linalg.solve(a, b), torch.linalg.lu_solve(lu, piv, b), torch.linalg.cholesky(spd),
            torch.cholesky_inverse(torch.linalg.cholesky(spd)), torch.linalg.svdvals(a), torch.linalg.eigvalsh(spd),
            torch.linalg.matrix_norm(a), torch.linalg.norm(a, 2), torch.linalg.vector_norm(a, 3.0),
            torch.linalg.matrix_power(a, 3), torch.linalg.matrix_exp(a), torch.linalg.pinv(a), r.abs(),
            torch.linalg.matrix_rank(a), torch.linalg.cond(a), torch.logdet(spd), torch.matrix_power(a, -1),
            torch.linalg.solve_triangular(r, b, upper=True))
"""


def test_scripted_matches_torch():
    a, b, spd = _general((4, 4)), _randn((4, 2), seed=1), _spd((4, 4))
    theirs = torch.jit.CompilationUnit(SCRIPT).f(*_tensors(torch, [a, b, spd]))
    ours = kiln.compile(SCRIPT).f(*_tensors(kiln, [a, b, spd]))
    assert len(ours) == len(theirs)
    for k, t in zip(ours, theirs):
        assert_same(k, t, rtol=1e-9, atol=1e-9)


SCRIPT_PRIMITIVES = """
def f(a, b, spd):
    l = torch.linalg.cholesky(spd)
    x = torch.linalg.solve_triangular(l, b, upper=False)
    y = torch.cholesky_solve(b, l)
    z = torch.linalg.matrix_exp(a) * 0.1
    w = torch.linalg.pinv(a)
    v = torch.linalg.vector_norm(a, 3.0, [1])
    return x.sum() + y.sum() + z.sum() + w.sum() + v.sum() + torch.cholesky_inverse(l).sum()
"""


def test_scripted_gradient_of_primitives():
    # Single-result operators with formulas go into differentiable graphs.
    values = [_general((3, 3)), _randn((3, 2), seed=1), _spd((3, 3))]
    grads = []
    for lib, fn in ((torch, torch.jit.CompilationUnit(SCRIPT_PRIMITIVES).f), (kiln, kiln.compile(SCRIPT_PRIMITIVES).f)):
        for _ in range(2):  # the second call runs the optimized plan
            xs = _tensors(lib, values)
            for x in xs:
                x.requires_grad_(True)
            fn(*xs).backward()
        grads.append([x.grad for x in xs])
    for k, t in zip(grads[1], grads[0]):
        assert_same(k, t, rtol=1e-9, atol=1e-9)


def test_scripted_gradient():
    src = "def f(a):\n    return torch.linalg.det(a) + torch.linalg.inv(a).sum() + torch.linalg.svdvals(a).sum()\n"
    values = [_general((3, 3))]
    outs = []
    for lib, fn in ((torch, torch.jit.CompilationUnit(src).f), (kiln, kiln.compile(src).f)):
        (x,) = _tensors(lib, values)
        x.requires_grad_(True)
        fn(x).backward()
        outs.append(x.grad)
    assert_same(outs[1], outs[0], rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- gradients

def _invariant_svd(lib, x, full=False):
    U, S, Vh = lib.linalg.svd(x, full_matrices=full)
    k = S.shape[-1]
    return U[..., :k].abs(), S, Vh[..., :k, :].abs()


GRADIENTS = {
    "inv": (lambda lib, a: lib.linalg.inv(a), [_general((3, 3))]),
    "inv_batched": (lambda lib, a: lib.linalg.inv_ex(a)[0], [_general((2, 3, 3))]),
    "inverse": (lambda lib, a: lib.inverse(a), [_general((3, 3))]),
    "det": (lambda lib, a: lib.linalg.det(a), [_general((2, 3, 3))]),
    "det_legacy": (lambda lib, a: lib.det(a), [_general((3, 3))]),
    "det_singular": (lambda lib, a: lib.linalg.det(a * lib.from_numpy(np.array([1.0, 1.0, 0.0]))), [_general((3, 3))]),
    "slogdet": (lambda lib, a: lib.linalg.slogdet(a)[1], [_general((2, 3, 3))]),
    "logdet": (lambda lib, a: lib.logdet(a), [_spd((3, 3))]),
    "solve": (lambda lib, a, b: lib.linalg.solve(a, b), [_general((3, 3)), _randn((3, 2))]),
    "solve_vector": (lambda lib, a, b: lib.linalg.solve(a, b), [_general((2, 3, 3)), _randn((2, 3))]),
    "solve_broadcast": (lambda lib, a, b: lib.linalg.solve(a, b), [_general((3, 3)), _randn((2, 3, 2))]),
    "solve_right": (lambda lib, a, b: lib.linalg.solve(a, b, left=False), [_general((3, 3)), _randn((2, 3))]),
    "lu_factor": (lambda lib, a: lib.linalg.lu_factor(a)[0], [_general((2, 3, 3))]),
    "lu_factor_wide": (lambda lib, a: lib.linalg.lu_factor(a)[0], [_randn((3, 5), seed=2)]),
    "lu_factor_tall": (lambda lib, a: lib.linalg.lu_factor(a)[0], [_randn((5, 3), seed=2)]),
    "lu": (lambda lib, a: lib.linalg.lu(a)[1:], [_general((3, 3))]),
    "lu_wide": (lambda lib, a: lib.linalg.lu(a)[1:], [_randn((3, 5), seed=3)]),
    "lu_tall": (lambda lib, a: lib.linalg.lu(a)[1:], [_randn((5, 3), seed=3)]),
    "lu_unpack": (lambda lib, a: lib.lu_unpack(a, lib.from_numpy(np.array([2, 2, 3], np.int32)))[1:],
                  [_general((3, 3))]),
    "lu_solve": (lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b), [_general((3, 3)), _randn((3, 2))]),
    "lu_solve_adjoint": (lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, adjoint=True),
                         [_general((3, 3)), _randn((3, 2))]),
    "lu_solve_right": (lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, left=False),
                       [_general((3, 3)), _randn((2, 3))]),
    "lu_solve_right_adjoint": (lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, left=False,
                                                                     adjoint=True), [_general((3, 3)), _randn((2, 3))]),
    "lu_solve_legacy": (lambda lib, a, b: lib.lu_solve(b, *lib.linalg.lu_factor(a)), [_general((3, 3)), _randn((3, 2))]),
    "cholesky": (lambda lib, a: lib.linalg.cholesky(a), [_spd((2, 3, 3))]),
    "cholesky_upper": (lambda lib, a: lib.linalg.cholesky(a, upper=True), [_spd((3, 3))]),
    "cholesky_legacy": (lambda lib, a: lib.cholesky(a), [_spd((3, 3))]),
    "cholesky_solve": (lambda lib, b, l: lib.cholesky_solve(b, l), [_randn((3, 2)), np.linalg.cholesky(_spd((3, 3)))]),
    "cholesky_solve_upper": (lambda lib, b, u: lib.cholesky_solve(b, u, True),
                             [_randn((3, 2)), np.linalg.cholesky(_spd((3, 3))).T.copy()]),
    "cholesky_inverse": (lambda lib, l: lib.cholesky_inverse(l), [np.linalg.cholesky(_spd((3, 3)))]),
    "cholesky_inverse_upper": (lambda lib, u: lib.cholesky_inverse(u, True),
                               [np.linalg.cholesky(_spd((3, 3))).T.copy()]),
    "solve_triangular": (lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
                         [_triangular((3, 3), True), _randn((3, 2))]),
    "solve_triangular_right_unit": (lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=False, left=False,
                                                                                  unitriangular=True),
                                    [_triangular((3, 3), False), _randn((2, 3))]),
    "triangular_solve": (lambda lib, b, a: lib.triangular_solve(b, a, True, True)[0],
                         [_randn((3, 2)), _triangular((3, 3), True)]),
    "triangular_solve_both": (lambda lib, b, a: lib.triangular_solve(b, a, False), [_randn((3, 2)),
                                                                                   _triangular((3, 3), False)]),
    "qr_tall": (lambda lib, a: lib.linalg.qr(a), [_randn((5, 3))]),
    "qr_wide": (lambda lib, a: lib.linalg.qr(a), [_randn((3, 5))]),
    "qr_square_complete": (lambda lib, a: lib.linalg.qr(a, "complete"), [_randn((2, 3, 3))]),
    "qr_legacy": (lambda lib, a: lib.qr(a), [_randn((4, 3))]),
    "svd_tall": (lambda lib, a: _invariant_svd(lib, a), [_randn((5, 3))]),
    "svd_wide": (lambda lib, a: _invariant_svd(lib, a), [_randn((3, 5))]),
    "svd_square_full": (lambda lib, a: _invariant_svd(lib, a, True), [_randn((2, 3, 3))]),
    "svd_legacy": (lambda lib, a: tuple(v.abs() for v in lib.svd(a)), [_randn((4, 3))]),
    "svdvals": (lambda lib, a: lib.linalg.svdvals(a), [_randn((4, 3))]),
    "eigh": (lambda lib, a: (lambda lv: (lv[0], lv[1].abs()))(lib.linalg.eigh(a)), [_spd((2, 3, 3))]),
    "eigh_upper": (lambda lib, a: (lambda lv: (lv[0], lv[1].abs()))(lib.linalg.eigh(a, "U")), [_spd((3, 3))]),
    "eigvalsh": (lambda lib, a: lib.linalg.eigvalsh(a), [_spd((3, 3))]),
    "lstsq": (lambda lib, a, b: lib.linalg.lstsq(a, b)[0], [_randn((5, 3)), _randn((5, 2))]),
    "pinv": (lambda lib, a: lib.linalg.pinv(a), [_randn((4, 3))]),
    "pinv_wide": (lambda lib, a: lib.linalg.pinv(a), [_randn((3, 4))]),
    "pinverse": (lambda lib, a: lib.pinverse(a), [_randn((3, 4))]),
    "matrix_power": (lambda lib, a: lib.linalg.matrix_power(a, 3), [_randn((3, 3))]),
    "matrix_power_negative": (lambda lib, a: lib.matrix_power(a, -2), [_general((3, 3))]),
    "matrix_exp": (lambda lib, a: lib.linalg.matrix_exp(a), [_randn((2, 3, 3))]),
    "matrix_exp_legacy": (lambda lib, a: lib.matrix_exp(a), [_randn((3, 3))]),
    "vector_norm": (lambda lib, a: lib.linalg.vector_norm(a, 3, dim=1), [_randn((3, 4))]),
    "matrix_norm_fro": (lambda lib, a: lib.linalg.matrix_norm(a), [_randn((2, 3, 4))]),
    "matrix_norm_nuc": (lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), [_randn((3, 4))]),
    "matrix_norm_2": (lambda lib, a: lib.linalg.matrix_norm(a, 2, keepdim=True), [_randn((2, 3, 4))]),
    "matrix_norm_1": (lambda lib, a: lib.linalg.matrix_norm(a, 1), [_randn((3, 4))]),
    "matrix_norm_-inf": (lambda lib, a: lib.linalg.matrix_norm(a, float("-inf")), [_randn((3, 4))]),
    "norm": (lambda lib, a: lib.linalg.norm(a), [_randn((3, 4))]),
    "frobenius_norm": (lambda lib, a: lib.frobenius_norm(a, [0], False), [_randn((3, 4))]),
    "nuclear_norm": (lambda lib, a: lib.nuclear_norm(a), [_randn((3, 4))]),
    "norm_except_dim": (lambda lib, a: lib.norm_except_dim(a, 2, 1), [_randn((3, 4))]),
    "cond": (lambda lib, a: lib.linalg.cond(a), [_randn((3, 3))]),
    "tensorinv": (lambda lib, a: lib.linalg.tensorinv(a, 1), [_general((4, 4)).reshape(4, 2, 2)]),
    "tensorsolve": (lambda lib, a, b: lib.linalg.tensorsolve(a, b), [_general((4, 4)).reshape(4, 2, 2), _randn((4,))]),
    "vecdot": (lambda lib, a, b: lib.linalg.vecdot(a, b), [_randn((3, 4)), _randn((3, 4), seed=1)]),
    "diagonal": (lambda lib, a: lib.linalg.diagonal(a), [_randn((2, 3, 4))]),
    "matmul": (lambda lib, a, b: lib.linalg.matmul(a, b), [_randn((3, 4)), _randn((4, 2))]),
    "householder_product": (lambda lib, a, t: lib.linalg.householder_product(a, t), [_randn((4, 3)), _randn((2,))]),
    "orgqr": (lambda lib, a, t: lib.orgqr(a, t), [_randn((2, 3, 3)), _randn((2, 3))]),
    "symeig": (lambda lib, a: (lambda lv: (lv[0], lv[1].abs()))(lib.symeig(a, True)), [_spd((3, 3))]),
    "vander": (lambda lib, x: lib.linalg.vander(x), [_randn((2, 3))]),
    "matrix_exp_backward": (lambda lib, a, g: _aten(lib, "matrix_exp_backward")(a, g), [_randn((3, 3)),
                                                                                       _randn((3, 3), seed=1)]),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_match_torch(name):
    fn, values = GRADIENTS[name]
    assert_gradients_match_torch(fn, [v.copy() for v in values], rtol=1e-7, atol=1e-8)
    if all(v.ndim >= 2 for v in values):
        assert_gradients_match_torch(fn, [v.copy() for v in values], noncontiguous=True, rtol=1e-7, atol=1e-8)


# Operators that read one triangle of an input: finite differences perturb
# the matrix through that triangle (as torch's gradcheck tests do), since the
# other triangle's entries have no effect on the result.
def _symmetric(lib, x):
    return (x + x.transpose(-2, -1)) / 2


def _lower(lib, x):
    return x.tril()


def _upper(lib, x):
    return x.triu()


THROUGH = {
    "cholesky": [_symmetric], "cholesky_upper": [_symmetric], "cholesky_legacy": [_symmetric],
    "cholesky_solve": [None, _lower], "cholesky_solve_upper": [None, _upper],
    "cholesky_inverse": [_lower], "cholesky_inverse_upper": [_upper],
    "eigh": [_symmetric], "eigh_upper": [_symmetric], "eigvalsh": [_symmetric], "symeig": [_symmetric],
}
# Gradients torch 1.13 fails to compute (an in-place write into a saved inverse): finite differences only.
GRADCHECK_ONLY = {
    "cond_fro": (lambda lib, a: lib.linalg.cond(a, "fro"), [_general((3, 3))]),
    "cond_1": (lambda lib, a: lib.linalg.cond(a, 1), [_general((3, 3))]),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS) + sorted(GRADCHECK_ONLY))
def test_gradcheck_float64(name):
    fn, values = GRADIENTS[name] if name in GRADIENTS else GRADCHECK_ONLY[name]
    if name in ("det_singular",):
        pytest.skip("the determinant's derivative is not smooth at a singular matrix")
    if name in THROUGH:
        inner, maps = fn, THROUGH[name]
        fn = lambda lib, *xs: inner(lib, *(m(lib, x) if m else x for m, x in zip(maps, xs)))  # noqa: E731
    gradcheck(fn, [v.copy() for v in values], tol=1e-5)


def test_eig_backward_raises():
    a = kiln.from_numpy(_general((3, 3))).requires_grad_(True)
    values = kiln.linalg.eigvals(a)
    assert values.requires_grad
    with pytest.raises(RuntimeError, match="complex eigen-decompositions"):
        kiln.autograd.backward([values], [kiln.ones_like(values)])


SECOND_ORDER = {
    "det": lambda lib, x: lib.linalg.det(x),
    "inv": lambda lib, x: lib.linalg.inv(x).sum(),
    "slogdet": lambda lib, x: lib.linalg.slogdet(x)[1],
    "solve": lambda lib, x: lib.linalg.solve(x, x[:, :1] * 2).sum(),
    "eigvalsh": lambda lib, x: (lib.linalg.eigvalsh(x + x.mT) ** 2).sum(),
    "matrix_exp": lambda lib, x: lib.linalg.matrix_exp(x * 0.3).sum(),
    "pinv": lambda lib, x: lib.linalg.pinv(x).sum(),
    "lu_factor": lambda lib, x: (lib.linalg.lu_factor(x)[0] ** 2).sum(),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_derivatives_match_torch(name):
    # The formulas are made of differentiable operators: create_graph works through them.
    results = []
    for lib in (torch, kiln):
        (x,) = _tensors(lib, [_general((3, 3))])
        x.requires_grad_(True)
        (g,) = lib.autograd.grad([SECOND_ORDER[name](lib, x)], [x], create_graph=True)
        (gg,) = lib.autograd.grad([(g * g).sum()], [x])
        results.append(gg)
    assert_same(results[1], results[0].detach(), rtol=1e-9, atol=1e-9)
