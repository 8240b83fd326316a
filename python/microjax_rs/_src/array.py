"""`jax._src.array` at JAX's path: the concrete array type."""
from ..core import ArrayImpl  # noqa: F401
