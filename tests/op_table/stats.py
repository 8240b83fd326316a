"""Operator-table records for `jax.scipy.stats`: each distribution function
against SciPy's (test-only reference) on inputs inside the support with valid
parameters. The cdf / sf functions built on the regularized incomplete gamma
and beta functions are checked in tests/test_stats_incomplete.py instead."""
import numpy as np
import scipy.stats as sps

import microjax_rs.scipy.stats  # noqa: F401  (records resolve names on it)

from ._record import Case, F32_F64, OpErr, OpRecord, _inexact_out, _rand

# SciPy computes in float64; float32 results of exp/log/lgamma compositions differ by a few ulp
# of their largest intermediate term.
TOL = {"float32": (2e-4, 2e-5), "float64": (1e-9, 1e-11)}


def _args(*specs):
    """One argument per spec: (lo, hi) uniform floats, ("int", lo, hi) integer-valued floats."""

    def make(rng, shapes, dtype):
        out = []
        for spec, shape in zip(specs, shapes):
            if spec[0] == "int":
                out.append(rng.integers(spec[1], spec[2] + 1, size=tuple(shape)).astype(dtype))
            else:
                out.append(_rand(rng, shape, dtype, spec[0], spec[1]))
        return out

    return make


def _shapes(n):
    """Small shape sets for n arguments: a vector with scalar parameters, and broadcasting."""
    if n == 1:
        return (Case(((5,),)), Case(((2, 3),)))
    return (Case(((5,),) + ((),) * (n - 1)),
            Case(((2, 3),) + tuple((3,) if i % 2 else (2, 1) for i in range(n - 1))))


def _rec(name, ref, specs, differentiable=True, tol=TOL, cases=None):
    return OpRecord(name=f"scipy.stats.{name}", ref=ref, args_maker=_args(*specs), dtypes=F32_F64,
                    cases=cases or _shapes(len(specs)), tol=tol, out_dtype=_inexact_out,
                    differentiable=differentiable)


X = (-3.0, 3.0)
LOC = (-1.0, 1.0)
SCALE = (0.5, 2.0)
Q = (0.05, 0.95)


def _family(dist, fns, specs, ref=None, **kw):
    """Records of `dist.fn` for each fn, against scipy.stats.<dist>.fn (or `ref`)."""
    ref_dist = ref or getattr(sps, dist)
    out = []
    for fn in fns:
        s = specs if fn not in ("ppf", "isf") else (Q,) + tuple(specs[1:])
        out.append(_rec(f"{dist}.{fn}", getattr(ref_dist, fn), s, **kw))
    return out


_LOCSCALE_ALL = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")

RECORDS = tuple(
    _family("norm", _LOCSCALE_ALL, (X, LOC, SCALE))
    + _family("cauchy", _LOCSCALE_ALL, (X, LOC, SCALE))
    + _family("logistic", ("logpdf", "pdf", "cdf", "sf", "ppf", "isf"), (X, LOC, SCALE))
    + _family("laplace", ("logpdf", "pdf", "cdf"), (X, LOC, SCALE))
    + _family("expon", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"), ((1.1, 4.0), LOC, SCALE))
    + _family("gumbel_l", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"), ((-2.0, 1.5), LOC, SCALE))
    + _family("gumbel_r", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"), ((-1.5, 2.0), LOC, SCALE))
    + _family("uniform", ("logpdf", "pdf", "cdf", "ppf"), ((0.1, 0.45), (-0.5, 0.0), (1.0, 2.0)))
    + _family("pareto", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), ((3.2, 6.0), (0.5, 3.0), LOC, SCALE))
    + [_rec("pareto.ppf", sps.pareto.ppf, (Q, (0.5, 3.0), LOC, SCALE))]
    + _family("t", ("logpdf", "pdf"), (X, (0.5, 6.0), LOC, SCALE))
    + _family("chi2", ("logpdf", "pdf"), ((0.6, 5.0), (0.5, 6.0), (-0.5, 0.5), SCALE))
    + _family("gamma", ("logpdf", "pdf"), ((0.6, 5.0), (0.5, 4.0), (-0.5, 0.5), SCALE))
    + _family("beta", ("logpdf", "pdf"), ((0.1, 0.9), (0.5, 3.0), (0.5, 3.0)))
    + _family("gennorm", ("logpdf", "pdf"), (X, (0.5, 3.0)))
    + _family("vonmises", ("logpdf", "pdf"), (X, (0.2, 20.0)))
    + _family("wrapcauchy", ("logpdf", "pdf"), ((0.1, 6.0), (0.05, 0.95)))
    + _family("truncnorm", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), ((-0.9, 0.9), (-3.0, -1.0),
                                                                               (1.0, 3.0)),
              tol={"float32": (5e-4, 5e-5), "float64": (1e-8, 1e-10)})
    # discrete distributions: k sits on the integers (support edges, floor, round), so finite differences
    # along k do not apply; gradients in the parameters: tests/test_scipy_stats.py
    + _family("bernoulli", ("logpmf", "pmf"), (("int", 0, 1), (0.1, 0.9)), differentiable=False)
    + _family("bernoulli", ("cdf",), ((-0.5, 1.5), (0.1, 0.9)), differentiable=False)
    + _family("bernoulli", ("ppf",), (Q, (0.1, 0.9)), differentiable=False)
    + _family("binom", ("logpmf", "pmf"), (("int", 0, 5), ("int", 5, 9), (0.1, 0.9)), differentiable=False)
    + _family("nbinom", ("logpmf", "pmf"), (("int", 0, 6), (0.5, 5.0), (0.1, 0.9)), differentiable=False)
    + _family("geom", ("logpmf", "pmf"), (("int", 1, 6), (0.1, 0.9)), differentiable=False)
    + _family("poisson", ("logpmf", "pmf"), (("int", 0, 8), (0.5, 6.0)), differentiable=False)
    + _family("betabinom", ("logpmf", "pmf"), (("int", 0, 5), ("int", 5, 9), (0.5, 3.0), (0.5, 3.0)),
              differentiable=False)
    + [_rec("poisson.entropy", sps.poisson.entropy, ((0.5, 150.0),), cases=(Case(((6,),)),),
            tol={"float32": (2e-5, 2e-5), "float64": (1e-7, 1e-9)})]
)


# ----------------------------------------------------------------- multivariate


def _spd_args(rng, shapes, dtype):
    """x (..., n), mean (n,), and a well-conditioned SPD covariance (n, n)."""
    x = _rand(rng, shapes[0], dtype, -2, 2)
    mean = _rand(rng, shapes[1], dtype, -1, 1)
    n = shapes[2][-1]
    a = rng.uniform(-1, 1, size=(n, n))
    cov = (a @ a.T + n * np.eye(n)).astype(dtype)
    return [x, mean, cov]


def _mvn_logpdf(x, mean, cov):
    return sps.multivariate_normal.logpdf(x, mean, cov)


def _simplex(rng, shapes, dtype):
    """x on the simplex along axis 0, alpha > 0."""
    raw = rng.uniform(0.2, 1.0, size=tuple(shapes[0]))
    x = (raw / raw.sum(axis=0, keepdims=True)).astype(dtype)
    return [x, _rand(rng, shapes[1], dtype, 0.5, 3.0)]


def _dirichlet_logpdf(x, alpha):
    x = np.asarray(x, np.float64)
    x = x / x.sum(axis=0, keepdims=True)  # the float32 input renormalized for SciPy's simplex check
    return sps.dirichlet.logpdf(x, alpha)


def _multinomial_args(rng, shapes, dtype):
    x = rng.integers(0, 4, size=tuple(shapes[0])).astype(np.int32)
    n = np.asarray(x.sum(axis=-1), np.int32)
    p = rng.uniform(0.2, 1.0, size=tuple(shapes[2]))
    return [x, n, (p / p.sum()).astype(dtype)]


RECORDS += (
    OpRecord(name="scipy.stats.multivariate_normal.logpdf", ref=_mvn_logpdf, args_maker=_spd_args, dtypes=F32_F64,
             cases=(Case(((3,), (3,), (3, 3))), Case(((4, 3), (3,), (3, 3)))), tol=TOL, out_dtype=_inexact_out,
             errors=(OpErr((np.ones(3, np.float32), np.zeros(3, np.float32), np.eye(2, dtype=np.float32)), {},
                           ValueError, "multivariate_normal.logpdf got incompatible shapes"),)),
    OpRecord(name="scipy.stats.multivariate_normal.pdf",
             ref=lambda x, m, c: np.exp(_mvn_logpdf(x, m, c)), args_maker=_spd_args, dtypes=F32_F64,
             cases=(Case(((4, 2), (2,), (2, 2))),), tol=TOL, out_dtype=_inexact_out),
    OpRecord(name="scipy.stats.dirichlet.logpdf", ref=_dirichlet_logpdf, args_maker=_simplex, dtypes=F32_F64,
             cases=(Case(((3,), (3,))), Case(((3, 4), (3,)))), tol=TOL, out_dtype=_inexact_out,
             differentiable=False,
             errors=(OpErr((np.full(3, 1 / 3, np.float32), np.ones((3, 1), np.float32)), {}, ValueError,
                           "`alpha` must be one-dimensional"),)),
    OpRecord(name="scipy.stats.dirichlet.pdf", ref=lambda x, a: np.exp(_dirichlet_logpdf(x, a)), args_maker=_simplex,
             dtypes=F32_F64, cases=(Case(((3, 4), (3,))),), tol=TOL, out_dtype=_inexact_out, differentiable=False),
    OpRecord(name="scipy.stats.multinomial.logpmf", ref=lambda x, n, p: sps.multinomial.logpmf(x, n, p / p.sum()),
             args_maker=_multinomial_args, dtypes=F32_F64, cases=(Case(((4,), (), (4,))),), tol=TOL,
             out_dtype=_inexact_out, differentiable=False,
             errors=(OpErr((np.ones(3, np.float32), np.float32(3), np.full(3, 1 / 3, np.float32)), {}, ValueError,
                           "x and n must be of integer type"),)),
    OpRecord(name="scipy.stats.multinomial.pmf", ref=lambda x, n, p: sps.multinomial.pmf(x, n, p / p.sum()),
             args_maker=_multinomial_args, dtypes=F32_F64, cases=(Case(((4,), (), (4,))),), tol=TOL,
             out_dtype=_inexact_out, differentiable=False),
)


# ----------------------------------------------------------------- summaries


def _ties(rng, shapes, dtype):
    return [rng.integers(0, 4, size=tuple(s)).astype(dtype) for s in shapes]


RECORDS += (
    OpRecord(name="scipy.stats.sem", ref=lambda a, **kw: sps.sem(a, **kw), args_maker=_args(X), dtypes=F32_F64,
             cases=(Case(((6,),)), Case(((3, 4),), (), {"axis": 1}), Case(((3, 4),), (), {"axis": None, "ddof": 0}),
                    Case(((3, 4),), (), {"axis": 0, "keepdims": True})),
             tol={"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-13)}, out_dtype=_inexact_out),
    OpRecord(name="scipy.stats.rankdata", ref=lambda a, **kw: sps.rankdata(a, **kw), args_maker=_ties,
             dtypes=("float32", "int32"), differentiable=False,
             cases=tuple(Case(((7,),), (), {"method": m}) for m in ("average", "min", "max", "dense", "ordinal"))
             + (Case(((3, 4),), (), {"axis": 1}), Case(((3, 4),), (), {"axis": 0, "method": "min"}),
                Case(((2, 3),))),
             out_dtype=lambda dt, x64: np.dtype("float64" if x64 else "float32"),
             errors=(OpErr((np.ones(3, np.float32),), {"method": "mean"}, ValueError, "unknown method 'mean'"),
                     OpErr((np.ones(3, np.float32),), {"nan_policy": "skip"}, ValueError,
                           "Illegal nan_policy value"))),
)
