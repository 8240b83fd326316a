"""Operator-table records for linear algebra on complex64 / complex128
matrices (the complex rows of `jax.lax.linalg` and `jnp.linalg`; a record
named `lax.linalg.qr[complex]` runs `lax.linalg.qr` on complex inputs, its
real rows are the `linalg` module's) and for the nonsymmetric eigenproblem
on every inexact dtype: `lax.linalg.eig`, `jnp.linalg.eig` / `eigvals`,
`lax.linalg.hessenberg`, `jax.scipy.linalg.hessenberg` and `jnp.roots`.

Where a decomposition is unique (Cholesky, LU, QR with LAPACK's real `R`
diagonal, Hessenberg reduction as `gehrd`) the factors compare with
NumPy/SciPy directly; eigen- and singular vectors compare through
phase-invariant products (projectors, reconstructions) and eigenvalues of
nonsymmetric matrices as sorted sets. Gradients on complex inputs are in
tests/test_complex_linalg.py (the table's grad check runs real dtypes).
"""
import types

import numpy as np
import scipy.linalg as sla

import microjax_rs
from microjax_rs import lax
import microjax_rs.numpy as jnp
import microjax_rs.scipy.linalg as jsl

from ._record import OpErr, OpRecord, case_triples, default_int_out
from .linalg import _A as _REAL, _i32, _np_lu, _np_triangular_solve

C = ("complex64", "complex128")
INEXACT = ("float32", "float64", "complex64", "complex128")
TOL = {"complex64": (3e-4, 3e-4), "complex128": (1e-9, 1e-9), "float32": (3e-4, 3e-4),
       "float64": (1e-9, 1e-9)}
EXACT = {}


# ----------------------------------------------------------------- arg makers


def _c(rng, shape):
    return rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)


def _values(rng, shape, dtype):
    return _c(rng, shape) if np.dtype(dtype).kind == "c" else rng.uniform(-1, 1, shape)


def hpd(rng, shapes, dtype):
    """Hermitian positive definite matrices."""
    out = []
    for s in shapes:
        x = _c(rng, tuple(s))
        out.append((x @ np.conj(np.swapaxes(x, -1, -2)) + s[-1] * np.eye(s[-1])).astype(dtype))
    return out


def dominant(rng, shapes, dtype):
    """Uniform complex entries plus 3 on the diagonal (vectors stay uniform)."""
    out = []
    for s in shapes:
        x = _values(rng, tuple(s), dtype)
        if len(s) >= 2:
            x = x + 3.0 * np.eye(s[-2], s[-1])
        out.append(x.astype(dtype))
    return out


def general(rng, shapes, dtype):
    """Uniform entries: distinct eigenvalues (almost surely), some complex."""
    return [_values(rng, tuple(s), dtype).astype(dtype) for s in shapes]


def first_dominant(rng, shapes, dtype):
    return dominant(rng, shapes[:1], dtype) + general(rng, shapes[1:], dtype)


# ----------------------------------------------------------------- helpers


def _complex_out(dt, x64):
    return np.dtype("complex128") if (np.dtype(dt) in (np.float64, np.complex128) and x64) else np.dtype("complex64")


def _real_out(dt, x64):
    return np.dtype("float64") if (np.dtype(dt) in (np.float64, np.complex128) and x64) else np.dtype("float32")


def _same_out(dt, x64):
    return _complex_out(dt, x64) if np.dtype(dt).kind == "c" else _real_out(dt, x64)


def _adj_np(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _sort_np(w):
    """Eigenvalues in a canonical order: by real part, then imaginary part
    (rounded, so conjugate pairs tie on the real part)."""
    w = np.asarray(w)
    keys = (np.round(w.imag, 4), np.round(w.real, 4))
    idx = np.lexsort(keys, axis=-1)
    return np.take_along_axis(w, idx, axis=-1)


def _sort_jnp(w):
    idx = jnp.lexsort((jnp.round(jnp.imag(w), 4), jnp.round(jnp.real(w), 4)), axis=-1)
    return jnp.take_along_axis(w, idx, axis=-1)


def _np_eig_check(a, k=0):
    """k=0: the right eigen-equation rebuilt, `V diag(w) V⁻¹` (= a);
    k=1: the left one, `Vl⁻ᴴ diag(w) Vlᴴ` (= a); k=2: the column norms (ones)."""
    a = np.asarray(a).astype(np.complex128)
    if k == 2:
        return np.ones(a.shape[:-2] + (2 * a.shape[-1],))
    return a


def _np_gehrd(a, k=0):
    a = np.asarray(a)
    fn = sla.lapack.zgehrd if a.dtype.kind == "c" else sla.lapack.dgehrd
    h, tau, _ = fn(a)
    return h if k == 0 else tau[:a.shape[-1] - 1]


def _np_hessenberg(a, k=0):
    h, q = sla.hessenberg(np.asarray(a), calc_q=True)
    return (h, q)[k]


# ----------------------------------------------------------------- adapters


def _adapters():
    L = lax.linalg

    def adj(x):
        return jnp.conj(jnp.swapaxes(x, -1, -2))

    def eigh_projectors(x):
        """`v_j v_jᴴ` stacked over j (phase-invariant)."""
        v = L.eigh(x)[0]
        return jnp.einsum("...ij,...kj->...jik", v, jnp.conj(v))

    def svd_s(x):
        return L.svd(x, compute_uv=False)

    def svd_rebuild(x):
        u, s, vt = L.svd(x, full_matrices=False)
        return (u * s[..., None, :].astype(u.dtype)) @ vt

    def eig_w(x, left=True, right=True):
        return _sort_jnp(L.eig(x, compute_left_eigenvectors=left, compute_right_eigenvectors=right)[0])

    def eig_check(x, k=0):
        w, vl, vr = L.eig(x)
        if k == 2:
            return jnp.concatenate([jnp.linalg.norm(vl, axis=-2), jnp.linalg.norm(vr, axis=-2)], axis=-1)
        v = vr if k == 0 else jnp.linalg.inv(adj(vl))
        vinv = jnp.linalg.inv(vr) if k == 0 else adj(vl)
        return (v * w[..., None, :]) @ vinv

    def jnp_eig_check(x):
        w, v = jnp.linalg.eig(x)
        return (v * w[..., None, :]) @ jnp.linalg.inv(v)

    def eigvals_sorted(x):
        return _sort_jnp(jnp.linalg.eigvals(x))

    def roots_sorted(p):
        # strip_zeros=False traces (the table also runs it under jit and vmap); the
        # leading coefficient is nonzero, so no root is dropped
        return _sort_jnp(jnp.roots(p, strip_zeros=False))

    def hessenberg_k(x, k=0):
        return L.hessenberg(x)[k]

    def scipy_hessenberg_k(x, k=0):
        return jsl.hessenberg(x, calc_q=True)[k]

    def schur_check(x, k=0, scipy=False):
        """k=0: `Z T Zᴴ` (= x); k=1: T's strict lower triangle (zeros); k=2: `Zᴴ Z`."""
        t, z = jsl.schur(x, output="complex") if scipy else L.schur(x)
        if k == 0:
            return (z @ t) @ adj(z)
        if k == 1:
            return jnp.tril(t, -1)
        return adj(z) @ z

    def funm_exp(x):
        return jsl.funm(x, jnp.exp)

    def rsf2csf_k(t, z, k=0):
        return jsl.rsf2csf(t, z)[k]

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if callable(v)})


microjax_rs._complex_linalg_table_adapters = _adapters()
_A = "_complex_linalg_table_adapters."
# The adapters that pick one output of a real-or-complex function (lu, qr,
# eigh, slogdet, triangular_solve) are the real table's.


def _np_eigh_projectors(x):
    _, v = np.linalg.eigh(x)
    return np.einsum("...ij,...kj->...jik", v, np.conj(v))


def _np_svd_rebuild(x):
    return np.asarray(x)


def _np_schur_check(x, k=0, scipy=False):
    x = np.asarray(x).astype(np.complex128)
    if k == 0:
        return x
    if k == 1:
        return np.zeros_like(x)
    return np.broadcast_to(np.eye(x.shape[-1]), x.shape).astype(np.complex128)


def real_schur_pair(rng, shapes, dtype):
    """A real Schur form `(T, Z)` of a uniform real matrix (SciPy's `gees`)."""
    s = tuple(shapes[0])
    mats = rng.uniform(-1, 1, s).reshape((-1,) + s[-2:])
    pairs = [sla.schur(m, output="real") for m in mats]
    return [np.stack([p[k] for p in pairs]).reshape(s).astype(dtype) for k in (0, 1)]


def _np_rsf2csf(t, z, k=0):
    t, z = np.asarray(t, np.float64), np.asarray(z, np.float64)
    lead = t.shape[:-2]
    outs = [sla.rsf2csf(a, b)[k] for a, b in zip(t.reshape((-1,) + t.shape[-2:]), z.reshape((-1,) + z.shape[-2:]))]
    return np.stack(outs).reshape(lead + t.shape[-2:])


def _sq_err(name, shape_msg, type_msg):
    return (OpErr((np.ones((2, 3), np.float32),), {}, ValueError, shape_msg),
            OpErr((np.ones((3, 3), np.int32),), {}, TypeError, type_msg))


_SQ = case_triples((((3, 3),), (), {}), (((2, 4, 4),), (), {}), (((1, 1),), (), {}))
_RECT = case_triples((((3, 3),), (), {}), (((4, 2),), (), {}), (((2, 5),), (), {}), (((2, 3, 4),), (), {}))
_EIG_SQ = case_triples((((4, 4),), (), {}), (((2, 3, 3),), (), {}), (((1, 1),), (), {}))

RECORDS = (
    # -- jax.lax.linalg on complex matrices
    OpRecord(name="lax.linalg.cholesky[complex]", path="lax.linalg.cholesky", ref=np.linalg.cholesky,
             args_maker=hpd, dtypes=C, cases=_SQ, tol=TOL, out_dtype=_same_out),
    OpRecord(name="lax.linalg.triangular_solve[complex]", path=_REAL + "triangular_solve", ref=_np_triangular_solve,
             args_maker=first_dominant, dtypes=C, tol=TOL, out_dtype=_same_out,
             cases=case_triples(
                 (((3, 3), (3, 2)), (), {"left_side": True, "lower": True}),
                 (((3, 3), (2, 3)), (), {"left_side": False, "lower": False, "conjugate_a": True,
                                         "transpose_a": True}),
                 (((40, 40), (40, 2)), (), {"left_side": True, "lower": False, "transpose_a": True,
                                            "conjugate_a": True}),
                 (((2, 4, 4), (2, 4, 3)), (), {"left_side": True, "lower": True, "transpose_a": True}),
             )),
    OpRecord(name="lax.linalg.lu[complex]", path=_REAL + "lu_k", ref=_np_lu, args_maker=general, dtypes=C,
             tol=TOL, out_dtype=_same_out,
             cases=case_triples((((4, 4),), (), {}), (((4, 3),), (), {}), (((3, 4),), (), {}),
                                (((2, 3, 3),), (), {}))),
    OpRecord(name="lax.linalg.lu[complex][pivots]", path=_REAL + "lu_k", ref=_np_lu, args_maker=general, dtypes=C,
             tol=EXACT, out_dtype=_i32, differentiable=False,
             cases=case_triples((((5, 5),), (), {"k": 1}), (((2, 5, 3),), (), {"k": 2}))),
    OpRecord(name="lax.linalg.qr[complex]", path=_REAL + "qr_k",
             ref=lambda x, k=0, full_matrices=False: np.linalg.qr(
                 x, mode="complete" if full_matrices else "reduced")[k],
             args_maker=general, dtypes=C, tol=TOL, out_dtype=_same_out,
             cases=case_triples((((4, 3),), (), {"k": 0}), (((4, 3),), (), {"k": 1}), (((3, 5),), (), {"k": 1}),
                                (((2, 3, 3),), (), {"k": 0}), (((4, 2),), (), {"k": 0, "full_matrices": True}))),
    OpRecord(name="lax.linalg.eigh[complex][w]", path=_REAL + "eigh_w", ref=np.linalg.eigvalsh, args_maker=hpd,
             dtypes=C, tol=TOL, out_dtype=_real_out, cases=_SQ),
    OpRecord(name="lax.linalg.eigh[complex][projectors]", path=_A + "eigh_projectors", ref=_np_eigh_projectors,
             args_maker=hpd, dtypes=C, tol=TOL, out_dtype=_same_out,
             cases=case_triples((((3, 3),), (), {}), (((2, 4, 4),), (), {}))),
    OpRecord(name="lax.linalg.svd[complex]", path=_A + "svd_s", ref=lambda x: np.linalg.svd(x, compute_uv=False),
             args_maker=general, dtypes=C, tol=TOL, out_dtype=_real_out, cases=_RECT),
    OpRecord(name="lax.linalg.svd[complex][rebuild]", path=_A + "svd_rebuild", ref=_np_svd_rebuild,
             args_maker=general, dtypes=C, tol=TOL, out_dtype=_same_out, cases=_RECT),
    # -- jax.numpy.linalg on complex matrices
    OpRecord(name="numpy.linalg.solve[complex]", path="numpy.linalg.solve", ref=np.linalg.solve,
             args_maker=first_dominant, dtypes=C, tol=TOL, out_dtype=_same_out,
             cases=case_triples((((3, 3), (3,)), (), {}), (((2, 4, 4), (2, 4, 1)), (), {}))),
    OpRecord(name="numpy.linalg.inv[complex]", path="numpy.linalg.inv", ref=np.linalg.inv, args_maker=dominant,
             dtypes=C, tol=TOL, out_dtype=_same_out, cases=_SQ),
    OpRecord(name="numpy.linalg.det[complex]", path="numpy.linalg.det", ref=np.linalg.det, args_maker=dominant,
             dtypes=C, tol=TOL, out_dtype=_same_out, cases=_SQ),
    OpRecord(name="numpy.linalg.slogdet[complex]", path=_REAL + "slogdet_k",
             ref=lambda a, k=0: np.linalg.slogdet(a)[k], args_maker=dominant, dtypes=C, tol=TOL,
             out_dtype=lambda dt, x64: _same_out(dt, x64),
             cases=case_triples((((3, 3),), (), {"k": 0}), (((2, 4, 4),), (), {"k": 0}))),
    OpRecord(name="numpy.linalg.slogdet[complex][logabsdet]", path=_REAL + "slogdet_k",
             ref=lambda a, k=1: np.linalg.slogdet(a)[k], args_maker=dominant, dtypes=C, tol=TOL,
             out_dtype=_real_out, cases=case_triples((((3, 3),), (), {"k": 1}), (((2, 4, 4),), (), {"k": 1}))),
    OpRecord(name="numpy.linalg.cholesky[complex]", path="numpy.linalg.cholesky", ref=np.linalg.cholesky,
             args_maker=hpd, dtypes=C, tol=TOL, out_dtype=_same_out, cases=_SQ),
    OpRecord(name="numpy.linalg.qr[complex]", path=_REAL + "jnp_qr_k",
             ref=lambda a, k=0, mode="reduced": np.linalg.qr(a, mode=mode)[k], args_maker=general, dtypes=C,
             tol=TOL, out_dtype=_same_out,
             cases=case_triples((((4, 3),), (), {"k": 0}), (((4, 3),), (), {"k": 1}),
                                (((3, 3),), (), {"mode": "complete"}))),
    OpRecord(name="numpy.linalg.eigvalsh[complex]", path="numpy.linalg.eigvalsh", ref=np.linalg.eigvalsh,
             args_maker=hpd, dtypes=C, tol=TOL, out_dtype=_real_out, cases=_SQ),
    OpRecord(name="numpy.linalg.svdvals[complex]", path="numpy.linalg.svdvals",
             ref=lambda x: np.linalg.svd(x, compute_uv=False), args_maker=general, dtypes=C, tol=TOL,
             out_dtype=_real_out, cases=_RECT),
    OpRecord(name="numpy.linalg.pinv[complex]", path="numpy.linalg.pinv", ref=np.linalg.pinv, args_maker=dominant,
             dtypes=C, tol=TOL, out_dtype=_same_out, cases=_RECT),
    OpRecord(name="numpy.linalg.norm[complex][svd]", path="numpy.linalg.norm", ref=np.linalg.norm,
             args_maker=dominant, dtypes=C, tol=TOL, out_dtype=_real_out,
             cases=case_triples((((3, 4),), (2,), {}), (((3, 4),), ("nuc",), {}), (((4, 3),), (-2,), {}))),
    OpRecord(name="numpy.linalg.matrix_rank[complex]", path="numpy.linalg.matrix_rank",
             ref=np.linalg.matrix_rank, args_maker=dominant, dtypes=C, tol=EXACT, out_dtype=default_int_out,
             differentiable=False, cases=_RECT),
    # -- the nonsymmetric eigenproblem (every inexact dtype)
    OpRecord(name="lax.linalg.eig", path=_A + "eig_w", ref=lambda x, **kw: _sort_np(np.linalg.eigvals(x)),
             args_maker=general, dtypes=INEXACT, tol=TOL, out_dtype=_complex_out, differentiable=False,
             cases=case_triples((((4, 4),), (), {}), (((2, 3, 3),), (), {"left": False}),
                                (((3, 3),), (), {"left": False, "right": False}), (((1, 1),), (), {})),
             errors=_sq_err("eig", "must be a square matrix", "eig does not accept dtype int32")),
    OpRecord(name="lax.linalg.eig[vectors]", path=_A + "eig_check", ref=_np_eig_check, args_maker=general,
             dtypes=INEXACT, tol=TOL, out_dtype=_complex_out, differentiable=False,
             cases=case_triples((((4, 4),), (), {"k": 0}), (((2, 3, 3),), (), {"k": 1}), (((4, 4),), (), {"k": 1}))),
    OpRecord(name="lax.linalg.eig[norms]", path=_A + "eig_check", ref=_np_eig_check, args_maker=general,
             dtypes=INEXACT, tol=TOL, out_dtype=_real_out, differentiable=False,
             cases=case_triples((((4, 4),), (), {"k": 2}), (((2, 3, 3),), (), {"k": 2}))),
    OpRecord(name="numpy.linalg.eig", path=_A + "jnp_eig_check", ref=lambda x: np.asarray(x).astype(complex),
             args_maker=general, dtypes=INEXACT, tol=TOL, out_dtype=_complex_out, differentiable=False,
             cases=_EIG_SQ,
             errors=(OpErr((np.ones((2, 3), np.float32),), {}, ValueError, "square"),)),
    OpRecord(name="numpy.linalg.eigvals", path=_A + "eigvals_sorted",
             ref=lambda x: _sort_np(np.linalg.eigvals(x)), args_maker=general, dtypes=INEXACT, tol=TOL,
             out_dtype=_complex_out, differentiable=False, cases=_EIG_SQ,
             errors=(OpErr((np.ones((2, 3), np.float32),), {}, ValueError, "square"),)),
    OpRecord(name="numpy.roots", path=_A + "roots_sorted", ref=lambda p: _sort_np(np.roots(p)),
             args_maker=lambda rng, shapes, dt: [np.concatenate([[1.0 + 0j if np.dtype(dt).kind == "c" else 1.0],
                                                                 _values(rng, (s[0] - 1,), dt)]).astype(dt)
                                                 for s in shapes],
             dtypes=INEXACT, tol=TOL, out_dtype=_complex_out, differentiable=False,
             cases=case_triples((((4,),), (), {}), (((2,),), (), {}), (((6,),), (), {})),
             errors=()),
    OpRecord(name="lax.linalg.hessenberg", path=_A + "hessenberg_k", ref=_np_gehrd, args_maker=general,
             dtypes=INEXACT, tol=TOL, out_dtype=_same_out, differentiable=False,
             cases=case_triples((((4, 4),), (), {"k": 0}), (((5, 5),), (), {"k": 1}), (((1, 1),), (), {"k": 0})),
             errors=_sq_err("hessenberg", "must have shape [..., n, n]", "hessenberg does not accept dtype int32")),
    OpRecord(name="lax.linalg.schur", path=_A + "schur_check", ref=_np_schur_check, args_maker=general, dtypes=C,
             tol=TOL, out_dtype=_complex_out, differentiable=False,
             cases=case_triples((((4, 4),), (), {"k": 0}), (((2, 5, 5),), (), {"k": 1}), (((4, 4),), (), {"k": 2}),
                                (((1, 1),), (), {"k": 0})),
             errors=_sq_err("schur", "must be a square matrix", "schur does not accept dtype int32")),
    OpRecord(name="scipy.linalg.schur", path=_A + "schur_check", ref=_np_schur_check, args_maker=general,
             dtypes=INEXACT, tol=TOL, out_dtype=_complex_out, differentiable=False,
             cases=case_triples((((4, 4),), (), {"k": 0, "scipy": True}), (((5, 5),), (), {"k": 1, "scipy": True}),
                                (((3, 3),), (), {"k": 2, "scipy": True}))),
    OpRecord(name="scipy.linalg.sqrtm", ref=lambda x: sla.sqrtm(x).astype(complex), args_maker=dominant,
             dtypes=INEXACT, tol=TOL, out_dtype=_complex_out, differentiable=False,
             cases=case_triples((((3, 3),), (), {}), (((4, 4),), (), {}), (((1, 1),), (), {})),
             errors=(OpErr((np.ones((2, 3), np.float32),), {}, ValueError, "square"),)),
    OpRecord(name="scipy.linalg.funm", path=_A + "funm_exp", ref=lambda x: sla.expm(x).astype(complex),
             args_maker=general, dtypes=INEXACT, tol=TOL, out_dtype=_complex_out, differentiable=False,
             cases=case_triples((((3, 3),), (), {}), (((4, 4),), (), {}), (((1, 1),), (), {}))),
    OpRecord(name="scipy.linalg.rsf2csf", path=_A + "rsf2csf_k", ref=_np_rsf2csf, args_maker=real_schur_pair,
             dtypes=("float32", "float64"), tol=TOL, out_dtype=_complex_out, differentiable=False,
             cases=case_triples((((4, 4), (4, 4)), (), {"k": 0}), (((5, 5), (5, 5)), (), {"k": 1}),
                                (((3, 3), (3, 3)), (), {"k": 0}))),
    OpRecord(name="scipy.linalg.hessenberg", path=_A + "scipy_hessenberg_k", ref=_np_hessenberg,
             args_maker=general, dtypes=INEXACT, tol=TOL, out_dtype=_same_out, differentiable=False,
             cases=case_triples((((4, 4),), (), {"k": 0}), (((5, 5),), (), {"k": 1}), (((3, 3),), (), {"k": 1}))),
)
