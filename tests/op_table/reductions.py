"""Records of the reductions: lax `reduce_sum` / `reduce_max` / `reduce_min` /
`reduce_prod` / `reduce_and` / `reduce_or`, `argmax` / `argmin`, the
cumulative scans (`cumsum`, `cumprod`, `cummax`, `cummin`, `cumlogsumexp`) and
`jnp.sum`.
"""
import numpy as np

from ._record import (
    ACCUM_TOL,
    BITWISE,
    F,
    F32_F64,
    NUM,
    Case,
    OpRecord,
    _rand,
    full_int_range,
    is_float,
    uniform,
    with_specials,
)

# ----------------------------------------------------------------- references


def _reduce_sum(x, axes):
    return np.sum(x, axis=tuple(axes), dtype=x.dtype)


def _extreme(dtype, greatest):
    """The greatest (or least) value of `dtype`: the identity of reduce_min (or reduce_max)."""
    if is_float(dtype):
        return np.inf if greatest else -np.inf
    if dtype == bool:
        return greatest
    info = np.iinfo(dtype)
    return info.max if greatest else info.min


def _reduce_max(x, axes):
    return np.max(x, axis=tuple(axes), initial=_extreme(x.dtype, greatest=False))


def _reduce_min(x, axes):
    return np.min(x, axis=tuple(axes), initial=_extreme(x.dtype, greatest=True))


def _reduce_prod(x, axes):
    return np.prod(x, axis=tuple(axes), dtype=x.dtype)


def _reduce_and(x, axes):
    if x.dtype == bool:
        return np.all(x, axis=tuple(axes))
    return np.bitwise_and.reduce(x, axis=tuple(axes), initial=x.dtype.type(-1) if x.dtype.kind == "i" else np.iinfo(x.dtype).max)


def _reduce_or(x, axes):
    if x.dtype == bool:
        return np.any(x, axis=tuple(axes))
    return np.bitwise_or.reduce(x, axis=tuple(axes), initial=x.dtype.type(0))


def _arg_ref(fn):
    def ref(x, axis, index_dtype):
        return fn(x, axis=axis).astype(index_dtype)

    return ref


def _scan_ref(fn):
    def ref(x, axis=0, reverse=False):
        if reverse:
            return np.flip(fn(np.flip(x, axis), axis=axis), axis)
        return fn(x, axis=axis)

    return ref


def _cumsum_np(x, axis):
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _cumprod_np(x, axis):
    return np.cumprod(x, axis=axis, dtype=x.dtype)


# ----------------------------------------------------------------- arg makers and cases


def with_zeros(lo=-2.0, hi=2.0):
    """Uniform values with about a third of them exactly zero."""

    def make(rng, shapes, dtype):
        out = []
        for s in shapes:
            a = _rand(rng, s, dtype, lo, hi)
            a[rng.integers(0, 3, size=a.shape) == 0] = 0
            out.append(a)
        return out

    return make


_RED_CASES = (
    Case(((3, 4),), (), {"axes": (0,)}),
    Case(((3, 4),), (), {"axes": (1,)}),
    Case(((3, 4),), (), {"axes": (0, 1)}),
    Case(((2, 3, 4),), (), {"axes": (0, 2)}),
    Case(((5,),), (), {"axes": (0,)}),
    Case(((),), (), {"axes": ()}),
    Case(((0,),), (), {"axes": (0,)}),
)
_ARG_CASES = (
    Case(((3, 4),), (), {"axis": 0, "index_dtype": np.dtype("int32")}),
    Case(((3, 4),), (), {"axis": 1, "index_dtype": np.dtype("int32")}),
    Case(((2, 3, 4),), (), {"axis": 1, "index_dtype": np.dtype("int32")}),
    Case(((5,),), (), {"axis": 0, "index_dtype": np.dtype("uint8")}),
    Case(((0, 4),), (), {"axis": 1, "index_dtype": np.dtype("int32")}),
)
_SCAN_CASES = (
    Case(((5,),), (), {"axis": 0}),
    Case(((3, 4),), (), {"axis": 0}),
    Case(((3, 4),), (), {"axis": 1}),
    Case(((3, 4),), (), {"axis": 1, "reverse": True}),
    Case(((2, 3, 4),), (), {"axis": 1, "reverse": True}),
    Case(((0, 3),), (), {"axis": 0}),
)


def _scan_lax(name, ref, dtypes, maker=None, **kw):
    return OpRecord(name=f"lax.{name}", ref=_scan_ref(ref), args_maker=maker or uniform(-2.0, 2.0),
                    dtypes=dtypes, cases=_SCAN_CASES, tol=ACCUM_TOL, **kw)


RECORDS: tuple = (
    OpRecord(
        name="lax.reduce_sum",
        ref=_reduce_sum,
        args_maker=uniform(),
        dtypes=NUM,
        cases=_RED_CASES + (Case(((3, 4),), (), {"axes": ()}),),
        tol=ACCUM_TOL,
    ),
    OpRecord(
        name="lax.reduce_max",
        ref=_reduce_max,
        args_maker=uniform(),
        dtypes=NUM,
        cases=(
            Case(((3, 4),), (), {"axes": (0,)}),
            Case(((3, 4),), (), {"axes": (1,)}),
            Case(((3, 4),), (), {"axes": (0, 1)}),
            Case(((5,),), (), {"axes": (0,)}),
            Case(((),), (), {"axes": ()}),
            Case(((0,),), (), {"axes": (0,)}),
        ),
    ),
    OpRecord(name="lax.reduce_prod", ref=_reduce_prod, args_maker=uniform(-2.0, 2.0), dtypes=NUM,
             cases=_RED_CASES, tol=ACCUM_TOL),
    OpRecord(name="lax.reduce_prod[zeros]", path="lax.reduce_prod", ref=_reduce_prod,
             args_maker=with_zeros(), dtypes=F32_F64, cases=_RED_CASES, tol=ACCUM_TOL,
             # First derivatives at exact zeros are exact (Rust autodiff tests); second
             # derivatives there are not yet (they need the exclusive-cumprod form).
             differentiable=False),
    OpRecord(name="lax.reduce_min", ref=_reduce_min, args_maker=uniform(), dtypes=NUM + ("bool",),
             cases=_RED_CASES),
    OpRecord(name="lax.reduce_and", ref=_reduce_and, args_maker=full_int_range, dtypes=BITWISE,
             cases=_RED_CASES, differentiable=False),
    OpRecord(name="lax.reduce_or", ref=_reduce_or, args_maker=full_int_range, dtypes=BITWISE,
             cases=_RED_CASES, differentiable=False),
    OpRecord(name="lax.argmax", ref=_arg_ref(np.argmax), args_maker=uniform(), dtypes=NUM + ("bool",),
             cases=_ARG_CASES, differentiable=False),
    OpRecord(name="lax.argmin", ref=_arg_ref(np.argmin), args_maker=uniform(), dtypes=NUM + ("bool",),
             cases=_ARG_CASES, differentiable=False),
    OpRecord(name="lax.argmax[nan]", path="lax.argmax", ref=_arg_ref(np.argmax), args_maker=with_specials(),
             dtypes=F, cases=_ARG_CASES, differentiable=False),
    OpRecord(name="lax.argmin[nan]", path="lax.argmin", ref=_arg_ref(np.argmin), args_maker=with_specials(),
             dtypes=F, cases=_ARG_CASES, differentiable=False),
    _scan_lax("cumsum", _cumsum_np, NUM),
    _scan_lax("cumprod", _cumprod_np, NUM),
    _scan_lax("cumprod[zeros]", _cumprod_np, F32_F64, maker=with_zeros(), path="lax.cumprod",
              differentiable=False),  # as reduce_prod[zeros]
    _scan_lax("cummax", np.maximum.accumulate, NUM + ("bool",)),
    _scan_lax("cummin", np.minimum.accumulate, NUM + ("bool",)),
    _scan_lax("cumlogsumexp", np.logaddexp.accumulate, F),
    # ---- jax.numpy
    OpRecord(
        name="numpy.sum",
        ref=np.sum,
        args_maker=uniform(),
        dtypes=("float32", "float64", "int32", "bool"),
        cases=(
            Case(((3, 4),)),
            Case(((3, 4),), (), {"axis": 0}),
            Case(((3, 4),), (), {"axis": 1}),
            Case(((3, 4),), (), {"axis": -1, "keepdims": True}),
            Case(((2, 3, 4),), (), {"axis": (0, 2)}),
            Case(((),)),
            Case(((0,),)),
            Case(((5,),)),
        ),
        tol=ACCUM_TOL,
    ),
)
