"""`jax.scipy.spatial`: `transform` (`Rotation`, `Slerp`)."""
from . import transform  # noqa: F401
