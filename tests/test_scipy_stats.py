"""jax.scipy.stats beyond the operator table: parameter gradients of the
discrete distributions, tails of the normal (log)cdf, gaussian_kde, mode,
rankdata with ties and nans, and the nan / -inf conventions outside the
support. References: SciPy (test-only) and values recorded from JAX 0.10.2."""
import numpy as np
import pytest
import scipy.stats as sps

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.scipy import stats


def _fd_grad(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize("fn,k,param,rest", [
    (stats.bernoulli.logpmf, 1.0, 0.3, ()), (stats.bernoulli.logpmf, 0.0, 0.3, ()),
    (stats.binom.logpmf, 3.0, 0.4, None), (stats.geom.logpmf, 3.0, 0.4, ()),
    (stats.poisson.logpmf, 3.0, 2.5, ()),
])
def test_discrete_parameter_gradients(x64, fn, k, param, rest):
    if rest is None:  # binom: (k, n, p), differentiate in p
        g = jax.grad(lambda p: fn(k, 7.0, p))(param)
        want = _fd_grad(lambda p: float(fn(k, 7.0, p)), param)
    else:
        g = jax.grad(lambda p: fn(k, p))(param)
        want = _fd_grad(lambda p: float(fn(k, p)), param)
    np.testing.assert_allclose(float(g), want, rtol=1e-6)


def test_nbinom_betabinom_parameter_gradients(x64):
    g = jax.grad(lambda n, p: stats.nbinom.logpmf(4.0, n, p), argnums=(0, 1))(2.5, 0.3)
    np.testing.assert_allclose([float(v) for v in g],
                               [_fd_grad(lambda n: float(stats.nbinom.logpmf(4.0, n, 0.3)), 2.5),
                                _fd_grad(lambda p: float(stats.nbinom.logpmf(4.0, 2.5, p)), 0.3)], rtol=1e-6)
    g = jax.grad(lambda a: stats.betabinom.logpmf(2.0, 6.0, a, 1.5))(2.0)
    np.testing.assert_allclose(float(g), _fd_grad(lambda a: float(stats.betabinom.logpmf(2.0, 6.0, a, 1.5)), 2.0),
                               rtol=1e-6)


def test_normal_tails(x64):
    x = np.array([-40.0, -25.0, -19.0, -8.0, -1.0, 0.0, 3.0])
    np.testing.assert_allclose(np.asarray(stats.norm.logcdf(x)), sps.norm.logcdf(x), rtol=1e-11)
    np.testing.assert_allclose(np.asarray(stats.norm.cdf(x)), sps.norm.cdf(x), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(stats.norm.logsf(-x)), sps.norm.logsf(-x), rtol=1e-11)
    np.testing.assert_allclose(np.asarray(stats.norm.sf(-x)), sps.norm.sf(-x), rtol=1e-13)
    # d/dx logcdf = pdf / cdf, also far in the tail
    g = jax.vmap(jax.grad(stats.norm.logcdf))(jnp.array([-30.0, -5.0, 0.0, 2.0]))
    xs = np.array([-30.0, -5.0, 0.0, 2.0])
    np.testing.assert_allclose(np.asarray(g), np.exp(sps.norm.logpdf(xs) - sps.norm.logcdf(xs)), rtol=1e-9)


def test_normal_tails_float32():
    x = np.array([-12.0, -9.0, -4.0, 0.5, 4.0], np.float32)
    # near the upper end float32 log(ndtr) keeps an absolute, not relative, accuracy (as JAX)
    np.testing.assert_allclose(np.asarray(stats.norm.logcdf(x)), sps.norm.logcdf(x.astype(float)), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(stats.norm.cdf(x)), sps.norm.cdf(x.astype(float)), rtol=2e-5)


def test_outside_support_conventions():
    # recorded from JAX 0.10.2
    assert float(stats.expon.logpdf(-1.0)) == -np.inf and float(stats.expon.cdf(-1.0)) == 0.0
    assert np.isnan(float(stats.expon.ppf(1.5))) and np.isnan(float(stats.uniform.ppf(-0.1)))
    assert np.isnan(float(stats.gumbel_r.logpdf(0.0, 0.0, -1.0)))
    assert np.isnan(float(stats.vonmises.logpdf(0.0, 0.0)))
    assert np.isnan(float(stats.wrapcauchy.logpdf(1.0, 1.0))) and float(stats.wrapcauchy.logpdf(7.0, 0.5)) == -np.inf
    assert np.isnan(float(stats.beta.logpdf(0.5, -1.0, 2.0))) and float(stats.beta.logpdf(1.5, 2.0, 2.0)) == -np.inf
    assert float(stats.poisson.logpmf(2.5, 3.0)) == -np.inf and float(stats.binom.logpmf(8.0, 7.0, 0.5)) == -np.inf
    assert np.isnan(float(stats.truncnorm.logpdf(0.0, 1.0, 1.0)))
    assert np.isnan(float(stats.bernoulli.cdf(0.5, 1.5))) and float(stats.bernoulli.ppf(0.9, 0.3)) == 1.0
    assert float(stats.dirichlet.logpdf(jnp.array([0.5, 0.6]), jnp.array([1.0, 2.0]))) == -np.inf
    assert float(stats.multinomial.logpmf(jnp.array([1, 2]), 4, jnp.array([0.5, 0.5]))) == -np.inf


def test_dirichlet_implied_last_entry():
    x, alpha = np.array([0.2, 0.3]), np.array([1.5, 2.0, 2.5])
    np.testing.assert_allclose(float(stats.dirichlet.logpdf(x, alpha)),
                               sps.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), alpha), rtol=1e-5)


def test_multivariate_normal_scalar_and_batched_cov():
    x = np.array([[0.1, 0.2], [0.3, -0.4]], np.float32)
    np.testing.assert_allclose(np.asarray(stats.multivariate_normal.logpdf(x, np.zeros(2), 2.0)),
                               sps.multivariate_normal.logpdf(x, np.zeros(2), 2.0 * np.eye(2)), rtol=1e-5)
    np.testing.assert_allclose(float(stats.multivariate_normal.logpdf(0.5, 0.1, 2.0)),
                               sps.norm.logpdf(0.5, 0.1, np.sqrt(2.0)), rtol=1e-5)
    with pytest.raises(NotImplementedError):
        stats.multivariate_normal.logpdf(x, np.zeros(2), np.eye(2), allow_singular=True)


def test_poisson_entropy_regimes(x64):
    mu = np.array([0.0, 0.5, 9.0, 50.0, 150.0])
    np.testing.assert_allclose(np.asarray(stats.poisson.entropy(mu)), sps.poisson.entropy(mu), rtol=1e-6, atol=1e-12)


# ----------------------------------------------------------------- summaries


def test_mode_against_scipy():
    a = np.array([[1, 3, 3, 2], [2, 2, 1, 1], [0, 3, 1, 1]], np.int32)
    for axis in (0, 1, None):
        got = stats.mode(a, axis=axis)
        want = sps.mode(a, axis=axis)
        np.testing.assert_array_equal(np.asarray(got.mode), want.mode)
        np.testing.assert_array_equal(np.asarray(got.count), want.count)
    got = stats.mode(a, axis=1, keepdims=True)
    assert got.mode.shape == (3, 1) and got.count.shape == (3, 1)
    with pytest.raises(NotImplementedError):
        stats.mode(a, nan_policy="omit")
    with pytest.raises(ValueError, match="Illegal nan_policy"):
        stats.mode(a, nan_policy="skip")
    j = jax.jit(lambda v: stats.mode(v, axis=0))(a)
    np.testing.assert_array_equal(np.asarray(j.mode), sps.mode(a, axis=0).mode)


def test_rankdata_nan_and_jit():
    a = np.array([3.0, np.nan, 1.0])
    assert np.all(np.isnan(np.asarray(stats.rankdata(a))))
    b = np.array([[3.0, 1.0, 1.0], [2.0, 2.0, 0.0]], np.float32)
    got = jax.jit(lambda v: stats.rankdata(v, "max", axis=1))(b)
    np.testing.assert_array_equal(np.asarray(got), sps.rankdata(b, "max", axis=1))


def test_sem_nan_policy():
    a = np.array([1.0, np.nan, 3.0, 4.0], np.float32)
    np.testing.assert_allclose(float(stats.sem(a, nan_policy="omit")), sps.sem(a, nan_policy="omit"), rtol=1e-6)
    with pytest.raises(ValueError, match="raise is not supported"):
        stats.sem(a, nan_policy="raise")


# ----------------------------------------------------------------- gaussian_kde

_DATA = np.array([[0.1, 0.5, -0.3, 1.2, 0.7, -1.1, 0.4], [0.3, -0.2, 0.8, 0.1, -0.6, 0.2, 0.9]])
_W = np.array([1.0, 2.0, 1.0, 0.5, 1.5, 1.0, 2.0])


@pytest.mark.parametrize("bw", [None, "silverman", 0.4])
def test_kde_against_scipy(x64, bw):
    k = stats.gaussian_kde(_DATA, bw_method=bw, weights=_W)
    ref = sps.gaussian_kde(_DATA, bw_method=bw, weights=_W)
    pts = np.array([[0.0, 0.5, -1.0], [0.2, -0.1, 0.4]])
    np.testing.assert_allclose(np.asarray(k.covariance), ref.covariance, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(k.evaluate(pts)), ref.evaluate(pts), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(k.logpdf(pts)), ref.logpdf(pts), rtol=1e-12)
    np.testing.assert_allclose(float(k.integrate_gaussian(np.zeros(2), np.eye(2))),
                               ref.integrate_gaussian(np.zeros(2), np.eye(2)), rtol=1e-12)
    other = stats.gaussian_kde(_DATA[:, :4])
    np.testing.assert_allclose(float(k.integrate_kde(other)), ref.integrate_kde(sps.gaussian_kde(_DATA[:, :4])),
                               rtol=1e-12)
    assert k.d == 2 and k.n == 7


def test_kde_1d_box_and_pytree(x64):
    d = _DATA[0]
    k = stats.gaussian_kde(d)
    ref = sps.gaussian_kde(d)
    np.testing.assert_allclose(float(k.integrate_box_1d(-0.5, 0.8)), ref.integrate_box_1d(-0.5, 0.8), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda kde, x: kde.pdf(x))(k, np.array([0.0, 0.3]))),
                               ref.pdf(np.array([0.0, 0.3])), rtol=1e-12)
    draws = k.resample(jax.random.key(0), (50,))
    assert draws.shape == (1, 50)
    with pytest.raises(ValueError, match="bw_method"):
        stats.gaussian_kde(d, bw_method="wide")
    with pytest.raises(ValueError, match="multiple elements"):
        stats.gaussian_kde(np.array([1.0]))
    with pytest.raises(NotImplementedError):
        k.integrate_box(0.0, 1.0)


def test_distributions_use_the_jax_scipy_special_functions(x64):
    from microjax_rs.scipy import special
    x = np.array([-30.0, -3.0, 0.0, 2.5])
    q = np.array([1e-20, 0.3, 0.5, 0.9])
    np.testing.assert_array_equal(np.asarray(stats.norm.cdf(x)), np.asarray(special.ndtr(x)))
    np.testing.assert_array_equal(np.asarray(stats.norm.logcdf(x)), np.asarray(special.log_ndtr(x)))
    np.testing.assert_array_equal(np.asarray(stats.norm.ppf(q)), np.asarray(special.ndtri(q)))
    np.testing.assert_allclose(float(stats.beta.logpdf(0.3, 2.0, 3.0)), sps.beta.logpdf(0.3, 2.0, 3.0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(stats.vonmises.pdf(x, 2.0)), sps.vonmises.pdf(x, 2.0), rtol=1e-12)


def test_normal_ppf_tails(x64):
    q = np.array([1e-300, 1e-20, 1e-5, 0.3, 0.5, 0.9, 1 - 1e-12, 0.0, 1.0])
    np.testing.assert_allclose(np.asarray(stats.norm.ppf(q)), sps.norm.ppf(q), rtol=1e-10)
    # isf(q) = ppf(1 - q) (as JAX): 1 - q rounds to 1 for q below eps, giving inf
    np.testing.assert_allclose(np.asarray(stats.norm.isf(q[2:7])), sps.norm.isf(q[2:7]), rtol=1e-9)
    assert float(stats.norm.isf(1e-20)) == np.inf
    assert np.all(np.isnan(np.asarray(stats.norm.ppf(np.array([-0.1, 1.1, np.nan])))))


def test_normal_ppf_tails_float32():
    q = np.array([1e-30, 1e-8, 0.02, 0.5, 0.97], np.float32)
    np.testing.assert_allclose(np.asarray(stats.norm.ppf(q)), sps.norm.ppf(q.astype(float)), rtol=2e-6, atol=1e-6)


def test_every_distribution_function_has_a_docstring():
    import microjax_rs.scipy.stats as st
    for dist in st._DISTRIBUTIONS:
        module = getattr(st, dist)
        for fn in st._MEANINGS:
            f = getattr(module, fn, None)
            if f is not None:
                assert (f.__doc__ or "").strip(), f"{dist}.{fn}"
