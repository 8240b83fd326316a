"""`jax._src.debugger.core`: the frames a debugger sees and the registry of
debugger backends (`register_debugger`, `get_debugger`), the objects of
`microjax_rs._debugger`."""
from ..._debugger import DebuggerFrame, breakpoint, get_debugger, register_debugger  # noqa: F401,A004
from ..._debugger import _debuggers as _debugger_registry  # noqa: F401
from ..._debugger import _lock as debug_lock  # noqa: F401

__all__ = ["DebuggerFrame", "breakpoint", "get_debugger", "register_debugger"]
