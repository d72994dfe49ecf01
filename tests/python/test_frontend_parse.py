"""The script parser accepts every corpus program and rejects malformed source
with TorchScript-style positioned errors."""
import os
import sys

import pytest

import kiln

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "corpus"))
from programs import PROGRAMS  # noqa: E402


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p["name"] for p in PROGRAMS])
def test_corpus_program_parses(prog):
    out = kiln._C._parse_source(prog["src"])
    defs = [line for line in out.splitlines() if line.startswith("(def (ident ")]
    assert defs, out
    assert any(line.startswith(f"(def (ident {prog['fn']}) ") for line in defs)


def test_parse_output_is_s_expressions():
    assert kiln._C._parse_source("def f(a):\n    return a + 1\n") == (
        "(def (ident f) (decl (list (param (ident a) (option) (option) (False))) (option)) "
        "(list (return (option (+ (variable (ident a)) (const 1))))) (list))\n")


@pytest.mark.parametrize("src, message, line", [
    ("def f(x):\n    return x +\n", "expected an expression", 2),
    ("def f(x):\n  a = 1\n    b = 2\n", "unexpected indent", 3),
    ("x = lambda: 1\n", "lambda expressions are not supported", 1),
    ("x = 'abc\n", "unterminated string literal", 1),
])
def test_errors_show_the_line(src, message, line):
    with pytest.raises(RuntimeError) as info:
        kiln._C._parse_source(src)
    text = str(info.value)
    assert message in text
    assert f'File "<string>", line {line}' in text
    assert text.endswith("<--- HERE")
