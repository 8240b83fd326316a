# microjax_rs developer entry points (GNU make).
#
#   make run     set up .venv, build the extension (release), run examples/quickstart.py
#   make test    set up .venv, build the extension (cargo profile `ci`), the docs site, clippy,
#                rustdoc, rustfmt, cargo tests, pytest (also with a stand-in GPU) — each stage prints
#                its wall time. The `ci` build stays in target/ci (the tests load
#                it through MICROJAX_RS_CORE): the release extension `make run`
#                installed in python/microjax_rs is never replaced.
#   make docs    the documentation site (mkdocs.yml: tutorials, API reference, developer
#                notes) built with warnings as errors into target/docs; also a `make test` stage
#   make bench   release build, then benches/run.py (rewrites benches/RESULTS.md)
#   make bench-compare   the same with JAX and PyTorch columns: installs
#                benches/requirements-compare.txt (pinned) into .venv-compare
#                (a separate environment, about 6 GB; never .venv) and runs
#                benches/run.py there on the release extension
#   make wheel   a manylinux2014 cp39-abi3 wheel in dist/, checked (auditwheel,
#                abi3audit) and smoke-tested in a fresh venv; its tools are pinned
#                in requirements-wheel.txt
#
# Everything is installed from requirements-dev.txt and requirements-ecosystem.txt
# (pinned, PyPI) into .venv;
# the only system requirements are python3 (with the venv module) and cargo.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build
.NOTPARALLEL:
.DELETE_ON_ERROR:

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-dev.stamp

# The interpreter that creates the venv is looked up on the caller's PATH.
ORIG_PATH := $(PATH)

# Every cargo/maturin invocation sees the venv's interpreter.
export VIRTUAL_ENV := $(abspath $(VENV))
export PYO3_PYTHON := $(abspath $(VPY))
export PATH := $(VIRTUAL_ENV)/bin:$(PATH)

# `build-ci` and clippy give pyo3 the same environment (an extension module:
# libpython is not linked), so pyo3's build scripts are not re-run (and pyo3
# not rebuilt) between them.
PYO3_ENV := PYO3_BUILD_EXTENSION_MODULE=1

# The `ci`-profile extension the test stages import (python/microjax_rs's own
# `_core` is the release build of `make run`, left in place).
CI_CORE := $(CURDIR)/target/ci/microjax_rs_core.abi3.so
# Bytecode is cached under target/pycache whatever the caller's
# PYTHONDONTWRITEBYTECODE says: without it every test process (and each
# subprocess a test starts) compiles the package's sources and pytest
# rewrites every test module's asserts again.
TEST_ENV := MICROJAX_RS_CORE=$(CI_CORE) PYTHONPATH=$(CURDIR)/python \
	PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/target/pycache

# Parallel cargo jobs (default: all cores).
CARGO_JOBS ?=
CARGO_J := $(if $(CARGO_JOBS),-j $(CARGO_JOBS),)

# $(call stage,NAME,COMMAND): run COMMAND and print its wall time, also on failure.
# COMMAND is one pipeline or an `&&` chain (its status is the stage's status).
define stage
@echo "==> [$(1)] start"; t0=$$(date +%s); rc=0; $(2) || rc=$$?; \
echo "==> [$(1)] $$(( $$(date +%s) - t0 ))s$$( [ $$rc -eq 0 ] || echo " FAILED (exit $$rc)")"; exit $$rc
endef

.PHONY: help .venv venv build build-ci run test docs docs-site lint rustdoc fmt-check clippy cargo-test pytest pytest-fake-gpu bench bench-compare fmt wheel wheel-aarch64 clean-venv

help:
	@echo "make run | make test | make docs | make bench | make bench-compare | make build | make build-ci | make lint | make wheel | make wheel-aarch64"

# ---------------------------------------------------------------- environment
venv: $(STAMP)
.venv: $(STAMP)

# requirements-ecosystem.txt (optax, chex, equinox and their non-JAX
# dependencies, for tests/test_ecosystem.py) is installed with --no-deps so
# their `jax`/`jaxlib` requirements are never pulled in: microjax_rs stands
# in for both (microjax_rs.install_as_jax()).
# --no-compile: the packages' bytecode is written when first imported (the
# test stages keep theirs under target/pycache, where Python looks instead).
$(STAMP): requirements-dev.txt requirements-ecosystem.txt
	$(call stage,venv,(test -x $(VPY) || env -u VIRTUAL_ENV PATH="$(ORIG_PATH)" $(PYTHON) -m venv $(VENV)) && $(VPY) -m pip install --disable-pip-version-check -q --no-compile -r requirements-dev.txt && $(VPY) -m pip install --disable-pip-version-check -q --no-compile --no-deps -r requirements-ecosystem.txt)
	@touch $@

# ---------------------------------------------------------------- build
# Editable install: the compiled _core*.so lands in python/microjax_rs/, the
# Python sources are used in place.
build: venv
	$(call stage,build-release,$(VENV)/bin/maturin develop --release $(CARGO_J))
	@$(VPY) -c "import microjax_rs"

build-ci: venv
	$(call stage,build-ci,$(PYO3_ENV) cargo build -p microjax-python --profile ci $(CARGO_J) && cp target/ci/lib_core.so $(CI_CORE))
	@$(TEST_ENV) $(VPY) -c "import microjax_rs"

# ---------------------------------------------------------------- wheel
# A portable cp39-abi3 wheel in dist/: manylinux2014 (glibc >= 2.17, x86_64).
# zig links it against glibc 2.17's symbol versions, whatever the build host's
# glibc is; the extension is stripped of its symbol table. The wheel is built
# into target/wheel/out, checked (auditwheel: the manylinux_2_17 tag; abi3audit:
# nothing outside the cp39 stable ABI), installed into a fresh venv with no Rust
# toolchain on PATH and smoke-tested outside the source tree
# (tools/wheel_smoke.py); only then is it copied into dist/.
# The tools (ziglang, auditwheel, abi3audit) are pinned in requirements-wheel.txt
# and installed into .venv here only. Its own cargo target dir (target/wheel):
# the zig-linked build never invalidates `make run`'s or `make test`'s.
WHEEL_STAMP := $(VENV)/.requirements-wheel.stamp
WHEEL_TARGET := $(CURDIR)/target/wheel
WHEEL_OUT := $(WHEEL_TARGET)/out
WHEEL_TAG := cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64
# The interpreters the built wheel is smoke-tested on (each in a fresh venv).
WHEEL_SMOKE_PYTHONS ?= $(PYTHON)
# PATH for the smoke test: the system directories only (no cargo, no rustc).
WHEEL_SMOKE_PATH := /usr/local/bin:/usr/bin:/bin

$(WHEEL_STAMP): requirements-wheel.txt $(STAMP)
	$(call stage,wheel-tools,$(VPY) -m pip install --disable-pip-version-check -q -r requirements-wheel.txt)
	@touch $@

wheel: venv $(WHEEL_STAMP)
	@rm -rf $(WHEEL_OUT)
	$(call stage,wheel-build,CARGO_TARGET_DIR=$(WHEEL_TARGET) nice $(VENV)/bin/maturin build --release --strip --zig --compatibility manylinux2014 $(CARGO_J) -o $(WHEEL_OUT))
	$(call stage,wheel-check,whl=$$(ls $(WHEEL_OUT)/microjax_rs-*-$(WHEEL_TAG).whl) && echo "$$whl" && $(VENV)/bin/auditwheel show "$$whl" | tee $(WHEEL_OUT)/auditwheel.txt && tr -s '[:space:]' ' ' < $(WHEEL_OUT)/auditwheel.txt | grep -q 'platform tag: "manylinux_2_17_x86_64"' && $(VENV)/bin/abi3audit --strict --assume-minimum-abi3 3.9 --verbose "$$whl")
	$(call stage,wheel-smoke,whl=$$(ls $(WHEEL_OUT)/*.whl) && (for py in $(WHEEL_SMOKE_PYTHONS); do tmp=$$(mktemp -d) && env -u VIRTUAL_ENV PATH="$(ORIG_PATH)" $$py -m venv $$tmp/venv && $$tmp/venv/bin/python -m pip install --disable-pip-version-check -q --only-binary=:all: "$$whl" && (cd $$tmp && env -u VIRTUAL_ENV -u PYTHONPATH -u MICROJAX_RS_CORE PATH="$$tmp/venv/bin:$(WHEEL_SMOKE_PATH)" $$tmp/venv/bin/python -I $(CURDIR)/tools/wheel_smoke.py $(CURDIR)) && rm -rf $$tmp || exit 1; done))
	@mkdir -p dist && cp $(WHEEL_OUT)/*.whl dist/ && ls -l dist/*$(WHEEL_TAG).whl

# An aarch64 wheel cross-built the same way (rustup's aarch64 standard
# library, zig as the cross linker against glibc 2.17), its manylinux tag and
# stable ABI checked as above, and smoke-tested under qemu-user on Debian's
# arm64 CPython with the pinned NumPy and ml_dtypes aarch64 wheels
# (tools/aarch64_smoke.sh, which installs qemu-user and the arm64 packages
# with apt-get as root). Not part of `make test`.
WHEEL_AARCH64_TARGET := aarch64-unknown-linux-gnu
WHEEL_AARCH64_OUT := $(WHEEL_TARGET)/out-aarch64
WHEEL_AARCH64_TAG := cp39-abi3-manylinux2014_aarch64.manylinux_2_17_aarch64

wheel-aarch64: venv $(WHEEL_STAMP)
	@rm -rf $(WHEEL_AARCH64_OUT)
	$(call stage,wheel-aarch64-std,rustup target list --installed | grep -qx $(WHEEL_AARCH64_TARGET) || rustup target add $(WHEEL_AARCH64_TARGET))
	$(call stage,wheel-aarch64-build,CARGO_TARGET_DIR=$(WHEEL_TARGET) nice $(VENV)/bin/maturin build --release --strip --zig --compatibility manylinux2014 --target $(WHEEL_AARCH64_TARGET) $(CARGO_J) -o $(WHEEL_AARCH64_OUT))
	$(call stage,wheel-aarch64-check,whl=$$(ls $(WHEEL_AARCH64_OUT)/microjax_rs-*-$(WHEEL_AARCH64_TAG).whl) && echo "$$whl" && $(VENV)/bin/auditwheel show "$$whl" | tee $(WHEEL_AARCH64_OUT)/auditwheel.txt && tr -s '[:space:]' ' ' < $(WHEEL_AARCH64_OUT)/auditwheel.txt | grep -q 'platform tag: "manylinux_2_17_aarch64"' && $(VENV)/bin/abi3audit --strict --assume-minimum-abi3 3.9 --verbose "$$whl")
	$(call stage,wheel-aarch64-smoke,PYTHON=$(abspath $(VPY)) bash tools/aarch64_smoke.sh $$(ls $(WHEEL_AARCH64_OUT)/*.whl))
	@mkdir -p dist && cp $(WHEEL_AARCH64_OUT)/*.whl dist/ && ls -l dist/*$(WHEEL_AARCH64_TAG).whl

run: build
	$(VPY) examples/quickstart.py

# ---------------------------------------------------------------- checks
# clippy and rustdoc run after `build-ci` in its target directory: the
# dependencies' metadata it produced serves their checks (in a directory of
# their own they re-checked every dependency, and run beside the build they
# slowed it by more than they took).
# Every target (libraries, tests, examples, benches, binaries) but the
# libraries' test builds, which `--all-targets` would add: neither library
# has unit tests (`test = false`), so each would only be checked twice.
CLIPPY_TARGETS := --lib --bins --tests --examples --benches

clippy: venv
	$(call stage,clippy,$(PYO3_ENV) cargo clippy --workspace $(CLIPPY_TARGETS) --profile ci $(CARGO_J) -- -D warnings)

# The core crate's API documentation, warnings (broken intra-doc links,
# bad code-block attributes) as errors. `--workspace` (the binding's library
# has `doc = false`) resolves the dependencies' features as clippy did, so
# their metadata is reused: `-p microjax` alone resolved once_cell and syn
# differently and re-checked faer and gemm (35 s).
rustdoc: venv
	$(call stage,rustdoc,$(PYO3_ENV) RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --features microjax/cuda --profile ci $(CARGO_J))

fmt-check:
	$(call stage,rustfmt,cargo fmt --all --check)

lint: clippy rustdoc fmt-check

# The binding crate is an abi3 cdylib that only links inside a Python
# process, so its behaviour is tested by pytest; clippy covers both crates.
# The binding is in the package set (it has no test targets) so that cargo
# resolves the dependencies' features as `build-ci` did: the core library
# and its dependencies are reused, not compiled a second time (without it,
# pyo3's feature choices for shared crates such as once_cell differ).
# `microjax/cuda`: the GPU-free CUDA tests (NVRTC compilation skips without
# libnvrtc) run.
cargo-test: venv
	$(call stage,cargo-test,$(PYO3_ENV) cargo test -p microjax -p microjax-python --features microjax/cuda --profile ci $(CARGO_J))

# pytest runs on PYTEST_WORKERS processes (pytest-xdist; `auto`: one per
# core, `0`: in this process). Exit code 5 (no tests collected) fails like
# any other non-zero status.
PYTEST_WORKERS ?= auto
PYTEST_N := -n $(PYTEST_WORKERS)

pytest: venv
	$(call stage,pytest,$(TEST_ENV) $(VPY) -m pytest -q $(PYTEST_N) tests)

# The suite again with a stand-in GPU as the default device (tests/fake_gpu.py):
# every jit and eager op routes through the GPU paths, programs run on the host.
# (The op table's grad/vmap checks and the `device_independent` test modules run in
# the host stage only, its eager and jit checks here on the first case of each
# record and dtype; MICROJAX_FULL=1 runs all of them here too.)
pytest-fake-gpu: venv
	$(call stage,pytest-fake-gpu,$(TEST_ENV) MICROJAX_FAKE_GPU=1 $(VPY) -m pytest -q $(PYTEST_N) tests)

# The documentation site (mkdocs.yml). Its API pages are rendered from the
# imported objects' docstrings (many are made at import), so it loads the `ci`
# extension through $(TEST_ENV). Warnings are errors (--strict; not with
# --quiet, which drops warnings before they are counted); the site lands in
# target/docs. The tutorials' code cells run in pytest
# (tests/test_docs_examples.py). `docs-site` is the build alone, for `make
# test`, which has built the extension already.
docs: venv build-ci docs-site

docs-site: venv
	$(call stage,docs,$(TEST_ENV) $(VPY) -m mkdocs build --strict)

# Prerequisites run left to right (.NOTPARALLEL).
test: venv build-ci docs-site lint cargo-test pytest pytest-fake-gpu
	@echo "==> make test: all stages passed"

# ---------------------------------------------------------------- benchmarks
bench: build
	$(VPY) benches/run.py --write benches/RESULTS.md

# JAX and PyTorch in their own environment: the release extension `make build`
# put in python/microjax_rs is imported from the source tree.
CMP_VENV := .venv-compare
CMP_STAMP := $(CMP_VENV)/.requirements-compare.stamp

$(CMP_STAMP): benches/requirements-compare.txt
	test -x $(CMP_VENV)/bin/python || env -u VIRTUAL_ENV PATH="$(ORIG_PATH)" $(PYTHON) -m venv $(CMP_VENV)
	$(CMP_VENV)/bin/python -m pip install --disable-pip-version-check -q -r benches/requirements-compare.txt
	touch $@

bench-compare: build $(CMP_STAMP)
	PYTHONPATH=$(CURDIR)/python $(CMP_VENV)/bin/python benches/run.py --write benches/RESULTS.md

fmt:
	cargo fmt --all

clean-venv:
	rm -rf $(VENV)
