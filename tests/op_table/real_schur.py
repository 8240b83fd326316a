"""Operator-table records for the real Schur form of real matrices:
`lax.linalg.schur` and `jax.scipy.linalg.schur(a, output='real')` on
float32 / float64 (the `[real]` rows; the complex rows are
`complex_linalg`'s).

The real Schur form is unique only up to the eigenvalue order along the
diagonal and the signs of Z's columns, so the records compare invariants:
the reconstruction `Z T Zᵀ` (= the input), T's entries below the first
subdiagonal (zeros), `Zᵀ Z` (= I), and the eigenvalues read off T's 1x1 and
2x2 diagonal blocks (as a sorted set, against `np.linalg.eigvals` of the
input). The 2x2 blocks' standardization (equal diagonal, opposite signs) and
values recorded from JAX 0.10.2 are in tests/test_real_schur.py.
"""
import types

import numpy as np

import microjax_rs
from microjax_rs import lax
import microjax_rs.numpy as jnp
import microjax_rs.scipy.linalg as jsl

from ._record import OpErr, OpRecord, case_triples
from .complex_linalg import _real_out, _sort_jnp, _sort_np

REAL = ("float32", "float64")
TOL = {"float32": (3e-4, 3e-4), "float64": (1e-9, 1e-9)}


def uniform(rng, shapes, dtype):
    """Uniform real entries: conjugate pairs and real eigenvalues mixed."""
    return [rng.uniform(-1, 1, tuple(s)).astype(dtype) for s in shapes]


def block_eigvals(t):
    """The eigenvalues of a real Schur form `t` (`..., n, n`), from its 1x1
    and 2x2 diagonal blocks: `d ± sqrt(b c)` of a block `[d b; c d]`."""
    diag = jnp.diagonal(t, axis1=-2, axis2=-1)
    sub = jnp.concatenate([jnp.diagonal(t, -1, axis1=-2, axis2=-1), jnp.zeros(t.shape[:-2] + (1,), t.dtype)], -1)
    sup = jnp.concatenate([jnp.diagonal(t, 1, axis1=-2, axis2=-1), jnp.zeros(t.shape[:-2] + (1,), t.dtype)], -1)
    prev_sub = jnp.concatenate([jnp.zeros(t.shape[:-2] + (1,), t.dtype), sub[..., :-1]], -1)
    prev_sup = jnp.concatenate([jnp.zeros(t.shape[:-2] + (1,), t.dtype), sup[..., :-1]], -1)
    # the first row of a block takes +, the second -
    im_first = jnp.sqrt(jnp.abs(sub * sup))
    im_second = -jnp.sqrt(jnp.abs(prev_sub * prev_sup))
    im = jnp.where(sub != 0, im_first, jnp.where(prev_sub != 0, im_second, 0))
    return lax.complex(diag, im)


def _adapters():
    def schur_real_check(x, k=0, scipy=False):
        """k=0: `Z T Zᵀ` (= x); k=1: T below its first subdiagonal (zeros);
        k=2: `Zᵀ Z` (= I); k=3: T's eigenvalues, sorted, as `[..., (re, im)]`."""
        t, z = jsl.schur(x, output="real") if scipy else lax.linalg.schur(x)
        zt = jnp.swapaxes(z, -1, -2)
        if k == 0:
            return (z @ t) @ zt
        if k == 1:
            return jnp.tril(t, -2)
        if k == 2:
            return zt @ z
        w = _sort_jnp(block_eigvals(t))
        return jnp.stack([jnp.real(w), jnp.imag(w)], -1)

    return types.SimpleNamespace(schur_real_check=schur_real_check)


microjax_rs._real_schur_table_adapters = _adapters()
_A = "_real_schur_table_adapters."


def _np_schur_real_check(x, k=0, scipy=False):
    x = np.asarray(x, np.float64)
    if k == 0:
        return x
    if k == 1:
        return np.zeros_like(x)
    if k == 2:
        return np.broadcast_to(np.eye(x.shape[-1]), x.shape).copy()
    w = _sort_np(np.linalg.eigvals(x))
    return np.stack([w.real, w.imag], -1)


_TRIPLES = ((((4, 4),), (), {"k": 0}), (((2, 5, 5),), (), {"k": 0}), (((6, 6),), (), {"k": 1}),
            (((3, 5, 5),), (), {"k": 2}), (((5, 5),), (), {"k": 3}), (((2, 6, 6),), (), {"k": 3}),
            (((1, 1),), (), {"k": 0}), (((2, 2),), (), {"k": 3}))
_CASES = case_triples(*_TRIPLES)
_SCIPY_CASES = case_triples(*((shapes, args, {**kw, "scipy": True}) for shapes, args, kw in _TRIPLES))


RECORDS = (
    OpRecord(name="lax.linalg.schur[real]", path=_A + "schur_real_check", ref=_np_schur_real_check,
             args_maker=uniform, dtypes=REAL, tol=TOL, out_dtype=_real_out, differentiable=False, cases=_CASES,
             errors=(OpErr((np.ones((2, 3), np.float32),), {}, ValueError, "must be a square matrix"),
                     OpErr((np.ones((3, 3), np.int32),), {}, TypeError, "schur does not accept dtype int32"))),
    OpRecord(name="scipy.linalg.schur[real]", path=_A + "schur_real_check", ref=_np_schur_real_check,
             args_maker=uniform, dtypes=REAL, tol=TOL, out_dtype=_real_out, differentiable=False,
             cases=_SCIPY_CASES,
             errors=(OpErr((np.ones((3, 3), np.int32),), {"scipy": True}, TypeError,
                           "schur does not accept dtype int32"),)),
)
