"""`jax._src.dtypes` at JAX's path: the public `jax.dtypes` names plus the
internal error type of dtype promotion."""
from ..dtypes import *  # noqa: F401,F403
from ..dtypes import TypePromotionError, canonicalize_dtype, issubdtype  # noqa: F401


__all__ = ["TypePromotionError", "canonicalize_dtype", "issubdtype"]
