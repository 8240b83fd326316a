"""Shared pytest set-up for microjax_rs.

* 64-bit mode: run with ``MICROJAX_ENABLE_X64=1`` (or ``JAX_ENABLE_X64=1``);
  the package reads it at import. Without it, float64/int64 table cases skip.
* ``MICROJAX_FULL=1`` selects the full (slow) tier; tests marked ``full``
  are skipped otherwise so ``make test`` fits CI, and under
  ``MICROJAX_FAKE_GPU=1`` the op table's grad/vmap and name checks and the
  modules marked ``device_independent`` are deselected and its eager and jit
  checks keep one case per record and dtype.
"""
import os
import sys

import pytest

# Every jaxpr traced by the suite is printed canonically, parsed back and
# compared (parse(canonical(j)) == j); see microjax_rs/interpreters/partial_eval.py.
os.environ.setdefault("MICROJAX_CHECK_ROUNDTRIP", "1")

sys.path.insert(0, os.path.dirname(__file__))  # `import op_table` from any rootdir

# MICROJAX_FAKE_GPU=1: the whole suite with a stand-in GPU as the default
# device (tests/fake_gpu.py; programs run on the host), which checks that
# everything routes through the GPU paths and comes back as on a real one.
FAKE_GPU = os.environ.get("MICROJAX_FAKE_GPU", "").strip() in ("1", "true", "yes", "on")
if FAKE_GPU:
    import fake_gpu

    fake_gpu.install(setattr, [])

FULL = os.environ.get("MICROJAX_FULL", "").strip().lower() in ("1", "true", "yes", "on")

# Hypothesis profiles (tests/test_properties.py). "ci" (the default) is
# derandomized so every run draws the same examples; HYPOTHESIS_PROFILE=dev
# draws more, with a fresh seed each run.
try:
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "ci", derandomize=True, deadline=None, max_examples=60, database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    settings.register_profile(
        "dev", deadline=None, max_examples=1000,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # property tests skip themselves without hypothesis
    pass


def pytest_configure(config):
    config.addinivalue_line("markers", "full: slow test, runs only with MICROJAX_FULL=1")
    config.addinivalue_line(
        "markers", "device_independent: the test's behaviour does not depend on the default "
        "device (source layout, packaging, process and signal handling, host kernels); the "
        "stand-in GPU stage (MICROJAX_FAKE_GPU=1) leaves it to the host stage")


def pytest_report_header(config):
    try:
        from op_table import x64_enabled

        mode = f"x64={'on' if x64_enabled() else 'off'}"
    except Exception as e:  # the import failure is reported by the tests themselves
        mode = f"microjax_rs not importable: {type(e).__name__}: {e}"
    return f"microjax_rs: {mode}, tier={'full' if FULL else 'ci'}"


# Under the stand-in GPU the op table's grad/vmap checks repeat what its
# eager and jit checks already route through the device paths (the same
# kernels, on the host), and its name checks run nothing: the CI tier leaves
# them, and the tests marked `device_independent`, to the host stage.
DEVICE_REPEATS = ("test_op_table.py::test_transform[", "test_op_table.py::test_public_name_resolves[")
# The eager and jit checks' device routing (arguments put on the device, one
# program run there, results brought back) does not depend on the case:
# under the stand-in GPU the CI tier keeps the first case of each record and
# dtype (every case runs eagerly and under jit in the host stage).
CASE_CHECKS = ("test_op_table.py::test_jit_matches_eager[", "test_op_table.py::test_eager_matches_numpy[")


def _device_repeat(item, seen):
    if any(r in item.nodeid for r in DEVICE_REPEATS) or "device_independent" in item.keywords:
        return True
    check = next((c for c in CASE_CHECKS if c in item.nodeid), None)
    if check is not None and hasattr(item, "callspec"):
        key = (check, item.callspec.params["rec"].name, item.callspec.params["dtype"])
        if key in seen:
            return True
        seen.add(key)
    return False


def pytest_collection_modifyitems(config, items):
    if FULL:
        return
    if FAKE_GPU:
        seen = set()
        flags = [_device_repeat(it, seen) for it in items]
        repeats = [it for it, r in zip(items, flags) if r]
        if repeats:
            config.hook.pytest_deselected(items=repeats)
            items[:] = [it for it, r in zip(items, flags) if not r]
    skip = pytest.mark.skip(reason="full tier only (set MICROJAX_FULL=1)")
    for item in items:
        if "full" in item.keywords:
            item.add_marker(skip)


def _switched_on(flag):
    """The configuration `flag` on for one test, off again after it."""
    import microjax_rs as jax

    jax.config.update(flag, True)
    yield
    jax.config.update(flag, False)


@pytest.fixture
def x64():
    """64-bit mode for one test (float64 finite-difference checks)."""
    yield from _switched_on("jax_enable_x64")


@pytest.fixture
def debug_nans():
    """`jax_debug_nans` for one test."""
    yield from _switched_on("jax_debug_nans")


@pytest.fixture
def debug_infs():
    """`jax_debug_infs` for one test."""
    yield from _switched_on("jax_debug_infs")
