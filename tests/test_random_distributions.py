"""`jax.random`'s distributions against JAX 0.10.2: recorded draws (exact for
integer / bit-level samplers, within a few ulp through transcendental
functions, per element for the rejection samplers), Kolmogorov-Smirnov tests
against SciPy's distributions, gradients by implicit reparameterization, and
jit / vmap over keys."""
import json
import os

import numpy as np
import pytest
import scipy.stats as st

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import random
from microjax_rs.lax import random_gamma_grad

# Draws recorded from JAX 0.10.2 (CPU; PRNGKey(2024)), with x64 off and on:
# name -> [dtype name, shape, flattened values].
with open(os.path.join(os.path.dirname(__file__), "random_jax_values.json")) as _f:
    RECORDED = json.load(_f)

K = random.PRNGKey(2024)
A6 = [0.2, 0.9, 1.0, 2.5, 10.0, 150.0]
PROBS = [[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]]


def _draws():
    """The draws of tests/random_jax_values.json, by name (same calls as recorded)."""
    k = K
    lg = jnp.log(jnp.asarray(PROBS))
    a6 = jnp.asarray(A6)
    return {
        "randint_int8": lambda: random.randint(k, (10,), -100, 120, dtype=jnp.int8),
        "randint_uint8": lambda: random.randint(k, (10,), 0, 256, dtype=jnp.uint8),
        "randint_int16": lambda: random.randint(k, (10,), -1000, 30000, dtype=jnp.int16),
        "randint_uint16": lambda: random.randint(k, (10,), 5, 60000, dtype=jnp.uint16),
        "randint": lambda: random.randint(k, (10,), -7, 1000),
        "bits_uint8": lambda: random.bits(k, (10,), jnp.uint8),
        "bernoulli": lambda: random.bernoulli(k, 0.3, (16,)),
        "bernoulli_high": lambda: random.bernoulli(k, 0.3, (16,), mode="high"),
        "rademacher": lambda: random.rademacher(k, (16,)),
        "geometric": lambda: random.geometric(k, 0.25, (10,)),
        "poisson": lambda: random.poisson(k, jnp.asarray([0.5, 3.0, 9.5, 12.0, 100.0, 2500.0])),
        "binomial": lambda: random.binomial(k, jnp.asarray([5.0, 20.0, 100.0, 1000.0, 40.0, 3.0]),
                                            jnp.asarray([0.3, 0.3, 0.3, 0.6, 0.9, 0.5])),
        "multinomial": lambda: random.multinomial(k, 20.0, jnp.asarray([0.2, 0.3, 0.5]), shape=(3, 3)),
        "categorical_no_replace": lambda: random.categorical(k, lg, shape=(3, 2), replace=False),
        "categorical_high": lambda: random.categorical(k, lg, shape=(4, 2), mode="high"),
        "choice_p": lambda: random.choice(k, 5, (10,), p=jnp.asarray([0.1, 0.2, 0.3, 0.2, 0.2])),
        "choice_no_replace": lambda: random.choice(k, 10, (5,), replace=False),
        "permutation": lambda: random.permutation(k, 12),
        "normal": lambda: random.normal(k, (8,)),
        "truncated_normal": lambda: random.truncated_normal(k, -2.0, 1.5, (8,)),
        "uniform_range": lambda: random.uniform(k, (8,), minval=-0.3, maxval=2.9),
        "exponential": lambda: random.exponential(k, (8,)),
        "gumbel": lambda: random.gumbel(k, (8,)),
        "gumbel_high": lambda: random.gumbel(k, (8,), mode="high"),
        "gumbel_highest": lambda: random.gumbel(k, (8,), mode="highest"),
        "cauchy": lambda: random.cauchy(k, (8,)),
        "laplace": lambda: random.laplace(k, (8,)),
        "logistic": lambda: random.logistic(k, (8,)),
        "lognormal": lambda: random.lognormal(k, 0.5, (8,)),
        "maxwell": lambda: random.maxwell(k, (8,)),
        "double_sided_maxwell": lambda: random.double_sided_maxwell(k, 1.0, 2.0, (8,)),
        "pareto": lambda: random.pareto(k, 3.0, (8,)),
        "rayleigh": lambda: random.rayleigh(k, 2.0, (8,)),
        "weibull_min": lambda: random.weibull_min(k, 2.0, 1.5, (8,)),
        "triangular": lambda: random.triangular(k, 0.0, 0.3, 1.0, (8,)),
        "wald": lambda: random.wald(k, 1.5, (8,)),
        "orthogonal": lambda: random.orthogonal(k, 3),
        "generalized_normal": lambda: random.generalized_normal(k, 1.5, (8,)),
        "ball": lambda: random.ball(k, 3, 2, (3,)),
        "gamma": lambda: random.gamma(k, a6),
        "loggamma": lambda: random.loggamma(k, a6),
        "beta": lambda: random.beta(k, 2.0, 3.0, (6,)),
        "dirichlet": lambda: random.dirichlet(k, jnp.asarray([1.0, 2.0, 0.5]), (2,)),
        "t": lambda: random.t(k, 5.0, (6,)),
        "chisquare": lambda: random.chisquare(k, 3.0, (6,)),
        "f": lambda: random.f(k, 3.0, 7.0, (6,)),
        "grad_gamma": lambda: jax.grad(lambda a: random.gamma(k, a).sum())(a6),
        "grad_loggamma": lambda: jax.grad(lambda a: random.loggamma(k, a).sum())(a6),
        "grad_beta": lambda: jax.grad(lambda a: random.beta(k, a, 3.0).sum())(jnp.asarray([0.5, 2.0, 7.0])),
        "grad_dirichlet": lambda: jax.grad(
            lambda a: (random.dirichlet(k, a) * jnp.arange(3.0)).sum())(jnp.asarray([1.0, 2.0, 0.5])),
        "random_gamma_grad": lambda: random_gamma_grad(
            jnp.asarray([0.2, 0.2, 2.0, 2.0, 1.0, 50.0]), jnp.asarray([1.2, 0.05, 3.5, 1.0, 5.0, 49.0])),
    }


# Integer, boolean and bit-level draws: JAX's exact values.
EXACT = ("randint_int8", "randint_uint8", "randint_int16", "randint_uint16", "randint", "bits_uint8",
         "bernoulli", "bernoulli_high", "rademacher", "geometric", "poisson", "binomial", "multinomial",
         "categorical_no_replace", "categorical_high", "choice_p", "choice_no_replace", "permutation",
         "uniform_range", "triangular", "cauchy")
# Through transcendental functions: within `ulps` ulp of JAX's value, measured
# at max(|value|, floor) (draws that cancel to near zero, such as logistic's
# log(u) - log1p(-u), are compared on the scale of their terms).
CLOSE = {
    "normal": (4, 0.0), "exponential": (4, 0.0), "laplace": (4, 0.0), "lognormal": (4, 0.0),
    "pareto": (4, 0.0), "rayleigh": (4, 0.0), "weibull_min": (4, 0.0), "maxwell": (4, 0.0),
    "logistic": (4, 1.0), "gumbel": (4, 1.0), "gumbel_high": (4, 1.0), "gumbel_highest": (4, 1.0),
    "double_sided_maxwell": (4, 1.0), "wald": (4, 1.0),
    "orthogonal": (16, 1.0), "truncated_normal": (16, 1.0),
    # rejection samplers: the same accepted proposals, then a few roundings
    "gamma": (8, 0.0), "loggamma": (8, 1.0), "beta": (8, 0.0), "dirichlet": (8, 0.0), "t": (8, 0.0),
    "chisquare": (8, 0.0), "f": (8, 0.0), "generalized_normal": (8, 1.0), "ball": (8, 1.0),
}
# Gradients (series / continued fractions evaluated in a different order): relative.
GRADS = {"grad_gamma": 2e-5, "grad_loggamma": 2e-5, "grad_beta": 2e-5, "grad_dirichlet": 2e-5,
         "random_gamma_grad": 2e-5}


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def mode(request):
    jax.config.update("jax_enable_x64", request.param)
    yield request.param
    jax.config.update("jax_enable_x64", False)


def _recorded(name, x64):
    dtype, shape, values = RECORDED["x64 on" if x64 else "x64 off"][name]
    want = np.array(values, dtype=np.float64).reshape(shape)
    return dtype, want


def _got(name):
    return np.asarray(_draws()[name]())


@pytest.mark.parametrize("name", EXACT)
def test_exact_values(name, mode):
    dtype, want = _recorded(name, mode)
    got = _got(name)
    assert str(got.dtype) == dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.astype(np.float64), want)


@pytest.mark.parametrize("name", sorted(CLOSE))
def test_values_within_ulps(name, mode):
    dtype, want = _recorded(name, mode)
    got = _got(name)
    assert str(got.dtype) == dtype and got.shape == want.shape
    ulps, floor = CLOSE[name]
    scale = np.maximum(np.abs(want), floor).astype(dtype)
    tol = ulps * np.spacing(scale).astype(np.float64)
    err = np.abs(got.astype(np.float64) - want)
    assert np.all(err <= tol), f"{name}: worst {np.max(err / tol) * ulps:.1f} ulp"


@pytest.mark.parametrize("name", sorted(GRADS))
def test_reparameterized_gradients(name, mode):
    dtype, want = _recorded(name, mode)
    got = _got(name)
    assert str(got.dtype) == dtype
    np.testing.assert_allclose(got, want, rtol=GRADS[name] if not mode else 1e-12)


# ----------------------------------------------------------------------------
# Distributions: Kolmogorov-Smirnov against SciPy

N = 2000
KS = {
    "gamma_small": (lambda k: random.gamma(k, 0.4, (N,)), st.gamma(0.4).cdf),
    "gamma": (lambda k: random.gamma(k, 3.0, (N,)), st.gamma(3.0).cdf),
    "loggamma": (lambda k: jnp.exp(random.loggamma(k, 0.3, (N,))), st.gamma(0.3).cdf),
    "beta": (lambda k: random.beta(k, 2.0, 0.7, (N,)), st.beta(2.0, 0.7).cdf),
    "dirichlet": (lambda k: random.dirichlet(k, jnp.asarray([1.5, 2.0, 0.5]), (N,))[:, 0],
                  st.beta(1.5, 2.5).cdf),
    "t": (lambda k: random.t(k, 4.0, (N,)), st.t(4.0).cdf),
    "chisquare": (lambda k: random.chisquare(k, 3.0, (N,)), st.chi2(3.0).cdf),
    "f": (lambda k: random.f(k, 5.0, 8.0, (N,)), st.f(5.0, 8.0).cdf),
    "cauchy": (lambda k: random.cauchy(k, (N,)), st.cauchy.cdf),
    "laplace": (lambda k: random.laplace(k, (N,)), st.laplace.cdf),
    "logistic": (lambda k: random.logistic(k, (N,)), st.logistic.cdf),
    "lognormal": (lambda k: random.lognormal(k, 0.5, (N,)), st.lognorm(0.5).cdf),
    "maxwell": (lambda k: random.maxwell(k, (N,)), st.maxwell.cdf),
    "double_sided_maxwell": (lambda k: jnp.abs(random.double_sided_maxwell(k, 0.0, 1.0, (N,))),
                             st.maxwell.cdf),
    "pareto": (lambda k: random.pareto(k, 3.0, (N,)), st.pareto(3.0).cdf),
    "rayleigh": (lambda k: random.rayleigh(k, 2.0, (N,)), st.rayleigh(scale=2.0).cdf),
    "weibull_min": (lambda k: random.weibull_min(k, 2.0, 1.5, (N,)), st.weibull_min(1.5, scale=2.0).cdf),
    "triangular": (lambda k: random.triangular(k, 0.0, 0.3, 1.0, (N,)), st.triang(0.3).cdf),
    "wald": (lambda k: random.wald(k, 1.5, (N,)), st.invgauss(1.5).cdf),
    "generalized_normal": (lambda k: random.generalized_normal(k, 1.5, (N,)), st.gennorm(1.5).cdf),
    "truncated_normal": (lambda k: random.truncated_normal(k, -0.5, 2.0, (N,)), st.truncnorm(-0.5, 2.0).cdf),
    "ball_radius": (lambda k: jnp.linalg.norm(random.ball(k, 3, 2, (N,)), axis=-1), st.powerlaw(3.0).cdf),
}


@pytest.mark.parametrize("name", sorted(KS))
def test_kolmogorov_smirnov(name):
    draw, cdf = KS[name]
    x = np.asarray(draw(random.PRNGKey(7)), np.float64)
    assert np.all(np.isfinite(x))
    assert st.kstest(x, cdf).pvalue > 1e-3


DISCRETE = {
    "poisson_small": (lambda k: random.poisson(k, 3.5, (N,)), st.poisson(3.5)),
    "poisson_large": (lambda k: random.poisson(k, 40.0, (N,)), st.poisson(40.0)),
    "binomial_inversion": (lambda k: random.binomial(k, 12.0, 0.3, (N,)), st.binom(12, 0.3)),
    "binomial_btrs": (lambda k: random.binomial(k, 200.0, 0.7, (N,)), st.binom(200, 0.7)),
    "geometric": (lambda k: random.geometric(k, 0.3, (N,)), st.geom(0.3)),
}


def _chi_square_pvalue(x, dist):
    """Pearson's test of integer draws `x` against a SciPy discrete
    distribution, on bins holding >= 5 expected draws (the rest pooled)."""
    x = np.asarray(x).astype(np.int64)
    n = x.size
    lo, hi = int(dist.ppf(0.005)), int(dist.ppf(0.995))
    values = np.arange(lo + 1, hi)
    observed = np.array([np.sum(x <= lo)] + [np.sum(x == v) for v in values] + [np.sum(x >= hi)], float)
    probs = np.array([dist.cdf(lo)] + list(dist.pmf(values)) + [dist.sf(hi - 1)])
    keep = probs * n >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(probs[keep], probs[~keep].sum())
    obs, exp = obs[exp > 0], exp[exp > 0]
    return st.chisquare(obs, exp / exp.sum() * obs.sum()).pvalue


@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_chi_square(name):
    draw, dist = DISCRETE[name]
    assert _chi_square_pvalue(draw(random.PRNGKey(7)), dist) > 1e-3


def test_multinomial_counts():
    p = jnp.asarray([0.2, 0.3, 0.5])
    x = np.asarray(random.multinomial(random.PRNGKey(3), 30.0, p, shape=(N, 3)))
    np.testing.assert_array_equal(x.sum(-1), 30)
    np.testing.assert_allclose(x.mean(0), [6.0, 9.0, 15.0], atol=0.3)
    for j, pj in enumerate((0.2, 0.3, 0.5)):  # each marginal is Binomial(30, p_j)
        assert _chi_square_pvalue(x[:, j], st.binom(30, pj)) > 1e-3


def test_orthogonal_is_orthonormal():
    q = np.asarray(random.orthogonal(random.PRNGKey(1), 4, (2,)))
    assert q.shape == (2, 4, 4)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-5)
    wide = np.asarray(random.orthogonal(random.PRNGKey(1), 2, m=5))
    assert wide.shape == (2, 5)
    np.testing.assert_allclose(wide @ wide.T, np.eye(2), atol=1e-5)


def test_ball_inside_unit_ball():
    x = np.asarray(random.ball(random.PRNGKey(2), 4, p=1.5, shape=(500,)))
    assert x.shape == (500, 4)
    assert np.all((np.abs(x) ** 1.5).sum(-1) < 1)


# ----------------------------------------------------------------------------
# Gradients: implicit reparameterization against finite differences


def test_gamma_gradient_is_the_implicit_one(x64):
    """d x / d a = -(dF/da) / f(x) at the drawn x (F, f: Gamma(a)'s CDF and
    density, from SciPy); not the derivative of the rejection sampler along a
    fixed key, which JAX does not use either."""
    from scipy import special

    k = random.PRNGKey(9)
    a = np.array([0.3, 1.7, 6.0, 40.0])
    x = np.asarray(random.gamma(k, jnp.asarray(a)))
    g = np.asarray(jax.grad(lambda a: random.gamma(k, a).sum())(jnp.asarray(a)))
    eps = 1e-6
    dfda = (special.gammainc(a + eps, x) - special.gammainc(a - eps, x)) / (2 * eps)
    np.testing.assert_allclose(g, -dfda / st.gamma(a).pdf(x), rtol=1e-5)
    x = np.array([0.05, 0.7, 3.0, 12.0, 60.0])
    a = np.array([0.5, 0.5, 2.0, 30.0, 45.0])
    dfda = (special.gammainc(a + eps, x) - special.gammainc(a - eps, x)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(random_gamma_grad(jnp.asarray(a), jnp.asarray(x))),
                               -dfda / st.gamma(a).pdf(x), rtol=1e-5)


def test_dirichlet_gradient_of_the_sum_vanishes(x64):
    k = random.PRNGKey(4)
    g = np.asarray(jax.grad(lambda a: random.dirichlet(k, a).sum())(jnp.asarray([0.5, 1.0, 3.0])))
    np.testing.assert_allclose(g, 0.0, atol=1e-12)


def test_gradients_of_closed_form_samplers(x64):
    k = random.PRNGKey(5)
    eps = 1e-6
    for f in (lambda s: random.lognormal(k, s, (3,)).sum(), lambda b: random.pareto(k, b, (3,)).sum(),
              lambda s: random.rayleigh(k, s, (3,)).sum(), lambda m: random.wald(k, m, (3,)).sum(),
              lambda c: random.weibull_min(k, 1.5, c, (3,)).sum(),
              lambda lo: random.truncated_normal(k, lo, 2.0, (3,)).sum()):
        fd = (float(f(1.3 + eps)) - float(f(1.3 - eps))) / (2 * eps)
        assert float(jax.grad(f)(1.3)) == pytest.approx(fd, rel=1e-5)


# ----------------------------------------------------------------------------
# Transformations and the rest of the surface


JIT_VMAP = {
    "gamma": lambda k: random.gamma(k, jnp.asarray([0.5, 2.0, 9.0])),
    "loggamma": lambda k: random.loggamma(k, jnp.asarray([0.5, 2.0])),
    "beta": lambda k: random.beta(k, 2.0, 3.0, (3,)),
    "dirichlet": lambda k: random.dirichlet(k, jnp.asarray([1.0, 2.0])),
    "poisson": lambda k: random.poisson(k, jnp.asarray([2.0, 30.0])),
    "binomial": lambda k: random.binomial(k, jnp.asarray([5.0, 300.0]), 0.4),
    "multinomial": lambda k: random.multinomial(k, 10.0, jnp.asarray([0.5, 0.5])),
    "t": lambda k: random.t(k, 3.0, (2,)),
    "f": lambda k: random.f(k, 3.0, 4.0, (2,)),
    "cauchy": lambda k: random.cauchy(k, (3,)),
    "geometric": lambda k: random.geometric(k, 0.4, (3,)),
    "orthogonal": lambda k: random.orthogonal(k, 2),
    "ball": lambda k: random.ball(k, 2),
    "double_sided_maxwell": lambda k: random.double_sided_maxwell(k, 0.0, 1.0, (2,)),
    "randint_int8": lambda k: random.randint(k, (3,), -5, 100, dtype=jnp.int8),
}


@pytest.mark.parametrize("name", sorted(JIT_VMAP))
def test_jit_and_vmap_over_keys(name):
    draw = JIT_VMAP[name]
    keys = random.split(random.PRNGKey(6), 3)
    eager = np.stack([np.asarray(draw(keys[i])) for i in range(3)])
    np.testing.assert_allclose(np.asarray(jax.jit(draw)(keys[1])), eager[1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(draw)(keys)), eager, rtol=1e-6, atol=1e-6)
    typed = random.wrap_key_data(keys[0])
    np.testing.assert_array_equal(np.asarray(draw(typed)), eager[0])


def test_key_dtype_clone_and_gamma_primitive():
    assert random.key_dtype() == random.key(0).dtype
    assert str(random.key_dtype()) == "key<fry>"
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        random.key_dtype("philox")
    with pytest.raises(TypeError, match="unrecognized type"):
        random.key_dtype(3)
    k = random.key(3)
    assert isinstance(random.clone(k), random.PRNGKeyArray)
    np.testing.assert_array_equal(np.asarray(random.key_data(random.clone(k))), [0, 3])
    a = jnp.asarray([1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(random.random_gamma_p.bind(k, a, log_space=False)),
                                  np.asarray(random.gamma(k, a)))
    # Recorded from JAX 0.10.2: random_gamma_p over two keys, each split over its row.
    rows = random.random_gamma_p.bind(random.split(random.key(0), 2), jnp.asarray([[1.0, 2.0], [3.0, 4.0]]),
                                      log_space=False)
    np.testing.assert_allclose(np.asarray(rows), [[0.6031933, 0.6927401], [5.0589304, 1.2485825]], rtol=1e-6)
    # The primitive under jit, vmap (a key per row) and grad (implicit reparameterization).
    raw = random.PRNGKey(0)
    bind = lambda k, a: random.random_gamma_p.bind(k, a, log_space=False)
    np.testing.assert_array_equal(np.asarray(jax.jit(bind)(raw, a)), np.asarray(random.gamma(raw, a)))
    keys = random.split(raw, 2)
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda k: bind(k, a))(keys)),
                               np.stack([np.asarray(random.gamma(keys[i], a)) for i in range(2)]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda a: bind(raw, a).sum())(a)),
                               np.asarray(jax.grad(lambda a: random.gamma(raw, a).sum())(a)), rtol=1e-6)


@pytest.mark.parametrize("fn,kwargs,exc,match", [
    (random.gamma, dict(a=1.0, dtype=jnp.int32), ValueError, "must be a float dtype"),
    (random.poisson, dict(lam=1.0, dtype=jnp.float32), ValueError, "must be an int dtype"),
    (random.geometric, dict(p=0.5, dtype=jnp.float32), ValueError, "must be an int dtype"),
    (random.cauchy, dict(dtype=jnp.int32), ValueError, "must be a float dtype"),
    (random.dirichlet, dict(alpha=1.0), ValueError, "dirichlet requires alpha.ndim >= 1"),
    (random.gamma, dict(a=jnp.ones(3), shape=(2,)), ValueError, "Incompatible shapes for broadcasting"),
    (random.bernoulli, dict(p=0.5, mode="middle"), ValueError, "expected 'high' or 'low'"),
    (random.gumbel, dict(mode="middle"), ValueError, "Must provide valid mode for gumbel"),
    (random.categorical, dict(logits=jnp.zeros(3), shape=(5,), replace=False), ValueError,
     "cannot exceed number of categories"),
])
def test_bad_inputs(fn, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fn(K, **kwargs)
