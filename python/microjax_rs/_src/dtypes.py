"""`jax._src.dtypes` at JAX's path: the public `jax.dtypes` names plus the
internal error type of dtype promotion."""
from ..dtypes import *  # noqa: F401,F403
import numpy as np

from ..dtypes import dtype_name as _dtype_name
from ..dtypes import (  # noqa: F401
    TypePromotionError, canonicalize_dtype, default_float_name, default_int_name, issubdtype, np_dtype,
    x64_enabled,
)


__all__ = ["TypePromotionError", "canonicalize_dtype", "default_float_dtype", "dtype", "python_scalar_types_to_dtypes", "default_int_dtype",
           "default_uint_dtype", "is_weakly_typed", "issubdtype", "to_inexact_dtype", "to_numeric_dtype"]


def default_int_dtype():
    """The integer dtype Python ints become (int32; int64 with x64)."""
    return np.dtype(np_dtype(default_int_name()))


def default_uint_dtype():
    """The unsigned counterpart of `default_int_dtype`."""
    return np.dtype(np.uint64 if x64_enabled() else np.uint32)


def default_float_dtype():
    """The float dtype Python floats become (float32; float64 with x64)."""
    return np.dtype(np_dtype(default_float_name()))


def to_inexact_dtype(dtype):
    """`dtype` if inexact, else the float type integer/bool data turns into
    (float64 for 64-bit integers, float32 otherwise, as JAX)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc" or dtype.name == "bfloat16":
        return dtype
    return np.dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def to_numeric_dtype(dtype):
    """`dtype`, with bool replaced by the default integer type."""
    dtype = np.dtype(dtype)
    return default_int_dtype() if dtype == np.bool_ else dtype


def is_weakly_typed(x):
    """Whether `x` is weakly typed: a Python int/float/complex, or an array
    or tracer made from one."""
    if type(x) in (int, float, complex):
        return True
    return bool(getattr(x, "weak_type", False))


# The Python scalar types whose values are weakly typed.
_weak_types = [int, float, complex]

# The dtype of each Python scalar type before canonicalization (int: int64).
python_scalar_types_to_dtypes = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
                                 complex: np.dtype(np.complex128)}


def dtype(x, *, canonicalize=False):
    """The NumPy dtype of `x` (a dtype-like, Python scalar type or value, or
    array), canonicalized to the x64 mode's widths when `canonicalize`."""
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if isinstance(x, type) and x in python_scalar_types_to_dtypes:
        dt = python_scalar_types_to_dtypes[x]
    elif type(x) in python_scalar_types_to_dtypes:
        dt = python_scalar_types_to_dtypes[type(x)]
    elif hasattr(x, "dtype"):
        dt = np.dtype(x.dtype) if not isinstance(x.dtype, np.dtype) else x.dtype
    else:
        dt = np.dtype(np_dtype(_dtype_name(x)))
    return canonicalize_dtype(dt) if canonicalize else dt
