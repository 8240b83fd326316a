"""`jax._src.dtypes` at JAX's path: the public `jax.dtypes` names plus the
internal error type of dtype promotion."""
from ..dtypes import *  # noqa: F401,F403
from ..dtypes import canonicalize_dtype, issubdtype  # noqa: F401


class TypePromotionError(ValueError):
    """JAX's error for a promotion the `jax_numpy_dtype_promotion` mode
    forbids. microjax_rs implements the standard mode only, in which every
    pair of dtypes promotes, so it raises this for no input."""


__all__ = ["TypePromotionError", "canonicalize_dtype", "issubdtype"]
