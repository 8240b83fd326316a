"""Ordering of complex values as JAX 0.10.2 orders them, with its NaN
handling, and differentiation through max/min/sort of complex values
(every expected value here recorded from JAX 0.10.2 on the CPU).

JAX compares complex numbers lexicographically: real parts, then the
imaginary parts where the real parts are equal. `lax.max(x, y)` is `x`
where that comparison says `x > y`, else `y`; a NaN part makes every
comparison false, so the result depends on the operand order, and the
reductions fold it from `-inf` (`+inf` for min). The sorts use the float
total order on each part (NaN last, -0.0 == 0.0). The value checks without
NaNs are the `complex_ordering` records of the operator table."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax

nan, inf = np.nan, np.inf


@pytest.fixture(autouse=True)
def _x64():
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", False)


def _z(values):
    return jnp.asarray(np.asarray(values, np.complex128))


def _same(got, want):
    """Equal values with NaNs in the same places and the same signs of zero."""
    got, want = np.asarray(got), np.asarray(want, got.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    for part in ((np.real, np.imag) if got.dtype.kind == "c" else (lambda v: v,)):
        g, w = part(got), part(want)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(w)
        np.testing.assert_array_equal(g[ok], w[ok])
        np.testing.assert_array_equal(np.signbit(g[ok]), np.signbit(w[ok]))


X = [complex(nan, 0), 1 + 0j, complex(nan, 0), complex(1, nan), 1 + 1j, complex(0, nan), complex(-0.0, 1),
     complex(0.0, 1), 1 + 2j, 2 + 1j]
Y = [1 + 0j, complex(nan, 0), complex(nan, 1), 1 + 0j, complex(1, nan), complex(0, 1), complex(0.0, 1),
     complex(-0.0, 1), 1 + 1j, 1 + 5j]
# recorded from JAX 0.10.2
MAX = [1 + 0j, complex(nan, 0), complex(nan, 1), 1 + 0j, complex(1, nan), 1j, 1j, complex(-0.0, 1), 1 + 2j, 2 + 1j]
MIN = [1 + 0j, complex(nan, 0), complex(nan, 1), 1 + 0j, complex(1, nan), 1j, 1j, complex(-0.0, 1), 1 + 1j, 1 + 5j]
F, T = False, True
ORDER = {"less": [F] * 10, "less_equal": [F] * 6 + [T, T, F, F], "greater": [F] * 8 + [T, T],
         "greater_equal": [F] * 6 + [T] * 4}


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_max_min_pick_the_second_operand_unless_the_first_is_ordered_above(mode):
    x, y = _z(X), _z(Y)
    for fn, want in ((lax.max, MAX), (lax.min, MIN), (jnp.maximum, MAX), (jnp.minimum, MIN)):
        f = {"eager": fn, "jit": jax.jit(fn), "vmap": jax.vmap(fn)}[mode]
        _same(f(x, y), want)


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_ordering_comparisons_are_lexicographic_and_false_with_nan(mode):
    x, y = _z(X), _z(Y)
    for name, want in ORDER.items():
        fn = getattr(jnp, name)
        f = {"eager": fn, "jit": jax.jit(fn), "vmap": jax.vmap(fn)}[mode]
        np.testing.assert_array_equal(np.asarray(f(x, y)), want, err_msg=name)


def test_comparison_operators_on_complex_arrays():
    x, y = _z(X), _z(Y)
    np.testing.assert_array_equal(np.asarray(x < y), ORDER["less"])
    np.testing.assert_array_equal(np.asarray(x >= y), ORDER["greater_equal"])
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a, b: a > b)(x, y)), ORDER["greater"])
    # a Python scalar on the other side promotes to complex
    np.testing.assert_array_equal(np.asarray(_z([1 + 1j, 1 - 1j, 0.5j]) > 1), [True, False, False])


@pytest.mark.parametrize("values,vmax,vmin", [
    # recorded from JAX 0.10.2: the fold from -inf (+inf) keeps the order-dependence of max/min
    ([1 + 0j, complex(nan, 0), 2 + 0j], 2 + 0j, 2 + 0j),
    ([complex(nan, 0), 1 + 0j, 2 + 0j], 2 + 0j, 1 + 0j),
    ([1 + 0j, 2 + 0j, complex(nan, 0)], complex(nan, 0), complex(nan, 0)),
    ([1 + 0j, complex(0, nan), 2 + 0j], 2 + 0j, complex(0, nan)),
    ([complex(nan, nan), 3 + 0j, complex(nan, 0)], complex(nan, 0), complex(nan, 0)),
])
def test_reductions_with_nan(values, vmax, vmin):
    a = _z(values)
    _same(jnp.max(a), vmax)
    _same(jnp.min(a), vmin)
    _same(jax.jit(jnp.max)(a), vmax)
    _same(lax.reduce_min(a, (0,)), vmin)


def test_reduction_identities_initial_and_nan_reductions():
    # recorded from JAX 0.10.2
    _same(lax.reduce_max(_z([]), (0,)), complex(-inf, 0))
    _same(lax.reduce_min(_z([]), (0,)), complex(inf, 0))
    _same(jnp.max(_z([1 + 1j]), initial=5 + 0j), 5 + 0j)
    _same(jnp.max(_z([1 + 1j, 3]), where=jnp.array([True, False]), initial=-5 + 0j), 1 + 1j)
    with_nans = _z([complex(nan, 0), 1 + 2j, complex(1, nan), 1 + 1j])
    _same(jnp.nanmax(with_nans), 1 + 2j)
    _same(jnp.nanmin(with_nans), 1 + 1j)
    _same(jnp.nanmax(_z([complex(nan, 0), complex(1, nan)])), complex(nan, 0))
    w = _z([complex(nan, 1), complex(inf, 0), complex(1, -inf), 3 + 4j])
    _same(jnp.nansum(w), complex(inf, -inf))
    _same(jnp.nanmean(w), complex(inf, -inf))
    big = np.finfo(np.float64).max
    _same(jnp.nan_to_num(w), [1j, complex(big, 0), complex(1, -big), 3 + 4j])


# recorded from JAX 0.10.2: signed zeros tie, NaNs (of either sign, in either part) sort last
ZS = [complex(0.0, 0.0), complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0), complex(-nan, 0),
      complex(nan, 0), complex(0, -nan), complex(-inf, 0), complex(1, -1), complex(1, nan)]
ARGSORT_ZS = [7, 0, 1, 2, 3, 6, 8, 9, 4, 5]
ARGSORT_ZS_DESC = [4, 5, 9, 8, 6, 0, 1, 2, 3, 7]


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_sort_order_of_zeros_and_nans(mode):
    z = _z(ZS)
    wrap = jax.jit if mode == "jit" else (lambda f: f)
    np.testing.assert_array_equal(np.asarray(wrap(jnp.argsort)(z)), ARGSORT_ZS)
    np.testing.assert_array_equal(np.asarray(wrap(lambda a: jnp.argsort(a, descending=True))(z)), ARGSORT_ZS_DESC)
    want = np.asarray(ZS)[ARGSORT_ZS]
    _same(wrap(jnp.sort)(z), want)
    _same(wrap(lax.sort)(z), want)
    _same(wrap(jnp.sort_complex)(z), want)


def test_sort_with_payload_and_complex_second_key():
    keys, payload = lax.sort((_z([2, 1, 1 + 1j]), jnp.array([0, 1, 2])), num_keys=1)
    _same(keys, [1, 1 + 1j, 2])
    np.testing.assert_array_equal(np.asarray(payload), [1, 2, 0])
    ints, vals = lax.sort((jnp.array([1, 1, 0]), _z([2, 1, 1 + 1j])), num_keys=2)
    np.testing.assert_array_equal(np.asarray(ints), [0, 1, 1])
    _same(vals, [1 + 1j, 1, 2])
    np.testing.assert_array_equal(np.asarray(jax.vmap(jnp.argsort)(_z([[1j, 0, -1j], [1, 1 - 1j, 0]]))),
                                  [[2, 1, 0], [2, 1, 0]])


def test_searchsorted_unique_and_windows():
    # recorded from JAX 0.10.2
    a = _z([1 + 0j, 1 + 1j, 2 + 0j, complex(nan, 0)])
    v = _z([1 + 0.5j, 3 + 0j, complex(nan, 0), complex(nan, -1), 1 + 1j])
    np.testing.assert_array_equal(np.asarray(jnp.searchsorted(a, v)), [1, 3, 3, 3, 1])
    np.testing.assert_array_equal(np.asarray(jnp.searchsorted(a, v, side="right")), [1, 3, 4, 3, 2])
    _same(jnp.unique(_z([2, 1, 1 + 1j, 1, 1 + 1j, -1j])), [complex(-0.0, -1), 1, 1 + 1j, 2])
    x = _z([1, 3, 2 + 1j, 3 + 5j, 0j])
    _same(lax.cummax(x), [1, 3, 3, 3 + 5j, 3 + 5j])
    _same(lax.reduce_window(x, complex(-inf, 0), lax.max, (2,), (1,), "VALID"), [3, 3, 3 + 5j, 3 + 5j])


def test_clamp_compares_real_parts_as_xla():
    # recorded from JAX 0.10.2
    x = _z([-1 + 5j, 5j, -5j, 2, 1 + 1j, 1 + 2j, complex(nan, 0), complex(0.5, nan)])
    want = [0j, 0j, 0j, 1 + 1j, 1 + 1j, 1 + 2j, 1 + 1j, complex(0.5, nan)]
    lo, hi = jnp.complex128(0j), jnp.complex128(1 + 1j)
    _same(lax.clamp(lo, x, hi), want)
    _same(jax.jit(lax.clamp)(lo, x, hi), want)
    # its JVP compares the operands (gt/lt): JAX's TypeError
    with pytest.raises(TypeError, match="does not accept dtype complex128"):
        jax.grad(lambda a: lax.clamp(lo, a, hi).sum().real)(x)


# ----------------------------------------------------------------- derivatives (recorded from JAX 0.10.2)

XG = [1 + 2j, 3 - 1j, 3 + 0.5j, 3 + 0.5j]
YG = [2 + 2j, 3 - 1j, 1 + 0.5j, 3 + 0.5j]


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want, np.complex128), rtol=1e-12, atol=1e-12)


def test_grad_of_max_and_min_shares_ties():
    x = _z(XG)
    _close(jax.grad(lambda a: jnp.max(a).real)(x), [0, 0, 0.5, 0.5])
    _close(jax.grad(lambda a: jnp.max(a).imag)(x), [0, 0, -0.5j, -0.5j])
    _close(jax.grad(lambda a: jnp.min(a).real)(x), [1, 0, 0, 0])
    _close(jax.grad(lambda a: jnp.max(a), holomorphic=True)(x), [0, 0, 0.5, 0.5])
    _close(jax.jit(jax.grad(lambda a: jnp.max(a).real))(x), [0, 0, 0.5, 0.5])
    _close(jax.vmap(jax.grad(lambda a: jnp.max(a).real))(jnp.stack([x, _z(YG)])), [[0, 0, 0.5, 0.5], [0, 0, 0, 1]])
    primal, tangent = jax.jvp(jnp.max, (x,), (jnp.arange(4) * (1 + 1j),))
    _close(primal, 3 + 0.5j)
    _close(tangent, 2.5 + 2.5j)


def test_grad_of_elementwise_max_and_min():
    x, y = _z(XG), _z(YG)
    gx, gy = jax.grad(lambda a, b: jnp.sum(lax.max(a, b) * jnp.arange(4)).real, argnums=(0, 1))(x, y)
    _close(gx, [0, 0.5, 2, 1.5])
    _close(gy, [0, 0.5, 0, 1.5])
    gx, gy = jax.grad(lambda a, b: jnp.sum(jnp.minimum(a, b) * jnp.arange(4)).real, argnums=(0, 1))(x, y)
    _close(gx, [0, 0.5, 0, 1.5])
    _close(gy, [0, 0.5, 2, 1.5])
    primal, tangent = jax.jvp(jnp.maximum, (x, y), (jnp.ones(4) * (1 + 1j), jnp.ones(4) * 2j))
    _close(primal, [2 + 2j, 3 - 1j, 3 + 0.5j, 3 + 0.5j])
    _close(tangent, [2j, 0.5 + 1.5j, 1 + 1j, 0.5 + 1.5j])


def test_grad_of_sort_and_cummax():
    x = _z(XG)
    _close(jax.grad(lambda a: jnp.sum(jnp.sort(a) * jnp.arange(4)).imag)(x), [0, -1j, -2j, -3j])
    _close(jax.grad(lambda a: jnp.sum(jnp.sort(a) * jnp.arange(4)).real)(x), [0, 1, 2, 3])
    _close(jax.grad(lambda a: lax.cummax(a).sum().real)(x), [1, 1, 1.5, 0.5])


# ----------------------------------------------------------------- other complex functions


def test_complex_logaddexp_wraps_the_imaginary_part():
    a, b = _z([1 + 2j, -3 + 3j, 0.5 - 3j]), _z([1 + 2j, 2 - 3j, 0.5 + 3j])
    # recorded from JAX 0.10.2
    _close(jnp.logaddexp(a, b), [1.6931471805599454 + 2j, 2.006450488158979 - 3.0018705827435346j,
                                 1.1830892654862524 - 3.141592653589793j])
    _close(jnp.logaddexp2(a, b), [2 + 2j, 1.9766303900912015 - 3.038983610506721j,
                                  0.46197714103578097 - 4.532360141827194j])


def test_spacings_and_rounding_of_complex_values():
    # recorded from JAX 0.10.2
    _close(jnp.geomspace(1 + 0j, 1j, 3), [1, 0.7071067811865476 + 0.7071067811865475j, 6.123233995736766e-17 + 1j])
    _close(jnp.logspace(0, 1j, 3), [1, 0.40730731015394683 + 0.9132911666577952j,
                                    -0.6682015101903132 + 0.743980336957493j])
    out, step = jnp.linspace(0j, 1 + 1j, 3, retstep=True)
    _close(out, [0, 0.5 + 0.5j, 1 + 1j])
    _close(step, 0.5 + 0.5j)
    _close(jnp.round(_z([1.25 + 2.5j, -0.5 + 1.5j, 2.675 - 0.125j]), 1), [1.2 + 2.5j, -0.5 + 1.5j, 2.7 - 0.1j])
    _same(jnp.round(_z([1.5 + 2.5j, -0.5 + 1.5j])), [2 + 2j, complex(-0.0, 2)])
    _same(jnp.rint(_z([1.5 + 2.5j])), [2 + 2j])


@pytest.mark.parametrize("x64", [True, False])
def test_promote_types_of_complex_and_python_scalar_types(x64):
    jax.config.update("jax_enable_x64", x64)
    c64, c128 = np.dtype("complex64"), np.dtype("complex128")
    # recorded from JAX 0.10.2: promote_types is not canonicalized, result_type is
    assert jnp.promote_types(jnp.float64, jnp.complex64) == c128
    assert jnp.result_type(jnp.float64, jnp.complex64) == (c128 if x64 else c64)
    assert jnp.promote_types(complex, jnp.complex64) == c64
    assert jnp.promote_types(float, jnp.complex64) == c64
    assert jnp.promote_types(complex, jnp.float16) == c64
    assert jnp.promote_types(float, jnp.float32) == np.float32
    assert jnp.promote_types(int, jnp.int8) == np.int8
    assert jnp.promote_types(complex, float) == c128
    assert jnp.promote_types(jnp.int8, complex) == c128
    assert jnp.result_type(jnp.int8, complex) == (c128 if x64 else c64)
    assert jnp.result_type(complex, jnp.float32) == c64
    assert jnp.promote_types(int, int) == np.int64
    assert jnp.result_type(int, int) == (np.int64 if x64 else np.int32)


def test_grads_through_complex_convolution_windows_and_logaddexp():
    # recorded from JAX 0.10.2
    lhs = _z([[[1 + 2j, -1 + 0.5j, 0.25 - 1j, 2, 1j]]])
    rhs = _z([[[1 - 1j, 0.5 + 2j]]])

    def power(a, b):
        return jnp.sum(jnp.abs(lax.conv_general_dilated(a, b, (1,), "VALID")) ** 2)

    ga, gb = jax.grad(power, argnums=(0, 1))(lhs, rhs)
    _close(np.asarray(ga).ravel(), [4.5 - 1.5j, -1.25 + 0.5j, 2.625 - 1j, 14.25 + 1.25j, -6 + 1.5j])
    _close(np.asarray(gb).ravel(), [-7.125 + 16.25j, -7.9375 - 15j])
    batched = jax.vmap(lambda a: lax.conv_general_dilated(a, rhs, (1,), "VALID"))(jnp.stack([lhs, 2 * lhs]))
    _close(np.asarray(batched).ravel(), [1.5 - 0.75j, 1.625 + 1.5j, 0.25 + 2.75j, -1.5j, 3 - 1.5j, 3.25 + 3j,
                                         0.5 + 5.5j, -3j])
    x = _z([1 + 2j, -3 + 3j, 0.5 - 3j])
    _close(jax.grad(lambda a: jnp.sum(jnp.logaddexp(a, 2 * a)).real)(x),
           [2.0214153641721806 + 0.4034387060815419j, 0.9482132815962411 + 0.007772920575741435j,
            3.393054468407387 - 0.5126660306146691j])
    window_sum = jax.grad(lambda a: jnp.sum(lax.reduce_window(a, 0j, lax.add, (2,), (1,), "VALID")
                                            * jnp.array([1, 2j])).real)
    _close(window_sum(x), [1, 1 + 2j, 2j])
    _close(jax.grad(lambda a: jnp.sum(jnp.round(a * 3)).real)(x), [0, 0, 0])


def test_inverse_functions_on_their_branch_cuts():
    # recorded from JAX 0.10.2 (XLA on the CPU): the side of each cut, whatever the sign of the zero
    cut = _z([complex(2, 0), complex(2, -0.0), complex(-2, 0), complex(-2, -0.0)])
    axis = _z([complex(0, 2), complex(-0.0, 2), complex(0, -2), complex(-0.0, -2)])
    a = 1.3169578969248166
    p2 = np.pi / 2
    _close(jnp.arcsin(cut), [p2 + a * 1j, p2 + a * 1j, -p2 + a * 1j, -p2 + a * 1j])
    _close(jnp.arccos(cut), [-a * 1j, -a * 1j, np.pi - a * 1j, np.pi - a * 1j])
    t = 0.5493061443340549
    _close(jnp.arctanh(cut), [t + p2 * 1j, t - p2 * 1j, -t + p2 * 1j, -t - p2 * 1j])
    _close(jnp.arctan(axis), [p2 + t * 1j, -p2 + t * 1j, p2 - t * 1j, -p2 - t * 1j])
    _close(jnp.arcsinh(axis), [a + p2 * 1j, a + p2 * 1j, a - p2 * 1j, a - p2 * 1j])
    _close(jnp.sqrt(cut), [np.sqrt(2), np.sqrt(2), np.sqrt(2) * 1j, np.sqrt(2) * 1j])
    _close(lax.rsqrt(_z([complex(-2, -0.0), complex(-2, 0)])), [np.sqrt(0.5) * 1j, -np.sqrt(0.5) * 1j])
