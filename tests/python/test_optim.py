"""kiln.optim against torch.optim 1.13: updates after many steps (bit for
bit in float32), state_dict contents and round trips, param groups,
zero_grad, StepLR, torch's errors; Module.train()/eval() of dropout and
batch norm; clip_grad_norm_ and clip_grad_value_."""
import math

import numpy as np
import pytest
import torch

import kiln

RNG = np.random.default_rng(7)
SHAPES = [(5, 4), (4,), (3, 5)]
INIT = [RNG.standard_normal(s).astype(np.float32) for s in SHAPES]
GRADS = [[RNG.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(60)]

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.05)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.5, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.2, amsgrad=True, maximize=True)),
]


def params(lib):
    return [lib.nn.Parameter(lib.from_numpy(a.copy())) for a in INIT]


def run(lib, cls, kwargs, grads=GRADS, skip_second=False):
    ps = params(lib)
    opt = getattr(lib.optim, cls)(ps, **kwargs)
    for step, g in enumerate(grads):
        for i, (p, gg) in enumerate(zip(ps, g)):
            # a parameter without a gradient is skipped
            p.grad = None if (skip_second and i == 1 and step % 3 == 0) else lib.from_numpy(gg.copy())
        opt.step()
    return ps, opt


def numpy_of(t):
    return t.detach().numpy()


@pytest.mark.parametrize("cls,kwargs", CONFIGS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CONFIGS)])
def test_updates_match_torch_bit_for_bit(cls, kwargs):
    k, _ = run(kiln, cls, kwargs, skip_second=True)
    t, _ = run(torch, cls, kwargs, skip_second=True)
    for kp, tp in zip(k, t):
        np.testing.assert_array_equal(numpy_of(kp), numpy_of(tp))


def state_to_numpy(sd):
    out = {}
    for index, st in sd["state"].items():
        out[index] = {key: (numpy_of(v) if isinstance(v, (torch.Tensor, kiln.Tensor)) else v) for key, v in st.items()}
    return out


@pytest.mark.parametrize("cls,kwargs", CONFIGS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CONFIGS)])
def test_state_dict_matches_torch(cls, kwargs):
    _, k_opt = run(kiln, cls, kwargs, GRADS[:5])
    _, t_opt = run(torch, cls, kwargs, GRADS[:5])
    k_sd, t_sd = k_opt.state_dict(), t_opt.state_dict()
    assert k_sd["param_groups"] == t_sd["param_groups"]
    k_state, t_state = state_to_numpy(k_sd), state_to_numpy(t_sd)
    assert k_state.keys() == t_state.keys()
    for index in t_state:
        assert list(k_state[index]) == list(t_state[index])
        for key, value in t_state[index].items():
            if value is None:
                assert k_state[index][key] is None
            else:
                np.testing.assert_array_equal(k_state[index][key], value)
                assert k_state[index][key].dtype == value.dtype


@pytest.mark.parametrize("cls,kwargs", [CONFIGS[2], CONFIGS[7], CONFIGS[10]])
def test_state_dict_round_trip_resumes_training(cls, kwargs):
    # 30 steps, save; a fresh optimizer loads the state and does 30 more: as 60 steps in one go.
    straight, _ = run(kiln, cls, kwargs)
    ps, opt = run(kiln, cls, kwargs, GRADS[:30])
    saved = opt.state_dict()
    opt2 = getattr(kiln.optim, cls)(ps, **kwargs)
    opt2.load_state_dict(saved)
    assert opt2.state_dict()["param_groups"] == saved["param_groups"]
    for g in GRADS[30:]:
        for p, gg in zip(ps, g):
            p.grad = kiln.from_numpy(gg.copy())
        opt2.step()
    for a, b in zip(ps, straight):
        np.testing.assert_array_equal(numpy_of(a), numpy_of(b))


def test_load_state_dict_saved_by_torch():
    _, t_opt = run(torch, "Adam", dict(lr=0.01), GRADS[:4])
    t_sd = t_opt.state_dict()
    k_sd = {"param_groups": t_sd["param_groups"],
            "state": {i: {k: kiln.from_numpy(v.numpy().copy()) for k, v in st.items()}
                      for i, st in t_sd["state"].items()}}
    ps = params(kiln)
    opt = kiln.optim.Adam(ps, lr=0.5)
    opt.load_state_dict(k_sd)
    assert opt.param_groups[0]["lr"] == 0.01 and opt.param_groups[0]["params"] == ps
    assert float(opt.state[ps[0]]["step"]) == 4.0


def test_param_groups_and_add_param_group():
    for lib in (kiln, torch):
        a, b, c = params(lib)
        opt = lib.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "momentum": 0.9}], lr=0.1)
        opt.add_param_group({"params": [c], "weight_decay": 0.1})
        groups = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
        if lib is kiln:
            k_groups = groups
        else:
            assert k_groups == groups
    assert repr(kiln.optim.SGD(params(kiln)[:1], lr=0.1)).startswith("SGD (\nParameter Group 0\n    dampening: 0\n")


def test_zero_grad():
    for lib in (kiln, torch):
        ps = params(lib)
        opt = lib.optim.SGD(ps, lr=0.1)
        (ps[0] * 2).sum().backward()
        grad = ps[0].grad
        opt.zero_grad()
        assert float(grad.abs().sum()) == 0 and float(ps[0].grad.abs().sum()) == 0
        opt.zero_grad(set_to_none=True)
        assert ps[0].grad is None


def test_module_zero_grad():
    model = kiln.nn.Linear(3, 2)
    model(kiln.randn(4, 3)).sum().backward()
    assert float(model.weight.grad.abs().sum()) > 0
    model.zero_grad()
    assert float(model.weight.grad.abs().sum()) == 0
    model.zero_grad(set_to_none=True)
    assert model.weight.grad is None and model.bias.grad is None


def errors(fn):
    """The exception type and message fn raises with each library."""
    out = []
    for lib in (kiln, torch):
        with pytest.raises(Exception) as info:
            fn(lib)
        out.append((type(info.value).__name__, str(info.value).replace("torch.FloatTensor", "kiln.Tensor")))
    return out


@pytest.mark.parametrize("case", [
    lambda lib: lib.optim.SGD([], lr=0.1),
    lambda lib: lib.optim.SGD(lib.ones(2), lr=0.1),
    lambda lib: lib.optim.SGD(params(lib), lr=-1.0),
    lambda lib: lib.optim.SGD(params(lib), lr=0.1, momentum=-0.5),
    lambda lib: lib.optim.SGD(params(lib), lr=0.1, nesterov=True),
    lambda lib: lib.optim.SGD(params(lib)),
    lambda lib: lib.optim.SGD([{"params": params(lib)}]),
    lambda lib: lib.optim.Adam(params(lib), betas=(1.0, 0.9)),
    lambda lib: lib.optim.Adam(params(lib), eps=-1.0),
    lambda lib: lib.optim.AdamW(params(lib), weight_decay=-1.0),
    lambda lib: lib.optim.SGD([1.0], lr=0.1),
    lambda lib: lib.optim.SGD([{"params": set(params(lib))}], lr=0.1),
    lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True) * 2], lr=0.1),
    lambda lib: (lambda ps: lib.optim.SGD([{"params": ps}, {"params": ps[:1]}], lr=0.1))(params(lib)),
    lambda lib: lib.optim.SGD(params(lib), lr=0.1).load_state_dict({"param_groups": [], "state": {}}),
])
def test_errors_match_torch(case):
    k, t = errors(case)
    assert k[0] == t[0]
    assert k[1] == t[1]


def test_step_lr_matches_torch():
    lrs = []
    for lib in (kiln, torch):
        opt = lib.optim.SGD(params(lib), lr=0.3)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        seen = []
        for _ in range(10):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr()[0])
        lrs.append(seen)
    assert lrs[0] == lrs[1]


def test_closure_is_called_with_grad_enabled():
    p = kiln.nn.Parameter(kiln.ones(2))
    opt = kiln.optim.SGD([p], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 2.0
    np.testing.assert_allclose(p.detach().numpy(), [0.0, 0.0])


# --- train() / eval() -----------------------------------------------------------------------

def test_dropout_train_and_eval():
    drop = kiln.nn.Dropout(0.3)
    x = kiln.ones(200, 50)
    assert drop.training
    y = drop(x).numpy()
    kept = y != 0
    assert 0.6 < kept.mean() < 0.8
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    drop.eval()
    assert not drop.training
    np.testing.assert_array_equal(drop(x).numpy(), x.numpy())


def test_dropout_gradient():
    # the gradient goes through the kept elements, scaled
    drop = kiln.nn.Dropout(0.3)
    xs = kiln.ones(100, 10, requires_grad=True)
    out = drop(xs)
    out.sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), (out.detach().numpy() != 0) / 0.7, rtol=1e-6)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_train_and_eval_match_torch(momentum):
    torch.manual_seed(4)
    t_bn = torch.nn.BatchNorm1d(6, momentum=momentum)
    k_bn = kiln.nn.BatchNorm1d(6, momentum=momentum)
    with torch.no_grad():
        t_bn.weight.uniform_(0.5, 1.5)
        t_bn.bias.uniform_(-0.5, 0.5)
    k_bn.load_state_dict({k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in t_bn.state_dict().items()})
    for step in range(4):
        x = RNG.standard_normal((8, 6)).astype(np.float32) * (step + 1) + step
        t_out = t_bn(torch.from_numpy(x))
        k_out = k_bn(kiln.from_numpy(x))
        np.testing.assert_allclose(k_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5, atol=1e-5)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(k_bn, name).numpy(), getattr(t_bn, name).numpy(), rtol=1e-5)
    t_bn.eval()
    k_bn.eval()
    x = RNG.standard_normal((3, 6)).astype(np.float32)
    np.testing.assert_allclose(k_bn(kiln.from_numpy(x)).detach().numpy(), t_bn(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    # eval mode leaves the running statistics alone
    np.testing.assert_allclose(k_bn.running_mean.numpy(), t_bn.running_mean.numpy(), rtol=1e-5)
    assert int(k_bn.num_batches_tracked) == 4


def test_train_eval_recurse_and_return_self():
    model = kiln.nn.Sequential(kiln.nn.Linear(2, 2), kiln.nn.Dropout(), kiln.nn.BatchNorm1d(2))
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    assert model.train() is model
    assert all(m.training for m in model.modules())


# --- gradient clipping ----------------------------------------------------------------------

@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    results = []
    for lib in (kiln, torch):
        ps = params(lib)
        for p, g in zip(ps, GRADS[0]):
            p.grad = lib.from_numpy(g.copy())
        total = lib.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
        results.append((float(total), [numpy_of(p.grad) for p in ps]))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-6)
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_clip_grad_norm_edge_cases():
    assert float(kiln.nn.utils.clip_grad_norm_([kiln.nn.Parameter(kiln.ones(2))], 1.0)) == 0.0
    p = kiln.nn.Parameter(kiln.ones(2))
    p.grad = kiln.tensor([float("nan"), 1.0])
    k, t = errors(lambda lib: lib.nn.utils.clip_grad_norm_([p] if lib is kiln else [
        (lambda q: (setattr(q, "grad", torch.tensor([float("nan"), 1.0])), q)[1])(torch.nn.Parameter(torch.ones(2)))],
        1.0, error_if_nonfinite=True))
    assert k == t
    single = kiln.nn.Parameter(kiln.ones(3))
    single.grad = kiln.full([3], 4.0)
    kiln.nn.utils.clip_grad_norm_(single, 1.0)  # a lone tensor
    assert float(single.grad.norm()) == pytest.approx(1.0, rel=1e-5)


def test_clip_grad_value_matches_torch():
    out = []
    for lib in (kiln, torch):
        ps = params(lib)
        for p, g in zip(ps, GRADS[1]):
            p.grad = lib.from_numpy(g.copy())
        lib.nn.utils.clip_grad_value_(ps, 0.4)
        out.append([numpy_of(p.grad) for p in ps])
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("direction", ["kiln_to_torch", "torch_to_kiln"])
def test_checkpoint_files_cross_between_libraries(direction):
    # An optimizer checkpoint written by one library (kiln.save_pickle / torch.save) resumes in the other.
    import io
    src, dst = (kiln, torch) if direction == "kiln_to_torch" else (torch, kiln)
    src_params, src_opt = run(src, "Adam", dict(lr=0.01, amsgrad=True), GRADS[:10])
    buf = io.BytesIO()
    (kiln.save_pickle if src is kiln else torch.save)(src_opt.state_dict(), buf)
    buf.seek(0)
    state = (torch.load if dst is torch else kiln.load_pickle)(buf)
    dst_params = [dst.nn.Parameter(dst.from_numpy(numpy_of(p).copy())) for p in src_params]
    dst_opt = dst.optim.Adam(dst_params, lr=0.5)
    dst_opt.load_state_dict(state)
    for lib, ps, opt in ((src, src_params, src_opt), (dst, dst_params, dst_opt)):
        for g in GRADS[10:20]:
            for p, gg in zip(ps, g):
                p.grad = lib.from_numpy(gg.copy())
            opt.step()
    for a, b in zip(src_params, dst_params):
        np.testing.assert_array_equal(numpy_of(a), numpy_of(b))
