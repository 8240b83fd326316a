"""`microjax_rs.install_as_jax()`: run code written for JAX (optax, chex, equinox, ...)
on microjax_rs by answering `import jax` and `import jax.<anything>` with microjax_rs.

The switch puts a finder at the front of `sys.meta_path`:

* `jax` itself is a small facade module: every attribute is looked up on
  `microjax_rs` (so `jax.jit is microjax_rs.jit`), except the version, which is
  the JAX release whose API microjax_rs follows (`jax.__version__ == "0.10.2"`,
  `jax.__version_info__ == (0, 10, 2)`); attributes set on the facade (as
  `mock.patch.object(jax, "pmap", ...)` does) shadow microjax_rs's for code
  that reads them through `jax`.
* `jax.<path>` is the module `microjax_rs.<path>`, the same object (so
  `jax.numpy is microjax_rs.numpy`, `jax._src.traceback_util is
  microjax_rs._src.traceback_util`); a path microjax_rs lacks raises
  `ModuleNotFoundError` as an uninstalled module would. The real `jax`, if it is
  installed, is never imported while the switch is on.

It raises `RuntimeError` if the real `jax` (or `jaxlib`) is already imported,
and is idempotent. It changes only the import system of the running
interpreter; `uninstall_as_jax()` takes the finder out and drops the `jax*`
entries it put in `sys.modules` (modules that imported `jax` keep the objects
they hold).
"""
import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
import types

JAX_VERSION = "0.10.2"
"""The JAX release whose API microjax_rs follows, reported as `jax.__version__`."""

_PKG = __name__.rpartition(".")[0]  # "microjax_rs"
_lock = threading.Lock()
_finder = None


def _facade():
    """The `jax` module: microjax_rs's namespace with JAX's version."""
    target = importlib.import_module(_PKG)
    mod = types.ModuleType("jax", target.__doc__)
    mod.__version__ = JAX_VERSION
    mod.__version_info__ = tuple(int(p) for p in JAX_VERSION.split("."))
    mod.__path__ = []  # a package: `jax.<sub>` is answered by the finder only
    mod.__file__ = target.__file__
    mod.__microjax_rs__ = target

    def __getattr__(name):
        try:
            return getattr(target, name)
        except AttributeError:
            # `jax.flatten_util` etc. after `import jax` alone: JAX imports these
            # eagerly; here a submodule of microjax_rs is imported on first use.
            if name.startswith("__"):
                raise
            try:
                sub = importlib.import_module(f"jax.{name}")
            except ModuleNotFoundError as e:
                if e.name not in (f"jax.{name}", f"{_PKG}.{name}"):
                    raise
                raise AttributeError(f"module 'jax' has no attribute {name!r}") from None
            return sub

    def __dir__():
        return sorted(set(dir(target)) | set(mod.__dict__))

    mod.__getattr__ = __getattr__
    mod.__dir__ = __dir__
    return mod


class _AliasLoader(importlib.abc.Loader):
    """Hands back an already-imported module; keeps its own `__spec__`."""

    def __init__(self, module):
        self._module = module
        self._spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        # `module_from_spec` replaced `__spec__` with the alias's; the module's
        # own relative imports and `importlib.reload` need the original back.
        if module.__name__ != "jax":
            module.__spec__ = self._spec


class _JaxFinder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.facade = _facade()

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "jax":
            module = self.facade
        elif fullname.startswith("jax."):
            real = _PKG + fullname[3:]
            try:
                module = importlib.import_module(real)
            except ModuleNotFoundError as e:
                # Only a missing module *at this path* means "not here"; an
                # import error inside an existing module propagates.
                if e.name is not None and real.startswith(e.name) and e.name.startswith(_PKG + "."):
                    raise ModuleNotFoundError(
                        f"No module named {fullname!r} (microjax_rs has no {real!r}; "
                        "see docs/COMPATIBILITY.md)",
                        name=fullname,
                    ) from None
                raise
        else:
            return None
        is_pkg = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(module), is_package=is_pkg
        )


def _real_module_loaded(name):
    mod = sys.modules.get(name)
    if mod is None:
        return False
    if _finder is not None and mod is _finder.facade:
        return False
    return getattr(mod, "__microjax_rs__", None) is None and not getattr(
        mod, "__name__", ""
    ).startswith(_PKG)


def install_as_jax():
    """Make `import jax` (and every `jax.*` submodule) import microjax_rs.

    After `microjax_rs.install_as_jax()`, libraries written for JAX -- optax,
    chex, equinox -- import and run on microjax_rs unchanged::

        import microjax_rs
        microjax_rs.install_as_jax()
        import optax, equinox as eqx

    Raises `RuntimeError` if the real `jax` or `jaxlib` is already imported in
    this interpreter (two array libraries under one name cannot be mixed).
    Calling it again is a no-op. Returns the `jax` facade module.
    """
    global _finder
    with _lock:
        for name in ("jax", "jaxlib"):
            if _real_module_loaded(name):
                raise RuntimeError(
                    f"microjax_rs.install_as_jax(): the real {name!r} is already imported "
                    f"(from {getattr(sys.modules[name], '__file__', '?')}); call "
                    "install_as_jax() before anything imports jax, or run without the real jax"
                )
        if _finder is None:
            _finder = _JaxFinder()
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)
        # Submodules imported before the switch resolve through the finder too;
        # `import jax` now gives the facade.
        return importlib.import_module("jax")


def uninstall_as_jax():
    """Undo `install_as_jax()`: remove the finder and the `jax`/`jax.*` entries of
    `sys.modules` that alias microjax_rs. No-op if the switch is off."""
    with _lock:
        if _finder is None:
            return
        while _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        for name in [n for n in sys.modules if n == "jax" or n.startswith("jax.")]:
            mod = sys.modules[name]
            if mod is _finder.facade or getattr(mod, "__name__", "").startswith(_PKG):
                del sys.modules[name]


def is_installed_as_jax():
    """Whether `install_as_jax()` is in effect."""
    return _finder is not None and _finder in sys.meta_path
