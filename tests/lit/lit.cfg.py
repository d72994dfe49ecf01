# lit configuration for kiln: IR and script tests checked with FileCheck.
# `make lit-test` runs them; `%kiln` is the command line built in ./build
# (override with KILN_BUILD_DIR).
import os

import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".ir", ".py", ".test"]
# Script tests are .py files; this configuration is not one of them.
config.excludes = ["lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)

repo_root = os.path.dirname(os.path.dirname(config.test_source_root))
build_dir = os.environ.get("KILN_BUILD_DIR", os.path.join(repo_root, "build"))
config.test_exec_root = os.path.join(build_dir, "lit")
# Python scripts using the kiln package of this tree (Debian's python3, as the
# tests). Before %kiln, which is a prefix of it.
config.substitutions.append(("%kiln_python", "env PYTHONPATH=" + os.path.join(repo_root, "python") + " /usr/bin/python3"))
config.substitutions.append(("%kiln", os.path.join(build_dir, "kiln")))

# FileCheck, not and count come from LLVM 14.
config.environment["PATH"] = os.pathsep.join(["/usr/lib/llvm-14/bin", config.environment.get("PATH", os.environ["PATH"])])
