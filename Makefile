# kiln: the developer entry points. Everything goes through CMake + Ninja.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
PYTHON := /usr/bin/python3
JOBS ?= $(shell nproc)
LIT ?= /usr/lib/llvm-14/build/utils/lit/lit.py

# Debian packages kiln needs to build and test; `make deps` installs the missing ones.
DEB_PACKAGES := g++ cmake ninja-build ccache pkg-config python3-dev pybind11-dev \
	python3-numpy python3-pytest python3-torch libopenblas-dev libsleef-dev \
	libgtest-dev llvm-14-tools clang-format-14 \
	libminizip-dev zlib1g-dev libdeflate-dev python3-torchvision libopenblas0-openmp libdnnl-dev

DEB_ARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
OPENBLAS_OPENMP_DIR := /usr/lib/$(DEB_ARCH)/openblas-openmp

.PHONY: deps configure build test demo bench clean cpp-test py-test lit-test fuzz sanitize format format-check

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@# OpenBLAS's OpenMP build, so that BLAS, oneDNN and kiln's kernels share one OpenMP team instead of
	@# two pools spinning against each other (docs/runtime.md, "Threads"). Debian prefers the pthread
	@# build; select the OpenMP one for libopenblas, libblas and liblapack (torch uses the same ones).
	@SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	for alt in libopenblas.so.0 libblas.so.3 liblapack.so.3; do \
	  target=$(OPENBLAS_OPENMP_DIR)/$$alt; \
	  if [ -e $$target ] && [ "$$(readlink -f /usr/lib/$(DEB_ARCH)/$$alt)" != "$$(readlink -f $$target)" ]; then \
	    echo "selecting $$target"; $$SUDO update-alternatives --quiet --set $$alt-$(DEB_ARCH) $$target; \
	  fi; \
	done

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DPython3_EXECUTABLE=$(PYTHON) $(if $(CI),-DKILN_WERROR=ON)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

cpp-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

lit-test: build
	@if [ -n "$$(find tests/lit -name '*.ir' -o -name '*.py' -o -name '*.test' 2>/dev/null | head -1)" ]; then \
	  KILN_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTHON) $(LIT) -sv tests/lit; else echo "lit: no tests yet"; fi

py-test: build
	PYTHONPATH=$(CURDIR)/python $(PYTHON) -m pytest -q tests/python

test: cpp-test lit-test py-test

# libFuzzer on the IR, schema and script parsers, the script compiler, the unpickler and the archive loader (clang-14, ASan, UBSan), each for
# FUZZ_SECONDS, growing the corpora in tests/fuzz_corpus; crashes land in build-fuzz/.
FUZZ_SECONDS ?= 120
fuzz:
	cmake -S fuzz -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-14
	cmake --build build-fuzz -j $(JOBS)
	build-fuzz/fuzz_ir_parser tests/fuzz_corpus/ir -dict=fuzz/ir.dict -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -artifact_prefix=build-fuzz/ir-
	build-fuzz/fuzz_schema_parser tests/fuzz_corpus/schema -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=build-fuzz/schema-
	build-fuzz/fuzz_script_parser tests/fuzz_corpus/script -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -artifact_prefix=build-fuzz/script-
	build-fuzz/fuzz_script_compile tests/fuzz_corpus/script -dict=fuzz/script.dict -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 -artifact_prefix=build-fuzz/compile-
	build-fuzz/fuzz_unpickler tests/fuzz_corpus/pickle -dict=fuzz/pickle.dict -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 -artifact_prefix=build-fuzz/pickle-
	build-fuzz/fuzz_archive tests/fuzz_corpus/archive -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -artifact_prefix=build-fuzz/archive-

# ASan + UBSan (gcc, -O1) in their own build folder: the C++ tests, the lit tests
# and one pass of each fuzz target over its committed corpus. Python tests are
# not run (the extension is not built with sanitizers); nor is the one lit test
# that drives kiln from Python. Warnings are not errors here: with the
# sanitizers, g++ 12 warns falsely (-Wmaybe-uninitialized in std::optional).
SANITIZE_DIR ?= build-sanitize
SANITIZE_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
FUZZ_TARGETS := ir_parser schema_parser script_parser script_compile unpickler archive
sanitize: deps
	@[ -f $(SANITIZE_DIR)/build.ninja ] || cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
	  -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -g" -DKILN_SANITIZE=ON
	cmake --build $(SANITIZE_DIR) -j $(JOBS) --target kiln_cli kiln_tests $(addprefix replay_,$(FUZZ_TARGETS))
	cd $(SANITIZE_DIR) && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS)
	$(SANITIZE_ENV) KILN_BUILD_DIR=$(abspath $(SANITIZE_DIR)) $(PYTHON) $(LIT) -sv --filter-out 'trace/module_trace' tests/lit
	$(SANITIZE_ENV) $(SANITIZE_DIR)/replay_ir_parser tests/fuzz_corpus/ir
	$(SANITIZE_ENV) $(SANITIZE_DIR)/replay_schema_parser tests/fuzz_corpus/schema
	$(SANITIZE_ENV) $(SANITIZE_DIR)/replay_script_parser tests/fuzz_corpus/script
	$(SANITIZE_ENV) $(SANITIZE_DIR)/replay_script_compile tests/fuzz_corpus/script
	$(SANITIZE_ENV) $(SANITIZE_DIR)/replay_unpickler tests/fuzz_corpus/pickle
	$(SANITIZE_ENV) $(SANITIZE_DIR)/replay_archive tests/fuzz_corpus/archive

# C++ style: .clang-format (clang-format 14) over every tracked .cpp and .h.
CLANG_FORMAT ?= clang-format-14
format: deps
	git ls-files -z -- '*.cpp' '*.h' | xargs -0 $(CLANG_FORMAT) -i --style=file

format-check: deps
	CLANG_FORMAT=$(CLANG_FORMAT) tools/format_check.sh

demo: build
	PYTHONPATH=$(CURDIR)/python $(PYTHON) examples/demo.py

bench: build
	PYTHONPATH=$(CURDIR)/python $(PYTHON) bench/bench_tensor.py
	PYTHONPATH=$(CURDIR)/python $(PYTHON) bench/bench_interpreter.py
	PYTHONPATH=$(CURDIR)/python $(PYTHON) bench/bench_compile.py
	PYTHONPATH=$(CURDIR)/python $(PYTHON) bench/bench_plans.py
	PYTHONPATH=$(CURDIR)/python $(PYTHON) bench/bench_fuser.py
	PYTHONPATH=$(CURDIR)/python $(PYTHON) bench/bench_fuser.py --threads $(JOBS)
	PYTHONPATH=$(CURDIR)/python $(PYTHON) bench/bench_load.py
	PYTHONPATH=$(CURDIR)/python $(PYTHON) bench/bench_load.py --threads $(JOBS)
	PYTHONPATH=$(CURDIR)/python $(PYTHON) bench/bench_models.py
	PYTHONPATH=$(CURDIR)/python $(PYTHON) bench/bench_models.py --threads $(JOBS)
	PYTHONPATH=$(CURDIR)/python $(PYTHON) bench/bench_train.py

clean:
	rm -rf $(BUILD_DIR) python/kiln/_C*.so
