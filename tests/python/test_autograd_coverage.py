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
"""
import os
import re
import sys

import kiln

MISSING_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "autograd_missing.txt")

# (pattern matched against the whole "ns::name.overload", torch's reason)
NON_DIFFERENTIABLE = [
    (r"aten::(eq|ne|lt|le|gt|ge|not_equal|less|less_equal|greater|greater_equal)\.(Tensor|Scalar)",
     "comparison: bool result"),
    (r"aten::logical_(and|or|xor|not)_?", "logical op: bool result (torch records nothing for the in-place forms)"),
    (r"aten::(bitwise_\w+|__i?(and|or|xor|lshift|rshift)__)(\.\w+)?", "bitwise op: integer and bool tensors only"),
    (r"aten::(isnan|isinf|isfinite|isposinf|isneginf)", "bool result"),
    (r"aten::(argmax|argmin|argsort|argsort\.stable|nonzero)", "integer result"),
    (r"aten::(all|any)(\.dim)?", "bool result"),
    (r"aten::where", "where(condition): integer index tensors"),
    (r"aten::where\.Scalar", "only tensor input is the bool condition"),
    (r"aten::gcd_?", "integer tensors only"),
    (r"aten::floor_divide(\.Scalar|_\.Scalar|_\.Tensor)?", "torch 1.13 has no derivative (raises as torch)"),
    (r"aten::remainder\.Scalar_Tensor", "torch 1.13 has no derivative (raises as torch)"),
    (r"prim::grad", "reads .grad: not recorded in torch"),
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
    r"aten::pad", r"aten::pad_sequence",
    r"aten::(broadcast_to|fliplr|flipud|tile|hstack|vstack|dstack|row_stack|column_stack)",
    r"aten::atleast_[123]d(\.Sequence)?",
]


def _non_differentiable(name):
    return any(re.fullmatch(pattern, name) for pattern, _ in NON_DIFFERENTIABLE + [(p, "") for p in COMPOSITE])


def missing_now():
    """The recorded operators that have no derivative and are not known non-differentiable."""
    ops = kiln._C._recorded_ops()
    return sorted(name for name, has in ops.items() if not has and not _non_differentiable(name))


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
