"""`jax.dlpack`: importing arrays through the DLPack protocol (exporting is
`Array.__dlpack__`, which `np.from_dlpack` and `torch.from_dlpack` call)."""
from . import dtypes as _dt
from ._src.numpy.lax_numpy import from_dlpack

_SUPPORTED = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                        "float16", "bfloat16", "float32", "float64", "complex64", "complex128"})


def is_supported_dtype(dtype):
    """Whether arrays of `dtype` can cross DLPack (every numeric dtype; not
    float0, PRNG keys or the narrow float/int types)."""
    try:
        return _dt.dtype_name(dtype) in _SUPPORTED
    except (TypeError, ValueError):
        return False


__all__ = ["from_dlpack", "is_supported_dtype"]
