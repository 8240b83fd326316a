"""`jax.scipy.stats` (the subset microjax_rs covers: `norm`)."""
from . import norm  # noqa: F401
