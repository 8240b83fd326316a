"""`lax.real`, `lax.imag`, `lax.conj` and `lax.complex`: the complex-part
primitives (rules in the Rust core's `prims/complex.rs`)."""
import builtins as _builtins

import numpy as np

from .. import core, dtypes

_SCALARS = (bool, int, float, _builtins.complex)


def _arr(x):
    if isinstance(x, (np.ndarray, np.generic)) or type(x) in _SCALARS:
        return core.to_array(x)
    return x


def _prim(name):
    from . import _P

    return _P[name]


def real(x):
    """The real part of a complex array (jax.lax.real)."""
    return _prim("real").bind(_arr(x))


def imag(x):
    """The imaginary part of a complex array (jax.lax.imag)."""
    return _prim("imag").bind(_arr(x))


def conj(x):
    """The complex conjugate; a real operand becomes complex (jax.lax.conj)."""
    x = _arr(x)
    return _prim("conj").bind(x, input_dtype=dtypes.np_dtype(core.get_aval(x).dtype_name))


def complex(x, y):
    """`x + i y` of two float32 or float64 arrays (jax.lax.complex); a
    Python scalar takes the other operand's dtype."""
    if type(x) in _SCALARS and type(y) not in _SCALARS:
        x = core.to_array(x, dtypes.np_dtype(core.get_aval(y).dtype_name), weak_type=True)
    elif type(y) in _SCALARS and type(x) not in _SCALARS:
        y = core.to_array(y, dtypes.np_dtype(core.get_aval(x).dtype_name), weak_type=True)
    return _prim("complex").bind(_arr(x), _arr(y))
