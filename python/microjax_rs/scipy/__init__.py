"""`jax.scipy` (the subset microjax_rs covers: `special`)."""
from . import special  # noqa: F401
