"""Operator-table records for `jax.nn` beyond the activations of `jnp`:
dot_product_attention (masks, causal, sequence lengths, local windows,
grouped-query heads), softmax / log_softmax / logmeanexp with `where=` and
axis tuples, and standardize's algorithms. NumPy references in float64."""
import numpy as np

import microjax_rs.nn  # noqa: F401  (records resolve names on it)

from ._record import ACCUM_TOL, Case, F32_F64, OpErr, OpRecord, TRANSCENDENTAL_TOL, _rand

# Attention's softmax runs in float32 whatever the input dtype (as JAX's).
ATTN_TOL = {"float32": (2e-5, 2e-5), "float64": (2e-5, 2e-5)}


# ----------------------------------------------------------------- references


def _np_softmax(x, axis, where=None):
    x = np.asarray(x, np.float64)
    if where is not None:
        x = np.where(where, x, -np.inf)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    if where is not None:
        e = np.where(where, e, 0.0)
    return e / np.sum(e, axis=axis, keepdims=True)


def _np_attention(q, k, v, bias=None, mask=None, scale=None, is_causal=False, q_len=None, kv_len=None,
                  local_window_size=None):
    """Attention over (B, T, N, H) / (B, S, K, H): each query head n reads key head n // (N // K)."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    if q.ndim == 3:  # one batch: rank 4 with a leading axis of 1, dropped again at the end
        out = _np_attention(q[None], k[None], v[None], bias, mask, scale, is_causal, q_len, kv_len, local_window_size)
        return out[0]
    B, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    G = N // K
    scale = 1.0 / np.sqrt(H) if scale is None else scale
    kk = np.repeat(k, G, axis=2)
    vv = np.repeat(v, G, axis=2)
    logits = np.einsum("btnh,bsnh->bnts", q, kk) * scale
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= mask
    tpos, spos = np.arange(T)[:, None], np.arange(S)[None, :]
    if is_causal:
        keep &= tpos >= spos
    if local_window_size is not None:
        w = local_window_size
        left, right = (w, w) if isinstance(w, int) else w
        keep &= (tpos <= spos + left) & (tpos >= spos - right)
    if q_len is not None:
        keep &= (np.arange(T)[None, :] < q_len[:, None])[:, None, :, None]
    if kv_len is not None:
        keep &= (np.arange(S)[None, :] < kv_len[:, None])[:, None, None, :]
    logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
    probs = _np_softmax(logits, -1)
    out = np.einsum("bnts,bsnh->btnh", probs, vv)
    if q_len is not None:
        out = out * (np.arange(T)[None, :] < q_len[:, None])[:, :, None, None]
    return out


# ----------------------------------------------------------------- arg makers


def _attention_inputs(with_bias=False, with_mask=False, with_lengths=False):
    """q, k, v (and bias / bool mask / int32 sequence lengths) from the case's shapes."""

    def make(rng, shapes, dtype):
        out = [_rand(rng, s, dtype, -1.5, 1.5) for s in shapes[:3]]
        rest = list(shapes[3:])
        if with_bias:
            out.append(_rand(rng, rest.pop(0), dtype, -1, 1))
        if with_mask:
            m = rng.random(size=tuple(rest.pop(0))) > 0.3
            m[..., 0] = True  # every query keeps a key
            out.append(m)
        if with_lengths:
            B, T, S = shapes[0][0], shapes[0][1], shapes[1][1]
            out.append(rng.integers(1, T + 1, size=B).astype(np.int32))
            out.append(rng.integers(1, S + 1, size=B).astype(np.int32))
        return out

    return make


def _masked(base_lo=-3.0, base_hi=3.0):
    """x (the dtype under test) and a bool `where` mask of the second shape, each row keeping one entry."""

    def make(rng, shapes, dtype):
        x = _rand(rng, shapes[0], dtype, base_lo, base_hi)
        w = rng.random(size=tuple(shapes[1])) > 0.4
        if w.ndim:
            w[..., 0] = True
        return [x, w]

    return make


def _uniform(rng, shapes, dtype):
    return [_rand(rng, s, dtype, -3, 3) for s in shapes]


def _kw(fn_name, *names):
    """Adapter: positional arrays after x become the keyword arguments `names`."""

    def adapt(fn):
        def call(x, *arrays, **kwargs):
            return fn(x, *kwargs.pop("_args", ()), **dict(zip(names, arrays)), **kwargs)

        call.__name__ = fn_name
        return call

    return adapt


_QKV = ((2, 3, 2, 3), (2, 4, 1, 3), (2, 4, 1, 3))  # B=2, T=3, S=4, N=2 query heads, K=1 key head, H=3
_QKV_MHA = ((2, 3, 2, 3), (2, 4, 2, 3), (2, 4, 2, 3))

_ATTN_NOTE = ("gradients: tests/test_nn_functions.py (the softmax runs in float32 as in JAX, below the float64 "
              "finite-difference resolution)")

RECORDS = (
    OpRecord(name="nn.dot_product_attention", ref=_np_attention, args_maker=_attention_inputs(),
             dtypes=F32_F64, tol=ATTN_TOL, differentiable=False, notes=_ATTN_NOTE,
             cases=(Case(_QKV), Case(_QKV_MHA), Case(_QKV, (), {"is_causal": True}),
                    Case(_QKV, (), {"scale": 0.3}), Case(_QKV_MHA, (), {"local_window_size": (1, 0)}),
                    Case(((3, 2, 3), (4, 2, 3), (4, 2, 3)))),
             errors=(OpErr((np.ones((1, 2, 3, 4), np.float32), np.ones((1, 2, 2, 4), np.float32),
                            np.ones((1, 2, 2, 4), np.float32)), {}, ValueError,
                           "The number of query heads must be a multiple of key/value heads"),
                     OpErr((np.ones((1, 2, 2, 4), np.float32), np.ones((1, 2, 2, 4), np.float32),
                            np.ones((1, 2, 2, 4), np.float16)), {}, ValueError, "value dtype should be"),
                     OpErr((np.ones((1, 2, 2, 4), np.float32), np.ones((1, 2, 2, 4), np.float32),
                            np.ones((1, 2, 2, 4), np.float32)), {"implementation": "foo"}, ValueError,
                           "Unsupported implementation option"))),
    OpRecord(name="nn.dot_product_attention[bias,mask]", path="nn.dot_product_attention",
             ref=lambda q, k, v, b, m: _np_attention(q, k, v, bias=b, mask=m),
             args_maker=_attention_inputs(with_bias=True, with_mask=True), dtypes=F32_F64, tol=ATTN_TOL,
             differentiable=False, notes=_ATTN_NOTE,
             cases=(Case(_QKV + ((1, 2, 3, 4), (2, 1, 3, 4))), Case(_QKV_MHA + ((2, 1, 1, 4), (1, 2, 3, 4))))),
    OpRecord(name="nn.dot_product_attention[seq_lengths]", path="nn.dot_product_attention",
             ref=lambda q, k, v, ql, kl, **kw: _np_attention(q, k, v, q_len=ql, kv_len=kl, **kw),
             args_maker=_attention_inputs(with_lengths=True), dtypes=F32_F64, tol=ATTN_TOL,
             differentiable=False, notes=_ATTN_NOTE,
             adapt=lambda fn: (lambda q, k, v, ql, kl, **kw: fn(q, k, v, query_seq_lengths=ql,
                                                                key_value_seq_lengths=kl, **kw)),
             cases=(Case(_QKV), Case(_QKV_MHA, (), {"is_causal": True}))),
    OpRecord(name="nn.softmax[where]", path="nn.softmax",
             ref=lambda x, w, axis=-1: np.where(w, _np_softmax(x, axis, w), 0.0),
             args_maker=_masked(), dtypes=F32_F64, tol=TRANSCENDENTAL_TOL, adapt=_kw("softmax", "where"),
             cases=(Case(((3, 4), (3, 4))), Case(((3, 4), (4,))), Case(((2, 3, 4), (2, 3, 4)), (), {"axis": (1, 2)}))),
    OpRecord(name="nn.softmax[axes]", path="nn.softmax", ref=lambda x, axis: _np_softmax(x, axis),
             args_maker=_uniform, dtypes=F32_F64, tol=TRANSCENDENTAL_TOL,
             cases=(Case(((2, 3, 4),), (), {"axis": (0, 2)}), Case(((2, 3),), (), {"axis": None}))),
    OpRecord(name="nn.log_softmax[axes]", path="nn.log_softmax",
             ref=lambda x, axis: np.log(_np_softmax(x, axis)),
             args_maker=_uniform, dtypes=F32_F64, tol=TRANSCENDENTAL_TOL,
             cases=(Case(((2, 3, 4),), (), {"axis": (0, 2)}), Case(((2, 3),), (), {"axis": None}))),
    OpRecord(name="nn.log_softmax[where]", path="nn.log_softmax",
             ref=lambda x, w, axis=-1: np.where(w, np.log(np.where(w, _np_softmax(x, axis, w), 1.0)), -np.inf),
             args_maker=_masked(), dtypes=F32_F64, tol=TRANSCENDENTAL_TOL, adapt=_kw("log_softmax", "where"),
             cases=(Case(((3, 4), (3, 4))), Case(((3, 4), (4,))))),
    OpRecord(name="nn.logmeanexp[where]", path="nn.logmeanexp",
             ref=lambda x, w, axis=None, keepdims=False: np.log(
                 np.sum(np.where(w, np.exp(x), 0.0), axis=axis, keepdims=keepdims)
                 / np.sum(np.broadcast_to(w, x.shape), axis=axis, keepdims=keepdims)),
             args_maker=_masked(), dtypes=F32_F64, tol=TRANSCENDENTAL_TOL, adapt=_kw("logmeanexp", "where"),
             cases=(Case(((3, 4), (3, 4)), (), {"axis": 1}), Case(((3, 4), (3, 4)), (), {"axis": (0, 1)}),
                    Case(((3, 4), (4,)), (), {"axis": 1, "keepdims": True}))),
    OpRecord(name="nn.standardize[stable]", path="nn.standardize",
             ref=lambda x, axis=-1, algorithm="stable": (x - x.mean(axis, keepdims=True))
             / np.sqrt(x.var(axis, keepdims=True) + 1e-5),
             args_maker=_uniform, dtypes=F32_F64, tol=ACCUM_TOL,
             cases=(Case(((3, 4),), (), {"algorithm": "stable"}),
                    Case(((3, 4),), (), {"axis": 0, "algorithm": "stable"}),
                    Case(((2, 3, 4),), (), {"axis": (1, 2), "algorithm": "fast"})),
             errors=(OpErr((np.ones((3, 4), np.float32),), {"algorithm": "slow"}, ValueError,
                           "Unknown algorithm 'slow'"),)),
)
