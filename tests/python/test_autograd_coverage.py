"""Every operator autograd records has a derivative, or is known not to need
one, or is on the known-missing list.

The operators are those of kiln._C._recorded_ops(): each registered operator
that takes a tensor (Tensor, Tensor?, Tensor[]) and returns one, is not a
factory, and has no out= argument. Each must be one of:
  - with a derivative (a `.derivative(...)` formula in its declaration, or its
    alias's, or for `name_` that of `name`);
  - in NON_DIFFERENTIABLE below, with torch's reason (bool or integer
    results, integer-only inputs, no derivative in torch 1.13 either);
  - in COMPOSITE below: recorded as the operators it is made of;
  - listed in tests/python/autograd_missing.txt, the known-missing list.
The test fails when an operator is none of these, and also when one listed
as missing now has a derivative (or no longer exists): the list only
shrinks. After adding derivatives, regenerate the list with one command:

    PYTHONPATH=python /usr/bin/python3 tests/python/test_autograd_coverage.py --regenerate

An operator torch 1.13 cannot differentiate either is declared so in its
declaration (`.notDifferentiable("why")`, kiln._C._not_differentiable_ops()):
backward through it raises torch's error. Each such aten operator is checked
against torch here (TORCH_RAISES: torch raises too); kiln's own operators
(kiln::) have no torch counterpart. The missing list is empty: every other
recorded operator has a derivative.
"""
import os
import re
import sys

import numpy as np
import pytest
import torch

import kiln

MISSING_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "autograd_missing.txt")

# (pattern matched against the whole "ns::name.overload", torch's reason)
NON_DIFFERENTIABLE = [
    (r"aten::(eq|ne|lt|le|gt|ge|not_equal|less|less_equal|greater|greater_equal)\.(Tensor|Scalar)",
     "comparison: bool result"),
    (r"aten::logical_(and|or|xor|not)_?", "logical op: bool result (torch records nothing for the in-place forms)"),
    (r"aten::(bitwise_\w+|__i?(and|or|xor|lshift|rshift)__)(\.\w+)?", "bitwise op: integer and bool tensors only"),
    (r"aten::(isnan|isinf|isfinite|isposinf|isneginf)", "bool result"),
    (r"aten::(argmax|argmin|argsort|argsort\.stable|nonzero|nonzero_numpy)", "integer result"),
    (r"aten::(all|any)(\.dim)?", "bool result"),
    (r"aten::where", "where(condition): integer index tensors"),
    (r"aten::where\.Scalar", "only tensor input is the bool condition"),
    (r"aten::gcd_?", "integer tensors only"),
    (r"aten::floor_divide(\.Scalar|_\.Scalar|_\.Tensor)?", "torch 1.13 has no derivative (raises as torch)"),
    (r"aten::remainder\.Scalar_Tensor", "torch 1.13 has no derivative (raises as torch)"),
    (r"aten::(heaviside|nextafter)_?", "torch 1.13 has no derivative (raises as torch)"),
    (r"aten::(isclose|isreal|signbit)", "bool result"),
    (r"aten::isin\.(Scalar_Tensor|Tensor_Scalar|Tensor_Tensor)", "bool result"),
    (r"aten::count_nonzero(\.dim_IntList)?", "integer result"),
    (r"aten::(searchsorted|bucketize)\.(Tensor|Scalar)", "integer result"),
    (r"aten::argwhere", "integer result"),
    (r"aten::(repeat_interleave\.Tensor|one_hot)", "integer tensors only"),
    (r"prim::grad", "reads .grad: not recorded in torch"),
    (r"aten::requires_grad_", "sets the flag (TorchScript's x.requires_grad_()): not recorded in torch"),
]


# Operators torch 1.13 composes from others: when an input requires grad,
# kiln's kernel runs the same decomposition through runOperator
# (kiln/ops/composite.h), so autograd records the inner operators and no
# formula of their own is needed. tests/python/test_autograd_nn_ops.py
# checks their gradients against torch's.
COMPOSITE = [
    r"aten::(lstm|gru|rnn_tanh|rnn_relu)\.(input|data)",
    r"aten::(lstm|gru|rnn_tanh|rnn_relu)_cell",
    r"aten::_scaled_dot_product_attention(_math)?",
    r"aten::conv[123]d\.padding", r"aten::_convolution_mode",
    r"aten::pad", r"aten::_pad_enum", r"aten::_pad_circular", r"aten::pad_sequence",
    r"aten::tensordot",
    r"aten::(broadcast_to|fliplr|flipud|tile|hstack|vstack|dstack|row_stack|column_stack)",
    r"aten::atleast_[123]d(\.Sequence)?",
    r"aten::(cosine_similarity|pairwise_distance|bilinear|rrelu_?|multilabel_margin_loss)",
    r"aten::(margin_ranking|hinge_embedding|cosine_embedding|poisson_nll|triplet_margin)_loss",
    r"aten::ctc_loss\.(IntList|Tensor)",
    # torch.linalg over its primitives (kiln/ops/linalg_more_ops.cpp).
    r"aten::linalg_(inv|det|slogdet|solve|solve_ex|lu_factor|cholesky|svd|svdvals|eigh|eigvalsh|matrix_power)",
    r"aten::(inverse|det|slogdet|logdet|lu_solve|qr|svd|pinverse|matrix_power|orgqr|symeig|_lu_with_info)",
    r"aten::(matrix_exp_backward|linalg_vander|linalg_ldl_factor)",
    r"aten::linalg_householder_product",
    r"aten::linalg_(matrix_norm|norm|cond)(\.str_ord|\.ord_str|\.p_str)?",
    r"aten::(frobenius_norm|nuclear_norm)(\.dim)?", r"aten::norm_except_dim",
    r"aten::linalg_(tensorinv|tensorsolve|vecdot|diagonal|matmul)",
    r"aten::repeat_interleave\.self_(Tensor|int)", r"aten::[hvd]split\.(int|array)",
    r"aten::(rot90|diag|diagflat|take_along_dim|cartesian_prod|combinations|block_diag|kron|inner|cross)",
    r"aten::(linalg_cross|einsum|einsum\.sublist|chain_matmul|linalg_multi_dot|vander|linalg_vander)",
    r"aten::meshgrid(\.indexing)?", r"aten::(trapezoid|trapz|cumulative_trapezoid)\.(x|dx)",
    r"aten::(alias|as_strided|detach|diagonal|expand|permute|select|slice|split|split_with_sizes|squeeze|t|transpose"
    r"|unbind|unfold|unsqueeze|view)_copy(\.\w+)?",
    r"aten::(select|slice|diagonal|index_select|gather|masked_select|trace)_backward",
    r"aten::(addr_?|addbmm_?|concatenate|linalg_matmul|linalg_diagonal|linalg_vecdot|sum_to_size|_stack)",
    r"aten::(_reshape_alias|_unsafe_view|view_as_real_copy|view_as_complex_copy|_reshape_alias_copy)",
]


def _non_differentiable(name):
    return any(re.fullmatch(pattern, name) for pattern, _ in NON_DIFFERENTIABLE + [(p, "") for p in COMPOSITE])


def missing_now():
    """The recorded operators that have no derivative and are not known non-differentiable."""
    ops = kiln._C._recorded_ops()
    declared = kiln._C._not_differentiable_ops()
    return sorted(name for name, has in ops.items()
                  if not has and not _non_differentiable(name) and name not in declared)


def listed():
    with open(MISSING_FILE) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def test_every_recorded_operator_is_covered():
    unlisted = sorted(set(missing_now()) - set(listed()))
    assert not unlisted, ("operators without a derivative, neither non-differentiable nor listed in "
                          "autograd_missing.txt: " + " ".join(unlisted))


def test_missing_list_only_shrinks():
    ops = kiln._C._recorded_ops()
    stale = sorted(name for name in listed() if ops.get(name, True))
    assert not stale, ("listed in autograd_missing.txt but now with a derivative (or gone): " + " ".join(stale) +
                       "; regenerate the list (see this file's docstring)")


def test_non_differentiable_patterns_are_used():
    names = kiln._C._recorded_ops()
    for pattern, reason in NON_DIFFERENTIABLE + [(p, "composite") for p in COMPOSITE]:
        assert any(re.fullmatch(pattern, n) for n in names), (pattern, reason)


def test_nothing_is_missing():
    assert missing_now() == [] and listed() == []


def _aten(lib, name):
    return getattr(torch.ops.aten, name) if lib is torch else kiln._functions.op(name)


def _leaf(lib, shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return lib.from_numpy(a).requires_grad_(True)


def _mha(lib):
    x, w, b, pw, pb = (_leaf(lib, s, i) for i, s in enumerate([(2, 3, 4), (12, 4), (12,), (4, 4), (4,)]))
    return _aten(lib, "_native_multi_head_attention")(x, x, x, 4, 2, w, b, pw, pb)[0]


def _encoder(lib):
    x = _leaf(lib, (2, 3, 4))
    p = [_leaf(lib, s, i) for i, s in enumerate([(12, 4), (12,), (4, 4), (4,), (4,), (4,), (4,), (4,),
                                                  (8, 4), (8,), (4, 8), (4,)])]
    return _aten(lib, "_transformer_encoder_layer_fwd")(x, 4, 2, *p[:4], False, False, 1e-5, *p[4:], None)


def _transform_qkv(lib):
    return _aten(lib, "_transform_bias_rescale_qkv")(_leaf(lib, (2, 3, 12)), _leaf(lib, (12,), 1), 2)[0]


def _scatter(reduce, value, inplace):
    def run(lib):
        x = _leaf(lib, (3, 4)) * 1
        index = lib.from_numpy(np.array([[0, 1], [1, 2], [2, 3]]))
        src = 2.0 if value else _leaf(lib, (3, 2), 1)
        return (x.scatter_ if inplace else x.scatter)(1, index, src, reduce=reduce)
    return run


def _bag_second(which):
    """The first gradient of embedding_bag (with create_graph), differentiated again."""
    def run(lib):
        w, psw = _leaf(lib, (6, 3)), _leaf(lib, (4,), 1)
        out = lib.nn.functional.embedding_bag(lib.from_numpy(np.array([1, 2, 3, 4])), w,
                                              lib.from_numpy(np.array([0, 2])), mode="sum", per_sample_weights=psw)
        gw, gp = lib.autograd.grad([out], [w, psw], [_leaf(lib, (2, 3), 2)], create_graph=True)
        return gw if which == 0 else gp
    return run


def _double_backward(loss):
    """A program whose second backward reaches the backward kernel of `loss`."""
    def run(lib):
        x = _leaf(lib, (3, 4))
        g, = lib.autograd.grad([loss(lib, x)], [x], create_graph=True)
        return g
    return run


def _ctc(lengths_as_tensors):
    def loss(lib, x):
        lengths = ([5, 5, 5], [2, 2, 1])
        if lengths_as_tensors:
            lengths = tuple(lib.from_numpy(np.array(v)) for v in lengths)
        targets = lib.from_numpy(np.array([[1, 2], [3, 1], [2, 2]]))
        return _aten(lib, "_ctc_loss")(x.reshape(1, 3, 4).expand(5, 3, 4).log_softmax(2), targets, *lengths)[0].sum()
    return loss


def _unique(name, *args):
    return lambda lib: _aten(lib, name)(_leaf(lib, (3, 1)), *args)[0]


# aten operators declared not differentiable: a program whose backward
# reaches the operator; torch 1.13 raises there too.
def _geqrf_a(lib):
    return _aten(lib, "geqrf")(_leaf(lib, (3, 2)))[0]


def _ormqr(lib):
    a, tau = _aten(lib, "geqrf")(lib.from_numpy(np.random.default_rng(0).standard_normal((3, 2))))
    return _aten(lib, "ormqr")(a, tau, _leaf(lib, (3, 2), 1))


def _ldl_solve(lib):
    ld, pivots = _aten(lib, "linalg_ldl_factor")(lib.from_numpy(np.eye(3) * 2))
    return _aten(lib, "linalg_ldl_solve")(ld, pivots, _leaf(lib, (3, 2)))


TORCH_RAISES = {
    "aten::bincount": lambda lib: lib.bincount(lib.from_numpy(np.array([0, 1, 1])), _leaf(lib, (3,))),
    "aten::unique_consecutive": _unique("unique_consecutive"),
    "aten::unique_dim": _unique("unique_dim", 0),
    "aten::unique_dim_consecutive": _unique("unique_dim_consecutive", 0),
    "aten::multi_margin_loss_backward": _double_backward(
        lambda lib, x: lib.nn.functional.multi_margin_loss(x, lib.from_numpy(np.array([0, 2, 3])), p=2)),
    "aten::multilabel_margin_loss_backward": _double_backward(
        lambda lib, x: lib.nn.functional.multilabel_margin_loss(x, lib.from_numpy(np.array([[0, -1, 0, 0]] * 3)))),
    "aten::_ctc_loss_backward": _double_backward(_ctc(False)),
    "aten::_ctc_loss_backward.Tensor": _double_backward(_ctc(True)),
    "aten::geqrf": _geqrf_a,
    "aten::linalg_ldl_factor_ex": lambda lib: _aten(lib, "linalg_ldl_factor_ex")(_leaf(lib, (3, 3)))[0],
    "aten::linalg_ldl_solve": _ldl_solve,
    "aten::_cholesky_solve_helper": lambda lib: _aten(lib, "_cholesky_solve_helper")(
        _leaf(lib, (3, 2)), lib.from_numpy(np.eye(3)), False),
    "aten::ormqr": _ormqr,
    "aten::_native_multi_head_attention": _mha,
    "aten::_transformer_encoder_layer_fwd": _encoder,
    "aten::_transform_bias_rescale_qkv": _transform_qkv,
    "aten::narrow_copy": lambda lib: _aten(lib, "narrow_copy")(_leaf(lib, (3, 4)), 1, 1, 2),
    "aten::embedding_renorm_": lambda lib: _aten(lib, "embedding_renorm_")(
        _leaf(lib, (5, 3)) * 1, lib.from_numpy(np.array([1, 2])), 1.0, 2.0),
    "aten::embedding_renorm": lambda lib: _aten(lib, "embedding_renorm")(
        _leaf(lib, (5, 3)), lib.from_numpy(np.array([1, 2])), 1.0, 2.0),
    "aten::scatter.reduce": _scatter("add", False, False),
    "aten::scatter.value_reduce": _scatter("multiply", True, False),
    "aten::scatter_.reduce": _scatter("multiply", False, True),
    "aten::scatter_.value_reduce": _scatter("add", True, True),
    "aten::_embedding_bag_backward": _bag_second(0),
    "aten::_embedding_bag_per_sample_weights_backward": _bag_second(1),
    "aten::_embedding_bag_forward_only": lambda lib: _aten(lib, "_embedding_bag_forward_only")(
        _leaf(lib, (6, 3)), lib.from_numpy(np.array([1, 2, 3])), lib.from_numpy(np.array([0, 2])))[0],
    "aten::aminmax": lambda lib: lib.aminmax(_leaf(lib, (3, 4)), dim=1)[0],
    "aten::_aminmax": lambda lib: _aten(lib, "_aminmax")(_leaf(lib, (3, 4)))[1],
    "aten::_aminmax.dim": lambda lib: _aten(lib, "_aminmax")(_leaf(lib, (3, 4)), 1)[0],
    "aten::_logcumsumexp": lambda lib: _aten(lib, "_logcumsumexp")(_leaf(lib, (3, 4)), 1),
    "aten::_cdist_backward": lambda lib: _aten(lib, "_cdist_backward")(
        _leaf(lib, (3, 5)), _leaf(lib, (3, 4), 1), _leaf(lib, (5, 4), 2), 2.0, _leaf(lib, (3, 5), 3)),
    "aten::_pdist_backward": lambda lib: _aten(lib, "_pdist_backward")(
        _leaf(lib, (6,)), _leaf(lib, (4, 3), 1), 2.0, _leaf(lib, (6,), 2)),
}


def test_every_not_differentiable_op_is_checked_against_torch():
    declared = kiln._C._not_differentiable_ops()
    for name, why in declared.items():
        assert why, name
        assert name in TORCH_RAISES or name.startswith("kiln::"), (name, why)
    assert set(TORCH_RAISES) <= set(declared)


def _raises_on_backward(lib, program):
    with pytest.raises((RuntimeError, NotImplementedError)) as info:
        out = program(lib)
        out.sum().backward()
    return str(info.value)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(TORCH_RAISES))
def test_not_differentiable_raises_as_torch(name):
    torch_message = _raises_on_backward(torch, TORCH_RAISES[name])
    kiln_message = _raises_on_backward(kiln, TORCH_RAISES[name])
    assert "not implemented" in kiln_message, kiln_message
    if "INTERNAL ASSERT" not in torch_message:  # _embedding_bag_forward_only: torch fails before backward
        assert "not implemented" in torch_message, torch_message


def test_op_has_derivative():
    assert kiln._C._op_has_derivative("aten::mul.Tensor")
    assert kiln._C._op_has_derivative("aten::mul_.Tensor")  # the formulas of mul.Tensor
    assert kiln._C._op_has_derivative("aten::pow.Scalar")
    assert not kiln._C._op_has_derivative("aten::floor_divide")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: tests/python/test_autograd_coverage.py --regenerate")
    names = missing_now()
    with open(MISSING_FILE, "w") as f:
        f.write("# Recorded operators that have no derivative yet (tests/python/test_autograd_coverage.py).\n"
                "# Generated: PYTHONPATH=python /usr/bin/python3 tests/python/test_autograd_coverage.py --regenerate\n")
        for name in names:
            f.write(name + "\n")
    print(f"{len(names)} operators without a derivative written to {MISSING_FILE}")
