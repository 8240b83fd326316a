"""Operator-table records for linear algebra: the `jax.lax.linalg` primitive
wrappers (`cholesky`, `triangular_solve`, `lu`, `qr`, `eigh`, `svd`), the
`jnp.linalg` functions built on them and `jax.scipy.linalg`.

Functions returning several arrays are reached through adapters on
``microjax_rs._linalg_table_adapters`` that pick one output; eigenvectors
and singular vectors are sign-normalized (the largest-magnitude entry of
every vector made positive, sign-invariant products kept), so they compare
with NumPy's LAPACK results and differentiate smoothly. Inputs are
well-conditioned: symmetric positive definite where the function needs it,
diagonally dominant otherwise. SciPy is not a dependency: the LU and `expm`
references are written here in NumPy (float64).
"""
import types

import numpy as np

import microjax_rs
from microjax_rs import lax
import microjax_rs.numpy as jnp
import microjax_rs.scipy.linalg as jsl

from ._record import OpRecord, case_triples, default_int_out

F = ("float32", "float64")
LINALG_TOL = {"float32": (2e-4, 2e-4), "float64": (1e-9, 1e-9)}
EXACT = {}


# ----------------------------------------------------------------- arg makers


def _sym_pd(rng, shape, dtype):
    n = shape[-1]
    x = rng.uniform(-1.0, 1.0, size=tuple(shape))
    a = x @ np.swapaxes(x, -1, -2) + n * np.eye(n)
    return a.astype(dtype)


def spd(rng, shapes, dtype):
    """Symmetric positive definite matrices (distinct eigenvalues a.s.)."""
    return [_sym_pd(rng, s, dtype) for s in shapes]


def dominant(rng, shapes, dtype):
    """Uniform [-1, 1] plus 3 on the diagonal: well-conditioned, square or not
    (vectors stay uniform)."""
    out = []
    for s in shapes:
        x = rng.uniform(-1.0, 1.0, size=tuple(s))
        if len(s) >= 2:
            x = x + 3.0 * np.eye(s[-2], s[-1])
        out.append(x.astype(dtype))
    return out


def first_dominant(rng, shapes, dtype):
    """A diagonally dominant first matrix; the other arguments uniform."""
    return dominant(rng, shapes[:1], dtype) + [rng.uniform(-1.0, 1.0, size=tuple(s)).astype(dtype)
                                               for s in shapes[1:]]


def small_norm(rng, shapes, dtype):
    """Matrices of 1-norm up to ~6 (a few squarings in expm)."""
    return [(rng.uniform(-1.0, 1.0, size=tuple(s)) * 1.5).astype(dtype) for s in shapes]


# ----------------------------------------------------------------- sign normalization


def _np_signs(v):
    """Sign making the largest-magnitude entry of every column positive."""
    idx = np.argmax(np.abs(v), axis=-2)[..., None, :]
    s = np.sign(np.take_along_axis(v, idx, axis=-2))
    return np.where(s == 0, 1.0, s).astype(v.dtype)


def _jnp_signs(v):
    idx = jnp.argmax(jnp.abs(v), axis=-2)[..., None, :]
    s = jnp.sign(jnp.take_along_axis(v, idx, axis=-2))
    return jnp.where(s == 0, 1.0, s).astype(v.dtype)


# ----------------------------------------------------------------- references


def _keep_dtype(ref):
    """Float results in the first argument's dtype (the references below
    compute in float64 internally)."""

    def wrapped(a, *rest, **kw):
        out = np.asarray(ref(a, *rest, **kw))
        return out.astype(np.asarray(a).dtype) if out.dtype.kind == "f" else out

    wrapped.__name__ = ref.__name__
    return wrapped


def _np_tri(a, lower, unit):
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        n = a.shape[-1]
        t = t * (1 - np.eye(n)) + np.eye(n)
    return t


@_keep_dtype
def _np_triangular_solve(a, b, left_side=False, lower=False, transpose_a=False, unit_diagonal=False,
                         conjugate_a=False):
    t = _np_tri(a, lower, unit_diagonal)
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    if conjugate_a:
        t = np.conj(t)
    if left_side:
        return np.linalg.solve(t, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _np_getrf(a):
    """LAPACK getrf on one matrix, in float64 / complex128: (packed lu,
    pivots, permutation); pivots by `|Re| + |Im|` (`|x|` on a real matrix),
    as LAPACK's complex `getrf`."""
    a = np.array(a, np.complex128 if np.iscomplexobj(a) else np.float64)
    m, n = a.shape
    perm = np.arange(m)
    piv = []
    for j in range(min(m, n)):
        col = a[j:, j]
        p = j + int(np.argmax(np.abs(col.real) + np.abs(col.imag)))
        piv.append(p)
        if a[p, j] != 0:
            a[[j, p]] = a[[p, j]]
            perm[[j, p]] = perm[[p, j]]
            a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, np.array(piv, np.int32), perm.astype(np.int32)


@_keep_dtype
def _np_lu(x, k=0):
    lead = x.shape[:-2]
    flat = x.reshape((-1,) + x.shape[-2:])
    outs = [_np_getrf(m)[k] for m in flat]
    shape = {0: x.shape, 1: lead + (min(x.shape[-2:]),), 2: lead + (x.shape[-2],)}[k]
    empty = np.result_type(x.dtype, np.float64) if k == 0 else np.int32
    return np.stack(outs).reshape(shape) if outs else np.zeros(shape, empty)


def _np_qr(x, k=0, full_matrices=False):
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return (q, r)[k]


def _np_eigh_v(x):
    _, v = np.linalg.eigh(x)
    return v * _np_signs(v)


def _np_svd(x, k=0, full_matrices=False):
    u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
    if k == 0:
        return s
    kk = s.shape[-1]
    sign = _np_signs(u[..., :, :kk])
    if k == 1:
        return u[..., :, :kk] * sign
    return vt[..., :kk, :] * np.swapaxes(sign, -1, -2)


@_keep_dtype
def _np_expm(a):
    """Taylor series after scaling, then squaring (float64)."""
    a = np.asarray(a, np.float64)
    norm = np.abs(a).sum(axis=-2).max()
    s = max(0, int(np.ceil(np.log2(max(norm, 1e-300)))) + 4)
    x = a / 2.0 ** s
    term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy()
    out = term.copy()
    for i in range(1, 30):
        term = term @ x / i
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


def _np_slogdet(a, k=0):
    return np.linalg.slogdet(a)[k]


def _np_cho_solve(a, b, lower=False):
    return np.linalg.solve(a, b)


@_keep_dtype
def _np_scipy_lu(a, k=0):
    f, _, perm = _np_getrf(a)
    m, n = a.shape
    kk = min(m, n)
    if k == 0:
        p = np.zeros((m, m))
        p[perm, np.arange(m)] = 1.0
        return p
    if k == 1:
        return np.tril(f[:, :kk], -1) + np.eye(m, kk)
    return np.triu(f[:kk, :])


# ----------------------------------------------------------------- adapters


def _adapters():
    L = lax.linalg

    def cholesky(x):
        return L.cholesky(x)

    def triangular_solve(a, b, **kw):
        return L.triangular_solve(a, b, **kw)

    def lu_k(x, k=0):
        return L.lu(x)[k]

    def qr_k(x, k=0, full_matrices=False):
        return L.qr(x, full_matrices=full_matrices)[k]

    def eigh_w(x):
        return L.eigh(x)[1]

    def eigh_v(x):
        v = L.eigh(x)[0]
        return v * _jnp_signs(v)

    def svd_k(x, k=0, full_matrices=False):
        if k == 0:
            return L.svd(x, compute_uv=False)
        u, s, vt = L.svd(x, full_matrices=full_matrices)
        kk = s.shape[-1]
        sign = _jnp_signs(u[..., :, :kk])
        if k == 1:
            return u[..., :, :kk] * sign
        return vt[..., :kk, :] * jnp.swapaxes(sign, -1, -2)

    def slogdet_k(a, k=0):
        return jnp.linalg.slogdet(a)[k]

    def jnp_qr_k(a, k=0, mode="reduced"):
        return jnp.linalg.qr(a, mode=mode)[k]

    def jnp_eigh_w(a):
        return jnp.linalg.eigh(a).eigenvalues

    def lstsq_x(a, b):
        return jnp.linalg.lstsq(a, b)[0]

    def lstsq_resid(a, b):
        return jnp.linalg.lstsq(a, b)[1]

    def cho_solve(a, b, lower=False):
        return jsl.cho_solve(jsl.cho_factor(a, lower=lower), b)

    def scipy_lu_k(a, k=0):
        return jsl.lu(a)[k]

    def lu_solve(a, b, trans=0):
        return jsl.lu_solve(jsl.lu_factor(a), b, trans=trans)

    def lu_factor_k(a, k=0):
        return jsl.lu_factor(a)[k]

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if callable(v)})


microjax_rs._linalg_table_adapters = _adapters()
_A = "_linalg_table_adapters."


def _i32(dt, x64):
    return np.dtype("int32")


def _np_lstsq_x(a, b):
    return np.linalg.lstsq(a, b, rcond=None)[0]


def _np_lstsq_resid(a, b):
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    r = b - a @ x
    return (r * r).sum(axis=0)


# ----------------------------------------------------------------- records

_SQ = case_triples((((3, 3),), (), {}), (((2, 4, 4),), (), {}), (((1, 1),), (), {}))
_RECT = case_triples((((3, 3),), (), {}), (((4, 2),), (), {}), (((2, 5),), (), {}), (((2, 3, 4),), (), {}))

RECORDS = (
    # -- jax.lax.linalg
    OpRecord(name="lax.linalg.cholesky", path=_A + "cholesky",
             ref=lambda x: np.linalg.cholesky((x + np.swapaxes(x, -1, -2)) / 2),
             args_maker=spd, dtypes=F, cases=_SQ, tol=LINALG_TOL),
    OpRecord(name="lax.linalg.triangular_solve", path=_A + "triangular_solve", ref=_np_triangular_solve,
             args_maker=first_dominant, dtypes=F, tol=LINALG_TOL,
             cases=case_triples(
                 (((3, 3), (3, 2)), (), {"left_side": True, "lower": True}),
                 (((3, 3), (2, 3)), (), {"left_side": False, "lower": False}),
                 (((3, 3), (3, 4)), (), {"left_side": True, "lower": False, "transpose_a": True}),
                 (((3, 3), (2, 3)), (), {"left_side": False, "lower": True, "transpose_a": True,
                                         "unit_diagonal": True}),
                 (((2, 4, 4), (2, 4, 3)), (), {"left_side": True, "lower": True, "unit_diagonal": True}),
             )),
    OpRecord(name="lax.linalg.lu", path=_A + "lu_k", ref=_np_lu, args_maker=dominant, dtypes=F,
             tol=LINALG_TOL, cases=case_triples((((3, 3),), (), {}), (((4, 3),), (), {}), (((3, 4),), (), {}),
                                                (((2, 3, 3),), (), {}))),
    OpRecord(name="lax.linalg.lu[pivots]", path=_A + "lu_k", ref=_np_lu, args_maker=lambda r, s, d: [
        r.uniform(-1, 1, size=tuple(x)).astype(d) for x in s], dtypes=F, tol=EXACT, out_dtype=_i32,
             differentiable=False,
             cases=case_triples((((4, 4),), (), {"k": 1}), (((4, 4),), (), {"k": 2}), (((2, 5, 3),), (), {"k": 1}),
                                (((2, 3, 5),), (), {"k": 2}))),
    OpRecord(name="lax.linalg.qr", path=_A + "qr_k", ref=_np_qr, args_maker=dominant, dtypes=F, tol=LINALG_TOL,
             cases=case_triples((((4, 3),), (), {"k": 0}), (((4, 3),), (), {"k": 1}), (((3, 3),), (), {"k": 0}),
                                (((2, 3, 3),), (), {"k": 1}), (((3, 3),), (), {"k": 0, "full_matrices": True}))),
    OpRecord(name="lax.linalg.qr[complete]", path=_A + "qr_k", ref=_np_qr, args_maker=dominant, dtypes=F,
             tol=LINALG_TOL, differentiable=False,  # JAX: no derivative for full_matrices with m != n
             cases=case_triples((((4, 2),), (), {"k": 0, "full_matrices": True}),
                                (((4, 2),), (), {"k": 1, "full_matrices": True}),
                                (((2, 4),), (), {"k": 0}), (((2, 4),), (), {"k": 1}))),
    OpRecord(name="lax.linalg.eigh[w]", path=_A + "eigh_w", ref=np.linalg.eigvalsh, args_maker=spd, dtypes=F,
             tol=LINALG_TOL, cases=_SQ),
    OpRecord(name="lax.linalg.eigh[v]", path=_A + "eigh_v", ref=_np_eigh_v, args_maker=spd, dtypes=F,
             tol=LINALG_TOL, cases=case_triples((((3, 3),), (), {}), (((2, 4, 4),), (), {}))),
    OpRecord(name="lax.linalg.svd", path=_A + "svd_k", ref=_np_svd, args_maker=dominant, dtypes=F,
             tol=LINALG_TOL,
             cases=case_triples((((3, 3),), (), {"k": 0}), (((4, 2),), (), {"k": 1}), (((4, 2),), (), {"k": 2}),
                                (((2, 4),), (), {"k": 1}), (((2, 4),), (), {"k": 2}), (((2, 3, 3),), (), {"k": 2}),
                                (((3, 5),), (), {"k": 0}))),
    # -- jax.numpy.linalg
    OpRecord(name="numpy.linalg.solve", ref=np.linalg.solve, args_maker=first_dominant, dtypes=F,
             tol=LINALG_TOL, cases=case_triples((((3, 3), (3,)), (), {}), (((3, 3), (3, 2)), (), {}),
                                                (((2, 4, 4), (2, 4, 1)), (), {}))),
    OpRecord(name="numpy.linalg.inv", ref=np.linalg.inv, args_maker=dominant, dtypes=F, tol=LINALG_TOL,
             cases=_SQ),
    OpRecord(name="numpy.linalg.det", ref=np.linalg.det, args_maker=dominant, dtypes=F, tol=LINALG_TOL,
             cases=_SQ),
    OpRecord(name="numpy.linalg.slogdet", path=_A + "slogdet_k", ref=_np_slogdet, args_maker=first_dominant,
             dtypes=F, tol=LINALG_TOL,
             cases=case_triples((((3, 3),), (), {"k": 1}), (((2, 4, 4),), (), {"k": 1}), (((3, 3),), (), {"k": 0}))),
    OpRecord(name="numpy.linalg.cholesky", ref=np.linalg.cholesky, args_maker=spd, dtypes=F, tol=LINALG_TOL,
             cases=_SQ),
    OpRecord(name="numpy.linalg.qr", path=_A + "jnp_qr_k", ref=lambda a, k=0, mode="reduced":
             np.linalg.qr(a, mode=mode)[k], args_maker=dominant, dtypes=F, tol=LINALG_TOL,
             cases=case_triples((((4, 3),), (), {"k": 0}), (((4, 3),), (), {"k": 1}), (((3, 3),), (), {"mode": "complete"}))),
    OpRecord(name="numpy.linalg.eigh", path=_A + "jnp_eigh_w", ref=np.linalg.eigvalsh, args_maker=spd,
             dtypes=F, tol=LINALG_TOL, cases=_SQ),
    OpRecord(name="numpy.linalg.eigvalsh", ref=np.linalg.eigvalsh, args_maker=spd, dtypes=F, tol=LINALG_TOL,
             cases=_SQ),
    OpRecord(name="numpy.linalg.svdvals", ref=lambda x: np.linalg.svd(x, compute_uv=False), args_maker=dominant,
             dtypes=F, tol=LINALG_TOL, cases=_RECT),
    OpRecord(name="numpy.linalg.pinv", ref=np.linalg.pinv, args_maker=dominant, dtypes=F, tol=LINALG_TOL,
             cases=_RECT),
    OpRecord(name="numpy.linalg.lstsq", path=_A + "lstsq_x", ref=_np_lstsq_x, args_maker=first_dominant,
             dtypes=F, tol=LINALG_TOL, cases=case_triples((((4, 2), (4,)), (), {}), (((5, 3), (5, 2)), (), {}))),
    OpRecord(name="numpy.linalg.lstsq[resid]", path=_A + "lstsq_resid", ref=_np_lstsq_resid,
             args_maker=first_dominant, dtypes=F, tol=LINALG_TOL, cases=case_triples((((5, 3), (5, 2)), (), {}))),
    OpRecord(name="numpy.linalg.matrix_power[negative]", path="numpy.linalg.matrix_power",
             ref=np.linalg.matrix_power, args_maker=dominant, dtypes=F, tol=LINALG_TOL,
             cases=case_triples((((3, 3),), (-2,), {}), (((2, 3, 3),), (-1,), {}))),
    OpRecord(name="numpy.linalg.norm[svd]", path="numpy.linalg.norm", ref=np.linalg.norm, args_maker=dominant,
             dtypes=F, tol=LINALG_TOL,
             cases=case_triples((((3, 4),), (2,), {}), (((3, 4),), ("nuc",), {}), (((4, 3),), (-2,), {}))),
    OpRecord(name="numpy.linalg.matrix_rank", ref=np.linalg.matrix_rank, args_maker=dominant, dtypes=F,
             tol=EXACT, out_dtype=default_int_out, differentiable=False, cases=_RECT),
    # -- jax.scipy.linalg
    OpRecord(name="scipy.linalg.solve_triangular",
             ref=lambda a, b, trans=0, lower=False, unit_diagonal=False: _np_triangular_solve(
                 a, b, left_side=True, lower=lower, transpose_a=trans in (1, "T"), unit_diagonal=unit_diagonal),
             args_maker=first_dominant, dtypes=F, tol=LINALG_TOL,
             cases=case_triples((((3, 3), (3,)), (), {"lower": True}), (((3, 3), (3, 2)), (), {"trans": 1}),
                                (((4, 4), (4, 2)), (), {"trans": "T", "lower": True, "unit_diagonal": True}))),
    OpRecord(name="scipy.linalg.cho_solve", path=_A + "cho_solve", ref=_np_cho_solve, args_maker=spd, dtypes=F,
             tol=LINALG_TOL, cases=case_triples((((3, 3), (3, 3)), (), {}), (((3, 3), (3, 3)), (), {"lower": True}))),
    OpRecord(name="scipy.linalg.lu", path=_A + "scipy_lu_k", ref=_np_scipy_lu, args_maker=dominant, dtypes=F,
             tol=LINALG_TOL, cases=case_triples((((3, 3),), (), {"k": 1}), (((4, 3),), (), {"k": 2}),
                                                (((3, 4),), (), {"k": 0}))),
    OpRecord(name="scipy.linalg.lu_factor", path=_A + "lu_factor_k",
             ref=_keep_dtype(lambda a, k=0: _np_getrf(a)[k]), args_maker=lambda r, s, d: [
                 r.uniform(-1, 1, size=tuple(x)).astype(d) for x in s], dtypes=F, tol=LINALG_TOL,
             cases=case_triples((((4, 4),), (), {"k": 0}),)),
    OpRecord(name="scipy.linalg.lu_solve", path=_A + "lu_solve",
             ref=lambda a, b, trans=0: np.linalg.solve(a.T if trans else a, b), args_maker=first_dominant,
             dtypes=F, tol=LINALG_TOL,
             cases=case_triples((((4, 4), (4,)), (), {}), (((4, 4), (4, 2)), (), {"trans": 1}))),
    OpRecord(name="scipy.linalg.expm", ref=_np_expm, args_maker=small_norm, dtypes=F,
             tol={"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10)},
             cases=case_triples((((3, 3),), (), {}), (((4, 4),), (), {}), (((1, 1),), (), {}))),
)
