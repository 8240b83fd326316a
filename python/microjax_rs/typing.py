"""`jax.typing`: annotations for array-like and dtype-like arguments (the same
unions as JAX's `jax.typing.ArrayLike` and `DTypeLike`)."""
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np

from . import Array


@runtime_checkable
class SupportsDType(Protocol):
    """Anything with a `dtype` attribute (as `np.float32` or `jnp.float32`)."""

    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[
    Array,  # concrete arrays and tracers
    np.ndarray,
    np.bool_,
    np.number,
    bool,
    int,
    float,
    complex,
]
"""What `jnp.asarray` accepts: arrays, NumPy arrays and scalars, Python scalars."""

DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
"""What `jnp.dtype` accepts: names, scalar types, dtypes, objects with a `dtype`."""

__all__ = ["ArrayLike", "DTypeLike"]
