"""Exceptions with JAX's names and meanings."""


class JAXTypeError(TypeError):
    """Base of the tracer-conversion errors (JAX calls it JAXTypeError)."""


class ConcretizationTypeError(JAXTypeError):
    """A traced value was used where a concrete Python value is required."""


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` of a traced value (a Python `if` on a traced array)."""


class TracerIntegerConversionError(JAXTypeError):
    """`int()`/`__index__` of a traced value."""


class TracerArrayConversionError(JAXTypeError):
    """`numpy.asarray` of a traced value."""


class UnexpectedTracerError(Exception):
    """A tracer was used after the transformation that created it ended."""


class NonConcreteBooleanIndexError(IndexError):
    """Boolean-mask indexing with a traced mask."""


class KeyReuseError(RuntimeError):
    """A PRNG key was reused (only raised when key-reuse checking is on)."""


class JaxRuntimeError(RuntimeError):
    """JAX's error for a program that failed while running (XLA's runtime
    error). microjax_rs lets an exception raised inside a callback propagate
    as itself, so this type is raised only where a runtime failure has no
    Python exception of its own."""
