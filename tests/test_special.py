"""The special functions beyond the operator table's random cases: XLA's edge
values of the lax primitives and the derivative rules JAX defines (or refuses),
recorded from JAX 0.10.2; the tails of the normal-distribution functions
against SciPy 1.17.1 (a test-only reference)."""
import numpy as np
import pytest
import scipy.special as sps

import microjax_rs as jax
import microjax_rs.numpy as jnp
import microjax_rs.scipy.special as jss
from microjax_rs import lax

NAN, INF = np.nan, np.inf


def test_incomplete_gamma_edges_as_jax(x64):
    a = np.array([-1., 0., 0.5, 1., INF, NAN, 2., 2., 2., 2.])
    x = np.array([1., 1., 0., 0., 1., 1., -1., INF, NAN, 0.])
    # recorded from JAX 0.10.2
    np.testing.assert_array_equal(np.asarray(lax.igamma(a, x)), [NAN, 1, 0, 0, NAN, NAN, NAN, 1, NAN, 0])
    np.testing.assert_array_equal(np.asarray(lax.igammac(a, x)), [NAN, 0, 1, 1, NAN, NAN, NAN, 0, NAN, 1])
    np.testing.assert_array_equal(np.asarray(lax.igamma_grad_a(a, x)),
                                  [NAN, NAN, 0, 0, NAN, NAN, NAN, NAN, NAN, 0])
    np.testing.assert_array_equal(np.asarray(lax.random_gamma_grad(a, x)),
                                  [NAN, NAN, 0, 0, NAN, NAN, NAN, NAN, NAN, 0])


def test_betainc_zeta_bessel_edges_as_jax(x64):
    a = np.array([-1, 0, 1, 1, 1, 1, 2, INF, 1, 2.])
    b = np.array([1, 1, 0, 1, 1, 1, 3, 1, INF, 3.])
    x = np.array([.5, .5, .5, -0.1, 1.1, 0, 1, .5, .5, NAN])
    np.testing.assert_array_equal(np.asarray(lax.betainc(a, b, x)), [NAN, 1, 0, NAN, NAN, 0, 1, 0, 1, NAN])
    z = lax.zeta(np.array([1., .5, 2, 2, 3, 2.5, -2, INF]), np.array([1., 1, 0, -1, -2.5, -1.5, 1, 2]))
    np.testing.assert_allclose(np.asarray(z), [INF, NAN, INF, INF, 0.05410203, NAN, NAN, NAN], rtol=1e-7)
    v = np.array([0., -1., 30., INF, -INF, NAN])
    np.testing.assert_allclose(np.asarray(lax.bessel_i0e(v)), [1, 0.46575961, 0.07314595, 0, 0, NAN], rtol=1e-7)
    np.testing.assert_allclose(np.asarray(lax.bessel_i1e(v)), [0, -0.20791042, 0.07191633, 0, 0, NAN], rtol=1e-7)
    np.testing.assert_allclose(np.asarray(lax.erfc(np.array([30., -INF, 10.]))), [0, 2, sps.erfc(10.)], rtol=1e-14)


def test_lax_operands_as_jax():
    with pytest.raises(TypeError, match="requires a floating operand"):
        lax.igamma(1, 2)
    with pytest.raises(TypeError, match="equal dtypes"):
        lax.igamma(np.ones(2, np.float32), np.ones(2, np.int32))
    with pytest.raises(TypeError, match="incompatible shapes"):
        lax.igamma(np.ones(3, np.float32), np.ones(2, np.float32))
    # Python scalars take the array's dtype; a rank-0 operand combines with an array.
    out = lax.betainc(2.0, np.float32(3.0), np.full(4, 0.4, np.float32))
    assert out.dtype == np.float32 and out.shape == (4,)
    np.testing.assert_allclose(np.asarray(out), 0.5248, rtol=1e-6)


def test_igamma_derivatives_as_jax(x64):
    # recorded from JAX 0.10.2: grad(lax.igamma, argnums=(0, 1))(2., 3.)
    ga, gx = jax.grad(lax.igamma, argnums=(0, 1))(2., 3.)
    np.testing.assert_allclose([float(ga), float(gx)], [-0.19742541957920232, 0.14936120510359183], rtol=1e-12)
    ga, gx = jax.grad(lax.igammac, argnums=(0, 1))(2., 3.)
    np.testing.assert_allclose([float(ga), float(gx)], [0.19742541957920232, -0.14936120510359183], rtol=1e-12)
    # d/da by central differences of SciPy's P(a, x)
    h = 1e-6
    fd = (sps.gammainc(0.7 + h, 1.3) - sps.gammainc(0.7 - h, 1.3)) / (2 * h)
    np.testing.assert_allclose(float(jax.grad(jss.gammainc)(0.7, 1.3)), fd, rtol=1e-7)
    # betainc in x: the beta density
    got = float(jax.grad(lambda x: lax.betainc(2., 3., x))(0.4))
    np.testing.assert_allclose(got, 12 * 0.4 * 0.6 ** 2, rtol=1e-12)


def test_missing_derivatives_raise_jax_errors(x64):
    for fn in (lax.igamma_grad_a, lax.random_gamma_grad, lax.zeta):
        with pytest.raises(NotImplementedError, match="Differentiation rule for"):
            jax.grad(fn)(2., 3.)
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b not supported"):
        jax.grad(lax.betainc)(2., 3., 0.4)
    # the second derivative in a needs igamma_grad_a's, which JAX does not define either
    with pytest.raises(NotImplementedError, match="igamma_grad_a"):
        jax.grad(jax.grad(lax.igamma))(2., 3.)


def test_scipy_zeta_differentiates_both_arguments(x64):
    # recorded from JAX 0.10.2: grad(jax.scipy.special.zeta, argnums=(0, 1))(3., 2.)
    gx, gq = jax.grad(jss.zeta, argnums=(0, 1))(3., 2.)
    np.testing.assert_allclose([float(gx), float(gq)], [-0.19812624, -0.2469697], rtol=1e-7)
    # d/dq zeta(x, q) = -x zeta(x + 1, q)
    np.testing.assert_allclose(float(gq), -3 * sps.zeta(4., 2.), rtol=1e-12)


def test_sign_and_poles_as_jax(x64):
    # recorded from JAX 0.10.2
    got = jss.gammasgn(np.array([NAN, -0.0, 0.0, -2., -2.5, -1.5]))
    np.testing.assert_array_equal(np.asarray(got), [NAN, -1, 1, NAN, -1, 1])
    np.testing.assert_array_equal(np.asarray(jss.gamma(np.array([0., -2.]))), [INF, NAN])
    np.testing.assert_array_equal(np.asarray(jss.loggamma(np.array([0., -2.5]))), [NAN, NAN])
    np.testing.assert_array_equal(np.asarray(jss.poch(np.array([-2., 3.]), np.array([1., 0.]))), [NAN, 1])
    np.testing.assert_array_equal(np.asarray(jss.comb(np.array([5., -1.]), np.array([7., 1.]))), [0, 0])
    np.testing.assert_array_equal(np.asarray(jss.factorial(np.array([-1.]))), [0])


def test_normal_tails_against_scipy(x64):
    p = np.array([1e-300, 1e-50, 1e-10, 0.3, 0.5, 0.999, 1 - 1e-12])
    np.testing.assert_allclose(np.asarray(jss.ndtri(p)), sps.ndtri(p), rtol=1e-13)
    np.testing.assert_array_equal(np.asarray(jss.ndtri(np.array([0., 1., 1.5, -0.1]))), [-INF, INF, NAN, NAN])
    x = np.array([-40., -25., -5., 0., 5., 30.])
    np.testing.assert_allclose(np.asarray(jss.log_ndtr(x)), sps.log_ndtr(x), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(jss.log_ndtr(x, series_order=10)), sps.log_ndtr(x), rtol=1e-12)
    # the derivative pdf/cdf stays finite deep in the lower tail (about -x there)
    # recorded from JAX 0.10.2
    np.testing.assert_allclose(float(jax.grad(jss.log_ndtr)(-40.)), 40.02496884784338, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jss.erfcx(np.array([30., 1e3]))), sps.erfcx(np.array([30., 1e3])),
                               rtol=1e-14)


def test_normal_cdf_deep_in_the_lower_tail(x64):
    x = np.array([-35., -30., -25., -19., -8.])
    np.testing.assert_allclose(np.asarray(jss.ndtr(x)), sps.ndtr(x), rtol=1e-13)


def test_float32_normal_quantiles_where_2q_minus_1_rounds_away():
    q = np.array([1e-8, 3e-8, 1e-6, 1e-4, 0.02], np.float32)
    np.testing.assert_allclose(np.asarray(jss.ndtri(q)), sps.ndtri(q.astype(np.float64)), rtol=2e-6)


def test_exponential_integrals_edges(x64):
    np.testing.assert_array_equal(np.asarray(jss.exp1(np.array([0., -1.]))), [INF, NAN])
    n = np.array([0, 1, 3])
    np.testing.assert_allclose(np.asarray(jss.expn(n, np.array([1., 1., 0.]))), [np.exp(-1), sps.exp1(1.), 0.5],
                               rtol=1e-14)
    # d/dx E_n(x) = -E_(n-1)(x)
    np.testing.assert_allclose(float(jax.grad(jss.expn, argnums=1)(3, 1.5)), -sps.expn(2, 1.5), rtol=1e-12)


def test_scipy_argument_errors():
    with pytest.raises(ValueError, match="must be of integer type"):
        jss.polygamma(1.5, 2.0)
    with pytest.raises(NotImplementedError, match="Riemann zeta"):
        jss.zeta(2.0)
    with pytest.raises(TypeError, match="series_order must be a Python integer"):
        jss.log_ndtr(1.0, series_order=1.5)
    with pytest.raises(NotImplementedError):
        jss.factorial(3.0, exact=True)
    with pytest.raises(ValueError):
        jss.bernoulli(-1)


def test_bessel_jn_and_multi_output_functions(x64):
    z = np.array([0., 0.5, 5., -3.])
    got = np.asarray(jss.bessel_jn(z, v=3))
    assert got.shape == (4, 4)
    np.testing.assert_allclose(got, np.stack([sps.jv(i, z) for i in range(4)]), rtol=1e-12, atol=1e-15)
    si, ci = jss.sici(np.array([2., 10.]))
    np.testing.assert_allclose(np.asarray(si), sps.sici(np.array([2., 10.]))[0], rtol=1e-14)
    np.testing.assert_allclose(np.asarray(ci), sps.sici(np.array([2., 10.]))[1], rtol=1e-13)
    s, c = jax.jit(jss.fresnel)(np.array([0.5, 4.]))
    np.testing.assert_allclose(np.asarray(s), sps.fresnel(np.array([0.5, 4.]))[0], rtol=1e-13)
    np.testing.assert_allclose(np.asarray(c), sps.fresnel(np.array([0.5, 4.]))[1], rtol=1e-13)
    out = jax.vmap(lambda t: jnp.stack(jss.sici(t)))(np.array([1., 3.]))
    assert out.shape == (2, 2)


def test_xlogy_entr_as_jax(x64):
    x = np.array([0., 0., 1., 2., -1., 0.])
    y = np.array([0., NAN, 0., -1., 2., -1.])
    # recorded from JAX 0.10.2
    want = [0, NAN, -INF, NAN, -0.69314718, 0]
    np.testing.assert_allclose(np.asarray(jss.xlogy(x, y)), want, rtol=1e-8)
    np.testing.assert_allclose(np.asarray(jss.xlog1py(x, y - 1)), want, rtol=1e-8)
    e = np.asarray(jss.entr(np.array([0., -1., 2.])))
    assert e[0] == 0 and np.signbit(e[0]) and e[1] == -INF
    # JAX's rule: d/dx = log(y), d/dy = x / y, also at x == 0 (recorded from JAX 0.10.2) ...
    gx, gy = jax.grad(jss.xlogy, argnums=(0, 1))(0., 2.)
    np.testing.assert_allclose([float(gx), float(gy)], [np.log(2.), 0.], rtol=1e-15)
    # ... except at the 0/0 point, where the derivative in y is 0 (JAX: NaN)
    gx, gy = jax.grad(jss.xlog1py, argnums=(0, 1))(0., -1.)
    assert float(gx) == -INF and float(gy) == 0.0
