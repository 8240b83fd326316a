"""`jax._src.deprecations` at JAX's path: no deprecation of JAX 0.10.2 is
accelerated (turned into an error) in microjax_rs."""
import warnings


def is_accelerated(deprecation_id):
    return False


def warn(deprecation_id, message, stacklevel=1):
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel + 1)
