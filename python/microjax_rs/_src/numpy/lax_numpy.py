"""Array construction, shapes and joining: `asarray`, the creation
functions (`zeros`, `arange`, `eye`, ...), reshaping and axis moves,
`concatenate`/`stack`, flips, `tile`, triangles, grids. Nothing here selects
elements (that is `indexing`), so every other jnp module can build on it."""
import builtins

import numpy as _np

from ..key_arrays import keys_through as _keys_through
from ... import _core, core, dtypes as _dt, lax
from ...core import ArrayImpl, Tracer
from .util import (_SCALARS, _arr, _aval, _axes_arg, _broadcast_shapes, _broadcast_to_shape, _canon_axis,
                   _concat, _const, _name, _placed, _promote, _promote_dtypes, _rev, _shape_tuple)


# -- constants -----------------------------------------------------------------

pi, e, inf, nan = _np.pi, _np.e, _np.inf, _np.nan
euler_gamma = 0.5772156649015329  # the Euler-Mascheroni constant (np.euler_gamma)
newaxis = None


# -- array construction --------------------------------------------------------

def from_dlpack(x, /, *, device=None, copy=None):
    """An array from any object with the DLPack protocol (``__dlpack__`` and
    ``__dlpack_device__``: a NumPy array, a PyTorch CPU tensor, ...).

    A compact row-major CPU tensor of a dtype microjax_rs has is shared, not
    copied (as JAX: writing the producer's array afterwards is not
    supported); with x64 off, 64-bit tensors are converted to 32 bits (a
    copy), other layouts are copied, and ``copy=True`` always copies.
    ``device`` may name the CPU. A tensor on another device raises
    ``BufferError``.

    Example:
      >>> import numpy as np
      >>> import microjax_rs.numpy as jnp
      >>> jnp.from_dlpack(np.arange(3, dtype=np.float32))
      Array([0., 1., 2.], dtype=float32)
    """
    if device is not None and getattr(device, "platform", "cpu") != "cpu":
        raise ValueError(f"from_dlpack: only CPU arrays can be imported, device={device!r}")
    if type(x) is ArrayImpl:
        return x if copy is not True else array(x, copy=True)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    if hasattr(x, "__dlpack_device__"):
        kind = int(x.__dlpack_device__()[0])
        if kind != 1:
            raise BufferError(f"from_dlpack: only CPU tensors can be imported (DLPack device type {kind})")
    out = None if copy is True else _core.from_dlpack_capsule(x.__dlpack__())
    if out is None:  # a layout to copy: through NumPy
        return asarray(_np.array(_np.from_dlpack(x), copy=True))
    if _dt.canonical_name(out.dtype_name) != out.dtype_name:
        return asarray(_np.asarray(out))  # x64 off: converted (and so copied) as JAX
    return out


@_keys_through
def asarray(a, dtype=None, copy=None, *, device=None):
    """Convert ``a`` to a microjax_rs array, without copying when it already is one.

    Args:
      a: an array, NumPy array, Python scalar, or (nested) list/tuple of those.
      dtype: optional result dtype; by default NumPy's inferred dtype, canonicalized
        to 32 bits unless x64 is enabled (Python scalars give weakly typed arrays).
      copy: accepted for NumPy compatibility.
      device: optional Device or Sharding to place the result on (as ``jax.device_put``).

    Returns:
      An array; tracers are returned as they are (cast when ``dtype`` is given).

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> jnp.asarray([1, 2, 3])
      Array([1, 2, 3], dtype=int32)
    """
    if device is not None:
        return _placed(asarray(a, dtype, copy), device)
    if isinstance(a, Tracer):
        return a if dtype is None else astype(a, dtype)
    if type(a) is ArrayImpl and dtype is None:
        return a
    if core.on_device(a):  # a GpuArray stays on its device
        return a if dtype is None else astype(a, dtype)
    if isinstance(a, (list, tuple)) and builtins.any(isinstance(e, Tracer) for e in _flat(a)):
        return stack([asarray(e) for e in a]) if dtype is None else astype(stack([asarray(e) for e in a]), dtype)
    if type(a) in _SCALARS:
        if dtype is None:
            return core.to_array(a)
        return core.to_array(a, _dt.np_dtype(_name(dtype)), weak_type=False)
    if isinstance(a, (list, tuple)):
        a = _np.asarray([_np.asarray(e) if type(e) is ArrayImpl else e for e in a] if a else a,
                        dtype=None if dtype is None else _dt.np_dtype(_name(dtype)))
    return core.to_array(a, None if dtype is None else _dt.np_dtype(_name(dtype)))


def _flat(xs):
    for x in xs:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


@_keys_through
def array(object, dtype=None, copy=True, ndmin=0, *, device=None):
    """Create an array from ``object`` (see ``asarray``), with at least ``ndmin`` dimensions.

    Args:
      object: an array, NumPy array, scalar, or nested list/tuple; lists may hold tracers.
      dtype: optional result dtype (default: inferred; 64-bit types become 32-bit unless x64 is on).
      copy: accepted for NumPy compatibility (arrays are immutable, so sharing is safe).
      ndmin: leading size-1 axes are added up to this many dimensions.
      device: optional Device or Sharding to place the result on.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> jnp.array([[1.0, 2.0], [3.0, 4.0]])
      Array([[1., 2.],
             [3., 4.]], dtype=float32)
      >>> jnp.array([3], ndmin=2)
      Array([[3]], dtype=int32)
    """
    out = asarray(object, dtype=dtype)
    if ndmin and out.ndim < ndmin:
        out = reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return _placed(out, device)


def _creation_shape(shape):
    shape = _shape_tuple(shape)
    if builtins.any(d < 0 for d in shape):
        raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, got {shape}.")
    return shape


def _creation_dtype(dtype):
    return _dt.default_float_name() if dtype is None else _name(dtype)


@_keys_through
def zeros(shape, dtype=None, *, device=None):
    """An array of the given shape filled with zeros.

    Args:
      shape: an int or a sequence of ints.
      dtype: the element type (default: the default float dtype, float32 unless x64 is on).
    """
    return _placed(_core.full(_creation_shape(shape), 0, _creation_dtype(dtype), False), device)


@_keys_through
def ones(shape, dtype=None, *, device=None):
    """An array of the given shape filled with ones.

    Args:
      shape: an int or a sequence of ints.
      dtype: the element type (default: the default float dtype).
    """
    return _placed(_core.full(_creation_shape(shape), 1, _creation_dtype(dtype), False), device)


@_keys_through
def full(shape, fill_value, dtype=None, *, device=None):
    """An array of the given shape filled with ``fill_value``.

    Args:
      shape: an int or a sequence of ints.
      fill_value: a scalar, or an array that is broadcast to ``shape``.
      dtype: the element type (default: the dtype of ``fill_value``, weak for Python scalars).
      device: optional Device or Sharding to place the result on.
    """
    if device is not None:
        return _placed(full(shape, fill_value, dtype), device)
    if dtype is None:
        fv = asarray(fill_value) if not isinstance(fill_value, Tracer) else fill_value
        if isinstance(fv, Tracer) or fv.ndim:
            return broadcast_to(fv, _shape_tuple(shape))
        av = _aval(fv)
        return _core.full(_creation_shape(shape), fv.item(), av.dtype_name, av.weak_type)
    if _np.ndim(fill_value) if not isinstance(fill_value, (ArrayImpl, Tracer)) else _aval(fill_value).shape:
        # An array fill value broadcasts to `shape` (lax.full takes scalars only).
        return broadcast_to(asarray(fill_value, dtype=dtype), _shape_tuple(shape))
    return lax.full(_shape_tuple(shape), fill_value, _name(dtype))


@_keys_through
def empty(shape, dtype=None, *, device=None):
    """An array of the given shape; microjax_rs fills it with zeros (arrays are immutable, so
    there is no uninitialized memory to hand out).
    """
    return zeros(shape, dtype, device=device)


@_keys_through
def zeros_like(a, dtype=None, shape=None, *, device=None):
    """An array of zeros with the shape and dtype of ``a`` (each overridable by ``shape`` / ``dtype``)."""
    av = _aval(a)
    return zeros(av.shape if shape is None else shape, av.dtype if dtype is None else dtype, device=device)


@_keys_through
def ones_like(a, dtype=None, shape=None, *, device=None):
    """An array of ones with the shape and dtype of ``a`` (each overridable by ``shape`` / ``dtype``)."""
    av = _aval(a)
    return ones(av.shape if shape is None else shape, av.dtype if dtype is None else dtype, device=device)


@_keys_through
def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    """An array filled with ``fill_value`` with the shape and dtype of ``a`` (each overridable
    by ``shape`` / ``dtype``).
    """
    av = _aval(a)
    return full(av.shape if shape is None else shape, fill_value, av.dtype if dtype is None else dtype,
                device=device)


@_keys_through
def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """An array with the shape and dtype of ``prototype`` (each overridable); filled with zeros,
    as ``empty``.
    """
    return zeros_like(prototype, dtype=dtype, shape=shape, device=device)


def copy(a, order=None):
    """A copy of ``a`` as a microjax_rs array (``order`` is accepted for NumPy compatibility)."""
    return _arr(a)


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """Evenly spaced values in the half-open interval ``[start, stop)`` with spacing ``step``.

    Args:
      start: the first value, or the end when ``stop`` is omitted (``arange(n)`` is 0..n-1).
      stop: the end of the interval (excluded).
      step: the spacing (default 1).
      dtype: the element type; by default the default int dtype for integer arguments and the
        default float dtype otherwise.
      device: optional Device or Sharding to place the result on.

    The bounds determine the result's shape, so they must be concrete: a traced ``start``,
    ``stop`` or ``step`` raises ``ConcretizationTypeError`` (pass them as static arguments).

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> jnp.arange(4)
      Array([0, 1, 2, 3], dtype=int32)
      >>> jnp.arange(0.0, 1.0, 0.25)
      Array([0.  , 0.25, 0.5 , 0.75], dtype=float32)
    """
    if device is not None:
        return _placed(arange(start, stop, step, dtype), device)
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            raise core.ConcretizationTypeError(
                "jnp.arange requires concrete start/stop/step (they determine the shape); "
                "pass them as static arguments")
    if stop is None and step is None and dtype is None and isinstance(start, int):
        return lax.iota(_dt.default_int_name(), int(start))
    ref = _np.arange(start, stop, step) if stop is not None or step is not None else _np.arange(start)
    if dtype is None:
        name = _dt.canonical_name(_dt.dtype_name(ref.dtype))
        if _np.issubdtype(ref.dtype, _np.floating):
            name = _dt.default_float_name()
        elif _np.issubdtype(ref.dtype, _np.integer):
            name = _dt.default_int_name()
    else:
        name = _name(dtype)
    return core.to_array(ref.astype(_dt.np_dtype(name)))


def astype(x, dtype, /, *, copy=False, device=None):
    """`x` converted to `dtype` (jnp.astype; None: the default float dtype,
    as NumPy's float64 canonicalized). Arrays are immutable, so `copy`
    changes nothing observable; `device` places the result."""
    del copy
    out = lax.convert_element_type(x, _dt.default_float_name() if dtype is None else dtype)
    return _placed(out, device)


# -- shapes and axes -----------------------------------------------------------

def shape(a):
    """The shape of ``a`` as a tuple of ints (works on arrays, tracers, NumPy arrays, scalars and lists)."""
    return _aval(a).shape


def ndim(a):
    """The number of dimensions of ``a`` (works on arrays, tracers, NumPy arrays, scalars and lists)."""
    return _aval(a).ndim


def size(a, axis=None):
    """Number of elements, or the product of the sizes along `axis` (an int or tuple)."""
    av = _aval(a)
    if axis is None:
        return av.size
    axes = (axis,) if _np.ndim(axis) == 0 else tuple(axis)
    canon = [_canon_axis(ax, av.ndim) for ax in axes]
    if len(set(canon)) != len(canon):
        raise ValueError(f"size: repeated axis in {tuple(axes)}")
    n = 1
    for ax in canon:
        n *= av.shape[ax]
    return n


@_keys_through
def reshape(a, shape=None, order="C", *, copy=None):
    """``a`` with a new shape and the same elements, in row-major order.

    Args:
      a: the array.
      shape: the new shape; one entry may be -1, inferred from the size.
      order: ``'C'`` (row-major) or ``'F'`` (column-major); ``'A'`` raises NotImplementedError.
      copy: accepted for the array API; the result is always a new array (as JAX).
    """
    if shape is None:
        raise TypeError("reshape() missing required argument: 'shape'")
    newshape = shape
    if order == "F":
        # Column-major: reverse the axes, reshape to the reversed shape, reverse back.
        a = _arr(a)
        newshape = _shape_tuple(newshape)
        return transpose(reshape(transpose(a), newshape[::-1]))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    if order != "C":
        raise ValueError(f"Unexpected value for 'order' argument: {order}.")
    (a,) = _promote(a) if type(a) in _SCALARS else (asarray(a) if not isinstance(a, Tracer) else a,)
    av = _aval(a)
    newshape = _shape_tuple(newshape)
    if builtins.sum(1 for d in newshape if d == -1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in newshape:
        known = 1
        for d in newshape:
            if d != -1:
                known *= d
        if known == 0 or av.size % known:
            raise TypeError(f"cannot reshape array of shape {av.shape} (size {av.size}) into shape {newshape}")
        newshape = tuple(av.size // known if d == -1 else d for d in newshape)
    total = 1
    for d in newshape:
        total *= d
    if total != av.size:
        raise TypeError(f"cannot reshape array of shape {av.shape} (size {av.size}) into shape {newshape}")
    return lax.reshape(a, newshape)


@_keys_through
def ravel(a, order="C"):
    """``a`` flattened to one dimension, in row-major (``order='C'``) or column-major (``'F'``) order."""
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(a, (-1,), order=order)


def _ravel_unless_axis(a, axis):
    """`(a, its aval, canonical axis)`, `axis=None` meaning the flattened array along axis 0."""
    a = _arr(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    av = _aval(a)
    return a, av, _canon_axis(axis, av.ndim)


@_keys_through
def transpose(a, axes=None):
    """``a`` with its axes permuted: reversed by default, else in the order given by ``axes``."""
    a = asarray(a) if not isinstance(a, Tracer) else a
    nd = _aval(a).ndim
    perm = tuple(reversed(range(nd))) if axes is None else tuple(_canon_axis(x, nd) for x in axes)
    return lax.transpose(a, perm)


@_keys_through
def swapaxes(a, axis1, axis2):
    """``a`` with the axes ``axis1`` and ``axis2`` exchanged."""
    nd = _aval(a).ndim
    perm = list(range(nd))
    i, j = _canon_axis(axis1, nd), _canon_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, perm)


@_keys_through
def squeeze(a, axis=None):
    """``a`` without its size-1 axes: all of them, or only those in ``axis`` (which must have size 1,
    else ValueError).
    """
    av = _aval(a)
    if axis is None:
        dims = [i for i, d in enumerate(av.shape) if d == 1]
    else:
        axes = (axis,) if isinstance(axis, int) else axis
        dims = [_canon_axis(x, av.ndim) for x in axes]
    return lax.squeeze(a, dims)


@_keys_through
def expand_dims(a, axis):
    """``a`` with size-1 axes inserted at the positions ``axis`` (an int or a tuple, counted in
    the result's axes). An axis out of range is NumPy's ``AxisError``, a ValueError (as JAX
    raises) and an IndexError (as the array API standard asks).
    """
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim_out = ndim(a) + len(axes)
    for d in axes:
        if not -ndim_out <= d < ndim_out:
            raise _np.exceptions.AxisError(d, ndim_out)
    return lax.expand_dims(a, axes)


def broadcast_shapes(*shapes):
    """The shape that arrays of the given ``shapes`` broadcast to (ValueError if incompatible)."""
    return _broadcast_shapes(*[tuple(s) for s in shapes])


@_keys_through
def broadcast_to(array, shape):
    """``array`` broadcast to ``shape`` under NumPy's broadcasting rules (ValueError if it cannot be)."""
    (a,) = _promote(array) if type(array) in _SCALARS else (asarray(array),)
    shape = _shape_tuple(shape)
    av = _aval(a)
    if av.shape == ():
        return lax.broadcast_in_dim(a, shape, ())
    return _broadcast_to_shape(a, shape)


def matrix_transpose(x, /):
    """``x`` with its last two axes swapped (a batched matrix transpose); ``x`` needs at least
    two dimensions.
    """
    x = _arr(x)
    if _aval(x).ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={_aval(x).ndim}")
    return swapaxes(x, -1, -2)


@_keys_through
def moveaxis(a, source, destination):
    """``a`` with the axes ``source`` (an int or sequence) moved to the positions
    ``destination``; the other axes keep their order.
    """
    a = _arr(a)
    nd = _aval(a).ndim
    src = _axes_arg(source, nd)
    dst = _axes_arg(destination, nd)
    if len(src) != len(dst):
        raise ValueError("Inconsistent number of elements: source and destination")
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return lax.transpose(a, perm)


def rollaxis(a, axis, start=0):
    """``a`` with ``axis`` moved to the position before ``start`` (NumPy's older spelling of
    ``moveaxis``).
    """
    a = _arr(a)
    nd = _aval(a).ndim
    axis = _canon_axis(axis, nd)
    if start < 0:
        start += nd
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


@_keys_through
def broadcast_arrays(*args):
    """The arguments broadcast against each other to their common shape, as a list of arrays."""
    arrs = [_arr(a) for a in args]
    shape = _broadcast_shapes(*(_aval(a).shape for a in arrs))
    return [broadcast_to(a, shape) for a in arrs]


def _atleast(arys, expand):
    """Each array of `arys` through `expand(a, shape)` (a reshape where its rank is short):
    one array alone, else the list (as jnp.atleast_*d)."""
    out = []
    for a in arys:
        a = _arr(a)
        out.append(expand(a, _aval(a).shape))
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """Each input as an array with at least one dimension (scalars become shape ``(1,)``).
    One argument gives an array, several give a list.
    """
    return _atleast(arys, lambda a, s: reshape(a, (1,)) if len(s) == 0 else a)


def atleast_2d(*arys):
    """Each input as an array with at least two dimensions (leading size-1 axes are added).
    One argument gives an array, several give a list.
    """
    return _atleast(arys, lambda a, s: reshape(a, (1,) * (2 - len(s)) + s) if len(s) < 2 else a)


def _to_3d(a, s):
    if len(s) == 0:
        return reshape(a, (1, 1, 1))
    if len(s) == 1:
        return reshape(a, (1, s[0], 1))
    if len(s) == 2:
        return reshape(a, s + (1,))
    return a


def atleast_3d(*arys):
    """Each input as an array with at least three dimensions: a 1-D ``(n,)`` becomes
    ``(1, n, 1)`` and a 2-D ``(m, n)`` becomes ``(m, n, 1)``, as in NumPy.
    One argument gives an array, several give a list.
    """
    return _atleast(arys, _to_3d)


# -- joining -------------------------------------------------------------------

def _concat_prep(arrays, what):
    if isinstance(arrays, (ArrayImpl, Tracer, _np.ndarray)):
        arrs = [arrays[i] for i in range(_aval(arrays).shape[0])]
    else:
        arrs = list(arrays)
    if not arrs:
        raise ValueError(f"Need at least one array to {what}.")
    arrs = [_arr(a) for a in arrs]
    return _promote_dtypes(*arrs)


@_keys_through
def concatenate(arrays, axis=0, dtype=None):
    """Join a sequence of arrays along an existing axis.

    Args:
      arrays: arrays with equal shapes except along ``axis``; their dtypes are promoted.
      axis: the axis to join along; ``None`` flattens the inputs first.
      dtype: optional result dtype.

    Also exported as ``jnp.concat``.
    """
    arrs = _concat_prep(arrays, "concatenate")
    if dtype is not None:
        arrs = [astype(a, dtype) for a in arrs]
    if axis is None:
        arrs = [ravel(a) for a in arrs]
        axis = 0
    nd = _aval(arrs[0]).ndim
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = _canon_axis(axis, nd)
    s0 = _aval(arrs[0]).shape
    for a in arrs[1:]:
        s = _aval(a).shape
        if len(s) != nd or builtins.any(s[i] != s0[i] for i in range(nd) if i != axis):
            raise TypeError(
                f"Cannot concatenate arrays with shapes that differ in dimensions other than the "
                f"one being concatenated: concatenating along dimension {axis} for shapes "
                + ", ".join(str(_aval(b).shape) for b in arrs) + ".")
    return _concat(arrs, axis)


concat = concatenate


@_keys_through
def stack(arrays, axis=0, out=None, dtype=None):
    """Join a sequence of equal-shaped arrays along a new axis ``axis``.

    Args:
      arrays: arrays (or one array, split along its first axis) of one shape.
      axis: where the new axis goes in the result.
      out: must be None (arrays are immutable).
      dtype: optional result dtype.
    """
    arrs = _concat_prep(arrays, "stack")
    shape0 = _aval(arrs[0]).shape
    for a in arrs[1:]:
        if _aval(a).shape != shape0:
            raise ValueError("All input arrays must have the same shape.")
    axis = _canon_axis(axis, len(shape0) + 1)
    arrs = [lax.expand_dims(a, (axis,)) for a in arrs]
    if dtype is not None:
        arrs = [astype(a, dtype) for a in arrs]
    return _concat(arrs, axis)


def vstack(tup, dtype=None):
    """Join arrays vertically, along axis 0, after making each at least 2-D.
    Also exported as ``jnp.row_stack``.
    """
    return concatenate([atleast_2d(a) for a in tup], axis=0, dtype=dtype)


row_stack = vstack


def hstack(tup, dtype=None):
    """Join arrays horizontally: along axis 1, or along axis 0 for 1-D inputs."""
    arrs = [atleast_1d(a) for a in tup]
    axis = 0 if arrs and _aval(arrs[0]).ndim == 1 else 1
    return concatenate(arrs, axis=axis, dtype=dtype)


def dstack(tup, dtype=None):
    """Join arrays along the third axis, after making each at least 3-D."""
    return concatenate([atleast_3d(a) for a in tup], axis=2, dtype=dtype)


def column_stack(tup):
    """Join 1-D arrays as the columns of a 2-D array (2-D inputs are joined along axis 1)."""
    arrs = []
    for a in tup:
        a = _arr(a)
        arrs.append(reshape(a, (-1, 1)) if _aval(a).ndim < 2 else a)
    return concatenate(arrs, axis=1)


# -- flips, rotations and tiling -----------------------------------------------

def flip(m, axis=None):
    """``m`` with the order of elements reversed along ``axis`` (an int or tuple), or along every
    axis when ``axis`` is None.
    """
    m = _arr(m)
    nd = _aval(m).ndim
    axes = tuple(range(nd)) if axis is None else _axes_arg(axis, nd)
    return _rev(m, axes)


def fliplr(m):
    """``m`` with its columns (axis 1) in reverse order."""
    m = _arr(m)
    if _aval(m).ndim < 2:
        raise ValueError("fliplr requires an array of at least 2 dimensions")
    return _rev(m, (1,))


def flipud(m):
    """``m`` with its rows (axis 0) in reverse order."""
    m = _arr(m)
    if _aval(m).ndim < 1:
        raise ValueError("flipud requires an array of at least 1 dimension")
    return _rev(m, (0,))


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, from the first axis
    towards the second.
    """
    m = _arr(m)
    nd = _aval(m).ndim
    a0, a1 = _canon_axis(axes[0], nd), _canon_axis(axes[1], nd)
    if a0 == a1:
        raise ValueError("Axes must be different")
    k = k % 4
    if k == 0:
        return m
    if k == 2:
        return _rev(m, (a0, a1))
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return lax.transpose(_rev(m, (a1,)), perm)
    return _rev(lax.transpose(m, perm), (a1,))


@_keys_through
def tile(A, reps):
    """An array built by repeating ``A`` ``reps`` times along each axis (``reps`` is an int or a
    tuple; shorter of the two is padded with leading ones).
    """
    a = _arr(A)
    reps = (int(reps),) if isinstance(reps, (int, _np.integer)) else tuple(int(r) for r in reps)
    s = _aval(a).shape
    nd = builtins.max(len(s), len(reps))
    s = (1,) * (nd - len(s)) + s
    reps = (1,) * (nd - len(reps)) + reps
    a = lax.reshape(a, s)
    inter = []
    for r, d in zip(reps, s):
        inter += [r, d]
    b = lax.broadcast_in_dim(a, tuple(inter), tuple(range(1, 2 * nd, 2)))
    return lax.reshape(b, tuple(r * d for r, d in zip(reps, s)))


# -- matrices and grids --------------------------------------------------------

def _diag_offset(k):
    """The diagonal offset `k` as an int32 scalar operand: a traced `k` is
    converted (eye / tri accept one, as JAX); a static one beyond int32
    raises OverflowError unless x64 is on."""
    if isinstance(k, Tracer):
        return lax.convert_element_type(k, "int32")
    return _const(int(k), "int32")


def _tri_mask(N, M, k):
    return lax.ge(lax.add(lax.broadcasted_iota("int32", (N, M), 0), _diag_offset(k)),
                  lax.broadcasted_iota("int32", (N, M), 1))


def tri(N, M=None, k=0, dtype=None):
    """An ``N`` x ``M`` array with ones at and below the ``k``-th diagonal and zeros above it."""
    M = N if M is None else M
    name = _creation_dtype(dtype)
    return lax.convert_element_type(_tri_mask(int(N), int(M), k), name)


def _tri_zeroed(m, k, name, upper):
    """``m`` with the elements above (``upper``: below) the ``k``-th diagonal set to zero."""
    m = _arr(m)
    av = _aval(m)
    if av.ndim < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    below = _tri_mask(av.shape[-2], av.shape[-1], k - 1 if upper else k)
    mask = lax.broadcast_in_dim(below, av.shape, (av.ndim - 2, av.ndim - 1))
    # `mask`: at and below diagonal `k` (tril keeps it) or `k - 1` (triu zeroes it).
    on_false, on_true = (m, zeros_like(m)) if upper else (zeros_like(m), m)
    return lax.select_n(mask, on_false, on_true)


def tril(m, k=0):
    """A copy of ``m`` with the elements above the ``k``-th diagonal set to zero (the last two
    axes are the matrix; leading axes are batch axes).
    """
    return _tri_zeroed(m, k, "tril", upper=False)


def triu(m, k=0):
    """A copy of ``m`` with the elements below the ``k``-th diagonal set to zero (the last two
    axes are the matrix; leading axes are batch axes).
    """
    return _tri_zeroed(m, k, "triu", upper=True)


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """A 2-D array with ones on the ``k``-th diagonal and zeros elsewhere.

    Args:
      N: the number of rows.
      M: the number of columns (default ``N``).
      k: the diagonal: 0 the main one, positive above it, negative below.
      dtype: the element type (default: the default float dtype).
      device: optional Device or Sharding to place the result on.
    """
    if device is not None:
        return _placed(eye(N, M, k, dtype), device)
    N = int(N)
    M = N if M is None else int(M)
    if N < 0 or M < 0:
        raise ValueError(f"negative dimensions are not allowed, got N={N} and M={M}")
    name = _creation_dtype(dtype)
    if not isinstance(k, Tracer):  # a diagonal outside the matrix (any size of k): all zeros
        k = builtins.max(-N, builtins.min(int(k), M))
    mask = lax.eq(lax.add(lax.broadcasted_iota("int32", (N, M), 0), _diag_offset(k)),
                  lax.broadcasted_iota("int32", (N, M), 1))
    return lax.convert_element_type(mask, name)


def identity(n, dtype=None):
    """The ``n`` x ``n`` identity matrix (``eye(n)``) of the given dtype."""
    return eye(n, dtype=dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from the 1-D coordinate vectors ``xi``.

    Args:
      xi: 1-D arrays, one per dimension.
      copy: accepted for NumPy compatibility.
      sparse: if true, return broadcastable arrays with size-1 axes instead of full grids.
      indexing: ``'xy'`` (Cartesian; the first two axes swapped) or ``'ij'`` (matrix indexing).

    Returns:
      A list of arrays, one per input.
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    args = [_arr(x) for x in xi]
    for a in args:
        if _aval(a).ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shape {_aval(a).shape}")
    shape = [_aval(a).shape[0] for a in args]
    if indexing == "xy" and len(args) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(args):
        d = i
        if indexing == "xy" and len(args) >= 2 and i < 2:
            d = 1 - i
        if sparse:
            s = [1] * len(args)
            s[d] = _aval(a).shape[0]
            out.append(lax.reshape(a, s))
        else:
            out.append(lax.broadcast_in_dim(a, tuple(shape), (d,)))
    return out


def indices(dimensions, dtype=None, sparse=False):
    """Arrays of the index along each axis of a grid of shape ``dimensions``: stacked into one
    array of shape ``(len(dimensions), *dimensions)``, or, with ``sparse=True``, a tuple of
    broadcastable arrays.
    """
    dims = tuple(int(d) for d in dimensions)
    name = _dt.default_int_name() if dtype is None else _name(dtype)
    out = []
    for i, d in enumerate(dims):
        if sparse:
            s = [1] * len(dims)
            s[i] = d
            out.append(lax.broadcasted_iota(name, tuple(s), i))
        else:
            out.append(lax.broadcasted_iota(name, dims, i))
    return tuple(out) if sparse else stack(out) if dims else zeros((0,), name)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D array ``x``: column ``j`` holds ``x ** (N - 1 - j)``,
    or ``x ** j`` when ``increasing`` is true. ``N`` defaults to ``len(x)``.
    """
    x = _arr(x)
    n = _aval(x).shape[0]
    N = n if N is None else int(N)
    pows = [lax.integer_pow(x, p) if p else ones_like(x) for p in range(N)]
    if not increasing:
        pows = pows[::-1]
    return stack(pows, axis=1) if pows else zeros((n, 0), _aval(x).dtype_name)


# -- predicates ----------------------------------------------------------------

def isscalar(element):
    """True when ``element`` is a Python or NumPy scalar or a zero-dimensional array."""
    if isinstance(element, (ArrayImpl, Tracer)):
        return _aval(element).ndim == 0
    if isinstance(element, _np.ndarray):  # as JAX: a 0-d NumPy array is a scalar too
        return element.ndim == 0
    return _np.isscalar(element)


def iscomplexobj(x):
    """True when ``x`` has a complex dtype (by dtype, not by value)."""
    if x is None:
        return False
    try:
        name = _dt.dtype_name(getattr(x, "dtype", None) or _np.asarray(x).dtype)
    except TypeError:
        return False
    return _dt.is_complex_name(name)


def isrealobj(x):
    """True when ``x`` does not have a complex dtype (by dtype, not by value)."""
    return not iscomplexobj(x)
