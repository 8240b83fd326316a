"""`jax._src.lax` at JAX's path (its `lax` module)."""
