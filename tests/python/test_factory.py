"""Factories, random tensors and dtype conversions, differential against torch 1.13."""
import numpy as np
import pytest
import torch

import kiln
from conftest import DTYPE_PAIRS, check_both, kiln_dtype

ALL_DTYPES = [t for _, t in DTYPE_PAIRS.values()]
NUMERIC_DTYPES = [t for t in ALL_DTYPES if t is not torch.bool]
FLOAT_DTYPES = [torch.float32, torch.float64]
SHAPES = [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 1, 5)]


def dt(lib, torch_dtype):
    """The dtype object of `lib` for a torch dtype (inside lambdas, which check_both does not convert)."""
    return torch_dtype if lib is torch else kiln_dtype(torch_dtype)


def exact(fn, *args, **kwargs):
    """check_both with bit-exact float comparison."""
    check_both(fn, *args, rtol=0, atol=0, **kwargs)


# ---------------------------------------------------------------- filled tensors

@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [None] + ALL_DTYPES)
def test_zeros_ones_full(shape, dtype):
    exact(lambda lib, d: lib.zeros(shape, dtype=d), dtype)
    exact(lambda lib, d: lib.ones(shape, dtype=d), dtype)
    exact(lambda lib, d: lib.full(shape, 7, dtype=d), dtype)
    exact(lambda lib, d: lib.empty(shape, dtype=d).shape, dtype)


def test_size_as_varargs_and_keywords():
    exact(lambda lib: lib.zeros(2, 3))
    exact(lambda lib: lib.ones(size=(2, 3), dtype=None, device="cpu", pin_memory=False))
    exact(lambda lib: lib.full(size=[2], fill_value=1.5))
    exact(lambda lib: lib.zeros([]))


@pytest.mark.parametrize("value", [3, -2, 1.5, float("inf"), float("nan"), True, False])
def test_full_infers_dtype_from_fill_value(value):
    exact(lambda lib: lib.full((2, 2), value))
    exact(lambda lib: lib.full((2,), value, dtype=dt(lib, torch.float64)))


@pytest.mark.parametrize("value,dtype", [
    (300, torch.int8), (-129, torch.int8), (-1, torch.uint8), (-256, torch.uint8), (256, torch.uint8),
    (2.7, torch.int32), (-2.7, torch.int64), (float("nan"), torch.int32), (1e10, torch.int32),
    (1e300, torch.float32), (float("inf"), torch.float32), (5, torch.bool), (0.5, torch.bool),
    (2 ** 31, torch.int32), (2 ** 63 - 1, torch.int64), (1e19, torch.int64),
])
def test_fill_value_overflow_matches_torch(value, dtype):
    exact(lambda lib, d: lib.full((2,), value, dtype=d), dtype)
    exact(lambda lib, d: lib.scalar_tensor(value, dtype=d), dtype)
    exact(lambda lib, a: a.fill_(value), np.zeros(3, dtype=str(dtype).split(".")[1]))


def test_non_cpu_device_raises():
    for fn in (lambda lib: lib.zeros(2, device="cuda"), lambda lib: lib.ones(2, pin_memory=True),
               lambda lib: lib.arange(3, device="cuda:1"), lambda lib: lib.rand(2, device="cuda")):
        with pytest.raises(Exception):
            fn(kiln)
        with pytest.raises(Exception):
            fn(torch)
    assert kiln.zeros(2, device="cpu").shape == (2,)


@pytest.mark.filterwarnings("ignore:.*out tensor:UserWarning")
def test_out_forms():
    # Outs made by each library: torch cannot resize numpy-backed storage.
    for out_shape in [(0,), (2, 3), (5,)]:
        for dtype in (torch.float32, torch.int64):
            def run(make):
                exact(lambda lib: make(lib, lib.ones(out_shape, dtype=dt(lib, dtype))))

            run(lambda lib, o: lib.zeros((2, 3), out=o))
            run(lambda lib, o: lib.ones((3,), out=o))
            run(lambda lib, o: lib.full((2, 2), 4, out=o))
            run(lambda lib, o: lib.eye(3, out=o))
            run(lambda lib, o: lib.eye(2, 4, out=o))
            run(lambda lib, o: lib.arange(1, 8, 2, out=o))
            run(lambda lib, o: lib.arange(4, out=o))
            run(lambda lib, o: lib.linspace(0, 6, 4, out=o))
            run(lambda lib, o: lib.scalar_tensor(3, out=o) if lib is kiln else torch.full((), 3, out=o))
            run(lambda lib, o: tuple(lib.empty((2, 2), out=o).shape))


def test_out_of_the_right_shape_is_written_in_place():
    out = np.zeros((2, 3), dtype=np.float32)
    exact(lambda lib, o: (lib.ones((2, 3), out=o), o), out)
    exact(lambda lib, o: (lib.eye(2, 3, out=o), o), out)
    exact(lambda lib, o: (lib.arange(6, out=o.view(6) if lib is torch else o), o), out.reshape(6))


def test_out_into_transposed_tensor():
    out = np.zeros((3, 4), dtype=np.float32).T
    exact(lambda lib, o: lib.eye(4, 3, out=o), out)
    exact(lambda lib, o: lib.full((4, 3), 2.5, out=o), out)


@pytest.mark.parametrize("dtype", [None] + ALL_DTYPES)
def test_like_factories(dtype, rng):
    base = rng.standard_normal((2, 3)).astype(np.float32)
    ints = rng.integers(0, 5, (4,)).astype(np.int32)
    for src in (base, base.T, ints):
        exact(lambda lib, a, d: lib.zeros_like(a, dtype=d), src, dtype)
        exact(lambda lib, a, d: lib.ones_like(a, dtype=d), src, dtype)
        exact(lambda lib, a, d: lib.full_like(a, 1, dtype=d), src, dtype)
        exact(lambda lib, a, d: (lib.empty_like(a, dtype=d).shape, lib.empty_like(a, dtype=d).dtype == a.dtype),
              src, dtype)


def test_full_like_converts_fill_to_self_dtype():
    ints = np.zeros(3, dtype=np.int32)
    exact(lambda lib, a: lib.full_like(a, 2.5), ints)
    exact(lambda lib, a: lib.full_like(a, 300), ints)
    exact(lambda lib, a: lib.full_like(a, 300), ints.astype(np.int8))
    exact(lambda lib, a: lib.full_like(a, True), ints)


def test_like_out_forms():
    # torch has no Python binding for zeros_like(out=): compare with the plain out= factory.
    src = np.zeros((2, 3), dtype=np.float32)
    for out_shape, dtype in (((0,), torch.float32), ((2, 3), torch.int64)):
        def run(kiln_fn, torch_fn):
            exact(lambda lib, a: (kiln_fn if lib is kiln else torch_fn)(a, lib.ones(out_shape, dtype=dt(lib, dtype))),
                  src)

        run(lambda a, o: kiln.zeros_like(a, out=o), lambda a, o: torch.zeros((2, 3), out=o))
        run(lambda a, o: kiln.ones_like(a, out=o), lambda a, o: torch.ones((2, 3), out=o))
        run(lambda a, o: kiln.full_like(a, 5, out=o), lambda a, o: torch.full((2, 3), 5, out=o))


@pytest.mark.parametrize("dtype", [None, torch.int32, torch.float64, torch.bool])
def test_new_factories(dtype):
    src = np.zeros((2,), dtype=np.int16)
    exact(lambda lib, a, d: a.new_zeros((2, 3), dtype=d), src, dtype)
    exact(lambda lib, a, d: a.new_ones((3,), dtype=d), src, dtype)
    exact(lambda lib, a, d: a.new_full((2, 2), 1, dtype=d), src, dtype)
    exact(lambda lib, a, d: a.new_empty((4, 1), dtype=d).shape, src, dtype)


def test_empty_strided():
    exact(lambda lib, d: (lib.empty_strided((2, 3), (1, 2), dtype=d).stride(),
                          tuple(lib.empty_strided((2, 3), (1, 2), dtype=d).shape),
                          str(lib.empty_strided((2, 3), (1, 2), dtype=d).dtype).split(".")[-1]), torch.int64)


@pytest.mark.parametrize("value", [0, 3, -1.5, True, 2 ** 40, 1e-3])
@pytest.mark.parametrize("dtype", [None] + ALL_DTYPES)
def test_scalar_tensor(value, dtype):
    exact(lambda lib, d: lib.scalar_tensor(value, dtype=d), dtype)


# ---------------------------------------------------------------- fill_ / zero_

@pytest.mark.parametrize("dtype", list(DTYPE_PAIRS))
def test_fill_and_zero_in_place(dtype, rng):
    a = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    for src in (a, a.T, a[0]):
        for value in (3, 0, 1.75, -2, True):
            if value == -2 and dtype in ("uint8", "bool"):
                continue
            exact(lambda lib, t: t.fill_(value), src)
        exact(lambda lib, t: t.zero_(), src)
        exact(lambda lib, t, v: t.fill_(v), src, np.array(5, dtype=np.int64))
        exact(lambda lib, t, v: t.fill_(v), src, np.array(2.5))


def test_fill_large_parallel():
    exact(lambda lib: lib.full((300001,), 0.5))
    exact(lambda lib: lib.ones(200003, dtype=dt(lib, torch.int8)).zero_())


def test_fill_with_non_scalar_tensor_raises():
    exact(lambda lib, t, v: t.fill_(v), np.zeros(3), np.array([1.0]))
    exact(lambda lib, t, v: t.fill_(v), np.zeros(3), np.array([1.0, 2.0]))
    exact(lambda lib, t, v: t.fill_(v), np.zeros(3, dtype=np.int8), np.array(300))


# ---------------------------------------------------------------- ranges

ARANGE_CASES = [
    (5,), (0,), (True,), (2.5,), (1, 5), (-3, 3), (1, 2.5, 0.5), (0, 1, 0.1), (0.0, 1.0, 0.3),
    (10, 0, -3), (-1.5, 3, 0.7), (0, 100, 0.37), (5.5, -7.25, -0.125), (0, 1000, 7), (1e3, 1e3 + 1, 1e-2),
    (-100, 100, 3.3),
]


@pytest.mark.parametrize("args", ARANGE_CASES)
@pytest.mark.parametrize("dtype", [None, torch.float32, torch.float64, torch.int64, torch.int32,
                                   torch.int16, torch.uint8])
def test_arange(args, dtype):
    if dtype is torch.uint8 and min(args[:2]) < 0:
        return
    exact(lambda lib, d: lib.arange(*args, dtype=d), dtype)


@pytest.mark.filterwarnings("ignore:.*out tensor:UserWarning")
def test_arange_keywords_and_out():
    exact(lambda lib: lib.arange(start=1, end=4, step=1))
    exact(lambda lib: lib.arange(end=4))
    exact(lambda lib: lib.arange(2, 9, dtype=dt(lib, torch.float64)))
    exact(lambda lib, o: lib.arange(0, 2, 0.5, out=o), np.zeros(4, dtype=np.float64))
    exact(lambda lib, o: lib.arange(0, 3, out=o), np.zeros((2, 2), dtype=np.int32))
    # The right element count keeps the out tensor's shape.
    exact(lambda lib, o: lib.arange(0, 4, out=o), np.zeros((2, 2), dtype=np.int32))
    exact(lambda lib, o: lib.arange(0, 6, out=o), np.zeros((3, 2), dtype=np.float32).T)
    exact(lambda lib, o: lib.linspace(0, 1, 4, out=o), np.zeros((2, 2), dtype=np.float64))


@pytest.mark.parametrize("args,dtype", [
    ((0, 1, 0), None), ((0, -1, 1), None), ((0, 1, -1), None), ((0, float("inf"), 1), None),
    ((float("nan"), 1, 1), None), ((5,), torch.bool), ((0, 3, 0.5), torch.int64), ((0, 3, 0.5), torch.int32),
])
def test_arange_errors(args, dtype):
    exact(lambda lib, d: lib.arange(*args, dtype=d), dtype)


@pytest.mark.parametrize("start,end", [(0, 1), (-3.5, 2.25), (10, -10), (0, 255), (3, 3), (1e-3, 1e3)])
@pytest.mark.parametrize("steps", [0, 1, 2, 3, 5, 8, 16, 17, 64, 100, 1001])
@pytest.mark.parametrize("dtype", [None, torch.float64, torch.int64, torch.int32, torch.int16, torch.int8,
                                   torch.uint8])
def test_linspace(start, end, steps, dtype):
    if dtype is torch.uint8 and min(start, end) < 0:
        return
    if dtype in (torch.int8,) and max(abs(start), abs(end)) > 127:
        return
    exact(lambda lib, d: lib.linspace(start, end, steps, dtype=d), dtype)


def test_linspace_errors():
    exact(lambda lib: lib.linspace(0, 1, -1))
    exact(lambda lib: lib.linspace(0, 1, 5, dtype=dt(lib, torch.bool)))
    exact(lambda lib, o: lib.linspace(1, 2, 3, out=o), np.zeros((2, 2), dtype=np.float32))


@pytest.mark.parametrize("args", [(0,), (1,), (3,), (3, 5), (5, 2), (0, 3), (4, 0)])
@pytest.mark.parametrize("dtype", [None, torch.int64, torch.bool, torch.float64, torch.uint8])
def test_eye(args, dtype):
    exact(lambda lib, d: lib.eye(*args, dtype=d), dtype)


def test_eye_errors():
    exact(lambda lib: lib.eye(-1))
    exact(lambda lib: lib.eye(3, -1))


# ---------------------------------------------------------------- random

def _np(t):
    return np.asarray(t.numpy(), dtype=np.float64)


def test_manual_seed_reproduces_every_random_op():
    draws = [
        lambda: kiln.rand(5, 7), lambda: kiln.randn(1000), lambda: kiln.randint(0, 100, (33,)),
        lambda: kiln.randint(7, (2, 2), dtype=kiln.int8), lambda: kiln.rand(3, dtype=kiln.float64),
        lambda: kiln.randn(4, dtype=kiln.float64), lambda: kiln.zeros(9).uniform_(-1, 1),
        lambda: kiln.zeros(9).normal_(2, 3), lambda: kiln.randperm(50), lambda: kiln.rand_like(kiln.zeros(3)),
        lambda: kiln.zeros(5, dtype=kiln.int16).random_(), lambda: kiln.randint_like(kiln.zeros(4), 3, 9),
    ]
    kiln.manual_seed(1234)
    first = [d().numpy() for d in draws]
    kiln.manual_seed(1234)
    second = [d().numpy() for d in draws]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    kiln.manual_seed(1235)
    assert not np.array_equal(kiln.rand(5, 7).numpy(), first[0])


def test_successive_draws_differ():
    kiln.manual_seed(0)
    assert not np.array_equal(kiln.rand(100).numpy(), kiln.rand(100).numpy())
    assert not np.array_equal(kiln.randn(3).numpy(), kiln.randn(3).numpy())


def test_random_values_do_not_depend_on_thread_count():
    old = kiln.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            kiln.set_num_threads(threads)
            kiln.manual_seed(99)
            results.append((kiln.rand(100003).numpy(), kiln.randn(70001, dtype=kiln.float64).numpy(),
                            kiln.randint(-5, 5, (50001,)).numpy()))
        for a, b in zip(*results):
            np.testing.assert_array_equal(a, b)
    finally:
        kiln.set_num_threads(old)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_uniform_statistics(dtype):
    kd = kiln.float32 if dtype is torch.float32 else kiln.float64
    kiln.manual_seed(7)
    x = _np(kiln.rand(200000, dtype=kd))
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 0.005 and abs(x.var() - 1 / 12) < 0.002
    # Every tenth of the range gets its share.
    np.testing.assert_allclose(np.histogram(x, bins=10, range=(0, 1))[0] / x.size, 0.1, atol=0.005)
    y = _np(kiln.empty(100000, dtype=kd).uniform_(-3, 5))
    assert y.min() >= -3 and y.max() < 5 and abs(y.mean() - 1) < 0.05


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_normal_statistics(dtype):
    kd = kiln.float32 if dtype is torch.float32 else kiln.float64
    kiln.manual_seed(8)
    x = _np(kiln.randn(200000, dtype=kd))
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01
    assert abs(np.mean(np.abs(x) < 1) - 0.6827) < 0.005  # one-sigma mass
    assert abs(np.mean(x ** 3)) < 0.05 and abs(np.mean(x ** 4) - 3) < 0.1  # symmetric, normal kurtosis
    y = _np(kiln.zeros(100000, dtype=kd).normal_(3, 2))
    assert abs(y.mean() - 3) < 0.03 and abs(y.std() - 2) < 0.03
    # Consecutive values are uncorrelated (pairs of Box-Muller outputs included).
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < 0.01


def test_randint_range_and_coverage():
    kiln.manual_seed(9)
    x = kiln.randint(-3, 4, (70000,)).numpy()
    assert x.dtype == np.int64 and x.min() == -3 and x.max() == 3
    counts = np.bincount(x + 3)
    np.testing.assert_allclose(counts / x.size, 1 / 7, atol=0.01)
    b = kiln.randint(0, 2, (1000,), dtype=kiln.bool).numpy()
    assert b.dtype == np.bool_ and 400 < b.sum() < 600
    f = kiln.randint(10, (1000,), dtype=kiln.float32).numpy()
    assert f.dtype == np.float32 and set(np.unique(f)) <= set(range(10))
    u = kiln.randint(0, 256, (5000,), dtype=kiln.uint8).numpy()
    assert u.min() == 0 and u.max() == 255


def test_random_in_place_ranges():
    kiln.manual_seed(10)
    assert set(np.unique(kiln.zeros(1000, dtype=kiln.bool).random_().numpy())) == {False, True}
    x = kiln.zeros(5000, dtype=kiln.uint8).random_().numpy()
    assert x.min() == 0 and x.max() == 255
    y = kiln.zeros(5000, dtype=kiln.int8).random_(-5, None).numpy()
    assert y.min() == -5 and y.max() == 127
    z = kiln.zeros(5000, dtype=kiln.int64).random_(10).numpy()
    assert z.min() == 0 and z.max() == 9
    w = kiln.zeros(5000).random_().numpy()
    assert w.min() >= 0 and w.max() <= 2 ** 24 and np.all(w == np.floor(w))


def test_random_fills_reach_strided_views():
    base = np.full((300, 200), -1.0, dtype=np.float32)
    t = kiln.from_numpy(base.T)  # a column-major view of the numpy array
    kiln.manual_seed(12)
    t.uniform_(2, 3)
    assert base.min() >= 2 and base.max() < 3 and np.unique(base).size > 50000
    t.normal_(10, 1)
    assert abs(base.mean() - 10) < 0.05
    ints = np.zeros((50, 40), dtype=np.int32)
    kiln.from_numpy(ints.T).random_(5, 9)
    assert set(np.unique(ints)) == {5, 6, 7, 8}


def test_randperm_is_a_permutation():
    kiln.manual_seed(11)
    for n in (0, 1, 2, 10, 1000):
        p = kiln.randperm(n).numpy()
        assert p.dtype == np.int64 and sorted(p.tolist()) == list(range(n))
    assert kiln.randperm(5, dtype=kiln.float32).dtype == kiln.float32
    assert not np.array_equal(kiln.randperm(1000).numpy(), np.arange(1000))


def _shape_dtype(fn):
    """check_both on the result's shape and dtype only (random values differ)."""
    check_both(lambda lib, *a: (tuple(fn(lib, *a).shape), str(fn(lib, *a).dtype).split(".")[-1]))


@pytest.mark.parametrize("shape", [(), (0,), (3, 4), (2, 1, 5)])
def test_random_shapes_and_dtypes(shape):
    _shape_dtype(lambda lib: lib.rand(shape))
    _shape_dtype(lambda lib: lib.randn(*shape) if shape else lib.randn(shape))
    _shape_dtype(lambda lib: lib.rand(shape, dtype=dt(lib, torch.float64)))
    _shape_dtype(lambda lib: lib.randint(5, shape))
    _shape_dtype(lambda lib: lib.randint(-5, 5, shape, dtype=dt(lib, torch.int16)))
    _shape_dtype(lambda lib: lib.rand_like(lib.zeros(shape, dtype=dt(lib, torch.float64))))
    _shape_dtype(lambda lib: lib.randn_like(lib.zeros(shape)))
    _shape_dtype(lambda lib: lib.randint_like(lib.zeros(shape, dtype=dt(lib, torch.int32)),
                                              7))
    _shape_dtype(lambda lib: lib.randint_like(lib.zeros(shape), 2, 7))
    _shape_dtype(lambda lib: lib.zeros(shape).uniform_())
    _shape_dtype(lambda lib: lib.zeros(shape).normal_())
    _shape_dtype(lambda lib: lib.randperm(6))


def test_random_out_forms():
    for out_shape, dtype in (((0,), torch.float32), ((2, 3), torch.float64)):
        def run(make):
            check_both(lambda lib: tuple(make(lib, lib.ones(out_shape, dtype=dt(lib, dtype))).shape))

        run(lambda lib, o: lib.rand((3, 2), out=o))
        run(lambda lib, o: lib.randn((4,), out=o))
        run(lambda lib, o: lib.randint(3, 5, (4,), out=o))
        run(lambda lib, o: lib.randperm(5, out=o))
    out = np.full(4, 100, dtype=np.int64)
    check_both(lambda lib, o: [0 <= int(v) < 3 for v in lib.randint(3, (4,), out=o).tolist()], out, check_args=False)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.rand(3, dtype=dt(lib, torch.int64)),
    lambda lib: lib.rand(3, dtype=dt(lib, torch.bool)),
    lambda lib: lib.randn(3, dtype=dt(lib, torch.int32)),
    lambda lib: lib.randint(5, 3, (3,)),
    lambda lib: lib.randint(3, 3, (3,)),
    lambda lib: lib.randint(0, 300, (3,), dtype=dt(lib, torch.uint8)),
    lambda lib: lib.randint(-1, 3, (3,), dtype=dt(lib, torch.uint8)),
    lambda lib: lib.randint(0, 3, (3,), dtype=dt(lib, torch.bool)),
    lambda lib: lib.randint(0, 3, (-1,)),
    lambda lib: lib.rand(-2),
    lambda lib: lib.zeros(3).uniform_(2, 1),
    lambda lib: lib.zeros(3).uniform_(-3e38, 3e38),
    lambda lib: lib.zeros(3).normal_(0, -1),
    lambda lib: lib.zeros(3, dtype=dt(lib, torch.int64)).normal_(),
    lambda lib: lib.zeros(3, dtype=dt(lib, torch.int8)).random_(0, 200),
    lambda lib: lib.zeros(3).random_(0, 0),
    lambda lib: lib.randperm(-1),
    lambda lib: lib.rand_like(lib.zeros(3, dtype=dt(lib, torch.int32))),
])
def test_random_errors(fn):
    check_both(fn)


# ---------------------------------------------------------------- conversions

CONVERSION_VALUES = {
    "float": np.array([0.0, -0.0, 1.5, -1.5, 2.99, -2.99, 100.7, 1e-8, 3e4, -3e4], dtype=np.float64),
    "unsigned": np.array([0.0, 0.5, 1.99, 7.5, 100.7, 200.2, 255.9], dtype=np.float64),
    "int": np.array([0, 1, -1, 127, 128, -129, 300, -300, 65537, 2 ** 40 + 5], dtype=np.int64),
}


def _conversion_source(src):
    if src in ("float32", "float64"):
        return CONVERSION_VALUES["float"].astype(src)
    if src == "bool":
        return np.array([True, False, True])
    return CONVERSION_VALUES["int"].astype(src)


@pytest.mark.parametrize("src", list(DTYPE_PAIRS))
@pytest.mark.parametrize("dst", list(DTYPE_PAIRS))
def test_to_dtype_all_pairs(src, dst):
    a = _conversion_source(src)
    if src in ("float32", "float64") and dst not in ("float32", "float64", "bool"):
        # Floats out of the integer range are undefined behaviour in C++ (and differ in torch).
        a = CONVERSION_VALUES["unsigned" if dst == "uint8" else "float"].astype(src)
        if dst in ("int8",):
            a = a[np.abs(a) < 128]
        if dst in ("int16",):
            a = a[np.abs(a) < 32768]
    d = DTYPE_PAIRS[dst][1]
    exact(lambda lib, t, dt: t.to(dt), a, d)
    exact(lambda lib, t, dt: t.to(dtype=dt, copy=True), np.stack([a, a[::-1]]).T, d)


@pytest.mark.parametrize("method,dtype", [("float", "float32"), ("double", "float64"), ("long", "int64"),
                                          ("int", "int32"), ("short", "int16"), ("char", "int8"),
                                          ("byte", "uint8"), ("bool", "bool")])
def test_conversion_methods(method, dtype):
    a = np.array([[0.0, 1.5, -2.5], [3.25, 0.0, 7.0]], dtype=np.float32)
    if dtype == "uint8":
        a = np.abs(a)
    exact(lambda lib, t: getattr(t, method)(), a)
    exact(lambda lib, t: getattr(t, method)(), a.T)
    exact(lambda lib, t: getattr(t, method)(), np.array([1, 0, 5], dtype=np.int16))


def test_nan_and_inf_conversions():
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=np.float32)
    exact(lambda lib, t: t.to(dt(lib, torch.bool)), special)
    exact(lambda lib, t: t.double(), special)
    exact(lambda lib, t: t.double().float(), special)


def test_to_overloads():
    a = np.array([[1.5, -2.5], [0.0, 4.0]], dtype=np.float32)
    i = np.array([1, 2], dtype=np.int8)
    exact(lambda lib, t, o: t.to(o), a, i)
    exact(lambda lib, t, o: t.type_as(o), a, i)
    exact(lambda lib, t, o: o.type_as(t), a, i)
    exact(lambda lib, t: t.to("cpu"), a)
    exact(lambda lib, t: t.to("cpu", dt(lib, torch.int64)), a)
    exact(lambda lib, t: t.to(device="cpu", dtype=dt(lib, torch.float64)), a)
    exact(lambda lib, t: t.to(), a)
    exact(lambda lib, t: t.to(dt(lib, torch.float32), copy=True), a)
    check_both(lambda lib, t: t.to("cuda"), a)


def test_to_without_change_aliases_and_copy_does_not():
    t = kiln.from_numpy(np.zeros(3, dtype=np.float32))
    assert t.to(kiln.float32)._same_tensor(t)
    assert t.to("cpu")._same_tensor(t)
    assert not t.to(kiln.float32, copy=True)._same_tensor(t)
    c = t.to(kiln.float32, copy=True)
    c.fill_(1)
    assert t.tolist() == [0.0, 0.0, 0.0]


def test_manual_seed_is_an_aten_op():
    assert "aten::manual_seed(int seed) -> ()" in kiln._C._schemas()
    assert kiln.manual_seed(5) is None
