"""`jax.experimental` pieces that exist here: `io_callback`, `checkify`, `ode`,
`shard_map`, `multihost_utils`."""
from .._callback import io_callback
from ..config import disable_x64, enable_x64
from . import checkify, multihost_utils, ode  # noqa: F401
from . import shard_map  # noqa: F401

__all__ = ["io_callback", "checkify", "ode", "enable_x64", "disable_x64", "multihost_utils",
           "shard_map"]
