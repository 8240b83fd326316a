"""`jax._src.debugger.cli_debugger`: the command-line `jdb` debugger (the
"cli" backend), `microjax_rs._debugger`'s."""
from ..._debugger import CliDebugger, DebuggerFrame  # noqa: F401
from ..._debugger import run_cli_debugger as run_debugger  # noqa: F401
from . import core as debugger_core  # noqa: F401
