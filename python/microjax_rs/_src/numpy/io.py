"""`jnp.save` / `savez` / `load`: NumPy's .npy/.npz files."""
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
