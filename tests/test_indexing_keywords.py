"""Indexing keywords and index kinds JAX's own indexing tests use:
`wrap_negative_indices` on `x.at[...]`, the internal `rewriting_take` with
its `IndexingStrategy` checks, `jax.ds` slices (traced starts), the
`jax_check_static_indices` option, `x.at[...].apply` once per occurrence,
and JAX's errors for string indices, too many indices, list indices and an
integer index into a size-0 axis. Expected values are NumPy's or recorded
from JAX 0.10.2."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs._src import config as src_config
from microjax_rs._src.numpy import indexing
from microjax_rs._src.util import subvals, tuple_update

MODES = [None, "fill", "clip", "promise_in_bounds", "drop"]


# -- wrap_negative_indices -------------------------------------------------------

# x.at[idx].get(mode=..., fill_value=99, wrap_negative_indices=False) for
# x = arange(5.), idx = [-6, -1, 0, 3, 7], recorded from JAX 0.10.2.
GET_NO_WRAP = {
    None: [0, 0, 0, 3, 4], "fill": [99, 99, 0, 3, 99], "clip": [0, 0, 0, 3, 4],
    "promise_in_bounds": [0, 0, 0, 3, 4], "drop": [99, 99, 0, 3, 99],
}


@pytest.mark.parametrize("mode", MODES)
def test_get_without_wrapping_negative_indices(mode):
    x = jnp.arange(5.0)
    idx = jnp.array([-6, -1, 0, 3, 7])
    out = x.at[idx].get(mode=mode, fill_value=99, wrap_negative_indices=False)
    np.testing.assert_array_equal(np.asarray(out), GET_NO_WRAP[mode])
    jitted = jax.jit(lambda x, i: x.at[i].get(mode=mode, fill_value=99, wrap_negative_indices=False))
    np.testing.assert_array_equal(np.asarray(jitted(x, idx)), GET_NO_WRAP[mode])
    # a static negative scalar: out of bounds too
    assert float(x.at[-1].get(mode=mode, fill_value=99, wrap_negative_indices=False)) == GET_NO_WRAP[mode][0]


# x.at[[-1, 2]].add(10., mode=..., wrap_negative_indices=False) and
# x.at[-1].set(10., ...), recorded from JAX 0.10.2 (clip moves -1 to 0).
@pytest.mark.parametrize("mode, added, set_", [
    (None, [0, 1, 12, 3, 4], [0, 1, 2, 3, 4]),
    ("clip", [10, 1, 12, 3, 4], [10, 1, 2, 3, 4]),
    ("drop", [0, 1, 12, 3, 4], [0, 1, 2, 3, 4]),
    ("promise_in_bounds", [0, 1, 12, 3, 4], [0, 1, 2, 3, 4]),
])
def test_updates_without_wrapping_negative_indices(mode, added, set_):
    x = jnp.arange(5.0)
    out = x.at[jnp.array([-1, 2])].add(10.0, mode=mode, wrap_negative_indices=False)
    np.testing.assert_array_equal(np.asarray(out), added)
    np.testing.assert_array_equal(np.asarray(x.at[-1].set(10.0, mode=mode, wrap_negative_indices=False)), set_)
    jitted = jax.jit(lambda x, i: x.at[i].set(10.0, mode=mode, wrap_negative_indices=False))
    np.testing.assert_array_equal(np.asarray(jitted(x, -1)), set_)


def test_wrapping_stays_the_default():
    x = jnp.arange(5.0)
    np.testing.assert_array_equal(np.asarray(x.at[-1].get(wrap_negative_indices=True)), 4.0)
    np.testing.assert_array_equal(np.asarray(x.at[-1].set(9.0, wrap_negative_indices=True)), [0, 1, 2, 3, 9])


def test_out_sharding_must_be_none():
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(np.asarray(x.at[0].set(5.0, out_sharding=None)), [5, 1, 2])
    with pytest.raises(NotImplementedError):
        x.at[0].get(out_sharding=object())


# -- rewriting_take ----------------------------------------------------------------

S = indexing.IndexingStrategy


@pytest.mark.parametrize("strategy", list(S))
@pytest.mark.parametrize("idx", [(1,), (-1,), (slice(1, None, 2),), (None, 1, -1), (Ellipsis, 0)])
def test_rewriting_take_matches_numpy(strategy, idx):
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    if strategy is S.DYNAMIC_SLICE and idx == (slice(1, None, 2),):
        with pytest.raises(TypeError, match="dynamic_slice: only unit steps supported in slice"):
            indexing.rewriting_take(jnp.asarray(x), idx, strategy=strategy)
        return
    out = indexing.rewriting_take(jnp.asarray(x), idx, strategy=strategy)
    np.testing.assert_array_equal(np.asarray(out), x[idx])
    jitted = jax.jit(lambda a: indexing.rewriting_take(a, idx, strategy=strategy, mode="clip"))
    np.testing.assert_array_equal(np.asarray(jitted(jnp.asarray(x))), x[idx])


def test_rewriting_take_out_of_bounds_and_normalize_indices():
    x = jnp.arange(6.0).reshape(3, 2)
    # mode='clip' clamps; normalize_indices=False makes -2 clamp to 0 (as JAX's test expects)
    np.testing.assert_array_equal(np.asarray(indexing.rewriting_take(x, (10,), mode="clip")), [4, 5])
    out = indexing.rewriting_take(x, (-2, -1), mode="clip", normalize_indices=False)
    assert float(out) == 0.0
    out = indexing.rewriting_take(x, (-2, -1), mode="clip")
    assert float(out) == 3.0


@pytest.mark.parametrize("strategy, idx, mode, err, msg", [
    # recorded from JAX 0.10.2
    (S.STATIC_SLICE, (10,), None, IndexError, r"index 10 out of bounds for axis 0 with size 3 \(normalize_indices=True\)"),
    (S.STATIC_SLICE, (-4,), "promise_in_bounds", IndexError, "index -4 out of bounds for axis 0 with size 3"),
    (S.STATIC_SLICE, (jnp.array(1),), None, TypeError, "static_slice: indices must be static scalars or slices"),
    (S.STATIC_SLICE, (1,), "fill", ValueError, "static_slice requires mode='promise_in_bounds' or mode='clip'"),
    (S.STATIC_SLICE, (1, 2, 3), "fill", IndexError, "Too many indices: array is 2-dimensional, but 3 were indexed"),
    (S.DYNAMIC_SLICE, (np.array([0, 1]),), None, TypeError, "dynamic_slice: only scalar indices allowed"),
    (S.DYNAMIC_SLICE, (1,), "fill", ValueError, "dynamic_slice requires mode='promise_in_bounds' or mode='clip'"),
])
def test_rewriting_take_strategy_errors(strategy, idx, mode, err, msg):
    with pytest.raises(err, match=msg):
        indexing.rewriting_take(jnp.zeros((3, 2)), idx, strategy=strategy, mode=mode)


def test_static_slice_with_clip_does_not_raise():
    out = indexing.rewriting_take(jnp.arange(6.0).reshape(3, 2), (10,), strategy=S.STATIC_SLICE, mode="clip")
    np.testing.assert_array_equal(np.asarray(out), [4, 5])


# -- jax.ds ------------------------------------------------------------------------

def test_ds_values_as_jax():
    x = jnp.arange(10.0)
    # recorded from JAX 0.10.2: the window is moved back inside (dynamic_slice),
    # a strided one gathers clamped indices
    np.testing.assert_array_equal(np.asarray(x[jax.ds(1, 3)]), [1, 2, 3])
    np.testing.assert_array_equal(np.asarray(x[jax.ds(8, 3)]), [7, 8, 9])
    np.testing.assert_array_equal(np.asarray(x[jax.ds(8, 3, 2)]), [8, 9, 9])
    np.testing.assert_array_equal(np.asarray(x[jax.ds(-2, 2)]), [8, 9])
    np.testing.assert_array_equal(np.asarray(x[jax.ds(3)]), [0, 1, 2])
    y = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(y)[..., jax.ds(1, 2)]), y[..., 1:3])
    np.testing.assert_array_equal(np.asarray(jnp.asarray(y)[jax.ds(1, 2), None, 1]), y[1:3, None, 1])
    np.testing.assert_array_equal(np.asarray(jnp.asarray(y)[jnp.array([0, 2]), jax.ds(1, 2)]), y[[0, 2], 1:3])


def test_ds_with_a_traced_start():
    x = jnp.arange(10.0)
    f = jax.jit(lambda x, i: x[jax.ds(i, 3)])
    np.testing.assert_array_equal(np.asarray(f(x, 2)), [2, 3, 4])
    np.testing.assert_array_equal(np.asarray(f(x, 8)), [7, 8, 9])
    np.testing.assert_array_equal(np.asarray(f(x, -1)), [7, 8, 9])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda i: x[jax.ds(i, 2)])(jnp.arange(3))),
                                  [[0, 1], [1, 2], [2, 3]])
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda x, i: x[jax.ds(i, 3)].sum())(x, 2)),
                                  [0, 0, 1, 1, 1, 0, 0, 0, 0, 0])


def test_ds_shorthands_and_slice_object():
    from microjax_rs._src.indexing import Slice

    assert jax.ds(None) == slice(None)
    assert jax.ds(3) == Slice(0, 3, 1)
    assert jax.ds(1, 2, 3) == Slice(1, 2, 3)
    assert Slice.from_slice(slice(1, 8, 2), 10) == Slice(1, 4, 2)
    assert not Slice(1, 2).is_dynamic_start


# -- jax_check_static_indices ------------------------------------------------------

@pytest.mark.parametrize("shape, idx, msg", [
    # messages recorded from JAX 0.10.2
    ((2,), -4, "index -4 out of bounds for axis 0 with size 2"),
    ((2, 3), np.index_exp[:, 4], "index 4 out of bounds for axis 1 with size 3"),
    ((2, 3), np.index_exp[..., -4], "index -4 out of bounds for axis 1 with size 3"),
    ((2, 3, 5), np.index_exp[:, [1, 2], 6], "index 6 out of bounds for axis 2 with size 5"),
    ((2, 3, 5), np.index_exp[np.arange(3), 6, None], "index 6 out of bounds for axis 1 with size 3"),
])
def test_check_static_indices(shape, idx, msg):
    arr = jnp.zeros(shape)
    with src_config.check_static_indices(True):
        for f in (lambda: arr[idx], lambda: jax.jit(lambda x: x[idx])(arr), lambda: arr.at[idx].get()):
            with pytest.raises(IndexError, match=msg):
                f()
        arr.at[idx].get(mode="clip")  # an explicit mode is not checked
    assert arr[idx].dtype == np.float32  # off by default: clamped


# -- x.at[idx].apply ---------------------------------------------------------------

@pytest.mark.parametrize("ufunc", [np.negative, np.sqrt, np.square])
def test_apply_once_per_occurrence_as_ufunc_at(ufunc):
    x = np.arange(1.0, 6.0, dtype=np.float32)
    idx = np.array([0, 0, 2, -1, 2, 2])
    expected = x.copy()
    ufunc.at(expected, idx)
    jfunc = getattr(jnp, ufunc.__name__)
    np.testing.assert_allclose(np.asarray(jnp.asarray(x).at[idx].apply(jfunc)), expected, rtol=1e-6)
    jitted = jax.jit(lambda x, i: x.at[i].apply(jfunc))
    np.testing.assert_allclose(np.asarray(jitted(jnp.asarray(x), jnp.asarray(idx))), expected, rtol=1e-6)


def test_apply_modes_as_jax():
    x = jnp.arange(1.0, 6.0)
    i = jnp.array([0, 0, 2, -1, 7, -9, 2, 2])
    # recorded from JAX 0.10.2: out-of-bounds indices dropped by default, clamped by 'clip'
    np.testing.assert_array_equal(np.asarray(x.at[i].apply(lambda v: v * 2)), [4, 2, 24, 4, 10])
    np.testing.assert_array_equal(np.asarray(x.at[i].apply(lambda v: v * 2, mode="clip")), [8, 2, 24, 4, 20])
    np.testing.assert_array_equal(np.asarray(x.at[1:3].apply(jnp.negative)), [1, -2, -3, 4, 5])
    out = jax.vmap(lambda x, i: x.at[i].apply(lambda v: v - 1))(jnp.ones((2, 3)), jnp.array([[0, 0], [1, 2]]))
    np.testing.assert_array_equal(np.asarray(out), [[-1, 1, 1], [1, 0, 0]])


# -- errors and edge cases ---------------------------------------------------------

def test_string_index_type_error():
    with pytest.raises(TypeError, match="JAX does not support string indexing"):
        jnp.zeros(2)["abc"]
    with pytest.raises(TypeError, match="JAX does not support string indexing"):
        jnp.zeros((2, 3))[:, "abc"]


def test_too_many_indices_message():
    with pytest.raises(IndexError, match="Too many indices: array is 2-dimensional, but 3 were indexed"):
        jnp.zeros((2, 3))[1, 2, 3]
    with pytest.raises(IndexError, match="Too many indices: array is 2-dimensional, but 3 were indexed"):
        jax.jit(lambda x: x[1, 2, 3])(jnp.zeros((2, 3)))


@pytest.mark.parametrize("idx, fix", [
    ([0], "array"), ([0, 0], "array"), ([[0, 0]], "tuple"), ([0, [0, 1]], "tuple"),
    ([0, np.arange(2)], "tuple"), ([0, None], "tuple"), ([0, slice(None)], "tuple"), ([Ellipsis], "tuple"),
])
def test_list_index_message_suggests_the_fix(idx, fix):
    x = jnp.arange(6).reshape(3, 2)
    with pytest.raises(TypeError, match=rf"use `arr\[{fix}\(seq\)\]` instead of `arr\[seq\]`"):
        x[idx]
    with pytest.raises(TypeError, match=rf"arr\[{fix}\(seq\)\]"):
        x.at[idx].set(0)


def test_integer_index_into_an_empty_axis():
    x = jnp.ones((2, 0))
    for f in (lambda: x[0, 0], lambda: jax.jit(lambda x: x[0, 0])(x), lambda: x[0, jnp.array(0)]):
        with pytest.raises(IndexError, match="index is out of bounds for axis 1 with size 0"):
            f()
    assert x[0, 1:].shape == (0,)


def test_scatter_of_a_python_int_beyond_int32_into_uint32():
    a = jnp.zeros(1, dtype=jnp.uint32)
    assert int(a.at[0].set(2**32 - 1)[0]) == 2**32 - 1
    assert int(a.at[0].add(-1)[0]) == 2**32 - 1
    with pytest.raises(OverflowError):
        a.at[0].set(2**33)


def test_util_helpers():
    assert subvals([1, 2, 3], [(0, 9), (2, 7)]) == (9, 2, 7)
    assert tuple_update((1, 2, 3), 1, 5) == (1, 5, 3)
