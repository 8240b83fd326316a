"""Operators and methods shared by concrete arrays (through the Rust hooks)
and tracers, so `x.sum()`, `x.T`, `x @ y` mean the same in every mode: each
is the jnp function of that name."""
import math
import operator

import numpy as np

from ... import _core
from ... import lax
from ... import numpy as jnp
from ..device_types import CpuDevice
from ..tables import FLOAT_NAMES as _FLOATS
from ... import core as _core_module
from ...core import Primitive, Tracer, _state
from .array_api_metadata import __array_namespace__
from .indexing import AtIndexer, getitem


# op name (as the Rust hooks report it) -> jnp function name
_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "pow": "power", "matmul": "matmul", "floordiv": "floor_divide", "mod": "remainder",
    "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
    "eq": "equal", "ne": "not_equal", "and": "bitwise_and", "or": "bitwise_or",
    "xor": "bitwise_xor", "lshift": "left_shift", "rshift": "right_shift",
}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}
_COMPARE = {"lt", "le", "gt", "ge", "eq", "ne"}


_OPERAND_TYPES = (_core.ArrayImpl, Tracer, np.ndarray, np.generic, bool, int, float, complex)
_SLOW_FNS = {}


def _is_operand(x):
    return isinstance(x, _OPERAND_TYPES)


def _slow_fn(op):
    fn = _SLOW_FNS.get(op)
    if fn is None:
        fn = getattr(jnp, _BINARY[op], None)
        if fn is None:
            return None
        fn = _SLOW_FNS[op] = getattr(fn, "_slow", fn)  # never bounce back into the Rust fast path
    return fn


# op name -> the Python operator (for the operators' NumPy operands).
_OPERATORS = {op: getattr(operator, {"and": "and_", "or": "or_"}.get(op, op)) for op in _BINARY}


def binary_hook(op, a, b, reflected):
    """Slow path of a binary operator: any operand kinds, any active trace."""
    if not _is_operand(b):
        return NotImplemented
    if type(b) is np.ndarray and type(a) is _core.ArrayImpl and not _state.stack:
        # A NumPy operand is an array of its canonical dtype (not weak):
        # converted, the operator can take the Rust fast path.
        b = _core_module.to_array(b)
        return _OPERATORS[op](b, a) if reflected else _OPERATORS[op](a, b)
    fn = _slow_fn(op)
    if fn is None:
        return NotImplemented
    return fn(b, a) if reflected else fn(a, b)


def unary_hook(op, a):
    return getattr(jnp, _UNARY[op])(a)


# Operators that, on two float tracers of one aval, are exactly one
# primitive (no promotion, no broadcasting): bound directly (the hot path of
# traced arithmetic under grad/jit/vmap).
_DIRECT = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div"}


def tracer_operators():
    """Dunder methods for Tracer, built from the same tables."""
    ops = {}
    for op in _BINARY:
        name = {"truediv": "truediv", "floordiv": "floordiv"}.get(op, op)
        prim = Primitive(_DIRECT[op]) if op in _DIRECT else None

        def fwd(self, other, _op=op, _p=prim):
            if (_p is not None and type(other) is Tracer and other.aval is self.aval
                    and self.aval.dtype_name in _FLOATS):
                stack = _state.stack
                if stack:
                    return stack[-1].process_primitive(_p, (self, other), {})
            return binary_hook(_op, self, other, False)

        def rev(self, other, _op=op):
            return binary_hook(_op, self, other, True)

        ops[f"__{name}__"] = fwd
        if op not in _COMPARE:
            ops[f"__r{name}__"] = rev
    for op in _UNARY:
        ops[f"__{op}__"] = lambda self, _op=op: unary_hook(_op, self)
    ops["__getitem__"] = getitem_hook
    return ops


def getitem_hook(x, idx):
    return getitem(x, idx)


def iter_hook(x):
    if x.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    return (x[i] for i in range(x.shape[0]))


def _method(name):
    def m(self, *args, **kwargs):
        return getattr(jnp, name)(self, *args, **kwargs)

    m.__name__ = name
    return m


_METHODS = {
    name: _method(name)
    for name in ("sum", "mean", "max", "min", "prod", "reshape", "transpose", "ravel",
                 "squeeze", "dot", "argmax", "argmin", "all", "any", "clip", "flatten",
                 "var", "std", "cumsum", "round", "swapaxes", "conj", "conjugate", "repeat",
                 "take", "trace", "diagonal", "sort", "argsort", "nonzero", "cumprod", "ptp",
                 "copy", "searchsorted")
}


def _reshape_method(self, *shape, **kwargs):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return jnp.reshape(self, shape, **kwargs)


def _transpose_method(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return jnp.transpose(self, axes if axes else None)


_METHODS["reshape"] = _reshape_method
_METHODS["transpose"] = _transpose_method
_METHODS["astype"] = lambda self, dtype, copy=False, device=None: jnp.astype(self, dtype, copy=copy, device=device)
_METHODS["flatten"] = lambda self, order="C": jnp.ravel(self, order)

_PROPERTIES = {
    "T": lambda self: jnp.transpose(self),
    "mT": lambda self: jnp.swapaxes(self, -1, -2),
    "real": lambda self: jnp.real(self),
    "imag": lambda self: jnp.imag(self),
    "at": lambda self: AtIndexer(self),
    # (arrays have these natively; tracers answer from their abstract value)
    "itemsize": lambda self: np.dtype(self.dtype).itemsize,
    "nbytes": lambda self: np.dtype(self.dtype).itemsize * math.prod(self.shape),
}


def _view(self, dtype=None, type=None):
    """The same bits read as `dtype` (NumPy's `ndarray.view`): the last axis
    grows or shrinks by the ratio of the item sizes."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    new = np.dtype(dtype)
    old = np.dtype(self.dtype)
    if new == old:
        return self
    if old == np.bool_:  # bools are bytes 0/1
        return _view(self.astype(np.uint8), new)
    if new == np.bool_:
        return _view(self, np.uint8) != 0
    if self.ndim == 0 and new.itemsize != old.itemsize:
        raise ValueError("view() of a 0-d array requires dtypes of equal size")
    if new.itemsize < old.itemsize:
        out = lax.bitcast_convert_type(self, new)
        return jnp.reshape(out, self.shape[:-1] + (self.shape[-1] * (old.itemsize // new.itemsize),))
    if new.itemsize > old.itemsize:
        ratio = new.itemsize // old.itemsize
        if self.shape[-1] % ratio:
            raise ValueError(f"view: the last axis ({self.shape[-1]}) must be divisible by {ratio} "
                             f"to view {old.name} as {new.name}")
        x = jnp.reshape(self, self.shape[:-1] + (self.shape[-1] // ratio, ratio))
        return lax.bitcast_convert_type(x, new)
    return lax.bitcast_convert_type(self, new)


def _byteswap(self, inplace=False):
    """The array with each element's bytes reversed (`inplace` must be False)."""
    if inplace:
        raise ValueError("Inplace byteswapping not supported.")
    size = np.dtype(self.dtype).itemsize
    if size == 1:
        return self
    parts = lax.bitcast_convert_type(self, np.uint8)
    return lax.bitcast_convert_type(jnp.flip(parts, axis=-1), self.dtype)


def _flat(self):
    raise NotImplementedError("JAX Arrays do not implement the arr.flat property: "
                              "consider arr.flatten() instead.")


_METHODS.update({
    "argpartition": _method("argpartition"),
    "choose": _method("choose"),
    "compress": lambda self, condition, axis=None, **kwargs: jnp.compress(condition, self, axis, **kwargs),
    "view": _view,
    "byteswap": _byteswap,
})
_PROPERTIES["flat"] = _flat


def _host_device(x):
    return CpuDevice(0)


# Placement queries of concrete arrays only (a tracer has no device); the
# device layer adds `sharding`, `device`, `devices` and the shard views
# (`_src/array.py`).
_ARRAY_ONLY = {
    "platform": lambda self: lambda: _host_device(self).platform,
    "is_ready": lambda self: lambda: True,
    "on_device_size_in_bytes": lambda self: lambda: self.nbytes,
    "clone": lambda self: lambda: jnp.array(self, copy=True),
    "tobytes": lambda self: lambda order="C": np.asarray(self).tobytes(order=order),
    "aval": lambda self: _core_module._shaped(tuple(self.shape), self.dtype_name, bool(self.weak_type)),
}


def register_array_attribute(name, get):
    """Adds the attribute `name` of concrete arrays, `get(array)` (for the
    placement methods the device layer defines, e.g. `to_device`)."""
    _ARRAY_ONLY[name] = get


def get_attribute(x, name):
    if name in _ARRAY_ONLY and isinstance(x, _core.ArrayImpl):
        return _ARRAY_ONLY[name](x)
    prop = _PROPERTIES.get(name)
    if prop is not None:
        return prop(x)
    m = _METHODS.get(name)
    if m is not None:
        return m.__get__(x)
    raise AttributeError(f"{type(x).__name__!r} object has no attribute {name!r}")


def array_repr(x):
    arr = np.asarray(x)
    body = np.array2string(arr, separator=", ", prefix="Array(")
    weak = ", weak_type=True" if x.weak_type else ""
    return f"Array({body}, dtype={x.dtype_name}{weak})"


def array_str(x):
    return str(np.asarray(x))


def array_format(x, spec):
    if x.ndim == 0:
        return format(np.asarray(x)[()], spec)
    return format(str(np.asarray(x)), spec)


# Operators Rust defines on Tracer (a native path for two float tracers of
# the innermost native trace); these Python functions are their fallbacks.
_NATIVE_OPERATORS = ("add", "sub", "mul", "truediv")


def _install_tracer_operators():
    ops = tracer_operators()
    fallbacks = {}
    for op in _NATIVE_OPERATORS:
        for dunder in (f"__{op}__", f"__r{op}__"):
            fallbacks[dunder] = ops.pop(dunder)
    prims = {p: (Primitive(p), Primitive(p).handle({})) for p in ("add", "sub", "mul", "div")}
    _core.register_hooks(tracer_operators=(prims, fallbacks))
    for name, op in ops.items():
        setattr(Tracer, name, op)


def operator_round(number, ndigits=None):
    """`round(x, ndigits)` of an array (as JAX): `jnp.round(x, ndigits)`;
    without `ndigits`, rounded to an integer array (as `round(7.5)` of a
    Python float is an int)."""
    out = jnp.round(number, decimals=ndigits or 0)
    return out.astype(int) if ndigits is None else out


def install_hooks():
    """Gives concrete arrays (through the Rust hooks) and tracers their
    operators, methods and properties."""
    _install_tracer_operators()
    Tracer.__getattr__ = get_attribute
    # `round()` looks `__round__` up on the type, past `__getattr__`.
    Tracer.__round__ = operator_round
    _core.ArrayImpl.__round__ = operator_round
    # The array API entry point, a dunder: looked up on the type.
    Tracer.__array_namespace__ = __array_namespace__
    _core.ArrayImpl.__array_namespace__ = __array_namespace__
    _core.set_hooks({
        "binary": binary_hook,
        "unary": unary_hook,
        "getitem": getitem_hook,
        "iter": iter_hook,
        "getattr": get_attribute,
        "repr": array_repr,
        "str": array_str,
        "format": array_format,
    })
