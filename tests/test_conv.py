"""Convolutions and windowed reductions beyond the operator table
(tests/op_table/conv.py holds the value / jit / grad / vmap records):
SAME shapes for every stride, layouts and dimension numbers, nested
transforms, max-pool tie-breaking, preferred_element_type, errors with
JAX's exception types, and the CNN example's loss going down."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax

from example_modules import load_example
from op_table.conv import conv_ref, window_ref


def _rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("size", [5, 6, 7])
@pytest.mark.parametrize("window", [1, 2, 3, 4])
def test_same_padding_output_is_ceil_of_input_over_stride(stride, size, window):
    x, w = _rand(1, 2, size, size + 1), _rand(3, 2, window, window)
    for padding in ("SAME", "SAME_LOWER", "same"):
        y = lax.conv_general_dilated(x, w, (stride, stride), padding)
        assert y.shape == (1, 3, -(-size // stride), -(-(size + 1) // stride))
        np.testing.assert_allclose(
            y, conv_ref(x, w, (stride, stride), padding), rtol=1e-5, atol=1e-5)
    y = lax.conv_general_dilated(x, w, (stride, stride), "VALID")
    assert y.shape[2] == (size - window) // stride + 1


def test_padtype_to_pads_and_dimension_numbers():
    assert lax.padtype_to_pads((5, 6), (3, 4), (2, 1), "SAME") == [(1, 1), (1, 2)]
    assert lax.padtype_to_pads((5, 6), (3, 4), (2, 1), "SAME_LOWER") == [(1, 1), (2, 1)]
    assert lax.padtype_to_pads((5,), (3,), (1,), "VALID") == [(0, 0)]
    dn = lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    # spatial dimensions follow the rhs spec's order
    dn = lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), ("NCHW", "OIWH", "NCWH"))
    assert dn == lax.ConvDimensionNumbers((0, 1, 3, 2), (0, 1, 2, 3), (0, 1, 2, 3))
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None) == ((0, 1, 2),) * 3


def test_jaxpr_params_are_jaxs():
    x, w = _rand(1, 2, 5, 5), _rand(3, 2, 3, 3)
    jaxpr = jax.make_jaxpr(lambda a, b: lax.conv(a, b, (1, 1), "SAME"))(x, w)
    (eqn,) = jaxpr.eqns
    assert eqn.primitive.name == "conv_general_dilated"
    p = eqn.params
    assert p["padding"] == ((1, 1), (1, 1)) and p["window_strides"] == (1, 1)
    assert isinstance(p["dimension_numbers"], lax.ConvDimensionNumbers)
    assert p["feature_group_count"] == 1 and p["batch_group_count"] == 1
    assert "dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3)" in str(jaxpr)
    # user interpreters re-bind with eqn.params
    y = eqn.primitive.bind(jnp.asarray(x), jnp.asarray(w), **p)
    np.testing.assert_allclose(y, lax.conv(x, w, (1, 1), "SAME"), rtol=1e-6)


def test_nested_transforms_match_loops(x64):
    xs, w = _rand(4, 1, 2, 6, seed=1, dtype=np.float64), _rand(3, 2, 3, seed=2, dtype=np.float64)

    def f(x, w):
        y = lax.conv_general_dilated(x, w, (2,), "SAME", rhs_dilation=(1,))
        y = lax.reduce_window(jnp.tanh(y), -jnp.inf, lax.max, (1, 1, 2), (1, 1, 1), "SAME")
        return jnp.sum(y ** 2)

    g = jax.jit(jax.vmap(jax.grad(f, argnums=(0, 1)), in_axes=(0, None)))
    gx, gw = g(xs, w)
    for i in range(4):
        ex, ew = jax.grad(f, argnums=(0, 1))(xs[i], w)
        np.testing.assert_allclose(gx[i], ex, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gw[i], ew, rtol=1e-12, atol=1e-12)
    # grad of grad (a Hessian-vector product) through both transposes
    hv = jax.grad(lambda w: jnp.sum(jax.grad(f, argnums=1)(xs[0], w) * w))(w)
    eps = 1e-6
    fd = (jax.grad(f, argnums=1)(xs[0], w + eps * w) - jax.grad(f, argnums=1)(xs[0], w - eps * w))
    gw = jax.grad(f, argnums=1)(xs[0], w)
    np.testing.assert_allclose(hv, gw + np.asarray(fd) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_vmap_over_kernels_and_groups():
    x, ws = _rand(2, 4, 6), _rand(5, 6, 2, 3, seed=3)

    def f(w):
        return lax.conv_general_dilated(x, w, (1,), "VALID", feature_group_count=2)

    got = jax.vmap(f)(ws)
    want = np.stack([f(w) for w in ws])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    got = jax.vmap(f, in_axes=2)(np.moveaxis(ws, 0, 2))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_max_pool_gradient_goes_to_the_first_maximum():
    x = jnp.asarray([1.0, 3.0, 3.0, 2.0])

    def pool_sum(x):
        return jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (2,), (1,), "VALID"))

    np.testing.assert_array_equal(jax.grad(pool_sum)(x), [0.0, 2.0, 1.0, 0.0])
    min_pool = jax.grad(lambda x: jnp.sum(lax.reduce_window(x, jnp.inf, jnp.minimum, (2,), (2,), "VALID")))
    np.testing.assert_array_equal(min_pool(x), [1.0, 0.0, 0.0, 1.0])


def test_reduce_window_sum_transpose_with_dilation(x64):
    x = _rand(5, 4, seed=4, dtype=np.float64)
    kw = dict(base_dilation=(2, 1), window_dilation=(1, 2))

    def f(x):
        return lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2), ((0, 1), (1, 0)), **kw)

    c = _rand(*f(x).shape, seed=5, dtype=np.float64)
    g = jax.grad(lambda x: jnp.sum(f(x) * c))(x)
    # linear: <grad, e_i> = f(e_i) . c
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1.0
        assert abs(g[i] - np.sum(window_ref("add")(e, 0.0, (2, 2), (1, 2), ((0, 1), (1, 0)), **kw) * c)) < 1e-12


def test_preferred_element_type_and_integer_inputs():
    x = np.arange(12, dtype=np.int8).reshape(1, 2, 6)
    w = np.ones((1, 2, 3), np.int8)
    y = lax.conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=np.int32)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, conv_ref(x.astype(np.int32), w.astype(np.int32), (1,), "VALID"))
    y = lax.conv_general_dilated(x.astype(np.float16), w.astype(np.float16), (1,), "VALID",
                                 preferred_element_type=np.float32)
    assert y.dtype == np.float32


def test_conv_errors_raise_jax_exception_types():
    x, w = _rand(1, 4, 5), _rand(2, 3, 2)
    with pytest.raises(ValueError, match=r"4 // 1 != 3"):
        lax.conv_general_dilated(x, w, (1,), "VALID")
    with pytest.raises(ValueError, match="feature_group_count must divide"):
        lax.conv_general_dilated(x, _rand(3, 1, 2), (1,), "VALID", feature_group_count=3)
    with pytest.raises(ValueError, match="multiple of feature_group_count"):
        lax.conv_general_dilated(x, _rand(3, 2, 2), (1,), "VALID", feature_group_count=2)
    with pytest.raises(ValueError, match="batch_group_count must divide"):
        lax.conv_general_dilated(_rand(3, 4, 5), _rand(2, 4, 2), (1,), "VALID", batch_group_count=2)
    with pytest.raises(TypeError, match="ndim to be equal"):
        lax.conv_general_dilated(x, _rand(2, 4), (1,), "VALID")
    with pytest.raises(TypeError, match="same dtype"):
        lax.conv_general_dilated(x, _rand(2, 4, 2).astype(np.float64) if jax.config.jax_enable_x64
                                 else _rand(2, 4, 2).astype(np.int32), (1,), "VALID")
    with pytest.raises(TypeError, match="exactly once"):
        lax.conv_general_dilated(x, _rand(2, 4, 2), (1,), "VALID", dimension_numbers=("NCH", "OOH", "NCH"))
    with pytest.raises(TypeError, match="must have len equal"):
        lax.conv_general_dilated(x, _rand(2, 4, 2), (1,), "VALID", dimension_numbers=("NCHW", "OIH", "NCH"))
    with pytest.raises(RuntimeError, match="Unrecognized padding type"):
        lax.conv_general_dilated(x, _rand(2, 4, 2), (1,), "FULL")
    with pytest.raises(ValueError, match="String padding is not implemented"):
        lax.conv_general_dilated(x, _rand(2, 4, 2), (1,), "SAME", lhs_dilation=(2,))
    with pytest.raises(ValueError, match="one entry per spatial dimension"):
        lax.conv_general_dilated(x, _rand(2, 4, 2), (1, 1), ((0, 0),))
    with pytest.raises(ValueError, match="sequence of \\(low, high\\) pairs"):
        lax.conv_general_dilated(x, _rand(2, 4, 2), (1,), (1,))


def test_reduce_window_errors():
    x = _rand(4, 4)
    # Other computations and init values run as a fold over the window
    # (tests/test_lax_more.py); here against NumPy.
    xn = np.asarray(x, np.float64)
    prods = xn[:-1, :-1] * xn[1:, :-1] * xn[:-1, 1:] * xn[1:, 1:]
    np.testing.assert_allclose(np.asarray(lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 1), "VALID")), prods,
                               rtol=1e-5)
    sums = xn[:-1, :-1] + xn[1:, :-1] + xn[:-1, 1:] + xn[1:, 1:]
    np.testing.assert_allclose(np.asarray(lax.reduce_window(x, 1.0, lax.add, (2, 2), (1, 1), "VALID")), sums + 1,
                               rtol=1e-5)
    with pytest.raises(ValueError, match="one entry per operand dimension"):
        lax.reduce_window(x, 0.0, lax.add, (2,), (1,), ((0, 0),))
    with pytest.raises(TypeError, match="larger than the padded operand"):
        lax.reduce_window(x, 0.0, lax.add, (6, 1), (1, 1), "VALID")
    with pytest.raises(NotImplementedError, match="dilated"):
        jax.grad(lambda x: jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "VALID",
                                                     window_dilation=(2, 1))))(x)


def test_convolve_correlate_errors():
    with pytest.raises(ValueError, match="only support 1-dimensional"):
        jnp.convolve(jnp.ones((2, 2)), jnp.ones(2))
    with pytest.raises(ValueError, match="inputs cannot be empty"):
        jnp.correlate(jnp.ones(3), jnp.ones(0))
    with pytest.raises(ValueError, match="mode must be one of"):
        jnp.convolve(jnp.ones(3), jnp.ones(2), mode="wrap")
    # integer inputs promote to the default float, as JAX
    y = jnp.convolve(np.array([1, 2, 3]), np.array([1, 1]))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, [1.0, 3.0, 5.0, 3.0])


def test_cnn_example_loss_decreases():
    losses = load_example("cnn").train(steps=25)
    assert all(np.isfinite(losses))
    assert losses[-1] < 0.7 * losses[0], losses


@pytest.mark.parametrize("case", [
    # (lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, dimension_numbers, groups)
    ((2, 3, 300, 301), (4, 3, 3, 3), (1, 1), "SAME", None, None, None, 1),
    ((1, 4, 257, 263), (6, 2, 3, 2), (2, 1), [(1, 2), (0, 1)], (1, 2), (2, 1), None, 2),
    ((2, 260, 250, 3), (3, 3, 3, 5), (1, 1), "SAME", None, None, ("NHWC", "HWIO", "NHWC"), 1),
    ((300, 8, 12, 12), (4, 8, 3, 3), (1, 1), "VALID", None, None, None, 1),
], ids=["same", "strided-dilated-grouped", "nhwc", "many-images"])
def test_convolutions_split_into_column_tiles_match_numpy(x64, case):
    """float32/float64 convolutions run as column tiles of about 2^19
    elements over the (image, output position) columns, one parallel task
    per image where the batch is the output's outermost axis: these split
    into several tiles with boundaries inside output rows, through padding
    and dilation holes, one image (tiles across the positions), two large
    images in NCHW and NHWC, and many small ones (one tile each); eagerly
    and under jit they agree with a NumPy reference, and float64 with it
    closely."""
    ls, rs, strides, padding, ld, rd, dn, groups = case
    x = _rand(*ls, seed=1)
    w = _rand(*rs, seed=2)

    def f(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, lhs_dilation=ld, rhs_dilation=rd,
                                        dimension_numbers=dn, feature_group_count=groups)

    want = conv_ref(x.astype(np.float64), w.astype(np.float64), strides, padding, ld, rd,
                    dimension_numbers=dn, feature_group_count=groups)
    eager = np.asarray(f(jnp.asarray(x), jnp.asarray(w)))
    jitted = np.asarray(jax.jit(f)(jnp.asarray(x), jnp.asarray(w)))
    assert eager.shape == want.shape
    np.testing.assert_allclose(eager, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(jitted, eager)
    x64_out = np.asarray(f(jnp.asarray(x, jnp.float64), jnp.asarray(w, jnp.float64)))
    np.testing.assert_allclose(x64_out, want, rtol=1e-12, atol=1e-12)
