"""Products and convolutions: `dot`, `matmul`, `vdot`, `inner`, `outer`,
`tensordot`, `kron`, `cross`, `vecdot`, and 1-d `convolve`/`correlate`."""
import builtins

import numpy as _np

from ... import dtypes as _dt, lax
from .indexing import _slice_axis
from .lax_numpy import moveaxis, ravel, reshape, stack, zeros_like
from .reductions import sum
from .ufuncs import multiply, subtract
from .vectorize import vectorize
from .util import (_arr, _aval, _broadcast_shapes, _broadcast_to_shape, _canon_axis, _promote_dtypes,
                   _promote_dtypes_inexact, _rev)


def dot(a, b, precision=None, preferred_element_type=None):
    """Dot product of ``a`` and ``b``: a product for scalars, the inner product for 1-D arrays, matrix
    multiplication for 2-D, and for N-D a sum over the last axis of ``a`` and the second-to-last
    of ``b``.

    ``precision`` and ``preferred_element_type`` are passed to ``lax.dot_general``.
    """
    lax._canonicalize_precision(precision)
    a, b = _promote_dtypes(a, b)
    la, lb = _aval(a), _aval(b)
    if la.ndim == 0 or lb.ndim == 0:
        return multiply(a, b)
    rc = 0 if lb.ndim == 1 else lb.ndim - 2
    return lax.dot_general(a, b, (((la.ndim - 1,), (rc,)), ((), ())),
                           preferred_element_type=preferred_element_type)


def matmul(a, b, precision=None, preferred_element_type=None):
    """Matrix product of ``a`` and ``b`` (the ``@`` operator), with broadcasting over leading batch
    axes; 1-D operands are treated as a row / column vector and that axis is dropped.

    Args:
      a, b: arrays; their dtypes are promoted.
      precision: passed to ``lax.dot_general`` (accepted; CPU results are exact float32).
      preferred_element_type: the accumulation / result dtype.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> jnp.matmul(jnp.array([[1.0, 2.0], [3.0, 4.0]]), jnp.array([1.0, 1.0]))
      Array([3., 7.], dtype=float32)
    """
    lax._canonicalize_precision(precision)
    a, b = _promote_dtypes(a, b)
    la, lb = _aval(a), _aval(b)
    if la.ndim == 0 or lb.ndim == 0:
        raise ValueError("matmul: input operand does not have enough dimensions (rank-0 operand)")
    a_vec, b_vec = la.ndim == 1, lb.ndim == 1
    if a_vec or b_vec:
        # A vector operand contracts directly (one dot_general, as JAX emits):
        # its axis against the other's contracting axis, no batch axes.
        ca = 0 if a_vec else la.ndim - 1
        cb = 0 if b_vec else lb.ndim - 2
        if la.shape[ca] != lb.shape[cb]:
            raise TypeError(f"matmul: contracting dimensions differ: {la.shape} @ {lb.shape}")
        return lax.dot_general(a, b, (((ca,), (cb,)), ((), ())),
                               preferred_element_type=preferred_element_type)
    sa, sb = la.shape, lb.shape
    if sa[-1] != sb[-2]:
        raise TypeError(f"matmul: contracting dimensions differ: {la.shape} @ {lb.shape}")
    if lb.ndim == 2:
        # A matrix on the right: one product without batch axes, as JAX emits.
        return lax.dot_general(a, b, (((la.ndim - 1,), (0,)), ((), ())),
                               preferred_element_type=preferred_element_type)
    if la.ndim == 2:
        # A matrix on the left: (m, batch..., n), then the batch axes lead.
        out = lax.dot_general(a, b, (((1,), (lb.ndim - 2,)), ((), ())),
                              preferred_element_type=preferred_element_type)
        nb = lb.ndim - 2
        return lax.transpose(out, tuple(range(1, nb + 1)) + (0, nb + 1))
    batch = _broadcast_shapes(sa[:-2], sb[:-2])
    a = _broadcast_to_shape(a, batch + sa[-2:])
    b = _broadcast_to_shape(b, batch + sb[-2:])
    nb = len(batch)
    return lax.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                           preferred_element_type=preferred_element_type)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened ``a`` and ``b`` (the first operand conjugated for complex inputs)."""
    from .ufuncs import conjugate

    return dot(conjugate(ravel(a)), ravel(b), precision=precision, preferred_element_type=preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Inner product: the sum over the last axes of ``a`` and ``b`` (a product for scalars)."""
    a, b = _promote_dtypes(a, b)
    la, lb = _aval(a), _aval(b)
    if la.ndim == 0 or lb.ndim == 0:
        return multiply(a, b)
    return lax.dot_general(a, b, (((la.ndim - 1,), (lb.ndim - 1,)), ((), ())),
                           preferred_element_type=preferred_element_type)


def outer(a, b):
    """Outer product of the flattened ``a`` and ``b``: ``out[i, j] = a[i] * b[j]``."""
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def tensordot(a, b, axes=2, precision=None, preferred_element_type=None):
    """Tensor contraction of ``a`` and ``b`` over ``axes``: an int N (the last N axes of ``a`` with
    the first N of ``b``) or a pair of axis sequences.
    """
    lax._canonicalize_precision(precision)
    a, b = _promote_dtypes(_arr(a), _arr(b))
    la, lb = _aval(a), _aval(b)
    if isinstance(axes, (int, _np.integer)):
        k = int(axes)
        if k < 0 or k > builtins.min(la.ndim, lb.ndim):
            raise TypeError(f"Number of tensordot axes (axes={k}) exceeds input ranks ({la.shape} and {lb.shape})")
        ca = tuple(range(la.ndim - k, la.ndim))
        cb = tuple(range(k))
    else:
        if len(axes) != 2:
            raise TypeError(f"tensordot requires axes to be an int or a pair of sequences, got {axes}")
        xa, xb = axes
        xa = (xa,) if isinstance(xa, (int, _np.integer)) else tuple(xa)
        xb = (xb,) if isinstance(xb, (int, _np.integer)) else tuple(xb)
        if len(xa) != len(xb):
            raise TypeError(f"tensordot requires axes lists to have equal length, got {axes}")
        ca = tuple(_canon_axis(x, la.ndim) for x in xa)
        cb = tuple(_canon_axis(x, lb.ndim) for x in xb)
    for i, j in zip(ca, cb):
        if la.shape[i] != lb.shape[j]:
            raise TypeError(f"tensordot: shape mismatch along contracted axes: {la.shape} and {lb.shape} "
                            f"(axes {ca} and {cb})")
    return lax.dot_general(a, b, ((ca, cb), ((), ())), preferred_element_type=preferred_element_type)


def kron(a, b):
    """Kronecker product of ``a`` and ``b``: blocks of ``b`` scaled by each element of ``a``."""
    a, b = _promote_dtypes(_arr(a), _arr(b))
    sa, sb = _aval(a).shape, _aval(b).shape
    nd = builtins.max(len(sa), len(sb))
    sa = (1,) * (nd - len(sa)) + sa
    sb = (1,) * (nd - len(sb)) + sb
    a = lax.reshape(a, sa)
    b = lax.reshape(b, sb)
    inter = []
    for x, y in zip(sa, sb):
        inter += [x, y]
    inter = tuple(inter)
    ab = lax.broadcast_in_dim(a, inter, tuple(range(0, 2 * nd, 2)))
    bb = lax.broadcast_in_dim(b, inter, tuple(range(1, 2 * nd, 2)))
    return lax.reshape(lax.mul(ab, bb), tuple(x * y for x, y in zip(sa, sb)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors, giving the scalar z component) along the given
    axes of ``a`` and ``b`` (``axis`` sets all three axes at once).
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _promote_dtypes(_arr(a), _arr(b))
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    na, nb = _aval(a).shape[-1], _aval(b).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")

    def comp(x, i):
        return lax.squeeze(_slice_axis(x, _aval(x).ndim - 1, i, i + 1), (_aval(x).ndim - 1,))

    a0, a1 = comp(a, 0), comp(a, 1)
    b0, b1 = comp(b, 0), comp(b, 1)
    a2 = comp(a, 2) if na == 3 else None
    b2 = comp(b, 2) if nb == 3 else None
    if na == 2 and nb == 2:
        return subtract(multiply(a0, b1), multiply(a1, b0))
    a2 = zeros_like(a0) if a2 is None else a2
    b2 = zeros_like(b0) if b2 is None else b2
    c = stack([subtract(multiply(a1, b2), multiply(a2, b1)),
               subtract(multiply(a2, b0), multiply(a0, b2)),
               subtract(multiply(a0, b1), multiply(a1, b0))], axis=-1)
    return moveaxis(c, -1, axisc)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Vector dot product of ``x1`` and ``x2`` along ``axis`` (default the last), with broadcasting
    over the other axes (the first operand conjugated for complex inputs).
    """
    a, b = _promote_dtypes(_arr(x1), _arr(x2))
    if _dt.is_complex_name(_aval(a).dtype_name):
        a = lax.conj(a)
    a = moveaxis(a, axis, -1)
    b = moveaxis(b, axis, -1)
    # the operands' dtype, as a dot product (sum alone widens int32 to int64 under x64)
    return sum(multiply(a, b), axis=-1, dtype=a.dtype)


# -- convolutions --------------------------------------------------------------

def _conv1d(op, a, v, mode, precision, preferred_element_type):
    """`convolve` / `correlate` of 1-d arrays as one `conv_general_dilated`
    (the longer operand is the lhs; convolve flips the kernel, and a
    correlation whose operands were swapped is reversed)."""
    a, v = _arr(a), _arr(v)
    if _aval(a).ndim != 1 or _aval(v).ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        a, v = _promote_dtypes_inexact(a, v)
    else:
        a, v = _promote_dtypes(a, v)
    if op == "correlate" and _dt.is_complex_name(_aval(v).dtype_name):
        v = lax.conj(v)  # numpy.correlate conjugates its second operand
    na, nv = _aval(a).shape[0], _aval(v).shape[0]
    if na == 0 or nv == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {tuple(_aval(a).shape)} "
                         f"and {tuple(_aval(v).shape)}.")
    reverse_out = False
    if na < nv:
        a, v = v, a
        na, nv = nv, na
        reverse_out = op == "correlate"
    if op == "convolve":
        v = _rev(v, (0,))
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(nv // 2, nv - nv // 2 - 1)]
    elif mode == "full":
        padding = [(nv - 1, nv - 1)]
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = lax.conv_general_dilated(
        lax.reshape(a, (1, 1, na)), lax.reshape(v, (1, 1, nv)), (1,), padding,
        precision=precision, preferred_element_type=preferred_element_type)
    out = lax.reshape(out, (_aval(out).shape[2],))
    return _rev(out, (0,)) if reverse_out else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-d arrays (numpy.convolve)."""
    return _conv1d("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-d arrays (numpy.correlate)."""
    return _conv1d("correlate", a, v, mode, precision, preferred_element_type)


def _matvec_core(m, v):
    return matmul(m, v)


def _vecmat_core(v, m):
    return matmul(v, m)


def matvec(x1, x2, /):
    """Batched matrix-vector product: x1 (..., n, m) with x2 (..., m) gives (..., n)."""
    return vectorize(_matvec_core, signature="(n,m),(m)->(n)")(x1, x2)


def vecmat(x1, x2, /):
    """Batched vector-matrix product: x1 (..., n) with x2 (..., n, m) gives (..., m)."""
    return vectorize(_vecmat_core, signature="(n),(n,m)->(m)")(x1, x2)
