"""Internal helpers kept at JAX's paths (`jax._src.util.safe_map`) so seed programs run."""
