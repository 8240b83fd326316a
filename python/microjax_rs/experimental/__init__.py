"""`jax.experimental` pieces that exist here: `io_callback`, `checkify`."""
from .._callback import io_callback
from . import checkify  # noqa: F401

__all__ = ["io_callback", "checkify"]
