"""`jax._src.debugger`: JAX's home of `jax.debug.breakpoint` and its
backends, at the path libraries import it from (`from jax._src.debugger
import core as debugger_core`; `debugger_core.register_debugger(name,
fn, priority)`). The debugger itself is `microjax_rs._debugger`."""
from . import cli_debugger, core  # noqa: F401
from .core import breakpoint  # noqa: F401,A004
