"""pytest plugin for tools/jax_suite.py: maps `jax` to microjax_rs before
JAX's test files are collected.

JAX's test files also import internals microjax_rs does not have
(`jax._src.cudnn...`, `jax._src.lax.lax`, complex dtype names, ...) at module
level. So that a missing internal fails only the cases that use it, not the
whole file, this plugin fills those names with placeholders that raise
NotImplementedError when used. The placeholders live here, in the measuring
tool, never in the package.
"""
import enum
import importlib.abc
import importlib.machinery
import sys
import types

import numpy as np

import microjax_rs


_COLLECTING = True


def pytest_collection_finish(session):
    global _COLLECTING
    _COLLECTING = False


class _Placeholder:
    """Stands for a JAX internal microjax_rs lacks: any use raises."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Placeholder(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        if _COLLECTING:  # module-level uses (`impl = prng.PRNGImpl(...)`) fail when a case uses them
            return _Placeholder(f"{self._name}(...)")
        raise NotImplementedError(f"{self._name} is a JAX internal microjax_rs does not provide")

    def __mro_entries__(self, bases):
        return (object,)

    def __repr__(self):
        return f"<placeholder {self._name}>"


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Placeholder(f"{self.__name__}.{attr}")


# JAX internals the measured files import at module level, absent here (under
# both names: `from jax._src import x` imports `microjax_rs._src.x`).
_PLACEHOLDER_MODULES = frozenset(
    prefix + name for prefix in ("jax._src.", "microjax_rs._src.")
    for name in ("cudnn", "cudnn.scaled_matmul_stablehlo"))


class _NoOpOption:
    """A JAX option context microjax_rs lacks: used as a context manager or
    decorator it changes nothing (the cases run under the defaults)."""

    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    @property
    def value(self):
        raise NotImplementedError(f"{self._name} is a JAX option microjax_rs does not provide")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname in _PLACEHOLDER_MODULES:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = _PlaceholderModule(spec.name)
        mod.__path__ = []
        return mod

    def exec_module(self, module):
        pass


def pytest_configure(config):
    microjax_rs.install_as_jax()
    sys.meta_path.insert(0, _Finder())
    jnp = microjax_rs.numpy
    # Complex dtype names (complex numbers are not built yet): NumPy's types,
    # so cases using them fail when they reach microjax_rs.
    for name, value in (("complex64", np.complex64), ("complex128", np.complex128), ("complex_", np.complex128),
                        ("csingle", np.complex64), ("cdouble", np.complex128)):
        if not hasattr(jnp, name):
            setattr(jnp, name, value)
    for name in ("legacy_prng_key", "debug_key_reuse", "threefry_partitionable", "softmax_custom_jvp",
                 "explicit_x64_dtypes"):
        if not hasattr(microjax_rs, name):
            setattr(microjax_rs, name, _NoOpOption(f"jax.{name}"))
    # Our `_src` stand-ins answer a missing attribute with a placeholder.
    import importlib
    for name in ("_src.config", "_src.core", "_src.dtypes", "_src.util", "_src.dispatch", "_src.api",
                 "_src.array", "_src.numpy.indexing", "_src.ad_checkpoint", "_src.deprecations", "_src.lax.lax",
                 "_src.sharding_impls", "lax"):
        module = importlib.import_module(f"microjax_rs.{name}")
        if "__getattr__" not in vars(module):
            module.__getattr__ = (lambda mod: lambda attr: _Placeholder(f"{mod}.{attr}"))(module.__name__)
    from microjax_rs._src import config as src_config
    if "ExplicitX64Mode" not in vars(src_config):
        src_config.ExplicitX64Mode = enum.Enum("ExplicitX64Mode", "WARN ERROR ALLOW")
