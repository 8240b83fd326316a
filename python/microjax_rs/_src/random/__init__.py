"""`jax._src.random` at JAX's path: the PRNG implementation registry
(`prng`), Threefry-2x32's key functions (`threefry2x32`) and
`default_prng_impl()`, over `microjax_rs.random`."""
from ...random._prng import default_prng_impl  # noqa: F401
from . import prng, threefry2x32  # noqa: F401
