"""`jax.scipy` (the subset microjax_rs covers: `special`, `linalg`, `stats.norm`)."""
from . import linalg, special, stats  # noqa: F401
