"""`jax.experimental` pieces that exist here."""
from ._callback import io_callback

__all__ = ["io_callback"]
