"""`jax.numpy` for microjax_rs: NumPy's API with JAX's dtype rules
(float32 default, weak Python scalars, promotion lattice in Rust) built on
the lax primitives, so every function works eagerly and under every trace."""
import builtins

import numpy as _np

from .. import _core, core, dtypes as _dt, lax
from ..core import ArrayImpl, Tracer
from . import _indexing

_SCALARS = (bool, int, float)


# -- dtypes -------------------------------------------------------------------

class _ScalarType(type):
    def __repr__(cls):
        return cls.__name__

    def __instancecheck__(cls, x):
        return getattr(x, "dtype", None) == cls.dtype


def _make_scalar_type(name):
    def __new__(cls, x=0):
        return asarray(x, dtype=name)

    np_d = _dt.np_dtype(name) if (name != "bfloat16" or _dt.bfloat16 is not None) else None
    return _ScalarType(name, (), {"__new__": __new__, "dtype": np_d})


bool_ = _make_scalar_type("bool")
int8, int16, int32, int64 = (_make_scalar_type(n) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_make_scalar_type(n) for n in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (_make_scalar_type(n) for n in ("float16", "float32", "float64"))
bfloat16 = _make_scalar_type("bfloat16")
float_ = float64
int_ = int64
dtype = _np.dtype
ndarray = None  # replaced by microjax_rs.Array in package __init__
finfo = _dt.finfo
iinfo = _dt.iinfo
pi, e, inf, nan = _np.pi, _np.e, _np.inf, _np.nan
newaxis = None


def _name(d):
    return _dt.canonical_name(_dt.dtype_name(d))


def result_type(*args):
    return _dt.np_dtype(_promote_pair_names(args)[0])


def promote_types(a, b):
    name, _ = _dt.promote([(_dt.dtype_name(a), False), (_dt.dtype_name(b), False)])
    return _dt.np_dtype(name)


def _aval(x):
    return core.get_aval(x)


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
            pairs.append((_name(a), False))
        else:
            av = _aval(a)
            pairs.append((av.dtype_name, av.weak_type))
    return _dt.promote(pairs)


# -- promotion and broadcasting ------------------------------------------------

def _convert(x, name, weak):
    """x as (dtype name, weak); Python scalars become weak rank-0 arrays."""
    t = type(x)
    if t is ArrayImpl:
        if x.dtype_name == name and x.weak_type == weak:
            return x
    elif t in _SCALARS:
        return core.to_array(x, _dt.np_dtype(name), weak_type=weak)
    if isinstance(x, (_np.ndarray, _np.generic, list, tuple)):
        x = asarray(x)
    return lax._convert_keep_weak(x, name, weak)


def _broadcast_shapes(*shapes):
    ndim = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        size = 1
        for s in shapes:
            d = s[i - ndim + len(s)] if i - ndim + len(s) >= 0 else 1
            if d != 1:
                if size not in (1, d):
                    raise ValueError(
                        "Incompatible shapes for broadcasting: "
                        + ", ".join(str(tuple(s)) for s in shapes))
                size = d
        out.append(size)
    return tuple(out)


def broadcast_shapes(*shapes):
    return _broadcast_shapes(*[tuple(s) for s in shapes])


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


def _promote_shapes(args):
    """NumPy broadcasting; rank-0 operands are left for the primitive (lax
    elementwise ops accept rank-0 operands against arrays)."""
    shapes = [_aval(a).shape for a in args]
    if builtins.all(s == shapes[0] for s in shapes):
        return args
    out_shape = _broadcast_shapes(*shapes)
    return [a if (s == out_shape or s == ()) else _broadcast_to_shape(a, out_shape)
            for a, s in zip(args, shapes)]


def _promote_dtypes(*args):
    """Promotes dtypes (JAX's lattice); shapes untouched."""
    for a in args:
        _check_arg(a)
    name, weak = _promote_pair_names(args)
    return [_convert(a, name, weak) for a in args]


def _promote(*args):
    """Promotes dtypes (JAX's lattice) then shapes (NumPy broadcasting)."""
    return _promote_shapes(_promote_dtypes(*args))


def _check_arg(a):
    if isinstance(a, (list, tuple)):
        raise TypeError(
            f"microjax_rs.numpy function received a {type(a).__name__}; pass an array "
            f"(jnp.asarray(x)) instead, as in JAX")
    if isinstance(a, str) or a is None:
        raise TypeError(f"{a!r} is not a valid array argument")


def _promote_inexact(*args):
    for a in args:
        _check_arg(a)
    name, weak = _promote_pair_names(args)
    if not _dt.is_float_name(name):
        name = _dt.default_float_name()
    args = [_convert(a, name, weak) for a in args]
    return _promote_shapes(args)


# -- elementwise ----------------------------------------------------------------

_EAGER_OPERANDS = (ArrayImpl, bool, int, float)


def _binary(lax_fn, inexact=False, doc=None, operator=None):
    """A jnp binary function. Eagerly, with concrete operands and an
    operator the Rust fast path implements, it defers to that operator (which
    does promotion and broadcasting in Rust and falls back to `_slow`)."""

    def slow(x1, x2):
        a, b = (_promote_inexact if inexact else _promote)(x1, x2)
        return lax_fn(a, b)

    if operator is None:
        fn = slow
    else:
        def fn(x1, x2, /):
            if (type(x1) is ArrayImpl and type(x2) in _EAGER_OPERANDS
                    and not core._state.stack):
                return operator(x1, x2)
            return slow(x1, x2)

    fn.__name__ = doc or lax_fn.__name__
    fn._slow = slow
    return fn


import operator as _op  # noqa: E402

add = _binary(lax.add, doc="add", operator=_op.add)
subtract = _binary(lax.sub, doc="subtract", operator=_op.sub)
multiply = _binary(lax.mul, doc="multiply", operator=_op.mul)
true_divide = divide = _binary(lax.div, inexact=True, doc="true_divide", operator=_op.truediv)
maximum = _binary(lax.max, doc="maximum")
minimum = _binary(lax.min, doc="minimum")
equal = _binary(lax.eq, doc="equal", operator=_op.eq)
not_equal = _binary(lax.ne, doc="not_equal", operator=_op.ne)
less = _binary(lax.lt, doc="less", operator=_op.lt)
less_equal = _binary(lax.le, doc="less_equal", operator=_op.le)
greater = _binary(lax.gt, doc="greater", operator=_op.gt)
greater_equal = _binary(lax.ge, doc="greater_equal", operator=_op.ge)


def power(x1, x2, /):
    if type(x2) is int and not isinstance(x1, _SCALARS):
        (a,) = _promote(x1)
        return lax.integer_pow(a, x2)
    a, b = _promote(x1, x2)
    if not _dt.is_float_name(_aval(a).dtype_name):
        raise NotImplementedError("integer power with an array exponent arrives with the numpy-surface issue")
    return lax.pow(a, b)


_FLOAT_NAMES = frozenset(("float16", "bfloat16", "float32", "float64"))


def _unary(lax_fn, inexact=True, name=None):
    prim = lax._P[lax_fn.__name__]
    handle = prim.handle({})
    ok_dtypes = _FLOAT_NAMES if inexact else None

    def fn(x, /):
        if type(x) is ArrayImpl and not core._state.stack and (
                ok_dtypes is None or x.dtype_name in ok_dtypes):
            return handle.apply1(x)
        (a,) = (_promote_inexact if inexact else _promote)(x)
        return lax_fn(a)

    fn.__name__ = name or lax_fn.__name__
    return fn


sin = _unary(lax.sin)
cos = _unary(lax.cos)
tanh = _unary(lax.tanh)
exp = _unary(lax.exp)
log = _unary(lax.log)
sqrt = _unary(lax.sqrt)
negative = _unary(lax.neg, inexact=False, name="negative")
absolute = abs = _unary(lax.abs, inexact=False, name="absolute")
sign = _unary(lax.sign, inexact=False, name="sign")


def positive(x, /):
    (a,) = _promote(x)
    return a


def square(x, /):
    (a,) = _promote(x)
    return lax.integer_pow(a, 2)


def arctanh(x, /):
    """0.5·log((1+x)/(1−x)) (the atanh primitive arrives with the numpy-surface issue)."""
    (a,) = _promote_inexact(x)
    return multiply(0.5, log(divide(add(1.0, a), subtract(1.0, a))))


def where(condition, x=None, y=None, /):
    if x is None or y is None:
        raise NotImplementedError("where(condition) with one argument needs a static size (numpy-surface issue)")
    c = condition
    if _aval(c).dtype_name != "bool":
        c = not_equal(c, 0)
    a, b = _promote_dtypes(x, y)
    shape = _broadcast_shapes(*(_aval(v).shape for v in (c, a, b)))
    # select_n needs equal case shapes; a scalar predicate may stay scalar.
    a, b = _broadcast_to_shape(a, shape), _broadcast_to_shape(b, shape)
    if _aval(c).shape != ():
        c = _broadcast_to_shape(c, shape)
    return lax.select_n(c, b, a)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _promote_inexact(a, b)
    return asarray(_np.allclose(_np.asarray(a), _np.asarray(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _promote_inexact(a, b)
    return asarray(_np.isclose(_np.asarray(a), _np.asarray(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1, a2):
    return _np.array_equal(_np.asarray(a1), _np.asarray(a2))


# -- creation -----------------------------------------------------------------

def asarray(a, dtype=None, copy=None):
    if isinstance(a, Tracer):
        return a if dtype is None else astype(a, dtype)
    if type(a) is ArrayImpl and dtype is None:
        return a
    if isinstance(a, (list, tuple)) and any(isinstance(e, Tracer) for e in _flat(a)):
        return stack([asarray(e) for e in a]) if dtype is None else astype(stack([asarray(e) for e in a]), dtype)
    if type(a) in _SCALARS:
        if dtype is None:
            return core.to_array(a)
        return core.to_array(a, _dt.np_dtype(_name(dtype)), weak_type=False)
    if isinstance(a, (list, tuple)):
        a = _np.asarray([_np.asarray(e) if type(e) is ArrayImpl else e for e in a] if a else a,
                        dtype=None if dtype is None else _dt.np_dtype(_name(dtype)))
        if a.dtype == _np.float64 and dtype is None:
            pass
    return core.to_array(a, None if dtype is None else _dt.np_dtype(_name(dtype)))


def _flat(xs):
    for x in xs:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def array(object, dtype=None, copy=True, ndmin=0):
    out = asarray(object, dtype=dtype)
    if ndmin and out.ndim < ndmin:
        out = reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


def _shape_tuple(shape):
    if isinstance(shape, int) or hasattr(shape, "__index__") and not isinstance(shape, (tuple, list)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _creation_dtype(dtype):
    return _dt.default_float_name() if dtype is None else _name(dtype)


def zeros(shape, dtype=None):
    return _core.full(_shape_tuple(shape), 0, _creation_dtype(dtype), False)


def ones(shape, dtype=None):
    return _core.full(_shape_tuple(shape), 1, _creation_dtype(dtype), False)


def full(shape, fill_value, dtype=None):
    if dtype is None:
        fv = asarray(fill_value) if not isinstance(fill_value, Tracer) else fill_value
        if isinstance(fv, Tracer) or fv.ndim:
            return broadcast_to(fv, _shape_tuple(shape))
        av = _aval(fv)
        return _core.full(_shape_tuple(shape), fv.item(), av.dtype_name, av.weak_type)
    return lax.full(_shape_tuple(shape), fill_value, _name(dtype))


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def zeros_like(a, dtype=None, shape=None):
    av = _aval(a)
    return zeros(av.shape if shape is None else shape, av.dtype if dtype is None else dtype)


def ones_like(a, dtype=None, shape=None):
    av = _aval(a)
    return ones(av.shape if shape is None else shape, av.dtype if dtype is None else dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    av = _aval(a)
    return full(av.shape if shape is None else shape, fill_value, av.dtype if dtype is None else dtype)


def arange(start, stop=None, step=None, dtype=None):
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


def astype(x, dtype):
    return lax.convert_element_type(x, dtype)


# -- shape --------------------------------------------------------------------

def shape(a):
    return _aval(a).shape


def ndim(a):
    return _aval(a).ndim


def size(a):
    return _aval(a).size


def reshape(a, newshape=None, order="C", *, shape=None):
    if shape is not None:
        newshape = shape
    if order != "C":
        raise NotImplementedError("only C order reshapes are supported")
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


def ravel(a, order="C"):
    return reshape(a, (-1,))


def _canon_axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < builtins.max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def transpose(a, axes=None):
    a = asarray(a) if not isinstance(a, Tracer) else a
    nd = _aval(a).ndim
    perm = tuple(reversed(range(nd))) if axes is None else tuple(_canon_axis(x, nd) for x in axes)
    return lax.transpose(a, perm)


def swapaxes(a, axis1, axis2):
    nd = _aval(a).ndim
    perm = list(range(nd))
    i, j = _canon_axis(axis1, nd), _canon_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, perm)


def squeeze(a, axis=None):
    av = _aval(a)
    if axis is None:
        dims = [i for i, d in enumerate(av.shape) if d == 1]
    else:
        axes = (axis,) if isinstance(axis, int) else axis
        dims = [_canon_axis(x, av.ndim) for x in axes]
    return lax.squeeze(a, dims)


def expand_dims(a, axis):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return lax.expand_dims(a, axes)


def broadcast_to(array, shape):
    (a,) = _promote(array) if type(array) in _SCALARS else (asarray(array),)
    shape = _shape_tuple(shape)
    av = _aval(a)
    if av.shape == ():
        return lax.broadcast_in_dim(a, shape, ())
    return _broadcast_to_shape(a, shape)


def stack(arrays, axis=0):
    raise NotImplementedError("stack needs the concatenate primitive (numpy-surface issue)")


# -- reductions ----------------------------------------------------------------

def _reduce_axes(av, axis):
    if axis is None:
        return tuple(range(av.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(_canon_axis(x, av.ndim) for x in axes))


def _keepdims(out, av, axes):
    shape = tuple(1 if i in axes else d for i, d in enumerate(av.shape))
    return lax.reshape(out, shape)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    if out is not None or where is not None:
        raise NotImplementedError("sum: out= and where= are not supported yet")
    (a,) = _promote(a)
    av = _aval(a)
    name = av.dtype_name
    if dtype is not None:
        a = lax.convert_element_type(a, dtype)
    elif name == "bool" or _dt.is_int_name(name):
        # As JAX: integer sums accumulate in the default (u)int width.
        target = ("uint64" if _dt.x64_enabled() else "uint32") if name.startswith("uint") \
            else _dt.default_int_name()
        if _np.dtype(name).itemsize < _np.dtype(target).itemsize or name == "bool":
            a = lax.convert_element_type(a, target)
    axes = _reduce_axes(av, axis)
    res = lax.reduce_sum(a, axes)
    if initial is not None:
        res = add(res, initial)
    return _keepdims(res, av, axes) if keepdims else res


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    if out is not None or where is not None or initial is not None:
        raise NotImplementedError("max: out=, initial= and where= are not supported yet")
    (a,) = _promote(a)
    av = _aval(a)
    axes = _reduce_axes(av, axis)
    if av.size == 0 and builtins.any(av.shape[i] == 0 for i in axes):
        raise ValueError("zero-size array to reduction operation max which has no identity")
    res = lax.reduce_max(a, axes)
    return _keepdims(res, av, axes) if keepdims else res


amax = max


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    av = _aval(a)
    if av.dtype_name == "bool" or av.dtype_name.startswith("uint"):
        raise NotImplementedError("min of unsigned/bool arrays needs reduce_min (numpy-surface issue)")
    return negative(max(negative(a), axis=axis, keepdims=keepdims))


amin = min


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    (a,) = _promote_inexact(a)
    av = _aval(a)
    axes = _reduce_axes(av, axis)
    n = 1
    for i in axes:
        n *= av.shape[i]
    return true_divide(sum(a, axis=axis, dtype=dtype, keepdims=keepdims), float(n))


# -- linear algebra -----------------------------------------------------------

def dot(a, b, precision=None, preferred_element_type=None):
    a, b = _promote_dtypes(a, b)
    la, lb = _aval(a), _aval(b)
    if la.ndim == 0 or lb.ndim == 0:
        return multiply(a, b)
    rc = 0 if lb.ndim == 1 else lb.ndim - 2
    return lax.dot_general(a, b, (((la.ndim - 1,), (rc,)), ((), ())),
                           preferred_element_type=preferred_element_type)


def matmul(a, b, precision=None, preferred_element_type=None):
    a, b = _promote_dtypes(a, b)
    la, lb = _aval(a), _aval(b)
    if la.ndim == 0 or lb.ndim == 0:
        raise ValueError("matmul: input operand does not have enough dimensions (rank-0 operand)")
    a_vec, b_vec = la.ndim == 1, lb.ndim == 1
    if a_vec:
        a = lax.reshape(a, (1,) + la.shape)
    if b_vec:
        b = lax.reshape(b, lb.shape + (1,))
    sa, sb = _aval(a).shape, _aval(b).shape
    if sa[-1] != sb[-2]:
        raise TypeError(f"matmul: contracting dimensions differ: {la.shape} @ {lb.shape}")
    batch = _broadcast_shapes(sa[:-2], sb[:-2])
    if batch:
        a = _broadcast_to_shape(a, batch + sa[-2:])
        b = _broadcast_to_shape(b, batch + sb[-2:])
    nb = len(batch)
    out = lax.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                          preferred_element_type=preferred_element_type)
    if a_vec:
        out = lax.squeeze(out, (nb,))
    if b_vec:
        out = lax.squeeze(out, (_aval(out).ndim - 1,))
    return out


def vdot(a, b):
    return dot(ravel(a), ravel(b))


def inner(a, b):
    a, b = _promote_dtypes(a, b)
    la, lb = _aval(a), _aval(b)
    if la.ndim == 0 or lb.ndim == 0:
        return multiply(a, b)
    return lax.dot_general(a, b, (((la.ndim - 1,), (lb.ndim - 1,)), ((), ())))


def outer(a, b):
    return multiply(reshape(a, (-1, 1)), ravel(b))
