"""Docstrings of the public API.

* Coverage: the public callables (functions and callable objects; classes,
  modules and typing aliases are not counted) of `microjax_rs`, `numpy`
  (with `linalg` and `fft`), `lax` (with `linalg`), `nn` (with
  `initializers`), `random` and every public `scipy` module have a docstring
  of their own (one inherited from a generic parent class does not count).
  Each of those six namespaces stays at or above `NAMESPACE_FLOOR`, all
  together at or above `TOTAL_FLOOR`; a failure lists the names missing one.
* Examples: every ``>>>`` example in those docstrings (of objects defined in
  microjax_rs, not NumPy functions it re-exports) runs as a doctest and
  prints exactly what the docstring shows; the main entry points
  (`ENTRY_POINTS`) must have at least one example.
"""
import doctest
import importlib
import importlib.util
import os
import types

import pytest

import microjax_rs

# The namespaces of the coverage count, grouped by the six the floor is per,
# and what counts as a public callable with its own docstring: one definition,
# in tools/docstring_coverage.py (the table in docs/COMPATIBILITY.md).
_TOOL_SPEC = importlib.util.spec_from_file_location(
    "docstring_coverage",
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "docstring_coverage.py"))
_tool = importlib.util.module_from_spec(_TOOL_SPEC)
_TOOL_SPEC.loader.exec_module(_tool)
GROUPS = _tool.GROUPS
_public_callables = _tool.public_callables
_has_own_doc = _tool.has_own_doc

# Coverage reached when this test was written: 100% in every namespace (921
# public callables). The floors leave room for a few new functions added while
# their docs are written; the failure message lists every name missing one.
NAMESPACE_FLOOR = 1.0
TOTAL_FLOOR = 1.0

# Entry points whose docstring must carry a runnable example.
ENTRY_POINTS = [
    "jit", "grad", "value_and_grad", "vmap", "jacfwd", "jacrev", "hessian", "jvp", "vjp",
    "custom_jvp", "custom_vjp",
    "lax.scan", "lax.cond", "lax.switch", "lax.while_loop", "lax.fori_loop",
    "lax.broadcast_in_dim", "lax.dot_general",
    "numpy.array", "numpy.asarray", "numpy.arange", "numpy.linspace", "numpy.einsum", "numpy.where",
    "numpy.sum", "numpy.mean", "numpy.cumsum", "numpy.take", "numpy.sort", "numpy.matmul",
    "numpy.linalg.norm", "numpy.linalg.solve",
    "random.key", "random.PRNGKey", "random.split", "random.uniform", "random.normal",
    "nn.relu", "nn.sigmoid", "nn.softmax", "nn.one_hot",
    "scipy.special.expit",
]


def _modules(group):
    names = GROUPS[group] if GROUPS[group] is not None else _tool.scipy_modules()
    mods = []
    for name in names:
        try:
            mods.append(importlib.import_module(name))
        except ModuleNotFoundError:
            if name != "microjax_rs.numpy.fft":  # optional until it exists
                raise
    return mods


def _public_names(mod):
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    return names


def _coverage(group):
    documented, missing = 0, []
    for mod in _modules(group):
        for name, obj in _public_callables(mod):
            if _has_own_doc(obj):
                documented += 1
            else:
                missing.append(f"{mod.__name__}.{name}")
    return documented, missing


@pytest.mark.parametrize("group", list(GROUPS))
def test_namespace_docstring_coverage(group):
    documented, missing = _coverage(group)
    total = documented + len(missing)
    assert total > 0
    assert documented / total >= NAMESPACE_FLOOR, (
        f"{group}: {documented}/{total} public callables documented; missing: {', '.join(missing)}")


def test_total_docstring_coverage():
    documented = total = 0
    missing = []
    for group in GROUPS:
        d, m = _coverage(group)
        documented += d
        total += d + len(m)
        missing += m
    assert total > 800  # the count walks the whole public API
    assert documented / total >= TOTAL_FLOOR, (
        f"{documented}/{total} public callables documented; missing: {', '.join(missing)}")


def test_docstring_test_tells_own_from_inherited():
    # A callable instance with only its class's text counts as undocumented;
    # a per-function text set on the instance (as the jnp ufuncs have) counts.
    class Generic:
        """A generic callable."""

        def __call__(self):
            return 0

    class Specific(Generic):
        pass

    assert not _has_own_doc(Specific())
    own = Specific()
    own.__doc__ = "What this one computes."
    assert _has_own_doc(own)

    def bare():
        return 0

    assert not _has_own_doc(bare)


def _resolve(path):
    obj = microjax_rs
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _doctests():
    """One DocTest per public docstring that holds examples (deduplicated)."""
    finder = doctest.DocTestFinder(recurse=False, exclude_empty=True)
    seen, tests = set(), []
    for group in GROUPS:
        for mod in _modules(group):
            for name in _public_names(mod):
                obj = getattr(mod, name, None)
                if obj is None or isinstance(obj, types.ModuleType) or id(obj) in seen:
                    continue
                seen.add(id(obj))
                if ">>>" not in (getattr(obj, "__doc__", None) or ""):
                    continue
                if not str(getattr(obj, "__module__", "")).startswith("microjax_rs"):
                    continue  # NumPy's own functions re-exported (array_repr, ...): their examples are NumPy's
                for test in finder.find(obj, f"{mod.__name__}.{name}", globs={}):
                    if test.examples:
                        tests.append(test)
    return tests


_DOCTESTS = _doctests()


def test_doctests_found():
    assert len(_DOCTESTS) >= len(ENTRY_POINTS)


@pytest.mark.parametrize("test", _DOCTESTS, ids=[t.name for t in _DOCTESTS])
def test_docstring_examples_run(test):
    runner = doctest.DocTestRunner(optionflags=0)  # outputs compared exactly
    out = []
    # The examples show the default 32-bit dtypes and host arrays (the suite
    # may run with x64 on, or with a GPU as the default device).
    x64 = microjax_rs.config.read("jax_enable_x64")
    microjax_rs.config.update("jax_enable_x64", False)
    try:
        with microjax_rs.default_device(microjax_rs.devices("cpu")[0]):
            runner.run(test, out=out.append)
    finally:
        microjax_rs.config.update("jax_enable_x64", x64)
    assert runner.failures == 0, "".join(out)
    assert runner.tries == len(test.examples)


@pytest.mark.parametrize("path", ENTRY_POINTS)
def test_entry_point_has_example(path):
    obj = _resolve(path)
    tests = doctest.DocTestFinder(recurse=False).find(obj, path, globs={})
    assert sum(len(t.examples) for t in tests) >= 1, f"{path}: no >>> example in its docstring"
