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


class JAXIndexError(IndexError):
    """JAX's IndexError: the base of NonConcreteBooleanIndexError."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """Boolean-mask indexing with a traced mask."""


class KeyReuseError(JAXTypeError):
    """A typed PRNG key was consumed twice (raised only with
    `jax_debug_key_reuse` on; see `_src/key_reuse.py`)."""


class JaxRuntimeError(RuntimeError):
    """JAX's error for a program that failed while running (XLA's runtime
    error). microjax_rs lets an exception raised inside a callback propagate
    as itself, so this type is raised only where a runtime failure has no
    Python exception of its own."""


class JaxprTypeError(TypeError):
    """A traced program that does not type-check (`jax_enable_checks`
    checks every traced program: each equation's inputs must be the
    variables or literals it reads, with the avals they were given)."""


class InconclusiveDimensionOperation(Exception):
    """A comparison or arithmetic on symbolic dimensions whose result the
    shape polymorphism rules cannot decide. microjax_rs has no symbolic
    shapes (`jax.export.symbolic_shape` raises for any symbolic dimension),
    so nothing raises it yet; it exists so that code catching it runs."""
