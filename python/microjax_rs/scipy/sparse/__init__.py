"""`jax.scipy.sparse`: the Krylov solvers of `linalg`."""
from . import linalg  # noqa: F401
