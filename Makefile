# Kiln's developer entry points. On a fresh machine `make demo` and `make test`
# install what they need first; each setup step leaves a stamp so reruns are fast.

JAX_VERSION    := 0.12.0.1
JAXLIB_VERSION := 0.12.0.1
PYTHON_VERSION := 3.12
JOBS           := 2

APT_PACKAGES := g++ libgtest-dev libgmock-dev ninja-build pkg-config clang-15 libeigen3-dev ccache \
                clang-format-15 libgloo-dev libxbyak-dev \
                opencl-c-headers ocl-icd-libopencl1 pocl-opencl-icd
PYTHON_PACKAGES := jax==$(JAX_VERSION) jaxlib==$(JAXLIB_VERSION) numpy pytest ml_dtypes
# `make test-torch` only (opt-in: several GB, torch's CUDA build being the
# one PyPI has): the newest torch_xla release and the torch it requires.
TORCH_VERSION  := 2.9.0
TORCH_PACKAGES := torch==$(TORCH_VERSION) torch_xla==$(TORCH_VERSION) pytest pytest-xdist rich \
                  pytest-timeout expecttest absl-py hypothesis

# `make test-jax-suite` only (opt-in): JAX's own tests of the release in
# ../shared/suites/jax-tests, in a virtual environment of that release.
JAX_SUITE_VERSION  := 0.11.0
JAX_SUITE_PACKAGES := jax==$(JAX_SUITE_VERSION) jaxlib==$(JAX_SUITE_VERSION) numpy scipy \
                      pytest pytest-xdist pytest-timeout absl-py hypothesis cloudpickle mpmath \
                      portpicker pillow

# `make test-compat` only: one Kiln library against the newest patch of each
# minor jaxlib from 0.10 to the pinned one, each in .venv-compat-<version>.
COMPAT_VERSIONS := 0.10.2 0.11.2 $(JAXLIB_VERSION)

VENV       := .venv
TORCH_VENV := .venv-torch
JAX_SUITE_VENV := .venv-jax-suite
PY         := $(VENV)/bin/python
STAMPS     := build/stamps
CPP_BUILD  := build/cpp
ASAN_BUILD := build/asan
FUZZ_BUILD := build/fuzz
# Portable artifacts and HloModuleProtos of our own JAX programs, generated
# (never committed).
TEST_DATA  := build/test-data/artifacts
HLO_DATA   := build/test-data/hlo
# MLIR bytecode of the StableHLO dialect itself (not VHLO) with each module's text.
SHLO_DATA  := build/test-data/stablehlo-bytecode
# Seconds each fuzzer runs: bounded in `make test`, longer with `make fuzz`.
FUZZ_SECONDS ?= 20
ASAN_ENV   := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# Compiler output is cached across builds and clones (ccache, in ~/.cache/ccache):
# paths under the checkout are hashed relative to it, so a fresh clone elsewhere
# hits the cache; the sloppiness lets precompiled headers be cached, and
# tools/ccache-launch caches those per checkout (they keep absolute paths).
CCACHE_LAUNCH := $(CURDIR)/tools/ccache-launch
CMAKE_LAUNCHER = -DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE_LAUNCH) -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE_LAUNCH)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime
export CCACHE_NOHASHDIR := 1
export CCACHE_MAXSIZE ?= 8G

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DELETE_ON_ERROR:

# cmake may be a pyenv shim that cannot run; then Debian's cmake is installed and used.
CMAKE_RUNS := $(shell cmake --version >/dev/null 2>&1 && echo yes)
CMAKE := $(if $(CMAKE_RUNS),cmake,/usr/bin/cmake)
CTEST := $(if $(CMAKE_RUNS),ctest,/usr/bin/ctest)
SUDO  := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Everything the wheel is built from: a change reinstalls Kiln into the venv.
KILN_SOURCES := $(shell find src python cmake -type f ! -path '*/__pycache__/*' 2>/dev/null) \
                CMakeLists.txt pyproject.toml README.md

.PHONY: all setup install demo build test test-cpp test-asan test-fuzz test-python test-torch \
        test-jax-suite test-torch-suite test-compat test-stablehlo-interpret fuzz bench bench-read clean distclean \
        test-multiprocess test-multiprocess-suite bench-multiprocess bench-sharded bench-collectives bench-ffi \
        test-python-opencl \
        test-format format
all: build

setup: install

install: $(VENV)/.kiln-installed

demo: install
	JAX_PLATFORMS=kiln,cpu $(PY) examples/demo.py

test: test-format test-cpp test-asan test-fuzz test-python

# The C++ sources follow .clang-format (a few seconds); `make format` applies it.
test-format: | $(STAMPS)/system-packages
	JOBS=$(JOBS) tools/check_format.sh

format: | $(STAMPS)/system-packages
	JOBS=$(JOBS) tools/check_format.sh --fix

build: $(CPP_BUILD)/build.ninja
	$(CMAKE) --build $(CPP_BUILD) -j$(JOBS)

test-cpp: build $(TEST_DATA)/.stamp $(HLO_DATA)/.stamp $(SHLO_DATA)/.stamp
	$(CTEST) --test-dir $(CPP_BUILD) -j$(JOBS) --output-on-failure --no-tests=error

test-asan: $(ASAN_BUILD)/build.ninja $(TEST_DATA)/.stamp $(HLO_DATA)/.stamp $(SHLO_DATA)/.stamp
	$(CMAKE) --build $(ASAN_BUILD) -j$(JOBS)
	$(ASAN_ENV) $(CTEST) --test-dir $(ASAN_BUILD) -j$(JOBS) --output-on-failure --no-tests=error

# Every fuzzer in build/fuzz runs FUZZ_SECONDS, two at a time (each is one
# process on one core), seeded with its regression inputs (fuzz/corpus/<reader>/)
# and the test data; new inputs it finds stay in build/fuzz/corpus. A crash
# fails the target and leaves crash-* files there (fuzz/run_fuzzers.sh).
test-fuzz: $(FUZZ_BUILD)/build.ninja $(TEST_DATA)/.stamp $(HLO_DATA)/.stamp $(SHLO_DATA)/.stamp
	$(CMAKE) --build $(FUZZ_BUILD) -j$(JOBS) --target kiln_fuzzers
	fuzz/run_fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(JOBS) $(TEST_DATA) $(HLO_DATA)

fuzz:
	$(MAKE) test-fuzz FUZZ_SECONDS=600

# tests/ffi runs in a pytest process of its own: it needs JAX's CPU backend
# beside Kiln (the reference its handlers are compared with), and users'
# FFI handlers built against the pinned jaxlib's headers (docs/ffi.md).
FFI_HANDLERS := $(CPP_BUILD)/tests/ffi/libkiln_ffi_test_handlers.so
test-python: install
	$(CMAKE) --build $(CPP_BUILD) -j$(JOBS) --target kiln_ffi_test_handlers
	$(PY) -m pytest tests/python
	KILN_FFI_TEST_HANDLERS=$(FFI_HANDLERS) $(PY) -m pytest tests/ffi
	$(MAKE) test-python-opencl

# The second backend judged by the same tests (issue 31): on PoCL, a third
# of the differential programs, the device, transfer and memory tests, and
# the demo's MLP training against the CPU backend. All of tests/python:
# KILN_BACKEND=opencl .venv/bin/python -m pytest tests/python
test-python-opencl: install
	KILN_BACKEND=opencl KILN_DIFFERENTIAL_EVERY=3 $(PY) -m pytest tests/python/test_differential.py \
	  tests/python/test_devices.py tests/python/test_transfer.py tests/python/test_memory.py \
	  tests/python/test_roundtrip.py
	KILN_BACKEND=opencl JAX_PLATFORMS=kiln,cpu $(PY) examples/demo.py

# A JAX job of four processes (jax.distributed, collectives on Gloo) against
# XLA's CPU backend, and a process killed in a collective (opt-in; `make test`
# runs two processes). docs/multi-process.md.
test-multiprocess: install
	$(PY) -m pytest tests/multiprocess

# JAX's own tests/multiprocess files (../shared/suites), 2 processes x 2
# devices, on Kiln and on XLA's CPU backend with Gloo (opt-in, long).
test-multiprocess-suite: $(JAX_SUITE_VENV)/.kiln-installed
	$(JAX_SUITE_VENV)/bin/python tests/suites/run_multiprocess_suite.py $(if $(FILES),--files $(FILES))

# PyTorch/XLA programs on Kiln beside torch_xla's own CPU client (opt-in, not
# part of `make test`: it downloads torch and torch_xla into .venv-torch).
test-torch: $(TORCH_VENV)/.kiln-installed
	$(TORCH_VENV)/bin/python -m pytest tests/torch

# The frameworks' own test suites as conformance gates (opt-in, long): each
# file of ../shared/suites/<suite>-tests runs on Kiln and on the framework's
# CPU backend; the report (build/suites/<suite>/report.md) counts the tests
# passing on the CPU backend that pass on Kiln too. FILES=a,b picks files;
# SUITE_ARGS passes more (--jobs, --keyword, --platforms kiln to reuse the
# CPU backend's last results). docs/conformance.md records the figures.
test-jax-suite: $(JAX_SUITE_VENV)/.kiln-installed
	$(JAX_SUITE_VENV)/bin/python tests/suites/run_suite.py jax $(if $(FILES),--files $(FILES)) $(SUITE_ARGS)

# The Python smoke tests (tests/compat) against every jaxlib of COMPAT_VERSIONS,
# the same built library installed into each one's virtual environment.
test-compat: $(foreach v,$(COMPAT_VERSIONS),.venv-compat-$(v)/.kiln-installed)
	@for version in $(COMPAT_VERSIONS); do \
	  echo "=== jax/jaxlib $$version"; \
	  .venv-compat-$$version/bin/python -m pytest -q tests/compat || exit 1; \
	done

# Stamps of pattern rules are kept (make would delete them as intermediate).
.PRECIOUS: .venv-compat-%/.kiln-deps .venv-compat-%/.kiln-installed
.venv-compat-%/.kiln-deps: | $(STAMPS)/system-packages
	$(call make-venv,.venv-compat-$*,jax==$* jaxlib==$* numpy pytest ml_dtypes)

.venv-compat-%/.kiln-installed: .venv-compat-%/.kiln-deps $(KILN_SOURCES) $(CPP_BUILD)/build.ninja
	$(call install-kiln,.venv-compat-$*)

# The StableHLO interpreter's own tests (openxla/stablehlo's
# stablehlo/tests/interpret, a checkout of it named by STABLEHLO_TESTS) under
# `kiln run`.
test-stablehlo-interpret: $(CPP_BUILD)/build.ninja
	@test -n "$(STABLEHLO_TESTS)" || { echo "usage: make test-stablehlo-interpret STABLEHLO_TESTS=<stablehlo checkout>/stablehlo/tests/interpret"; exit 2; }
	$(CMAKE) --build $(CPP_BUILD) --target kiln-tool -j2
	python3 tests/suites/run_stablehlo_interpret.py --kiln $(CPP_BUILD)/kiln-tool $(STABLEHLO_TESTS)

test-torch-suite: $(TORCH_VENV)/.kiln-installed
	$(TORCH_VENV)/bin/python tests/suites/run_suite.py torch $(if $(FILES),--files $(FILES)) $(SUITE_ARGS)

# Kiln beside JAX's CPU backend on every workload of bench/workloads.py, in
# one process (not part of `make test`): a markdown table and
# build/bench/results.{md,json}. One workload or group: make bench ONLY=sort_1M
# (a comma list works). docs/performance.md records the figures.
bench: install
	JAX_PLATFORMS=kiln,cpu $(PY) bench/run.py $(if $(ONLY),--only $(ONLY)) $(if $(THREADS),--threads "$(THREADS)")

# The cost of calling a user's FFI handler through jax.jit (a no-op, a no-op
# in a loop, an RMS norm), Kiln beside XLA's CPU backend (bench/ffi.py).
bench-ffi: install
	$(CMAKE) --build $(CPP_BUILD) -j$(JOBS) --target kiln_ffi_test_handlers
	JAX_PLATFORMS=kiln,cpu $(PY) bench/ffi.py --library $(FFI_HANDLERS)

# All-reduce, all-gather and reduce-scatter of 1 KiB to 64 MiB between 2, 4
# and 8 devices of one process, Kiln beside XLA's CPU backend
# (bench/collectives.py).
bench-collectives: install
	$(PY) bench/collectives.py

# Collectives of 1 KB to 64 MB and a data-parallel MLP step across 1, 2 and 4
# processes, Kiln beside XLA's CPU backend with Gloo (bench/multiprocess.py).
bench-multiprocess: install
	$(PY) bench/multiprocess.py

# Sharded training steps (MLP and transformer; data, tensor and fully
# sharded parallel) on 8 devices beside XLA's CPU backend with 8 devices.
bench-sharded: install
	$(PY) bench/sharded.py

# Reading speed and memory of a ~12 MB artifact (a transformer block with its
# weights as constants), Kiln's reader beside jaxlib's; not part of `make test`.
# bench/README.md records the figures.
BENCH_ARTIFACT := build/bench/transformer.mlir.bc
bench-read: $(CPP_BUILD)/build.ninja $(BENCH_ARTIFACT)
	$(CMAKE) --build $(CPP_BUILD) -j$(JOBS) --target kiln_bench_read
	$(CPP_BUILD)/bench/kiln_bench_read $(BENCH_ARTIFACT)
	JAX_PLATFORMS=cpu $(PY) bench/jaxlib_deserialize.py $(BENCH_ARTIFACT)

$(BENCH_ARTIFACT): $(VENV)/.kiln-deps tests/data/make_artifacts.py
	@mkdir -p $(@D)
	JAX_PLATFORMS=cpu $(PY) tests/data/make_artifacts.py --large $@

clean:
	rm -rf build

distclean: clean
	rm -rf $(VENV) $(TORCH_VENV) $(JAX_SUITE_VENV) .venv-compat-*

$(TEST_DATA)/.stamp: $(VENV)/.kiln-deps tests/data/make_artifacts.py
	$(PY) tests/data/make_artifacts.py --out $(TEST_DATA)
	touch $@

$(HLO_DATA)/.stamp: $(VENV)/.kiln-deps tests/data/make_hlo_protos.py
	$(PY) tests/data/make_hlo_protos.py --out $(HLO_DATA)
	touch $@

$(SHLO_DATA)/.stamp: $(VENV)/.kiln-deps tests/data/make_stablehlo_bytecode.py tests/data/jax_programs.py
	$(PY) -W ignore tests/data/make_stablehlo_bytecode.py --out $(SHLO_DATA)
	touch $@

# --- setup steps ---------------------------------------------------------------

# Rechecked when the Makefile changes, so a package added to APT_PACKAGES is
# installed in existing checkouts too.
$(STAMPS)/system-packages: Makefile
	@missing=""; \
	for package in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' "$$package" 2>/dev/null | grep -q "ok installed" \
	    || missing="$$missing $$package"; \
	done; \
	[ -n "$(CMAKE_RUNS)" ] || missing="$$missing cmake"; \
	if [ -n "$$missing" ]; then \
	  echo "Installing system packages:$$missing"; \
	  $(SUDO) apt-get update; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	fi
	@mkdir -p $(@D) && touch $@

# Line tables (-g1) rather than full debug information: perf and backtraces keep
# file:line, the installed copies are stripped anyway, and full -g made the
# plugin 314 MB (55 MB with -g1) and eigh.cc compile in 67 s rather than 52 s.
$(CPP_BUILD)/build.ninja: | $(STAMPS)/system-packages
	$(CMAKE) -S . -B $(CPP_BUILD) -G Ninja -DKILN_WERROR=ON $(CMAKE_LAUNCHER) \
	  -DKILN_JAXLIB_VERSION=$(JAXLIB_VERSION) \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"

# -O1 and line tables: hlo_reader.cc compiled in 10.8 s rather than 14.8 s
# at the default -O2 -g, and crash reports keep file:line.
$(FUZZ_BUILD)/build.ninja: | $(STAMPS)/system-packages
	CC=clang-15 CXX=clang++-15 $(CMAKE) -S . -B $(FUZZ_BUILD) -G Ninja -DKILN_BUILD_FUZZERS=ON \
	  $(CMAKE_LAUNCHER) -DKILN_JAXLIB_VERSION=$(JAXLIB_VERSION) \
	  -DKILN_BUILD_TESTS=OFF -DKILN_SANITIZE=address,undefined,fuzzer-no-link \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"

# -O0 and line tables only: this build checks behaviour, and it is the
# longest step of `make test`. Under ASan + UBSan an ordinary file compiles
# 2.4-4x faster at -O0 than at -O1 (fusion.cc 19.3 -> 8.0 s); the kernels
# keep -O1 (src/kernels/CMakeLists.txt), where -O0 saved nothing and the
# tests spend their time. Reports keep file:line.
$(ASAN_BUILD)/build.ninja: | $(STAMPS)/system-packages
	$(CMAKE) -S . -B $(ASAN_BUILD) -G Ninja -DKILN_SANITIZE=address,undefined $(CMAKE_LAUNCHER) \
	  -DKILN_JAXLIB_VERSION=$(JAXLIB_VERSION) \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG"

# The venv's Python: python3.12 on PATH if it runs (a pyenv shim may not), else pyenv's.
# $(call make-venv,DIR,PACKAGES): a virtual environment in DIR with the
# venv's Python (python3.12 on PATH if it runs, a pyenv shim may not, else
# pyenv's) and PACKAGES from PyPI.
define make-venv
	@python=""; \
	if python$(PYTHON_VERSION) -c pass >/dev/null 2>&1; then \
	  python=$$(python$(PYTHON_VERSION) -c 'import sys; print(sys.executable)'); \
	else \
	  for candidate in /root/.pyenv/versions/$(PYTHON_VERSION)*/bin/python$(PYTHON_VERSION); do \
	    if "$$candidate" -c pass >/dev/null 2>&1; then python=$$candidate; fi; \
	  done; \
	fi; \
	if [ -z "$$python" ]; then \
	  echo "error: Kiln needs Python $(PYTHON_VERSION) (jax $(JAX_VERSION) requires it):" \
	       "no working python$(PYTHON_VERSION) on PATH or in /root/.pyenv/versions/$(PYTHON_VERSION)*" >&2; \
	  exit 1; \
	fi; \
	echo "Creating $(1) with $$python"; \
	"$$python" -m venv $(1)
	$(1)/bin/python -m pip install $(2)
	touch $@
endef

# $(call install-kiln,DIR): Kiln into the venv DIR. The wheel packages the
# plugin and kiln-tool from build/cpp (KILN_PREBUILT_DIR) rather than
# compiling them again; a plain `pip install .` builds from source.
define install-kiln
	$(CMAKE) --build $(CPP_BUILD) -j$(JOBS) --target pjrt_plugin_kiln kiln_tool
	$(1)/bin/python -m pip install . --config-settings=build-dir=build/wheel-prebuilt \
	  --config-settings=cmake.define.KILN_PREBUILT_DIR=$(CURDIR)/$(CPP_BUILD)
	touch $@
endef

$(VENV)/.kiln-deps: Makefile | $(STAMPS)/system-packages
	$(call make-venv,$(VENV),$(PYTHON_PACKAGES))

$(VENV)/.kiln-installed: $(VENV)/.kiln-deps $(KILN_SOURCES) $(CPP_BUILD)/build.ninja
	$(call install-kiln,$(VENV))

$(TORCH_VENV)/.kiln-deps: Makefile | $(STAMPS)/system-packages
	$(call make-venv,$(TORCH_VENV),$(TORCH_PACKAGES))

$(TORCH_VENV)/.kiln-installed: $(TORCH_VENV)/.kiln-deps $(KILN_SOURCES) $(CPP_BUILD)/build.ninja
	$(call install-kiln,$(TORCH_VENV))

$(JAX_SUITE_VENV)/.kiln-deps: Makefile | $(STAMPS)/system-packages
	$(call make-venv,$(JAX_SUITE_VENV),$(JAX_SUITE_PACKAGES))

$(JAX_SUITE_VENV)/.kiln-installed: $(JAX_SUITE_VENV)/.kiln-deps $(KILN_SOURCES) $(CPP_BUILD)/build.ninja
	$(call install-kiln,$(JAX_SUITE_VENV))
