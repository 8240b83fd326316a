"""`jax.image`: resizing and resampling of arrays."""
from ._scale import ResizeMethod, resize, scale_and_translate  # noqa: F401

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
