"""The jnp scalar types (`jnp.float32(x)` makes an array; `isinstance`
compares dtypes), NumPy's abstract scalar classes, and the dtype queries:
`result_type`, `promote_types`, `finfo`, `iinfo`, `issubdtype`, `isdtype`,
`can_cast`."""
import builtins as _builtins

import numpy as _np

from ..key_arrays import keys_through as _keys_through
from ... import dtypes as _dt
from ...core import ArrayImpl, Tracer
from .lax_numpy import asarray
from .util import _SCALARS, _aval, _dtype_pair, _name, _promote_pair_names


# -- scalar types --------------------------------------------------------------

class _ScalarType(type):
    def __repr__(cls):
        return cls.__name__

    def __instancecheck__(cls, x):
        return getattr(x, "dtype", None) == cls.dtype

    # As JAX's scalar types: `jnp.float16 == np.float16` (so `dt in [jnp.float16]`
    # holds for NumPy's type), with the hash of NumPy's type.
    def __eq__(cls, other):
        return cls is other or (cls.dtype is not None and cls.dtype.type == other)

    def __ne__(cls, other):
        return not _ScalarType.__eq__(cls, other)

    def __hash__(cls):
        return hash(cls.dtype.type) if cls.dtype is not None else id(cls)


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
complex64, complex128 = (_make_scalar_type(n) for n in ("complex64", "complex128"))


def _make_unsupported_scalar_type(name):
    """A scalar type JAX has but microjax_rs does not compute with (the
    sub-byte integers and the 8- and 4-bit floats of ml_dtypes): the name
    exists, so code can refer to it and compare dtypes, but making an array
    of it raises JAX's TypeError for an unsupported dtype."""
    def __new__(cls, x=0):
        raise TypeError(f"dtype {name!r} is not supported by microjax_rs")

    # None where ml_dtypes lacks the type (int1/uint1 are newer than the
    # ml_dtypes releases for Python 3.9).
    ml_type = getattr(_dt._ml_dtypes, name, None) if _dt._ml_dtypes is not None else None
    np_d = _np.dtype(ml_type) if ml_type is not None else None
    return _ScalarType(name, (), {"__new__": __new__, "dtype": np_d})


# JAX's narrow dtypes: names only (`jnp.int4(1)` or `jnp.zeros(3, jnp.int4)` raises TypeError).
int1, int2, int4, uint1, uint2, uint4 = (_make_unsupported_scalar_type(n) for n in (
    "int1", "int2", "int4", "uint1", "uint2", "uint4"))
float6_e2m3fn, float6_e3m2fn = (_make_unsupported_scalar_type(n) for n in ("float6_e2m3fn", "float6_e3m2fn"))
(float4_e2m1fn, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
 float8_e5m2fnuz, float8_e8m0fnu) = (_make_unsupported_scalar_type(n) for n in (
     "float4_e2m1fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
     "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"))
complex_ = complex128
float_ = float64
int_ = int64
# NumPy's other names of these types, and its non-numeric scalar classes.
bool = bool_  # noqa: A001  (jnp.bool, as JAX)
single, double, uint = float32, float64, uint64
csingle, cdouble = complex64, complex128
character, flexible, object_ = _np.character, _np.flexible, _np.object_
dtype = _np.dtype
generic, number, inexact, floating = _np.generic, _np.number, _np.inexact, _np.floating
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger
complexfloating = _np.complexfloating


# -- dtype queries -------------------------------------------------------------

@_keys_through
def result_type(*args):
    """JAX's result type of mixed arrays, scalars and dtypes (weak scalars lose to arrays)."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    return _dt.np_dtype(_promote_pair_names(args)[0])


def promote_types(a, b):
    """Promotion of two dtypes in JAX's lattice, without x64 canonicalization
    (Python's ``int``/``float``/``complex`` types are weak, as in JAX)."""
    name, _ = _dt.promote([_dtype_pair(a), _dtype_pair(b)], canonical=False)
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
    name = _dt.real_dtype_name(name)
    if not _dt.is_float_name(name):
        raise ValueError(f"finfo: data type {name!r} not inexact")
    if name == "bfloat16":
        return _dt._ml_dtypes.finfo(_dt.bfloat16)
    return _np.finfo(_dt.np_dtype(name))


def iinfo(int_type):
    """Machine limits (``min``, ``max``, ``bits``) of an integer dtype, as NumPy's ``iinfo``."""
    name = _dt.dtype_name(_dtype_arg(int_type))
    if not _dt.is_int_name(name):
        raise ValueError(f"Invalid integer data type {name!r}.")
    return _np.iinfo(_dt.np_dtype(name))


_ABSTRACT_FLOAT = (_np.floating, _np.inexact, _np.number, _np.generic)


def issubdtype(arg1, arg2):
    """As jnp.issubdtype; bfloat16 is a floating type; jnp scalar types work."""
    key_type = getattr(getattr(arg1, "dtype", None), "type", None)
    if isinstance(key_type, type) and issubclass(key_type, _dt.extended):
        # An array of an extended dtype (typed PRNG keys) is not a dtype, as JAX under NumPy 2.4.
        import warnings

        warnings.warn("Implicit conversion of an array to a dtype is deprecated; rather than dtype=arr "
                      "use dtype=arr.dtype. In the future this will result in an error.", DeprecationWarning,
                      stacklevel=2)
        raise ValueError(f"Could not convert {arg1!r} to a NumPy dtype (via `.__numpy_dtype__` value "
                         f"{arg1.dtype}).")
    a1, a2 = _dtype_arg(arg1), _dtype_arg(arg2)
    if a1 is None:
        return False
    if isinstance(a2, type) and issubclass(a2, _dt.extended):
        return isinstance(getattr(a1, "type", None), type) and issubclass(a1.type, a2)
    if isinstance(getattr(a1, "type", None), type) and issubclass(a1.type, _dt.extended):
        # An extended dtype (a PRNG key's) is a subtype of itself and of np.generic only.
        return a1 == a2 or a2 is _np.generic
    if isinstance(a2, type) and issubclass(a2, _np.generic) and a2 in (
            _np.generic, _np.number, _np.inexact, _np.floating, _np.integer, _np.signedinteger,
            _np.unsignedinteger, _np.bool_, _np.complexfloating):
        try:
            n1 = _dt.dtype_name(a1)
        except TypeError:
            return False
        if n1 == "bfloat16":
            return a2 in _ABSTRACT_FLOAT
        return _builtins.bool(_np.issubdtype(_dt.np_dtype(n1), a2))
    try:
        return _dt.dtype_name(a1) == _dt.dtype_name(a2)
    except TypeError:
        return False


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a dtype, or one of the Array API kind names (``'bool'``,
    ``'signed integer'``, ``'unsigned integer'``, ``'integral'``, ``'real floating'``,
    ``'complex floating'``, ``'numeric'``), or a tuple of those.
    """
    name = _dt.dtype_name(_dtype_arg(dtype))
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            ok = {"bool": name == "bool",
                  "signed integer": name.startswith("int"),
                  "unsigned integer": name.startswith("uint"),
                  "integral": _dt.is_int_name(name),
                  "real floating": _dt.is_float_name(name),
                  "complex floating": _dt.is_complex_name(name),
                  "numeric": name != "bool"}.get(k)
            if ok is None:
                raise ValueError(f"Unrecognized data type kind: {k!r}")
            if ok:
                return True
        elif _dt.dtype_name(_dtype_arg(k)) == name:
            return True
    return False


def can_cast(from_, to, casting="safe"):
    """Whether a value of dtype ``from_`` can be cast to ``to`` under the ``casting`` rule
    (``'no'``, ``'equiv'``, ``'safe'``, ``'same_kind'``, ``'unsafe'``), as NumPy decides.
    """
    f = _dtype_arg(from_)
    if isinstance(f, _SCALARS):
        f = _dt.scalar_type_name(f)
    return _builtins.bool(_np.can_cast(_dt.np_dtype(_dt.dtype_name(f)), _dt.np_dtype(_dt.dtype_name(_dtype_arg(to))),
                             casting=casting))
