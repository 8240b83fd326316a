"""`jax.dlpack`: importing arrays through the DLPack protocol (exporting is
`Array.__dlpack__`, which `np.from_dlpack` and `torch.from_dlpack` call)."""
from . import dtypes as _dt
from ._src.numpy.lax_numpy import from_dlpack
from ._src.tables import KINDS as _KINDS

# Every numeric dtype of Rust's table (kind `V` is float0 and PRNG keys).
_SUPPORTED = frozenset(name for name, kind in _KINDS.items() if kind != "V")


def is_supported_dtype(dtype):
    """Whether arrays of `dtype` can cross DLPack (every numeric dtype; not
    float0, PRNG keys or the narrow float/int types)."""
    try:
        return _dt.dtype_name(dtype) in _SUPPORTED
    except (TypeError, ValueError):
        return False


__all__ = ["from_dlpack", "is_supported_dtype"]
