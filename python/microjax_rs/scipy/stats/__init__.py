"""`jax.scipy.stats`: distributions (one submodule each), `gaussian_kde`,
`mode`, `rankdata` and `sem`."""
from . import (  # noqa: F401
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from ._core import mode, rankdata, sem  # noqa: F401
from .kde import gaussian_kde  # noqa: F401

# What each distribution function computes, for the docstrings of those that
# do not carry their own (the parametrization is SciPy's, as in JAX).
_MEANINGS = {
    "pdf": "the probability density at `x`", "logpdf": "the log of the probability density at `x`",
    "pmf": "the probability mass at `k`", "logpmf": "the log of the probability mass at `k`",
    "cdf": "the cumulative distribution function P(X <= x)", "logcdf": "the log of P(X <= x)",
    "sf": "the survival function P(X > x)", "logsf": "the log of P(X > x)",
    "ppf": "the quantile function (the inverse of `cdf`)", "isf": "the inverse of `sf`",
    "entropy": "the differential entropy",
}


def _document_distributions():
    import sys

    for dist in _DISTRIBUTIONS:
        module = sys.modules[f"{__name__}.{dist}"]
        for fn, meaning in _MEANINGS.items():
            f = getattr(module, fn, None)
            if f is not None and not (f.__doc__ or "").strip():
                f.__doc__ = (f"`jax.scipy.stats.{dist}.{fn}`: {meaning} of the {dist} distribution, "
                             f"with SciPy's parameters (`scipy.stats.{dist}.{fn}`).")


_DISTRIBUTIONS = (
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "gennorm", "geom",
    "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto",
    "poisson", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy",
)
_document_distributions()
