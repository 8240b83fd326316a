"""Operator-table records for convolutions and windowed reductions:
`lax.conv_general_dilated` (strides, explicit and string padding, both
dilations, feature and batch groups, layout strings, spatial rank 1-3),
`lax.conv`, `lax.conv_with_general_padding`, `lax.reduce_window` (add / max /
min, lax and jnp computations, base and window dilation) and
`jnp.convolve` / `jnp.correlate` (every mode).

The NumPy references below are written from the definitions (dilate with
holes, pad, slide a window), independent of the kernels.
"""
import itertools

import numpy as np

import microjax_rs.numpy as jnp
from microjax_rs import lax

from ._record import Case, OpRecord, _rand

CONV_DTYPES = ("float32", "float64", "float16", "int32")
CONV_TOL = {"float16": (1e-2, 1e-1), "float32": (1e-5, 1e-4), "float64": (1e-12, 1e-12)}
WINDOW_TOL = {"float16": (2e-3, 2e-2), "float32": (1e-6, 1e-5), "float64": (1e-13, 1e-13)}


# ----------------------------------------------------------------- references


def _perms(lhs_ndim, dimension_numbers):
    """Axis permutations taking each operand to NC.../OI.../NC... order."""
    if dimension_numbers is None:
        iota = tuple(range(lhs_ndim))
        return iota, iota, iota
    lhs, rhs, out = dimension_numbers
    spatial = [c for c in rhs if c not in "OI"]

    def perm(spec, pair):
        return [spec.index(pair[0]), spec.index(pair[1])] + [spec.index(c) for c in spatial]

    return perm(lhs, "NC"), perm(rhs, "OI"), perm(out, "NC")


def _dilate(x, axes, factors, fill):
    for ax, d in zip(axes, factors):
        if d == 1 or x.shape[ax] == 0:
            continue
        shape = list(x.shape)
        shape[ax] = (x.shape[ax] - 1) * d + 1
        y = np.full(shape, fill, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(None, None, d)
        y[tuple(idx)] = x
        x = y
    return x


def _pad(x, axes, pads, fill):
    for ax, (lo, hi) in zip(axes, pads):
        width = [(0, 0)] * x.ndim
        width[ax] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, width, constant_values=fill)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(max(-lo, 0), x.shape[ax] - max(-hi, 0))
        x = x[tuple(idx)]
    return x


def _same_pads(sizes, windows, strides, lower=False):
    pads = []
    for s, w, st in zip(sizes, windows, strides):
        out = -(-s // st)
        total = max((out - 1) * st + w - s, 0)
        lo = total // 2 if not lower else total - total // 2
        pads.append((lo, total - lo))
    return pads


def conv_ref(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
             dimension_numbers=None, feature_group_count=1, batch_group_count=1,
             preferred_element_type=None):
    lp, rp, op = _perms(lhs.ndim, dimension_numbers)
    x, w = np.transpose(lhs, lp), np.transpose(rhs, rp)
    nsp = x.ndim - 2
    ld = lhs_dilation or (1,) * nsp
    rd = rhs_dilation or (1,) * nsp
    sp = list(range(2, 2 + nsp))
    w = _dilate(w, sp, rd, 0)
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            padding = [(0, 0)] * nsp
        else:
            padding = _same_pads(x.shape[2:], w.shape[2:], window_strides,
                                 padding.upper() == "SAME_LOWER")
    x = _pad(_dilate(x, sp, ld, 0), sp, padding, 0)
    g, bg = feature_group_count, batch_group_count
    groups = g * bg
    n, c = x.shape[:2]
    o = w.shape[0]
    out_sp = [max((x.shape[2 + i] - w.shape[2 + i]) // window_strides[i] + 1, 0)
              for i in range(nsp)]
    acc = np.zeros((n // bg, o) + tuple(out_sp), np.result_type(x, w))
    og = o // groups
    for gi in range(groups):
        xs = x[gi * (n // bg):(gi + 1) * (n // bg)] if bg > 1 else x
        xs = xs[:, gi * (c // g):(gi + 1) * (c // g)] if g > 1 else xs
        wg = w[gi * og:(gi + 1) * og]
        for k in itertools.product(*(range(s) for s in w.shape[2:])):
            win = tuple(slice(k[i], k[i] + (out_sp[i] - 1) * window_strides[i] + 1, window_strides[i])
                        for i in range(nsp))
            patch = xs[(slice(None), slice(None)) + win]
            acc[:, gi * og:(gi + 1) * og] += np.einsum(
                "nc...,oc->no...", patch, wg[(slice(None), slice(None)) + k])
    return np.transpose(acc, np.argsort(op))


def conv_plain_ref(lhs, rhs, window_strides, padding):
    return conv_ref(lhs, rhs, window_strides, padding)


def conv_padding_ref(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation):
    return conv_ref(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation)


_COMBINE = {"add": (np.add, 0.0), "max": (np.maximum, -np.inf), "min": (np.minimum, np.inf)}


def window_ref(kind):
    fn, _ = _COMBINE[kind]

    def ref(x, init, window_dimensions, window_strides, padding, base_dilation=None,
            window_dilation=None):
        nd = x.ndim
        bd = base_dilation or (1,) * nd
        wd = window_dilation or (1,) * nd
        fill = np.asarray(init).astype(x.dtype) if x.dtype.kind != "f" else init
        if isinstance(padding, str):
            dil_w = [(w - 1) * d + 1 for w, d in zip(window_dimensions, wd)]
            padding = (_same_pads(x.shape, dil_w, window_strides) if padding.upper() == "SAME"
                       else [(0, 0)] * nd)
        y = _pad(_dilate(x, range(nd), bd, fill), range(nd), padding, fill)
        dil_w = [(w - 1) * d + 1 for w, d in zip(window_dimensions, wd)]
        out = [(y.shape[i] - dil_w[i]) // window_strides[i] + 1 for i in range(nd)]
        res = np.full(out, fill, y.dtype)
        for k in itertools.product(*(range(w) for w in window_dimensions)):
            sl = tuple(slice(k[i] * wd[i], k[i] * wd[i] + (out[i] - 1) * window_strides[i] + 1,
                             window_strides[i]) for i in range(nd))
            res = fn(res, y[sl])
        return res

    return ref


def _reduce_window_adapter(kind, computation_name):
    """lax.reduce_window with the computation and init fixed (the table
    passes arrays positionally)."""
    def adapt(fn):
        def call(x, init, *args, **kw):
            comp = {"lax.add": lax.add, "jnp.add": jnp.add, "lax.max": lax.max,
                    "jnp.maximum": jnp.maximum, "lax.min": lax.min,
                    "jnp.minimum": jnp.minimum}[computation_name]
            return fn(x, init, comp, *args, **kw)
        return call
    return adapt


# ----------------------------------------------------------------- records

_CONV_CASES = (
    # (lhs shape, rhs shape, strides, padding, kwargs)
    ((2, 3, 7), (4, 3, 3), (1,), ((0, 0),), {}),
    ((2, 3, 6, 5), (4, 3, 3, 3), (1, 1), "SAME", {}),
    ((2, 2, 7, 6), (3, 2, 3, 2), (2, 1), ((1, 2), (0, 1)), {}),
    ((1, 2, 6, 6), (2, 2, 2, 3), (1, 2), "VALID", {"rhs_dilation": (2, 1)}),
    ((1, 2, 5), (3, 2, 3), (1,), ((2, 2),), {"lhs_dilation": (2,)}),
    ((2, 4, 5, 5), (6, 2, 3, 3), (1, 1), ((1, 1), (1, 1)), {"feature_group_count": 2}),
    ((4, 3, 6), (4, 3, 2), (1,), ((0, 1),), {"batch_group_count": 2}),
    ((2, 6, 5, 3), (3, 2, 3, 4), (1, 1), "SAME",
     {"dimension_numbers": ("NHWC", "HWIO", "NHWC")}),
    ((2, 3, 6, 5), (3, 2, 3, 4), (2, 1), "SAME_LOWER",
     {"dimension_numbers": ("NCHW", "IOHW", "NHWC")}),
    ((1, 2, 4, 3, 4), (2, 2, 2, 2, 3), (1, 1, 2), ((0, 0), (1, 0), (1, 1)), {}),
    ((2, 3, 5), (2, 3, 2), (1,), ((-1, 1),), {}),
)


def _conv_records():
    recs = []
    for k, (ls, rs, strides, padding, kw) in enumerate(_CONV_CASES):
        recs.append(OpRecord(
            name=f"lax.conv_general_dilated[{k}]", path="lax.conv_general_dilated", ref=conv_ref,
            args_maker=_uniform, dtypes=CONV_DTYPES if k < 4 else ("float32", "int32"),
            tol=CONV_TOL, cases=(Case((ls, rs), (strides, padding), kw),)))
    recs.append(OpRecord(
        name="lax.conv", ref=conv_plain_ref, args_maker=_uniform, dtypes=("float32", "float64"),
        tol=CONV_TOL, cases=(Case(((2, 3, 6, 6), (4, 3, 3, 3)), ((2, 2), "SAME"), {}),
                             Case(((1, 2, 5, 4), (3, 2, 2, 2)), ((1, 1), "VALID"), {}))))
    recs.append(OpRecord(
        name="lax.conv_with_general_padding", ref=conv_padding_ref, args_maker=_uniform,
        dtypes=("float32",), tol=CONV_TOL,
        cases=(Case(((1, 2, 5, 4), (3, 2, 2, 2)), ((1, 2), ((1, 0), (0, 1)), (2, 1), (1, 2)), {}),)))
    return recs


def _uniform(rng, shapes, dtype):
    return [_rand(rng, s, dtype, -3.0, 3.0) for s in shapes]


_WINDOW_CASES = (
    # (shape, window, strides, padding, kwargs)
    ((6,), (2,), (1,), ((0, 0),), {}),
    ((2, 6, 6), (1, 2, 2), (1, 2, 2), "VALID", {}),
    ((5, 4), (3, 2), (1, 1), "SAME", {}),
    ((7,), (3,), (2,), ((1, 2),), {}),
    ((4, 5), (2, 2), (1, 2), ((0, 1), (1, 0)), {"base_dilation": (2, 1), "window_dilation": (1, 2)}),
)


def _window_records():
    recs = []
    kinds = (("add", "lax.add", 0.0), ("add", "jnp.add", 0.0), ("max", "lax.max", -np.inf),
             ("max", "jnp.maximum", -np.inf), ("min", "lax.min", np.inf),
             ("min", "jnp.minimum", np.inf))
    for kind, comp, init in kinds:
        for k, (shape, win, strides, padding, kw) in enumerate(_WINDOW_CASES):
            dilated = bool(kw)
            recs.append(OpRecord(
                name=f"lax.reduce_window[{comp},{k}]", path="lax.reduce_window",
                ref=window_ref(kind), args_maker=_uniform,
                dtypes=("float32", "float64", "float16"), tol=WINDOW_TOL,
                # max/min gradients through dilated windows are not implemented (as JAX)
                differentiable=kind == "add" or not dilated,
                adapt=_reduce_window_adapter(kind, comp),
                cases=(Case((shape,), (init, win, strides, padding), kw),)))
    # integer operands: identities are the dtype's extremes
    for kind, comp, init in (("add", "lax.add", 0), ("max", "lax.max", np.iinfo(np.int32).min),
                             ("min", "lax.min", np.iinfo(np.int32).max)):
        recs.append(OpRecord(
            name=f"lax.reduce_window[{comp},int]", path="lax.reduce_window", ref=window_ref(kind),
            args_maker=_uniform, dtypes=("int32",), adapt=_reduce_window_adapter(kind, comp),
            cases=(Case(((5, 4),), (init, (2, 2), (1, 1), ((1, 0), (0, 1))), {}),)))
    # a non-identity init for max: max(result, init)
    recs.append(OpRecord(
        name="lax.reduce_window[max,init=1]", path="lax.reduce_window", ref=window_ref("max"),
        args_maker=_uniform, dtypes=("float32",), adapt=_reduce_window_adapter("max", "lax.max"),
        cases=(Case(((6,),), (1.0, (2,), (2,), ((0, 0),)), {}),)))
    return recs


def _np_conv1d(op):
    def ref(a, v, mode="full" if op == "convolve" else "valid"):
        return getattr(np, op)(a, v, mode=mode)
    return ref


def _conv1d_records():
    recs = []
    for op in ("convolve", "correlate"):
        for mode in ("full", "same", "valid"):
            recs.append(OpRecord(
                name=f"numpy.{op}[{mode}]", path=f"numpy.{op}", ref=_np_conv1d(op),
                args_maker=_uniform, dtypes=("float32", "float64"), tol=CONV_TOL,
                cases=(Case(((7,), (3,)), (), {"mode": mode}),
                       Case(((3,), (6,)), (), {"mode": mode}),
                       Case(((4,), (4,)), (), {"mode": mode}))))
    return recs


RECORDS = tuple(_conv_records()) + tuple(_window_records()) + tuple(_conv1d_records())
