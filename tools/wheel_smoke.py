"""Smoke test of an installed microjax_rs wheel (`make wheel` runs it in a fresh
venv, from a directory outside the source tree, with no Rust toolchain on PATH).

    python -I tools/wheel_smoke.py [SOURCE_ROOT]

Checks that the package is imported from the environment's site-packages (not
from SOURCE_ROOT), that jit, grad and vmap of a small function give the
expected values, and that bfloat16 arrays (through ml_dtypes) round-trip.
"""
import math
import os
import shutil
import sys
import sysconfig

import numpy as np


def check(cond, what):
    if not cond:
        raise SystemExit(f"wheel smoke test FAILED: {what}")


def main(argv):
    source_root = os.path.realpath(argv[1]) if len(argv) > 1 else None
    for tool in ("cargo", "rustc"):
        check(shutil.which(tool) is None, f"{tool} is on PATH ({shutil.which(tool)})")

    import microjax_rs as jax
    import microjax_rs.numpy as jnp

    pkg = os.path.realpath(os.path.dirname(jax.__file__))
    site = os.path.realpath(sysconfig.get_paths()["purelib"])
    check(pkg.startswith(site + os.sep), f"imported from {pkg}, not from {site}")
    if source_root is not None:
        check(not pkg.startswith(source_root + os.sep), f"imported from the source tree ({pkg})")
    core_file = jax._core.__file__
    check(core_file.endswith(".abi3.so"), f"extension is not abi3: {core_file}")
    check(isinstance(jax.__version__, str) and jax.__version__[:1].isdigit(), f"__version__ {jax.__version__!r}")

    def f(x, w):
        return jnp.sum(jnp.tanh(x * w) ** 2)

    x = jnp.arange(4.0, dtype=jnp.float32) / 4
    w = jnp.float32(0.5)
    xs = np.arange(4.0, dtype=np.float32) / 4
    expect = float(np.sum(np.tanh(xs * 0.5) ** 2))
    got = float(jax.jit(f)(x, w))
    check(math.isclose(got, expect, rel_tol=1e-6), f"jit: {got} != {expect}")

    # d/dw sum(tanh(x w)^2) = sum(2 tanh(x w) (1 - tanh(x w)^2) x)
    t = np.tanh(xs * 0.5)
    dexpect = float(np.sum(2 * t * (1 - t * t) * xs))
    dgot = float(jax.jit(jax.grad(f, argnums=1))(x, w))
    check(math.isclose(dgot, dexpect, rel_tol=1e-5), f"grad: {dgot} != {dexpect}")

    ws = jnp.array([0.0, 0.5, 1.0], dtype=jnp.float32)
    per_w = np.asarray(jax.vmap(jax.grad(f, argnums=1), in_axes=(None, 0))(x, ws))
    check(per_w.shape == (3,), f"vmap shape {per_w.shape}")
    for i, wv in enumerate([0.0, 0.5, 1.0]):
        t = np.tanh(xs * wv)
        e = float(np.sum(2 * t * (1 - t * t) * xs))
        check(math.isclose(float(per_w[i]), e, rel_tol=1e-5, abs_tol=1e-7), f"vmap[{i}]: {per_w[i]} != {e}")

    import ml_dtypes

    b = jnp.array([1.0, 2.5, -3.0], dtype=jnp.bfloat16)
    check(b.dtype == np.dtype(ml_dtypes.bfloat16), f"bfloat16 dtype {b.dtype}")
    doubled = np.asarray(jax.jit(lambda v: v * 2)(b))
    check(doubled.dtype == np.dtype(ml_dtypes.bfloat16), f"bfloat16 result dtype {doubled.dtype}")
    check(doubled.astype(np.float32).tolist() == [2.0, 5.0, -6.0], f"bfloat16 values {doubled}")

    print(f"wheel smoke test passed: microjax_rs {jax.__version__} on Python "
          f"{sys.version.split()[0]} from {pkg}")


if __name__ == "__main__":
    main(sys.argv)
