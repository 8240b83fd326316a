"""Sorting beyond the operator table: staged programs (one `sort` equation
like JAX), gradients through sort / top_k / median, `unique` without `size`
(eager vs NumPy, error under jit), and bad input against JAX's exceptions."""
import warnings

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax


def _prims(fn, *args):
    return [str(e.primitive) for e in jax.make_jaxpr(fn)(*args).jaxpr.eqns]


def test_jnp_sort_stages_one_sort_equation():
    x = np.arange(5.0, dtype=np.float32)
    assert _prims(jnp.sort, x) == ["sort"]
    eqn = jax.make_jaxpr(jnp.sort)(x).jaxpr.eqns[0]
    assert eqn.params == {"dimension": 0, "is_stable": True, "num_keys": 1}
    assert "sort" in _prims(jnp.argsort, x) and "dot_general" not in _prims(jnp.argsort, x)


def test_sort_returns_single_array_or_tuple():
    x = np.array([3.0, 1.0, 2.0], np.float32)
    assert isinstance(lax.sort(x), jax.Array)
    k, v = lax.sort((x, np.arange(3, dtype=np.int32)), num_keys=1)
    np.testing.assert_array_equal(np.asarray(v), [1, 2, 0])
    assert lax.sort_p.multiple_results and lax.top_k_p.multiple_results
    assert not lax.bitcast_convert_type_p.multiple_results


def test_grad_through_sort_slice():
    x = np.array([0.3, -1.0, 2.5, 0.1, 1.7], np.float32)
    g = jax.grad(lambda x: jnp.sort(x)[:3].sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [1.0, 1.0, 0.0, 1.0, 0.0])
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    g = jax.grad(lambda x: (jnp.sort(x) * w).sum())(x)
    # The i-th smallest gets weight w[i].
    np.testing.assert_array_equal(np.asarray(g), w[np.argsort(np.argsort(x))])
    g = jax.jit(jax.grad(lambda x: (jnp.sort(x) * w).sum()))(x)
    np.testing.assert_array_equal(np.asarray(g), w[np.argsort(np.argsort(x))])


def test_grad_through_payload_and_top_k():
    keys = np.array([2.0, 0.0, 1.0], np.float32)
    vals = np.array([10.0, 20.0, 30.0], np.float32)
    w = np.array([1.0, 2.0, 3.0], np.float32)
    g = jax.grad(lambda v: (lax.sort_key_val(keys, v)[1] * w).sum())(vals)
    np.testing.assert_array_equal(np.asarray(g), [3.0, 1.0, 2.0])
    gk = jax.grad(lambda k: (lax.sort_key_val(k, vals)[1] * w).sum())(keys)
    np.testing.assert_array_equal(np.asarray(gk), [0.0, 0.0, 0.0])
    x = np.array([0.5, 3.0, -1.0, 2.0], np.float32)
    g = jax.grad(lambda x: (lax.top_k(x, 2)[0] * np.array([1.0, 10.0], np.float32)).sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [0.0, 1.0, 0.0, 10.0])
    h = jax.hessian(lambda x: (jnp.sort(x) ** 2 * w).sum())(keys)
    np.testing.assert_array_equal(np.asarray(h), np.diag([6.0, 2.0, 4.0]))


def test_vmap_of_grad_of_sort():
    xs = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]], np.float32)
    w = np.array([1.0, 2.0, 3.0], np.float32)
    f = jax.grad(lambda x: (jnp.sort(x) * w).sum())
    got = np.asarray(jax.vmap(f)(xs))
    np.testing.assert_array_equal(got, np.stack([np.asarray(f(x)) for x in xs]))


def test_bitcast_is_not_differentiable():
    g = jax.grad(lambda x: lax.bitcast_convert_type(x, "int32").astype("float32").sum() + x.sum())(
        np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(g), [1.0, 1.0, 1.0])


def test_unique_without_size_eager_matches_numpy():
    x = np.array([[3, 1, 3], [2, 1, 7]], np.int32)
    vals, idx, inv, cnt = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    wv, wi, winv, wc = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for got, want in ((vals, wv), (idx, wi), (inv, winv), (cnt, wc)):
        np.testing.assert_array_equal(np.asarray(got), want)
    f = np.array([1.0, np.nan, -0.0, 0.0, np.nan, 1.0], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.unique(f)), np.unique(f))
    np.testing.assert_array_equal(np.asarray(jnp.unique(f, equal_nan=False)), np.unique(f, equal_nan=False))


def test_unique_under_jit_needs_size():
    with pytest.raises(jax.errors.ConcretizationTypeError, match="size"):
        jax.jit(jnp.unique)(np.array([1, 2, 2], np.int32))
    out = jax.jit(lambda x: jnp.unique(x, size=4, fill_value=-1))(np.array([2, 1, 2], np.int32))
    np.testing.assert_array_equal(np.asarray(out), [1, 2, -1, -1])


def test_nanmedian_all_nan_slice_is_nan():
    x = np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.nanmedian(x, axis=1)
    np.testing.assert_array_equal(np.asarray(jnp.nanmedian(x, axis=1)), want)


def test_sort_errors():
    x = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="num_keys=0"):
        lax.sort((x, x), num_keys=0)
    with pytest.raises(ValueError, match="num_keys=3"):
        lax.sort((x, x), num_keys=3)
    with pytest.raises(TypeError, match="same shape"):
        lax.sort((x, np.zeros(4, np.float32)))
    with pytest.raises(ValueError, match="out of bounds"):
        lax.sort(x, dimension=1)
    with pytest.raises(ValueError, match="no larger than minor dimension"):
        lax.top_k(x, 4)
    with pytest.raises(ValueError, match="nonnegative"):
        lax.top_k(x, -1)
    with pytest.raises(TypeError, match="cannot have different destination type"):
        lax.bitcast_convert_type(np.zeros(2, bool), "uint8")
    with pytest.raises(ValueError, match=r"3 \* 1 != 4"):
        lax.bitcast_convert_type(np.zeros((2, 3), np.uint8), "float32")
    with pytest.raises(ValueError, match="kth"):
        jnp.partition(x, 5)
    with pytest.raises(ValueError, match="side"):
        jnp.searchsorted(x, x, side="middle")
