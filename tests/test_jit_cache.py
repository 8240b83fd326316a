"""`jit`'s trace cache: keyed weakly on the wrapped function (and the jit
options, the input pytree structure and avals, static argument values and
config), shared by fresh `jit(f)` wrappers of one `f`, dropped with `f`,
LRU-bounded (`microjax_jit_cache_size`) and emptied by `clear_caches`.
Traces are counted with a Python side effect inside the traced function."""
import functools
import gc
import weakref

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import debug


def arr(data, dtype=np.float32):
    return jnp.asarray(np.asarray(data, dtype))


# The Rust fast path serves calls whose results stay on the host.
FAST_PATH = jax.default_backend() == "cpu"


def values(a):
    """`a` as nested Python lists (an Array, or a GpuArray on a GPU device)."""
    return np.asarray(a).tolist()


@pytest.fixture
def cache_size():
    """Sets `microjax_jit_cache_size` for one test (restored to the default)."""
    jax.clear_caches()
    yield lambda n: jax.config.update("microjax_jit_cache_size", n)
    jax.config.update("microjax_jit_cache_size", 4096)


def test_default_bound_and_clear_caches_is_public():
    assert jax.config.read("microjax_jit_cache_size") == 4096
    assert debug.jit_cache_stats()["capacity"] == 4096
    assert "clear_caches" in jax.__all__
    jax.jit(lambda x: x + 1.0)(arr([1.0]))
    assert jax.clear_caches() is None
    stats = debug.jit_cache_stats()
    assert stats["entries"] == 0 and stats["fast_entries"] == 0


def test_fresh_jit_of_the_same_function_reuses_its_traces():
    traces = []

    def f(x, y):
        traces.append(1)
        return x * 2.0 + y

    x = arr(np.arange(8))
    want = np.arange(8, dtype=np.float32) * 3.0
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x, x)), want)
    assert len(traces) == 1
    for _ in range(3):  # fresh wrappers: the fast path finds the entry
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(x, x)), want)
    assert len(traces) == 1
    # The Python path (keyword arguments, a pytree) shares entries too.
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(x, y=x)), want)
    assert len(traces) == 2
    for _ in range(2):
        out = jax.jit(lambda d: f(d["x"], d["y"]))({"x": x, "y": x})
        np.testing.assert_array_equal(np.asarray(out), want)
    assert len(traces) == 4  # two lambdas: two functions, two keys


_OFFSET = 0.0


def _uses_global(x):
    return x + _OFFSET


def test_changed_global_is_seen_only_after_clear_caches():
    # JAX's "pure functions" example: a jitted function reads a global once,
    # when it is traced; fresh jit wrappers reuse that trace.
    global _OFFSET
    _OFFSET = 0.0
    try:
        jax.clear_caches()
        assert float(jax.jit(_uses_global)(4.0)) == 4.0
        x = arr([1.0, 2.0])
        jf = jax.jit(_uses_global)
        assert values(jf(x)) == [1.0, 2.0]
        assert values(jf(x)) == [1.0, 2.0]  # now on the fast path
        _OFFSET = 10.0
        assert float(jax.jit(_uses_global)(5.0)) == 5.0  # the cached trace
        assert values(jax.jit(_uses_global)(x)) == [1.0, 2.0]
        assert values(jf(x)) == [1.0, 2.0]
        # A new input shape traces again and reads the global now.
        assert values(jax.jit(_uses_global)(arr([4.0]))) == [14.0]
        jax.clear_caches()
        assert float(jax.jit(_uses_global)(5.0)) == 15.0
        assert values(jf(x)) == [11.0, 12.0]  # the fast path was emptied too
        assert values(jax.jit(_uses_global)(x)) == [11.0, 12.0]
    finally:
        _OFFSET = 0.0


def test_entries_die_with_the_function():
    jax.clear_caches()
    gc.collect()
    functions = debug.jit_cache_stats()["functions"]

    def make():
        def f(x):
            return jnp.sin(x) * 2.0

        return f

    f = make()
    ref = weakref.ref(f)
    jf = jax.jit(f)
    x = arr(np.linspace(0.0, 1.0, 8))
    jf(x), jf(x[:3]), jf(x=x)
    stats = debug.jit_cache_stats()
    assert stats["entries"] == 3 and stats["fast_entries"] == (2 if FAST_PATH else 0)
    assert stats["functions"] == functions + 1
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), np.sin(np.asarray(x)) * 2.0, rtol=1e-6)
    del f, jf
    gc.collect()
    assert ref() is None
    stats = debug.jit_cache_stats()
    assert stats["entries"] == 0 and stats["fast_entries"] == 0
    assert stats["functions"] == functions


def test_lru_bound_evicts_least_recently_used_first(cache_size):
    cache_size(2)
    traces = []

    def f(x):
        traces.append(x.shape[0])
        return x + 1.0

    jf = jax.jit(f)
    a, b, c = (arr(np.zeros(n)) for n in (1, 2, 3))
    evictions = debug.jit_cache_stats()["evictions"]
    jf(a), jf(b)
    assert traces == [1, 2]
    jf(a)  # a fast-path hit counts as a use: b is now the oldest
    jf(c)
    assert traces == [1, 2, 3]
    assert values(jf(a)) == [1.0]
    assert traces == [1, 2, 3]
    assert values(jf(b)) == [1.0, 1.0]  # evicted: traced again, evicting c
    assert traces == [1, 2, 3, 2]
    jf(a), jf(b)
    assert traces == [1, 2, 3, 2]
    jf(c)
    assert traces == [1, 2, 3, 2, 3]
    stats = debug.jit_cache_stats()
    assert stats["entries"] == 2 and stats["evictions"] == evictions + 3
    # Python-path uses (keyword arguments) count too; the bound is over all
    # functions together.
    g = jax.jit(lambda x: f(x))
    traces.clear()
    jf(x=a), jf(x=b)  # entries: jf(x=a), jf(x=b)
    jf(x=a)
    g(c)  # evicts jf(x=b)
    jf(x=a)
    assert traces == [1, 2, 3]
    jf(x=b)
    assert traces == [1, 2, 3, 2]
    # Shrinking the bound evicts at once; 0 keeps nothing.
    cache_size(1)
    assert debug.jit_cache_stats()["entries"] == 1
    cache_size(0)
    assert debug.jit_cache_stats()["entries"] == 0
    traces.clear()
    for _ in range(3):
        assert values(jf(a)) == [1.0]
    assert traces == [1, 1, 1]


def test_bound_must_be_a_non_negative_int():
    with pytest.raises(ValueError, match="microjax_jit_cache_size"):
        jax.config.update("microjax_jit_cache_size", -1)
    with pytest.raises(TypeError, match="microjax_jit_cache_size"):
        jax.config.update("microjax_jit_cache_size", 1.5)
    assert jax.config.read("microjax_jit_cache_size") == 4096


def test_static_arguments_shapes_dtypes_and_options_still_miss():
    traces = []

    def f(x, n):
        traces.append(n)
        return x * n

    x = arr([1.0, 2.0])
    jf = jax.jit(f, static_argnums=1)
    assert values(jf(x, 2)) == [2.0, 4.0]
    assert values(jf(x, 3)) == [3.0, 6.0]
    assert traces == [2, 3]
    assert values(jax.jit(f, static_argnums=1)(x, 2)) == [2.0, 4.0]
    assert values(jax.jit(f, static_argnames="n")(x, 3)) == [3.0, 6.0]  # the same options
    assert traces == [2, 3]
    jf(arr([1.0, 2.0, 3.0]), 2)  # shape
    jf(arr([1, 2], np.int32), 2)  # dtype
    jf(arr(1.0), 2)
    jf(1.0, 2)  # weak type
    assert traces == [2, 3, 2, 2, 2, 2]
    jf(np.float32(1.0), 2)  # the aval of arr(1.0)
    assert traces == [2, 3, 2, 2, 2, 2]
    # Without static arguments `n` is traced: other options, other entries.
    traces.clear()
    assert values(jax.jit(f)(x, arr(2.0))) == [2.0, 4.0]
    assert len(traces) == 1 and isinstance(traces[0], jax.core.Tracer)


def test_donating_wrapper_does_not_take_a_non_donating_fast_path():
    def f(x):
        return x * 2.0

    x = arr([1.0, 2.0])
    plain = jax.jit(f)
    plain(x), plain(x)
    assert not x.is_deleted()
    y = arr([3.0, 4.0])
    assert values(jax.jit(f, donate_argnums=0)(y)) == [6.0, 8.0]
    assert y.is_deleted()
    z = arr([5.0, 6.0])
    assert values(jax.jit(f, donate_argnums=0)(z)) == [10.0, 12.0]
    assert z.is_deleted()


class _Model:
    def __init__(self, scale):
        self.scale = scale
        self.traces = 0

    def apply(self, x):
        self.traces += 1
        return x * self.scale

    @functools.partial(jax.jit, static_argnums=0)
    def jitted(self, x):
        self.traces += 1
        return x + self.scale


def test_bound_methods_are_one_key_while_they_live():
    x = arr([1.0, 2.0])
    m = _Model(3.0)
    j1 = jax.jit(m.apply)
    assert values(j1(x)) == [3.0, 6.0] and m.traces == 1
    j2 = jax.jit(m.apply)  # another bound method object, equal to the first
    assert values(j2(x)) == [3.0, 6.0] and m.traces == 1
    other = _Model(5.0)
    assert values(jax.jit(other.apply)(x)) == [5.0, 10.0] and other.traces == 1
    # The entry was keyed on j1's method object: it goes with it, and j2
    # traces again (once) under its own.
    del j1
    gc.collect()
    assert values(j2(x)) == [3.0, 6.0] and m.traces == 2
    assert values(j2(x)) == [3.0, 6.0] and values(j2(x=x)) == [3.0, 6.0]
    assert m.traces == 3


def test_jitted_methods_with_static_self():
    x = arr([1.0, 2.0])
    a, b = _Model(1.0), _Model(10.0)
    assert values(a.jitted(x)) == [2.0, 3.0]
    assert values(a.jitted(x)) == [2.0, 3.0]
    assert values(b.jitted(x)) == [11.0, 12.0]
    assert (a.traces, b.traces) == (1, 1)


def test_partials_are_keyed_on_the_partial_object():
    traces = []

    def scale(k, x):
        traces.append(k)
        return x * k

    x = arr([1.0, 2.0])
    p = functools.partial(scale, 2.0)
    assert values(jax.jit(p)(x)) == [2.0, 4.0]
    assert values(jax.jit(p)(x)) == [2.0, 4.0]
    assert traces == [2.0]
    q = functools.partial(scale, 2.0)  # equal arguments, another object
    assert values(jax.jit(q)(x)) == [2.0, 4.0]
    assert traces == [2.0, 2.0]
    ref = weakref.ref(p)
    del p
    gc.collect()
    assert ref() is None


class _Slotted:
    """A callable that cannot be referenced weakly."""

    __slots__ = ("traces",)

    def __init__(self):
        self.traces = 0

    def __call__(self, x):
        self.traces += 1
        return x - 1.0


def test_callables_without_weak_references_key_on_the_jit_object():
    jax.clear_caches()
    fn = _Slotted()
    x = arr([1.0, 2.0])
    j1 = jax.jit(fn)
    assert values(j1(x)) == [0.0, 1.0] and values(j1(x=x)) == [0.0, 1.0]
    assert values(j1(x)) == [0.0, 1.0] and fn.traces == 2
    j2 = jax.jit(fn)
    assert values(j2(x)) == [0.0, 1.0] and fn.traces == 3
    assert debug.jit_cache_stats()["entries"] == 3
    del j1
    gc.collect()
    assert debug.jit_cache_stats()["entries"] == 1
    assert values(j2(x)) == [0.0, 1.0] and fn.traces == 3
