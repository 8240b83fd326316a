"""`jax.nn.dot_product_attention`: scaled dot-product attention (the XLA
implementation of JAX: logits in float32 or wider, masks as a large negative
logit, softmax in float32, grouped-query heads)."""
import numpy as _np

from .. import numpy as jnp
from .. import dtypes as _dt
from .._src.numpy.util import _aval


def _ensure_4d(t):
    t = jnp.asarray(t)
    nd = _aval(t).ndim
    if nd < 4:
        t = jnp.reshape(t, (1,) * (4 - nd) + tuple(_aval(t).shape))
    return t


def _check(t, shape, dtype, name):
    if t is None:
        return
    av = _aval(t)
    if av.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {av.ndim}")
    if dtype is not None and _np.dtype(av.dtype_name if av.dtype_name != "bfloat16" else _dt.bfloat16) != \
            _np.dtype(dtype):
        raise ValueError(f"{name} dtype should be {_np.dtype(dtype)}, but got {av.dtype_name}")
    for want, got in zip(shape, av.shape):
        if want != -1 and want != got:
            raise ValueError(f"{name} shape should be {list(shape)}: but got {tuple(av.shape)}")


def _large_negative(dtype_name):
    big = min(float(jnp.finfo(dtype_name).max), float(_np.finfo(_np.float32).max))
    return jnp.asarray(-0.7 * big, dtype=dtype_name)


def _grouped(t, K, G):
    """A (B, N, T, S) bias or mask as (B, K, G, T, S) (N = 1 broadcasts)."""
    if t is None:
        return None
    tB, tN, tT, tS = _aval(t).shape
    if tN == 1:
        return jnp.reshape(t, (tB, 1, 1, tT, tS))
    return jnp.reshape(t, (tB, K, G, tT, tS))


def _combined_mask(T, S, mask, is_causal, q_len, kv_len, window):
    """The boolean mask of the kept logits, broadcastable to (B, K, G, T, S); None: keep all."""
    keep = None

    def both(a, b):
        return b if a is None else jnp.logical_and(a, b)

    if mask is not None:
        keep = both(keep, mask)
    q_pos = jnp.arange(T)[:, None]
    k_pos = jnp.arange(S)[None, :]
    if is_causal:
        keep = both(keep, (q_pos >= k_pos)[None, None, None])
    if window is not None:
        left, right = window
        win = jnp.logical_and(q_pos <= k_pos + left, q_pos >= k_pos - right)
        keep = both(keep, win[None, None, None])
    if q_len is not None:
        keep = both(keep, (jnp.arange(T)[None, :] < q_len[:, None])[:, None, None, :, None])
    if kv_len is not None:
        keep = both(keep, (jnp.arange(S)[None, :] < kv_len[:, None])[:, None, None, None, :])
    return keep


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """softmax(scale * q k^T + bias, masked) v over (batch, seq, heads, head_dim)
    arrays (leading axes added up to rank 4); query heads N a multiple of the
    key/value heads K (grouped-query attention). Only the 'xla' implementation
    (the default) exists here; 'cudnn' raises."""
    out_shape = tuple(_aval(jnp.asarray(query)).shape)
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = _ensure_4d(bias) if bias is not None else None
    mask = _ensure_4d(mask) if mask is not None else None
    if query_seq_lengths is not None:
        query_seq_lengths = jnp.asarray(query_seq_lengths)
    if key_value_seq_lengths is not None:
        key_value_seq_lengths = jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    B, S, K, H = _aval(k).shape
    kdt = _aval(k).dtype_name
    kdt_np = _dt.bfloat16 if kdt == "bfloat16" else kdt
    _check(v, [B, S, K, H], kdt_np, "value")
    _check(q, [B, -1, -1, H], kdt_np, "query")
    _check(mask, [-1] * 4, "bool", "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(query_seq_lengths, [B], "int32", "query_seq_lengths")
    _check(key_value_seq_lengths, [B], "int32", "key_value_seq_lengths")
    _, T, N, _ = _aval(q).shape
    if N % K != 0:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, but got {N} vs {K}")
    if implementation == "cudnn":
        raise RuntimeError("dot_product_attention: the cuDNN implementation is not available in microjax_rs; "
                           "use implementation='xla' or None")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    scale_val = (1.0 / _np.sqrt(H)) if scale is None else scale
    G = N // K
    logits_dt = jnp.promote_types(kdt_np, _np.float32)
    qg = jnp.reshape(q, (B, T, K, G, H)).astype(logits_dt)
    logits = jnp.einsum("btkgh,bskh->bkgts", qg, k.astype(logits_dt))
    logits = logits * jnp.asarray(scale_val, dtype=logits_dt)
    if bias is not None:
        logits = (logits + _grouped(bias, K, G)).astype(logits_dt)
    keep = _combined_mask(T, S, _grouped(mask, K, G), is_causal, query_seq_lengths, key_value_seq_lengths,
                          local_window_size)
    if keep is not None:
        logits = jnp.where(keep, logits, _large_negative(jnp.dtype(logits_dt).name))
    logits32 = logits.astype(_np.float32)
    from . import softmax, logsumexp
    probs = softmax(logits32, axis=-1).astype(kdt_np)
    enc = jnp.einsum("bkgts,bskh->btkgh", probs, v)
    if query_seq_lengths is not None:
        qmask = (jnp.arange(T)[None, :] < query_seq_lengths[:, None])[:, :, None, None, None]
        enc = enc * qmask.astype(enc.dtype)
    enc = jnp.reshape(enc, out_shape)
    if return_residual:
        from .. import lax
        lse = logsumexp(logits32, axis=-1).astype(kdt_np)  # (B, K, G, T)
        lse = jnp.reshape(jnp.transpose(lse, (0, 3, 1, 2)), out_shape[:-1])
        return enc, lax.stop_gradient(lse)
    return enc
