"""`jax.lib`: in JAX 0.10.2 the module only says which jaxlib release runs
underneath (`jax.lib.__version__`, libraries compare it). microjax_rs has no
jaxlib; it reports the JAX release whose API it follows."""

__version__ = "0.10.2"
