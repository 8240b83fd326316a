"""`jax.lax`: one wrapper per primitive, plus the `*_p` primitive objects.

lax functions follow jax.lax: operands of binary ops must share a dtype and
shape (rank-0 operands combine with arrays); Python scalars are weakly typed
and take the dtype of the array they meet."""
import builtins as _builtins
import enum as _enum
from typing import NamedTuple as _NamedTuple

import numpy as np

from .._src.key_arrays import keys_through as _keys_through
from .. import core, dtypes
from . import _docs
from ..core import Primitive, ArrayImpl, Tracer

_P = {name: Primitive(name) for name in core._BUILTIN_NAMES}
globals().update({f"{name.replace('-', '_')}_p": p for name, p in _P.items()})  # scatter-add -> scatter_add_p

_SCALARS = (bool, int, float, _builtins.complex)


def _dtype_name_of(x):
    if isinstance(x, (ArrayImpl, Tracer)):
        return x.dtype_name if type(x) is ArrayImpl else x.aval.dtype_name
    return core.get_aval(x).dtype_name


def _weak_like(x, like):
    """A Python scalar as a weak rank-0 value of `like`'s dtype."""
    if type(x) in _SCALARS:
        return core.to_array(x, dtypes.np_dtype(_dtype_name_of(like)), weak_type=True)
    return x


def _binary(p):
    def op(x, y):
        if type(x) in _SCALARS and type(y) not in _SCALARS:
            x = _weak_like(x, y)
        elif type(y) in _SCALARS and type(x) not in _SCALARS:
            y = _weak_like(y, x)
        return p.bind(x, y)

    op.__name__ = p.name
    op.__doc__ = _docs.elementwise(p.name)
    return op


def _unary(p):
    def op(x):
        return p.bind(x)

    op.__name__ = p.name
    op.__doc__ = _docs.elementwise(p.name)
    return op


class AccuracyMode(_enum.Enum):
    """`lax.AccuracyMode`: how precisely a transcendental function should be
    computed (`accuracy=`). microjax_rs's kernels are within 2 ulp on every
    device, so both modes give the same result."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """`lax.Tolerance(atol, rtol, ulps)`: an error bound asked of a
    transcendental function (`accuracy=`); non-negative. The kernels are
    within 2 ulp whatever is asked."""

    def __init__(self, atol=0.0, rtol=0.0, ulps=0):
        if atol < 0 or rtol < 0 or ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps

    def __repr__(self):
        return f"Tolerance(atol={self.atol}, rtol={self.rtol}, ulps={self.ulps})"


def _with_accuracy(p):
    """A unary transcendental taking JAX's keyword `accuracy=` (None, an
    `AccuracyMode` or a `Tolerance`; anything else raises as JAX). It does
    not change the result: see `AccuracyMode`."""
    def op(x, *, accuracy=None):
        if accuracy is not None and not isinstance(accuracy, (AccuracyMode, Tolerance)):
            raise NotImplementedError(f"Accuracy {accuracy} not supported")
        return p.bind(x)

    op.__name__ = p.name
    op.__doc__ = _docs.elementwise(p.name, accuracy=True)
    return op


add, sub, mul, div, max, min, pow = (_binary(_P[n]) for n in ("add", "sub", "mul", "div", "max", "min", "pow"))
eq, ne, lt, le, gt, ge = (_binary(_P[n]) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
neg, abs, sign = (_unary(_P[n]) for n in ("neg", "abs", "sign"))
exp, log, sin, cos, tanh, logistic, sqrt = (
    _with_accuracy(_P[n]) for n in ("exp", "log", "sin", "cos", "tanh", "logistic", "sqrt"))


(floor, ceil, is_finite, asin, acos, atan, sinh, cosh, asinh, acosh,
 atanh, erf, erf_inv, lgamma, digamma, square, population_count, clz) = (
    _unary(_P[n]) for n in (
        "floor", "ceil", "is_finite", "asin", "acos", "atan",
        "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erf_inv", "lgamma",
        "digamma", "square", "population_count", "clz",
    )
)
exp2, log1p, expm1, tan, rsqrt, cbrt = (
    _with_accuracy(_P[n]) for n in ("exp2", "log1p", "expm1", "tan", "rsqrt", "cbrt"))
bitwise_not = _unary(_P["not"])
bitwise_not.__name__ = "bitwise_not"
(rem, atan2, nextafter, polygamma, bitwise_and, bitwise_or, bitwise_xor, shift_left,
 shift_right_logical, shift_right_arithmetic) = (
    _binary(_P[n]) for n in (
        "rem", "atan2", "nextafter", "polygamma", "and", "or", "xor", "shift_left",
        "shift_right_logical", "shift_right_arithmetic",
    )
)
for _f, _n in ((bitwise_and, "bitwise_and"), (bitwise_or, "bitwise_or"), (bitwise_xor, "bitwise_xor")):
    _f.__name__ = _n


def _nary(p, name):
    """A wrapper binding `p` to floating operands of one dtype: Python scalars
    take the dtype of the first array operand (weakly typed)."""
    def op(*args):
        like = next((a for a in args if type(a) not in _SCALARS), None)
        if like is not None:
            args = tuple(_weak_like(a, like) for a in args)
        return p.bind(*args)

    op.__name__ = name
    op.__doc__ = f"Elementwise `{p.name}` (jax.lax.{name})."
    return op


igamma, igammac, igamma_grad_a, random_gamma_grad, zeta = (
    _nary(_P[n], n) for n in ("igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "zeta"))
bessel_i0e, bessel_i1e, erfc = (_unary(_P[n]) for n in ("bessel_i0e", "bessel_i1e", "erfc"))
betainc = _nary(_P["regularized_incomplete_beta"], "betainc")
igamma.__doc__ = "The regularized lower incomplete gamma function P(a, x) (jax.lax.igamma)."
igammac.__doc__ = "The regularized upper incomplete gamma function Q(a, x) (jax.lax.igammac)."
igamma_grad_a.__doc__ = "The derivative of igamma(a, x) with respect to a (jax.lax.igamma_grad_a)."
random_gamma_grad.__doc__ = ("The derivative of a Gamma(a, 1) sample x with respect to a at a fixed "
                             "quantile (jax.lax.random_gamma_grad).")
zeta.__doc__ = "The Hurwitz zeta function zeta(x, q) (jax.lax.zeta)."
betainc.__doc__ = ("The regularized incomplete beta function I_x(a, b) (jax.lax.betainc; primitive "
                   "`regularized_incomplete_beta`).")


from ._precision import (  # noqa: E402
    DotAlgorithm, DotAlgorithmPreset, DotDimensionNumbers, Precision, PrecisionLike,
    canonicalize_precision as _canonicalize_precision,
)


def broadcast_shapes(*shapes):
    """The NumPy-broadcast shape of `shapes` (tuples of ints); ValueError if
    they are incompatible."""
    shapes = [tuple(int(d) for d in s) for s in shapes]
    if not shapes:
        return ()
    nd = _builtins.max(len(s) for s in shapes)
    out = []
    for i in range(-nd, 0):
        sizes = {s[i] for s in shapes if len(s) >= -i}
        non1 = sizes - {1}
        if len(non1) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
        out.append(non1.pop() if non1 else 1)
    return tuple(out)


class RoundingMethod:
    """`lax.RoundingMethod`: halfway cases away from zero (0) or to even (1)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """Elementwise rounding of a floating-point ``x`` to an integer value: ties away from zero
    (``RoundingMethod.AWAY_FROM_ZERO``, the default) or to even (``RoundingMethod.TO_NEAREST_EVEN``).
    """
    return round_p.bind(x, rounding_method=int(rounding_method))


def clamp(min, x, max):
    """`min(max(x, min), max)` elementwise; `min`/`max` are scalars or shaped like `x`."""
    if type(min) in _SCALARS:
        min = _weak_like(min, x)
    if type(max) in _SCALARS:
        max = _weak_like(max, x)
    return clamp_p.bind(min, x, max)


def integer_pow(x, y):
    """Elementwise ``x ** y`` for a static Python integer ``y`` (by repeated multiplication; a
    negative ``y`` takes the reciprocal). The result keeps ``x``'s dtype.
    """
    return integer_pow_p.bind(x, y=int(y))


def select_n(which, *cases):
    """`cases[which]` elementwise; a bool `which` picks `cases[1]` where True."""
    if not cases:
        raise ValueError("select_n requires at least one case")
    return select_n_p.bind(which, *cases)


@_keys_through
def select(pred, on_true, on_false):
    """Elementwise ``on_true`` where the boolean ``pred`` holds, else ``on_false``. The operands
    have one shape and dtype (``pred`` may also be a scalar); lax does not broadcast.
    """
    return select_n(pred, on_false, on_true)


def _aval(x):
    return core.get_aval(x)


def _arr(x):
    """NumPy inputs become arrays, so identity shortcuts still return jax Arrays."""
    if isinstance(x, (np.ndarray, np.generic)):
        return core.to_array(x)
    return x


def convert_element_type(operand, new_dtype):
    """``operand`` converted to ``new_dtype`` (a strongly typed result). Float to integer
    conversion truncates towards zero; 64-bit dtypes become 32-bit unless x64 is enabled.
    """
    try:
        operand = _arr(operand)
        name = dtypes.canonical_name(dtypes.dtype_name(new_dtype))
        aval = _aval(operand)
    except TypeError:
        _raise_if_key_conversion(operand, new_dtype)
        raise
    if type(operand) in _SCALARS:
        return core.to_array(operand, dtypes.np_dtype(name), weak_type=False)
    if aval.dtype_name == name and not aval.weak_type:
        return operand
    return convert_element_type_p.bind(operand, new_dtype=dtypes.np_dtype(name), weak_type=False)


def _raise_if_key_conversion(operand, new_dtype):
    """JAX's ValueError for converting typed PRNG keys to or from another dtype."""
    def extended(d):
        return isinstance(getattr(d, "type", None), type) and issubclass(d.type, dtypes.extended)

    src = getattr(operand, "dtype", None)
    if extended(src) or extended(new_dtype):
        src = src if extended(src) else dtypes.canonical_name(dtypes.dtype_name(src or _aval(_arr(operand)).dtype))
        dst = new_dtype if extended(new_dtype) else dtypes.canonical_name(dtypes.dtype_name(new_dtype))
        raise ValueError(f"Cannot convert_element_type from {src} to {dst}") from None


def _convert_keep_weak(operand, name, weak):
    """Conversion used by jnp promotion: keeps the weak bit JAX computes."""
    operand = _arr(operand)
    aval = _aval(operand)
    if aval.dtype_name == name and aval.weak_type == weak:
        return operand
    return convert_element_type_p.bind(operand, new_dtype=dtypes.np_dtype(name), weak_type=weak)


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """Broadcast ``operand`` to ``shape``, placing its axis ``i`` at result axis ``broadcast_dimensions[i]``.

    Args:
      operand: the array.
      shape: the result shape.
      broadcast_dimensions: one result axis per operand axis, increasing; each operand axis has
        size 1 or the size of its result axis.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> from microjax_rs import lax
      >>> lax.broadcast_in_dim(jnp.array([1, 2]), (2, 3), (0,))
      Array([[1, 1, 1],
             [2, 2, 2]], dtype=int32)
    """
    operand = _arr(operand)
    shape = tuple(int(d) for d in shape)
    bdims = tuple(int(d) for d in broadcast_dimensions)
    aval = _aval(operand)
    if aval.shape == shape and bdims == tuple(range(len(shape))):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=bdims)


def broadcast(operand, sizes):
    """Adds leading dimensions `sizes`."""
    aval = _aval(operand)
    sizes = tuple(sizes)
    n = len(sizes)
    return broadcast_in_dim(operand, sizes + aval.shape, tuple(range(n, n + aval.ndim)))


def broadcast_to_rank(x, rank):
    """``x`` with leading size-1 axes added until it has ``rank`` dimensions (unchanged if it has
    that many already).
    """
    aval = _aval(x)
    if aval.ndim >= rank:
        return _arr(x)  # an Array even when no axis is added, as JAX
    return broadcast(x, (1,) * (rank - aval.ndim))


def reshape(operand, new_sizes, dimensions=None):
    """``operand`` reshaped to ``new_sizes`` (row-major order; no -1 inference, unlike jnp.reshape).
    ``dimensions``, if given, is a permutation applied to ``operand`` first.
    """
    operand = _arr(operand)
    new_sizes = tuple(int(d) for d in new_sizes)
    if dimensions is not None:
        operand = transpose(operand, dimensions)
    if _aval(operand).shape == new_sizes:
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=None)


def transpose(operand, permutation):
    """``operand`` with its axes permuted: result axis ``i`` is operand axis ``permutation[i]``."""
    operand = _arr(operand)
    permutation = tuple(int(d) for d in permutation)
    if permutation == tuple(range(len(permutation))) and len(permutation) == _aval(operand).ndim:
        return operand
    return transpose_p.bind(operand, permutation=permutation)


def squeeze(array, dimensions):
    """``array`` without the axes in ``dimensions``, each of which must have size 1 (ValueError otherwise)."""
    array = _arr(array)
    shape = _aval(array).shape
    dims = tuple(sorted(_canon_axis(int(d), len(shape)) for d in dimensions))
    if any(d >= len(shape) or shape[d] != 1 for d in dims):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                         f"one, got shape={shape} and dimensions={tuple(dimensions)}")
    if not dims:
        return array
    return squeeze_p.bind(array, dimensions=dims)


def expand_dims(array, dimensions):
    """``array`` with size-1 axes inserted at the positions ``dimensions`` (counted in the result)."""
    aval = _aval(array)
    ndim_out = aval.ndim + len(dimensions)
    for d in dimensions:
        if not -ndim_out <= d < ndim_out:
            raise ValueError(f"axis {d} is out of bounds for array of dimension {ndim_out}")
    dims = sorted(d % ndim_out for d in dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in expand_dims: {tuple(dimensions)}")
    shape = list(aval.shape)
    for d in dims:
        shape.insert(d, 1)
    return reshape(array, shape)


def _axes(axes):
    return tuple(int(a) for a in axes)


def _reducer(p, what):
    """`lax.reduce_<what>(operand, axes)`: binds the reduction primitive `p` over `axes`."""
    def op(operand, axes):
        return p.bind(operand, axes=_axes(axes))

    op.__name__ = p.name
    op.__doc__ = f"The {what} of `operand` over `axes` (jax.lax.{p.name})."
    return op


reduce_sum, reduce_max, reduce_prod, reduce_min, reduce_and, reduce_or = (
    _reducer(_P[f"reduce_{n}"], what) for n, what in (
        ("sum", "sum"), ("max", "maximum"), ("prod", "product"), ("min", "minimum"),
        ("and", "logical / bitwise and"), ("or", "logical / bitwise or")))
reduce_xor = _reducer(_P["reduce_xor"], "bitwise xor (parity for bool)")


def mulhi(x, y, /):
    """The high half of the double-width product of two integers of one dtype
    (`(x * y) >> bits`, signed or unsigned as the dtype)."""
    if type(x) in _SCALARS and type(y) not in _SCALARS:
        x = _weak_like(x, y)
    elif type(y) in _SCALARS and type(x) not in _SCALARS:
        y = _weak_like(y, x)
    return mulhi_p.bind(_arr(x), _arr(y))


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """Rounds floats to `exponent_bits` exponent and `mantissa_bits` mantissa
    bits (ties to even; overflow to infinity, underflow to signed zero),
    keeping the operand's dtype: e.g. (5, 10) rounds as float16, (8, 7) as
    bfloat16."""
    if type(operand) in _SCALARS:
        operand = core.to_array(float(operand), np.dtype("float32"), weak_type=True)
    e, m = int(exponent_bits), int(mantissa_bits)
    if e < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {e}")
    if m < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got {m}")
    operand = _arr(operand)
    name = _aval(operand).dtype_name
    if not dtypes.is_float_name(name):
        raise TypeError(f"reduce_precision does not accept dtype {name}. Accepted dtypes are subtypes "
                        "of floating.")
    return reduce_precision_p.bind(operand, exponent_bits=e, mantissa_bits=m)


def optimization_barrier(operand, /):
    """The identity on a pytree of arrays (one `optimization_barrier`
    equation over its leaves): a fence XLA does not move computations
    across; here it only passes the values through."""
    from ..tree_util import tree_flatten, tree_unflatten

    leaves, tree = tree_flatten(operand)
    leaves = [core.to_array(x, weak_type=True) if type(x) in _SCALARS else _arr(x) for x in leaves]
    if not leaves:
        return operand
    return tree_unflatten(tree, list(optimization_barrier_p.bind(*leaves)))


def _index_dtype(index_dtype):
    return dtypes.np_dtype(dtypes.canonical_name(dtypes.dtype_name(index_dtype)))


def argmax(operand, axis, index_dtype):
    """Index of the first maximum along `axis` (a NaN counts as the maximum)."""
    return argmax_p.bind(operand, axes=(int(axis),), index_dtype=_index_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """Index of the first minimum along `axis` (a NaN counts as the minimum)."""
    return argmin_p.bind(operand, axes=(int(axis),), index_dtype=_index_dtype(index_dtype))


def _cumulative(p):
    def op(operand, axis=0, reverse=False):
        axis = int(axis)
        ndim = _aval(operand).ndim
        if ndim and axis < 0:
            axis += ndim
        return p.bind(operand, axis=axis, reverse=bool(reverse))

    op.__name__ = p.name
    op.__doc__ = f"Inclusive scan `{p.name}` along `axis` (jax.lax.{p.name})."
    return op


cumsum, cumprod, cummax, cummin, cumlogsumexp = (
    _cumulative(_P[n]) for n in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")
)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """General tensor contraction of ``lhs`` and ``rhs``.

    Args:
      lhs, rhs: arrays of one dtype.
      dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``, each a
        sequence of axes. Contracting axes are summed over; batch axes are paired.
      precision: checked and accepted; it does not change the CPU result.
      preferred_element_type: the result (accumulation) dtype.

    Returns:
      An array with the batch axes first, then ``lhs``'s free axes, then ``rhs``'s free axes.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> from microjax_rs import lax
      >>> a = jnp.array([[1.0, 2.0], [3.0, 4.0]])
      >>> lax.dot_general(a, a, (((1,), (0,)), ((), ())))
      Array([[ 7., 10.],
             [15., 22.]], dtype=float32)
    """
    _canonicalize_precision(precision)
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((_axes(lc), _axes(rc)), (_axes(lb), _axes(rb)))
    pref = None if preferred_element_type is None else dtypes.np_dtype(
        dtypes.canonical_name(dtypes.dtype_name(preferred_element_type)))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=None,
                              preferred_element_type=pref)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix products of rank ≤ 2 operands (jax.lax.dot)."""
    _canonicalize_precision(precision)
    la, ra = _aval(lhs), _aval(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise TypeError(f"lax.dot requires rank 1 or 2 operands, got {la.shape} and {ra.shape}")
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())),
                       preferred_element_type=preferred_element_type)


def iota(dtype, size):
    """The 1-D array ``[0, 1, ..., size - 1]`` of the given dtype."""
    return broadcasted_iota(dtype, (int(size),), 0)


def broadcasted_iota(dtype, shape, dimension):
    """An array of ``shape`` and ``dtype`` whose value at each position is its index along ``dimension``."""
    name = dtypes.canonical_name(dtypes.dtype_name(dtype))
    return iota_p.bind(dtype=dtypes.np_dtype(name), shape=tuple(int(d) for d in shape),
                       dimension=int(dimension))


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with the scalar ``fill_value``, converted to ``dtype`` if given
    (else the value's own dtype, weakly typed for Python scalars).
    """
    shape = tuple(int(d) for d in shape)
    if dtype is None:
        x = fill_value if not isinstance(fill_value, _SCALARS) else core.to_array(fill_value)
        weak = _aval(x).weak_type
    else:
        x = convert_element_type(fill_value, dtype)
        weak = False
    x = core.to_array(x) if isinstance(x, (np.ndarray, np.generic)) else x
    if not isinstance(x, Tracer) and type(x) is ArrayImpl and x.ndim == 0:
        from .. import _core

        return _core.full(shape, x.item(), x.dtype_name, weak)
    return broadcast(x, shape)


def stop_gradient(x):
    """Identity on values with a zero derivative, applied to every float
    leaf of the pytree `x` (other leaves pass through, as in JAX)."""
    from ..tree_util import _tree_map_data

    def stop(v):
        if dtypes.is_float_name(_dtype_name_of(v)):
            return stop_gradient_p.bind(v)
        return _arr(v)

    return _tree_map_data(stop, x)


# ----------------------------------------------------------------- slicing


def _canon_axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < (ndim or 1):
        raise ValueError(f"axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim if ndim else axis


def rev(operand, dimensions):
    """Reverses `operand` along each axis in `dimensions`."""
    operand = _arr(operand)
    dims = tuple(int(d) for d in dimensions)
    if not dims:
        return operand
    return rev_p.bind(operand, dimensions=dims)


def slice(operand, start_indices, limit_indices, strides=None):
    """Static slice `operand[start:limit:stride]` per axis."""
    operand = _arr(operand)
    start = tuple(int(i) for i in start_indices)
    limit = tuple(int(i) for i in limit_indices)
    strides = None if strides is None else tuple(int(s) for s in strides)
    if strides is not None and all(s == 1 for s in strides):
        strides = None
    if strides is None and all(s == 0 for s in start) and limit == _aval(operand).shape:
        return operand
    return slice_p.bind(operand, start_indices=start, limit_indices=limit, strides=strides)


@_keys_through
def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """`slice` along one axis; `None` and negative bounds as in Python."""
    shape = _aval(operand).shape
    axis = _canon_axis(axis, len(shape))
    size = shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = size if limit_index is None else int(limit_index)
    if start < 0:
        start += size
    if limit < 0:
        limit += size
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """Element `index` (static) along `axis`, keeping the axis unless `keepdims=False`."""
    shape = _aval(operand).shape
    axis = _canon_axis(axis, len(shape))
    index = int(index)
    if index < 0:
        index += shape[axis]
    if not 0 <= index < shape[axis]:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {shape[axis]}")
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def concatenate(operands, dimension):
    """Joins `operands` (equal dtypes and shapes but along `dimension`)."""
    operands = [_arr(o) for o in operands]
    if not operands:
        raise ValueError("concatenate requires at least one operand")
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


def pad(operand, padding_value, padding_config):
    """Pads with `padding_value`: `(lo, hi, interior)` per axis; negative lo/hi crop."""
    operand = _arr(operand)
    if type(padding_value) in _SCALARS:
        padding_value = _weak_like(padding_value, operand)
    config = tuple((int(lo), int(hi), int(interior)) for lo, hi, interior in padding_config)
    return pad_p.bind(operand, _arr(padding_value), padding_config=config)


def _start_indices(start_indices, shape):
    """Scalar start indices, negative ones counted from the end (as JAX)."""
    start_indices = tuple(start_indices)
    if len(start_indices) != len(shape):
        raise TypeError(f"expected {len(shape)} start indices for an operand of shape {shape}, "
                        f"got {len(start_indices)}")
    out = []
    for i, d in zip(start_indices, shape):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            i = int(i)
            out.append(core.to_array(i + d if i < 0 else i, np.dtype("int32"), weak_type=False))
            continue
        i = _arr(i)
        if _aval(i).ndim != 0:
            raise TypeError(f"start indices must be scalars, got shape {_aval(i).shape}")
        out.append(select_n(lt(i, _weak_like(0, i)), i, add(i, _weak_like(d, i))))
    return out


def dynamic_slice(operand, start_indices, slice_sizes):
    """A `slice_sizes` window at run-time start indices (clamped into range)."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    idx = _start_indices(start_indices, shape)
    return dynamic_slice_p.bind(operand, *idx, slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(operand, update, start_indices):
    """`update` written into `operand` at run-time start indices (clamped)."""
    operand = _arr(operand)
    update = _arr(update)
    idx = _start_indices(start_indices, _aval(operand).shape)
    return dynamic_update_slice_p.bind(operand, update, *idx)


@_keys_through
def dynamic_slice_in_dim(operand, start_index, slice_size=1, axis=0):
    """The slice of ``operand`` of length ``slice_size`` along ``axis`` starting at the (possibly
    traced) ``start_index``; the start is clamped so that the slice stays in bounds.
    """
    shape = _aval(operand).shape
    axis = _canon_axis(axis, len(shape))
    starts = [0] * len(shape)
    sizes = list(shape)
    starts[axis], sizes[axis] = start_index, int(slice_size)
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """The entry at the (possibly traced) ``index`` along ``axis`` of ``operand``, keeping that axis
    as size 1 when ``keepdims`` is true; the index is clamped into range.
    """
    shape = _aval(operand).shape
    axis = _canon_axis(axis, len(shape))
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


@_keys_through
def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """``operand`` with ``update`` written into it along ``axis`` from the (possibly traced)
    ``start_index`` (clamped so that the update fits).
    """
    shape = _aval(operand).shape
    axis = _canon_axis(axis, len(shape))
    starts = [0] * len(shape)
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand, update, index, axis):
    """``operand`` with ``update`` written at the (possibly traced) ``index`` along ``axis``; ``update``
    may lack that axis.
    """
    shape = _aval(operand).shape
    axis = _canon_axis(axis, len(shape))
    if _aval(update).ndim == len(shape) - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis)



# -- sorting and bit reinterpretation -------------------------------------------------

def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sorts one array, or several of one shape together by their first `num_keys`
    (lexicographically); floats in JAX's order (-0.0 == 0.0, NaNs last)."""
    single = not isinstance(operand, (tuple, list))
    operands = [_arr(x) for x in ((operand,) if single else operand)]
    if not operands:
        raise ValueError("lax.sort needs at least one operand")
    num_keys = int(num_keys)
    if num_keys < 1:
        raise ValueError(f"num_keys={num_keys} must be >= 1")
    if single and num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    if num_keys > len(operands):
        raise ValueError(f"num_keys={num_keys} must be <= number of operands ({len(operands)})")
    dimension = _canon_axis(dimension, _aval(operands[0]).ndim)
    outs = sort_p.bind(*operands, dimension=dimension, is_stable=bool(is_stable), num_keys=num_keys)
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts `keys` along `dimension` and permutes `values` the same way."""
    k, v = sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


def top_k(operand, k, *, axis=-1):
    """The `k` largest entries along `axis` (default: the last) and their int32
    indices (largest first; ties: lower index first). The primitive works on
    the last axis; another `axis` is moved there and back."""
    k = int(k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    operand = _arr(operand)
    ndim = _aval(operand).ndim
    if ndim == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got ()")
    axis = _canon_axis(axis, ndim)
    if axis == ndim - 1:
        values, indices = top_k_p.bind(operand, k=k)
        return values, indices
    perm = [d for d in range(ndim) if d != axis] + [axis]
    inv = [perm.index(d) for d in range(ndim)]
    values, indices = top_k_p.bind(transpose(operand, perm), k=k)
    return transpose(values, inv), transpose(indices, inv)


def bitcast_convert_type(operand, new_dtype):
    """Reinterprets the bits of each element as `new_dtype` (a narrower type adds a
    trailing axis of the width ratio; a wider one consumes it)."""
    name = dtypes.canonical_name(dtypes.dtype_name(new_dtype))
    return bitcast_convert_type_p.bind(_arr(operand), new_dtype=dtypes.np_dtype(name))

# -- gather / scatter -------------------------------------------------------------


class GatherDimensionNumbers(_NamedTuple):
    """`lax.GatherDimensionNumbers`; the index vector is the last axis of the indices."""

    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(_NamedTuple):
    """`lax.ScatterDimensionNumbers`; the index vector is the last axis of the indices."""

    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(_enum.IntEnum):
    """How out-of-bounds start indices behave (JAX's enum values).

    CLIP clamps start indices so the whole window is in bounds; FILL_OR_DROP
    fills a gathered window that is not entirely in bounds with the fill value
    and drops such a scattered window; PROMISE_IN_BOUNDS clamps gathers and
    drops scatters."""

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f'Unknown gather mode "{s}"')


def _dims_tuple(cls, dimension_numbers):
    if not isinstance(dimension_numbers, tuple) or len(dimension_numbers) not in (3, 5):
        raise TypeError(f"dimension_numbers must be a {cls.__name__}, got {dimension_numbers!r}")
    return cls(*(tuple(int(d) for d in part) for part in dimension_numbers))


def _static_fill(fill_value):
    if fill_value is None:
        return None
    if isinstance(fill_value, (ArrayImpl, np.ndarray, np.generic)) and np.ndim(fill_value) == 0:
        fill_value = np.asarray(fill_value).item()
    if isinstance(fill_value, Tracer) or not isinstance(fill_value, _SCALARS):
        raise TypeError(f"fill_value must be a concrete scalar, got {fill_value!r}")
    return fill_value


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather; see `GatherDimensionNumbers` and `GatherScatterMode`."""
    dnums = _dims_tuple(GatherDimensionNumbers, dimension_numbers)
    return gather_p.bind(
        _arr(operand), _arr(start_indices), dimension_numbers=dnums,
        slice_sizes=tuple(int(s) for s in slice_sizes),
        indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
        mode=GatherScatterMode.from_any(mode), fill_value=_static_fill(fill_value))


def _scatter(p):
    def op(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        operand = _arr(operand)
        if type(updates) in _SCALARS:
            updates = _weak_like(updates, operand)
        dnums = _dims_tuple(ScatterDimensionNumbers, dimension_numbers)
        return p.bind(
            operand, _arr(scatter_indices), _arr(updates), dimension_numbers=dnums,
            indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
            mode=GatherScatterMode.from_any(mode), update_jaxpr=None, update_consts=())

    op.__name__ = p.name.replace("-", "_")
    op.__doc__ = f"XLA's scatter combining updates with `{p.name}` (jax.lax.{op.__name__})."
    return op


def _gather_scatter_params(dims_cls):
    def view(params):
        params["dimension_numbers"] = dims_cls(*params["dimension_numbers"])
        params["mode"] = GatherScatterMode(params["mode"])
        return params

    return view


core._PARAM_VIEWS["gather"] = _gather_scatter_params(GatherDimensionNumbers)
for _name in ("scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max"):
    core._PARAM_VIEWS[_name] = _gather_scatter_params(ScatterDimensionNumbers)

scatter = _scatter(scatter_p)
scatter_add = _scatter(scatter_add_p)
scatter_mul = _scatter(scatter_mul_p)
scatter_min = _scatter(scatter_min_p)
scatter_max = _scatter(scatter_max_p)


from ._control_flow import (  # noqa: E402
    associative_scan, cond, cond_p, fori_loop, map, platform_dependent, scan, scan_p, switch, while_loop,
    while_p,
)

from ._convolution import (  # noqa: E402
    ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated,
    conv_with_general_padding, padtype_to_pads, reduce_window,
)

from ._conv_shapes import (  # noqa: E402
    ConvGeneralDilatedDimensionNumbers, conv_general_dilated_local, conv_general_dilated_patches,
    conv_general_permutations, conv_general_shape_tuple, conv_shape_tuple, conv_transpose,
    conv_transpose_shape_tuple, reduce_window_shape_tuple,
)
from ._ann import approx_max_k, approx_min_k  # noqa: E402
from ._fft import FftType, fft  # noqa: E402
from ._solves import custom_linear_solve, custom_root  # noqa: E402
from ._reductions import reduce  # noqa: E402
from ._complex import complex, conj, imag, real  # noqa: E402
from ._rng import RandomAlgorithm, rng_bit_generator  # noqa: E402
from ._array_ops import (  # noqa: E402
    batch_matmul, broadcast_like, collapse, dtype, empty, full_like, index_take, ragged_dot, ragged_dot_general,
    RaggedDotDimensionNumbers, reciprocal, scatter_apply,
    scatter_sub, shape_as_value, split, stack, tile, unstack,
)
from ._primitive_objects import (  # noqa: E402
    approx_top_k_p, copy_p, eq_to_p, le_to_p, linear_solve_p, lt_to_p, reduce_p, reduce_window_p,
    rng_bit_generator_p, rng_uniform, rng_uniform_p, scatter_sub_p, select_and_scatter_p, split_p, stack_p,
    stage, stage_p, tile_p, unstack_p,
)
from ._tokens import (  # noqa: E402
    after_all, after_all_p, composite, create_token, create_token_p, dce_sink, dce_sink_p,
)

__all__ = [n for n in dir() if not n.startswith("_")]


from .parallel import (  # noqa: E402
    all_gather,
    all_gather_p,
    all_to_all,
    all_to_all_p,
    axis_index,
    axis_size,
    axis_index_p,
    pmax,
    pmax_p,
    pmean,
    pmin,
    pmin_p,
    ppermute,
    ppermute_p,
    psum,
    psum_p,
    psum_scatter,
    pshuffle,
    pswapaxes,
    reduce_scatter_p,
    with_sharding_constraint,
)

from . import linalg  # noqa: E402,F401
