"""Operator-table records for the special functions: the `jax.lax` special
primitives (`igamma`, `igammac`, `igamma_grad_a`, `random_gamma_grad`,
`betainc`, `zeta`, `bessel_i0e`, `bessel_i1e`, `erfc`) and the
`jax.scipy.special` functions built on them, against SciPy 1.17.1 (a
test-only reference).

Functions JAX differentiates in some arguments only (`betainc` in x,
`polygamma` in x) or to first order only (`igamma` in a: `igamma_grad_a`
has no derivative rule) have a second record, "<name>[x]", taking the
differentiable argument as the one array and the others as static values;
the full record is then marked not differentiable.
"""
import numpy as np
import scipy.special as sps

import microjax_rs.scipy.special  # noqa: F401  (records resolve names on it)

from ._record import BINARY_SHAPES, OpErr, F32_F64, TRANSCENDENTAL_TOL, UNARY_SHAPES, Case, OpRecord, _inexact_out
from ._record import _rand, cases_from_shapes, no_args, positive, uniform

T = TRANSCENDENTAL_TOL
# Functions computed from several lgamma / log / exp steps in the input type.
COMPOSED_TOL = {"float32": (1e-4, 1e-5), "float64": (1e-10, 1e-12)}
# References by finite differences of SciPy (h = 1e-6).
FD_TOL = {"float32": (1e-4, 1e-5), "float64": (1e-6, 1e-8)}


def _makers(*ranges):
    """One uniform range per argument (positional), cast to the dtype under test."""

    def make(rng, shapes, dtype):
        return [_rand(rng, s, dtype, lo, hi) for s, (lo, hi) in zip(shapes, ranges)]

    make.__name__ = f"ranges{ranges}"
    return make


def _swap_first(fn):
    """Adapter: the record's one array is the function's last argument."""
    return lambda x, *static: fn(*static, x)


def _rec(name, ref, maker, shapes, *, dtypes=F32_F64, tol=T, args=(), **kw):
    cases = tuple(Case(tuple(s), tuple(args), {}) for s in shapes)
    return OpRecord(name=name, ref=ref, args_maker=maker, dtypes=dtypes, cases=cases, tol=tol, **kw)


_UN = [(s,) for s in UNARY_SHAPES]
_BIN = list(BINARY_SHAPES)
_TERN = [((), (), ()), ((5,), (5,), (5,)), ((3, 4), (3, 4), (3, 4)), ((3, 4), (), (3, 4)), ((0,), (0,), (0,))]
_X_ONLY = [((),), ((5,),), ((3, 4),)]


def _err(arrays, exc, match, *args, **kwargs):
    return (OpErr(tuple(arrays), kwargs, exc, match, args=tuple(args)),)


_F = np.ones(3, np.float32)
_I = np.ones(3, np.int32)


def _dgamma_da(a, x):
    h = 1e-6 * np.maximum(a, 1e-3)
    return (sps.gammainc(a + h, x) - sps.gammainc(a - h, x)) / (2 * h)


def _random_gamma_grad(a, x):
    density = np.exp((a - 1) * np.log(x) - x - sps.gammaln(a))
    return -_dgamma_da(a, x) / density


def _multigammaln(a, d):
    return sps.multigammaln(np.asarray(a, np.float64), d)


def _softmax_all(x, axis=None):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax_all(x, axis=None):
    s = x - np.max(x, axis=axis, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


_LAX = (
    _rec("lax.igamma", sps.gammainc, _makers((0.2, 6), (0.1, 8)), _BIN, differentiable=False,
         errors=_err([_F, _I], TypeError, "igamma: operands must have equal dtypes")
         + _err([_I, _I], TypeError, "igamma: requires a floating operand")),
    _rec("lax.igamma[x]", lambda x, a: sps.gammainc(a, x), _makers((0.1, 8)), _X_ONLY, args=(1.7,),
         path="lax.igamma", adapt=_swap_first, out_dtype=_inexact_out),
    _rec("lax.igammac", sps.gammaincc, _makers((0.2, 6), (0.1, 8)), _BIN, differentiable=False),
    _rec("lax.igammac[x]", lambda x, a: sps.gammaincc(a, x), _makers((0.1, 8)), _X_ONLY, args=(0.6,),
         path="lax.igammac", adapt=_swap_first, out_dtype=_inexact_out),
    _rec("lax.igamma_grad_a", _dgamma_da, _makers((0.3, 6), (0.2, 8)), _BIN, tol=FD_TOL, differentiable=False),
    _rec("lax.random_gamma_grad", _random_gamma_grad, _makers((0.3, 6), (0.2, 8)), _BIN, tol=FD_TOL,
         differentiable=False),
    _rec("lax.betainc", sps.betainc, _makers((0.3, 5), (0.3, 5), (0.02, 0.98)), _TERN, differentiable=False,
         errors=_err([_F, _F, np.ones(4, np.float32)], TypeError, "incompatible shapes")
         + _err([_I, _I, _I], TypeError, "regularized_incomplete_beta: requires a floating operand")),
    _rec("lax.betainc[x]", lambda x, a, b: sps.betainc(a, b, x), _makers((0.05, 0.95)), _X_ONLY, args=(2.5, 1.5),
         path="lax.betainc", adapt=_swap_first, out_dtype=_inexact_out),
    _rec("lax.zeta", sps.zeta, _makers((1.5, 6), (0.3, 4)), _BIN, differentiable=False),
    _rec("lax.bessel_i0e", sps.i0e, uniform(-8, 8), _UN),
    _rec("lax.bessel_i1e", sps.i1e, uniform(-8, 8), _UN),
    _rec("lax.erfc", sps.erfc, uniform(-4, 4), _UN),
)


def _u(name, ref, maker, *, dtypes=F32_F64 + ("int32",), tol=T, **kw):
    return _rec(name, ref, maker, _UN, dtypes=dtypes, tol=tol, out_dtype=_inexact_out, **kw)


def _b(name, ref, maker, *, dtypes=F32_F64, tol=T, **kw):
    return _rec(name, ref, maker, _BIN, dtypes=dtypes, tol=tol, out_dtype=_inexact_out, **kw)


_SCIPY = (
    _b("scipy.special.gammainc", sps.gammainc, _makers((0.2, 6), (0.1, 8)), differentiable=False),
    _b("scipy.special.gammaincc", sps.gammaincc, _makers((0.2, 6), (0.1, 8)), differentiable=False),
    _rec("scipy.special.betainc", sps.betainc, _makers((0.3, 5), (0.3, 5), (0.02, 0.98)), _TERN,
         differentiable=False),
    _b("scipy.special.beta", sps.beta, _makers((0.3, 4), (0.3, 4)), tol=COMPOSED_TOL),
    _b("scipy.special.betaln", sps.betaln, _makers((0.3, 6), (0.3, 6)), tol=COMPOSED_TOL),
    _u("scipy.special.gamma", sps.gamma, uniform(0.2, 5), tol=COMPOSED_TOL),
    _u("scipy.special.gamma[neg]", sps.gamma, uniform(-2.8, -2.2), tol=COMPOSED_TOL, path="scipy.special.gamma",
       dtypes=F32_F64),
    _u("scipy.special.gammasgn", sps.gammasgn, uniform(-3.9, 3.9), dtypes=F32_F64),
    _u("scipy.special.loggamma", lambda x: sps.loggamma(x).real, uniform(0.2, 6), dtypes=F32_F64),
    _u("scipy.special.factorial", lambda n: sps.factorial(n, exact=False), uniform(-1, 6), tol=COMPOSED_TOL,
       dtypes=F32_F64, errors=_err([_F], NotImplementedError, "factorial with exact=True", exact=True)),
    _b("scipy.special.comb", sps.comb, _makers((2, 8), (0, 2)), tol=COMPOSED_TOL),
    _b("scipy.special.poch", sps.poch, _makers((0.5, 4), (-0.4, 3)), tol=COMPOSED_TOL),
    _rec("scipy.special.multigammaln", _multigammaln, _makers((2, 5)), _X_ONLY, args=(3,), tol=COMPOSED_TOL,
         out_dtype=_inexact_out),
    _u("scipy.special.i0", sps.i0, uniform(-8, 8)),
    _u("scipy.special.i0e", sps.i0e, uniform(-8, 8)),
    _u("scipy.special.i1", sps.i1, uniform(-8, 8)),
    _u("scipy.special.i1e", sps.i1e, uniform(-8, 8)),
    _rec("scipy.special.polygamma", lambda x, n: sps.polygamma(n, x), _makers((0.5, 4)), _X_ONLY, args=(1,),
         path="scipy.special.polygamma", adapt=_swap_first, tol=COMPOSED_TOL, out_dtype=_inexact_out,
         errors=_err([_F], ValueError, "Argument `n` to polygamma must be of integer type", 1.5)),
    _rec("scipy.special.polygamma[n=2]", lambda x, n: sps.polygamma(n, x), _makers((0.5, 4)), _X_ONLY, args=(2,),
         path="scipy.special.polygamma", adapt=_swap_first, tol=COMPOSED_TOL, out_dtype=_inexact_out),
    _b("scipy.special.zeta", sps.zeta, _makers((1.5, 6), (0.3, 4)), tol=COMPOSED_TOL,
       errors=_err([_F], NotImplementedError, "Riemann zeta function not implemented")),
    _u("scipy.special.ndtr", sps.ndtr, uniform(-7, 7)),
    _u("scipy.special.ndtri", sps.ndtri, uniform(0.01, 0.99), dtypes=F32_F64, tol=COMPOSED_TOL),
    # JAX's asymptotic series (3 terms below -20) is within 1e-9 of SciPy.
    _u("scipy.special.log_ndtr", sps.log_ndtr, uniform(-30, 8), dtypes=F32_F64,
       tol={"float32": (1e-4, 1e-5), "float64": (1e-9, 1e-12)},
       errors=_err([_F], ValueError, "series_order must be non-negative", series_order=-1)
       + _err([_F], TypeError, "series_order must be a Python integer", series_order=1.5)),
    _b("scipy.special.kl_div", sps.kl_div, _makers((0.1, 3), (0.1, 3))),
    _b("scipy.special.rel_entr", sps.rel_entr, _makers((0.1, 3), (0.1, 3))),
    _b("scipy.special.boxcox", sps.boxcox, _makers((0.5, 3), (0.2, 2))),
    _b("scipy.special.boxcox1p", sps.boxcox1p, _makers((0.1, 3), (0.2, 2))),
    _u("scipy.special.erfcx", sps.erfcx, uniform(-3, 12), dtypes=F32_F64, tol=COMPOSED_TOL),
    _u("scipy.special.dawsn", sps.dawsn, uniform(-10, 10), dtypes=F32_F64, tol=COMPOSED_TOL),
    _u("scipy.special.exp1", sps.exp1, uniform(0.05, 30), dtypes=F32_F64, tol=COMPOSED_TOL),
    _u("scipy.special.expi", sps.expi, uniform(0.05, 60), dtypes=F32_F64, tol=COMPOSED_TOL),
    _u("scipy.special.expi[neg]", sps.expi, uniform(-30, -0.05), dtypes=F32_F64, tol=COMPOSED_TOL,
       path="scipy.special.expi"),
    OpRecord(name="scipy.special.bernoulli", ref=lambda n: sps.bernoulli(n), args_maker=no_args,
             dtypes=("float32",), cases=(Case((), (6,), {}), Case((), (12,), {})), differentiable=False,
             tol=COMPOSED_TOL,
             errors=_err([], ValueError, "n must be a non-negative integer", -1),
             out_dtype=lambda dt, x64: np.dtype("float64" if x64 else "float32")),
    OpRecord(name="scipy.special.softmax", ref=_softmax_all, args_maker=uniform(), dtypes=F32_F64,
             cases=cases_from_shapes([((3, 4),)]) + (Case(((3, 4),), (), {"axis": 0}), Case(((5,),), (), {}),
                                                  Case(((2, 3, 4),), (), {"axis": 1})), tol=T),
    OpRecord(name="scipy.special.log_softmax", ref=_log_softmax_all, args_maker=uniform(), dtypes=F32_F64,
             cases=cases_from_shapes([((3, 4),)]) + (Case(((3, 4),), (), {"axis": 0}), Case(((5,),), (), {})), tol=T),
)



def _stacked(fn):
    """Adapter: a function returning a tuple of arrays, stacked on a new leading axis."""
    import microjax_rs.numpy as jnp
    return lambda *xs: jnp.stack(fn(*xs))


def _stacked_ref(fn):
    return lambda *xs: np.stack(fn(*xs))


def _expn_args(rng, shapes, dtype):
    n = rng.integers(0, 6, size=tuple(shapes[0])).astype(np.int32)
    return [n, _rand(rng, shapes[1], dtype, 0.05, 12)]


def _bessel_jn_ref(z, v):
    return np.stack([sps.jv(i, z) for i in range(v + 1)])


_INTEGRALS = (
    _u("scipy.special.spence", sps.spence, uniform(0.01, 4), dtypes=F32_F64, tol=COMPOSED_TOL),
    _rec("scipy.special.expn", sps.expn, _expn_args, _BIN, tol=COMPOSED_TOL, out_dtype=_inexact_out),
    _rec("scipy.special.sici", _stacked_ref(sps.sici), uniform(0.1, 12), _UN[1:], tol=COMPOSED_TOL,
         adapt=_stacked, out_dtype=_inexact_out),
    _rec("scipy.special.sici[neg]", lambda x: np.stack([sps.sici(x)[0], sps.sici(-x)[1]]), uniform(-12, -0.1),
         _UN[1:], tol=COMPOSED_TOL, adapt=_stacked, path="scipy.special.sici", out_dtype=_inexact_out),
    _rec("scipy.special.fresnel", _stacked_ref(sps.fresnel), uniform(-5, 5), _UN[1:], tol=COMPOSED_TOL,
         adapt=_stacked, out_dtype=_inexact_out),
    _b("scipy.special.owens_t", sps.owens_t, _makers((-3, 3), (-2.5, 2.5)), tol=COMPOSED_TOL),
    OpRecord(name="scipy.special.bessel_jn", ref=_bessel_jn_ref, args_maker=uniform(-6, 6), dtypes=F32_F64,
             cases=(Case(((5,),), (), {"v": 3}), Case(((3, 4),), (), {"v": 1}), Case(((2,),), (), {"v": 0})),
             tol=COMPOSED_TOL, out_dtype=_inexact_out),
    _rec("scipy.special.hyp1f1", sps.hyp1f1, _makers((0.5, 3), (0.5, 3), (-5, 5)), _TERN, tol=COMPOSED_TOL,
         out_dtype=_inexact_out),
    _rec("scipy.special.hyp2f1", sps.hyp2f1, _makers((0.5, 2), (0.5, 2), (1, 3), (-2, 0.8)),
         [((), (), (), ()), ((5,), (5,), (5,), (5,)), ((3, 4), (3, 4), (), (3, 4))], tol=COMPOSED_TOL,
         out_dtype=_inexact_out),
)

RECORDS = _LAX + _SCIPY + _INTEGRALS
