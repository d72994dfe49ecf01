"""Matrix products, differential against torch 1.13."""
import numpy as np
import pytest
import torch

import kiln
from conftest import check_both, kiln_dtype

# Broadcast (stride 0) numpy views are read-only; torch warns when it wraps them.
pytestmark = pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")

# Products of float32 sums: BLAS kernels may order them differently.
F32 = dict(rtol=1e-4, atol=1e-4)


def dt(lib, torch_dtype):
    return torch_dtype if lib is torch else kiln_dtype(torch_dtype)


def arr(rng, shape, dtype="float32"):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype == "uint8":
        return rng.integers(0, 20, shape).astype(dtype)
    return rng.integers(-20, 20, shape).astype(dtype)


def strided(lib, a):
    """`a` with gaps between rows and columns: every other element of a twice as big array."""
    big = np.zeros(tuple(2 * s for s in a.shape), dtype=a.dtype)
    big[tuple(slice(None, None, 2) for _ in a.shape)] = a
    t = lib.from_numpy(big[tuple(slice(None, None, 2) for _ in a.shape)])
    assert not t.is_contiguous() or a.size <= 1
    return t


DTYPES = ["float32", "float64", "int64", "int32", "int16", "int8", "uint8"]


# ---------------------------------------------------------------- mm

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k,m", [(2, 3, 4), (1, 5, 1), (7, 1, 3), (16, 33, 9), (3, 0, 4), (0, 3, 2), (2, 3, 0)])
def test_mm(dtype, n, k, m, rng):
    a, b = arr(rng, (n, k), dtype), arr(rng, (k, m), dtype)
    check_both(lambda lib, x, y: lib.mm(x, y), a, b, **F32)
    check_both(lambda lib, x, y: x.mm(y), a, b, **F32)
    check_both(lambda lib, x, y: x @ y, a, b, **F32)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_mm_transposed_and_strided_operands(dtype, rng):
    a, b = arr(rng, (5, 4), dtype), arr(rng, (4, 6), dtype)
    at, bt = np.asfortranarray(a), np.asfortranarray(b)  # column-major: BLAS transposes
    for x, y in ((at, b), (a, bt), (at, bt)):
        check_both(lambda lib, p, q: lib.mm(p, q), x, y, **F32)
    check_both(lambda lib: lib.mm(strided(lib, a), strided(lib, b)), **F32)
    check_both(lambda lib, q: lib.mm(strided(lib, a), q), bt, **F32)
    # Broadcast (stride 0) operands: a row repeated, a column repeated.
    row = arr(rng, (1, 4), dtype)
    check_both(lambda lib: lib.mm(lib.from_numpy(np.broadcast_to(row, (3, 4))), lib.from_numpy(b)), **F32)
    col = arr(rng, (4, 1), dtype)
    check_both(lambda lib: lib.mm(lib.from_numpy(a), lib.from_numpy(np.broadcast_to(col, (4, 3)))), **F32)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_integer_mm_full_range_wraps_like_torch(dtype, rng):
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, (9, 37), endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, (37, 6), endpoint=True).astype(dtype)
    check_both(lambda lib, x, y: lib.mm(x, y), a, b)
    check_both(lambda lib, x, y: lib.mm(x, y), np.asfortranarray(a), b)
    check_both(lambda lib, s, x, y: lib.addmm(s, x, y, beta=3, alpha=-5), a[:, :6].copy(), a, b)


def test_row_and_column_products_use_matrix_vector_paths(rng):
    # n == 1 or m == 1 products go through gemv, with either operand transposed.
    row, mat, col = arr(rng, (1, 7)), arr(rng, (7, 5)), arr(rng, (5, 1))
    for m in (mat, np.asfortranarray(mat)):
        check_both(lambda lib, x, y: lib.mm(x, y), row, m, **F32)
        check_both(lambda lib, x, y: lib.mm(x, y), m.T, row.T, **F32)
        check_both(lambda lib, x, y: lib.mm(x, y), m, col, **F32)
        check_both(lambda lib, x, y: lib.matmul(x, y), row[0], m, **F32)
    check_both(lambda lib: lib.mm(strided(lib, row), strided(lib, mat)), **F32)
    check_both(lambda lib: lib.mm(strided(lib, mat), strided(lib, col)), **F32)
    check_both(lambda lib, s, x, y: lib.addmm(s, x, y, beta=0.5, alpha=2), arr(rng, (1, 5)), row, mat, **F32)
    check_both(lambda lib, s, x, y: lib.addmm(s, x, y, beta=0.5, alpha=2), arr(rng, (7, 1)), mat.T, col, **F32)


def test_mm_large_uses_blas_threads(rng):
    a, b = arr(rng, (130, 257)), arr(rng, (257, 190))
    old = kiln.get_num_threads()
    try:
        for threads in (1, 2):
            kiln.set_num_threads(threads)
            check_both(lambda lib, x, y: lib.mm(x, y), a, b, **F32)
            check_both(lambda lib, x, y: lib.mm(x, y), a.astype(np.int64), b.astype(np.int64))
    finally:
        kiln.set_num_threads(old)


def test_integer_mm_wraps_like_torch():
    a = np.full((2, 3), 100, dtype=np.int8)
    check_both(lambda lib, x, y: lib.mm(x, y), a, a.T.copy())
    big = np.full((2, 2), 2 ** 62, dtype=np.int64)
    check_both(lambda lib, x: lib.mm(x, x), big)


@pytest.mark.parametrize("fn", [
    lambda lib, a, b: lib.mm(a, b),
    lambda lib, a, b: lib.matmul(a, b),
    lambda lib, a, b: lib.addmm(a, a, b),
])
@pytest.mark.parametrize("shapes", [((2, 3), (4, 5)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 2, 3), (3, 1))])
def test_shape_errors_match(fn, shapes, rng):
    check_both(fn, arr(rng, shapes[0]), arr(rng, shapes[1]))


def test_mm_errors(rng):
    f, d = arr(rng, (2, 3)), arr(rng, (3, 2), "float64")
    check_both(lambda lib, x, y: lib.mm(x, y), f, d)
    check_both(lambda lib, x, y: lib.mm(y, x), f, d)
    check_both(lambda lib, x, y: lib.mm(x, y), f, arr(rng, (3, 2), "int64"))
    b = np.ones((2, 2), dtype=bool)
    check_both(lambda lib, x: lib.mm(x, x), b)
    check_both(lambda lib, x: lib.mm(x, x), np.ones((2, 2), dtype=np.float32).reshape(4))
    message = "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        kiln.mm(kiln.ones(2, 3), kiln.ones(4, 5))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        kiln.mm(kiln.ones(2, 3), kiln.ones(3, 2, dtype=kiln.float64))


def test_mm_out(rng):
    a, b = arr(rng, (3, 4)), arr(rng, (4, 2))
    for shape in ((3, 2), (0,)):
        check_both(lambda lib, x, y: lib.mm(x, y, out=lib.zeros(shape)), a, b, **F32)
    check_both(lambda lib, x, y, o: (lib.mm(x, y, out=o), o), a, b, np.zeros((3, 2), np.float32), **F32)
    check_both(lambda lib, x, y, o: (lib.mm(x, y, out=o), o), a, b, np.zeros((2, 3), np.float32).T, **F32)
    check_both(lambda lib, x, y, o: lib.mm(x, y, out=o), a, b, np.zeros((3, 2), np.float64))


def test_mm_out_aliasing_an_input_is_correct():
    a = kiln.tensor([[1.0, 2.0], [3.0, 4.0]])
    expected = np.array([[7.0, 10.0], [15.0, 22.0]], dtype=np.float32)
    kiln.mm(a, a, out=a)
    np.testing.assert_array_equal(a.numpy(), expected)


# ---------------------------------------------------------------- bmm / baddbmm

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("b,n,k,m", [(3, 2, 4, 5), (1, 1, 1, 1), (4, 3, 0, 2), (0, 2, 3, 4), (2, 0, 3, 1)])
def test_bmm(dtype, b, n, k, m, rng):
    x, y = arr(rng, (b, n, k), dtype), arr(rng, (b, k, m), dtype)
    check_both(lambda lib, p, q: lib.bmm(p, q), x, y, **F32)
    check_both(lambda lib, p, q: lib.bmm(p, q), np.asfortranarray(x), y, **F32)
    y_t = np.ascontiguousarray(y.transpose(0, 2, 1)).transpose(0, 2, 1)  # each matrix column-major
    check_both(lambda lib, p: lib.bmm(p, lib.from_numpy(y_t)), x, **F32)


def test_bmm_errors(rng):
    check_both(lambda lib, p, q: lib.bmm(p, q), arr(rng, (2, 2, 3)), arr(rng, (3, 3, 5)))
    check_both(lambda lib, p, q: lib.bmm(p, q), arr(rng, (2, 2, 3)), arr(rng, (2, 4, 5)))
    check_both(lambda lib, p, q: lib.bmm(p, q), arr(rng, (2, 3)), arr(rng, (2, 3, 3)))
    check_both(lambda lib, p, q: lib.bmm(p, q), arr(rng, (2, 2, 3)), arr(rng, (2, 3)))
    check_both(lambda lib, p, q: lib.bmm(p, q), arr(rng, (2, 2, 3)), arr(rng, (2, 3, 3), "float64"))
    check_both(lambda lib, p, q: lib.bmm(p, q, out=lib.zeros(0)), arr(rng, (2, 2, 3)), arr(rng, (2, 3, 3)), **F32)


@pytest.mark.parametrize("self_shape", [(5,), (1, 5), (3, 1, 5), (3, 4, 5), ()])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, 1), (0, -1.5)])
def test_baddbmm(self_shape, beta, alpha, rng):
    s, x, y = arr(rng, self_shape), arr(rng, (3, 4, 2)), arr(rng, (3, 2, 5))

    def baddbmm(lib, a, p, q):
        if lib is torch and beta == 0:
            # torch 1.13's CPU baddbmm with beta=0 reads its uninitialized
            # result buffer (NaN appears at random); beta=0 means alpha * bmm.
            return torch.bmm(p, q) * alpha
        return lib.baddbmm(a, p, q, beta=beta, alpha=alpha)

    check_both(baddbmm, s, x, y, **F32)
    if self_shape == (3, 4, 5):
        check_both(lambda lib, a, p, q: a.baddbmm_(p, q, beta=beta, alpha=alpha), s, x, y, **F32)
        if beta != 0:  # a resized out= is uninitialized memory: the same torch issue as above
            check_both(lambda lib, a, p, q: lib.baddbmm(a, p, q, beta=beta, alpha=alpha, out=lib.zeros(0)),
                       s, x, y, **F32)


def test_baddbmm_converts_self_dtype(rng):
    check_both(lambda lib, a, p, q: lib.baddbmm(a, p, q), arr(rng, (5,), "float64"), arr(rng, (3, 4, 2)),
               arr(rng, (3, 2, 5)), **F32)
    check_both(lambda lib, a, p, q: lib.baddbmm(a, p, q), arr(rng, (5,), "int64"), arr(rng, (3, 4, 2)),
               arr(rng, (3, 2, 5)), **F32)
    check_both(lambda lib, a, p, q: a.baddbmm_(p, q), arr(rng, (5,)), arr(rng, (3, 4, 2)), arr(rng, (3, 2, 5)))


# ---------------------------------------------------------------- matmul

MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (1, 3, 4)), ((1, 2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (5, 3, 4)), ((7, 1, 1, 3), (1, 6, 3, 2)), ((2, 3, 4, 5), (5, 2)),
    ((0, 2, 3), (3, 4)), ((5, 2, 0), (0, 4)), ((2, 0, 3), (3, 4)), ((0,), (0,)), ((4, 0), (0,)),
    ((3,), (2, 3, 1)), ((2, 3, 1), (1,)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_matmul_every_rank_case(shapes, dtype, rng):
    a, b = arr(rng, shapes[0], dtype), arr(rng, shapes[1], dtype)
    check_both(lambda lib, x, y: lib.matmul(x, y), a, b, **F32)
    check_both(lambda lib, x, y: x @ y, a, b, **F32)
    check_both(lambda lib, x, y: x.matmul(y), a, b, **F32)


@pytest.mark.parametrize("shapes", [((5, 2, 3), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((4, 2, 3), (3, 6)),
                                    ((2, 4, 2, 3), (4, 3, 5))])
def test_matmul_transposed_and_strided(shapes, rng):
    a, b = arr(rng, shapes[0]), arr(rng, shapes[1])
    check_both(lambda lib, x, y: lib.matmul(x, y), np.asfortranarray(a), b, **F32)
    check_both(lambda lib, x, y: lib.matmul(x, y), a, np.asfortranarray(b), **F32)
    check_both(lambda lib: lib.matmul(strided(lib, a), strided(lib, b)), **F32)
    # Batch dims in unusual order (a permuted view).
    perm = np.ascontiguousarray(np.moveaxis(a, 0, -1))
    check_both(lambda lib: lib.matmul(lib.from_numpy(np.moveaxis(perm, -1, 0)), lib.from_numpy(b)), **F32)


@pytest.mark.parametrize("shapes", [((), (3,)), ((3,), ()), ((2, 3), (4,)), ((3,), (4, 2)), ((5, 2, 3), (4, 3, 2)),
                                    ((2, 2, 3), (2, 4, 2)), ((2, 3), (5, 4, 2)), ((5, 2, 3), (2,))])
def test_matmul_errors(shapes, rng):
    check_both(lambda lib, x, y: lib.matmul(x, y), arr(rng, shapes[0]), arr(rng, shapes[1]))


def test_matmul_dtype_mismatch_raises(rng):
    for sa, sb in (((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 2)), ((4, 2, 3), (3, 2)),
                   ((4, 2, 3), (4, 3, 2))):
        check_both(lambda lib, x, y: lib.matmul(x, y), arr(rng, sa), arr(rng, sb, "float64"))
        check_both(lambda lib, x, y: lib.matmul(x, y), arr(rng, sa, "int64"), arr(rng, sb))


def test_matmul_out(rng):
    for sa, sb in (((3,), (3,)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4))):
        a, b = arr(rng, sa), arr(rng, sb)
        check_both(lambda lib, x, y: lib.matmul(x, y, out=lib.zeros(0)), a, b, **F32)
        check_both(lambda lib, x, y: lib.matmul(x, y, out=lib.zeros(0, dtype=dt(lib, torch.float64))), a, b)


# ---------------------------------------------------------------- addmm / addmv

@pytest.mark.parametrize("self_shape", [(4,), (1, 4), (3, 1), (3, 4), (), (1,)])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, 1), (2, 0), (-1, 0.25)])
def test_addmm(self_shape, beta, alpha, rng):
    s, a, b = arr(rng, self_shape), arr(rng, (3, 5)), arr(rng, (5, 4))
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q, beta=beta, alpha=alpha), s, a, b, **F32)
    check_both(lambda lib, x, p, q: x.addmm(p, q, beta=beta, alpha=alpha), s, a, b, **F32)
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q, beta=beta, alpha=alpha),
               s.astype(np.float64), np.asfortranarray(a.astype(np.float64)), b.astype(np.float64))


def test_addmm_beta_zero_ignores_nan(rng):
    s = np.full((3, 4), np.nan, dtype=np.float32)
    a, b = arr(rng, (3, 5)), arr(rng, (5, 4))
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q, beta=0), s, a, b, **F32)
    check_both(lambda lib, x, p, q: x.addmm_(p, q, beta=0), s, a, b, **F32)
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q, beta=0), s.astype(np.float64), a.astype(np.float64),
               np.zeros((5, 4)))
    check_both(lambda lib, x, m, v: lib.addmv(x, m, v, beta=0), s[:, 0].copy(), a[:, :4].copy(), b[:, 0].copy(),
               **F32)


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, 1), (0, -0.5)])
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_addmm_large_float(beta, alpha, layout, rng):
    # Big enough for oneDNN's sgemm where oneDNN has AVX-512 (else OpenBLAS):
    # every transpose, alpha and beta, and beta == 0 never reading a NaN self.
    a, b = arr(rng, (37, 96)), arr(rng, (96, 70))
    if layout[0] == "t":
        a = np.asfortranarray(a)
    if layout[1] == "t":
        b = np.asfortranarray(b)
    s = arr(rng, (70,)) if beta else np.full((37, 70), np.nan, dtype=np.float32)
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q, beta=beta, alpha=alpha), s, a, b, **F32)
    check_both(lambda lib, p, q: lib.mm(p, q), a, b, **F32)
    check_both(lambda lib, p, q: lib.matmul(p, q), arr(rng, (3, 33, 64)), arr(rng, (3, 64, 40)), **F32)


def test_addmm_k_zero_gives_beta_self(rng):
    s = arr(rng, (3, 4))
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q, beta=2), s, np.zeros((3, 0), np.float32),
               np.zeros((0, 4), np.float32))
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q, beta=3), s.astype(np.int64), np.zeros((3, 0), np.int64),
               np.zeros((0, 4), np.int64))


def test_addmm_integer(rng):
    s, a, b = arr(rng, (4,), "int64"), arr(rng, (3, 5), "int64"), arr(rng, (5, 4), "int64")
    for beta, alpha in ((1, 1), (0.5, 2), (3, -2), (0, 1)):
        check_both(lambda lib, x, p, q: lib.addmm(x, p, q, beta=beta, alpha=alpha), s, a, b)


def test_addmm_in_place_and_out(rng):
    s, a, b = arr(rng, (3, 4)), arr(rng, (3, 5)), arr(rng, (5, 4))
    check_both(lambda lib, x, p, q: x.addmm_(p, q, beta=0.5, alpha=2), s, a, b, **F32)
    check_both(lambda lib, x, p, q: x.addmm_(p, q), np.asfortranarray(s), a, b, **F32)
    check_both(lambda lib, x, p, q: x.addmm_(p, q), s[0].copy(), a, b)  # in place cannot broadcast
    check_both(lambda lib, x, p, q: x.addmm_(p, q), s.astype(np.float64), a, b)
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q, out=lib.zeros(0)), s[0].copy(), a, b, **F32)
    check_both(lambda lib, x, p, q, o: (lib.addmm(x, p, q, out=o), o), s[0].copy(), a, b,
               np.zeros((3, 4), np.float32), **F32)


def test_addmm_in_place_with_self_as_operand():
    for lib in (kiln, torch):
        a = lib.from_numpy(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32))
        a.addmm_(a, a)
        np.testing.assert_array_equal(a.numpy(), [[8.0, 12.0], [18.0, 26.0]])


def test_addmm_errors(rng):
    a, b = arr(rng, (3, 5)), arr(rng, (5, 4))
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q), arr(rng, (3,)), a, b)  # bias does not broadcast
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q), arr(rng, (4,), "float64"), a, b)
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q), arr(rng, (4,)), a.astype(np.float64), b)
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q), arr(rng, (4,), "int64"), a, b)
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q), arr(rng, (4,)), a[0].copy(), b)
    check_both(lambda lib, x, p, q: lib.addmm(x, p, q), arr(rng, (4,)), a, arr(rng, (4, 4)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_mv_and_addmv(dtype, rng):
    m, v, s = arr(rng, (4, 3), dtype), arr(rng, (3,), dtype), arr(rng, (4,), dtype)
    check_both(lambda lib, x, y: lib.mv(x, y), m, v, **F32)
    check_both(lambda lib, x, y: x.mv(y), np.asfortranarray(m), v, **F32)
    check_both(lambda lib: lib.mv(strided(lib, m), strided(lib, v)), **F32)
    check_both(lambda lib, x, y: lib.mv(x, y), np.zeros((4, 0), dtype), np.zeros(0, dtype))
    check_both(lambda lib, x, y: lib.mv(x, y), np.zeros((0, 3), dtype), v)
    for beta, alpha in ((1, 1), (2, 3), (0, 1)):
        check_both(lambda lib, a, x, y: lib.addmv(a, x, y, beta=beta, alpha=alpha), s, m, v, **F32)
        check_both(lambda lib, a, x, y: lib.addmv(a, x, y, beta=beta, alpha=alpha), s[:1].copy(), m, v, **F32)
        check_both(lambda lib, a, x, y: a.addmv_(x, y, beta=beta, alpha=alpha), s, m, v, **F32)
    check_both(lambda lib, a, x, y: lib.addmv(a, x, y, out=lib.zeros(0, dtype=a.dtype)), s, m, v, **F32)
    # Out of place, self is converted to the product's dtype.
    other = "float64" if dtype != "float64" else "int64"
    check_both(lambda lib, a, x, y: lib.addmv(a, x, y), s.astype(other), m, v, **F32)
    check_both(lambda lib, x, y: lib.mv(x, y, out=lib.zeros(0, dtype=x.dtype)), m, v, **F32)


def test_mv_errors(rng):
    m, v = arr(rng, (4, 3)), arr(rng, (3,))
    check_both(lambda lib, x, y: lib.mv(x, y), m, arr(rng, (4,)))
    check_both(lambda lib, x, y: lib.mv(x, y), m, arr(rng, (3, 1)))
    check_both(lambda lib, x, y: lib.mv(x, y), v, v)
    check_both(lambda lib, x, y: lib.mv(x, y), m, v.astype(np.float64))
    check_both(lambda lib, a, x, y: lib.addmv(a, x, y), arr(rng, (3,)), m, v)
    check_both(lambda lib, a, x, y: a.addmv_(x, y), arr(rng, (4,), "float64"), m, v)
    check_both(lambda lib, a, x, y: a.addmv_(x, y), arr(rng, (1,)), m, v)
    check_both(lambda lib, a, x, y: lib.addmv(a, x, y), arr(rng, (4, 1)), m, v)


# ---------------------------------------------------------------- dot / outer

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8"])
def test_dot_vdot(dtype, rng):
    a, b = arr(rng, (17,), dtype), arr(rng, (17,), dtype)
    check_both(lambda lib, x, y: lib.dot(x, y), a, b, **F32)
    check_both(lambda lib, x, y: lib.vdot(x, y), a, b, **F32)
    check_both(lambda lib, x, y: x.dot(y), np.zeros(0, dtype), np.zeros(0, dtype))
    check_both(lambda lib: lib.dot(strided(lib, a), strided(lib, b)), **F32)
    check_both(lambda lib: lib.dot(lib.from_numpy(np.broadcast_to(a[:1], (5,))), lib.from_numpy(b[:5])), **F32)


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
def test_dot_errors_and_out(rng):
    a = arr(rng, (3,))
    check_both(lambda lib, x, y: lib.dot(x, y), a, arr(rng, (4,)))
    check_both(lambda lib, x, y: lib.dot(x, y), a, a.astype(np.float64))
    check_both(lambda lib, x, y: lib.dot(x, y), a.reshape(3, 1), a)
    check_both(lambda lib, x: lib.dot(x, x), np.ones(3, dtype=bool))
    check_both(lambda lib, x: lib.dot(x, x, out=lib.zeros(2)), a, **F32)
    check_both(lambda lib, x: lib.dot(x, x, out=lib.zeros(2, dtype=dt(lib, torch.float64))), a)


@pytest.mark.parametrize("da,db", [("float32", "float32"), ("int64", "bool"), ("int8", "uint8"),
                                   ("bool", "bool"), ("int32", "float64")])
def test_outer_and_ger_promote(da, db, rng):
    a = arr(rng, (3,), da) if da != "bool" else np.array([True, False, True])
    b = arr(rng, (4,), db) if db != "bool" else np.array([True, True, False, False])
    check_both(lambda lib, x, y: lib.outer(x, y), a, b)
    check_both(lambda lib, x, y: lib.ger(x, y), a, b)
    check_both(lambda lib, x, y: x.outer(y), a, np.zeros(0, b.dtype))


def test_outer_errors_and_out(rng):
    a, b = arr(rng, (3,)), arr(rng, (2,))
    check_both(lambda lib, x, y: lib.outer(x, y), a.reshape(3, 1), b)
    check_both(lambda lib, x, y: lib.outer(x, y), np.array(1.0, np.float32), b)
    check_both(lambda lib, x, y: lib.outer(x, y, out=lib.zeros(0, dtype=dt(lib, torch.float64))), a, b)
    check_both(lambda lib, x, y: lib.outer(x, y, out=lib.zeros(0, dtype=dt(lib, torch.int64))), a, b)
    check_both(lambda lib, x, y, o: (lib.outer(x, y, out=o), o), a, b, np.zeros((3, 2), np.float32))


# ---------------------------------------------------------------- linear

@pytest.mark.parametrize("input_shape", [(5,), (2, 5), (3, 2, 5), (2, 3, 2, 5), (0, 5), (4, 0, 5)])
@pytest.mark.parametrize("bias_shape", [None, (4,), (1,), ()])
def test_linear(input_shape, bias_shape, rng):
    x, w = arr(rng, input_shape), arr(rng, (4, 5))
    if bias_shape is None:
        check_both(lambda lib, i, wt: lib.nn.functional.linear(i, wt), x, w, **F32)
        check_both(lambda lib, i, wt: lib.nn.functional.linear(i, wt, None), x, w, **F32)
        return
    b = arr(rng, bias_shape)
    check_both(lambda lib, i, wt, bb: lib.nn.functional.linear(i, wt, bb), x, w, b, **F32)
    check_both(lambda lib, i, wt, bb: lib.nn.functional.linear(i, wt, bias=bb), x, np.asfortranarray(w), b, **F32)


def test_linear_non_contiguous_input_and_batched_bias(rng):
    x = np.asfortranarray(arr(rng, (3, 2, 5)))
    w, b = arr(rng, (4, 5)), arr(rng, (4,))
    check_both(lambda lib, i, wt, bb: lib.nn.functional.linear(i, wt, bb), x, w, b, **F32)
    # A bias with the output's full shape: torch folds contiguous 3-D input into
    # one addmm, which cannot take it, but a strided input goes through matmul.
    full_bias = arr(rng, (3, 2, 4))
    check_both(lambda lib, i, wt, bb: lib.nn.functional.linear(i, wt, bb), np.ascontiguousarray(x), w, full_bias)
    check_both(lambda lib, i, wt, bb: lib.nn.functional.linear(i, wt, bb), x, w, full_bias, **F32)
    check_both(lambda lib, i, wt, bb: lib.nn.functional.linear(i, wt, bb), x[:, 0].copy(), w, arr(rng, (3, 4)),
               **F32)


def test_linear_vector_weight_and_errors(rng):
    check_both(lambda lib, i, wt: lib.nn.functional.linear(i, wt), arr(rng, (5,)), arr(rng, (5,)), **F32)
    check_both(lambda lib, i, wt: lib.nn.functional.linear(i, wt), arr(rng, (3, 5)), arr(rng, (5,)), **F32)
    check_both(lambda lib, i, wt: lib.nn.functional.linear(i, wt), arr(rng, (3, 5)), arr(rng, (4, 6)))
    check_both(lambda lib, i, wt: lib.nn.functional.linear(i, wt), arr(rng, (3, 5)), arr(rng, (2, 4, 5)))
    check_both(lambda lib, i, wt: lib.nn.functional.linear(i, wt), np.array(1.0, np.float32), arr(rng, (4, 5)))
    check_both(lambda lib, i, wt: lib.nn.functional.linear(i, wt), arr(rng, (3, 5)), arr(rng, (4, 5), "float64"))
    check_both(lambda lib, i, wt, bb: lib.nn.functional.linear(i, wt, bb), arr(rng, (3, 5)), arr(rng, (4, 5)),
               arr(rng, (4,), "float64"))
    check_both(lambda lib, i, wt, bb: lib.nn.functional.linear(i, wt, bb), arr(rng, (3, 5)), arr(rng, (4, 5)),
               arr(rng, (5,)))


def test_linear_integer(rng):
    x, w, b = arr(rng, (3, 5), "int64"), arr(rng, (4, 5), "int64"), arr(rng, (4,), "int64")
    check_both(lambda lib, i, wt, bb: lib.nn.functional.linear(i, wt, bb), x, w, b)
    check_both(lambda lib, i, wt, bb: lib.nn.functional.linear(i, wt, bb), x.reshape(3, 1, 5), w, b)


def test_linear_out(rng):
    x, w, b = arr(rng, (3, 5)), arr(rng, (4, 5)), arr(rng, (4,))
    check_both(lambda lib, i, wt, bb: torch.ops.aten.linear(i, wt, bb, out=lib.zeros(0)) if lib is torch
               else kiln.linear(i, wt, bb, out=kiln.zeros(0)), x, w, b, **F32)
    check_both(lambda lib, i, wt: torch.ops.aten.linear(i, wt, out=lib.zeros(0)) if lib is torch
               else kiln.linear(i, wt, out=kiln.zeros(0)), x.reshape(3, 1, 5), w, **F32)
