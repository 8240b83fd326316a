"""Helpers shared by the `jax.numpy` modules: JAX's dtype promotion (weak
Python scalars) and NumPy broadcasting (both implemented once, in the Rust
core), axis and shape arguments, and boolean logic on lax primitives."""
import builtins
import operator as _op

import numpy as _np

from ... import _core, core, dtypes as _dt, lax
from ...core import ArrayImpl, Tracer
from ..tables import FLOAT_NAMES as _FLOAT_NAMES, HALF_FLOAT_NAMES


_SCALARS = (bool, int, float, complex)


def _name(d):
    return _dt.canonical_name(_dt.dtype_name(d))


def _aval(x):
    return core.get_aval(x)


# Python's scalar types name weak dtypes of NumPy's 64-bit defaults in
# `result_type`/`promote_types` (`promote_types(float, float32)` is float32,
# `promote_types(int, int)` int64 with x64 disabled, as JAX).
_WEAK_SCALAR_TYPES = {int: "int64", float: "float64", complex: "complex128"}


def _dtype_pair(a):
    """(dtype name, weak) of a dtype-like argument of `result_type`/`promote_types`, not
    canonicalized (`promote_types` does not canonicalize; `result_type` does at the end)."""
    weak = _WEAK_SCALAR_TYPES.get(a) if isinstance(a, type) else None
    return (weak, True) if weak is not None else (_dt.dtype_name(a), False)


def _promote_pair_names(args):
    pairs = []
    for a in args:
        t = type(a)
        if t is ArrayImpl:
            pairs.append((a.dtype_name, a.weak_type))
        elif t is Tracer:
            pairs.append((a.aval.dtype_name, a.aval.weak_type))
        elif t in _SCALARS:
            pairs.append((_dt.scalar_type_name(a), _dt.is_weak_scalar(a)))
        elif isinstance(a, (str, type, _np.dtype)) or a is None:
            pairs.append(_dtype_pair(a))
        else:
            av = _aval(a)
            pairs.append((av.dtype_name, av.weak_type))
    return _dt.promote(pairs)


def _convert(x, name, weak):
    """x as (dtype name, weak); Python scalars become weak rank-0 arrays."""
    t = type(x)
    if t is ArrayImpl:
        if x.dtype_name == name and x.weak_type == weak:
            return x
    elif t in _SCALARS:
        return core.to_array(x, _dt.np_dtype(name), weak_type=weak)
    if isinstance(x, (_np.ndarray, _np.generic)):  # lists and tuples fail _check_arg first
        x = core.to_array(x)
    return lax._convert_keep_weak(x, name, weak)


def _broadcast_shapes(*shapes, op=None, fun=None):
    """NumPy broadcasting (the core's). Incompatible shapes raise JAX's
    error: a TypeError naming `op` (an elementwise primitive) when all ranks
    are equal, else `jnp.broadcast_shapes`' ValueError. With `fun` (the
    jnp function broadcasting its operands), `jax_numpy_rank_promotion`
    applies to operands of different ranks."""
    if fun is not None:
        mode = core.config._values["jax_numpy_rank_promotion"]
        if mode != "allow":
            return tuple(_core.broadcast_shapes(shapes, op, mode, fun))
    return tuple(_core.broadcast_shapes(shapes, op))


def _broadcast_to_shape(x, shape):
    xs = _aval(x).shape
    if xs == tuple(shape):
        return x
    nlead = len(shape) - len(xs)
    if nlead < 0:
        raise ValueError(f"cannot broadcast shape {xs} to {tuple(shape)}")
    # Size-1 axes that must stretch are squeezed out and re-broadcast.
    keep = [i for i, d in enumerate(xs) if d == shape[nlead + i]]
    drop = [i for i, d in enumerate(xs) if d != shape[nlead + i]]
    for i in drop:
        if xs[i] != 1:
            raise ValueError(f"Incompatible shapes for broadcasting: {xs} and {tuple(shape)}")
    if drop:
        x = lax.reshape(x, [xs[i] for i in keep])
    return lax.broadcast_in_dim(x, shape, [nlead + i for i in keep])


def _promote_shapes(args, op=None, fun=None):
    """NumPy broadcasting; rank-0 operands are left for the primitive (lax
    elementwise ops accept rank-0 operands against arrays). `op` names the
    elementwise primitive in the error for incompatible shapes."""
    shapes = [_aval(a).shape for a in args]
    if builtins.all(s == shapes[0] for s in shapes):
        return args
    out_shape = _broadcast_shapes(*shapes, op=op, fun=fun)
    return [a if (s == out_shape or s == ()) else _broadcast_to_shape(a, out_shape)
            for a, s in zip(args, shapes)]


def _promote_dtypes(*args):
    """Promotes dtypes (JAX's lattice); shapes untouched."""
    if len(args) == 2 and type(args[0]) is Tracer and type(args[1]) is Tracer:
        # Under a trace, two float tracers of one dtype and weakness are already promoted.
        a1, a2 = args[0].aval, args[1].aval
        if a1.dtype_name in _FLOAT_NAMES and a1.dtype_name == a2.dtype_name and a1.weak_type == a2.weak_type:
            return list(args)
    for a in args:
        _check_arg(a)
    name, weak = _promote_pair_names(args)
    return [_convert(a, name, weak) for a in args]


def _promote(*args, op=None, fun=None):
    """Promotes dtypes (JAX's lattice) then shapes (NumPy broadcasting)."""
    return _promote_checked(_promote_dtypes, args, op, fun)


def _promote_checked(promote_dtypes, args, op, fun=None):
    """Dtypes by `promote_dtypes`, then shapes; typed PRNG keys among `args`
    get JAX's TypeError naming `op`."""
    try:
        promoted = promote_dtypes(*args)
    except TypeError:
        _raise_if_extended(op, args)
        raise
    return _promote_shapes(promoted, op, fun)


def _is_extended(x):
    t = getattr(getattr(x, "dtype", None), "type", None)
    return isinstance(t, type) and issubclass(t, _dt.extended)


def _raise_if_extended(op, args):
    """JAX's TypeError for arithmetic on typed PRNG keys (dtypes outside the lattice)."""
    if op is None or not builtins.any(_is_extended(a) for a in args):
        return
    names = []
    for a in args:
        name = str(a.dtype) if _is_extended(a) else _aval(_arr(a)).dtype_name
        if name not in names:
            names.append(name)
    raise TypeError(f"{op} does not accept dtype{'s' if len(names) > 1 else ''} {', '.join(names)}.")


def _check_arg(a):
    if isinstance(a, (list, tuple)):
        raise TypeError(
            f"microjax_rs.numpy function received a {type(a).__name__}; pass an array "
            f"(jnp.asarray(x)) instead, as in JAX")
    if isinstance(a, str) or a is None:
        raise TypeError(f"{a!r} is not a valid array argument")


def _promote_dtypes_inexact(*args):
    """Promotes dtypes to a common inexact dtype; shapes untouched."""
    for a in args:
        _check_arg(a)
    name, weak = _promote_pair_names(args)
    if not _dt.is_inexact_name(name):
        name = _dt.default_float_name()
    return [_convert(a, name, weak) for a in args]


def _promote_inexact(*args, op=None, fun=None):
    return _promote_checked(_promote_dtypes_inexact, args, op, fun)


_EAGER_OPERANDS = (ArrayImpl, bool, int, float)




def _shape_dim(d, shape):
    """One dimension of a shape argument: integers only (`__index__`), as JAX."""
    if hasattr(d, "__index__") and not isinstance(d, (float, _np.floating)):
        return _op.index(d)  # a tracer raises its concretization error here
    raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape!r}.")


def _shape_tuple(shape):
    if isinstance(shape, (int, _np.integer)) or (hasattr(shape, "__index__") and not isinstance(shape, (tuple, list))
                                                 and _np.ndim(shape) == 0):
        return (_shape_dim(shape, shape),)
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape!r}.")
    return tuple(_shape_dim(d, shape) for d in shape)


def _canon_axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < builtins.max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def _reduce_axes(av, axis):
    if axis is None:
        return tuple(range(av.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    canon = tuple(sorted(_canon_axis(x, av.ndim) for x in axes))
    if len(set(canon)) != len(canon):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return canon


def _keepdims(out, av, axes):
    shape = tuple(1 if i in axes else d for i, d in enumerate(av.shape))
    return lax.reshape(out, shape)


def _is_float(x):
    return _dt.is_float_name(_aval(x).dtype_name)


def _is_int(x):
    return _dt.is_int_name(_aval(x).dtype_name)


def _is_bool(x):
    return _aval(x).dtype_name == "bool"


def _const(value, name):
    """A rank-0, non-weak constant of dtype `name`."""
    return core.to_array(value, _dt.np_dtype(name), weak_type=False)


def _arr(x):
    """Array-likes (NumPy arrays, scalars) as arrays; tracers untouched."""
    if type(x) is ArrayImpl or isinstance(x, Tracer):
        return x
    _check_arg(x)
    if core.on_device(x):  # a GpuArray stays on its device
        return x
    return core.to_array(x)


# Boolean logic on lax primitives (min/max on bool are and/or).
def _not(b):
    return lax.bitwise_not(b)


def _and(a, b):
    a, b = _promote(a, b)
    return lax.min(a, b)


def _or(a, b):
    a, b = _promote(a, b)
    return lax.max(a, b)


def _inexact1(x):
    (a,) = _promote_inexact(x)
    return a


def _upcast_f16(name):
    return "float32" if name in HALF_FLOAT_NAMES else name


def _concat(xs, axis):
    """Concatenation of same-dtype arrays along an existing axis."""
    xs = [x for x in xs]
    if len(xs) == 1:
        return xs[0]
    return lax.concatenate(xs, axis)


def _rev(x, axes):
    axes = tuple(axes)
    if not axes:
        return x
    return lax.rev(x, axes)


def _axes_arg(axis, nd):
    if isinstance(axis, (tuple, list)):
        return tuple(_canon_axis(a, nd) for a in axis)
    return (_canon_axis(axis, nd),)


def _static_int(v, fn, what):
    if isinstance(v, Tracer):
        raise core.ConcretizationTypeError(
            f"jnp.{fn}: {what} must be a concrete integer (it determines the output shape); "
            f"got a traced value. Mark it static (static_argnums) or pass a Python int.")
    return int(v)


def _nan_const(name):
    return _const(_np.nan, name)


def _placed(out, device):
    """`out` (an array or a tuple of arrays) put on `device` (a Device or a
    Sharding) when one is given: the `device=` keyword of the creation
    functions, as `jax.device_put`."""
    if device is None:
        return out
    from ..._devices import device_put

    return device_put(out, device)
