"""Operator-table records of `jax.random`'s distributions (raw `uint32[2]`
keys; parameters static). Their draws have no NumPy reference: each record
checks shape and dtype and a goodness-of-fit predicate against SciPy's
distribution (`OpRecord.check`), and jit (bitwise) and vmap over keys. Values
against JAX's own draws, gradients and the distributions in more detail:
tests/test_random_distributions.py.
"""
import numpy as np
import scipy.stats as st

import dataclasses

from ._record import OpErr, OpRecord, case_triples
from .random import _KEY, _moments, _rand_rec, keys

N = 1000


def _ks(cdf, transform=None):
    """Kolmogorov-Smirnov against `cdf` (of `transform(x)` when given)."""

    def check(x):
        x = np.asarray(x, np.float64)
        x = transform(x) if transform is not None else x
        assert np.all(np.isfinite(x)), "non-finite draws"
        p = st.kstest(x.ravel(), cdf).pvalue
        assert p > 1e-4, f"Kolmogorov-Smirnov p-value {p:.2e}"

    return check


def _unit_rows(p, dim):
    def check(x):
        assert x.shape[-1] == dim
        assert np.all((np.abs(x) ** p).sum(-1) < 1), "draws outside the unit ball"

    return check


def _orthonormal(x):
    np.testing.assert_allclose(x @ np.swapaxes(x, -1, -2), np.broadcast_to(np.eye(x.shape[-1]), x.shape), atol=1e-5)


def _multinomial_rows(total, probs):
    def check(x):
        np.testing.assert_array_equal(x.sum(-1), total)
        np.testing.assert_allclose(x.mean(0), total * np.asarray(probs), atol=0.1 * total)

    return check


def _records():
    f32 = np.float32
    i32 = np.int32
    return (
        _rand_rec("gamma", {"a": 2.5, "shape": (N,)}, (N,), f32, _ks(st.gamma(2.5).cdf)),
        _rand_rec("loggamma", {"a": 0.4, "shape": (N,)}, (N,), f32, _ks(st.gamma(0.4).cdf, np.exp)),
        _rand_rec("beta", {"a": 2.0, "b": 0.7, "shape": (N,)}, (N,), f32, _ks(st.beta(2.0, 0.7).cdf)),
        _rand_rec("dirichlet", {"alpha": np.array([1.5, 2.0, 0.5], f32), "shape": (N,)}, (N, 3), f32,
                  _ks(st.beta(1.5, 2.5).cdf, lambda x: x[:, 0])),
        _rand_rec("t", {"df": 4.0, "shape": (N,)}, (N,), f32, _ks(st.t(4.0).cdf)),
        _rand_rec("chisquare", {"df": 3.0, "shape": (N,)}, (N,), f32, _ks(st.chi2(3.0).cdf)),
        _rand_rec("f", {"dfnum": 5.0, "dfden": 8.0, "shape": (N,)}, (N,), f32, _ks(st.f(5.0, 8.0).cdf)),
        _rand_rec("cauchy", {"shape": (N,)}, (N,), f32, _ks(st.cauchy.cdf)),
        _rand_rec("laplace", {"shape": (N,)}, (N,), f32, _ks(st.laplace.cdf)),
        _rand_rec("logistic", {"shape": (N,)}, (N,), f32, _ks(st.logistic.cdf)),
        _rand_rec("lognormal", {"sigma": 0.5, "shape": (N,)}, (N,), f32, _ks(st.lognorm(0.5).cdf)),
        _rand_rec("maxwell", {"shape": (N,)}, (N,), f32, _ks(st.maxwell.cdf)),
        _rand_rec("double_sided_maxwell", {"loc": 0.0, "scale": 1.0, "shape": (N,)}, (N,), f32,
                  _ks(st.maxwell.cdf, np.abs)),
        _rand_rec("pareto", {"b": 3.0, "shape": (N,)}, (N,), f32, _ks(st.pareto(3.0).cdf)),
        _rand_rec("rayleigh", {"scale": 2.0, "shape": (N,)}, (N,), f32, _ks(st.rayleigh(scale=2.0).cdf)),
        _rand_rec("weibull_min", {"scale": 2.0, "concentration": 1.5, "shape": (N,)}, (N,), f32,
                  _ks(st.weibull_min(1.5, scale=2.0).cdf)),
        _rand_rec("triangular", {"left": 0.0, "mode": 0.3, "right": 1.0, "shape": (N,)}, (N,), f32,
                  _ks(st.triang(0.3).cdf)),
        _rand_rec("wald", {"mean": 1.5, "shape": (N,)}, (N,), f32, _ks(st.invgauss(1.5).cdf)),
        _rand_rec("generalized_normal", {"p": 1.5, "shape": (N,)}, (N,), f32, _ks(st.gennorm(1.5).cdf)),
        _rand_rec("ball", {"d": 3, "p": 2, "shape": (N,)}, (N, 3), f32, _unit_rows(2, 3)),
        _rand_rec("orthogonal", {"n": 3, "shape": (4,)}, (4, 3, 3), f32, _orthonormal),
        _rand_rec("geometric", {"p": 0.5, "shape": (N,)}, (N,), i32, _moments(2.0, np.sqrt(2.0), lo=1)),
        _rand_rec("poisson", {"lam": 3.5, "shape": (N,)}, (N,), i32, _moments(3.5, np.sqrt(3.5), tol=0.2, lo=0)),
        _rand_rec("binomial", {"n": 12.0, "p": 0.3, "shape": (N,)}, (N,), f32,
                  _moments(3.6, np.sqrt(12 * 0.21), tol=0.2, lo=0, hi=12)),
        _rand_rec("multinomial", {"n": 20.0, "p": np.array([0.2, 0.3, 0.5], f32), "shape": (N, 3)}, (N, 3), f32,
                  _multinomial_rows(20, [0.2, 0.3, 0.5])),
        OpRecord(name="random.clone", ref=lambda k: k.copy(), args_maker=keys, dtypes=("uint32",),
                 differentiable=False, tol={}, cases=case_triples((_KEY, (), {}))),
    )


_KEY0 = np.zeros(2, np.uint32)


def _bad(match, exc=ValueError, **kwargs):
    return OpErr((_KEY0,), kwargs, exc, match)


# Bad inputs, with JAX's exception types (messages as JAX 0.10.2's).
ERRORS = {
    "random.gamma": (_bad("dtype argument to `gamma` must be a float dtype, got int32", a=1.0, dtype=np.int32),
                     _bad("Incompatible shapes for broadcasting", a=np.ones(3, np.float32), shape=(2,))),
    "random.beta": (_bad("dtype argument to `beta` must be a float dtype, got int32", a=1.0, b=2.0,
                         dtype=np.int32),),
    "random.cauchy": (_bad("dtype argument to `cauchy` must be a float dtype, got int32", dtype=np.int32),),
    "random.geometric": (_bad("dtype argument to `geometric` must be an int dtype, got float32", p=0.5,
                              dtype=np.float32),),
    "random.dirichlet": (_bad("dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0", alpha=1.0),),
    "random.pareto": (_bad("Incompatible shapes for broadcasting", b=np.ones(3, np.float32), shape=(2,)),),
    "random.binomial": (_bad("dtype argument to `binomial` must be a float dtype, got int32", n=5.0, p=0.5,
                             dtype=np.int32),),
    "random.t": (_bad("dtype argument to `t` must be a float dtype, got int32", df=2.0, dtype=np.int32),),
}


RECORDS = tuple(dataclasses.replace(rec, errors=rec.errors + ERRORS.get(rec.name, ())) for rec in _records())
