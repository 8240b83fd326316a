"""Internal helpers kept at JAX's paths (`jax._src.util.safe_map`) so seed programs
run, and the `jax._src` stand-ins libraries reach for (docs/COMPATIBILITY.md).

JAX imports its `_src` modules with `import jax`, so libraries read them as
attributes (`jax._src.xla_bridge._backends`) without importing them; here a
stand-in submodule is imported on first such access."""
import importlib as _importlib

_STAND_INS = frozenset({"ad_checkpoint", "api", "array", "compiler", "config", "core", "debugger", "deprecations", "dispatch", "dtypes",
                        "test_util", "traceback_util", "xla_bridge"})


def __getattr__(name):
    if name in _STAND_INS:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
