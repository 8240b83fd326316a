"""Release metadata: one version (the Cargo workspace's) for the wheel, the
extension and `microjax_rs.__version__`; a changelog entry for it; the PyPI
metadata; and `make wheel`'s portable build and checks."""
import os
import re

import pytest

from test_build import ROOT, _read, _toml  # the build tests' readers of repository files

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent


def _cargo_version():
    # [workspace.package] version, read without tomllib (any Python).
    section = _read("Cargo.toml").split("[workspace.package]", 1)[1].split("\n[", 1)[0]
    m = re.search(r'^version\s*=\s*"([^"]+)"', section, re.M)
    assert m, "Cargo.toml: no [workspace.package] version"
    return m.group(1)


def test_cargo_version_is_the_only_version():
    version = _cargo_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    for crate in ("rust/core/Cargo.toml", "rust/python/Cargo.toml"):
        assert re.search(r"^version\.workspace\s*=\s*true", _read(crate), re.M), crate
    project = _toml("pyproject.toml")["project"]
    assert "version" not in project and "version" in project["dynamic"]  # maturin reads Cargo.toml


def test_extension_and_package_report_the_cargo_version():
    core = pytest.importorskip("microjax_rs._core")
    import microjax_rs

    assert core.__version__ == _cargo_version()
    assert microjax_rs.__version__ == _cargo_version()


def test_package_source_has_no_version_literal():
    src = _read("python/microjax_rs/__init__.py")
    assert not re.search(r'^__version__[^=]*=\s*["\']', src, re.M), "__version__ must come from the extension"
    assert 'env!("CARGO_PKG_VERSION")' in _read("rust/python/src/lib.rs")


def test_changelog_has_an_entry_for_the_version():
    changelog = _read("CHANGELOG.md")
    assert changelog.startswith("# Changelog")
    assert "Keep a Changelog" in changelog
    version = re.escape(_cargo_version())
    assert re.search(rf"^## \[{version}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M), \
        f"CHANGELOG.md has no '## [{_cargo_version()}] - YYYY-MM-DD' entry"


def test_pypi_metadata():
    project = _toml("pyproject.toml")["project"]
    readme = project["readme"]
    assert readme != "README.md"  # the developer guide is not the PyPI description
    text = _read(readme)
    assert "pip install microjax_rs" in text
    assert "make run" not in text and "make test" not in text  # no developer set-up
    assert "Supported platforms" in text
    assert project["description"] and project["license"]
    classifiers = project["classifiers"]
    assert "Typing :: Typed" in classifiers
    assert "Operating System :: POSIX :: Linux" in classifiers
    for minor in range(9, 14):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers
    assert "License :: OSI Approved :: Apache Software License" in classifiers
    assert len(set(classifiers)) == len(classifiers)
    for url in project.get("urls", {}).values():  # PyPI needs absolute, real addresses
        assert url.startswith("https://"), url
    try:
        import trove_classifiers
    except ImportError:
        return
    unknown = [c for c in classifiers if c not in trove_classifiers.classifiers]
    assert not unknown, unknown


def test_make_wheel_is_portable_and_checked():
    mk = _read("Makefile")
    wheel = mk.split("\nwheel:", 1)[1].split("\n\n", 1)[0]
    assert "maturin build --release" in wheel
    assert "--zig" in wheel and "--compatibility manylinux2014" in wheel  # glibc 2.17, whatever the host's
    assert "auditwheel show" in wheel and "manylinux_2_17_x86_64" in wheel
    assert "abi3audit --strict" in wheel
    assert "tools/wheel_smoke.py" in wheel and "-m venv" in wheel
    assert "requirements-wheel.txt" in mk
    assert os.path.isfile(os.path.join(ROOT, "tools", "wheel_smoke.py"))


def _pins(rel):
    lines = [line.split("#")[0].strip() for line in _read(rel).splitlines()]
    return {line.split("==")[0].lower().replace("_", "-"): line.split("==")[1] for line in lines if line}


def test_wheel_tools_are_pinned_apart_from_the_dev_requirements():
    wheel = _pins("requirements-wheel.txt")
    for line in _read("requirements-wheel.txt").splitlines():
        line = line.split("#")[0].strip()
        if line:
            assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][A-Za-z0-9.]*", line), f"unpinned: {line}"
    assert {"ziglang", "auditwheel", "abi3audit"} <= set(wheel)
    dev = _pins("requirements-dev.txt")
    assert not {"ziglang", "auditwheel", "abi3audit"} & set(dev)  # `make test`'s venv stays as it is
    for name in set(wheel) & set(dev):  # one version per package in .venv
        assert wheel[name] == dev[name], name
