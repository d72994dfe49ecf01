"""Static memory plans (docs/runtime.md, "Memory plans"): once a
shape-specialized plan has warmed up and recorded one run, its
intermediates live in a preplanned arena, so a steady-state run sends only
its outputs to the allocator (kiln._C._storage_allocations counts the
requests of the calling thread). Results are bit-identical with planning on
and off, for every model of the zoo, loaded and optimized for inference."""
import io

import numpy as np
import pytest
import torch

import kiln
from test_models import MODELS, _kiln_input, _saved, torch_case

_modules = {}


def modules(name):
    """(loaded, optimized) kiln modules of a zoo model, made once."""
    if name not in _modules:
        model, _, _ = torch_case(name)
        archive = _saved(torch.jit.script(model))
        loaded = kiln.load(io.BytesIO(archive))
        _modules[name] = (loaded, kiln.optimize_for_inference(kiln.load(io.BytesIO(archive))))
    return _modules[name]


def outputs_of(result):
    if isinstance(result, (tuple, list)):
        return [r for o in result for r in outputs_of(o)]
    return [np.array(result.numpy(), copy=True)] if hasattr(result, "numpy") else []


def allocations(call):
    count, _ = kiln._C._storage_allocations()
    result = call()
    return kiln._C._storage_allocations()[0] - count, result


@pytest.fixture
def planning():
    yield
    kiln._C._set_memory_planning(True)


@pytest.mark.parametrize("variant", ["loaded", "optimized"])
@pytest.mark.parametrize("name", list(MODELS))
def test_results_are_bit_identical_with_and_without_a_plan(name, variant, planning):
    loaded, optimized = modules(name)
    module = loaded if variant == "loaded" else optimized
    _, x, _ = torch_case(name)
    x = _kiln_input(x)
    with kiln.no_grad():
        kiln._C._set_memory_planning(False)
        expected = outputs_of(module(x))
        kiln._C._set_memory_planning(True)
        for _ in range(4):  # warm-up, recording, then runs from the arena
            got = outputs_of(module(x))
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                assert g.dtype == e.dtype and g.shape == e.shape
                assert np.array_equal(g, e, equal_nan=True)


def steady_state_allocations(module, x, runs=3):
    with kiln.no_grad():
        for _ in range(3):
            module(x)
        counts = [allocations(lambda: module(x))[0] for _ in range(runs)]
    return counts


@pytest.mark.parametrize("name", ["resnet18", "transformer_encoder", "small_unet", "audio_conv1d"])
def test_steady_state_runs_allocate_only_their_outputs(name):
    _, optimized = modules(name)
    _, x, _ = torch_case(name)
    counts = steady_state_allocations(optimized, _kiln_input(x))
    assert counts == [1, 1, 1], counts


def test_steady_state_mlp_allocates_only_its_output():
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                torch.nn.GELU(), torch.nn.Linear(256, 10), torch.nn.Softmax(dim=-1)).eval()
    module = kiln.optimize_for_inference(kiln.load(io.BytesIO(_saved(torch.jit.script(model)))))
    x = torch.randn(8, 64)
    counts = steady_state_allocations(module, _kiln_input(x))
    assert counts == [1, 1, 1], counts
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(module(_kiln_input(x)).numpy(), expected, rtol=1e-4, atol=1e-6)


def test_without_planning_every_intermediate_is_allocated(planning):
    _, optimized = modules("resnet18")
    _, x, _ = torch_case("resnet18")
    x = _kiln_input(x)
    kiln._C._set_memory_planning(False)
    counts = steady_state_allocations(optimized, x, runs=1)
    assert counts[0] > 20


def test_stats_count_plans_and_planned_runs():
    _, optimized = modules("squeezenet1_0")
    _, x, _ = torch_case("squeezenet1_0")
    before = kiln._C._memory_plan_stats()
    steady_state_allocations(optimized, _kiln_input(x))
    after = kiln._C._memory_plan_stats()
    assert after["planned_runs"] >= before["planned_runs"] + 3
    assert after["arena_bytes"] >= before["arena_bytes"]
    assert kiln._C._get_memory_planning()


def test_plans_are_per_shape_and_other_shapes_stay_correct():
    model, _, _ = torch_case("resnet18")
    _, optimized = modules("resnet18")
    with torch.no_grad(), kiln.no_grad():
        for size in (32, 40, 32, 40, 32, 40):
            x = torch.randn(1, 3, size, size)
            np.testing.assert_allclose(optimized(_kiln_input(x)).numpy(), model(x).numpy(), rtol=1e-4, atol=1e-4)


def test_plain_convolution_reorders_come_from_kilns_allocator(planning):
    """A convolution oneDNN runs in its own layouts (here a transposed one on plain tensors) copies its input
    and output through buffers made per call by kiln's allocator, where a memory plan's arena serves them;
    they were per-thread buffers held for good, as large as the largest any call wanted (20 MiB of the small
    UNet's steady state at batch 8)."""
    x = kiln.from_numpy(np.random.RandomState(0).rand(8, 32, 64, 64).astype(np.float32))
    w = kiln.from_numpy(np.random.RandomState(1).rand(32, 16, 2, 2).astype(np.float32))
    kiln._C._set_memory_planning(False)
    with kiln.no_grad():
        for _ in range(2):
            _, before = kiln._C._storage_allocations()
            y = kiln.nn.functional.conv_transpose2d(x, w, stride=2)
            _, after = kiln._C._storage_allocations()
    assert tuple(y.shape) == (8, 16, 128, 128)
    output = 8 * 16 * 128 * 128 * 4
    if after - before == output:
        pytest.skip("oneDNN ran this convolution in the tensors' own layout (nothing to reorder)")
    assert after - before >= output + x.numpy().nbytes, "the reordered copies bypassed kiln's allocator"
    expected = torch.nn.functional.conv_transpose2d(torch.from_numpy(x.numpy()), torch.from_numpy(w.numpy()), stride=2)
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)
