"""Live host memory: the extension counts every allocation it makes
(`rust/core/src/array/live.rs`), `jax.devices("cpu")[0].memory_stats()`
reports it, `config.update("microjax_max_live_bytes", n)` bounds the whole
process (kernel scratch included) and an exported program's
`Limits.max_bytes` bounds what one eager call adds. Every refusal is a
`MemoryError` raised before the memory is taken, and the process goes on."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import export
from microjax_rs.config import config

MiB = 2 ** 20
CPU = jax.devices("cpu")[0]


def stats():
    s = CPU.memory_stats()
    assert s is not None, "the extension's allocator counts live bytes"
    return s


@pytest.fixture
def live_budget():
    """Sets the process budget to `extra` bytes above what is live now;
    removed afterwards. The host buffer pool is emptied first: buffers it
    keeps from earlier tests (fused passes' and large products' outputs)
    count as live but are given up before a refusal, so they would add to
    the room."""
    def set_budget(extra):
        jax.debug.buffer_pool_clear()
        limit = stats()["bytes_in_use"] + extra
        config.update("microjax_max_live_bytes", limit)
        return limit
    yield set_budget
    config.update("microjax_max_live_bytes", None)


def test_memory_stats_follow_arrays():
    before = stats()
    x = jnp.zeros(4 * MiB, jnp.float32)  # 16 MiB
    x.block_until_ready()
    held = stats()
    assert held["bytes_in_use"] - before["bytes_in_use"] >= 16 * MiB
    assert held["peak_bytes_in_use"] >= held["bytes_in_use"]
    assert "bytes_limit" not in held
    del x
    assert stats()["bytes_in_use"] <= held["bytes_in_use"] - 16 * MiB + MiB


def test_sort_scratch_counts_against_the_process_budget(live_budget):
    x = jnp.asarray(np.random.default_rng(0).standard_normal(4 * MiB).astype(np.float32))
    # The 16 MiB output fits 48 MiB; the sort's keys and permutation do not.
    limit = live_budget(48 * MiB)
    assert stats()["bytes_limit"] == limit
    with pytest.raises(MemoryError, match="microjax_max_live_bytes"):
        jnp.sort(x)
    # Usable afterwards, and with room the same sort is right.
    config.update("microjax_max_live_bytes", None)
    np.testing.assert_array_equal(np.asarray(jnp.sort(x)), np.sort(np.asarray(x)))


def test_the_process_budget_bounds_the_peak(live_budget):
    x = jnp.ones(MiB, jnp.float32)
    jax.block_until_ready(x)
    jax.devices("cpu")  # nothing lazily allocated below
    from microjax_rs import _core
    _core.reset_peak_live_bytes()
    limit = live_budget(64 * MiB)
    outcomes = []
    for n in (MiB // 4, MiB, 8 * MiB, 32 * MiB):
        try:
            y = jnp.cumsum(jnp.tanh(jnp.ones(n, jnp.float32) * 2.0))
            jax.block_until_ready(y)
            del y
            outcomes.append("ran")
        except MemoryError:
            outcomes.append("refused")
    assert outcomes[:2] == ["ran", "ran"] and outcomes[-1] == "refused", outcomes
    # Refusals happen before allocating: the peak never passed the budget
    # (a small allocation made without a check may add a little).
    assert stats()["peak_bytes_in_use"] <= limit + MiB
    del x


def test_jit_under_the_process_budget(live_budget):
    f = jax.jit(lambda x: jnp.sort(x * 2.0) + 1.0)
    small = jnp.ones(1024, jnp.float32)
    np.testing.assert_allclose(np.asarray(f(small)), 3.0)
    big = jnp.ones(8 * MiB, jnp.float32)  # 32 MiB
    live_budget(40 * MiB)
    with pytest.raises(MemoryError):
        f(big)
    np.testing.assert_allclose(np.asarray(f(small)), 3.0)


def test_config_rejects_bad_budgets():
    with pytest.raises(TypeError):
        config.update("microjax_max_live_bytes", 1.5)
    with pytest.raises(ValueError):
        config.update("microjax_max_live_bytes", 0)
    with pytest.raises(ValueError):
        config.update("microjax_max_live_bytes", 2 ** 64)
    config.update("microjax_max_live_bytes", None)
    assert "bytes_limit" not in stats()


def _sort_program(n):
    x = jnp.zeros(n, jnp.float32)
    return export.export(jax.jit(lambda x: jnp.sort(x)))(x)


def test_exported_call_is_bounded_by_its_max_bytes():
    n = MiB  # 4 MiB in, 4 MiB out: 8 MiB named; the sort's scratch is more
    exp = _sort_program(n)
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    tight = export.deserialize(exp.serialize(), limits=export.Limits(max_bytes=10 * MiB))
    with pytest.raises(MemoryError, match="Limits.max_bytes"):
        tight.call(x)
    roomy = export.deserialize(exp.serialize(), limits=export.Limits(max_bytes=512 * MiB))
    np.testing.assert_array_equal(np.asarray(roomy.call(x)), np.sort(x))
    # The tight program still runs inputs that fit.
    small = _sort_program(1024)
    tight_small = export.deserialize(small.serialize(), limits=export.Limits(max_bytes=10 * MiB))
    y = np.arange(1024, 0, -1).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(tight_small.call(y)), np.sort(y))


def test_sort_by_one_key_takes_one_row_of_scratch():
    """A sort by one real key rewrites its output row by row: the peak it
    adds is the output and one row of 8-byte words (3x a float32 input),
    and the result is NumPy's stable sort, NaNs last."""
    from microjax_rs import _core
    x = np.random.default_rng(2).standard_normal(4 * MiB).astype(np.float32)  # 16 MiB
    x[::97] = np.nan
    xj = jnp.asarray(x)
    jnp.sort(xj[:8]).block_until_ready()
    _core.reset_peak_live_bytes()
    base = stats()["bytes_in_use"]
    y = jnp.sort(xj)
    y.block_until_ready()
    added = stats()["peak_bytes_in_use"] - base
    assert 16 * MiB <= added <= 50 * MiB, added / MiB
    np.testing.assert_array_equal(np.asarray(y), np.sort(x, kind="stable"))


@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16])
def test_half_precision_scratch_is_checked_before_widening(live_budget, dtype):
    """f16/bf16 kernels compute in f32 copies of their operands: those
    copies count against the budget before they are made."""
    from microjax_rs import _core
    x = jnp.ones(8 * MiB, dtype)  # 16 MiB; its f32 copy and result: 64 MiB
    jax.block_until_ready(x)
    _core.reset_peak_live_bytes()
    limit = live_budget(40 * MiB)
    for f in (jnp.tanh, lambda v: v * v, jnp.max, jnp.argmax, jnp.cumsum):
        with pytest.raises(MemoryError):
            jax.block_until_ready(f(x))
    assert stats()["peak_bytes_in_use"] <= limit + MiB
    config.update("microjax_max_live_bytes", None)
    assert float(jnp.tanh(x[:4])[0]) == pytest.approx(np.tanh(1.0), rel=1e-2)
