"""`jnp.save` / `savez` / `load` (NumPy's .npy/.npz files), arrays from bytes
and text (`frombuffer`, `fromstring`; `fromiter` / `fromfile` raise as in
JAX) and the print helpers, which are NumPy's."""
import numpy as np

from ... import dtypes as _dt
from .lax_numpy import asarray


def save(file, arr, allow_pickle=True):
    """Write one array in .npy format (NumPy's `np.save` of its host copy)."""
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds):
    """Several arrays into one uncompressed .npz (NumPy's `np.savez`)."""
    np.savez(file, *[np.asarray(a) for a in args], **{k: np.asarray(v) for k, v in kwds.items()})


def load(file, *args, **kwargs):
    """Read .npy/.npz data (`np.load`); a single array comes back as a
    microjax_rs array (raw 2-byte void data, how NumPy writes bfloat16, as
    bfloat16)."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == np.dtype("V2") and _dt.bfloat16 is not None:
            out = out.view(_dt.bfloat16)
        try:
            return asarray(out)
        except (TypeError, ValueError):
            return out
    return out


# -- arrays from bytes and text ---------------------------------------------------

_IMPURE = ("is not implemented because it may be non-pure and thus unsafe for use with JIT and other "
           "JAX transformations. Consider using jnp.asarray(np.{name}(...)) instead, and if "
           "necessary, wrap it in jax.pure_callback.")


def fromiter(*args, **kwargs):
    """Not supported (as in JAX): reading an iterator is not a pure function."""
    raise NotImplementedError("jnp.fromiter() " + _IMPURE.format(name="fromiter"))


def fromfile(*args, **kwargs):
    """Not supported (as in JAX): reading a file is not a pure function."""
    raise NotImplementedError("jnp.fromfile() " + _IMPURE.format(name="fromfile"))


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """A 1-D array of the raw bytes of `buffer` read as `dtype` (NumPy's
    `frombuffer`, then JAX's dtype canonicalization)."""
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """A 1-D array of the numbers in the text `string` separated by `sep`."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


# -- printing ------------------------------------------------------------------------
# Arrays print through NumPy, so these are NumPy's own functions and options.

iterable = np.iterable
array_repr = np.array_repr
array_str = np.array_str


def get_printoptions():
    """NumPy's print options (arrays print through NumPy): `np.get_printoptions`."""
    return np.get_printoptions()


def printoptions(*args, **kwargs):
    """Context manager setting NumPy's print options: `np.printoptions`."""
    return np.printoptions(*args, **kwargs)


def set_printoptions(*args, **kwargs):
    """Sets NumPy's print options: `np.set_printoptions`."""
    return np.set_printoptions(*args, **kwargs)
