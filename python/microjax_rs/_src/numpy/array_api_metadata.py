"""The Python array API standard's entry points (data-apis.org): the version
this namespace follows, `Array.__array_namespace__` (installed on concrete
arrays and tracers by `array_methods.install_hooks`) and the inspection
object of `jnp.__array_namespace_info__()`, as JAX 0.10.2 has them."""
import numpy as np

from ...dtypes import default_complex_name, default_float_name, default_int_name, np_dtype, x64_enabled

__array_api_version__ = "2024.12"


def __array_namespace__(self, *, api_version=None):
    """The array API namespace of this array: the ``microjax_rs.numpy``
    module. ``api_version`` is None or ``'2024.12'``, the one version this
    namespace follows; any other value is a ValueError (as JAX)."""
    if api_version is not None and api_version != __array_api_version__:
        raise ValueError(f"{api_version=!r} is not available; "
                         f"available versions are: {[__array_api_version__]}")
    from ... import numpy as jnp_module
    return jnp_module


def __array_namespace_info__():
    """The array API inspection object (``capabilities``, ``default_device``,
    ``default_dtypes``, ``dtypes``, ``devices``) of this namespace."""
    return ArrayNamespaceInfo()


_SIGNED = ("int8", "int16", "int32", "int64")
_UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
_REAL = ("float32", "float64")
_COMPLEX = ("complex64", "complex128")
_KINDS = {
    "bool": ("bool",),
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED + _UNSIGNED,
    "real floating": _REAL,
    "complex floating": _COMPLEX,
    "numeric": _SIGNED + _UNSIGNED + _REAL + _COMPLEX,
}
# The 64-bit types are array API types only while `jax_enable_x64` is on.
_X64_ONLY = ("int64", "uint64", "float64", "complex128")


class ArrayNamespaceInfo:
    """The array API inspection object: what this namespace supports. Its
    dtypes are the same on every device (64-bit ones only with
    ``jax_enable_x64``), and arrays are uncommitted by default (the default
    device is None)."""

    _capabilities = {
        "boolean indexing": False,  # not within transformations
        "data-dependent shapes": False,  # not within transformations
        "max dimensions": 64,
    }

    def capabilities(self):
        """The optional array API capabilities: boolean indexing and
        data-dependent shapes (False: not under transformations) and the
        largest number of dimensions."""
        return dict(self._capabilities)

    def default_device(self):
        """None: arrays are uncommitted, placed on the default device."""
        return None

    def devices(self):
        """None (uncommitted) followed by the devices of every platform in use."""
        from ... import _devices
        out = [None]
        for platform in _devices._platforms():
            out.extend(_devices._platform_devices(platform))
        return out

    def default_dtypes(self, *, device=None):
        """The default real floating, complex floating, integral and indexing
        dtypes (32-bit, 64-bit with ``jax_enable_x64``), on any device."""
        del device
        integral = np.dtype(np_dtype(default_int_name()))
        return {
            "real floating": np.dtype(np_dtype(default_float_name())),
            "complex floating": np.dtype(np_dtype(default_complex_name())),
            "integral": integral,
            "indexing": integral,
        }

    def dtypes(self, *, device=None, kind=None):
        """The array API dtypes by name, of ``kind`` (None: all numeric dtypes
        and bool; a kind name; or a tuple of kind names), on any device."""
        del device
        if kind is None:
            names = _KINDS["numeric"] + _KINDS["bool"]
        elif isinstance(kind, tuple):
            names = tuple(n for k in kind for n in _KINDS[k])
        else:
            names = _KINDS[kind]
        x64 = x64_enabled()
        return {n: np.dtype(np_dtype(n)) for n in names if x64 or n not in _X64_ONLY}

