"""Build and packaging invariants: the core crate stays free of Python, the
wheel is one abi3 module, and the two README commands stay the whole set-up."""
import os
import re
import shutil
import subprocess
import sys

import pytest

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None


def _read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def _toml(rel):
    if tomllib is None:
        pytest.skip("tomllib needs Python >= 3.11")
    with open(os.path.join(ROOT, rel), "rb") as f:
        return tomllib.load(f)


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo not installed")
def test_core_crate_has_no_python_dependency():
    out = subprocess.run(
        ["cargo", "tree", "-p", "microjax", "-e", "normal,build", "--prefix", "none"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    crates = {line.split()[0] for line in out.stdout.splitlines() if line.strip()}
    assert "microjax" in crates
    python_crates = sorted(c for c in crates if c.startswith("pyo3") or c == "numpy")
    assert not python_crates, f"rust/core depends on {python_crates}"


def test_core_manifest_has_no_pyo3():
    core = _toml("rust/core/Cargo.toml")
    deps = set(core.get("dependencies", {})) | set(core.get("build-dependencies", {}))
    assert not {d for d in deps if d.startswith("pyo3") or d == "numpy"}


def test_pyproject_builds_one_abi3_module():
    py = _toml("pyproject.toml")
    assert py["build-system"]["build-backend"] == "maturin"
    (req,) = py["build-system"]["requires"]
    assert re.fullmatch(r"maturin\s*>=\s*1\.9\.4\s*,\s*<\s*2", req), req
    assert py["project"]["name"] == "microjax_rs"
    assert py["project"]["requires-python"] == ">=3.9"
    assert any(d.startswith("numpy") for d in py["project"]["dependencies"])
    mat = py["tool"]["maturin"]
    assert mat["module-name"] == "microjax_rs._core"
    assert mat["python-source"] == "python"
    assert os.path.isfile(os.path.join(ROOT, mat["manifest-path"]))
    assert os.path.isfile(os.path.join(ROOT, "python", "microjax_rs", "__init__.py"))
    assert not any("extension-module" in f for f in mat.get("features", []))
    # abi3 comes from the workspace pyo3 dependency.
    ws = _toml("Cargo.toml")
    assert "abi3-py39" in ws["workspace"]["dependencies"]["pyo3"]["features"]
    assert "extension-module" not in ws["workspace"]["dependencies"]["pyo3"]["features"]


def test_pyproject_dependencies_and_classifiers():
    project = _toml("pyproject.toml")["project"]
    names = {re.split(r"[<>=!~ ]", d, maxsplit=1)[0].lower().replace("_", "-") for d in project["dependencies"]}
    assert {"numpy", "ml-dtypes"} <= names  # ml_dtypes: bfloat16 arrays
    assert "Typing :: Typed" in project["classifiers"]
    assert os.path.isfile(os.path.join(ROOT, "python", "microjax_rs", "py.typed"))
    for url in project.get("urls", {}).values():  # real addresses only
        assert url.startswith("https://") and not re.search(r"example|todo|your|xxx", url, re.I), url


def test_installed_extension_is_abi3():
    core = pytest.importorskip("microjax_rs._core")
    path = getattr(core, "__file__", "") or ""
    if sys.platform.startswith("linux"):
        assert path.endswith(".abi3.so"), path
    override = os.environ.get("MICROJAX_RS_CORE")
    if override:  # `make test`: the ci build, by path
        assert os.path.samefile(path, override)


def test_make_test_keeps_the_release_extension():
    # The test stages load the `ci` build from target/ci by path; only
    # `make run`/`make build` (maturin develop --release) write the
    # package's own extension.
    rules = _make_rules()
    mk = _read("Makefile")
    build_ci = mk.split("\nbuild-ci:", 1)[1].split("\n\n", 1)[0]
    assert "maturin develop" not in build_ci and "cargo build -p microjax-python --profile ci" in build_ci
    assert "$(TEST_ENV) $(VPY) -m pytest" in mk
    assert "$(TEST_ENV) MICROJAX_FAKE_GPU=1 $(VPY) -m pytest" in mk
    assert "build-ci" in rules["test"]


def test_requirements_are_pinned():
    lines = [
        line.split("#")[0].strip()
        for line in _read("requirements-dev.txt").splitlines()
        if line.split("#")[0].strip()
    ]
    assert lines
    for line in lines:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][A-Za-z0-9.]*", line), f"unpinned requirement: {line}"
    names = {line.split("==")[0].lower().replace("_", "-") for line in lines}
    assert {"numpy", "pytest", "maturin", "ml-dtypes"} <= names


def _make_rules():
    rules = {}
    for line in _read("Makefile").splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+(?:\s+[A-Za-z0-9_.\-]+)*)\s*:(?!=)(.*)$", line)
        if m and not line.startswith("\t"):
            for target in m.group(1).split():
                rules.setdefault(target, []).extend(m.group(2).split())
    return rules


def test_makefile_targets():
    rules = _make_rules()
    for target in ("run", "test", "bench", "build", "build-ci", "venv", "docs", "lint", "rustdoc",
                   "cargo-test", "pytest", "pytest-fake-gpu"):
        assert target in rules, f"Makefile lacks `{target}`"
    # `make test` runs every stage, in this order.
    assert rules["test"] == ["venv", "build-ci", "docs-site", "lint", "cargo-test", "pytest", "pytest-fake-gpu"]
    assert rules["lint"] == ["clippy", "rustdoc", "fmt-check"]
    assert "build" in rules["run"]
    mk = _read("Makefile")
    assert "clippy --workspace $(CLIPPY_TARGETS)" in mk and "-D warnings" in mk
    assert "CLIPPY_TARGETS := --lib --bins --tests --examples --benches" in mk
    # The core's docs with the workspace's feature resolution; the binding's
    # library is excluded from `cargo doc` by its manifest.
    assert 'RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps' in mk
    assert re.search(r"(?m)^doc = false$", _read("rust/python/Cargo.toml"))
    assert "fmt --all --check" in mk
    assert "maturin develop --release" in mk
    assert "-m pytest" in mk
    assert "MICROJAX_FAKE_GPU=1 $(VPY) -m pytest" in mk


def test_docs_stage_builds_the_site_strictly():
    # `make docs` (a `make test` stage) builds the site with warnings as errors
    # on the `ci` extension, into a git-ignored directory; the tool is pinned.
    rules = _make_rules()
    assert "build-ci" in rules["docs"] and "docs-site" in rules["docs"]
    mk = _read("Makefile")
    recipe = mk.split("\ndocs-site:", 1)[1].split("\n\n", 1)[0]
    assert "$(call stage,docs,$(TEST_ENV) $(VPY) -m mkdocs build --strict" in recipe
    # --quiet drops warnings before --strict counts them.
    assert "--quiet" not in recipe and " -q" not in recipe
    config = _read("mkdocs.yml")
    assert re.search(r"^site_dir: target/docs$", config, re.M) and "/target" in _read(".gitignore").split()
    pins = {line.split("==")[0].lower() for line in _read("requirements-dev.txt").splitlines() if "==" in line}
    assert {"mkdocs", "mkdocstrings", "mkdocstrings-python", "pymdown-extensions"} <= pins


def test_ci_script_runs_make_test():
    path = os.path.join(ROOT, ".ci", "run")
    text = _read(".ci/run")
    assert "set -euo pipefail" in text
    assert re.search(r"^\s*make test\b", text, re.M)
    assert os.access(path, os.X_OK)


def test_readme_documents_the_two_commands():
    text = _read("README.md")
    assert "make run" in text and "make test" in text
    assert "import microjax_rs as jax" in text
