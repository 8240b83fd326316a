"""Static typing of the public API (`py.typed` and the `.pyi` stubs).

* One `mypy --strict` run over the stubs, the typed example program
  (`tests/typing/typed_example.py`: an MLP with a params pytree, a jit+grad
  training step, vmap, scan, custom_jvp, control flow) and the wrong uses in
  `tests/typing/typed_errors.py`: the stubs and the example must be clean, and
  each line of the wrong uses marked `# error: <code>` must get exactly that
  error, so the check fails when the stubs stop catching a mistake.
  `--follow-imports=silent` leaves the package's unstubbed implementation
  modules unreported, as mypy treats any installed package.
* The example program runs, with the numbers it computes checked.

Typing does not depend on the device: the mypy run skips in the stand-in GPU
stage (`MICROJAX_FAKE_GPU=1`), which would only repeat it."""
import hashlib
import os
import re
import subprocess
import sys
import tempfile

import pytest

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "python", "microjax_rs")
EXAMPLE = os.path.join(ROOT, "tests", "typing", "typed_example.py")
ERRORS = os.path.join(ROOT, "tests", "typing", "typed_errors.py")


def _stub_files():
    out = [os.path.join(PKG, "typing.py")]
    for d, _dirs, files in os.walk(PKG):
        out += [os.path.join(d, f) for f in files if f.endswith(".pyi")]
    return sorted(out)


def _expected_errors():
    expected = {}
    with open(ERRORS, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            m = re.search(r"# error: ([a-z-]+)\s*$", line)
            if m:
                expected[lineno] = m.group(1)
    return expected


def test_package_ships_py_typed_and_stubs():
    assert os.path.isfile(os.path.join(PKG, "py.typed"))
    stubs = {os.path.relpath(p, PKG) for p in _stub_files()}
    for rel in ["__init__.pyi", "numpy/__init__.pyi", "numpy/linalg.pyi", "lax/__init__.pyi",
                "random/__init__.pyi", "nn/__init__.pyi", "tree_util.pyi"]:
        assert rel in stubs, rel


@pytest.mark.skipif(os.environ.get("MICROJAX_FAKE_GPU") == "1",
                    reason="typing does not depend on the device; the CPU stage runs mypy")
def test_mypy_strict_accepts_example_and_rejects_wrong_uses():
    pytest.importorskip("mypy", reason="mypy is not installed (pinned in requirements-dev.txt)")
    from mypy.version import __version__ as mypy_version

    # A cache kept across runs (keyed by mypy's version): the first run reads
    # NumPy's stubs (about 10 s), later ones about 1 s.
    # Keyed by the checkout too: mypy's cache records each module's path, so a
    # cache shared by two checkouts would report the other one's files.
    checkout = hashlib.sha256(os.path.realpath(ROOT).encode()).hexdigest()[:12]
    cache = os.path.join(tempfile.gettempdir(), f"microjax_rs-mypy-cache-{mypy_version}-{checkout}")
    env = dict(os.environ, MYPYPATH=os.path.join(ROOT, "python"))
    cmd = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
           "--show-error-codes", "--no-color-output", "--cache-dir", cache,
           EXAMPLE, ERRORS, *_stub_files()]
    workdir = tempfile.gettempdir()
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=300)
    got, other = {}, []
    for line in proc.stdout.splitlines():
        m = re.match(r"(.*?):(\d+): error: .*\[([a-z-]+)\]$", line)
        if m and os.path.samefile(os.path.join(workdir, m.group(1)), ERRORS):
            got.setdefault(int(m.group(2)), []).append(m.group(3))
        elif ": error:" in line:
            other.append(line)
    assert not other, "mypy --strict errors outside the wrong uses:\n" + "\n".join(other)
    expected = _expected_errors()
    assert len(expected) >= 6
    assert got == {line: [code] for line, code in expected.items()}, proc.stdout + proc.stderr
    assert proc.returncode == 1  # the wrong uses fail the run


def test_typed_example_runs():
    import importlib.util

    spec = importlib.util.spec_from_file_location("typed_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    r = mod.main()
    assert r["last_loss"] < r["first_loss"] / 5  # training reduces the loss
    assert r["vmap_err"] < 1e-5 and r["rebuilt_err"] == 0.0
    assert r["scan_carry"] == 6.0 and r["scan_last"] == 12.0  # cumsum of 0..3, doubled ys
    assert abs(r["softplus_tangent"] - 0.5) < 1e-6  # sigmoid(0)
    assert r["hessian_00"] == 6.0 and r["remat_grad_sum"] == 3.0 and r["jac_trace"] == 4.0
    assert r["vjp_sum"] == 2.0  # cos(0) summed over 2
    assert r["while_total"] == 175.0 and r["num_leaves"] == 4.0
