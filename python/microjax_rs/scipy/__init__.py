"""`jax.scipy` (the subset microjax_rs covers: `special`, `linalg`)."""
from . import linalg, special  # noqa: F401
