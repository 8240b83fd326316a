"""`jax.extend`: interfaces for libraries that extend the system, here the
definition of new primitives (`extend.core.Primitive`)."""
from . import core  # noqa: F401
