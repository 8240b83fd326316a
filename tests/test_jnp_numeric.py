"""What the operator table cannot express for the numeric corners of
jax.numpy: the `jnp.ufunc` objects and their methods (against NumPy's
ufuncs, and facts recorded from JAX 0.10.2), pad modes on several shapes,
order='F', scalar type names, gradients of i0 / pad, and JAX's exceptions."""
import inspect
import pickle

import numpy as np
import pytest
import scipy.special

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax

# The jnp functions that are jnp.ufunc objects in JAX 0.10.2 (recorded).
JAX_UFUNCS = ['add', 'bitwise_and', 'bitwise_or', 'bitwise_xor', 'logaddexp', 'logaddexp2', 'logical_and',
              'logical_or', 'logical_xor', 'maximum', 'minimum', 'multiply', 'negative', 'subtract']
# (nin, nout, identity) of each, recorded from JAX 0.10.2.
JAX_UFUNC_PROPS = {
    'add': (2, 1, 0), 'bitwise_and': (2, 1, -1), 'bitwise_or': (2, 1, 0), 'bitwise_xor': (2, 1, 0),
    'logaddexp': (2, 1, -np.inf), 'logaddexp2': (2, 1, -np.inf), 'logical_and': (2, 1, True),
    'logical_or': (2, 1, False), 'logical_xor': (2, 1, False), 'maximum': (2, 1, None),
    'minimum': (2, 1, None), 'multiply': (2, 1, 1), 'negative': (1, 1, None), 'subtract': (2, 1, None),
}


def _np(x):
    return np.asarray(x)


# ----------------------------------------------------------------- ufunc objects


def test_the_ufunc_set_matches_jax():
    found = sorted(n for n in dir(jnp) if isinstance(getattr(jnp, n), jnp.ufunc))
    assert found == JAX_UFUNCS
    for name, (nin, nout, identity) in JAX_UFUNC_PROPS.items():
        u = getattr(jnp, name)
        assert (u.nin, u.nout, u.nargs) == (nin, nout, nin)
        assert u.identity == identity and type(u.identity) is type(identity)
        assert u.__name__ == name and repr(u) == f"<jnp.ufunc '{name}'>"
    assert not isinstance(jnp.sin, jnp.ufunc) and not isinstance(jnp.divide, jnp.ufunc)


def test_ufunc_call_is_the_function():
    x, y = jnp.arange(3.0), jnp.ones(3)
    np.testing.assert_array_equal(_np(jnp.add(x, y)), np.arange(3.0) + 1)
    np.testing.assert_array_equal(_np(jnp.negative(x)), -np.arange(3.0))
    assert str(inspect.signature(jnp.add)) == "(x1, x2, /)"
    assert pickle.loads(pickle.dumps(jnp.multiply)) is jnp.multiply
    # Under every transform, and through the array operators' hooks.
    assert float(jax.jit(jnp.add)(1.0, 2.0)) == 3.0
    assert float(jax.grad(lambda v: jnp.multiply(v, v))(3.0)) == 6.0
    np.testing.assert_array_equal(_np(jax.vmap(jnp.subtract)(x, y)), np.arange(3.0) - 1)
    np.testing.assert_array_equal(_np(x + y), np.arange(3.0) + 1)
    jax.config.update("jax_debug_nans", True)  # eager calls take the checked Python path
    try:
        np.testing.assert_array_equal(_np(jnp.add(x, y)), np.arange(3.0) + 1)
        np.testing.assert_array_equal(_np(x * y), np.arange(3.0))
    finally:
        jax.config.update("jax_debug_nans", False)
    # lax.reduce_window still knows the jnp monoids.
    np.testing.assert_array_equal(_np(lax.reduce_window(x, 0.0, jnp.add, (2,), (1,), "VALID")), [1.0, 3.0])


REDUCE_CASES = [
    ("add", {}), ("add", {"axis": 1, "keepdims": True}), ("add", {"axis": None}), ("add", {"axis": (0, 1)}),
    ("add", {"axis": 1, "initial": 10.0}), ("add", {"axis": 1, "where": "mask"}), ("multiply", {"axis": 0}),
    ("maximum", {"axis": 1}), ("minimum", {}), ("maximum", {"axis": 1, "where": "mask", "initial": -1.0}),
    ("subtract", {"axis": 1}), ("logaddexp", {"axis": 1}),
    ("logaddexp2", {}), ("logical_and", {}), ("logical_or", {"axis": 1}), ("logical_xor", {"axis": 0}),
]


@pytest.mark.parametrize("name,kwargs", REDUCE_CASES, ids=[f"{n}-{k}" for n, k in REDUCE_CASES])
def test_reduce_matches_numpy(name, kwargs):
    x = np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -2.0]], np.float32)
    kw = dict(kwargs)
    if kw.get("where") == "mask":
        kw["where"] = x > 0
    want = getattr(np, name).reduce(x, **kw)
    got = getattr(jnp, name).reduce(x, **kw)
    np.testing.assert_allclose(_np(got), want, rtol=1e-6, atol=1e-6)
    assert _np(got).shape == np.shape(want)
    jitted = jax.jit(lambda v: getattr(jnp, name).reduce(v, **kw))(x)
    np.testing.assert_allclose(_np(jitted), want, rtol=1e-6, atol=1e-6)


def test_reduce_over_all_axes_folds_the_flattened_array():
    # NumPy refuses axis=None for subtract; JAX folds the flattened array (recorded from JAX 0.10.2).
    x = jnp.array([[0.5, -1.5, 2.0], [3.0, 0.25, -2.0]])
    got = jnp.subtract.reduce(x, axis=None, keepdims=True)
    assert got.shape == (1, 1)
    np.testing.assert_allclose(_np(got), [[-1.25]])


def test_reduce_integer_ufuncs_and_dtype():
    x = np.array([[5, 3, 6], [12, 7, 1]], np.int32)
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        for axis in (0, 1, None):
            np.testing.assert_array_equal(_np(getattr(jnp, name).reduce(x, axis=axis)),
                                          getattr(np, name).reduce(x, axis=axis))
    got = jnp.add.reduce(jnp.arange(4), dtype="float32")
    assert got.dtype == np.float32 and float(got) == 6.0
    got = jnp.subtract.reduce(jnp.arange(4.0).reshape(2, 2), axis=0, dtype="float32")
    np.testing.assert_array_equal(_np(got), [-2.0, -2.0])


def test_reduce_errors_match_jax():
    x = jnp.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match="reduce only supported for binary ufuncs"):
        jnp.negative.reduce(x)
    with pytest.raises(ValueError, match="does not have an identity, so to use a where mask"):
        jnp.maximum.reduce(x, where=x > 1)
    with pytest.raises(ValueError, match="zero-size array to reduction operation"):
        jnp.subtract.reduce(jnp.zeros((0, 3)))
    with pytest.raises(NotImplementedError, match="tuple of axes"):
        jnp.subtract.reduce(x, axis=(0, 1))
    with pytest.raises(ValueError, match="where argument must have dtype=bool"):
        jnp.add.reduce(x, where=x)
    with pytest.raises(NotImplementedError, match="out argument"):
        jnp.add.reduce(x, out=x)


def test_accumulate_matches_numpy():
    x = np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -2.0]], np.float32)
    for name in ("add", "multiply", "subtract", "maximum", "minimum", "logaddexp"):
        for axis in (0, 1, -1):
            np.testing.assert_allclose(_np(getattr(jnp, name).accumulate(x, axis=axis)),
                                       getattr(np, name).accumulate(x, axis=axis), rtol=1e-6, atol=1e-6)
    ints = np.array([5, 3, 6, 12], np.int32)
    np.testing.assert_array_equal(_np(jnp.bitwise_or.accumulate(ints)), np.bitwise_or.accumulate(ints))
    assert jnp.add.accumulate(jnp.zeros((0, 2))).shape == (0, 2)
    with pytest.raises(ValueError, match="accumulate does not allow multiple axes"):
        jnp.subtract.accumulate(x, axis=None)
    with pytest.raises(ValueError, match="accumulate only supported for binary ufuncs"):
        jnp.negative.accumulate(x)


def test_at_matches_numpy_and_needs_inplace_false():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for name, idx, b in [("add", (0, 1), 5.0), ("add", ([0, 0, 1], [2, 2, 0]), np.float32([1, 2, 3])),
                         ("multiply", (slice(None), 1), 3.0), ("subtract", np.array([1, 1]), 2.0),
                         ("maximum", ([0, 0], [1, 1]), np.float32([4, 0.5])), ("logaddexp", (1, 2), 1.0),
                         ("minimum", 0, np.float32([1, -1, 5]))]:
        want = a.copy()
        getattr(np, name).at(want, idx, b)
        got = getattr(jnp, name).at(a, idx, b, inplace=False)
        np.testing.assert_allclose(_np(got), want, rtol=1e-6, err_msg=name)
    want = np.arange(5.0)
    np.negative.at(want, [0, 0, 2])
    np.testing.assert_array_equal(_np(jnp.negative.at(jnp.arange(5.0), jnp.array([0, 0, 2]), inplace=False)), want)
    with pytest.raises(NotImplementedError, match="cannot operate inplace"):
        jnp.add.at(a, 0, 1.0)
    with pytest.raises(TypeError, match="non-tuple sequence"):  # as JAX: index arrays, not lists
        jnp.add.at(a, [0, 1], 1.0, inplace=False)
    # Traced indices and values, and gradients through the scatter.
    f = jax.jit(lambda v, i: jnp.maximum.at(v, i, 2.5, inplace=False))
    np.testing.assert_array_equal(_np(f(jnp.arange(3.0), jnp.array([0, 0, 1]))), [2.5, 2.5, 2.0])
    g = jax.grad(lambda v: jnp.multiply.at(v, jnp.array([1, 1]), 3.0, inplace=False).sum())(jnp.ones(3))
    np.testing.assert_array_equal(_np(g), [1.0, 9.0, 1.0])


def test_reduceat_and_outer_match_numpy():
    x = np.arange(8.0, dtype=np.float32) ** 1.5
    for name in ("add", "multiply", "maximum", "subtract"):
        for idx in ([0, 4, 1, 5], [0, 3, 6], [2, 2, 7]):
            np.testing.assert_allclose(_np(getattr(jnp, name).reduceat(x, idx)), getattr(np, name).reduceat(x, idx),
                                       rtol=1e-5, err_msg=f"{name} {idx}")
    m = x.reshape(2, 4)
    np.testing.assert_allclose(_np(jnp.add.reduceat(m, [0, 1], axis=1)), np.add.reduceat(m, [0, 1], axis=1))
    with pytest.raises(ValueError, match="reduceat requires a single integer axis"):
        jnp.add.reduceat(m, [0], axis=None)
    with pytest.raises(ValueError, match="indices must be one-dimensional"):
        jnp.add.reduceat(m, [[0]])
    a, b = np.arange(3, dtype=np.int32), np.arange(2.0, dtype=np.float32)
    for name in ("add", "subtract", "multiply", "maximum", "logaddexp", "bitwise_and"):
        if name == "bitwise_and":
            b = np.arange(2, dtype=np.int32)
        got = getattr(jnp, name).outer(a, b)
        want = getattr(np, name).outer(a, b)
        np.testing.assert_allclose(_np(got), want, rtol=1e-6)
    with pytest.raises(ValueError, match="outer only supported for binary ufuncs"):
        jnp.negative.outer(a, a)


def test_frompyfunc_ufunc():
    f = jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=0)
    assert isinstance(f, jnp.ufunc) and (f.nin, f.nout, f.identity) == (2, 1, 0)
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(_np(f(x, 2.0)), [1.0, 3.0, 5.0])
    # reduce starts from the identity: ((0*0+1)*1+1)*2+1 = 5
    assert float(f.reduce(x)) == 5.0
    np.testing.assert_array_equal(_np(f.accumulate(x)), [0.0, 1.0, 3.0])
    np.testing.assert_array_equal(_np(f.outer(jnp.arange(2.0), x)), [[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(_np(f.at(x, 1, 10.0, inplace=False)), [0.0, 11.0, 2.0])
    # A ufunc with no identity reduces from the first element; a nout=2 one cannot reduce.
    g = jnp.frompyfunc(lambda a, b: a - 2 * b, 2, 1)
    assert float(g.reduce(jnp.array([10.0, 1.0, 2.0]))) == 4.0
    two = jnp.frompyfunc(lambda a, b: (a, b), 2, 2)
    with pytest.raises(ValueError, match="functions returning a single value"):
        two.reduce(x)
    # d/dv of (0 * v0 + 1) * v1 + 1
    np.testing.assert_array_equal(_np(jax.grad(lambda v: f.reduce(v))(jnp.array([1.0, 2.0]))), [0.0, 1.0])


# ----------------------------------------------------------------- pad modes


PAD_CASES = [
    ("linear_ramp", {}), ("linear_ramp", {"end_values": (-3, 20)}), ("linear_ramp", {"end_values": ((1, 2), (3, 4))}),
    ("maximum", {}), ("minimum", {"stat_length": 2}), ("mean", {"stat_length": ((1, 3), (2, 1))}),
    ("mean", {}), ("median", {}), ("median", {"stat_length": (2, 3)}),
    ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"}),
    ("reflect", {"reflect_type": "even"}), ("symmetric", {}), ("edge", {}), ("wrap", {}),
]


@pytest.mark.parametrize("mode,kwargs", PAD_CASES, ids=[f"{m}-{k}" for m, k in PAD_CASES])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("shape,width", [((5,), (3, 7)), ((3, 4), ((1, 2), (3, 0))), ((2, 3), ((5, 6), (9, 2)))])
def test_pad_modes_match_numpy(mode, kwargs, dtype, shape, width):
    x = (np.arange(np.prod(shape)).reshape(shape) * 7 % 11 - 3).astype(dtype)
    kw = dict(kwargs)
    if len(shape) == 1 and isinstance(kw.get("end_values"), tuple) and isinstance(kw["end_values"][0], tuple):
        kw["end_values"] = kw["end_values"][0]
    if len(shape) == 1 and isinstance(kw.get("stat_length"), tuple) and isinstance(kw["stat_length"][0], tuple):
        kw["stat_length"] = kw["stat_length"][0]
    want = np.pad(x, width, mode=mode, **kw)
    got = jnp.pad(x, width, mode=mode, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(_np(got), want, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(_np(jax.jit(lambda v: jnp.pad(v, width, mode=mode, **kw))(x)), want,
                               rtol=1e-6, atol=1e-5)


def test_pad_empty_callable_and_gradients():
    x = np.array([1.0, 4.0, 2.0, 8.0, 5.0], np.float32)
    got = jnp.pad(x, (2, 3), mode="empty")
    assert got.shape == (10,) and got.dtype == np.float32
    np.testing.assert_array_equal(_np(got)[2:7], x)

    def ends(vector, width, axis, kwargs):
        return vector.at[: width[0]].set(kwargs.get("fill", -1.0)).at[vector.shape[0] - width[1]:].set(9.0)

    m = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(_np(jnp.pad(m, 1, mode=ends, fill=-2.0)), np.pad(m, 1, mode=_np_ends))
    # Gradients recorded from JAX 0.10.2.
    g = jax.grad(lambda v: jnp.pad(v, 2, mode="mean").sum())(x)
    np.testing.assert_allclose(_np(g), [1.8] * 5, rtol=1e-6)
    g = jax.grad(lambda v: jnp.pad(v, 2, mode="linear_ramp", end_values=1.0).sum())(x)
    np.testing.assert_allclose(_np(g), [1.5, 1.0, 1.0, 1.0, 1.5], rtol=1e-6)
    g = jax.grad(lambda v: jnp.pad(v, 3, mode="reflect", reflect_type="odd").sum())(x)
    np.testing.assert_allclose(_np(g), [7.0, -1.0, -1.0, -1.0, 7.0], rtol=1e-6)
    g = jax.grad(lambda v: jnp.pad(v, 3, mode="symmetric", reflect_type="odd").sum())(x)
    np.testing.assert_allclose(_np(g), [6.0, 0.0, -1.0, 0.0, 6.0], rtol=1e-6)


def _np_ends(vector, width, axis, kwargs):
    vector[: width[0]] = -2.0
    vector[vector.shape[0] - width[1]:] = 9.0


def test_pad_errors_match_jax():
    x = jnp.ones(5)
    with pytest.raises(ValueError, match="stat_length of 0 yields no value for padding"):
        jnp.pad(x, 2, mode="mean", stat_length=0)
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode 'bogus' for np.pad."):
        jnp.pad(x, 2, mode="bogus")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'constant'"):
        jnp.pad(x, 2, mode="constant", stat_length=2)
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        jnp.pad(x, 2, mode="edge", reflect_type="odd")
    with pytest.raises(ValueError, match="can't extend empty axis"):
        jnp.pad(jnp.ones((0, 2)), 1, mode="maximum")


# ----------------------------------------------------------------- order, astype, repeat, cumulative


def test_order_f_reshape_ravel_flatten():
    m = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    x = jnp.asarray(m)
    for got in (jnp.ravel(x, order="F"), x.ravel(order="F"), x.ravel("F"), x.flatten(order="F"), x.flatten("F"),
                jnp.reshape(x, -1, order="F")):
        np.testing.assert_array_equal(_np(got), m.ravel(order="F"))
    for got in (jnp.reshape(x, (2, 6), order="F"), x.reshape((2, 6), order="F"), x.reshape(2, 6, order="F")):
        np.testing.assert_array_equal(_np(got), m.reshape((2, 6), order="F"))
    np.testing.assert_array_equal(_np(jax.jit(lambda v: v.reshape(6, 2, order="F"))(x)), m.reshape(6, 2, order="F"))
    np.testing.assert_array_equal(_np(x.flatten()), m.ravel())
    # Recorded from JAX 0.10.2: 'A' raises for reshape; 'K' for ravel; anything else is a ValueError.
    for call in (lambda: jnp.reshape(x, (2, 6), order="A"), lambda: jnp.ravel(x, order="A")):
        with pytest.raises(NotImplementedError, match="order=A is not implemented"):
            call()
    with pytest.raises(NotImplementedError, match="order='K'"):
        jnp.ravel(x, order="K")
    with pytest.raises(ValueError, match="Unexpected value for 'order' argument: X."):
        jnp.ravel(x, order="X")


def test_astype_copy_and_device():
    x = jnp.arange(3.0)
    for got in (jnp.astype(x, "int32", copy=True), x.astype("int32", copy=True), jnp.astype(x, "int32", copy=False),
                x.astype(jnp.int32, copy=False, device=None)):
        assert got.dtype == np.int32
        np.testing.assert_array_equal(_np(got), [0, 1, 2])
    assert jnp.astype(x, None).dtype == np.float32


def test_repeat_one_element_repeats_and_traced_repeats():
    x = jnp.arange(3)
    for reps in (jnp.array([2]), np.array([2])):
        np.testing.assert_array_equal(_np(jnp.repeat(x, reps)), [0, 0, 1, 1, 2, 2])
    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(_np(jnp.repeat(m, jnp.array([2]), axis=1)), np.repeat(m, 2, axis=1))
    f = jax.jit(lambda r: jnp.repeat(x, r, total_repeat_length=6))
    np.testing.assert_array_equal(_np(f(jnp.array([2]))), [0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(_np(f(jnp.array([1, 0, 2]))), [0, 2, 2, 2, 2, 2])
    g = jax.jit(lambda r: jnp.repeat(x, r, total_repeat_length=4))
    np.testing.assert_array_equal(_np(g(jnp.array([3, 3, 3]))), [0, 0, 0, 1])
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda r: jnp.repeat(x, r))(jnp.array([2]))


def test_cumulative_sum_and_prod():
    m = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(_np(jnp.cumulative_sum(m, axis=1, include_initial=True)),
                                  np.cumulative_sum(m, axis=1, include_initial=True))
    np.testing.assert_array_equal(_np(jnp.cumulative_prod(m, axis=0, include_initial=True)),
                                  np.cumulative_prod(m, axis=0, include_initial=True))
    got = jnp.cumulative_sum(jnp.array([True, False, True]), include_initial=True)
    assert got.dtype == np.int32 and _np(got).tolist() == [0, 1, 1, 2]
    assert jnp.cumulative_sum(jnp.zeros((2, 0)), axis=1, include_initial=True).shape == (2, 1)
    assert jnp.cumulative_sum(jnp.arange(3), dtype="float32").dtype == np.float32
    with pytest.raises(ValueError, match="rank 2, however axis was not set to an explicit value"):
        jnp.cumulative_sum(jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="non-scalar to take a cumulative product"):
        jnp.cumulative_prod(jnp.array(3.0))
    with pytest.raises(TypeError):
        jnp.cumulative_sum(jnp.ones(3), 0)  # axis is keyword-only


def test_interp_period_and_extrapolate():
    x = np.array([-180.0, -170, -185, 185, -10, -5, 0, 365], np.float32)
    xp = np.array([190.0, -190, 350, -350], np.float32)
    fp = np.array([5.0, 10, 3, 4], np.float32)
    np.testing.assert_allclose(_np(jnp.interp(x, xp, fp, period=360)), np.interp(x, xp, fp, period=360), rtol=1e-6)
    # Recorded from JAX 0.10.2: period=0 gives nan, left / right are ignored with a period.
    assert np.isnan(_np(jnp.interp(jnp.array([1.0]), jnp.array([0.0, 2.0]), jnp.array([0.0, 1.0]), period=0))).all()
    np.testing.assert_allclose(_np(jnp.interp(jnp.array([1.0]), jnp.array([0.0, 2.0]), jnp.array([0.0, 1.0]),
                                              left=0.0, period=3)), [0.5])
    got = jnp.interp(jnp.array([-1.0, 3.0, 1.0]), jnp.array([0.0, 2.0]), jnp.array([0.0, 1.0]),
                     left="extrapolate", right="extrapolate")
    np.testing.assert_allclose(_np(got), [-0.5, 1.5, 0.5])
    with pytest.raises(ValueError, match="must be an array-like or 'extrapolate'"):
        jnp.interp(jnp.array([1.0]), jnp.array([0.0, 2.0]), jnp.array([0.0, 1.0]), left="bogus")


def test_nan_to_num_and_ldexp_semantics():
    x = jnp.array([np.nan, np.inf, -np.inf, 1.0])
    info = np.finfo(np.float32)
    np.testing.assert_array_equal(_np(jnp.nan_to_num(x)), [0.0, info.max, info.min, 1.0])
    np.testing.assert_array_equal(_np(jnp.nan_to_num(x, True, 5.0)), [5.0, info.max, info.min, 1.0])
    np.testing.assert_array_equal(_np(jnp.nan_to_num(x, nan=jnp.array([1.0, 2, 3, 4]))), [1.0, info.max, info.min, 1.0])
    assert jnp.nan_to_num(jnp.arange(3)).dtype == np.int32
    assert _np(jnp.nan_to_num(x.astype("float16")))[1] == np.finfo(np.float16).max
    # ldexp: integer / bool mantissas give float32 (recorded from JAX 0.10.2); exact at the range ends.
    for x1, x2 in ((jnp.array([1, 2]), jnp.array([3, -1])), (jnp.array([True]), 2), (1.5, 3)):
        assert jnp.ldexp(x1, x2).dtype == np.float32
    assert jnp.ldexp(jnp.array([1.0], "float16"), jnp.array([3])).dtype == np.float16
    big = np.array([2.0 ** 100, 0.5, 1.5, 1.0], np.float32)
    exps = np.array([-150, 128, 127, 400], np.int32)
    with np.errstate(over="ignore"):
        want = np.ldexp(big, exps)
    np.testing.assert_array_equal(_np(jnp.ldexp(big, exps)), want)
    assert float(jax.grad(lambda v: jnp.ldexp(v, 3))(1.0)) == 8.0
    with pytest.raises(ValueError, match="ldexp not supported for input types"):
        jnp.ldexp(jnp.ones(2), jnp.ones(2))


# ----------------------------------------------------------------- new functions: facts beyond the table


def test_scalar_type_names():
    assert jnp.bool is jnp.bool_ and jnp.single is jnp.float32 and jnp.double is jnp.float64
    assert jnp.uint is jnp.uint64
    assert jnp.character is np.character and jnp.flexible is np.flexible and jnp.object_ is np.object_
    assert jnp.bool(1).dtype == np.bool_ and bool(jnp.bool(1))
    assert jnp.single(2).dtype == np.float32
    assert jnp.euler_gamma == np.euler_gamma
    # dtype queries that return Python bools still do.
    assert jnp.issubdtype(jnp.float32, jnp.floating) is True
    assert jnp.can_cast(jnp.int8, jnp.int32) is True


def test_i0_values_and_derivative():
    x = np.linspace(-40, 40, 161)
    with jax.enable_x64():
        np.testing.assert_allclose(_np(jnp.i0(x)), scipy.special.i0(x), rtol=1e-12)
        # JAX differentiates i0 to i1 (and 0 at x = 0).
        g = jax.vmap(jax.grad(jnp.i0))(jnp.asarray(x))
        np.testing.assert_allclose(_np(g), scipy.special.i1(x), rtol=1e-12, atol=1e-300)
        assert float(jax.grad(jnp.i0)(0.0)) == 0.0
        h = jax.grad(jax.grad(jnp.i0))(1.5)
        np.testing.assert_allclose(float(h), scipy.special.i0(1.5) - scipy.special.i1(1.5) / 1.5, rtol=1e-10)
    assert jnp.i0(jnp.arange(3)).dtype == np.float32


def test_polynomial_facts():
    # Recorded from JAX 0.10.2.
    assert jnp.polyadd(jnp.array([1, 2]), jnp.array([3])).dtype == np.int32
    assert jnp.polyval(jnp.array([1, 2]), jnp.array([3, 4])).dtype == np.int32
    assert jnp.polymul(jnp.array([1, 2]), jnp.array([3, 4])).dtype == np.float32
    assert float(jnp.poly(jnp.zeros((0,)))) == 1.0
    np.testing.assert_array_equal(_np(jnp.polymul(jnp.array([0.0, 0, 1, 2]), jnp.array([1.0, 4]),
                                                  trim_leading_zeros=True)), [1.0, 6.0, 8.0])
    q, r = jnp.polydiv(jnp.array([1.0, 2, 3]), jnp.array([1.0, 1]), trim_leading_zeros=True)
    np.testing.assert_allclose(_np(q), [1.0, 1.0])
    np.testing.assert_allclose(_np(r), [2.0])
    q, r = jnp.polydiv(jnp.array([1.0, 2, 3]), jnp.array([1.0, 1]))
    np.testing.assert_allclose(_np(r), [0.0, 0.0, 2.0])
    np.testing.assert_allclose(_np(jnp.polyint(jnp.array([12.0, 12, 6]), m=2, k=jnp.array([4.0, 5.0]))),
                               [1.0, 2.0, 3.0, 4.0, 5.0])
    with pytest.raises(ValueError, match="k must be a scalar or a rank-1 array of length 1 or m"):
        jnp.polyint(jnp.ones(3), 2, k=jnp.ones(3))
    assert jnp.polyder(jnp.ones(2), 3).shape == (0,)
    x = np.linspace(0, 1, 8).astype(np.float32)
    y = (x ** 2 - 0.3 * x + np.sin(x)).astype(np.float32)
    coef, resid, rank, sv, rcond = jnp.polyfit(x, y, 2, full=True)
    want = np.polyfit(x.astype(np.float64), y.astype(np.float64), 2, full=True)
    np.testing.assert_allclose(_np(coef), want[0], rtol=1e-3, atol=1e-4)
    assert int(rank) == want[2] and resid.shape == (1,)
    np.testing.assert_allclose(float(rcond), 8 * np.finfo(np.float32).eps, rtol=1e-6)
    grad = jax.grad(lambda v: jnp.polyfit(x, v, 1)[0])(jnp.asarray(y))
    np.testing.assert_allclose(_np(grad), np.polyfit(x.astype(np.float64), np.eye(8), 1)[0], rtol=1e-3, atol=1e-4)


def test_gradient_returns_list_for_several_axes():
    m = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]], np.float32)
    got = jnp.gradient(m)
    assert isinstance(got, list) and len(got) == 2
    for g, w in zip(got, np.gradient(m)):
        np.testing.assert_allclose(_np(g), w)
    got = jnp.gradient(m, 2.0, 3.0)
    for g, w in zip(got, np.gradient(m, 2.0, 3.0)):
        np.testing.assert_allclose(_np(g), w, rtol=1e-6)
    assert not isinstance(jnp.gradient(m, axis=(1,)), list)
    assert jnp.gradient(jnp.array([1, 4, 9])).dtype == np.float32


def test_unwrap_dtypes():
    # Recorded from JAX 0.10.2: integer input with an integer period stays integer.
    got = jnp.unwrap(jnp.array([1, 2, 3, 4, 5, 6, 1, 2, 3]), period=6)
    assert got.dtype == np.int32 and _np(got).tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert jnp.unwrap(jnp.array([1, 2, 8, 4])).dtype == np.float32


def test_elementwise_errors_and_dtypes():
    with pytest.raises(ValueError, match="Arguments to jax.numpy.gcd must be integers."):
        jnp.gcd(jnp.array([True]), jnp.array([True]))
    assert jnp.gcd(12, 18).dtype == np.int32 and int(jnp.gcd(12, 18)) == 6
    mant, expo = jnp.frexp(jnp.array([True, False]))
    assert mant.dtype == np.float32 and expo.dtype == np.int32
    assert _np(mant).tolist() == [0.5, 0.0] and _np(expo).tolist() == [1, 0]
    assert jnp.nextafter(jnp.array([1, 2]), jnp.array([2, 1])).dtype == np.float32
    assert jnp.fabs(jnp.array([True])).dtype == np.float32
    assert jnp.bitwise_count(jnp.array([True, False])).dtype == np.uint8
    assert jnp.iscomplex(3.0).dtype == np.bool_ and bool(jnp.isreal(3.0))


def test_windows_and_bits_facts():
    # Recorded from JAX 0.10.2: a float length is accepted; an array length too.
    np.testing.assert_allclose(_np(jnp.kaiser(3.0, 2.0)), np.kaiser(3, 2.0), rtol=1e-6)
    np.testing.assert_allclose(_np(jnp.hamming(jnp.array(4))), np.hamming(4), rtol=1e-6, atol=1e-7)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jnp.hanning)(4)
    bits = np.array([[1, 0, 1], [0, 1, 1]], np.uint8)
    np.testing.assert_array_equal(_np(jnp.unpackbits(jnp.packbits(bits, axis=1), axis=1, count=3)), bits)
    f = jax.jit(lambda b: jnp.packbits(b, axis=0, bitorder="little"))
    np.testing.assert_array_equal(_np(f(bits)), np.packbits(bits, axis=0, bitorder="little"))


def test_matvec_vecmat_and_cond_facts():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        jnp.matvec(np.ones(3, np.float32), np.ones(3, np.float32))
    assert jnp.matvec(jnp.ones((2, 2), "int32"), jnp.ones(2, "int32")).dtype == np.int32
    g = jax.grad(lambda m: jnp.matvec(m, jnp.array([1.0, 2.0, 3.0])).sum())(a)
    np.testing.assert_array_equal(_np(g), [[1.0, 2.0, 3.0]] * 2)
    singular = jnp.array([[1.0, 2.0], [2.0, 4.0]])
    assert np.isinf(float(jnp.linalg.cond(singular, 1)))
    assert jnp.linalg.cond(jnp.array([[1, 2], [3, 4]])).dtype == np.float32
    np.testing.assert_allclose(float(jax.jit(lambda m: jnp.linalg.cond(m, 1))(jnp.array([[1.0, 2.0], [3.0, 4.0]]))),
                               21.0, rtol=1e-5)
