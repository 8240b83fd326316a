"""Array manipulation that selects elements: splitting (`split`,
`array_split`, ...), `repeat`, `roll` and `pad`."""
import builtins

import numpy as _np

from ... import core, lax
from ...core import ArrayImpl, Tracer
from .indexing import _slice_axis, _take_static
from .lax_numpy import _ravel_unless_axis, astype, broadcast_to, concatenate, ravel, reshape
from .ufuncs import remainder
from .util import _arr, _aval, _canon_axis, _concat, _const


# -- splitting -----------------------------------------------------------------

def _split(ary, indices_or_sections, axis, strict):
    a = _arr(ary)
    av = _aval(a)
    axis = _canon_axis(axis, av.ndim)
    n = av.shape[axis]
    if isinstance(indices_or_sections, (int, _np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if strict and n % k:
            raise ValueError("array split does not result in an equal division")
        q, r = builtins.divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        bounds = _np.cumsum([0] + sizes).tolist()
    else:
        pts = [int(i) for i in indices_or_sections]
        bounds = [0] + pts + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo = builtins.min(builtins.max(lo if lo >= 0 else lo + n, 0), n)
        hi = builtins.min(builtins.max(hi if hi >= 0 else hi + n, 0), n)
        out.append(_slice_axis(a, axis, lo, builtins.max(lo, hi)))
    return out


def split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, strict=True)


def array_split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, strict=False)


def hsplit(ary, indices_or_sections):
    a = _arr(ary)
    return split(a, indices_or_sections, axis=0 if _aval(a).ndim == 1 else 1)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=2)


# -- repeating and rolling -----------------------------------------------------

def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    a, av, axis = _ravel_unless_axis(a, axis)
    n = av.shape[axis]
    if isinstance(repeats, Tracer):
        raise core.ConcretizationTypeError(
            "jnp.repeat requires concrete repeats (they determine the output shape)")
    reps = _np.asarray(repeats)
    if reps.ndim == 0:
        r = int(reps)
        if r < 0:
            raise ValueError("repeats may not contain negative values")
        shape = av.shape[:axis + 1] + (r,) + av.shape[axis + 1:]
        dims = tuple(range(axis + 1)) + tuple(range(axis + 2, av.ndim + 1))
        b = lax.broadcast_in_dim(a, shape, dims)
        out = lax.reshape(b, av.shape[:axis] + (n * r,) + av.shape[axis + 1:])
    else:
        if reps.shape != (n,):
            raise ValueError(f"repeats has shape {reps.shape}, expected ({n},) or a scalar")
        idx = _np.repeat(_np.arange(n), reps)
        out = _take_static(a, axis, idx.tolist())
    if total_repeat_length is not None:
        m = _aval(out).shape[axis]
        if m >= total_repeat_length:
            out = _slice_axis(out, axis, 0, total_repeat_length)
        else:
            # Pad with the last element by a broadcast (no Python list of
            # total_repeat_length indices: an absurd length is a budget error).
            last = _slice_axis(out, axis, m - 1, m)
            out = concatenate([out, repeat(last, total_repeat_length - m, axis=axis)], axis=axis)
    return out


def roll(a, shift, axis=None):
    a = _arr(a)
    if isinstance(shift, Tracer):
        return _roll_dynamic(a, shift, axis)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), _aval(a).shape)
    shifts = (shift,) if isinstance(shift, (int, _np.integer)) else tuple(shift)
    axes = (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences of the same length")
    nd = _aval(a).ndim
    for s, ax in zip(shifts, axes):
        ax = _canon_axis(ax, nd)
        n = _aval(a).shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            a = _take_static(a, ax, [(i - s) % n for i in range(n)])
    return a


def _roll_dynamic(a, shift, axis):
    """roll with run-time shifts: a window of the array concatenated with itself."""
    if axis is None:
        return reshape(_roll_dynamic(ravel(a), shift, 0), _aval(a).shape)
    shift = _arr(shift)
    axes = (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis)
    shifts = shift if _aval(shift).ndim else broadcast_to(shift, (len(axes),)) if len(axes) > 1 else shift
    nd = _aval(a).ndim
    for i, ax in enumerate(axes):
        ax = _canon_axis(ax, nd)
        n = _aval(a).shape[ax]
        if n == 0:
            continue
        s = shifts if _aval(shifts).ndim == 0 else lax.squeeze(_slice_axis(shifts, 0, i, i + 1), (0,))
        s = lax.convert_element_type(s, "int32")
        n_c = _const(n, "int32")
        start = lax.sub(n_c, remainder(s, n_c))
        start = remainder(start, n_c)
        doubled = _concat([a, a], ax)
        starts = [_const(0, "int32")] * nd
        starts[ax] = start
        sizes = list(_aval(a).shape)
        a = lax.dynamic_slice(doubled, starts, sizes)
    return a


# -- padding -------------------------------------------------------------------

def _pad_index(i, n, mode, reflect_type="even"):
    """Source index of padded position i (i may be outside [0, n))."""
    if mode == "edge":
        return builtins.min(builtins.max(i, 0), n - 1)
    if mode == "wrap":
        return i % n
    if mode == "reflect":
        if n == 1:
            return 0
        period = 2 * (n - 1)
        j = i % period
        return j if j < n else period - j
    if mode == "symmetric":
        period = 2 * n
        j = i % period
        return j if j < n else period - 1 - j
    raise ValueError(mode)


def pad(array, pad_width, mode="constant", **kwargs):
    a = _arr(array)
    av = _aval(a)
    nd = av.ndim
    pw = _np.asarray(pad_width, dtype=_np.int64) if not callable(pad_width) else None
    if isinstance(pad_width, Tracer) or pw is None:
        raise TypeError("jnp.pad: pad_width must be static")
    pw = _np.broadcast_to(pw, (nd, 2)) if pw.size in (1, 2) or pw.shape == (nd, 2) else None
    if pw is None:
        raise ValueError(f"jnp.pad: pad_width has an invalid shape for an array of rank {nd}")
    if (pw < 0).any():
        raise ValueError("index can't contain negative values")
    mode = mode if isinstance(mode, str) else str(mode)
    if mode == "constant":
        cv = kwargs.get("constant_values", 0)
        cvs = _np.broadcast_to(_np.asarray(cv) if not isinstance(cv, (ArrayImpl, Tracer)) else 0, (nd, 2))
        traced_cv = isinstance(cv, (ArrayImpl, Tracer)) and _aval(cv).ndim == 0
        name = _aval(a).dtype_name
        for ax in range(nd):
            for side in (0, 1):
                w = int(pw[ax, side])
                if w == 0:
                    continue
                fill = astype(cv, name) if traced_cv else _const(cvs[ax, side].item(), name)
                config = [(0, 0, 0)] * nd
                config[ax] = (w, 0, 0) if side == 0 else (0, w, 0)
                a = lax.pad(a, fill, config)
        return a
    if mode in ("edge", "wrap", "reflect", "symmetric"):
        for ax in range(nd):
            lo, hi = int(pw[ax, 0]), int(pw[ax, 1])
            if lo == 0 and hi == 0:
                continue
            n = _aval(a).shape[ax]
            if n == 0:
                raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
            idx = [_pad_index(i - lo, n, mode) for i in range(lo + n + hi)]
            a = _take_static(a, ax, idx)
        return a
    raise NotImplementedError(f"jnp.pad mode {mode!r} is not supported")
