"""`jnp.ufunc`: NumPy's ufunc protocol (`at`, `outer`, `reduce`,
`accumulate`, `reduceat`, `nin` / `nout` / `identity`) over a scalar jnp
function, `jnp.frompyfunc`, and the jnp functions JAX exposes as ufunc
objects (`jnp.add`, `jnp.multiply`, ...).

Calling a ufunc must cost what calling the plain jnp function costs (eager
dispatch is measured in microseconds), so each instance gets its own
one-instance subclass whose `__call__` *is* the wrapped function: no Python
frame of ours sits between the caller and the function."""
import math
import operator

import numpy as _np

from ... import lax
from ...lax import _convolution
from .indexing import take
from .lax_numpy import moveaxis, arange, asarray, broadcast_to, expand_dims, full, reshape
from .reductions import all as _all, any as _any, cumprod, cumsum, max as _max, min as _min, prod, sum as _sum
from .ufuncs import (_where, add as _add, bitwise_and as _bitwise_and, bitwise_or as _bitwise_or,
                     bitwise_xor as _bitwise_xor, logaddexp as _logaddexp, logaddexp2 as _logaddexp2,
                     logical_and as _logical_and, logical_or as _logical_or, logical_xor as _logical_xor,
                     maximum as _maximum, minimum as _minimum, multiply as _multiply, negative as _negative,
                     subtract as _subtract)
from .util import _FLOAT_NAMES, _aval, _canon_axis
from .vectorize import vectorize

_AT_INPLACE_MESSAGE = (
    "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like np.ufunc.at(). "
    "Instead, you can pass inplace=False and capture the result; e.g.\n"
    ">>> arr = jnp.add.at(arr, ind, val, inplace=False)")


def _result_dtype(func, *args):
    """The dtype `func` gives on one element of each argument."""
    ones = [lax.full((), 1, _aval(asarray(a)).dtype) for a in args]
    return _aval(asarray(func(*ones))).dtype


class ufunc:
    """A jnp function with NumPy's ufunc methods (jax.numpy.ufunc).

    `ufunc(func, nin, nout, *, name=None, nargs=None, identity=None,
    call=None, reduce=None, accumulate=None, at=None, reduceat=None)`:
    `func` maps `nin` scalars to `nout` scalars; `call` (default: `func`
    vectorized) is what calling the ufunc runs; the other keywords give
    faster implementations of the methods (defaults: loops over `func`)."""

    def __new__(cls, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None, reduce=None,
                accumulate=None, at=None, reduceat=None):
        if call is None:
            call = vectorize(func)
        # The instance's own class: its __call__ is the call path itself.
        sub = type(cls.__name__, (cls,), {"__call__": staticmethod(call), "__slots__": (),
                                          "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                          "__doc__": getattr(call, "__doc__", None) or cls.__doc__})
        return object.__new__(sub)

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None, reduce=None,
                 accumulate=None, at=None, reduceat=None):
        self._func = func
        self.__name__ = name or func.__name__
        self.__qualname__ = self.__name__
        self.nin = operator.index(nin)
        self.nout = operator.index(nout)
        self.nargs = self.nin if nargs is None else operator.index(nargs)
        self.identity = identity
        self._call = type(self).__call__
        self.__wrapped__ = self._call  # inspect.signature: the call path's signature
        # The array operators' hook calls `_slow` (never back into the Rust fast path).
        self._slow = getattr(self._call, "_slow", self._call)
        self._reduce = reduce
        self._accumulate = accumulate
        self._at = at
        self._reduceat = reduceat

    def __reduce__(self):
        # Pickle / copy by name when this is one of the jnp ufuncs.
        if _NAMED.get(self.__name__) is self:
            return (_named_ufunc, (self.__name__,))
        raise TypeError(f"cannot pickle {self!r}")

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    # -- checks shared by the methods ------------------------------------------

    def _binary_only(self, method):
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    # -- reduce ------------------------------------------------------------------

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """Reduce `a` along `axis` by repeated application (np.ufunc.reduce)."""
        self._binary_only("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if where is not None:
            if self.identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, "
                                 "so to use a where mask one has to specify 'initial'.")
            if _aval(asarray(where)).dtype_name != "bool":
                raise ValueError(f"where argument must have dtype=bool; got dtype={_aval(asarray(where)).dtype}")
        fn = self._reduce if self._reduce is not None else self._reduce_by_loop
        return fn(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)

    def _reduce_by_loop(self, a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        arr = asarray(a)
        if initial is None:
            initial = self.identity
        if dtype is None:
            dtype = _result_dtype(self._func, arr, arr)
        shape = _aval(arr).shape
        if where is not None:
            where = broadcast_to(asarray(where), shape)
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final_shape = (1,) * len(shape) if keepdims else ()
            arr = reshape(arr, (-1,))
            if where is not None:
                where = reshape(where, (-1,))
            axis = 0
        else:
            axis = _canon_axis(axis, len(shape))
            final_shape = shape[:axis] + ((1,) if keepdims else ()) + shape[axis + 1:]
        if axis != 0:
            arr = moveaxis(arr, axis, 0)
            if where is not None:
                where = moveaxis(where, axis, 0)
        n = _aval(arr).shape[0]
        if n == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
            return full(final_shape, initial, dtype)
        arr = arr.astype(dtype)
        rest = _aval(arr).shape[1:]
        call = self._call

        def body(i, acc):
            step = call(acc, arr[i]).astype(dtype)
            return step if where is None else _where(where[i], step, acc)

        if initial is None:
            start, acc = 1, arr[0]
        else:
            start, acc = 0, broadcast_to(asarray(initial).astype(dtype), rest)
        out = lax.fori_loop(start, n, body, acc)
        return reshape(out, final_shape) if keepdims else out

    # -- accumulate --------------------------------------------------------------

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """Running application along `axis` (np.ufunc.accumulate)."""
        self._binary_only("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        fn = self._accumulate if self._accumulate is not None else self._accumulate_by_scan
        return fn(a, axis=axis, dtype=dtype)

    def _accumulate_by_scan(self, a, axis=0, dtype=None):
        arr = asarray(a)
        if dtype is None:
            dtype = _result_dtype(self._func, arr, arr)
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        shape = _aval(arr).shape
        axis = _canon_axis(axis, len(shape))
        if math.prod(shape) == 0:
            return full(shape, 0, dtype)
        arr = moveaxis(arr, axis, 0).astype(dtype)
        call = self._call

        def step(acc, x):
            nxt = call(acc, x).astype(dtype)
            return nxt, nxt

        _, rest = lax.scan(step, arr[0], arr[1:])
        from .lax_numpy import concatenate
        res = concatenate([expand_dims(arr[0], 0), rest], axis=0)
        return moveaxis(res, 0, axis)

    # -- at ------------------------------------------------------------------------

    def at(self, a, indices, b=None, /, *, inplace=True):
        """`a` with the ufunc applied at `indices` (np.ufunc.at); needs
        inplace=False, as JAX arrays are immutable. Repeated indices apply
        repeatedly."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE_MESSAGE)
        args = () if b is None else (b,)
        if len(args) != self.nin - 1:
            raise ValueError(f"{self.__name__}.at needs {self.nin - 1} value argument(s)")
        if self._at is not None:
            return self._at(a, indices, *args)
        return self._at_by_loop(a, indices, *args)

    def _at_by_loop(self, a, indices, *args):
        dtype = _result_dtype(self._func, a, *args)
        a = asarray(a).astype(dtype)
        args = tuple(asarray(v).astype(dtype) for v in args)
        shape = _aval(a).shape
        # The flat positions `indices` selects (any NumPy index form), then one
        # sequential update per position.
        positions = reshape(arange(math.prod(shape), dtype="int32"), shape)[indices]
        sel_shape = _aval(positions).shape
        positions = reshape(positions, (-1,))
        vals = tuple(reshape(broadcast_to(v, sel_shape), (-1,)) for v in args)
        flat = reshape(a, (-1,))
        call = self._call

        def body(i, acc):
            j = positions[i]
            return acc.at[j].set(call(acc[j], *(v[i] for v in vals)).astype(dtype))

        out = lax.fori_loop(0, _aval(positions).shape[0], body, flat)
        return reshape(out, shape)

    # -- reduceat ------------------------------------------------------------------

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions over the slices a[indices[i]:indices[i+1]] along `axis` (np.ufunc.reduceat)."""
        self._binary_only("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        fn = self._reduceat if self._reduceat is not None else self._reduceat_by_loop
        return fn(a, indices, axis=axis, dtype=dtype)

    def _reduceat_by_loop(self, a, indices, axis=0, dtype=None):
        a = asarray(a)
        idx = asarray(indices)
        shape = _aval(a).shape
        if len(shape) == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={shape}")
        if len(_aval(idx).shape) != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got indices.shape={_aval(idx).shape}")
        if dtype is None:
            dtype = _result_dtype(self._func, a, a)
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = _canon_axis(axis, len(shape))
        a = moveaxis(a, axis, 0).astype(dtype)
        n = shape[axis]
        idx = idx.astype("int32")
        out = take(a, idx, axis=0)  # each segment starts with its first element
        from .lax_numpy import concatenate
        bounds = concatenate([idx, asarray([n], dtype="int32")])
        start = expand_dims(bounds[:-1], tuple(range(1, len(shape))))
        stop = expand_dims(bounds[1:], tuple(range(1, len(shape))))
        call = self._call

        def body(i, acc):
            # Element i joins every segment with start < i < stop.
            inside = (start < i) & (i < stop)
            return _where(inside, call(acc, a[i]).astype(dtype), acc)

        out = lax.fori_loop(0, n, body, out)
        return moveaxis(out, 0, axis)

    # -- outer -----------------------------------------------------------------------

    def outer(self, A, B, /):
        """`self(A[..., None...], B)` over every pair: shape A.shape + B.shape (np.ufunc.outer)."""
        self._binary_only("outer")
        A, B = asarray(A), asarray(B)
        sa, sb = _aval(A).shape, _aval(B).shape
        a = reshape(A, sa + (1,) * len(sb))
        return self._call(a, B)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A `jnp.ufunc` from a JAX-traceable scalar function `func` of `nin`
    inputs and `nout` outputs (jax.numpy.frompyfunc)."""
    return ufunc(func, nin, nout, identity=identity)


# -- the jnp functions that are ufunc objects ------------------------------------

def _reduce_with(reducer, has_dtype=True, has_initial=True, has_where=True):
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        a = asarray(a)
        if dtype is not None and not has_dtype:
            a = a.astype(dtype)
        kw = {}
        if has_dtype and dtype is not None:
            kw["dtype"] = dtype
        if initial is not None:
            if not has_initial:
                return _reduce_generic_fallback(reducer, a, axis, keepdims, initial, where)
            kw["initial"] = initial
        if where is not None:
            kw["where"] = where
        return reducer(a, axis=axis, keepdims=keepdims, **kw)
    return reduce


def _reduce_generic_fallback(reducer, a, axis, keepdims, initial, where):
    # all / any with an initial value: fold it in after the reduction.
    res = reducer(a, axis=axis, keepdims=keepdims, where=where)
    init = asarray(initial).astype("bool")
    return (res & init) if reducer is _all else (res | init)


def _logsumexp_reduce(base2):
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        from .ufuncs import exp2, log2
        from ...lax import exp, log
        a = asarray(a)
        if dtype is not None:
            a = a.astype(dtype)
        elif _aval(a).dtype_name not in _FLOAT_NAMES:
            a = a.astype(_result_dtype(_logaddexp, a, a))
        ex, lg = (exp2, log2) if base2 else (exp, log)
        init = -_np.inf if where is not None else None
        final_shape = None
        if axis is None:  # the flattened array, reshaped back at the end for keepdims
            final_shape = (1,) * _aval(a).ndim if keepdims else None
            if where is not None:
                where = reshape(broadcast_to(asarray(where), _aval(a).shape), (-1,))
            a, axis, keepdims = reshape(a, (-1,)), 0, False
        # The shift (kept dims, to broadcast) and the same maximum in the result's shape.
        # The shift is a constant for differentiation (the result does not depend on it).
        top = _max(a, axis=axis, initial=init, where=where)
        top = lax.stop_gradient(_where(lax.is_finite(top), top, 0.0))
        axes = tuple(range(_aval(a).ndim)) if axis is None else axis
        shift = expand_dims(top, axes)
        total = _sum(ex(a - shift), axis=axis, keepdims=keepdims, where=where)
        res = lg(total) + (shift if keepdims else top)
        if initial is not None:
            res = (_logaddexp2 if base2 else _logaddexp)(res, asarray(initial).astype(_aval(res).dtype))
        return res if final_shape is None else reshape(res, final_shape)
    return reduce


def _add_at(a, indices, b):
    return asarray(a).at[indices].add(b)


def _multiply_at(a, indices, b):
    return asarray(a).at[indices].multiply(b)


def _subtract_at(a, indices, b):
    return asarray(a).at[indices].add(_negative(asarray(b)))


def _cum(fn):
    def accumulate(a, axis=0, dtype=None):
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        return fn(a, axis=axis, dtype=dtype)
    return accumulate


_NAMED = {}


def _named_ufunc(name):
    return _NAMED[name]


def _make(fn, nin, identity=None, **methods):
    u = ufunc(fn, nin, 1, name=fn.__name__, identity=identity, call=fn, **methods)
    _NAMED[u.__name__] = u
    return u


add = _make(_add, 2, 0, reduce=_reduce_with(_sum), accumulate=_cum(cumsum), at=_add_at)
multiply = _make(_multiply, 2, 1, reduce=_reduce_with(prod), accumulate=_cum(cumprod), at=_multiply_at)
subtract = _make(_subtract, 2, None, at=_subtract_at)
maximum = _make(_maximum, 2, None, reduce=_reduce_with(_max, has_dtype=False))
minimum = _make(_minimum, 2, None, reduce=_reduce_with(_min, has_dtype=False))
logical_and = _make(_logical_and, 2, True, reduce=_reduce_with(_all, has_dtype=False, has_initial=False))
logical_or = _make(_logical_or, 2, False, reduce=_reduce_with(_any, has_dtype=False, has_initial=False))
logical_xor = _make(_logical_xor, 2, False)
bitwise_and = _make(_bitwise_and, 2, -1)
bitwise_or = _make(_bitwise_or, 2, 0)
bitwise_xor = _make(_bitwise_xor, 2, 0)
logaddexp = _make(_logaddexp, 2, -_np.inf, reduce=_logsumexp_reduce(False))
logaddexp2 = _make(_logaddexp2, 2, -_np.inf, reduce=_logsumexp_reduce(True))
negative = _make(_negative, 1, None)

# `lax.reduce_window` knows the jnp functions as its add / max / min windows.
_convolution.register_monoid(add, "add")
_convolution.register_monoid(maximum, "max")
_convolution.register_monoid(minimum, "min")
