"""bfloat16 comes from ml_dtypes, a runtime dependency: with it, bfloat16
arrays hold bfloat16 values; without it (a broken install), every way of
asking for bfloat16 raises a TypeError naming ml_dtypes instead of quietly
making float32 arrays."""
import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np

import microjax_rs.numpy as jnp
import pytest

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_bfloat16_arrays_are_bfloat16():
    x = jnp.ones(3, jnp.bfloat16)
    assert x.dtype == np.dtype(ml_dtypes.bfloat16)
    y = jnp.asarray([1.0, 2.5, 3.140625], dtype="bfloat16") * 2
    assert y.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(np.asarray(y, np.float32), [2.0, 5.0, 6.28125])
    assert jnp.zeros(2, dtype=jnp.bfloat16).astype(jnp.float32).dtype == np.float32


def test_without_ml_dtypes_bfloat16_raises_instead_of_float32():
    script = textwrap.dedent("""
        import sys
        sys.modules["ml_dtypes"] = None  # as if ml_dtypes were not installed
        import microjax_rs.numpy as jnp

        attempts = {
            "ones(jnp.bfloat16)": lambda: jnp.ones(2, jnp.bfloat16),
            "ones('bfloat16')": lambda: jnp.ones(2, "bfloat16"),
            "zeros(dtype=)": lambda: jnp.zeros(2, dtype=jnp.bfloat16),
            "asarray": lambda: jnp.asarray([1.0], jnp.bfloat16),
            "astype": lambda: jnp.arange(3.0).astype(jnp.bfloat16),
            "scalar type": lambda: jnp.bfloat16(1.0),
        }
        for name, make in attempts.items():
            try:
                out = make()
            except TypeError as e:
                assert "ml_dtypes" in str(e), (name, str(e))
            else:
                raise AssertionError(f"{name} made {out.dtype} instead of raising")
        assert jnp.ones(2, jnp.float32).dtype == "float32"
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr


def test_older_ml_dtypes_without_some_narrow_types_imports():
    # The newest ml_dtypes for Python 3.9 (0.5.x) has no int1/uint1: the
    # package still imports, bfloat16 works, the missing names stay names.
    script = textwrap.dedent("""
        import ml_dtypes
        for name in ("int1", "uint1"):
            if hasattr(ml_dtypes, name):
                delattr(ml_dtypes, name)
        import numpy as np
        import microjax_rs.numpy as jnp

        assert jnp.int1.dtype is None and jnp.uint1.dtype is None
        assert jnp.int2.dtype == np.dtype(ml_dtypes.int2)
        for t in (jnp.int1, jnp.uint1):
            try:
                t(1)
            except TypeError:
                pass
            else:
                raise AssertionError(t)
        y = jnp.asarray([1.0, 2.5], dtype=jnp.bfloat16) * 2
        assert y.dtype == np.dtype(ml_dtypes.bfloat16)
        assert np.asarray(y, np.float32).tolist() == [2.0, 5.0]
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
