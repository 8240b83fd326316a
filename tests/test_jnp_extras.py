"""The parts of the added `jax.numpy` functions the operator table cannot
express (tests/op_table/jnp_more.py has the array records): the index-trick
objects (`r_`, `c_`, `s_`, `index_exp`, `mgrid`, `ogrid`) and `ix_`, the
array-API unique functions' named tuples and NaN handling, set functions
with a static `size` under jit, data-dependent shapes that must be concrete,
`trim_zeros`, arrays from bytes / text, the print helpers, and the
exceptions JAX raises. Where JAX differs from NumPy the expected values are
recorded from JAX 0.10.2 (marked so)."""
import io
import contextlib

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.errors import ConcretizationTypeError, TracerBoolConversionError

NAN = float("nan")


def _same(got, want, dtype=None):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), got.dtype
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-6, atol=1e-6,
                               equal_nan=True)


# ----------------------------------------------------------------- r_, c_, s_, index_exp


@pytest.mark.parametrize("key", [
    (slice(1, 4), 0, np.array([5, 6])),
    (slice(1, 2, 0.25),),
    (slice(0, 1, 5j),),
    (slice(0, 1, 5j), slice(3, 5)),
    ("r", [1, 2, 3], [4, 5, 6]),
    ("c", [1, 2, 3], [4, 5, 6]),
    ("0,2", [1, 2, 3], [4, 5, 6]),
    ("1,2", [1, 2, 3], [4, 5, 6]),
    ("0,2,0", [1, 2, 3], [4, 5, 6]),
    ("-1", np.ones((2, 2)), np.zeros((2, 1))),
    (True, False),
    (3,),
], ids=repr)
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # NumPy's 'r'/'c' build np.matrix
def test_r_matches_numpy(key):
    want = np.r_[key]
    got = jnp.r_[key]
    assert isinstance(got, jax.Array)
    _same(got, want)


def test_r_values_and_dtypes_recorded_from_jax():
    # recorded from JAX 0.10.2
    _same(jnp.r_[1:4, 0, jnp.array([5, 6])], [1, 2, 3, 0, 5, 6], "int32")
    _same(jnp.r_[0:1:5j], [0.0, 0.25, 0.5, 0.75, 1.0], "float32")
    _same(jnp.r_[1, 2.5], [1.0, 2.5], "float32")
    # JAX's trans1d rule for inputs of rank > 1 (a rotation of the axes; NumPy differs)
    assert jnp.r_["0,3,1", np.ones((2, 2)), np.zeros((2, 2))].shape == (4, 2, 1)
    assert jnp.r_["0,3,0", np.ones((2, 2)), np.zeros((2, 2))].shape == (4, 1, 2)
    assert jnp.r_["0,3,-1", np.ones((2, 2)), np.zeros((2, 2))].shape == (2, 2, 2)


def test_r_bad_directives():
    with pytest.raises(ValueError, match="could not understand directive 'a,b'"):
        jnp.r_["a,b", [1]]
    with pytest.raises(ValueError, match="string directive must be placed at the beginning"):
        jnp.r_[[1], "r"]
    with pytest.raises(IndexError):
        jnp.r_[()]


@pytest.mark.parametrize("key", [
    (np.array([1, 2, 3]), np.array([4, 5, 6])),
    (np.ones((2, 2)), np.zeros((2, 1))),
    (1, 2),
    (np.array([[1, 2, 3]]), 0, 0, np.array([[4, 5, 6]])),
], ids=repr)
def test_c_matches_numpy(key):
    _same(jnp.c_[key], np.c_[key])


def test_s_and_index_exp():
    assert jnp.s_[1:2, ::3] == (slice(1, 2), slice(None, None, 3))
    assert jnp.s_[3] == 3
    assert jnp.index_exp[3] == (3,)
    assert jnp.index_exp[1:2] == (slice(1, 2),)
    x = jnp.arange(12).reshape(3, 4)
    _same(x[jnp.s_[1:, ::2]], np.arange(12).reshape(3, 4)[1:, ::2])
    assert type(jnp.r_).__name__ == "RClass" and type(jnp.c_).__name__ == "CClass"
    assert type(jnp.s_).__name__ == "IndexExpression"


# ----------------------------------------------------------------- mgrid, ogrid, ix_


@pytest.mark.parametrize("key", [
    (slice(0, 3), slice(0, 2)),
    (slice(0, 1, 0.5), slice(0, 2)),
    (slice(0, 1, 3j), slice(-1, 1, 5j)),
    (slice(0, 4, 2), slice(1, 3), slice(0, 1, 2j)),
], ids=repr)
def test_mgrid_ogrid_match_numpy(key):
    _same(jnp.mgrid[key], np.mgrid[key])
    got, want = jnp.ogrid[key], np.ogrid[key]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)


def test_mgrid_single_slices_and_dtypes():
    # recorded from JAX 0.10.2
    _same(jnp.mgrid[0:3], [0, 1, 2], "int32")
    _same(jnp.mgrid[:3], [0, 1, 2], "int32")
    _same(jnp.mgrid[0:1:3j], [0.0, 0.5, 1.0], "float32")
    _same(jnp.ogrid[0:3], [0, 1, 2], "int32")
    assert jnp.mgrid[()].shape == (0,)
    assert jnp.mgrid[0:3, 0:2].dtype == np.int32
    assert jnp.mgrid[0:1:0.5, 0:2].dtype == np.float32
    assert type(jnp.mgrid).__name__ == "_Mgrid" and type(jnp.ogrid).__name__ == "_Ogrid"
    with pytest.raises(TypeError):
        jnp.mgrid[3]


def test_ix_():
    rows, cols = np.array([0, 2]), np.array([1, 3, 3])
    got = jnp.ix_(jnp.asarray(rows), jnp.asarray(cols))
    for g, w in zip(got, np.ix_(rows, cols)):
        _same(g, w, "int32")
    x = np.arange(20).reshape(4, 5)
    _same(jnp.asarray(x)[got], x[np.ix_(rows, cols)])
    assert jnp.ix_() == ()
    traced = jax.jit(lambda a: jnp.ix_(a, a)[1])(jnp.array([0, 1]))
    _same(traced, [[0, 1]])
    with pytest.raises(NotImplementedError, match="Boolean arguments to jax.numpy.ix_"):
        jnp.ix_(jnp.array([True, False]))
    with pytest.raises(ValueError, match="must be 1-dimensional, got shape \\(2, 2\\)"):
        jnp.ix_(jnp.ones((2, 2), "int32"))
    with pytest.raises(TypeError, match="ix requires ndarray or scalar arguments"):
        jnp.ix_([0, 1])


# ----------------------------------------------------------------- triangle / diagonal / mask indices


def test_index_functions_need_static_sizes():
    with pytest.raises(ConcretizationTypeError):
        jax.jit(lambda n: jnp.tril_indices(n))(3)
    with pytest.raises(ConcretizationTypeError):
        jax.jit(lambda n: jnp.triu_indices(3, n))(1)
    with pytest.raises(ValueError, match="n argument to diag_indices must be nonnegative, got -1"):
        jnp.diag_indices(-1)
    with pytest.raises(ValueError, match="ndim argument to diag_indices must be nonnegative, got -1"):
        jnp.diag_indices(3, -1)
    with pytest.raises(ValueError, match="Only 2-D inputs are accepted"):
        jnp.tril_indices_from(jnp.ones(3))


def test_mask_indices_unsized_and_sized():
    for got, want in zip(jnp.mask_indices(4, jnp.triu, 1), np.mask_indices(4, np.triu, 1)):
        _same(got, want, "int32")
    # recorded from JAX 0.10.2: padded with zeros
    rows, cols = jnp.mask_indices(3, jnp.triu, 1, size=5)
    _same(rows, [0, 0, 1, 0, 0])
    _same(cols, [1, 2, 2, 0, 0])
    rows, cols = jax.jit(lambda: jnp.mask_indices(3, jnp.tril, -1, size=4))()
    _same(rows, [1, 2, 2, 0])
    _same(cols, [0, 0, 1, 0])


# ----------------------------------------------------------------- unique_* named tuples


def test_unique_named_tuples():
    x = jnp.array([[3, 1], [1, 2]])
    r = jnp.unique_all(x)
    assert type(r).__name__ == "_UniqueAllResult"
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    vals, idx, inv, counts = np.unique(np.asarray(x), return_index=True, return_inverse=True, return_counts=True)
    _same(r.values, vals)
    _same(r.indices, idx, "int32")
    _same(r.inverse_indices, inv.reshape(2, 2), "int32")
    _same(r.counts, counts, "int32")
    r = jnp.unique_inverse(x)
    assert type(r).__name__ == "_UniqueInverseResult" and r._fields == ("values", "inverse_indices")
    _same(r.inverse_indices, inv.reshape(2, 2))
    r = jnp.unique_counts(x)
    assert type(r).__name__ == "_UniqueCountsResult" and r._fields == ("values", "counts")
    assert isinstance(r, tuple)
    _same(r.counts, counts)


def test_unique_nan_handling_recorded_from_jax():
    # recorded from JAX 0.10.2: the array-API functions never treat NaNs as equal,
    # jnp.unique does by default (equal_nan=True)
    x = jnp.array([NAN, 1.0, NAN])
    _same(jnp.unique_values(x), [1.0, NAN, NAN])
    _same(jnp.unique(x), [1.0, NAN])
    r = jnp.unique_all(x)
    _same(r.values, [1.0, NAN, NAN])
    _same(r.indices, [1, 0, 2])
    _same(r.inverse_indices, [1, 0, 2])
    _same(r.counts, [1, 1, 1])
    r = jnp.unique_counts(x)
    _same(r.counts, [1, 1, 1])
    r = jnp.unique_all(jnp.array([3.0, 1.0, 1.0, 2.0, NAN]))
    _same(r.values, [1.0, 2.0, 3.0, NAN])
    _same(r.indices, [1, 3, 0, 4])
    _same(r.inverse_indices, [2, 0, 0, 1, 3])
    _same(r.counts, [2, 1, 1, 1])


def test_unique_all_size_under_jit():
    x = jnp.array([3, 1, 1, 2])
    # recorded from JAX 0.10.2: values padded with the smallest value unless fill_value,
    # indices with the first index, counts with 0
    r = jax.jit(lambda a: jnp.unique_all(a, size=6))(x)
    _same(r.values, [1, 2, 3, 1, 1, 1])
    _same(r.indices, [1, 3, 0, 1, 1, 1])
    _same(r.inverse_indices, [2, 0, 0, 1])
    _same(r.counts, [2, 1, 1, 0, 0, 0])
    r = jnp.unique_all(x, size=6, fill_value=0)
    _same(r.values, [1, 2, 3, 0, 0, 0])
    for fn in (jnp.unique_all, jnp.unique_inverse, jnp.unique_counts, jnp.unique_values):
        with pytest.raises(ConcretizationTypeError):
            jax.jit(fn)(x)


# ----------------------------------------------------------------- set functions


A = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32)
B = np.array([1, 5, 7, 7, 0], np.int32)


@pytest.mark.parametrize("name", ["intersect1d", "setdiff1d", "setxor1d", "union1d"])
def test_set_functions_unsized_match_numpy(name):
    _same(getattr(jnp, name)(jnp.asarray(A), jnp.asarray(B)), getattr(np, name)(A, B), "int32")
    a2 = A.reshape(2, 4).astype(np.float32)
    _same(getattr(jnp, name)(jnp.asarray(a2), jnp.asarray(B)), getattr(np, name)(a2, B))


@pytest.mark.parametrize("name", ["intersect1d", "setdiff1d", "setxor1d", "union1d"])
def test_set_functions_need_size_under_jit(name):
    fn = getattr(jnp, name)
    with pytest.raises(ConcretizationTypeError):
        jax.jit(fn)(jnp.asarray(A), jnp.asarray(B))


def test_set_functions_sized_recorded_from_jax():
    a, b = jnp.asarray(A), jnp.asarray(B)
    jit = jax.jit
    # recorded from JAX 0.10.2
    _same(jit(lambda x, y: jnp.intersect1d(x, y, size=4))(a, b), [1, 5, 1, 1])
    vals, i1, i2 = jit(lambda x, y: jnp.intersect1d(x, y, size=4, return_indices=True))(a, b)
    _same(vals, [1, 5, 1, 1])
    _same(i1, [1, 4, 8, 8])
    _same(i2, [0, 1, 5, 5])
    vals, i1, i2 = jnp.intersect1d(a, b, size=4, fill_value=-1, return_indices=True)
    _same(vals, [1, 5, -1, -1])
    _same(jit(lambda x, y: jnp.setdiff1d(x, y, size=8))(a, b), [2, 3, 4, 6, 9, 0, 0, 0])
    _same(jnp.setdiff1d(a, b, size=2), [2, 3])
    _same(jit(lambda x, y: jnp.setxor1d(x, y, size=10))(a, b), [0, 2, 3, 4, 6, 7, 9, 0, 0, 0])
    _same(jit(lambda x, y: jnp.union1d(x, y, size=12))(a, b), [0, 1, 2, 3, 4, 5, 6, 7, 9, 0, 0, 0])
    _same(jnp.union1d(a, b, size=12, fill_value=-5), [0, 1, 2, 3, 4, 5, 6, 7, 9, -5, -5, -5])
    _same(jnp.setdiff1d(jnp.array([], "int32"), b, size=3), [0, 0, 0])


def test_set_functions_assume_unique_and_indices():
    vals, i1, i2 = jnp.intersect1d(jnp.array([5, 5, 1, 2, 2]), jnp.array([2, 2, 5, 9, 5]), return_indices=True)
    want = np.intersect1d([5, 5, 1, 2, 2], [2, 2, 5, 9, 5], return_indices=True)
    for g, w in zip((vals, i1, i2), want):
        _same(g, w)
    vals, i1, i2 = jnp.intersect1d(jnp.array([3, 1, 4]), jnp.array([4, 3, 0]), assume_unique=True,
                                   return_indices=True)
    _same(vals, [3, 4])
    _same(i1, [0, 2])
    _same(i2, [1, 0])
    # recorded from JAX 0.10.2: assume_unique keeps ar1's order in setdiff1d
    _same(jnp.setdiff1d(jnp.array([3, 1, 4]), jnp.array([4]), assume_unique=True), [3, 1])
    _same(jnp.setxor1d(jnp.array([3, 1, 4]), jnp.array([4, 0]), assume_unique=True), [0, 1, 3])


def test_set_functions_dtypes_and_nans_recorded_from_jax():
    # recorded from JAX 0.10.2
    out = jnp.setdiff1d(jnp.array([3, 1, 4]), jnp.array([4.0, 1.5]))
    _same(out, [1, 3], "int32")  # setdiff1d keeps ar1's dtype
    _same(jnp.intersect1d(jnp.array([1, 2]), jnp.array([1.0, 2.5])), [1.0], "float32")
    _same(jnp.union1d(jnp.array([1, 2]), jnp.array([1.0, 2.5])), [1.0, 2.0, 2.5], "float32")
    nans = jnp.array([NAN, 1.0, NAN])
    _same(jnp.intersect1d(nans, jnp.array([NAN, 1.0])), [1.0])
    _same(jnp.setdiff1d(nans, jnp.array([1.0])), [NAN])
    _same(jnp.setxor1d(nans, jnp.array([1.0, 2.0])), [2.0, NAN])
    _same(jnp.setxor1d(nans, jnp.array([1.0, NAN])), [NAN, NAN])
    _same(jnp.union1d(nans, jnp.array([1.0, NAN])), [1.0, NAN])
    _same(jnp.isin(jnp.array([NAN, 1.0]), jnp.array([NAN])), [False, False])


def test_isin():
    a = np.array([[3, 1, 4], [1, 5, 9]])
    for method in ("auto", "compare_all", "binary_search", "sort"):
        _same(jnp.isin(jnp.asarray(a), jnp.asarray(B), method=method), np.isin(a, B))
        _same(jnp.isin(jnp.asarray(a), jnp.asarray(B), invert=True, method=method), np.isin(a, B, invert=True))
    _same(jax.jit(jnp.isin)(jnp.asarray(a), jnp.asarray(B)), np.isin(a, B))
    with pytest.raises(ValueError, match="method='foo' is not implemented"):
        jnp.isin(jnp.asarray(a), jnp.asarray(B), method="foo")


# ----------------------------------------------------------------- data-dependent shapes


def test_compress_extract_need_concrete_condition_or_size():
    m = jnp.arange(12.0).reshape(3, 4)
    cond = jnp.array([True, False, True, True])
    with pytest.raises(TracerBoolConversionError):
        jax.jit(lambda c: jnp.compress(c, m, axis=1))(cond)
    with pytest.raises(TracerBoolConversionError):
        jax.jit(lambda c: jnp.extract(c, m))(m > 3)
    got = jax.jit(lambda c: jnp.compress(c, m, axis=1, size=3, fill_value=-1))(jnp.array([True, False, False, True]))
    _same(got, [[0, 3, -1], [4, 7, -1], [8, 11, -1]])
    _same(jax.jit(lambda c: jnp.extract(c, m, size=3))(m > 9), [10, 11, 0])
    # recorded from JAX 0.10.2: extract flattens both arguments
    _same(jnp.extract(jnp.array([True, False]), m), [0.0])
    with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.compress is not supported."):
        jnp.compress(jnp.array([1, 0, 1]), m, axis=0, out=1)


def test_delete_and_insert_under_jit():
    x = jnp.arange(6.0)
    with pytest.raises(ConcretizationTypeError):
        jax.jit(lambda a, i: jnp.delete(a, i))(x, jnp.array([1, 2]))
    got = jax.jit(lambda a, i: jnp.delete(a, i, assume_unique_indices=True))(x, jnp.array([4, 1, -1]))
    _same(got, np.delete(np.arange(6.0), [4, 1, -1]))
    # recorded from JAX 0.10.2: a traced insertion index; out-of-range indices are clipped
    _same(jax.jit(lambda a, i: jnp.insert(a, i, 5.0))(x, 2), [0, 1, 5, 2, 3, 4, 5])
    _same(jax.jit(lambda a, i: jnp.insert(a, i, 5.0))(x, jnp.array([2, 4])), [0, 1, 5, 2, 3, 5, 4, 5])
    _same(jnp.insert(x, 9, 7.0), [0, 1, 2, 3, 4, 5, 7])
    _same(jnp.insert(jnp.arange(3), 1, 2.5), [0, 2, 1, 2], "int32")
    grad = jax.grad(lambda a, v: jnp.sum(jnp.insert(a, jnp.array([1, 3]), v) * jnp.arange(8.0)), argnums=(0, 1))(
        x, jnp.array([1.0, 2.0]))
    _same(grad[0], [0, 2, 3, 5, 6, 7])
    _same(grad[1], [1, 4])


def test_delete_insert_errors():
    x = jnp.arange(6.0)
    with pytest.raises(TypeError, match="delete requires ndarray or scalar arguments"):
        jnp.delete(x, [0, 1])
    with pytest.raises(TypeError, match="insert requires ndarray or scalar arguments"):
        jnp.insert(x, [0, 1], 1.0)
    with pytest.raises(ValueError):
        jnp.delete(x, 9)
    with pytest.raises(ValueError, match="must be integer or bool"):
        jnp.delete(x, 2.0)
    with pytest.raises(ValueError, match="index array must be integer typed"):
        jnp.insert(x, 1.5, 2.0)


def test_trim_zeros():
    for a in ([0, 0, 1, 0, 2, 0], [0, 0], [1, 2], [], [0, 3, 0]):
        a = np.array(a, np.int32)
        for trim in ("fb", "f", "b", "FB"):
            _same(jnp.trim_zeros(jnp.asarray(a), trim), np.trim_zeros(a, trim))
    m = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]], np.float32)
    _same(jnp.trim_zeros(jnp.asarray(m)), np.trim_zeros(m))
    _same(jnp.trim_zeros(jnp.asarray(m), axis=1), np.trim_zeros(m, axis=1))
    _same(jnp.trim_zeros(jnp.asarray(m), "f", axis=0), np.trim_zeros(m, "f", axis=0))
    # recorded from JAX 0.10.2: an unknown trim string returns the input
    _same(jnp.trim_zeros(jnp.array([0, 1, 0]), "x"), [0, 1, 0])
    with pytest.raises(ConcretizationTypeError):
        jax.jit(jnp.trim_zeros)(jnp.array([0, 1]))


def test_choose_modes_and_errors():
    a = jnp.array([0, 3, -1])
    choices = [jnp.arange(3), 10 + jnp.arange(3)]
    # recorded from JAX 0.10.2
    _same(jnp.choose(a, choices, mode="clip"), [0, 11, 2])
    _same(jnp.choose(a, choices, mode="wrap"), [0, 11, 12])
    _same(jnp.choose(jnp.array([0, 1]), [jnp.arange(2), jnp.ones(2)]), [0.0, 1.0], "float32")
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        jnp.choose(a, choices)
    with pytest.raises(ConcretizationTypeError):
        jax.jit(lambda i: jnp.choose(i, choices))(jnp.array([0, 1, 1]))
    with pytest.raises(ValueError, match="mode='foo' not understood"):
        jnp.choose(a, choices, mode="foo")
    with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.choose is not supported."):
        jnp.choose(a, choices, out=1)


def test_put_place_only_out_of_place():
    x = jnp.arange(6.0)
    with pytest.raises(ValueError, match="jax.numpy.put cannot modify arrays in-place"):
        jnp.put(x, jnp.array([0]), 5.0)
    with pytest.raises(ValueError, match="jax.numpy.place cannot modify arrays in-place"):
        jnp.place(x, x > 2, 5.0)
    with pytest.raises(NotImplementedError, match="The 'raise' mode to jnp.put is not supported."):
        jnp.put(x, jnp.array([0]), 5.0, mode="raise", inplace=False)
    with pytest.raises(ValueError, match="mode should be one of 'wrap' or 'clip'"):
        jnp.put(x, jnp.array([0]), 5.0, mode="foo", inplace=False)
    # recorded from JAX 0.10.2: default mode wraps negative indices once, then clips
    for ind, want in (([-7], [9, 1, 2, 3, 4, 5]), ([6], [0, 1, 2, 3, 4, 9]), ([-12], [9, 1, 2, 3, 4, 5])):
        _same(jnp.put(x, jnp.array(ind), 9.0, inplace=False), want)
    # traced indices and values under jit
    got = jax.jit(lambda a, i, v: jnp.put(a, i, v, inplace=False))(x, jnp.array([1, 3]), jnp.array([9.0, 8.0]))
    _same(got, [0, 9, 2, 8, 4, 5])
    got = jax.jit(lambda a, m: jnp.place(a, m, jnp.array([1.0, 2.0]), inplace=False))(x, x > 2)
    _same(got, [0, 1, 2, 1, 2, 1])


def test_block_unstack_resize_errors():
    with pytest.raises(ValueError, match="jax.numpy.block does not allow tuples"):
        jnp.block((jnp.ones(2),))
    with pytest.raises(ValueError, match="jax.numpy.block does not allow empty list arguments"):
        jnp.block([])
    with pytest.raises(ValueError, match="Mismatched list depths in jax.numpy.block"):
        jnp.block([[1, 2], 3])
    _same(jnp.block(1.0), 1.0)
    _same(jnp.block([[[1, 2]], [[3, 4]]]), np.block([[[1, 2]], [[3, 4]]]))
    parts = jnp.unstack(jnp.arange(12).reshape(3, 4), axis=1)
    assert isinstance(parts, tuple) and len(parts) == 4
    with pytest.raises(ValueError):
        jnp.unstack(jnp.float32(1))
    with pytest.raises(ValueError, match="all elements of `new_shape` must be non-negative"):
        jnp.resize(jnp.arange(3), (2, -1))


# ----------------------------------------------------------------- histograms, bincount


def test_histogram_dtypes_recorded_from_jax():
    x = jnp.array([0.1, 0.5, 0.5, 0.9, 1.0, 2.0])
    counts, edges = jnp.histogram(x, bins=4)
    # recorded from JAX 0.10.2: counts are floating, unlike NumPy's integers
    _same(counts, [3.0, 2.0, 0.0, 1.0], "float32")
    _same(edges, [0.1, 0.575, 1.05, 1.525, 2.0], "float32")
    counts, _ = jnp.histogram(jnp.array([1, 2, 2, 5]), bins=3, weights=jnp.array([1, 1, 1, 1]))
    _same(counts, [3.0, 0.0, 1.0], "float32")
    hist, ex, ey = jnp.histogram2d(x, x[::-1], bins=2)
    _same(hist, [[4, 1], [1, 0]], "int32")
    _same(jnp.histogram(jnp.ones(3), bins=2)[1], [0.5, 1.0, 1.5])
    counts, edges = jax.jit(lambda a: jnp.histogram(a, bins=4, range=(0.0, 1.5), density=True))(x)
    want_c, want_e = np.histogram(np.asarray(x), bins=4, range=(0.0, 1.5), density=True)
    _same(counts, want_c)
    _same(edges, want_e)


def test_histogram_errors():
    x = jnp.ones(6)
    with pytest.raises(TypeError):
        jnp.histogram(x, bins="auto")
    with pytest.raises(NotImplementedError, match="string values for `bins` not implemented."):
        jnp.histogram_bin_edges(x, bins="auto")
    with pytest.raises(ConcretizationTypeError):
        jax.jit(lambda b: jnp.histogram_bin_edges(x, b))(3)
    with pytest.raises(ValueError, match="should be a bin for each dimension."):
        jnp.histogramdd(jnp.ones((6, 2)), bins=[2, 2, 2])
    with pytest.raises(ValueError, match="range must be a sequence of 2 pairs or Nones"):
        jnp.histogramdd(jnp.ones((6, 2)), range=[(0, 1)])


def test_histogram_grad_in_weights():
    x = jnp.array([0.1, 0.5, 0.5, 0.9, 1.0, 2.0])
    g = jax.grad(lambda w: jnp.histogram(x, bins=2, weights=w)[0][0])(jnp.ones(6))
    _same(g, [1, 1, 1, 1, 1, 0])


def test_bincount_negative_values_and_length():
    # recorded from JAX 0.10.2: negative values count in bin 0; length overrides minlength
    _same(jnp.bincount(jnp.array([-1, 3])), [1, 0, 0, 1], "int32")
    _same(jnp.bincount(jnp.array([1, 3, 5]), length=3), [0, 1, 0])
    _same(jnp.bincount(jnp.array([1, 3]), minlength=6, length=3), [0, 1, 0])
    _same(jnp.bincount(jnp.array([1, 3]), minlength=6), [0, 1, 0, 1, 0, 0])
    _same(jax.jit(lambda a: jnp.bincount(a, length=4))(jnp.array([-2, 1, 1])), [1, 2, 0, 0])
    with pytest.raises(ConcretizationTypeError):
        jax.jit(jnp.bincount)(jnp.array([1, 3]))


def test_digitize_jit_and_empty_bins():
    x = jnp.array([0.1, 0.5, 0.5, 0.9, 1.0, 2.0])
    bins = jnp.array([1.0, 0.5, 0.0])
    _same(jax.jit(jnp.digitize)(x, bins), np.digitize(np.asarray(x), np.asarray(bins)), "int32")
    _same(jnp.digitize(x, jnp.array([])), np.zeros(6), "int32")


# ----------------------------------------------------------------- cov, corrcoef


def test_cov_special_cases_recorded_from_jax():
    m = jnp.array([[1.0, 2, 4, 7], [0, 1, 1, 3], [2, 2, 5, 1.0]])
    # recorded from JAX 0.10.2: negative weights are used by absolute value
    _same(jnp.cov(m, fweights=jnp.array([1, -2, 1, 1])), np.cov(np.asarray(m), fweights=[1, 2, 1, 1]))
    _same(jnp.cov(m, aweights=jnp.array([1.0, -0.5, 2, 1])), np.cov(np.asarray(m), aweights=[1, 0.5, 2, 1]))
    _same(jnp.cov(jnp.ones((3, 0))), np.full((3, 3), NAN))
    _same(jnp.cov(jnp.float32(3)), NAN)
    assert jnp.cov(jnp.ones((0, 3))).shape == (0, 0)
    assert jnp.cov(m, dtype=jnp.float16).dtype == np.float16
    with pytest.raises(ValueError, match="cov: dtype must be a subclass of float or complex"):
        jnp.cov(m, dtype=jnp.int32)
    with pytest.raises(RuntimeError, match="cannot handle multidimensional aweights"):
        jnp.cov(m, aweights=jnp.ones((2, 2)))
    with pytest.raises(RuntimeError, match="incompatible numbers of samples and aweights"):
        jnp.cov(m, aweights=jnp.ones(3))
    _same(jnp.corrcoef(jnp.array([[1.0, 2, 3], [2, 4, 6.0]])), np.ones((2, 2)))
    _same(jnp.corrcoef(jnp.array([1.0, 2, 4])), 1.0)


# ----------------------------------------------------------------- higher-order


def test_apply_along_axis_transforms():
    x = np.arange(24.0).reshape(2, 3, 4)
    fn = lambda v: v * jnp.sum(v)  # noqa: E731
    want = np.apply_along_axis(lambda v: v * v.sum(), 1, x)
    _same(jnp.apply_along_axis(fn, 1, jnp.asarray(x)), want)
    _same(jax.jit(lambda a: jnp.apply_along_axis(fn, 1, a))(jnp.asarray(x)), want)
    _same(jnp.apply_along_axis(jnp.sum, 1, jnp.asarray(x[0]), keepdims=True), x[0].sum(1, keepdims=True))
    g = jax.grad(lambda a: jnp.sum(jnp.apply_along_axis(jnp.prod, 0, a)))(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    _same(g, [[3.0, 4.0], [1.0, 2.0]])
    with pytest.raises(ValueError):
        jnp.apply_along_axis(jnp.sum, 2, jnp.ones((2, 2)))


def test_apply_over_axes_and_fromfunction():
    x = np.arange(24.0).reshape(2, 3, 4)
    _same(jnp.apply_over_axes(jnp.sum, jnp.asarray(x), [0, 2]), np.apply_over_axes(np.sum, x, [0, 2]))
    with pytest.raises(ValueError, match="function is not returning an array of the correct shape"):
        jnp.apply_over_axes(lambda a, ax: jnp.sum(a), jnp.asarray(x), [0])
    with pytest.raises(TypeError):
        jnp.apply_over_axes(jnp.sum, jnp.asarray(x), 1)
    _same(jnp.fromfunction(lambda i, j: i + j, (2, 3)), np.fromfunction(lambda i, j: i + j, (2, 3)), "float32")
    _same(jnp.fromfunction(lambda i, j: i * j, (3, 3), dtype=int), np.fromfunction(lambda i, j: i * j, (3, 3),
                                                                                    dtype=int), "int32")
    # recorded from JAX 0.10.2: a function ignoring its arguments is broadcast by vmap
    _same(jnp.fromfunction(lambda i: 1, (2,)), [1, 1])


# ----------------------------------------------------------------- bytes, text, printing


def test_from_bytes_and_text():
    _same(jnp.frombuffer(b"\x01\x02\x03\x04", dtype=jnp.uint8), [1, 2, 3, 4], "uint8")
    _same(jnp.frombuffer(np.arange(3.0).tobytes()), [0.0, 1.0, 2.0], "float32")
    _same(jnp.frombuffer(b"\x01\x02\x03\x04", dtype=jnp.uint8, count=2, offset=1), [2, 3])
    _same(jnp.fromstring("1 2 3", sep=" "), [1.0, 2.0, 3.0], "float32")
    _same(jnp.fromstring("1,2,3", dtype=int, sep=","), [1, 2, 3], "int32")
    with pytest.raises(ValueError, match="buffer size must be a multiple of element size"):
        jnp.frombuffer(b"\x01\x02\x03", dtype=jnp.int16)
    with pytest.raises(TypeError):
        jnp.fromstring("1 2 3")
    with pytest.raises(ValueError):
        jnp.fromstring("1 2 3", sep="")
    with pytest.raises(NotImplementedError, match="jnp.fromiter\\(\\) is not implemented"):
        jnp.fromiter(iter([1, 2]), float)
    with pytest.raises(NotImplementedError, match="jnp.fromfile\\(\\) is not implemented"):
        jnp.fromfile("x")


def test_printing_helpers():
    assert jnp.iterable(jnp.ones(2)) and not jnp.iterable(jnp.float32(1)) and not jnp.iterable(3)
    assert jnp.iterable([1])
    # recorded from JAX 0.10.2
    assert jnp.array_repr(jnp.arange(3.0)) == "ArrayImpl([0., 1., 2.], dtype=float32)"
    assert jnp.array_str(jnp.arange(3.0)) == "[0. 1. 2.]"
    assert jnp.array_str(jnp.array([1.23456]), precision=2) == "[1.23]"
    assert jnp.get_printoptions() == np.get_printoptions()
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2
        assert str(jnp.array([1.23456])) == "[1.23]"
    before = jnp.get_printoptions()["precision"]
    try:
        jnp.set_printoptions(precision=3)
        assert np.get_printoptions()["precision"] == 3
    finally:
        jnp.set_printoptions(precision=before)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print(jnp.array_repr(jnp.arange(2)))
    assert buf.getvalue() == "ArrayImpl([0, 1], dtype=int32)\n"


def test_index_tricks_under_transforms():
    x = jnp.arange(3.0)
    _same(jax.jit(lambda a: jnp.r_[a, 1, 0:2])(x), [0, 1, 2, 1, 0, 1])
    _same(jax.jit(lambda a: jnp.c_[a, a])(x), [[0, 0], [1, 1], [2, 2]])
    _same(jax.grad(lambda a: jnp.sum(jnp.r_[a, a * 2]))(x), [3, 3, 3])
    # slice bounds set the output shape, so they must be concrete
    with pytest.raises(ConcretizationTypeError):
        jax.jit(lambda n: jnp.mgrid[0:n])(3)
    with pytest.raises(ConcretizationTypeError):
        jax.jit(lambda n: jnp.r_[0:n])(3)
