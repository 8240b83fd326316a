"""`jax.ops`: reductions of segments of an array (`segment_sum`, ...).

`data[i]` goes to segment `segment_ids[i]`; the result has `num_segments`
rows; ids outside `[0, num_segments)` are dropped, and a segment no id names
holds the reduction's identity (0 for sum, 1 for prod, the lowest value for
max, the highest for min), as JAX's scatter-based definitions give."""
import numpy as np

from . import numpy as jnp
from .core import Tracer

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _num_segments(segment_ids, num_segments):
    if num_segments is not None:
        return int(num_segments)
    if isinstance(segment_ids, Tracer):
        from .errors import ConcretizationTypeError
        raise ConcretizationTypeError(
            segment_ids, "segment reductions need a static num_segments when segment_ids are traced")
    ids = np.asarray(segment_ids)
    return int(ids.max()) + 1 if ids.size else 0


def _segment(kind, identity, data, segment_ids, num_segments, bucket_size):
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    if segment_ids.ndim != 1 or data.ndim < 1 or data.shape[0] != segment_ids.shape[0]:
        raise ValueError(f"segment_{kind}: segment_ids must be 1-D with the length of data's leading axis "
                         f"(got {segment_ids.shape} and {data.shape})")
    if not jnp.issubdtype(segment_ids.dtype, jnp.integer):
        raise TypeError(f"segment_{kind}: segment_ids must be integers, got {segment_ids.dtype}")
    n = _num_segments(segment_ids, num_segments)
    if n < 0:
        raise ValueError("num_segments must be non-negative")
    # Out-of-range ids go to one extra row that is cut off afterwards.
    in_range = (segment_ids >= 0) & (segment_ids < n)
    ids = jnp.where(in_range, segment_ids, n)
    init = jnp.full((n + 1,) + data.shape[1:], identity(data.dtype), data.dtype)
    out = getattr(init.at[ids], {"sum": "add", "prod": "multiply", "max": "max", "min": "min"}[kind])(data)
    return out[:n]


def _extreme(dtype, top):
    """The largest (`top`) or smallest value of `dtype`: True / False for bool, the integer
    limits, +-inf for floats (the identity of a segment min / max)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return top
    if jnp.issubdtype(dtype, jnp.integer):
        info = jnp.iinfo(dtype)
        return info.max if top else info.min
    return np.inf if top else -np.inf


def _lowest(dtype):
    return _extreme(dtype, False)


def _highest(dtype):
    return _extreme(dtype, True)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None, out_sharding=None):
    """The sum of each segment of `data` (rows of the result: `num_segments`,
    which must be static under `jit`; default `max(segment_ids) + 1`)."""
    return _segment("sum", lambda dt: 0, data, segment_ids, num_segments, bucket_size)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                 bucket_size=None, mode=None):
    """The product of each segment of `data` (empty segments: 1)."""
    return _segment("prod", lambda dt: 1, data, segment_ids, num_segments, bucket_size)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    """The maximum of each segment of `data` (empty segments: the dtype's
    lowest value, -inf for floats)."""
    return _segment("max", _lowest, data, segment_ids, num_segments, bucket_size)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    """The minimum of each segment of `data` (empty segments: the dtype's
    highest value, inf for floats)."""
    return _segment("min", _highest, data, segment_ids, num_segments, bucket_size)
