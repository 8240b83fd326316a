"""Determinism from Python (DESIGN.md "Determinism"): the same programs give
the same bits with 1 and 2 threads. The binding has no thread setting; the
executor's threads are rayon's global pool, sized by RAYON_NUM_THREADS when
the process starts, so each thread count runs in its own interpreter.
The Rust side (rust/core/tests/determinism.rs) covers 1, 2 and 4 threads
per program in one process.

Portable mode (`config.update("microjax_determinism", "portable")`) must also
give the same bits when the SIMD loops are capped to AVX2 or to the scalar
baseline (`MICROJAX_SIMD_LEVEL`, the code paths of other x86-64 CPUs), and
an exported portable program must run to the Python bits from Rust."""
import hashlib
import os
import subprocess
import sys

import numpy as np

import rust_example
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import export, nn

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

SCRIPT = r"""
import hashlib, os, sys
import numpy as np
import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax

jax.config.update("microjax_determinism", os.environ.get("MJ_TEST_DETERMINISM", "default"))

rng = np.random.default_rng(0)
f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
w1, w2, x, y = f32(128, 256) * 0.1, f32(256, 16) * 0.1, f32(256, 128), f32(256, 16)

def loss(w1, w2, x, y):
    return jnp.sum((jnp.tanh(x @ w1) @ w2 - y) ** 2)

@jax.jit
def train_step(w1, w2, x, y):
    l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2, x, y)
    return l, w1 - 0.01 * g1, w2 - 0.01 * g2

big = f32(301, 1003)
elementwise = jax.jit(lambda v: jnp.tanh(v * 2 + 1) * jnp.sin(v) - jnp.exp(-v * v))
reductions = jax.jit(lambda v: (v.sum(), v.sum(0), v.max(1), jnp.mean(v * v), jnp.cumsum(v, 0)))
scan = jax.jit(lambda c, xs: lax.scan(lambda c, x: (jnp.sin(c) * x + c, c.sum()), c, xs))
conv = jax.jit(lambda a, k: lax.conv_general_dilated(a, k, (1, 1), "SAME"))

outs = []
for _ in range(2):  # twice: the first call interprets, the second runs compiled
    outs += train_step(w1, w2, x, y)
    outs.append(elementwise(big))
    outs += reductions(big)
    outs += jax.tree_util.tree_leaves(scan(f32(70000), f32(8, 70000)))
    outs.append(conv(f32(8, 16, 32, 32), f32(32, 16, 3, 3)))
h = hashlib.sha256()
for o in outs:
    h.update(np.ascontiguousarray(np.asarray(o)).tobytes())
print(h.hexdigest())
"""


def _digest(threads, mode="default", level=None):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), MJ_TEST_DETERMINISM=mode)
    env.pop("MICROJAX_SIMD_LEVEL", None)
    if level is not None:
        env["MICROJAX_SIMD_LEVEL"] = level
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_programs_give_the_same_bits_with_one_and_two_threads():
    one, two = _digest(1), _digest(2)
    assert len(one) == len(hashlib.sha256().hexdigest())
    assert one == two


def test_portable_programs_give_the_same_bits_at_every_simd_level_and_thread_count():
    want = _digest(1, "portable")
    for threads, level in [(2, None), (1, "avx2"), (2, "scalar")]:
        assert _digest(threads, "portable", level) == want, (threads, level)


@pytest.fixture
def portable():
    jax.config.update("microjax_determinism", "portable")
    yield
    jax.config.update("microjax_determinism", "default")


def _mlp_inputs():
    rng = np.random.default_rng(1)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return f32(192, 160) * 0.1, f32(160, 24) * 0.1, f32(200, 192)


def _mlp(w1, w2, x):
    h = jnp.tanh(x @ w1)
    return jnp.sum(jnp.exp(-(h @ w2) ** 2), axis=0), nn.logsumexp(h, axis=1)


def _bits(outs):
    return [np.ascontiguousarray(np.asarray(o)).tobytes() for o in outs]


def test_the_determinism_option_is_validated_and_reaches_rust(portable):
    from microjax_rs import _core

    assert _core.get_determinism() == "portable"
    with pytest.raises(ValueError, match="microjax_determinism must be 'default' or 'portable', got 'fast'"):
        jax.config.update("microjax_determinism", "fast")
    assert _core.get_determinism() == "portable"


def test_export_records_the_mode_and_call_runs_in_it(portable):
    args = _mlp_inputs()
    f = jax.jit(_mlp)
    f(*args)
    want = _bits(f(*args))  # compiled, portable
    exp = export.export(f)(*args)
    assert exp.determinism == "portable"
    back = export.deserialize(exp.serialize())
    assert back.determinism == "portable"
    jax.config.update("microjax_determinism", "default")
    assert export.export(f)(*args).determinism == "default"
    # Called with the default mode active, the program still runs portable.
    assert _bits(back.call(*args)) == want


@pytest.mark.skipif(not rust_example.have_cargo(), reason="cargo not available")
def test_an_exported_portable_program_gives_the_python_bits_in_rust(portable, tmp_path):
    args = _mlp_inputs()
    f = jax.jit(_mlp)
    exp = export.export(f)(*args)
    want = _bits(exp.call(*args))
    prog = tmp_path / "prog.mjx"
    prog.write_bytes(exp.serialize())
    paths = []
    for k, a in enumerate(args):
        paths.append(str(tmp_path / f"in{k}.npy"))
        np.save(paths[-1], a)
    # The build `make test`'s cargo-test stage already made of the example.
    res = rust_example.run_exported(["--raw", str(tmp_path), str(prog), *paths])
    assert res.returncode == 0, res.stderr
    got = [(tmp_path / f"output{k}.bin").read_bytes() for k in range(len(want))]
    assert got == want
