"""One intra-op thread pool (docs/runtime.md, "Threads"): kiln.set_num_threads
governs kiln's kernels and BLAS, results do not depend on the thread count,
and kiln.parallel_info() says what runs the work."""
import numpy as np
import pytest

import kiln


@pytest.fixture
def restore_threads():
    before = kiln.get_num_threads()
    yield
    kiln.set_num_threads(before)


def test_parallel_info_names_threads_and_blas(restore_threads):
    kiln.set_num_threads(1)
    info = kiln.parallel_info()
    assert "kiln threads: 1" in info
    assert "OpenBLAS" in info
    assert "threading: " in info


def test_make_deps_selects_openblas_openmp():
    # `make deps` selects Debian's OpenMP build of OpenBLAS; the pthreads build
    # would run a second pool of spinning threads next to kiln's OpenMP team.
    assert "threading: OpenMP" in kiln.parallel_info()


@pytest.mark.parametrize("threads", [1, 2])
def test_results_do_not_depend_on_thread_count(threads, restore_threads):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 300)).astype(np.float32)
    b = rng.standard_normal((300, 200)).astype(np.float32)
    x = rng.standard_normal(1 << 17).astype(np.float32)
    fn = kiln.compile("def f(a, b, x):\n    return torch.mm(a, b), torch.tanh(x * 2.0 + 1.0) * x\n").f
    kiln.set_num_threads(1)
    mm1, pw1 = fn(kiln.from_numpy(a), kiln.from_numpy(b), kiln.from_numpy(x))
    kiln.set_num_threads(threads)
    mm2, pw2 = fn(kiln.from_numpy(a), kiln.from_numpy(b), kiln.from_numpy(x))
    np.testing.assert_allclose(mm1.numpy(), mm2.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(pw1.numpy(), pw2.numpy())


def test_set_num_threads_rejects_non_positive():
    with pytest.raises(kiln.Error, match="positive number of threads"):
        kiln.set_num_threads(0)
