"""Graphs printed by torch 1.13's TorchScript compiler, run by kiln's
interpreter and by torch (torch._C._create_function_from_graph) on the same
inputs. The programs come from the shared corpus (tests/python/corpus) and
from the lists below."""
import pytest

from conftest import check_script
from corpus.programs import PROGRAMS


@pytest.mark.parametrize("program", PROGRAMS, ids=[p["name"] for p in PROGRAMS])
def test_corpus(program):
    check_script(program["src"], program["fn"], *program["args"](), raises=program["raises"], rtol=1e-4, atol=1e-5)
