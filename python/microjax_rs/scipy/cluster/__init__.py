"""`jax.scipy.cluster`: `vq`."""
from . import vq  # noqa: F401
