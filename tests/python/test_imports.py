"""kiln's Python modules import in one direction: the imports between them
form a DAG (no module imports another that, directly or not, imports it
back), none imports a kiln module inside a function to dodge a cycle, and
every module imports first, in a fresh interpreter, whatever the order."""
import ast
import os
import random
import subprocess
import sys

import kiln

PACKAGE_DIR = os.path.dirname(kiln.__file__)
PYTHON_DIR = os.path.dirname(PACKAGE_DIR)


def _modules():
    """Module name -> (path, is a package), for every .py file of kiln."""
    found = {}
    for root, _, files in os.walk(PACKAGE_DIR):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            parts = os.path.relpath(path, PYTHON_DIR)[:-3].split(os.sep)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join(parts)] = (path, is_package)
    return found


MODULES = _modules()


def _resolve(importer, is_package, node):
    """The kiln modules an import statement of `importer` loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "kiln"]
    base = importer.split(".")
    if not is_package:
        base.pop()
    if node.level:
        base = base[:len(base) - (node.level - 1)]
        package = ".".join(base + ([node.module] if node.module else []))
    else:
        package = node.module or ""
    if package.split(".")[0] != "kiln":
        return []
    # `from pkg import name` loads pkg.name when that is a module (kiln._C
    # is an extension module), else pkg.
    loaded = []
    for alias in node.names:
        name = f"{package}.{alias.name}"
        loaded.append(name if name in MODULES or name in sys.modules else package)
    return loaded


def _parents(name):
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _import_graph():
    """importer -> the kiln modules its top level imports (with their
    packages, whose __init__ runs first; not the importer's own packages,
    which are importing already), and the imports made inside functions."""
    graph, nested = {}, []
    for name, (path, is_package) in MODULES.items():
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        edges = set()
        top_level = set()
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                top_level.add(id(node))
                for target in _resolve(name, is_package, node):
                    for module in _parents(target) + [target]:
                        if module != name and module not in _parents(name):
                            edges.add(module)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top_level:
                if _resolve(name, is_package, node):
                    nested.append(f"{name}, line {node.lineno}")
        graph[name] = edges
    return graph, nested


def test_imports_form_a_dag():
    graph, _ = _import_graph()
    state = {}

    def visit(module, path):
        if state.get(module) == "done":
            return
        assert state.get(module) != "open", "import cycle: " + " -> ".join(path + [module])
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            visit(target, path + [module])
        state[module] = "done"

    for module in sorted(graph):
        visit(module, [])
    assert "kiln.nn._script" in graph["kiln.jit"] and "kiln._jit" in graph["kiln.nn._script"]


def test_no_kiln_import_inside_functions():
    _, nested = _import_graph()
    assert nested == []


def test_each_module_imports_first_in_any_order():
    names = sorted(n for n in MODULES if n != "kiln")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    for first in names:
        order = [first] + rng.sample([n for n in names if n != first], len(names) - 1)
        code = ("import importlib, sys\n"
                f"for name in {order!r}:\n"
                "    importlib.import_module(name)\n"
                "import kiln\n"
                "assert kiln.script is kiln.jit.script and kiln.jit.ScriptModule is kiln.nn._script.ScriptModule\n")
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"seed {seed}, order {order}:\n{result.stderr}"
