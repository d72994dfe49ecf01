"""Forward hooks and pre-hooks on kiln.nn modules, against torch 1.13's."""
import numpy as np
import pytest
import torch

import kiln


def build(lib):
    lib.manual_seed(0) if lib is torch else None
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    return model


def same_weights(k_model, t_model):
    for (_, kp), (_, tp) in zip(k_model.named_parameters(), t_model.named_parameters()):
        tp.data = torch.tensor(kp.detach().numpy())


def run_both(install, x=None):
    """Installs the same hooks (install(lib, model, log) -> handles) on a kiln and a torch
    model with the same weights; returns both outputs and both logs."""
    k_model, t_model = build(kiln), build(torch)
    same_weights(k_model, t_model)
    x = np.random.RandomState(0).randn(5, 3).astype(np.float32) if x is None else x
    k_log, t_log = [], []
    k_handles = install(kiln, k_model, k_log)
    t_handles = install(torch, t_model, t_log)
    k_out = k_model(kiln.from_numpy(x.copy()))
    t_out = t_model(torch.from_numpy(x.copy()))
    return (k_out, k_log, k_handles, k_model), (t_out, t_log, t_handles, t_model)


def test_hooks_see_and_replace_inputs_and_outputs():
    def install(lib, model, log):
        def pre(module, args):
            log.append(("pre", type(module).__name__, len(args)))
            return args[0] * 2  # a non-tuple result is the one argument

        def post(module, args, output):
            log.append(("post", type(module).__name__, tuple(args[0].shape), tuple(output.shape)))
            return output + 1

        def observe(module, args, output):
            log.append(("observe", type(module).__name__))  # None: the output stays

        return [model[0].register_forward_pre_hook(pre), model[0].register_forward_hook(post),
                model[2].register_forward_hook(observe), model.register_forward_hook(post)]

    (k_out, k_log, _, _), (t_out, t_log, _, _) = run_both(install)
    np.testing.assert_allclose(k_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert k_log == t_log


def test_pre_hook_tuple_result_and_order_of_registration():
    def install(lib, model, log):
        first = model[1].register_forward_pre_hook(lambda m, args: log.append("first"))
        second = model[1].register_forward_pre_hook(lambda m, args: (args[0] - 0.5,))
        third = model[1].register_forward_hook(lambda m, args, out: log.append("third"))
        return [first, second, third]

    (k_out, k_log, _, _), (t_out, t_log, _, _) = run_both(install)
    np.testing.assert_allclose(k_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert k_log == t_log == ["first", "third"]


def test_handles_remove_hooks_and_work_as_context_managers():
    k_model = build(kiln)
    x = kiln.ones(1, 3)
    plain = k_model(x).detach().numpy()
    handle = k_model.register_forward_hook(lambda m, args, out: out * 0)
    assert np.all(k_model(x).detach().numpy() == 0)
    handle.remove()
    handle.remove()  # removing twice is harmless, as torch's
    np.testing.assert_array_equal(k_model(x).detach().numpy(), plain)
    with k_model.register_forward_pre_hook(lambda m, args: (args[0] * 0,)):
        zero_input = k_model(x).detach().numpy()
    np.testing.assert_array_equal(k_model(x).detach().numpy(), plain)
    assert not np.array_equal(zero_input, plain)
    ids = [k_model.register_forward_hook(lambda *a: None).id for _ in range(2)]
    assert ids[0] != ids[1]


def test_gradients_flow_through_hooks():
    def install(lib, model, log):
        return [model[0].register_forward_hook(lambda m, args, out: out * 3)]

    (k_out, _, _, k_model), (t_out, _, _, t_model) = run_both(install)
    k_out.sum().backward()
    t_out.sum().backward()
    np.testing.assert_allclose(k_model[0].weight.grad.numpy(), t_model[0].weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_trace_records_the_hooks():
    k_model, t_model = build(kiln), build(torch)
    same_weights(k_model, t_model)
    for model in (k_model, t_model):
        model[0].register_forward_hook(lambda m, args, out: out * 2)
        model.register_forward_pre_hook(lambda m, args: (args[0] + 1,))
    x = np.random.RandomState(1).randn(2, 3).astype(np.float32)
    k_traced = kiln.trace(k_model, kiln.from_numpy(x.copy()))
    t_traced = torch.jit.trace(t_model, torch.from_numpy(x.copy()))
    y = np.random.RandomState(2).randn(2, 3).astype(np.float32)
    np.testing.assert_allclose(k_traced(kiln.from_numpy(y.copy())).detach().numpy(),
                               t_traced(torch.from_numpy(y.copy())).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_script_refuses_hooks_and_script_modules_refuse_registration():
    model = build(kiln)
    model[2].register_forward_hook(lambda m, args, out: out)
    with pytest.raises(RuntimeError, match="submodule '2'.*forward hooks"):
        kiln.script(model)
    scripted = kiln.script(build(kiln))
    with pytest.raises(RuntimeError, match="register_forward_hook is not supported on ScriptModules"):
        scripted.register_forward_hook(lambda m, args, out: out)
    with pytest.raises(RuntimeError, match="register_forward_pre_hook is not supported on ScriptModules"):
        scripted.register_forward_pre_hook(lambda m, args: None)


def backward_hook_log(lib, log):
    def hook(module, grad_input, grad_output):
        log.append(([None if g is None else tuple(g.shape) for g in grad_input],
                    [None if g is None else tuple(g.shape) for g in grad_output]))
        return (grad_input[0] * 2,) + tuple(grad_input[1:]) if grad_input[0] is not None else None
    return hook


def test_full_backward_hook_sees_and_replaces_grad_input():
    def install(lib, model, log):
        return [model[2].register_full_backward_hook(backward_hook_log(lib, log))]

    (k_out, k_log, _, k_model), (t_out, t_log, _, t_model) = run_both(install)
    assert k_out.grad_fn.name() == "BackwardHookFunctionBackward"
    k_out.sum().backward()
    t_out.sum().backward()
    assert k_log == t_log == [([(5, 4)], [(5, 2)])]
    for (name, kp), (_, tp) in zip(k_model.named_parameters(), t_model.named_parameters()):
        np.testing.assert_allclose(kp.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_full_backward_hook_without_input_grad_and_with_several_arguments():
    def two(lib):
        class Two(lib.nn.Module):
            def forward(self, a, n: int, b):
                return a * b * n, a + b
        return Two()

    logs = []
    for lib in (kiln, torch):
        log = []
        lin = lib.nn.Linear(3, 2)
        lin.register_full_backward_hook(backward_hook_log(lib, log))
        lin(lib.ones(4, 3)).sum().backward()  # the input needs no gradient: grad_input is (None,)
        module = two(lib)
        module.register_full_backward_hook(lambda m, gi, go: log.append((len(gi), [g is None for g in gi],
                                                                         [g is None for g in go])))
        a = lib.ones(2)
        a.requires_grad_()
        p, s = module(a, 3, lib.ones(2))
        p.sum().backward()
        logs.append(log)
    assert logs[0] == logs[1]


def test_backward_hook_returning_wrong_count_raises_and_scripting_drops_it():
    lin = kiln.nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    x = kiln.ones(1, 3)
    x.requires_grad_()
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of grad_input, got 2, but "
                                           "expected 1"):
        lin(x).sum().backward()
    # As torch 1.13: the scripted module has no backward hooks.
    scripted = kiln.script(lin)
    scripted(x).sum().backward()
    with pytest.raises(RuntimeError, match="register_full_backward_hook is not supported on ScriptModules"):
        scripted.register_full_backward_hook(lambda m, gi, go: None)
