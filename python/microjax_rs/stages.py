"""`jax.stages`: the objects of `jit(f).lower(*args)` and `.compile()`."""
from .api import _Compiled as Compiled, _Lowered as Lowered  # noqa: F401

__all__ = ["Compiled", "Lowered"]
