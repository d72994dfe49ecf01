"""Archives round trip both ways on every module program of the suite (issue
18): each module source (nn_programs.NET, test_script_module.EXTRAS,
test_script_module_methods.SOURCE, the sources of test_trace_module.py and
test_python_print.py, tied weights) is loaded with torch's names and with
kiln's, and for every module torch can script:

- torch.jit.script -> torch.jit.save -> kiln.load gives what torch.jit.load
  of the same archive gives (results, state_dict, parameter, buffer and
  module names, attributes), in train and eval where forward reads
  self.training;
- kiln.script (torch's weights) -> kiln.save -> torch.jit.load gives kiln's
  results, and so does kiln.load of kiln's archive, which saves again to the
  same bytes;
- import_source_models.ZOO (torch-only sources): torch -> kiln -> torch;
- traced modules, both ways; `kiln run` on both archives of Net;
- torchvision's models (when installed) load with an error naming the
  convolution kiln lacks, and `kiln info` marks it.

Strict xfails name what kiln cannot do yet (missing operators) and the bugs
these tests found."""
import io
import os
import re
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest
import torch

import kiln
from conftest import convert
from nn_programs import NET, copy_weights, load
from test_cli_run import KILN
from test_load import same_results

import test_python_print
import test_script_module
import test_script_module_methods
import test_trace_module as traced_sources


def arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(s).astype(np.float32) for s in shapes)


X24, B4 = arrays((2, 4), (4,))
X32, = arrays((3, 2), seed=1)
X23, Y23 = arrays((2, 3), (2, 3), seed=2)
X34, Y34 = arrays((3, 4), (3, 4), seed=3)
X3, = arrays((3,), seed=4)


def with_attributes(module, **values):
    for name, value in values.items():
        setattr(module, name, value)
    return module


class Case:
    """One module of a source: how to make it (from the loaded source, torch's
    or kiln's), the calls to compare (tuples of arguments; numpy arrays become
    each side's tensors), methods besides forward (name, arguments), the
    attributes to read back, and whether forward depends on self.training."""

    def __init__(self, source, cls, calls, make=None, methods=(), attrs=(), modes=False, reason=None,
                 torch_reason=None, kiln_reason=None):
        self.source, self.cls, self.calls, self.methods = source, cls, calls, methods
        self.make = make or (lambda m: getattr(m, cls)())
        self.attrs, self.modes = attrs, modes
        self.reason = reason  # kiln cannot round-trip it: strict xfail
        self.torch_reason = torch_reason  # torch.jit.save cannot write it: it must raise this
        self.kiln_reason = kiln_reason or reason  # kiln cannot script and save it: strict xfail


EXTRAS = test_script_module.EXTRAS
METHODS = test_script_module_methods.SOURCE
TRACE = traced_sources.SOURCE
PRINT_MODULES = test_python_print.MODULES
PRINT_ARCHIVE = test_python_print.ARCHIVE
NESTED_PARENT = traced_sources.NESTED + traced_sources.SCRIPTED_PARENT

# Scaled.forward(self, x, scale: float = 1.0, other=None): `other` has no
# annotation, so it is a Tensor, and its default None.
# torch scripts the None as an undefined tensor, which torch.jit.save cannot write.
UNDEFINED_DEFAULT = "strides() called on an undefined Tensor"
NONE_DEFAULT = ("kiln.script refuses a None default on an unannotated (Tensor) parameter ('Expected a default "
                "value of type Tensor'), where torch accepts it as an undefined tensor its forward cannot use")

# Tied weights: a parameter of two submodules, a submodule under two names.
TIED = '''
class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(3, 3)
        self.dec = nn.Linear(3, 3)
        self.dec.weight = self.enc.weight
        shared = nn.Linear(3, 3)
        self.a = shared
        self.b = shared

    def forward(self, x):
        return self.dec(self.enc(x)) + self.a(x) + self.b(x)
'''

CASES = {
    "net.Net": Case(NET, "Net", [(X24,), (X24, B4)], attrs=("eps", "depth", "steps"), modes=True),
    "net.Block": Case(NET, "Block", [(X24,)], make=lambda m: m.Block(4, 0.5), attrs=("scale",)),
    "extras.Extras": Case(EXTRAS, "Extras", [(X32,), (X32,)], methods=[("bump", (3,))],
                          attrs=("steps", "sizes", "table", "pair", "maybe", "nothing")),
    "extras.Extras_set": Case(EXTRAS, "Extras", [(X32,)], attrs=("steps", "maybe"),
                              make=lambda m: with_attributes(m.Extras(), maybe=5, steps=7)),
    "extras.IgnoresObject": Case(EXTRAS, "IgnoresObject", [(X3,)], attrs=("n",)),
    "extras.HoldsObject": Case(EXTRAS, "HoldsObject", [(X3,)]),
    "extras.Router": Case(EXTRAS, "Router", [(X23,)], methods=[("count", ())]),
    # kiln saves the @ignore'd method as the stub that raises, which torch runs too.
    "extras.CallsIgnored": Case(EXTRAS, "CallsIgnored", [(X3, False), (X3, True)],
                                torch_reason="Could not export Python function call 'debug'"),
    "extras.UsesCounter": Case(EXTRAS, "UsesCounter", [(X3,), (X3,)], attrs=("counter.n",)),
    "extras.UsesJit": Case(EXTRAS, "UsesJit", [(X23,)]),
    "extras.Base": Case(EXTRAS, "Base", [(X23,)]),
    "extras.Derived": Case(EXTRAS, "Derived", [(X23,)]),
    "extras.Step": Case(EXTRAS, "Step", [(X23,)], make=lambda m: m.Step(2.0), attrs=("k",)),
    "extras.CallsHelpers": Case(EXTRAS, "CallsHelpers", [(X23,)]),
    "extras.Parent": Case(EXTRAS, "Parent", [(X32,)], make=lambda m: m.Parent(m.Extras())),
    "methods.Base": Case(METHODS, "Base", []),  # no forward, nothing compiled: a module with no methods
    "methods.Leaf": Case(METHODS, "Leaf", [(X23,)], make=lambda m: m.Leaf(1.5), attrs=("k",)),
    "methods.Net": Case(METHODS, "Net", [(X23,)], methods=[("combine", ([X23, Y23],))]),
    "trace.Leaf": Case(TRACE, "Leaf", [(X34,)], make=lambda m: m.Leaf(4)),
    "trace.Split": Case(TRACE, "Split", [(X34,)]),
    "trace.Scripted": Case(TRACE, "Scripted", [(X34,)], make=lambda m: m.Scripted(4)),
    "trace.Net": Case(TRACE, "Net", [(X34,), (-X34,)], methods=[("helper", (X34,))]),
    "trace.Branchy": Case(traced_sources.BRANCHY, "Branchy", [(np.abs(X23),), (-np.abs(X23),)]),
    "trace.Count": Case(traced_sources.BAD, "Count", [(X23,)]),
    "trace.Outer": Case(traced_sources.BAD, "Outer", [(X23,)]),
    "escaping.Counter": Case(traced_sources.ESCAPING, "Counter", [(X34,), (X34,)]),
    "escaping.Bias": Case(traced_sources.ESCAPING, "Bias", [()]),
    "escaping.Scaled": Case(traced_sources.ESCAPING, "Scaled", [(X34,), (X34, 2.0), (X34, 2.0, Y34)],
                            torch_reason=UNDEFINED_DEFAULT, kiln_reason=NONE_DEFAULT),
    "escaping.Deep": Case(traced_sources.ESCAPING, "Deep", [(X34, Y34)], torch_reason=UNDEFINED_DEFAULT,
                          kiln_reason=NONE_DEFAULT),
    "escaping.Top": Case(traced_sources.ESCAPING, "Top", [(X34, Y34), (X34, Y34)], torch_reason=UNDEFINED_DEFAULT,
                         kiln_reason=NONE_DEFAULT),
    "nested.Inner": Case(traced_sources.NESTED, "Inner", [(X23,)]),
    "nested.Outer": Case(traced_sources.NESTED, "Outer", [(X23,)], make=lambda m: m.Outer(m.Inner())),
    "nested.Parent": Case(NESTED_PARENT, "Parent", [(X23,)], make=lambda m: m.Parent(m.Inner())),
    "nested.Parent_of_traced": Case(NESTED_PARENT, "Parent", [(X23,)],
                                    make=lambda m: m.Parent(m.torch.jit.trace(m.Inner(), m.torch.ones(2, 3)))),
    "coder.Coder": Case(traced_sources.TWO_METHODS, "Coder", [(X34,)], methods=[("encode", (X34,))]),
    "shared.Cat": Case(traced_sources.SHARED, "Cat", [(X23,)]),
    "shared.Shared": Case(traced_sources.SHARED, "Shared", [(X23,)]),
    "shared.User": Case(traced_sources.SHARED, "User", [(X23,)], make=lambda m: m.User(m.Shared())),
    "print.Leaf": Case(PRINT_MODULES, "Leaf", [(X3,)], attrs=("maybe", "sizes", "table", "name")),
    "print.Root": Case(PRINT_MODULES, "Root", [(X3,), (X3, False)], attrs=("scale", "counter.n", "leaf.sizes")),
    "archive.Inner": Case(PRINT_ARCHIVE, "Inner", [(X3,)], make=lambda m: m.Inner(2), attrs=("k",)),
    "archive.Outer": Case(PRINT_ARCHIVE, "Outer", [(X3,), (X3,)], methods=[("other", (X3, 5)), ("other", (X3, 1))],
                          attrs=("names",)),
    "tied.Tied": Case(TIED, "Tied", [(X23,)]),
}

# Module classes of these sources torch cannot script (not round-tripped):
# test_script_module's UsesObject and ExportsBadMethod (an attribute of type
# object used in compiled code) and test_trace_module's SHARED Top
# (Cat.forward's unannotated xs is a Tensor, called with a list; traced
# below). Counter classes are script classes, held by UsesCounter and Root.


_programs = {}


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("archive_modules")

    def get(source, lib):
        key = (source, lib.__name__)
        if key not in _programs:
            _programs[key] = load(source, lib, folder, "archive_program")
        return _programs[key]
    return get


def pair(programs, case):
    """(kiln eager module, torch eager module) with torch's weights in both."""
    t = case.make(programs(case.source, torch))
    k = case.make(programs(case.source, kiln))
    copy_weights(k, t)
    return k, t


def to_bytes(save, module):
    buffer = io.BytesIO()
    save(module, buffer)
    return buffer.getvalue()


def _call(fn, args, lib):
    try:
        with torch.no_grad():
            return fn(*convert(list(args), lib)), None
    except Exception as e:  # noqa: BLE001 - compared by the caller
        return None, e


def same_calls(kilns, reference, case):
    """Every call and method of the case on each kiln module and on the torch
    reference, in order (some modules count their calls): equal results, or
    all raise."""
    for name, args in [("forward", a) for a in case.calls] + list(case.methods):
        t, t_error = _call(getattr(reference, name), args, "torch")
        for k_module in kilns:
            k, k_error = _call(getattr(k_module, name), args, "kiln")
            assert (k_error is None) == (t_error is None), f"{name}: torch raised {t_error!r}; kiln {k_error!r}"
            if t_error is None:
                same_results(named_tuples_as_tuples(k), named_tuples_as_tuples(t))


def named_tuples_as_tuples(value):
    """NamedTuples anywhere in a result as (name, fields, values) (torch
    returns its Python class, kiln one made from the TorchScript type)."""
    if hasattr(value, "_fields"):
        return (type(value).__name__, value._fields, tuple(named_tuples_as_tuples(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(named_tuples_as_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: named_tuples_as_tuples(v) for k, v in value.items()}
    return value


def same_state(k_module, t_module):
    t_state, k_state = t_module.state_dict(), k_module.state_dict()
    assert list(k_state) == list(t_state)
    for key, value in t_state.items():
        np.testing.assert_array_equal(k_state[key].numpy(), value.detach().numpy(), err_msg=key)


def attribute(module, name):
    value = module
    for part in name.split("."):  # counter.n: an attribute of a script object
        value = getattr(value, part)
    return (value.detach().numpy().tolist() if isinstance(value, torch.Tensor)
            else value.numpy().tolist() if isinstance(value, kiln.Tensor) else value)


def code_files(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n.split("/", 1)[1]: z.read(n) for n in z.namelist() if n.endswith(".py")}


def same_attributes(k_module, t_module, case, objects=True):
    """Equal names, submodules, training flags and case.attrs; objects=False
    leaves out dotted names (counter.n: attributes of script objects), which torch
    cannot hand to Python from an archive kiln wrote: no Python class is
    registered under kiln's class name ('classType INTERNAL ASSERT FAILED')."""
    assert k_module.original_name == t_module.original_name == case.cls
    for members in ("named_modules", "named_buffers", "named_parameters"):
        assert [n for n, _ in getattr(k_module, members)()] == [n for n, _ in getattr(t_module, members)()], members
    assert getattr(k_module, "training", None) == getattr(t_module, "training", None)  # frozen: none
    for name in case.attrs:
        if objects or "." not in name:
            assert attribute(k_module, name) == attribute(t_module, name), name


def case_params(cases, reasons=lambda case: case.reason):
    params = []
    for name, case in cases.items():
        marks = [pytest.mark.xfail(strict=True, reason=reasons(case), raises=kiln.Error)] if reasons(case) else []
        params.append(pytest.param(name, id=name, marks=marks))
    return params


def modes(case):
    """The training flags to test: both when modes is True, those listed when it is a tuple."""
    if case.modes is True:
        return (True, False)
    return tuple(case.modes) if case.modes else (True,)


@pytest.mark.parametrize("name", case_params(CASES))
def test_torch_scripted_module_loads_in_kiln(programs, name):
    case = CASES[name]
    _, t = pair(programs, case)
    scripted = torch.jit.script(t)
    for training in modes(case):
        scripted.train(training)
        if case.torch_reason:
            with pytest.raises(RuntimeError, match=re.escape(case.torch_reason)):
                to_bytes(torch.jit.save, scripted)
            return
        data = to_bytes(torch.jit.save, scripted)
        reference, loaded = torch.jit.load(io.BytesIO(data)), kiln.load(io.BytesIO(data))
        assert loaded.training == training
        same_attributes(loaded, reference, case)
        same_state(loaded, reference)
        same_calls([loaded], reference, case)
        same_attributes(loaded, reference, case)  # after the calls (some count them)


@pytest.mark.parametrize("name", case_params(CASES, lambda case: case.kiln_reason))
def test_kiln_scripted_module_loads_in_torch_and_kiln(programs, name):
    case = CASES[name]
    k, _ = pair(programs, case)
    scripted = kiln.script(k)
    for training in modes(case):
        scripted.train(training)
        data = to_bytes(kiln.save, scripted)
        in_torch, in_kiln = torch.jit.load(io.BytesIO(data)), kiln.load(io.BytesIO(data))
        assert in_torch.training == in_kiln.training == training
        same_attributes(scripted, in_torch, case, objects=False)
        same_attributes(in_kiln, in_torch, case, objects=False)
        same_attributes(in_kiln, scripted, case)
        same_state(in_kiln, in_torch)
        for key, value in scripted.state_dict().items():
            np.testing.assert_array_equal(in_torch.state_dict()[key].detach().numpy(), value.numpy(), err_msg=key)
        # Saving what kiln loaded writes the same bytes; torch saving what it
        # loaded writes the same code.
        assert to_bytes(kiln.save, in_kiln) == data
        assert code_files(to_bytes(torch.jit.save, in_torch)) == code_files(data)
        same_calls([scripted, in_kiln], in_torch, case)
        same_attributes(in_kiln, in_torch, case, objects=False)
        same_attributes(in_kiln, scripted, case)


def test_tied_weights_stay_tied_both_ways(programs):
    k, t = pair(programs, CASES["tied.Tied"])
    loaded = kiln.load(io.BytesIO(to_bytes(torch.jit.save, torch.jit.script(t))))
    assert loaded.enc.weight._storage_ptr() == loaded.dec.weight._storage_ptr()
    assert loaded.a.weight._storage_ptr() == loaded.b.weight._storage_ptr()
    loaded.enc.weight.numpy()[0, 0] = 42.0  # through the tie, and written so
    for module in (loaded, kiln.script(k)):
        in_torch = torch.jit.load(io.BytesIO(to_bytes(kiln.save, module)))
        assert in_torch.enc.weight.data_ptr() == in_torch.dec.weight.data_ptr()
        assert in_torch.a.weight.data_ptr() == in_torch.b.weight.data_ptr()
    assert in_torch.dec.weight[0, 0].item() != 42.0
    in_torch = torch.jit.load(io.BytesIO(to_bytes(kiln.save, loaded)))
    assert in_torch.dec.weight[0, 0].item() == 42.0


def test_loaded_tied_parameters_are_listed_once(programs):
    """Two attributes over one tensor hand out one Python object, so
    named_parameters() lists a tied parameter once, as torch's loaded
    module does (they were two objects, listed twice)."""
    _, t = pair(programs, CASES["tied.Tied"])
    loaded = kiln.load(io.BytesIO(to_bytes(torch.jit.save, torch.jit.script(t))))
    assert [n for n, _ in loaded.named_parameters()] == ["enc.weight", "enc.bias", "dec.bias", "a.weight", "a.bias"]


def test_keyword_arguments_and_schemas(programs):
    k, t = pair(programs, CASES["net.Net"])
    torch_data, kiln_data = to_bytes(torch.jit.save, torch.jit.script(t)), to_bytes(kiln.save, kiln.script(k))
    for data in (torch_data, kiln_data):
        loaded, in_torch = kiln.load(io.BytesIO(data)), torch.jit.load(io.BytesIO(data))
        assert loaded.forward.schema == str(in_torch.forward.schema)
        with torch.no_grad():
            expected = in_torch(torch.from_numpy(X24), bias=torch.from_numpy(B4))
        same_results(loaded(kiln.from_numpy(X24), bias=kiln.from_numpy(B4)), expected)
        with pytest.raises(kiln.Error, match="expected at most 3 arguments but received 4"):
            loaded(kiln.from_numpy(X24), kiln.from_numpy(B4), 3)


def test_requires_grad_of_torch_parameters_round_trips():
    linear = torch.nn.Linear(2, 2)
    linear.bias.requires_grad_(False)
    loaded = kiln.load(io.BytesIO(to_bytes(torch.jit.save, torch.jit.script(linear))))
    in_torch = torch.jit.load(io.BytesIO(to_bytes(kiln.save, loaded)))
    assert in_torch.weight.requires_grad and not in_torch.bias.requires_grad


def test_requires_grad_of_kiln_parameters_is_saved():
    in_torch = torch.jit.load(io.BytesIO(to_bytes(kiln.save, kiln.script(kiln.nn.Linear(2, 2)))))
    assert in_torch.weight.requires_grad  # as torch.jit.save of torch.nn.Linear writes it


SAVE_OVER = {
    "archive": ("torch.jit.save(torch.jit.script(torch.nn.Linear(64, 64)), path)\n"
                "kiln.save(kiln.load(path), path)\n"
                "print(tuple(torch.jit.load(path).weight.shape))\n"),
    "pickle": ("torch.save(torch.nn.Linear(64, 64).state_dict(), path)\n"
               "kiln.save_pickle(kiln.load_pickle(path), path)\n"
               "print(tuple(torch.load(path)['weight'].shape))\n"),
}


@pytest.mark.parametrize("kind", list(SAVE_OVER))
def test_saving_over_the_file_loaded_from(tmp_path, kind):
    """Load a file and save back to its path: the tensors are mapped from
    that file, so it must be written beside and renamed over (it was
    truncated in place, SIGBUS). In a child process, so a crash is a failure
    and not the end of the test run."""
    program = ("import sys, torch\nsys.path.insert(0, sys.argv[1])\nimport kiln\npath = sys.argv[2]\n"
               + SAVE_OVER[kind])
    python_dir = os.path.dirname(os.path.dirname(kiln.__file__))
    done = subprocess.run([sys.executable, "-c", program, python_dir, str(tmp_path / "m.pt")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.strip() == "(64, 64)"


# --- import_source_models.ZOO: torch-only sources (they import torch themselves) ----------------

X4, = arrays((4,), seed=9)
X2, = arrays((2,), seed=10)
LACKS = "kiln lacks aten::{} (its next issues): kiln.load raises naming it"



def scripted(cls):
    return lambda zoo: torch.jit.script(getattr(zoo, cls)())


ZOO_CASES = {
    "Attributes": Case(None, "Attributes", [(X4,), (X4,)], make=scripted("Attributes"),
                       attrs=("i", "f", "s", "b", "li", "lf", "d", "di", "t", "opt", "names", "counter", "p.x",
                              "p.y", "node.value", "node.next.x")),
    # n >= 2 loops forever there (its `continue` skips `i += 1`), in torch as in kiln.
    "ControlFlow": Case(None, "ControlFlow", [(X3, 0, True), (X3, 1, True), (X3, 1, False)],
                        make=scripted("ControlFlow"), attrs=("depth",)),
    "TupleReturns": Case(None, "TupleReturns", [(X23,)], make=scripted("TupleReturns"), methods=[("both", (X23,))]),
    "Exported": Case(None, "Exported", [(X23,)], make=scripted("Exported"), attrs=("scale",),
                     methods=[("other", (3,)), ("strings", ("s", ["a", "bs", ""]))]),
    "State": Case(None, "State", [(X2,)], make=scripted("State"), attrs=("x", "w"), modes=True),
    "Nested": Case(None, "Nested", [(X3,)], make=scripted("Nested")),
    "Leaf_frozen": Case(None, "Leaf", [(X3,)], make=lambda zoo: torch.jit.freeze(torch.jit.script(zoo.Leaf(3).eval()))),
    # In eval mode only: dropout in training mode draws from each side's own generator.
    "Layers": Case(None, "Layers", [(np.ones((1, 3, 4, 4), np.float32), np.array([1, 2]))], make=scripted("Layers"),
                   modes=(False,)),
    "Recurrent": Case(None, "Recurrent", [(np.ones((2, 3, 4), np.float32),)], make=scripted("Recurrent")),
    "Attention": Case(None, "Attention", [(np.ones((5, 2, 8), np.float32),)], make=scripted("Attention")),
}


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    import import_source_models
    return import_source_models._load(import_source_models.ZOO, tmp_path_factory.mktemp("zoo"), "archive_zoo")


@pytest.mark.parametrize("name", case_params(ZOO_CASES))
def test_zoo_module_round_trips_torch_kiln_torch(zoo, name):
    """torch.jit.save -> kiln.load gives torch.jit.load's results; kiln.save
    of what kiln loaded -> torch.jit.load (and kiln.load) gives them too."""
    case = ZOO_CASES[name]
    torch.manual_seed(0)
    module = case.make(zoo)
    for training in modes(case):
        module.train(training)
        data = to_bytes(torch.jit.save, module)
        reference, loaded = torch.jit.load(io.BytesIO(data)), kiln.load(io.BytesIO(data))
        same_attributes(loaded, reference, case)
        same_state(loaded, reference)
        again = to_bytes(kiln.save, loaded)
        in_torch, in_kiln = torch.jit.load(io.BytesIO(again)), kiln.load(io.BytesIO(again))
        if hasattr(reference, "training"):  # a frozen module has none
            assert in_torch.training == in_kiln.training == loaded.training == training
        same_attributes(in_kiln, in_torch, case)
        same_state(in_kiln, reference)
        same_state(loaded, in_torch)
        same_calls([loaded], reference, case)
        same_calls([in_kiln], in_torch, case)
        same_attributes(loaded, reference, case)
        same_attributes(in_kiln, in_torch, case)


# --- traced modules ----------------------------------------------------------------------------

class Traced:
    """A module traced on `example` (a tuple of arrays), compared on `calls`."""

    def __init__(self, source, make, example, calls, modes=(True,), reason=None, **trace_kwargs):
        self.source, self.make, self.example, self.calls = source, make, example, calls
        self.modes, self.reason, self.trace_kwargs = modes, reason, trace_kwargs


X34b, Y34b = arrays((3, 4), (3, 4), seed=7)
X23b, Y23b = arrays((2, 3), (2, 3), seed=8)

TRACED = {
    "trace.Net": Traced(TRACE, lambda m: m.Net(), (X34,), [(X34b,)]),
    "net.Net": Traced(NET, lambda m: m.Net(), (X24,), [(X24 * 2,)], modes=(True, False)),
    "coder.Coder": Traced(traced_sources.TWO_METHODS, lambda m: m.Coder(), (X34,), [(X34b,)]),
    "escaping.Top": Traced(traced_sources.ESCAPING, lambda m: m.Top(), (X34, Y34), [(X34b, Y34b), (X34b, Y34b)],
                           check_trace=False),
    "shared.Top": Traced(traced_sources.SHARED, lambda m: m.Top(), (X23, Y23), [(X23b, Y23b)], strict=False),
    "branchy.Branchy": Traced(traced_sources.BRANCHY, lambda m: m.Branchy(), (np.abs(X23),),
                              [(np.abs(X23b),), (-np.abs(X23b),)]),
    "print.Leaf": Traced(PRINT_MODULES, lambda m: m.Leaf(), (X3,), [(X3 * 3,)]),
}


def quiet(trace, module, example, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", kiln.TracerWarning)
        return trace(module, example, **kwargs)


def traced_pair(programs, case, training):
    t = case.make(programs(case.source, torch))
    k = case.make(programs(case.source, kiln))
    copy_weights(k, t)
    t.train(training)
    k.train(training)
    tt = quiet(torch.jit.trace, t, convert(case.example, "torch"), **case.trace_kwargs)
    kt = quiet(kiln.trace, k, convert(case.example, "kiln"), **case.trace_kwargs)
    return kt, tt


def traced_calls(kilns, reference, case):
    for args in case.calls:
        t, t_error = _call(reference, args, "torch")
        for k_module in kilns:
            k, k_error = _call(k_module, args, "kiln")
            assert (k_error is None) == (t_error is None), f"torch raised {t_error!r}; kiln {k_error!r}"
            if t_error is None:
                same_results(k, t)


@pytest.mark.parametrize("name", case_params(TRACED))
def test_torch_traced_module_loads_in_kiln(programs, name):
    case = TRACED[name]
    for training in case.modes:
        _, tt = traced_pair(programs, case, training)
        data = to_bytes(torch.jit.save, tt)
        reference, loaded = torch.jit.load(io.BytesIO(data)), kiln.load(io.BytesIO(data))
        assert loaded.training == training
        assert [n for n, _ in loaded.named_modules()] == [n for n, _ in reference.named_modules()]
        same_state(loaded, reference)
        traced_calls([loaded], reference, case)


@pytest.mark.parametrize("name", case_params(TRACED))
def test_kiln_traced_module_loads_in_torch_and_kiln(programs, name):
    case = TRACED[name]
    for training in case.modes:
        kt, _ = traced_pair(programs, case, training)
        data = to_bytes(kiln.save, kt)
        in_torch, in_kiln = torch.jit.load(io.BytesIO(data)), kiln.load(io.BytesIO(data))
        assert in_torch.training == in_kiln.training == training
        assert [n for n, _ in in_kiln.named_modules()] == [n for n, _ in in_torch.named_modules()]
        same_state(in_kiln, in_torch)
        assert to_bytes(kiln.save, in_kiln) == data
        assert code_files(to_bytes(torch.jit.save, in_torch)) == code_files(data)
        traced_calls([kt, in_kiln], in_torch, case)


# --- torchvision models: kiln has no convolution yet -------------------------------------------

# (model, scripted or traced, the operator kiln lacks that loading reports,
# operators of the code kiln has, which `kiln info` lists unmarked)
VISION = {
    "resnet18": ("resnet18", "script", ["aten::conv2d", "aten::batch_norm", "aten::max_pool2d",
                                        "aten::adaptive_avg_pool2d", "aten::linear", "aten::flatten", "aten::add_",
                                        "aten::relu"]),
    "mobilenet_v2": ("mobilenet_v2", "script", ["aten::conv2d", "aten::batch_norm", "aten::linear", "aten::flatten",
                                                "aten::add", "aten::dropout"]),
    "squeezenet1_0": ("squeezenet1_0", "script", ["aten::conv2d", "aten::max_pool2d", "aten::cat", "aten::dropout_",
                                                  "aten::flatten", "aten::relu"]),
    "squeezenet1_1_traced": ("squeezenet1_1", "trace", ["aten::_convolution", "aten::max_pool2d", "aten::cat",
                                                        "aten::dropout", "aten::flatten", "aten::relu_"]),
}
VISION_INPUT = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)


@pytest.fixture(scope="module")
def vision_archives(tmp_path_factory):
    torchvision = pytest.importorskip("torchvision")
    folder = tmp_path_factory.mktemp("vision")
    paths = {}
    for name, (model, how, _) in VISION.items():
        torch.manual_seed(0)
        module = getattr(torchvision.models, model)(weights=None).eval()
        module = torch.jit.script(module) if how == "script" else torch.jit.trace(module, torch.ones(1, 3, 64, 64))
        paths[name] = folder / f"{name}.pt"
        torch.jit.save(module, str(paths[name]))
    return paths


@pytest.mark.parametrize("name", list(VISION))
def test_vision_model_loads_and_runs(vision_archives, name):
    with torch.no_grad():
        expected = torch.jit.load(str(vision_archives[name]))(torch.from_numpy(VISION_INPUT)).numpy()
    got = kiln.load(vision_archives[name])(kiln.from_numpy(VISION_INPUT.copy())).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))


@pytest.mark.parametrize("name", list(VISION))
def test_vision_model_info_lists_its_operators(vision_archives, name):
    _, _, present = VISION[name]
    done = subprocess.run([KILN, "info", str(vision_archives[name])], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rows = _info_operator_rows(done.stdout)
    for op in present:
        assert "MISSING" not in rows[op], rows[op]
    assert f"operators: {len(rows)} (0 that kiln lacks)" in done.stdout


def _info_operator_rows(text):
    rows = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0].startswith(("aten::", "prim::")) and fields[1].isdigit():
            rows[fields[0]] = line
    return rows


class _UsesMissingOperator(torch.nn.Module):
    """A model calling an operator kiln lacks (torch.segment_reduce)."""

    def forward(self, x):
        return torch.segment_reduce(x, "sum", lengths=torch.tensor([1, 2])).relu()


def test_model_load_names_the_missing_operator(tmp_path):
    path = tmp_path / "segment_reduce.pt"
    torch.jit.save(torch.jit.script(_UsesMissingOperator()), str(path))
    with pytest.raises(kiln.Error) as info:
        kiln.load(path)
    message = str(info.value)
    assert f"archive '{path}'" in message
    assert "kiln has no operator aten::segment_reduce" in message
    assert "torch.segment_reduce(" in message and "<--- HERE" in message
    assert 'File "code/__torch__/' in message, message
    done = subprocess.run([KILN, "info", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rows = _info_operator_rows(done.stdout)
    assert rows["aten::segment_reduce"].endswith("MISSING in kiln")
    assert "MISSING" not in rows["aten::relu"]
    assert "kiln cannot load it" in done.stdout
    assert f"operators: {len(rows)} (1 that kiln lacks)" in done.stdout


def test_cli_runs_both_archives_of_net(programs, tmp_path):
    """`kiln run` on nn_programs' Net saved by torch and by kiln (eval mode) writes torch's result."""
    k, t = pair(programs, CASES["net.Net"])
    np.save(tmp_path / "x.npy", X24)
    kiln.save(kiln.script(k).eval(), tmp_path / "kiln.pt")
    torch.jit.save(torch.jit.script(t).eval(), str(tmp_path / "torch.pt"))
    for name in ("kiln.pt", "torch.pt"):
        with torch.no_grad():
            expected = torch.jit.load(str(tmp_path / name))(torch.from_numpy(X24)).numpy()
        command = [KILN, "run", tmp_path / name, tmp_path / "x.npy", "-o", tmp_path / "y.npy"]
        done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=1e-5, atol=1e-6)
