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
generic, number, inexact, floating = _np.generic, _np.number, _np.inexact, _np.floating
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger
complexfloating = _np.complexfloating
ndarray = None  # replaced by microjax_rs.Array in package __init__
pi, e, inf, nan = _np.pi, _np.e, _np.inf, _np.nan
newaxis = None


def _name(d):
    return _dt.canonical_name(_dt.dtype_name(d))


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


def _promote_dtypes_inexact(*args):
    """Promotes dtypes to a common inexact dtype; shapes untouched."""
    for a in args:
        _check_arg(a)
    name, weak = _promote_pair_names(args)
    if not _dt.is_float_name(name):
        name = _dt.default_float_name()
    return [_convert(a, name, weak) for a in args]


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


def _bool_subtract(a, b):
    raise TypeError("jnp.subtract is not defined for boolean arrays; use logical_xor or bitwise_xor")


# add and multiply of booleans are logical or / and (as NumPy and JAX).
_BOOL_BINARY = {"add": lambda a, b: lax.max(a, b), "multiply": lambda a, b: lax.min(a, b),
                "subtract": _bool_subtract}


def _binary(lax_fn, inexact=False, doc=None, operator=None):
    """A jnp binary function. Eagerly, with concrete operands and an
    operator the Rust fast path implements, it defers to that operator (which
    does promotion and broadcasting in Rust and falls back to `_slow`)."""

    bool_fn = _BOOL_BINARY.get(doc)

    def slow(x1, x2):
        # Under a trace: two float tracers of one aval, or a float tracer and
        # a Python float, need no promotion or broadcasting.
        if type(x1) is Tracer:
            a1 = x1.aval
            t2 = type(x2)
            if t2 is Tracer:
                a2 = x2.aval
                if a1.dtype_name in _FLOAT_NAMES and (a1 is a2 or (
                        a1.dtype_name == a2.dtype_name and a1.weak_type == a2.weak_type
                        and a1.shape == a2.shape)):
                    return lax_fn(x1, x2)
            elif t2 is float and a1.dtype_name in _FLOAT_NAMES:
                return lax_fn(x1, x2)
        elif type(x1) is float and type(x2) is Tracer and x2.aval.dtype_name in _FLOAT_NAMES:
            return lax_fn(x1, x2)
        a, b = (_promote_inexact if inexact else _promote)(x1, x2)
        if bool_fn is not None and _aval(a).dtype_name == "bool":
            return bool_fn(a, b)
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


_FLOAT_NAMES = frozenset(("float16", "bfloat16", "float32", "float64"))


def _unary(lax_fn, inexact=True, name=None):
    prim = lax._P[lax_fn.__name__]
    handle = prim.handle({})
    ok_dtypes = _FLOAT_NAMES if inexact else None

    def fn(x, /):
        tx = type(x)
        if tx is ArrayImpl and not core._state.stack and (
                ok_dtypes is None or x.dtype_name in ok_dtypes):
            return handle.apply1(x)
        if tx is Tracer and x.aval.dtype_name in _FLOAT_NAMES:
            stack = core._state.stack
            if stack:  # nothing to promote: bind in the innermost trace
                return stack[-1].process_primitive(prim, (x,), {})
            return lax_fn(x)
        (a,) = (_promote_inexact if inexact else _promote)(x)
        return lax_fn(a)

    fn.__name__ = name or lax_fn.__name__
    fast = _core.FastUnary(handle, inexact, fn, prim)
    fast.__name__ = fast.__qualname__ = fn.__name__
    fast.__doc__ = f"Elementwise `{fn.__name__}` (jax.numpy.{fn.__name__}); Rust fast path for eager arrays."
    fast.__module__ = __name__
    fast.__wrapped__ = fn
    fast._slow = fn
    return fast


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


def _where_three(condition, x, y, /):
    """jnp.where(condition, x, y): promotion, broadcasting, select_n."""
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


where_ = _where_three  # for functions whose `where=` keyword shadows jnp.where


# -- creation -----------------------------------------------------------------

def asarray(a, dtype=None, copy=None):
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


def _shape_dim(d, shape):
    """One dimension of a shape argument: integers only (`__index__`), as JAX."""
    if hasattr(d, "__index__") and not isinstance(d, (float, _np.floating)):
        return _op.index(d)  # a tracer raises its concretization error here
    raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape!r}.")


def _shape_tuple(shape):
    if isinstance(shape, (int, _np.integer)) or hasattr(shape, "__index__") and not isinstance(shape, (tuple, list)):
        return (_shape_dim(shape, shape),)
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape!r}.")
    return tuple(_shape_dim(d, shape) for d in shape)


def _creation_shape(shape):
    shape = _shape_tuple(shape)
    if builtins.any(d < 0 for d in shape):
        raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, got {shape}.")
    return shape


def _creation_dtype(dtype):
    return _dt.default_float_name() if dtype is None else _name(dtype)


def zeros(shape, dtype=None):
    return _core.full(_creation_shape(shape), 0, _creation_dtype(dtype), False)


def ones(shape, dtype=None):
    return _core.full(_creation_shape(shape), 1, _creation_dtype(dtype), False)


def full(shape, fill_value, dtype=None):
    if dtype is None:
        fv = asarray(fill_value) if not isinstance(fill_value, Tracer) else fill_value
        if isinstance(fv, Tracer) or fv.ndim:
            return broadcast_to(fv, _shape_tuple(shape))
        av = _aval(fv)
        return _core.full(_creation_shape(shape), fv.item(), av.dtype_name, av.weak_type)
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


# -- reductions ----------------------------------------------------------------

def _reduce_axes(av, axis):
    if axis is None:
        return tuple(range(av.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(_canon_axis(x, av.ndim) for x in axes))


def _keepdims(out, av, axes):
    shape = tuple(1 if i in axes else d for i, d in enumerate(av.shape))
    return lax.reshape(out, shape)


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
    if a_vec or b_vec:
        # A vector operand contracts directly (one dot_general, as JAX emits):
        # its axis against the other's contracting axis, no batch axes.
        ca = 0 if a_vec else la.ndim - 1
        cb = 0 if b_vec else lb.ndim - 2
        if la.shape[ca] != lb.shape[cb]:
            raise TypeError(f"matmul: contracting dimensions differ: {la.shape} @ {lb.shape}")
        return lax.dot_general(a, b, (((ca,), (cb,)), ((), ())),
                               preferred_element_type=preferred_element_type)
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


# =============================================================================
# The numpy surface (issue 3). Everything below is built on lax primitives; a
# primitive that has not landed yet (rev, slice, concatenate, ...) is replaced
# by an exact formulation over existing ones (static one-hot selection), and
# the real primitive is used as soon as `lax` has it.
# =============================================================================

_LAX_PRIM = {"bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor", "bitwise_not": "not"}


def _has(name):
    """Whether lax.`name` exists and its primitive is built into the extension
    (the Python wrapper can land before the Rust primitive)."""
    return hasattr(lax, name) and _LAX_PRIM.get(name, name) in core._BUILTIN_NAMES


# -- dtype functions ----------------------------------------------------------

def result_type(*args):
    """JAX's result type of mixed arrays, scalars and dtypes (weak scalars lose to arrays)."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    return _dt.np_dtype(_promote_pair_names(args)[0])


def promote_types(a, b):
    """Promotion of two dtypes (no weak types), JAX's lattice."""
    name, _ = _dt.promote([(_name(a), False), (_name(b), False)])
    return _dt.np_dtype(name)


def _dtype_arg(x):
    if isinstance(x, (ArrayImpl, Tracer)):
        return _dt.np_dtype(_aval(x).dtype_name)
    if isinstance(x, _ScalarType):
        return x.dtype
    dt = getattr(x, "dtype", None)
    if isinstance(getattr(dt, "type", None), type) and issubclass(dt.type, _dt.extended):
        return dt  # a typed key array
    return x


def finfo(dtype):
    """Machine limits of a float dtype (NumPy's finfo; ml_dtypes' for bfloat16)."""
    name = _dt.dtype_name(_dtype_arg(dtype))
    if not _dt.is_float_name(name):
        raise ValueError(f"finfo: data type {name!r} not inexact")
    if name == "bfloat16":
        return _dt._ml_dtypes.finfo(_dt.bfloat16)
    return _np.finfo(_dt.np_dtype(name))


def iinfo(int_type):
    name = _dt.dtype_name(_dtype_arg(int_type))
    if not _dt.is_int_name(name):
        raise ValueError(f"Invalid integer data type {name!r}.")
    return _np.iinfo(_dt.np_dtype(name))


_ABSTRACT_FLOAT = (_np.floating, _np.inexact, _np.number, _np.generic)


def issubdtype(arg1, arg2):
    """As jnp.issubdtype; bfloat16 is a floating type; jnp scalar types work."""
    a1, a2 = _dtype_arg(arg1), _dtype_arg(arg2)
    if a1 is None:
        return False
    if isinstance(a2, type) and issubclass(a2, _dt.extended):
        return isinstance(getattr(a1, "type", None), type) and issubclass(a1.type, a2)
    if isinstance(getattr(a1, "type", None), type) and issubclass(a1.type, _dt.extended):
        return a1 == a2
    if isinstance(a2, type) and issubclass(a2, _np.generic) and a2 in (
            _np.generic, _np.number, _np.inexact, _np.floating, _np.integer, _np.signedinteger,
            _np.unsignedinteger, _np.bool_, _np.complexfloating):
        try:
            n1 = _dt.dtype_name(a1)
        except TypeError:
            return False
        if n1 == "bfloat16":
            return a2 in _ABSTRACT_FLOAT
        return bool(_np.issubdtype(_dt.np_dtype(n1), a2))
    try:
        return _dt.dtype_name(a1) == _dt.dtype_name(a2)
    except TypeError:
        return False


def isdtype(dtype, kind):
    name = _dt.dtype_name(_dtype_arg(dtype))
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            ok = {"bool": name == "bool",
                  "signed integer": name.startswith("int"),
                  "unsigned integer": name.startswith("uint"),
                  "integral": _dt.is_int_name(name),
                  "real floating": _dt.is_float_name(name),
                  "complex floating": False,
                  "numeric": name != "bool"}.get(k)
            if ok is None:
                raise ValueError(f"Unrecognized data type kind: {k!r}")
            if ok:
                return True
        elif _dt.dtype_name(_dtype_arg(k)) == name:
            return True
    return False


def can_cast(from_, to, casting="safe"):
    f = _dtype_arg(from_)
    if isinstance(f, _SCALARS):
        f = _dt.scalar_type_name(f)
    return bool(_np.can_cast(_dt.np_dtype(_dt.dtype_name(f)), _dt.np_dtype(_dt.dtype_name(_dtype_arg(to))),
                             casting=casting))


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
    return asarray(x)


# bool logic on existing primitives (min/max on bool are and/or).
def _not(b):
    if _has("bitwise_not"):
        return lax.bitwise_not(b)
    return lax.eq(b, _const(False, "bool"))


def _and(a, b):
    a, b = _promote(a, b)
    return lax.min(a, b)


def _or(a, b):
    a, b = _promote(a, b)
    return lax.max(a, b)


# -- elementwise math -----------------------------------------------------------

def _inexact1(x):
    (a,) = _promote_inexact(x)
    return a


def _lax_unary_or(name, fallback):
    """The jnp function for lax.`name` (inexact), or `fallback` until it lands."""
    def fn(x, /):
        a = _inexact1(x)
        if _has(name):
            return getattr(lax, name)(a)
        return fallback(a)
    return fn


_LN2 = 0.6931471805599453
_LN10 = 2.302585092994046

exp2 = _lax_unary_or("exp2", lambda a: lax.exp(lax.mul(a, _LN2)))
exp2.__name__ = "exp2"
expm1 = _lax_unary_or("expm1", lambda a: lax.sub(lax.exp(a), 1.0))
expm1.__name__ = "expm1"
log1p = _lax_unary_or("log1p", lambda a: lax.log(lax.add(a, 1.0)))
log1p.__name__ = "log1p"
tan = _lax_unary_or("tan", lambda a: lax.div(lax.sin(a), lax.cos(a)))
tan.__name__ = "tan"
sinh = _lax_unary_or("sinh", lambda a: lax.mul(lax.sub(lax.exp(a), lax.exp(lax.neg(a))), 0.5))
sinh.__name__ = "sinh"
cosh = _lax_unary_or("cosh", lambda a: lax.mul(lax.add(lax.exp(a), lax.exp(lax.neg(a))), 0.5))
cosh.__name__ = "cosh"
arcsinh = _lax_unary_or(
    "asinh", lambda a: lax.mul(lax.sign(a), lax.log(lax.add(lax.abs(a), lax.sqrt(lax.add(lax.mul(a, a), 1.0))))))
arcsinh.__name__ = "arcsinh"
arccosh = _lax_unary_or("acosh", lambda a: lax.log(lax.add(a, lax.sqrt(lax.sub(lax.mul(a, a), 1.0)))))
arccosh.__name__ = "arccosh"
_old_arctanh = arctanh
arctanh = _lax_unary_or("atanh", _old_arctanh)
arctanh.__name__ = "arctanh"
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def _nan_like(a):
    return lax.div(lax.sub(a, a), lax.sub(a, a))


def log2(x, /):
    a = _inexact1(x)
    return lax.div(lax.log(a), _LN2)


def log10(x, /):
    a = _inexact1(x)
    return lax.div(lax.log(a), _LN10)


def cbrt(x, /):
    a = _inexact1(x)
    if _has("cbrt"):
        return lax.cbrt(a)
    return lax.mul(lax.sign(a), lax.pow(lax.abs(a), 1.0 / 3.0))


def reciprocal(x, /):
    a = _inexact1(x)
    return lax.integer_pow(a, -1)


def deg2rad(x, /):
    return lax.mul(_inexact1(x), _np.pi / 180)


def rad2deg(x, /):
    return lax.mul(_inexact1(x), 180 / _np.pi)


radians, degrees = deg2rad, rad2deg


def isnan(x, /):
    a = _arr(x)
    if not _is_float(a):
        return full(_aval(a).shape, False, "bool")
    return lax.ne(a, a)


def isinf(x, /):
    a = _arr(x)
    if not _is_float(a):
        return full(_aval(a).shape, False, "bool")
    return lax.eq(lax.abs(a), _np.inf)


def isposinf(x, /):
    a = _arr(x)
    if not _is_float(a):
        return full(_aval(a).shape, False, "bool")
    return lax.eq(a, _np.inf)


def isneginf(x, /):
    a = _arr(x)
    if not _is_float(a):
        return full(_aval(a).shape, False, "bool")
    return lax.eq(a, -_np.inf)


def isfinite(x, /):
    a = _arr(x)
    if not _is_float(a):
        return full(_aval(a).shape, True, "bool")
    if _has("is_finite"):
        return lax.is_finite(a)
    return lax.lt(lax.abs(a), _np.inf)


def signbit(x, /):
    a = _arr(x)
    if _is_bool(a) or _aval(a).dtype_name.startswith("uint"):
        return full(_aval(a).shape, False, "bool")
    if _is_int(a):
        return lax.lt(a, 0)
    # -0.0 has its sign bit set: 1/-0.0 = -inf.
    return _or(lax.lt(a, 0.0), lax.lt(lax.div(1.0, a), 0.0))


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """jnp.clip(arr, min, max) (also the deprecated a/a_min/a_max names)."""
    if arr is None:
        arr = a
    if a_min is not None:
        min = a_min
    if a_max is not None:
        max = a_max
    (x,) = _promote(arr)
    if min is not None:
        x = maximum(min, x)
    if max is not None:
        x = minimum(max, x)
    return x


def hypot(x1, x2, /):
    a, b = _promote_inexact(x1, x2)
    a, b = lax.abs(a), lax.abs(b)
    big, small = lax.max(a, b), lax.min(a, b)
    safe_big = where(lax.eq(big, 0.0), 1.0, big)
    r = lax.div(small, safe_big)
    out = lax.mul(big, lax.sqrt(lax.add(1.0, lax.mul(r, r))))
    return where(lax.eq(big, 0.0), 0.0, where(lax.eq(big, _np.inf), _np.inf, out))


def logaddexp(x1, x2, /):
    a, b = _promote_inexact(x1, x2)
    amax = lax.max(a, b)
    delta = lax.sub(a, b)
    out = lax.add(amax, log1p(lax.exp(lax.neg(lax.abs(delta)))))
    # Equal infinities: delta is nan, the answer is a + b (inf or -inf).
    return where(lax.ne(delta, delta), lax.add(a, b), out)


def logaddexp2(x1, x2, /):
    a, b = _promote_inexact(x1, x2)
    amax = lax.max(a, b)
    delta = lax.sub(a, b)
    out = lax.add(amax, lax.div(log1p(exp2(lax.neg(lax.abs(delta)))), _LN2))
    return where(lax.ne(delta, delta), lax.add(a, b), out)


def sinc(x, /):
    a = _inexact1(x)
    is_zero = lax.eq(a, 0.0)
    safe = where(is_zero, 1.0, a)
    pix = lax.mul(safe, _np.pi)
    # At 0, the second-order Taylor polynomial (exact value 1, correct first
    # and second derivatives under grad).
    pia = lax.mul(a, _np.pi)
    taylor = lax.sub(1.0, lax.div(lax.mul(pia, pia), 6.0))
    return where(is_zero, taylor, lax.div(lax.sin(pix), pix))


def heaviside(x1, x2, /):
    a, b = _promote_inexact(x1, x2)
    return where(lax.lt(a, 0.0), 0.0, where(lax.gt(a, 0.0), 1.0, b))


def fmax(x1, x2, /):
    a, b = _promote(x1, x2)
    if not _is_float(a):
        return lax.max(a, b)
    return where(isnan(b), a, where(isnan(a), b, lax.max(a, b)))


def fmin(x1, x2, /):
    a, b = _promote(x1, x2)
    if not _is_float(a):
        return lax.min(a, b)
    return where(isnan(b), a, where(isnan(a), b, lax.min(a, b)))


def float_power(x1, x2, /):
    a, b = _promote_inexact(x1, x2)
    return lax.pow(a, b)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    a = _arr(x)
    if not _is_float(a):
        return a
    info = finfo(_aval(a).dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    out = where(lax.ne(a, a), nan, a)
    out = where(lax.eq(out, _np.inf), posinf, out)
    return where(lax.eq(out, -_np.inf), neginf, out)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _promote(a, b)
    if not _is_float(a):
        if _is_bool(a):
            return lax.eq(a, b)
        a, b = _promote_inexact(a, b)
    out = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    # Infinities are close only to themselves.
    both_inf = _and(isinf(a), isinf(b))
    out = where(_or(isinf(a), isinf(b)), _and(both_inf, lax.eq(a, b)), out)
    if equal_nan:
        out = _or(out, _and(isnan(a), isnan(b)))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = _arr(a1), _arr(a2)
    if _aval(a1).shape != _aval(a2).shape:
        return asarray(False)
    a1, a2 = _promote_dtypes(a1, a2)
    eq = lax.eq(a1, a2)
    if equal_nan and _is_float(a1):
        eq = _or(eq, _and(isnan(a1), isnan(a2)))
    return all(eq)


def array_equiv(a1, a2):
    a1, a2 = _arr(a1), _arr(a2)
    try:
        _broadcast_shapes(_aval(a1).shape, _aval(a2).shape)
    except ValueError:
        return asarray(False)
    return all(equal(a1, a2))


def logical_not(x, /):
    a = _arr(x)
    return _not(a if _is_bool(a) else lax.ne(a, _const(0, _aval(a).dtype_name)))


def _to_bool(x):
    a = _arr(x)
    return a if _is_bool(a) else not_equal(a, 0)


def logical_and(x1, x2, /):
    return _and(_to_bool(x1), _to_bool(x2))


def logical_or(x1, x2, /):
    return _or(_to_bool(x1), _to_bool(x2))


def logical_xor(x1, x2, /):
    return not_equal(_to_bool(x1), _to_bool(x2))


def _int_bitop(name, bool_fn):
    def fn(x1, x2, /):
        a, b = _promote(x1, x2)
        if _is_float(a):
            raise TypeError(f"{name} is only defined for integer and boolean types, got {_aval(a).dtype_name}")
        lax_name = {"bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
                    "bitwise_xor": "bitwise_xor"}[name]
        if _has(lax_name):
            return getattr(lax, lax_name)(a, b)
        if _is_bool(a):
            return bool_fn(a, b)
        raise NotImplementedError(f"{name} on integers needs lax.{lax_name}")
    fn.__name__ = name
    return fn


bitwise_and = _int_bitop("bitwise_and", lambda a, b: lax.min(a, b))
bitwise_or = _int_bitop("bitwise_or", lambda a, b: lax.max(a, b))
bitwise_xor = _int_bitop("bitwise_xor", lambda a, b: lax.ne(a, b))


def invert(x, /):
    a = _arr(x)
    if _is_float(a):
        raise TypeError(f"invert is only defined for integer and boolean types, got {_aval(a).dtype_name}")
    if _is_bool(a):
        return _not(a)
    if _has("bitwise_not"):
        return lax.bitwise_not(a)
    # ~x == -x - 1 in two's complement (wrapping arithmetic).
    return lax.sub(lax.neg(a), _const(1, _aval(a).dtype_name))


bitwise_not = bitwise_invert = invert


def _floor_fallback(a):
    raise NotImplementedError("floor/ceil/round need the lax.floor/ceil/round primitives")


def floor(x, /):
    a = _arr(x)
    if not _is_float(a):
        return a
    return lax.floor(a) if _has("floor") else _floor_fallback(a)


def ceil(x, /):
    a = _arr(x)
    if not _is_float(a):
        return a
    return lax.ceil(a) if _has("ceil") else _floor_fallback(a)


def trunc(x, /):
    a = _arr(x)
    if not _is_float(a):
        return a
    return where(lax.lt(a, 0.0), ceil(a), floor(a))


fix = trunc


def round(a, decimals=0, out=None):
    x = _arr(a)
    if not _is_float(x):
        if decimals < 0:
            raise NotImplementedError("round of integers with negative decimals")
        return x
    if not _has("round"):
        _floor_fallback(x)

    def _r(v):
        try:
            return lax.round(v, lax.RoundingMethod.TO_NEAREST_EVEN)
        except (AttributeError, TypeError):
            return lax.round(v, 1)

    if decimals == 0:
        return _r(x)
    factor = 10.0 ** decimals
    return lax.div(_r(lax.mul(x, factor)), factor)


around = round


def rint(x, /):
    return round(_inexact1(x))


def floor_divide(x1, x2, /):
    a, b = _promote(x1, x2)
    if _is_float(a):
        return floor(lax.div(a, b))
    if _is_bool(a):
        raise TypeError("floor_divide is not defined for booleans")
    # Integer floor division from truncating division.
    q = lax.div(a, b)
    r = lax.sub(a, lax.mul(q, b))
    zero = _const(0, _aval(a).dtype_name)
    adjust = _and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(b, zero)))
    return where(adjust, lax.sub(q, _const(1, _aval(a).dtype_name)), q)


def remainder(x1, x2, /):
    a, b = _promote(x1, x2)
    if _is_bool(a):
        raise TypeError("remainder is not defined for booleans")
    if _is_float(a):
        if _has("rem"):
            r = lax.rem(a, b)
        else:
            r = lax.sub(a, lax.mul(trunc(lax.div(a, b)), b))
        zero = 0.0
    else:
        r = lax.sub(a, lax.mul(lax.div(a, b), b))
        zero = _const(0, _aval(a).dtype_name)
    adjust = _and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(b, zero)))
    return where(adjust, lax.add(r, b), r)


mod = remainder


def fmod(x1, x2, /):
    a, b = _promote(x1, x2)
    if _is_float(a):
        if _has("rem"):
            return lax.rem(a, b)
        return lax.sub(a, lax.mul(trunc(lax.div(a, b)), b))
    return lax.sub(a, lax.mul(lax.div(a, b), b))


def divmod(x1, x2, /):
    return floor_divide(x1, x2), remainder(x1, x2)


def _int_power(base, exponent):
    """Integer power with an integer array exponent: square-and-multiply over
    the exponent's bits (unrolled; negative exponents give 0 except for ±1)."""
    name = _aval(base).dtype_name
    one = _const(1, name)
    zero = _const(0, name)
    bits = _np.dtype(name).itemsize * 8
    acc = lax.add(lax.mul(base, zero), one)
    acc = _broadcast_to_shape(acc, _broadcast_shapes(_aval(base).shape, _aval(exponent).shape))
    b = base
    e = exponent
    two = _const(2, name)
    for _ in range(bits):
        bit = lax.ne(lax.sub(e, lax.mul(lax.div(e, two), two)), zero)
        acc = where(bit, lax.mul(acc, b), acc)
        b = lax.mul(b, b)
        e = lax.div(e, two)
    neg = lax.lt(exponent, zero) if not name.startswith("uint") else None
    if neg is not None:
        # x ** -n: 1 for x == 1, ±1 for x == -1, 0 otherwise (as JAX).
        minus_one = lax.neg(one)
        odd = lax.ne(lax.sub(exponent, lax.mul(lax.div(exponent, two), two)), zero)
        inv = where(lax.eq(base, one), one,
                    where(lax.eq(base, minus_one), where(odd, minus_one, one), zero))
        acc = where(neg, inv, acc)
    return acc


def power(x1, x2, /):
    if type(x2) is int and not isinstance(x1, _SCALARS):
        (a,) = _promote(x1)
        if x2 < 0 and not _is_float(a):
            raise ValueError("Integers to negative integer powers are not allowed.")
        return lax.integer_pow(a, x2)
    a, b = _promote(x1, x2)
    if _is_float(a):
        return lax.pow(a, b)
    if _is_bool(a):
        raise TypeError("power is not defined for booleans")
    return _int_power(a, b)


pow = power


def copysign(x1, x2, /):
    a, b = _promote_inexact(x1, x2)
    return where(signbit(b), lax.neg(lax.abs(a)), lax.abs(a))


def arctan2(x1, x2, /):
    a, b = _promote_inexact(x1, x2)
    if _has("atan2"):
        return lax.atan2(a, b)
    raise NotImplementedError("arctan2 needs the lax.atan2 primitive")


atan2 = arctan2


def arctan(x, /):
    a = _inexact1(x)
    if _has("atan"):
        return lax.atan(a)
    raise NotImplementedError("arctan needs the lax.atan primitive")


def arcsin(x, /):
    a = _inexact1(x)
    if _has("asin"):
        return lax.asin(a)
    raise NotImplementedError("arcsin needs the lax.asin primitive")


def arccos(x, /):
    a = _inexact1(x)
    if _has("acos"):
        return lax.acos(a)
    raise NotImplementedError("arccos needs the lax.acos primitive")


atan, asin, acos = arctan, arcsin, arccos


def conjugate(x, /):
    return _arr(x)


conj = conjugate


def real(x, /):
    return _arr(x)


def imag(x, /):
    return zeros_like(_arr(x))


def _left_right_shift(name):
    def fn(x1, x2, /):
        a, b = _promote(x1, x2)
        if not _is_int(a):
            raise TypeError(f"{name} is only defined for integer types")
        if name == "left_shift":
            lname = "shift_left"
        else:
            lname = "shift_right_logical" if _aval(a).dtype_name.startswith("uint") else "shift_right_arithmetic"
        if not _has(lname):
            raise NotImplementedError(f"{name} needs lax.{lname}")
        return getattr(lax, lname)(a, b)
    fn.__name__ = name
    return fn


left_shift = _left_right_shift("left_shift")
right_shift = _left_right_shift("right_shift")


# -- reductions ----------------------------------------------------------------

def _reduce_prep(a, axis, where_):
    (a,) = _promote(a)
    av = _aval(a)
    axes = _reduce_axes(av, axis)
    if where_ is not None:
        where_ = _to_bool(where_)
        _broadcast_shapes(_aval(where_).shape, av.shape)
        if _aval(where_).shape != av.shape:
            where_ = _broadcast_to_shape(where_, av.shape)
    return a, av, axes, where_


def _finish(res, av, axes, keepdims):
    return _keepdims(res, av, axes) if keepdims else res


def _sum_dtype(name):
    if name == "bool" or _dt.is_int_name(name):
        # As JAX: integer sums accumulate in the default (u)int width.
        target = ("uint64" if _dt.x64_enabled() else "uint32") if name.startswith("uint") \
            else _dt.default_int_name()
        if name == "bool" or _np.dtype(name).itemsize < _np.dtype(target).itemsize:
            return target
    return name


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.sum is not supported.")
    a, av, axes, w = _reduce_prep(a, axis, where)
    if dtype is not None:
        a = lax.convert_element_type(a, dtype)
    elif promote_integers:
        target = _sum_dtype(av.dtype_name)
        if target != av.dtype_name:
            a = lax.convert_element_type(a, target)
    elif av.dtype_name == "bool":
        a = lax.convert_element_type(a, _dt.default_int_name())
    if w is not None:
        a = _where_zero(w, a)
    res = lax.reduce_sum(a, axes)
    if initial is not None:
        res = lax.add(res, _initial(initial, res))
    return _finish(res, av, axes, keepdims)


def _initial(initial, like):
    """`initial=` converted to the reduction's dtype (as JAX)."""
    name = _aval(like).dtype_name
    if type(initial) in _SCALARS:
        return _const(initial, name)
    return lax.convert_element_type(_arr(initial), name)


def _where_zero(w, a):
    """where(w, a, 0) in a's dtype."""
    return where_(w, a, 0)


def _identity_for(name, kind):
    """The identity of max (kind='max') or min (kind='min') for a dtype."""
    if name == "bool":
        return kind == "min"
    if _dt.is_float_name(name):
        return -_np.inf if kind == "max" else _np.inf
    info = _np.iinfo(_np.dtype(name))
    return int(info.min) if kind == "max" else int(info.max)


def _reduce_min_prim(a, axes):
    if _has("reduce_min"):
        return lax.reduce_min(a, axes)
    name = _aval(a).dtype_name
    if name == "bool":
        return _not(lax.reduce_max(_not(a), axes))
    if name.startswith("uint"):
        top = _const(int(_np.iinfo(_np.dtype(name)).max), name)
        return lax.sub(top, lax.reduce_max(lax.sub(top, a), axes))
    if _dt.is_int_name(name):
        # -max(-x) overflows only for INT_MIN: use ~max(~x) (= -1 - max(-1 - x)).
        m1 = _const(-1, name)
        return lax.sub(m1, lax.reduce_max(lax.sub(m1, a), axes))
    return lax.neg(lax.reduce_max(lax.neg(a), axes))


def _minmax(kind, a, axis, keepdims, initial, where):
    a, av, axes, w = _reduce_prep(a, axis, where)
    if w is not None and initial is None:
        raise ValueError(f"reduction operation {kind} does not have an identity, so to use a "
                         f"where mask one has to specify 'initial'")
    if initial is None and av.size == 0 and builtins.any(av.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {kind} which has no identity")
    if w is not None:
        a = where_(w, a, _const(_identity_for(av.dtype_name, kind), av.dtype_name))
    res = lax.reduce_max(a, axes) if kind == "max" else _reduce_min_prim(a, axes)
    if initial is not None:
        res = (lax.max if kind == "max" else lax.min)(res, _initial(initial, res))
    return _finish(res, av, axes, keepdims)




def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _minmax("max", a, axis, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _minmax("min", a, axis, keepdims, initial, where)


amax, amin = max, min


def ptp(a, axis=None, out=None, keepdims=False):
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
    a, av, axes, w = _reduce_prep(a, axis, where)
    if dtype is not None:
        a = lax.convert_element_type(a, dtype)
    elif promote_integers:
        target = _sum_dtype(av.dtype_name)
        if target != av.dtype_name:
            a = lax.convert_element_type(a, target)
    if w is not None:
        a = where_(w, a, _const(1, _aval(a).dtype_name))
    if not _has("reduce_prod"):
        raise NotImplementedError("jnp.prod needs the lax.reduce_prod primitive")
    res = lax.reduce_prod(a, axes)
    if initial is not None:
        res = lax.mul(res, _initial(initial, res))
    return _finish(res, av, axes, keepdims)


product = prod


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    a, av, axes, w = _reduce_prep(a, axis, where)
    b = _to_bool(a)
    if w is not None:
        b = _and(b, w)
    res = lax.reduce_or(b, axes) if _has("reduce_or") else lax.reduce_max(b, axes)
    return _finish(res, av, axes, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    a, av, axes, w = _reduce_prep(a, axis, where)
    if _has("reduce_and"):
        b = _to_bool(a)
        if w is not None:
            b = _or(b, _not(w))
        return _finish(lax.reduce_and(b, axes), av, axes, keepdims)
    nb = _not(_to_bool(a))
    if w is not None:
        nb = _and(nb, w)
    return _finish(_not(lax.reduce_max(nb, axes)), av, axes, keepdims)


alltrue, sometrue = all, any


def count_nonzero(a, axis=None, keepdims=False):
    return sum(_to_bool(_arr(a)), axis=axis, keepdims=keepdims, dtype=_dt.default_int_name())


def _upcast_f16(name):
    return "float32" if name in ("float16", "bfloat16") else name


def _count(av, axes, w, dtype_name):
    if w is None:
        n = 1
        for i in axes:
            n *= av.shape[i]
        return _const(n, dtype_name)
    return lax.reduce_sum(lax.convert_element_type(w, dtype_name), axes)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    a, av, axes, w = _reduce_prep(a, axis, where)
    if dtype is None:
        name = av.dtype_name if _dt.is_float_name(av.dtype_name) else _dt.default_float_name()
    else:
        name = _name(dtype)
    comp = _upcast_f16(name)
    x = lax.convert_element_type(a, comp) if av.dtype_name != comp else a
    if w is not None:
        x = _where_zero(w, x)
    s = lax.reduce_sum(x, axes)
    res = lax.div(s, _count(av, axes, w, comp))
    res = lax.convert_element_type(res, name) if comp != name else res
    return _finish(res, av, axes, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    if correction is not None:
        ddof = correction
    a, av, axes, w = _reduce_prep(a, axis, where)
    if dtype is None:
        name = av.dtype_name if _dt.is_float_name(av.dtype_name) else _dt.default_float_name()
    else:
        name = _name(dtype)
    comp = _upcast_f16(name)
    x = lax.convert_element_type(a, comp) if av.dtype_name != comp else a
    n = _count(av, axes, w, comp)
    xs = _where_zero(w, x) if w is not None else x
    mu = lax.div(lax.reduce_sum(xs, axes), n)
    keep_shape = tuple(1 if i in axes else d for i, d in enumerate(av.shape))
    centered = lax.sub(x, _broadcast_to_shape(lax.reshape(mu, keep_shape), av.shape))
    sq = lax.mul(centered, centered)
    if w is not None:
        sq = _where_zero(w, sq)
    res = lax.div(lax.reduce_sum(sq, axes), lax.sub(n, float(ddof)))
    res = lax.convert_element_type(res, name) if comp != name else res
    return _finish(res, av, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    return sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where,
                    correction=correction))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        av = _aval(_arr(a))
        axes = _reduce_axes(av, axis)
        n = 1
        for i in axes:
            n *= av.shape[i]
        wsum = full(_aval(avg).shape, n, _aval(avg).dtype)
    else:
        a, w = _promote_dtypes_inexact(_arr(a), _arr(weights))
        av, wv = _aval(a), _aval(w)
        if wv.shape != av.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if wv.ndim != 1:
                raise TypeError("1D weights expected when shapes of a and weights differ.")
            ax = _canon_axis(axis, av.ndim)
            if wv.shape[0] != av.shape[ax]:
                raise ValueError("Length of weights not compatible with specified axis.")
            w = lax.broadcast_in_dim(w, av.shape, (ax,))
        wsum = sum(w, axis=axis, keepdims=keepdims)
        avg = divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), wsum)
    if returned:
        if _aval(wsum).shape != _aval(avg).shape:
            wsum = broadcast_to(wsum, _aval(avg).shape)
        return avg, wsum
    return avg


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a = _arr(a)
    if _is_float(a):
        a = where_(isnan(a), 0.0, a)
    return sum(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a = _arr(a)
    if _is_float(a):
        a = where_(isnan(a), 1.0, a)
    return prod(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    a = _arr(a)
    if not _is_float(a):
        return max(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
    res = max(where_(isnan(a), -_np.inf, a), axis=axis, keepdims=keepdims, initial=initial, where=where)
    all_nan = all(isnan(a), axis=axis, keepdims=keepdims)
    return where_(all_nan, _np.nan, res)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    a = _arr(a)
    if not _is_float(a):
        return min(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
    res = min(where_(isnan(a), _np.inf, a), axis=axis, keepdims=keepdims, initial=initial, where=where)
    all_nan = all(isnan(a), axis=axis, keepdims=keepdims)
    return where_(all_nan, _np.nan, res)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    a = _arr(a)
    if not _is_float(a):
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    ok = _not(isnan(a))
    if where is not None:
        ok = _and(ok, _to_bool(where))
    return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=ok)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    a = _arr(a)
    if not _is_float(a):
        return var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where)
    ok = _not(isnan(a))
    if where is not None:
        ok = _and(ok, _to_bool(where))
    return var(where_(ok, a, 0.0), axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=ok)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    return sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where))


def _arg_reduce(kind, a, axis, keepdims):
    a = _arr(a)
    av = _aval(a)
    if axis is None:
        if keepdims:
            res = _arg_reduce(kind, ravel(a), 0, False)
            return lax.reshape(res, (1,) * av.ndim)
        a = ravel(a)
        av = _aval(a)
        axis = 0
    ax = _canon_axis(axis, av.ndim)
    if av.shape[ax] == 0:
        raise ValueError(f"attempt to get {kind} of an empty sequence")
    idx_name = _dt.default_int_name()
    lax_name = kind
    if _has(lax_name):
        res = getattr(lax, lax_name)(a, ax, _dt.np_dtype(idx_name))
    else:
        ext = lax.reduce_max(a, (ax,)) if kind == "argmax" else _reduce_min_prim(a, (ax,))
        keep_shape = tuple(1 if i == ax else d for i, d in enumerate(av.shape))
        hit = lax.eq(a, _broadcast_to_shape(lax.reshape(ext, keep_shape), av.shape))
        if _is_float(a):
            hit = _or(hit, isnan(a))
        iota = lax.broadcasted_iota(idx_name, av.shape, ax)
        cand = lax.select_n(hit, _broadcast_to_shape(_const(av.shape[ax], idx_name), av.shape), iota)
        res = _reduce_min_prim(cand, (ax,))
    return _finish(res, av, (ax,), keepdims)


def argmax(a, axis=None, out=None, keepdims=None):
    return _arg_reduce("argmax", a, axis, bool(keepdims))


def argmin(a, axis=None, out=None, keepdims=None):
    return _arg_reduce("argmin", a, axis, bool(keepdims))


def nanargmax(a, axis=None, out=None, keepdims=None):
    a = _arr(a)
    if not _is_float(a):
        return argmax(a, axis=axis, keepdims=keepdims)
    return argmax(where_(isnan(a), -_np.inf, a), axis=axis, keepdims=keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    a = _arr(a)
    if not _is_float(a):
        return argmin(a, axis=axis, keepdims=keepdims)
    return argmin(where_(isnan(a), _np.inf, a), axis=axis, keepdims=keepdims)


# -- static selection along an axis -------------------------------------------------
# `_take_static(x, axis, idx)` = x[..., idx, ...] for a static list of valid
# indices: a concatenation of contiguous runs (slice/rev) when there are few
# runs, else one gather.

def _runs(idx):
    """Splits idx into maximal runs of step +1 or -1: (start, stop, step)."""
    runs = []
    i, n = 0, len(idx)
    while i < n:
        j = i + 1
        step = 1
        if j < n and idx[j] - idx[i] in (1, -1):
            step = idx[j] - idx[i]
            while j < n and idx[j] - idx[j - 1] == step:
                j += 1
        runs.append((idx[i], idx[j - 1], step))
        i = j
    return runs


def _slice_prim(x, axis, lo, hi):
    av = _aval(x)
    start = [0] * av.ndim
    limit = list(av.shape)
    start[axis], limit[axis] = lo, hi
    if lo == 0 and hi == av.shape[axis]:
        return x
    return lax.slice(x, start, limit)


def _take_static(x, axis, idx):
    av = _aval(x)
    n = av.shape[axis]
    idx = [int(i) for i in idx]
    if idx == list(range(n)):
        return x
    if not idx:
        shape = list(av.shape)
        shape[axis] = 0
        return lax.broadcast_in_dim(_const(0, av.dtype_name), tuple(shape), ())
    runs = _runs(idx)
    if len(runs) <= 8:
        if builtins.all(r[2] == 1 for r in runs) or _has("rev"):
            pieces = []
            for first, last, step in runs:
                lo, hi = (first, last + 1) if step == 1 else (last, first + 1)
                p = _slice_prim(x, axis, lo, hi)
                if step == -1:
                    p = lax.rev(p, (axis,))
                pieces.append(p)
            return pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, axis)
    return _take_gather(x, axis, idx)


def _take_gather(x, axis, idx):
    """x[..., idx, ...] for a static list of valid indices: one gather."""
    return _take_dynamic(x, axis, asarray(_np.asarray(idx, dtype=_np.int32)))


def _take_dynamic(x, axis, idx):
    """x[..., idx, ...] for an integer array `idx` clamped into range: one gather."""
    x = _arr(x)
    idx = _arr(idx)
    name = _aval(idx).dtype_name if _dt.is_int_name(_aval(idx).dtype_name) else "int32"
    n = _aval(x).shape[axis]
    idx = lax.convert_element_type(idx, name)
    idx = lax.max(lax.min(idx, _const(builtins.max(n - 1, 0), name)), _const(0, name))
    ndim = _aval(x).ndim
    items = [slice(None)] * axis + [idx] + [slice(None)] * (ndim - axis - 1)
    return _indexing._gather_items(x, items, "clip", None, False, False)


def _slice_axis(x, axis, start, stop, step=1):
    n = _aval(x).shape[axis]
    idx = list(range(n))[slice(start, stop, step)]
    if step == 1 and _has("slice"):
        if not idx:
            return _take_static(x, axis, [])
        return _slice_prim(x, axis, idx[0], idx[-1] + 1)
    if step != 1 and idx and _has("slice"):
        try:
            av = _aval(x)
            if step > 0:
                s = [0] * av.ndim
                lim = list(av.shape)
                strides = [1] * av.ndim
                s[axis], lim[axis], strides[axis] = idx[0], idx[-1] + 1, step
                return lax.slice(x, s, lim, strides)
        except TypeError:
            pass
    return _take_static(x, axis, idx)


def _concat(xs, axis):
    """Concatenation of same-dtype arrays along an existing axis."""
    xs = [x for x in xs]
    if len(xs) == 1:
        return xs[0]
    if _has("concatenate"):
        return lax.concatenate(xs, axis)
    shapes = [_aval(x).shape for x in xs]
    total = builtins.sum(s[axis] for s in shapes)
    out_shape = list(shapes[0])
    out_shape[axis] = total
    out_shape = tuple(out_shape)
    pos = _np.arange(total)
    out = None
    off = 0
    for x, s in zip(xs, shapes):
        k = s[axis]
        if k == 0:
            continue
        idx = _np.clip(pos - off, 0, k - 1)
        piece = _take_gather(x, axis, idx)
        if out is None:
            out = piece
        else:
            sel = (pos >= off) & (pos < off + k)
            m = lax.broadcast_in_dim(core.to_array(sel), out_shape, (axis,))
            out = lax.select_n(m, out, piece)
        off += k
    if out is None:
        return _take_static(xs[0], axis, [])
    return out


def _rev(x, axes):
    axes = tuple(axes)
    if not axes:
        return x
    if _has("rev"):
        return lax.rev(x, axes)
    for ax in axes:
        n = _aval(x).shape[ax]
        x = _take_static(x, ax, list(range(n - 1, -1, -1)))
    return x


# -- shape manipulation --------------------------------------------------------

def _axes_arg(axis, nd):
    if isinstance(axis, (tuple, list)):
        return tuple(_canon_axis(a, nd) for a in axis)
    return (_canon_axis(axis, nd),)


def moveaxis(a, source, destination):
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
    a = _arr(a)
    nd = _aval(a).ndim
    axis = _canon_axis(axis, nd)
    if start < 0:
        start += nd
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def broadcast_arrays(*args):
    arrs = [_arr(a) for a in args]
    shape = _broadcast_shapes(*(_aval(a).shape for a in arrs))
    return [broadcast_to(a, shape) for a in arrs]


def atleast_1d(*arys):
    out = [reshape(_arr(a), (1,)) if _aval(_arr(a)).ndim == 0 else _arr(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        a = _arr(a)
        nd = _aval(a).ndim
        out.append(reshape(a, (1,) * (2 - nd) + _aval(a).shape) if nd < 2 else a)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    out = []
    for a in arys:
        a = _arr(a)
        s = _aval(a).shape
        if len(s) == 0:
            a = reshape(a, (1, 1, 1))
        elif len(s) == 1:
            a = reshape(a, (1, s[0], 1))
        elif len(s) == 2:
            a = reshape(a, s + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def flip(m, axis=None):
    m = _arr(m)
    nd = _aval(m).ndim
    axes = tuple(range(nd)) if axis is None else _axes_arg(axis, nd)
    return _rev(m, axes)


def fliplr(m):
    m = _arr(m)
    if _aval(m).ndim < 2:
        raise ValueError("fliplr requires an array of at least 2 dimensions")
    return _rev(m, (1,))


def flipud(m):
    m = _arr(m)
    if _aval(m).ndim < 1:
        raise ValueError("flipud requires an array of at least 1 dimension")
    return _rev(m, (0,))


def rot90(m, k=1, axes=(0, 1)):
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


def _concat_prep(arrays, what):
    if isinstance(arrays, (ArrayImpl, Tracer, _np.ndarray)):
        arrs = [arrays[i] for i in range(_aval(arrays).shape[0])]
    else:
        arrs = list(arrays)
    if not arrs:
        raise ValueError(f"Need at least one array to {what}.")
    arrs = [_arr(a) for a in arrs]
    return _promote_dtypes(*arrs)


def _typed_keys(*xs):
    """The random module when one of `xs` is a typed PRNG key array."""
    from .. import random as _random
    return _random if builtins.any(isinstance(x, _random.PRNGKeyArray) for x in xs) else None


def concatenate(arrays, axis=0, dtype=None):
    if isinstance(arrays, (list, tuple)) and (keys := _typed_keys(*arrays)):
        return keys.concatenate_keys(arrays, axis)
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


def stack(arrays, axis=0, out=None, dtype=None):
    if isinstance(arrays, (list, tuple)) and (keys := _typed_keys(*arrays)):
        return keys.stack_keys(arrays, axis)
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
    return concatenate([atleast_2d(a) for a in tup], axis=0, dtype=dtype)


row_stack = vstack


def hstack(tup, dtype=None):
    arrs = [atleast_1d(a) for a in tup]
    axis = 0 if arrs and _aval(arrs[0]).ndim == 1 else 1
    return concatenate(arrs, axis=axis, dtype=dtype)


def dstack(tup, dtype=None):
    return concatenate([atleast_3d(a) for a in tup], axis=2, dtype=dtype)


def column_stack(tup):
    arrs = []
    for a in tup:
        a = _arr(a)
        arrs.append(reshape(a, (-1, 1)) if _aval(a).ndim < 2 else a)
    return concatenate(arrs, axis=1)


def _split(ary, indices_or_sections, axis, strict):
    a = _arr(ary)
    av = _aval(a)
    axis = _canon_axis(axis, av.ndim)
    n = av.shape[axis]
    if isinstance(indices_or_sections, (int, _np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if strict and n % k:
            raise ValueError("array split does not result in an equal division")
        q, r = builtins.divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        bounds = _np.cumsum([0] + sizes).tolist()
    else:
        pts = [int(i) for i in indices_or_sections]
        bounds = [0] + pts + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo = builtins.min(builtins.max(lo if lo >= 0 else lo + n, 0), n)
        hi = builtins.min(builtins.max(hi if hi >= 0 else hi + n, 0), n)
        out.append(_slice_axis(a, axis, lo, builtins.max(lo, hi)))
    return out


def split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, strict=True)


def array_split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, strict=False)


def hsplit(ary, indices_or_sections):
    a = _arr(ary)
    return split(a, indices_or_sections, axis=0 if _aval(a).ndim == 1 else 1)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=2)


def tile(A, reps):
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


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    a = _arr(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    av = _aval(a)
    axis = _canon_axis(axis, av.ndim)
    n = av.shape[axis]
    if isinstance(repeats, Tracer):
        raise core.ConcretizationTypeError(
            "jnp.repeat requires concrete repeats (they determine the output shape)")
    reps = _np.asarray(repeats)
    if reps.ndim == 0:
        r = int(reps)
        if r < 0:
            raise ValueError("repeats may not contain negative values")
        shape = av.shape[:axis + 1] + (r,) + av.shape[axis + 1:]
        dims = tuple(range(axis + 1)) + tuple(range(axis + 2, av.ndim + 1))
        b = lax.broadcast_in_dim(a, shape, dims)
        out = lax.reshape(b, av.shape[:axis] + (n * r,) + av.shape[axis + 1:])
    else:
        if reps.shape != (n,):
            raise ValueError(f"repeats has shape {reps.shape}, expected ({n},) or a scalar")
        idx = _np.repeat(_np.arange(n), reps)
        out = _take_static(a, axis, idx.tolist())
    if total_repeat_length is not None:
        m = _aval(out).shape[axis]
        if m >= total_repeat_length:
            out = _slice_axis(out, axis, 0, total_repeat_length)
        else:
            # Pad with the last element by a broadcast (no Python list of
            # total_repeat_length indices: an absurd length is a budget error).
            last = _slice_axis(out, axis, m - 1, m)
            out = concatenate([out, repeat(last, total_repeat_length - m, axis=axis)], axis=axis)
    return out


def roll(a, shift, axis=None):
    a = _arr(a)
    if isinstance(shift, Tracer):
        return _roll_dynamic(a, shift, axis)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), _aval(a).shape)
    shifts = (shift,) if isinstance(shift, (int, _np.integer)) else tuple(shift)
    axes = (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences of the same length")
    nd = _aval(a).ndim
    for s, ax in zip(shifts, axes):
        ax = _canon_axis(ax, nd)
        n = _aval(a).shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            a = _take_static(a, ax, [(i - s) % n for i in range(n)])
    return a


def _roll_dynamic(a, shift, axis):
    """roll with run-time shifts: a window of the array concatenated with itself."""
    if axis is None:
        return reshape(_roll_dynamic(ravel(a), shift, 0), _aval(a).shape)
    shift = _arr(shift)
    axes = (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis)
    shifts = shift if _aval(shift).ndim else broadcast_to(shift, (len(axes),)) if len(axes) > 1 else shift
    nd = _aval(a).ndim
    for i, ax in enumerate(axes):
        ax = _canon_axis(ax, nd)
        n = _aval(a).shape[ax]
        if n == 0:
            continue
        s = shifts if _aval(shifts).ndim == 0 else lax.squeeze(_slice_axis(shifts, 0, i, i + 1), (0,))
        s = lax.convert_element_type(s, "int32")
        n_c = _const(n, "int32")
        start = lax.sub(n_c, remainder(s, n_c))
        start = remainder(start, n_c)
        doubled = _concat([a, a], ax)
        starts = [_const(0, "int32")] * nd
        starts[ax] = start
        sizes = list(_aval(a).shape)
        a = lax.dynamic_slice(doubled, starts, sizes)
    return a


def _pad_index(i, n, mode, reflect_type="even"):
    """Source index of padded position i (i may be outside [0, n))."""
    if mode == "edge":
        return builtins.min(builtins.max(i, 0), n - 1)
    if mode == "wrap":
        return i % n
    if mode == "reflect":
        if n == 1:
            return 0
        period = 2 * (n - 1)
        j = i % period
        return j if j < n else period - j
    if mode == "symmetric":
        period = 2 * n
        j = i % period
        return j if j < n else period - 1 - j
    raise ValueError(mode)


def pad(array, pad_width, mode="constant", **kwargs):
    a = _arr(array)
    av = _aval(a)
    nd = av.ndim
    pw = _np.asarray(pad_width, dtype=_np.int64) if not callable(pad_width) else None
    if isinstance(pad_width, Tracer) or pw is None:
        raise TypeError("jnp.pad: pad_width must be static")
    pw = _np.broadcast_to(pw, (nd, 2)) if pw.size in (1, 2) or pw.shape == (nd, 2) else None
    if pw is None:
        raise ValueError(f"jnp.pad: pad_width has an invalid shape for an array of rank {nd}")
    if (pw < 0).any():
        raise ValueError("index can't contain negative values")
    mode = mode if isinstance(mode, str) else str(mode)
    if mode == "constant":
        cv = kwargs.get("constant_values", 0)
        cvs = _np.broadcast_to(_np.asarray(cv) if not isinstance(cv, (ArrayImpl, Tracer)) else 0, (nd, 2))
        traced_cv = isinstance(cv, (ArrayImpl, Tracer)) and _aval(cv).ndim == 0
        if _has("pad"):
            name = _aval(a).dtype_name
            for ax in range(nd):
                for side in (0, 1):
                    w = int(pw[ax, side])
                    if w == 0:
                        continue
                    fill = astype(cv, name) if traced_cv else _const(cvs[ax, side].item(), name)
                    config = [(0, 0, 0)] * nd
                    config[ax] = (w, 0, 0) if side == 0 else (0, w, 0)
                    a = lax.pad(a, fill, config)
            return a
        for ax in range(nd):
            lo, hi = int(pw[ax, 0]), int(pw[ax, 1])
            if lo == 0 and hi == 0:
                continue
            n = _aval(a).shape[ax]
            total = lo + n + hi
            if n == 0:
                shape = list(_aval(a).shape)
                shape[ax] = total
                fill = cv if traced_cv else cvs[ax, 0]
                a = broadcast_to(astype(asarray(fill), _aval(a).dtype_name), tuple(shape))
                continue
            idx = [builtins.min(builtins.max(i - lo, 0), n - 1) for i in range(total)]
            t = _take_static(a, ax, idx)
            pos = _np.arange(total)
            shape = _aval(t).shape
            for side, sel in ((0, pos < lo), (1, pos >= lo + n)):
                if not sel.any():
                    continue
                fill = cv if traced_cv else cvs[ax, side].item()
                m = lax.broadcast_in_dim(core.to_array(sel), shape, (ax,))
                fv = broadcast_to(astype(fill, _aval(t).dtype_name) if not isinstance(fill, _SCALARS)
                                  else _const(fill, _aval(t).dtype_name), shape)
                t = lax.select_n(m, t, fv)
            a = t
        return a
    if mode in ("edge", "wrap", "reflect", "symmetric"):
        for ax in range(nd):
            lo, hi = int(pw[ax, 0]), int(pw[ax, 1])
            if lo == 0 and hi == 0:
                continue
            n = _aval(a).shape[ax]
            if n == 0:
                raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
            idx = [_pad_index(i - lo, n, mode) for i in range(lo + n + hi)]
            a = _take_static(a, ax, idx)
        return a
    raise NotImplementedError(f"jnp.pad mode {mode!r} is not supported")


def _tri_mask(N, M, k):
    return lax.ge(lax.add(lax.broadcasted_iota("int32", (N, M), 0), _const(int(k), "int32")),
                  lax.broadcasted_iota("int32", (N, M), 1))


def tri(N, M=None, k=0, dtype=None):
    M = N if M is None else M
    name = _creation_dtype(dtype)
    return lax.convert_element_type(_tri_mask(int(N), int(M), k), name)


def tril(m, k=0):
    m = _arr(m)
    av = _aval(m)
    if av.ndim < 2:
        raise ValueError("Argument to jax.numpy.tril must be at least 2D")
    mask = lax.broadcast_in_dim(_tri_mask(av.shape[-2], av.shape[-1], k), av.shape, (av.ndim - 2, av.ndim - 1))
    return lax.select_n(mask, zeros_like(m), m)


def triu(m, k=0):
    m = _arr(m)
    av = _aval(m)
    if av.ndim < 2:
        raise ValueError("Argument to jax.numpy.triu must be at least 2D")
    mask = lax.broadcast_in_dim(_tri_mask(av.shape[-2], av.shape[-1], k - 1), av.shape, (av.ndim - 2, av.ndim - 1))
    return lax.select_n(mask, m, zeros_like(m))


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = _arr(a)
    av = _aval(a)
    if av.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    a1, a2 = _canon_axis(axis1, av.ndim), _canon_axis(axis2, av.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 must not be equal")
    x = moveaxis(a, (a1, a2), (-2, -1))
    s = _aval(x).shape
    n, m = s[-2], s[-1]
    k = int(offset)
    L = builtins.max(0, builtins.min(n, m - k) if k >= 0 else builtins.min(n + k, m))
    if L == 0:
        return zeros(s[:-2] + (0,), av.dtype_name)
    # Row i of the masked matrix keeps element (i, i + k): a row selection then a masked reduce.
    rows = list(range(0, L)) if k >= 0 else list(range(-k, -k + L))
    x = _take_static(x, len(s) - 2, rows)
    cols = [r + k for r in rows]
    return _take_diag_cols(x, cols)


def _take_diag_cols(x, cols):
    """out[..., i] = x[..., i, cols[i]] (static cols)."""
    s = _aval(x).shape
    L, m = s[-2], s[-1]
    mask = _np.zeros((L, m), bool)
    mask[_np.arange(L), cols] = True
    mb = lax.broadcast_in_dim(core.to_array(mask), s, (len(s) - 2, len(s) - 1))
    if _is_bool(x):
        return lax.reduce_max(_and(mb, x), (len(s) - 1,))
    return lax.reduce_sum(lax.select_n(mb, zeros_like(x), x), (len(s) - 1,))


def diag(v, k=0):
    v = _arr(v)
    av = _aval(v)
    if av.ndim == 2:
        return diagonal(v, offset=k)
    if av.ndim != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = av.shape[0]
    N = n + builtins.abs(int(k))
    k = int(k)
    if n == 0:
        return zeros((N, N), av.dtype_name)
    # out[i, j] = v[i] where j = i + k (k >= 0), v[j] where i = j - k (k < 0).
    if k >= 0:
        idx = [builtins.min(i, n - 1) for i in range(N)]
        vb = lax.broadcast_in_dim(_take_static(v, 0, idx), (N, N), (0,))
    else:
        idx = [builtins.min(j, n - 1) for j in range(N)]
        vb = lax.broadcast_in_dim(_take_static(v, 0, idx), (N, N), (1,))
    mask = lax.eq(lax.add(lax.broadcasted_iota("int32", (N, N), 0), _const(k, "int32")),
                  lax.broadcasted_iota("int32", (N, N), 1))
    return lax.select_n(mask, zeros_like(vb), vb)


def diagflat(v, k=0):
    return diag(ravel(_arr(v)), k)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return sum(diagonal(a, offset=offset, axis1=axis1, axis2=axis2), axis=-1, dtype=dtype)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, so jnp.fill_diagonal needs inplace=False")
    a = _arr(a)
    av = _aval(a)
    if av.ndim != 2:
        raise ValueError("fill_diagonal: only 2D arrays are supported")
    mask = lax.eq(lax.broadcasted_iota("int32", av.shape, 0), lax.broadcasted_iota("int32", av.shape, 1))
    # val takes the array's dtype (a Python float must not promote an int array)
    return where(mask, astype(val, av.dtype_name), a)


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    a = _arr(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    av = _aval(a)
    axis = _canon_axis(axis, av.ndim)
    if isinstance(indices, Tracer):
        return _indexing.take_traced(a, indices, axis, mode, fill_value, unique_indices, indices_are_sorted)
    idx = _np.asarray(indices)
    n = av.shape[axis]
    if mode == "clip":
        flat = _np.clip(idx, 0, n - 1)
    elif mode == "wrap":
        flat = idx % n
    else:
        flat = _np.where(idx < 0, idx + n, idx)
    flat_r = _np.clip(flat.ravel(), 0, builtins.max(n - 1, 0))
    out = _take_static(a, axis, flat_r.tolist())
    if mode in (None, "fill"):
        oob = ((flat < 0) | (flat >= n)).ravel()
        if oob.any():
            fill = fill_value
            if fill is None:
                name = av.dtype_name
                fill = _np.nan if _dt.is_float_name(name) else (
                    True if name == "bool" else int(_np.iinfo(_np.dtype(name)).min if name.startswith("int")
                                                    else _np.iinfo(_np.dtype(name)).max))
            shape = _aval(out).shape
            m = lax.broadcast_in_dim(core.to_array(oob), shape, (axis,))
            out = lax.select_n(m, out, broadcast_to(_const(fill, av.dtype_name), shape))
    new_shape = av.shape[:axis] + idx.shape + av.shape[axis + 1:]
    return lax.reshape(out, new_shape)


def _along_axis_items(arr, indices, axis, name):
    """Advanced indices selecting `indices` along `axis` and every other axis
    elementwise (index and array broadcast against each other off `axis`)."""
    arr, indices = _arr(arr), _arr(indices)
    av, iv = _aval(arr), _aval(indices)
    if not _dt.is_int_name(iv.dtype_name):
        raise TypeError(f"{name} indices must be of integer type, got {iv.dtype_name}")
    if av.ndim != iv.ndim:
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{iv.ndim} vs. {av.ndim}")
    axis = _canon_axis(axis, av.ndim)
    shape = []
    for d, (n, m) in enumerate(zip(av.shape, iv.shape)):
        if d == axis:
            shape.append(m)
        elif n == m or n == 1 or m == 1:
            shape.append(builtins.max(n, m) if n and m else 0)
        else:
            raise ValueError(f"{name}: arr shape {av.shape} and indices shape {iv.shape} do not broadcast "
                             f"off axis {axis}")
    arr_shape = tuple(av.shape[axis] if d == axis else s for d, s in enumerate(shape))
    arr = broadcast_to(arr, arr_shape)
    indices = broadcast_to(indices, tuple(shape))
    items = []
    for d in range(av.ndim):
        if d == axis:
            items.append(indices)
        else:
            r = [1] * av.ndim
            r[d] = shape[d]
            items.append(_np.arange(shape[d], dtype=_np.int32).reshape(r))
    return arr, items


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    """`arr` at `indices` along `axis` (one gather; out-of-bounds indices
    `fill` by default, as JAX)."""
    if axis is None:
        arr, axis = ravel(arr), 0
        indices = ravel(indices)
    arr, items = _along_axis_items(arr, indices, axis, "take_along_axis")
    return _indexing._gather_items(arr, items, "fill" if mode is None else mode, fill_value, False, False)


def put_along_axis(arr, indices, values, axis, inplace=True, mode=None):
    """`arr` with `values` written at `indices` along `axis` (one scatter).
    JAX arrays are immutable: `inplace=False` is required, as in JAX."""
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place; pass inplace=False")
    if axis is None:
        shape = _aval(_arr(arr)).shape
        out = put_along_axis(ravel(arr), ravel(indices), ravel(values), 0, inplace=False, mode=mode)
        return reshape(out, shape)
    arr = _arr(arr)
    _, items = _along_axis_items(arr, indices, axis, "put_along_axis")
    return _indexing._update(arr, tuple(items), values, "scatter", mode)


# -- creation -----------------------------------------------------------------

def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    num = _static_int(num, "linspace", "num")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if dtype is not None and not _dt.is_float_name(_name(dtype)) and not _has("floor"):
        raise NotImplementedError("jnp.linspace with an integer dtype needs lax.floor")
    s, e = _promote_inexact(_arr(start), _arr(stop))
    out_name = _name(dtype) if dtype is not None else _aval(s).dtype_name
    comp = _upcast_f16(_aval(s).dtype_name) if _dt.is_float_name(out_name) else _dt.default_float_name()
    s = lax.convert_element_type(s, comp)
    e = lax.convert_element_type(e, comp)
    bshape = _broadcast_shapes(_aval(s).shape, _aval(e).shape)
    s, e = broadcast_to(s, bshape), broadcast_to(e, bshape)
    div = (num - 1) if endpoint else num
    delta = lax.sub(e, s)
    out_shape = (num,) + bshape
    it = lax.broadcasted_iota(comp, out_shape, 0)
    sb = lax.broadcast_in_dim(s, out_shape, tuple(range(1, len(out_shape))))
    db = lax.broadcast_in_dim(delta, out_shape, tuple(range(1, len(out_shape))))
    if div > 0:
        step = lax.div(db, float(div))
        out = lax.add(lax.mul(it, step), sb)
        if endpoint and num > 1:
            eb = lax.broadcast_in_dim(e, out_shape, tuple(range(1, len(out_shape))))
            last = lax.eq(it, float(num - 1))
            out = lax.select_n(last, out, eb)
    else:
        step = lax.mul(db, _nan_const(comp))
        out = lax.add(lax.mul(it, db), sb)
    axis = _canon_axis(axis, len(out_shape))
    if axis:
        out = moveaxis(out, 0, axis)
    if _dt.is_float_name(out_name):
        out = lax.convert_element_type(out, out_name)
    else:
        out = lax.convert_element_type(floor(out), out_name)
    if retstep:
        step_name = out_name if _dt.is_float_name(out_name) else comp
        return out, lax.convert_element_type(lax.div(delta, float(div)) if div > 0
                                             else lax.mul(delta, _nan_const(comp)), step_name)
    return out


def _static_int(v, fn, what):
    if isinstance(v, Tracer):
        raise core.ConcretizationTypeError(
            f"jnp.{fn}: {what} must be a concrete integer (it determines the output shape); "
            f"got a traced value. Mark it static (static_argnums) or pass a Python int.")
    return int(v)


def _nan_const(name):
    return _const(_np.nan, name)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    name = _aval(y).dtype_name if dtype is None else _name(dtype)
    comp = name if _dt.is_float_name(name) else _dt.default_float_name()
    b = _arr(base)
    y, b = _promote_inexact(y, b)
    out = float_power(b, y)
    return astype(out, name) if _aval(out).dtype_name != name else out


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    s, e = _promote_inexact(_arr(start), _arr(stop))
    sign = lax.sign(s)
    ls, le = log10(lax.abs(s)), log10(lax.abs(e))
    out = logspace(ls, le, num=num, endpoint=endpoint, base=10.0, dtype=None, axis=axis)
    out = multiply(out, expand_dims(sign, axis) if _aval(sign).ndim else sign)
    return astype(out, dtype) if dtype is not None else out


def eye(N, M=None, k=0, dtype=None):
    N = int(N)
    M = N if M is None else int(M)
    if N < 0 or M < 0:
        raise ValueError(f"negative dimensions are not allowed, got N={N} and M={M}")
    name = _creation_dtype(dtype)
    mask = lax.eq(lax.add(lax.broadcasted_iota("int32", (N, M), 0), _const(int(k), "int32")),
                  lax.broadcasted_iota("int32", (N, M), 1))
    return lax.convert_element_type(mask, name)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
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


def empty_like(prototype, dtype=None, shape=None):
    return zeros_like(prototype, dtype=dtype, shape=shape)


def copy(a, order=None):
    return _arr(a)


def indices(dimensions, dtype=None, sparse=False):
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
    x = _arr(x)
    n = _aval(x).shape[0]
    N = n if N is None else int(N)
    pows = [lax.integer_pow(x, p) if p else ones_like(x) for p in range(N)]
    if not increasing:
        pows = pows[::-1]
    return stack(pows, axis=1) if pows else zeros((n, 0), _aval(x).dtype_name)


# -- cumulative ----------------------------------------------------------------

def _cumulative(kind, a, axis, dtype, reverse=False):
    a = _arr(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    av = _aval(a)
    axis = _canon_axis(axis, av.ndim)
    name = av.dtype_name
    if kind in ("cumsum", "cumprod"):
        target = _name(dtype) if dtype is not None else _sum_dtype(name)
        if target != name:
            a = lax.convert_element_type(a, target)
            name = target
    elif name == "bool" and kind in ("cummax", "cummin"):
        pass
    if av.shape[axis] == 0:
        return a
    if _has(kind):
        return getattr(lax, kind)(a, axis=axis, reverse=reverse)
    if kind == "cumprod":
        raise NotImplementedError("jnp.cumprod needs the lax.cumprod primitive")
    # Fallback: masked reduction over a (n, n) triangle (exact for max/min,
    # a different summation order for sums).
    n = av.shape[axis]
    tri_ = _np.tril(_np.ones((n, n), bool)) if not reverse else _np.triu(_np.ones((n, n), bool))
    perm = [i for i in range(av.ndim) if i != axis] + [axis]
    xt = lax.transpose(a, perm)
    lead = tuple(av.shape[i] for i in perm[:-1])
    k = len(lead)
    xb = lax.broadcast_in_dim(xt, lead + (n, n), tuple(range(k)) + (k + 1,))
    mb = lax.broadcast_in_dim(core.to_array(tri_), lead + (n, n), (k, k + 1))
    if kind == "cumsum":
        res = lax.reduce_sum(lax.select_n(mb, zeros_like(xb), xb), (k + 1,))
    elif kind == "cummax":
        fill = broadcast_to(_const(_identity_for(name, "max"), name), lead + (n, n))
        res = lax.reduce_max(lax.select_n(mb, fill, xb), (k + 1,))
    else:
        fill = broadcast_to(_const(_identity_for(name, "min"), name), lead + (n, n))
        res = _reduce_min_prim(lax.select_n(mb, fill, xb), (k + 1,))
    inv = list(range(k))
    inv.insert(axis, k)
    return lax.transpose(res, inv)


def cumsum(a, axis=None, dtype=None, out=None):
    return _cumulative("cumsum", a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    return _cumulative("cumprod", a, axis, dtype)


cumulative_sum = cumsum
cumulative_prod = cumprod


def nancumsum(a, axis=None, dtype=None, out=None):
    a = _arr(a)
    if _is_float(a):
        a = where(isnan(a), 0.0, a)
    return cumsum(a, axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    a = _arr(a)
    if _is_float(a):
        a = where(isnan(a), 1.0, a)
    return cumprod(a, axis=axis, dtype=dtype)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    a = _arr(a)
    av = _aval(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return a
    axis = _canon_axis(axis, av.ndim)
    if prepend is not None or append is not None:
        parts = []
        for p in (prepend, a, append):
            if p is None:
                continue
            p = _arr(p)
            if _aval(p).ndim == 0:
                shape = list(av.shape)
                shape[axis] = 1
                p = broadcast_to(p, tuple(shape))
            parts.append(p)
        a = concatenate(parts, axis=axis)
    for _ in range(n):
        m = _aval(a).shape[axis]
        if m == 0:
            break
        hi = _slice_axis(a, axis, 1, m)
        lo = _slice_axis(a, axis, 0, m - 1)
        a = not_equal(hi, lo) if _is_bool(a) else subtract(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    a = ravel(_arr(ary))
    out = diff(a)
    parts = []
    if to_begin is not None:
        parts.append(ravel(_arr(to_begin)))
    parts.append(out)
    if to_end is not None:
        parts.append(ravel(_arr(to_end)))
    return concatenate(parts) if len(parts) > 1 else out


# -- linear algebra -------------------------------------------------------------

def tensordot(a, b, axes=2, precision=None, preferred_element_type=None):
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


def _parse_einsum(subscripts, shapes):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
        explicit = True
    else:
        ins, out, explicit = subscripts, None, False
    in_specs = ins.split(",")
    if len(in_specs) != len(shapes):
        raise ValueError(f"einsum: {len(in_specs)} operand subscripts for {len(shapes)} operands")
    letters = set("".join(in_specs).replace(".", ""))
    spare = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in letters)
    ell_nd = 0
    for spec, s in zip(in_specs, shapes):
        if "..." in spec:
            ell_nd = builtins.max(ell_nd, len(s) - len(spec.replace("...", "")))
    ell = "".join(next(spare) for _ in range(ell_nd))
    specs = []
    for spec, s in zip(in_specs, shapes):
        if "..." in spec:
            k = len(s) - len(spec.replace("...", ""))
            spec = spec.replace("...", ell[ell_nd - k:] if k else "")
        if len(spec) != len(s):
            raise ValueError(f"einsum: operand with shape {tuple(s)} does not match subscripts {spec!r}")
        specs.append(spec)
    if explicit:
        out = out.replace("...", ell)
    else:
        counts = {}
        for spec in specs:
            for c in spec:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return specs, out


def _einsum_single(x, spec, keep):
    """Diagonals of repeated labels, then sums of labels not in `keep`."""
    while True:
        dup = next((c for c in spec if spec.count(c) > 1), None)
        if dup is None:
            break
        i = spec.index(dup)
        j = spec.index(dup, i + 1)
        x = diagonal(x, 0, i, j)  # the diagonal axis goes last
        spec = "".join(c for k, c in enumerate(spec) if k not in (i, j)) + dup
    drop = tuple(k for k, c in enumerate(spec) if c not in keep)
    if drop:
        x = lax.reduce_sum(x, drop)
        spec = "".join(c for k, c in enumerate(spec) if k not in drop)
    return x, spec


def _einsum_pair(x, sx, y, sy, keep):
    batch = [c for c in sx if c in sy and c in keep]
    contract = [c for c in sx if c in sy and c not in keep]
    dn = ((tuple(sx.index(c) for c in contract), tuple(sy.index(c) for c in contract)),
          (tuple(sx.index(c) for c in batch), tuple(sy.index(c) for c in batch)))
    out = lax.dot_general(x, y, dn)
    spec = "".join(batch) + "".join(c for c in sx if c not in batch and c not in contract) \
        + "".join(c for c in sy if c not in batch and c not in contract)
    return out, spec


def einsum(subscripts, *operands, out=None, optimize="optimal", precision=None,
           preferred_element_type=None, _dot_general=None):
    if not isinstance(subscripts, str):
        raise NotImplementedError("einsum: only the subscripts-string form is supported")
    ops = _promote_dtypes(*[_arr(o) for o in operands])
    shapes = [_aval(o).shape for o in ops]
    specs, out_spec = _parse_einsum(subscripts, shapes)
    sizes = {}
    for spec, s in zip(specs, shapes):
        for c, d in zip(spec, s):
            if sizes.setdefault(c, d) != d:
                if d == 1 or sizes[c] == 1:
                    raise ValueError(f"einsum: size-1 broadcasting of label {c!r} is not supported")
                raise ValueError(f"einsum: label {c!r} has sizes {sizes[c]} and {d} ({shapes})")
    for c in out_spec:
        if c not in sizes:
            raise ValueError(f"einsum: output label {c!r} does not appear in the inputs")
    terms = []
    for i, (x, spec) in enumerate(zip(ops, specs)):
        others = "".join(s for j, s in enumerate(specs) if j != i) + out_spec
        terms.append(_einsum_single(x, spec, others))
    # Greedy pairwise contraction: the pair with the smallest intermediate first.
    while len(terms) > 1:
        best = None
        for i in range(len(terms)):
            for j in range(i + 1, len(terms)):
                rest = "".join(t[1] for k, t in enumerate(terms) if k not in (i, j)) + out_spec
                si, sj = terms[i][1], terms[j][1]
                res = set(c for c in si + sj if c in rest)
                size = 1
                for c in res:
                    size *= sizes[c]
                shared = bool(set(si) & set(sj))
                key = (not shared, size, i, j)
                if best is None or key < best[0]:
                    best = (key, i, j, rest)
        _, i, j, rest = best
        (x, sx), (y, sy) = terms[i], terms[j]
        x, sx = _einsum_single(x, sx, sy + rest)
        y, sy = _einsum_single(y, sy, sx + rest)
        z = _einsum_pair(x, sx, y, sy, rest)
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [z]
    x, spec = _einsum_single(*terms[0], out_spec)
    x = lax.transpose(x, tuple(spec.index(c) for c in out_spec))
    if preferred_element_type is not None:
        x = astype(x, preferred_element_type)
    return x


def einsum_path(subscripts, *operands, optimize="greedy"):
    raise NotImplementedError("einsum_path is not supported")


def matrix_transpose(x, /):
    x = _arr(x)
    if _aval(x).ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={_aval(x).ndim}")
    return swapaxes(x, -1, -2)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    a, b = _promote_dtypes(_arr(x1), _arr(x2))
    a = moveaxis(a, axis, -1)
    b = moveaxis(b, axis, -1)
    # the operands' dtype, as a dot product (sum alone widens int32 to int64 under x64)
    return sum(multiply(a, b), axis=-1, dtype=a.dtype)


from . import linalg  # noqa: E402


# -- data-dependent shapes (size= makes them traceable) ---------------------------

def nonzero(a, *, size=None, fill_value=None):
    """Indices of nonzero elements. Without `size` the input must be concrete
    (the output shape depends on the values); with `size` the first `size`
    indices are returned, padded with `fill_value` (default 0)."""
    a = _arr(a)
    av = _aval(a)
    if av.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar) instead.")
    if size is None:
        if isinstance(a, Tracer):
            raise core.ConcretizationTypeError(
                "jnp.nonzero: the size argument must be given (and static) when the input is traced, "
                "because the output shape depends on the values")
        return tuple(core.to_array(i.astype(_dt.np_dtype(_dt.default_int_name())))
                     for i in _np.nonzero(_np.asarray(a)))
    size = _static_int(size, "nonzero", "size")
    idx_name = _dt.default_int_name()
    mask = ravel(_to_bool(a))
    n = av.size
    pos = lax.sub(cumsum(lax.convert_element_type(mask, idx_name)), _const(1, idx_name))
    # slot[k] = the j with mask[j] and pos[j] == k (one-hot over (size, n)).
    hit = _and(lax.broadcast_in_dim(mask, (size, n), (1,)),
               lax.eq(lax.broadcast_in_dim(pos, (size, n), (1,)), lax.broadcasted_iota(idx_name, (size, n), 0)))
    js = lax.broadcasted_iota(idx_name, (size, n), 1)
    flat = lax.reduce_sum(lax.select_n(hit, zeros((size, n), idx_name), js), (1,))
    found = lax.reduce_max(hit, (1,)) if n else zeros((size,), "bool")
    out = []
    rem_ = flat
    strides = [int(_np.prod(av.shape[i + 1:])) for i in range(av.ndim)]
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * av.ndim
    for d, st in enumerate(strides):
        q = lax.div(rem_, _const(st, idx_name))
        rem_ = lax.sub(rem_, lax.mul(q, _const(st, idx_name)))
        fv = 0 if fills[d] is None else fills[d]
        out.append(where(found, q, _const(fv, idx_name) if type(fv) in _SCALARS else fv))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(ravel(_arr(a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    a = _arr(a)
    if _aval(a).ndim == 0:
        a = reshape(a, (1,))
        res = nonzero(a, size=size, fill_value=fill_value)
        return reshape(res[0], (-1, 0))
    return stack(nonzero(a, size=size, fill_value=fill_value), axis=1)



def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to jax.numpy.where")
    if keys := _typed_keys(x, y):
        return keys.where_keys(condition, x, y)
    return _where_three(condition, x, y)





# -- sorting -------------------------------------------------------------------------
# Everything here is built on the `sort` primitive (one `sort` equation per jnp.sort,
# as JAX): floats in JAX's order (-0.0 == 0.0, NaNs last), stable.

def _sort_key_lt(a, b):
    """a < b with NaN greater than everything (the sort order), elementwise."""
    if not _is_float(a):
        if _is_bool(a):
            return _and(_not(a), b)
        return lax.lt(a, b)
    a_nan, b_nan = lax.ne(a, a), lax.ne(b, b)
    return _or(lax.lt(a, b), _and(_not(a_nan), b_nan))


def _sort_key_eq(a, b, equal_nan=True):
    if not _is_float(a) or not equal_nan:
        return lax.eq(a, b)
    return _or(lax.eq(a, b), _and(lax.ne(a, a), lax.ne(b, b)))


def _sort_axis(a, axis):
    """(array, canonical axis) with axis=None meaning the flattened array."""
    a = _arr(a)
    if axis is None:
        return ravel(a), 0
    av = _aval(a)
    if av.ndim == 0:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension 0")
    return a, _canon_axis(axis, av.ndim)


def _check_sort_args(fn, kind, order):
    if order is not None:
        raise ValueError(f"'order' argument to {fn} is not supported.")
    del kind  # JAX ignores it (the sort is always stable here).


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    _check_sort_args("sort", kind, order)
    a, axis = _sort_axis(a, axis)
    out = lax.sort(a, dimension=axis, is_stable=bool(stable))
    return lax.rev(out, (axis,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    _check_sort_args("argsort", kind, order)
    a, axis = _sort_axis(a, axis)
    av = _aval(a)
    idx_name = _dt.default_int_name()
    if descending:
        # Stable descending order: ascending on the reversed axis, mapped back.
        a = lax.rev(a, (axis,))
    iota = lax.broadcasted_iota(idx_name, av.shape, axis)
    _, out = lax.sort((a, iota), dimension=axis, is_stable=bool(stable), num_keys=1)
    if descending:
        out = lax.rev(lax.sub(_const(av.shape[axis] - 1, idx_name), out), (axis,))
    return out


def lexsort(keys, axis=-1):
    """Indices that sort by the last key, then the one before, ...; stable."""
    keys = [_arr(k) for k in (keys if isinstance(keys, (tuple, list)) else list(keys))]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shapes = {_aval(k).shape for k in keys}
    if len(shapes) != 1:
        raise ValueError("all keys need to be the same shape")
    shape = shapes.pop()
    if not shape:
        raise TypeError("Cannot lexsort 0-d arrays")
    axis = _canon_axis(axis, len(shape))
    iota = lax.broadcasted_iota(_dt.default_int_name(), shape, axis)
    return lax.sort((*keys[::-1], iota), dimension=axis, num_keys=len(keys))[-1]


def _check_kth(kth, n, fn):
    kth = _static_int(kth, fn, "kth")
    if not -n <= kth < n:
        raise ValueError(f"kth(={kth}) out of bounds ({n})")
    return kth


def partition(a, kth, axis=-1):
    """A fully sorted result is a valid partition (every kth)."""
    a, axis = _sort_axis(a, axis)
    _check_kth(kth, _aval(a).shape[axis], "partition")
    return sort(a, axis=axis)


def argpartition(a, kth, axis=-1):
    a, axis = _sort_axis(a, axis)
    _check_kth(kth, _aval(a).shape[axis], "argpartition")
    return argsort(a, axis=axis)


def _rows_last(a, axis):
    """`a` with the reduced `axis` (None, int or tuple) merged into one last axis;
    returns (rows, kept shape with reduced axes as 1, reduced axes)."""
    a = _arr(a)
    if axis is None:
        axes = tuple(range(_aval(a).ndim))
    else:
        axes = _axes_arg(axis, _aval(a).ndim)
    av = _aval(a)
    keep = [i for i in range(av.ndim) if i not in axes]
    x = lax.transpose(a, keep + list(axes))
    n = 1
    for i in axes:
        n *= av.shape[i]
    x = lax.reshape(x, tuple(av.shape[i] for i in keep) + (n,))
    return x, axes


def _quantile(a, q, axis, method, keepdims, name, ignore_nan=False):
    if method not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise ValueError(f"{name}: method {method!r} is not supported")
    a, q = _promote_dtypes_inexact(_arr(a), _arr(q))
    av = _aval(a)
    x, axes = _rows_last(a, axis)
    n = _aval(x).shape[-1]
    if n == 0:
        raise ValueError(f"{name} of an empty array")
    xs = sort(x, axis=-1)          # NaNs last
    lead = _aval(xs).shape[:-1]
    qs = _aval(q).shape
    fname = _aval(xs).dtype_name
    if ignore_nan:
        # Per row: positions among the non-NaN values, which sort first.
        count = lax.reduce_sum(lax.convert_element_type(_not(isnan(xs)), fname), (len(lead),))
        last = lax.broadcast_in_dim(lax.sub(count, _const(1, fname)), lead + qs, tuple(range(len(lead))))
        qb = lax.broadcast_in_dim(q, lead + qs, tuple(range(len(lead), len(lead) + len(qs))))
        pos = lax.mul(qb, last)
    else:
        pos = lax.broadcast_in_dim(lax.mul(q, float(n - 1)), lead + qs,
                                   tuple(range(len(lead), len(lead) + len(qs))))
    if method in ("linear", "lower", "midpoint"):
        lo = floor(pos)
    elif method == "higher":
        lo = ceil(pos)
    else:
        lo = round(pos)
    lo = lax.max(lo, _const(0, fname))
    hi = lax.min(lax.add(lo, _const(1, fname)), _const(n - 1, fname))
    if ignore_nan:
        hi = lax.min(hi, lax.max(last, _const(0, fname)))
    v_lo = _select_rank(xs, lo)
    v_hi = _select_rank(xs, hi)
    if method == "linear":
        out = lax.add(v_lo, lax.mul(lax.sub(v_hi, v_lo), lax.sub(pos, lo)))
    elif method == "midpoint":
        mid = lax.mul(lax.add(v_lo, v_hi), _const(0.5, fname))
        out = lax.select_n(lax.eq(lax.sub(pos, lo), _const(0, fname)), mid, v_lo)
    else:
        out = v_lo
    # NumPy puts the q dimensions first.
    nl = len(lead)
    out = lax.transpose(out, tuple(range(nl, nl + len(qs))) + tuple(range(nl)))
    if keepdims:
        shape = qs + tuple(1 if i in axes else d for i, d in enumerate(av.shape))
        out = lax.reshape(out, shape)
    if ignore_nan:
        # All-NaN slices give NaN (NumPy warns and returns NaN).
        empty = all(isnan(a), axis=axis, keepdims=keepdims)
        return where(empty, _np.nan, out)
    # NaN anywhere in a slice gives NaN (as NumPy).
    has_nan = any(isnan(a), axis=axis, keepdims=keepdims)
    return where(has_nan, _np.nan, out)


def _select_rank(xs, r):
    """xs[..., r[..., *qs]] for float ranks `r` of shape lead + qs (exact
    one-hot selection along the last axis of `xs`, shape lead + (n,))."""
    lead = _aval(xs).shape[:-1]
    n = _aval(xs).shape[-1]
    rs = _aval(r).shape
    full_ = rs + (n,)
    ri = lax.convert_element_type(r, "int32")
    rb = lax.broadcast_in_dim(ri, full_, tuple(range(len(rs))))
    hit = lax.eq(rb, lax.broadcasted_iota("int32", full_, len(rs)))
    xb = lax.broadcast_in_dim(xs, full_, tuple(range(len(lead))) + (len(full_) - 1,))
    return lax.reduce_sum(lax.select_n(hit, zeros_like(xb), xb), (len(full_) - 1,))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             interpolation=None):
    return _quantile(a, q, axis, interpolation or method, keepdims, "quantile")


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                interpolation=None):
    return _quantile(a, q, axis, interpolation or method, keepdims, "nanquantile", ignore_nan=True)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               interpolation=None):
    (q,) = _promote_inexact(_arr(q))
    return quantile(a, lax.div(q, 100.0), axis=axis, method=interpolation or method, keepdims=keepdims)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  interpolation=None):
    (q,) = _promote_inexact(_arr(q))
    return nanquantile(a, lax.div(q, 100.0), axis=axis, method=interpolation or method, keepdims=keepdims)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile(a, 0.5, axis=axis, keepdims=keepdims, method="midpoint")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return nanquantile(a, 0.5, axis=axis, keepdims=keepdims, method="midpoint")


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion indices by compare-and-count (every `method` gives the same
    result; the sort order is the one of `sort`: NaNs last)."""
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"invalid argument method={method!r}, expected one of "
                         "('scan', 'scan_unrolled', 'sort', 'compare_all')")
    a = _arr(a)
    v = _arr(v)
    if _aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        # a[sorter] without a gather: sort (sorter, a) by sorter is the inverse
        # permutation; sorting (inverse, a) by it applies sorter.
        sorter = _arr(sorter)
        n_ = _aval(a).shape[0]
        iota = lax.iota(_aval(sorter).dtype_name, n_)
        _, inv = lax.sort((sorter, iota), num_keys=1)
        _, a = lax.sort((inv, a), num_keys=1)
    a, v = _promote_dtypes(a, v)
    n = _aval(a).shape[0]
    vs = _aval(v).shape
    full_ = vs + (n,)
    ab = lax.broadcast_in_dim(a, full_, (len(vs),))
    vb = lax.broadcast_in_dim(v, full_, tuple(range(len(vs))))
    before = _sort_key_lt(ab, vb) if side == "left" else _not(_sort_key_lt(vb, ab))
    return lax.reduce_sum(lax.convert_element_type(before, _dt.default_int_name()), (len(vs),))


def _pad_to(x, size, value):
    """x[:size] of a 1-D array, padded with `value` up to `size`."""
    n = _aval(x).shape[0]
    if size <= n:
        return lax.slice(x, (0,), (size,))
    fill = lax.convert_element_type(_arr(value), _aval(x).dtype_name)
    return lax.pad(x, fill, ((0, size - n, 0),))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):
    """Sorted unique values (flattened). Under `jit`, `size` must be given
    (static); results are then padded to `size` (values with `fill_value`,
    default the smallest value; indices with the first one; counts with 0)."""
    ar = _arr(ar)
    if axis is not None:
        if _aval(ar).ndim != 1:
            raise NotImplementedError("jnp.unique: axis is only supported for 1-D inputs")
        _canon_axis(axis, 1)
    x = ravel(ar)
    n = _aval(x).shape[0]
    idx_name = _dt.default_int_name()
    if size is None and isinstance(ar, Tracer):
        raise core.ConcretizationTypeError(
            "jnp.unique: the size argument must be given (and static) when the input is traced, "
            "because the output shape depends on the values")
    iota = lax.iota(idx_name, n)
    xs, perm = lax.sort((x, iota), num_keys=1)
    if n:
        prev = lax.slice(xs, (0,), (n - 1,))
        cur = lax.slice(xs, (1,), (n,))
        new_ = _not(_sort_key_eq(cur, prev, equal_nan))
        is_new = lax.concatenate([lax.reshape(_const(True, "bool"), (1,)), new_], 0)
    else:
        is_new = zeros((0,), "bool")
    num = lax.reduce_sum(lax.convert_element_type(is_new, idx_name), (0,))
    if size is None:
        size = int(num)
    size = _static_int(size, "unique", "size")
    # First elements of each run to the front, in order (stable sort on a 0/1 key).
    rank_key = lax.convert_element_type(_not(is_new), "int32")
    _, firsts, first_perm, first_pos = lax.sort((rank_key, xs, perm, iota), num_keys=1)
    k = lax.iota(idx_name, size)
    valid = lax.lt(k, num)
    if n == 0:
        if fill_value is None:
            raise ValueError("jnp.unique: fill_value is required for an empty input with size")
        values = full((size,), fill_value, _aval(x).dtype_name)
    else:
        fill = (lax.reshape(lax.slice(xs, (0,), (1,)), ()) if fill_value is None
                else full((), fill_value, _aval(x).dtype_name))
        values = where(valid, _pad_to(firsts, size, 0), fill)
    out = [values]
    if return_index:
        first = lax.reshape(lax.slice(perm, (0,), (1,)), ()) if n else _const(0, idx_name)
        out.append(where(valid, _pad_to(first_perm, size, 0), first))
    if return_inverse:
        group = lax.sub(cumsum(lax.convert_element_type(is_new, idx_name)), _const(1, idx_name))
        _, inv = lax.sort((perm, group), num_keys=1)
        out.append(lax.reshape(inv, _aval(ar).shape) if axis is None else inv)
    if return_counts:
        # count[k] = start of run k+1 (n after the last run) - start of run k.
        starts1 = _pad_to(first_pos, size + 1, n)
        starts = lax.slice(starts1, (0,), (size,))
        nxt = lax.slice(starts1, (1,), (size + 1,))
        nxt = where(lax.lt(lax.add(k, _const(1, idx_name)), num), nxt, _const(n, idx_name))
        out.append(where(valid, lax.sub(nxt, starts), _const(0, idx_name)))
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x, *, size=None, fill_value=None):
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, *, size=None, fill_value=None):
    return unique(x, return_counts=True, size=size, fill_value=fill_value)


# -- miscellaneous ------------------------------------------------------------------

def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    out = default
    for c, v in reversed(list(zip(condlist, choicelist))):
        c = _arr(c)
        if not _is_bool(c):
            raise TypeError(f"condlist entries must be boolean, got {_aval(c).dtype_name}")
        out = _where_three(c, v, out)
    return _arr(out)


def piecewise(x, condlist, funclist, *args, **kw):
    x = _arr(x)
    if isinstance(condlist, (ArrayImpl, Tracer)) and _aval(condlist).ndim == _aval(x).ndim:
        condlist = [condlist]
    condlist = list(condlist)
    n = len(condlist)
    if len(funclist) == n + 1:
        otherwise = funclist[-1]
        funclist = funclist[:-1]
    elif len(funclist) == n:
        otherwise = 0
    else:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")

    def val(f):
        return f(x, *args, **kw) if callable(f) else full_like(x, f)

    out = val(otherwise)
    for c, f in zip(condlist, funclist):
        out = _where_three(c, val(f), out)
    return astype(out, _aval(x).dtype_name)


def interp(x, xp, fp, left=None, right=None, period=None):
    if period is not None:
        raise NotImplementedError("interp with period is not supported")
    x, xp, fp = _promote_dtypes_inexact(_arr(x), _arr(xp), _arr(fp))
    if _aval(xp).ndim != 1 or _aval(fp).ndim != 1 or _aval(xp).shape != _aval(fp).shape:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    n = _aval(xp).shape[0]
    i = clip(searchsorted(xp, x, side="right"), 1, n - 1)
    i = lax.convert_element_type(i, "int32")
    im1 = lax.sub(i, _const(1, "int32"))
    x0, x1 = _take_dynamic(xp, 0, im1), _take_dynamic(xp, 0, i)
    f0, f1 = _take_dynamic(fp, 0, im1), _take_dynamic(fp, 0, i)
    dx = lax.sub(x1, x0)
    safe_dx = where(lax.eq(dx, 0.0), 1.0, dx)
    t = lax.div(lax.sub(x, x0), safe_dx)
    out = where(lax.eq(dx, 0.0), f1, lax.add(f0, lax.mul(t, lax.sub(f1, f0))))
    first, last = _take_static(fp, 0, [0]), _take_static(fp, 0, [n - 1])
    lo = lax.reshape(first, ()) if left is None else left
    hi = lax.reshape(last, ()) if right is None else right
    xp0 = lax.reshape(_take_static(xp, 0, [0]), ())
    xpn = lax.reshape(_take_static(xp, 0, [n - 1]), ())
    out = where(lax.lt(x, xp0), lo, out)
    return where(lax.gt(x, xpn), hi, out)


def bincount(x, weights=None, minlength=0, *, length=None):
    x = _arr(x)
    if not _is_int(x):
        raise TypeError(f"bincount: x must be of integer type, got {_aval(x).dtype_name}")
    if _aval(x).ndim != 1:
        raise ValueError("bincount: x must be one-dimensional")
    if length is None:
        if isinstance(x, Tracer):
            raise core.ConcretizationTypeError(
                "jnp.bincount: the length argument must be given (and static) when x is traced")
        xv = _np.asarray(x)
        length = builtins.max(int(minlength), int(xv.max()) + 1 if xv.size else 0)
    length = _static_int(length, "bincount", "length")
    n = _aval(x).shape[0]
    hit = lax.eq(lax.broadcast_in_dim(x, (length, n), (1,)),
                 lax.broadcasted_iota(_aval(x).dtype_name, (length, n), 0))
    if weights is None:
        return lax.reduce_sum(lax.convert_element_type(hit, _dt.default_int_name()), (1,))
    w = _arr(weights)
    wb = lax.broadcast_in_dim(w, (length, n), (1,))
    return lax.reduce_sum(lax.select_n(hit, zeros_like(wb), wb), (1,))


def modf(x, /):
    a = _inexact1(x)
    t = trunc(a)
    return lax.sub(a, t), t


def ldexp(x1, x2, /):
    a = _inexact1(x1)
    e = _arr(x2)
    if not _is_int(e):
        raise TypeError("ldexp: the exponent must be an integer array")
    return multiply(a, exp2(lax.convert_element_type(e, _aval(a).dtype_name)))


def unravel_index(indices, shape):
    idx = _arr(indices)
    shape = _shape_tuple(shape)
    name = _aval(idx).dtype_name
    size = int(_np.prod(shape)) if shape else 1
    idx = where(lax.lt(idx, _const(0, name)), lax.add(idx, _const(size, name)), idx)
    out = []
    rem_ = idx
    for d in range(len(shape)):
        st = int(_np.prod(shape[d + 1:])) if d + 1 < len(shape) else 1
        q = lax.div(rem_, _const(st, name))
        q = lax.max(lax.min(q, _const(shape[d] - 1, name)), _const(0, name))
        rem_ = lax.sub(rem_, lax.mul(q, _const(st, name)))
        out.append(q)
    return tuple(out)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    if order != "C":
        raise NotImplementedError("ravel_multi_index: only order='C'")
    dims = _shape_tuple(dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    parts = [_arr(m) for m in multi_index]
    parts = _promote_dtypes(*parts)
    out = None
    stride = 1
    for p, n in zip(reversed(parts), reversed(dims)):
        if mode == "clip":
            p = clip(p, 0, n - 1)
        elif mode == "wrap":
            p = remainder(p, n)
        term = multiply(p, stride)
        out = term if out is None else add(out, term)
        stride *= n
    return out


def isscalar(element):
    if isinstance(element, (ArrayImpl, Tracer)):
        return _aval(element).ndim == 0
    return _np.isscalar(element)


def iscomplexobj(x):
    return False


def isrealobj(x):
    return True




# -- convolution ------------------------------------------------------------------


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
