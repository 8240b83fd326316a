"""`jax._src.core` at JAX's path: tracers, avals and the trace errors."""
from ..core import *  # noqa: F401,F403
from ..core import ShapedArray, Tracer  # noqa: F401
from ..errors import (  # noqa: F401
    ConcretizationTypeError, TracerArrayConversionError, TracerBoolConversionError,
    TracerIntegerConversionError,
)
