"""Records of the shape and data-movement operators: `broadcast_in_dim`,
`reshape`, `transpose`, `squeeze` (lax and jnp), and slicing: `rev`, `slice`,
`concatenate`, `pad`, `dynamic_slice` / `dynamic_update_slice` with static and
with traced start indices.
"""
import builtins as _builtins  # `slice` is also a lax name

import numpy as np

from ._record import Case, OpRecord, _rand, uniform

# ----------------------------------------------------------------- references


def _broadcast_in_dim(x, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), shape).copy()


def _squeeze(x, dimensions):
    return np.squeeze(x, axis=tuple(dimensions))


def _slice_ref(x, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[tuple(_builtins.slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


def _slice_in_dim_ref(x, start_index, limit_index, stride=1, axis=0):
    idx = [_builtins.slice(None)] * x.ndim
    idx[axis] = _builtins.slice(start_index, limit_index, stride)
    return x[tuple(idx)]


def _pad_ref(x, pv, padding_config):
    out = np.asarray(x)
    for axis, (lo, hi, interior) in enumerate(padding_config):
        d = out.shape[axis]
        size = d + max(d - 1, 0) * interior
        shape = list(out.shape)
        shape[axis] = size
        grown = np.full(shape, pv, dtype=out.dtype)
        idx = [_builtins.slice(None)] * out.ndim
        idx[axis] = _builtins.slice(None, None, interior + 1)
        grown[tuple(idx)] = out
        # lo / hi: pad when positive, crop when negative
        widths = [(0, 0)] * out.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        grown = np.pad(grown, widths, constant_values=pv)
        idx = [_builtins.slice(None)] * out.ndim
        idx[axis] = _builtins.slice(max(-lo, 0), grown.shape[axis] - max(-hi, 0))
        out = grown[tuple(idx)]
    return out


def _clamped_starts(shape, start_indices, sizes):
    out = []
    for i, d, s in zip(start_indices, shape, sizes):
        i = int(i)
        if i < 0:
            i += d
        out.append(min(max(i, 0), d - s))
    return out


def _dynamic_slice_ref(x, start_indices, slice_sizes):
    starts = _clamped_starts(x.shape, start_indices, slice_sizes)
    return x[tuple(_builtins.slice(s, s + n) for s, n in zip(starts, slice_sizes))].copy()


def _dynamic_update_slice_ref(x, u, start_indices):
    starts = _clamped_starts(x.shape, start_indices, u.shape)
    out = np.array(x, copy=True)
    out[tuple(_builtins.slice(s, s + n) for s, n in zip(starts, u.shape))] = u
    return out


# ----------------------------------------------------------------- arg makers and adapters


def _list_first(fn):
    return lambda *xs, **kw: fn(list(xs), **kw)


def operands_and_indices(n_operands: int, lo: int = -4, hi: int = 6):
    """`n_operands` arrays of the case dtype, then int32 scalar start
    indices in [lo, hi] (out-of-range ones exercise wrapping and clamping)."""

    def make(rng, shapes, dtype):
        arrays = [_rand(rng, s, dtype, -3.0, 3.0) for s in shapes[:n_operands]]
        idx = [np.int32(rng.integers(lo, hi, endpoint=True)) for _ in shapes[n_operands:]]
        return arrays + [np.asarray(i) for i in idx]

    make.__name__ = f"operands_and_indices({n_operands})"
    return make


def _traced_indices(n_operands: int):
    """`f(*operands, start_indices, ...)` called as `f(*operands, *indices, ...)`."""

    def adapt(fn):
        return lambda *xs, **kw: fn(*xs[:n_operands], tuple(xs[n_operands:]), **kw)

    return adapt


SLICE_DTYPES = ("float32", "float64", "float16", "int32", "uint8", "bool")

RECORDS: tuple = (
    OpRecord(
        name="lax.broadcast_in_dim",
        ref=_broadcast_in_dim,
        args_maker=uniform(),
        dtypes=("float32", "int32", "bool"),
        cases=(
            Case(((3,),), (), {"shape": (2, 3), "broadcast_dimensions": (1,)}),
            Case(((3,),), (), {"shape": (3, 2), "broadcast_dimensions": (0,)}),
            Case(((),), (), {"shape": (2, 3), "broadcast_dimensions": ()}),
            Case(((3, 1),), (), {"shape": (3, 4), "broadcast_dimensions": (0, 1)}),
            Case(((3, 4),), (), {"shape": (2, 3, 4), "broadcast_dimensions": (1, 2)}),
            Case(((3,),), (), {"shape": (0, 3), "broadcast_dimensions": (1,)}),
        ),
    ),
    OpRecord(
        name="lax.reshape",
        ref=lambda x, new_sizes: x.reshape(new_sizes),
        args_maker=uniform(),
        dtypes=("float32", "int32", "bool"),
        cases=(
            Case(((3, 4),), (), {"new_sizes": (12,)}),
            Case(((3, 4),), (), {"new_sizes": (2, 6)}),
            Case(((2, 3, 4),), (), {"new_sizes": (4, 6)}),
            Case(((),), (), {"new_sizes": (1, 1)}),
            Case(((1,),), (), {"new_sizes": ()}),
            Case(((0,),), (), {"new_sizes": (3, 0)}),
        ),
    ),
    OpRecord(
        name="lax.transpose",
        ref=lambda x, permutation: np.transpose(x, permutation).copy(),
        args_maker=uniform(),
        dtypes=("float32", "int32", "bool"),
        cases=(
            Case(((3, 4),), (), {"permutation": (1, 0)}),
            Case(((2, 3, 4),), (), {"permutation": (2, 0, 1)}),
            Case(((2, 3, 4),), (), {"permutation": (0, 1, 2)}),
            Case(((),), (), {"permutation": ()}),
            Case(((0, 3),), (), {"permutation": (1, 0)}),
        ),
    ),
    OpRecord(
        name="lax.squeeze",
        ref=_squeeze,
        args_maker=uniform(),
        dtypes=("float32", "int32"),
        cases=(
            Case(((1, 3, 1),), (), {"dimensions": (0, 2)}),
            Case(((3, 1),), (), {"dimensions": (1,)}),
            Case(((1,),), (), {"dimensions": (0,)}),
            Case(((3, 4),), (), {"dimensions": ()}),
        ),
    ),
    # ---- jax.numpy
    OpRecord(
        name="numpy.reshape",
        ref=np.reshape,
        args_maker=uniform(),
        dtypes=("float32", "int32", "bool"),
        cases=(
            Case(((3, 4),), ((12,),)),
            Case(((3, 4),), ((2, -1),)),
            Case(((3, 4),), ((4, 3),)),
            Case(((),), ((1,),)),
            Case(((0,),), ((0, 5),)),
        ),
    ),
    OpRecord(
        name="numpy.transpose",
        ref=np.transpose,
        args_maker=uniform(),
        dtypes=("float32", "int32", "bool"),
        cases=(
            Case(((3, 4),)),
            Case(((2, 3, 4),)),
            Case(((2, 3, 4),), ((1, 0, 2),)),
            Case(((5,),)),
            Case(((),)),
        ),
    ),
    # ---- slicing and data movement
    OpRecord(
        name="lax.rev",
        ref=lambda x, dimensions: np.flip(x, dimensions) if dimensions else x.copy(),
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        cases=(
            Case(((5,),), (), {"dimensions": (0,)}),
            Case(((3, 4),), (), {"dimensions": (1,)}),
            Case(((3, 4),), (), {"dimensions": (0, 1)}),
            Case(((2, 3, 4),), (), {"dimensions": (0, 2)}),
            Case(((0, 3),), (), {"dimensions": (0,)}),
            Case(((3,),), (), {"dimensions": ()}),
        ),
    ),
    OpRecord(
        name="lax.slice",
        ref=_slice_ref,
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        cases=(
            Case(((5,),), ((1,), (4,))),
            Case(((3, 4),), ((0, 1), (3, 4), (2, 2))),
            Case(((2, 3, 4),), ((1, 0, 1), (2, 3, 4), (1, 2, 3))),
            Case(((6,),), ((1,), (6,), (2,))),
            Case(((4,),), ((2,), (2,))),
            Case(((0, 3),), ((0, 0), (0, 2))),
            Case(((), ), ((), ())),
        ),
    ),
    OpRecord(
        name="lax.slice_in_dim",
        ref=_slice_in_dim_ref,
        args_maker=uniform(),
        dtypes=("float32", "int32"),
        cases=(
            Case(((3, 5),), (1, 4), {"axis": 1}),
            Case(((3, 5),), (0, 3, 2), {"axis": 0}),
            Case(((7,),), (None, -2), {}),
        ),
    ),
    OpRecord(
        name="lax.concatenate",
        ref=lambda *xs, dimension: np.concatenate(xs, axis=dimension),
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        adapt=_list_first,
        cases=(
            Case(((3,), (2,)), (), {"dimension": 0}),
            Case(((2, 3), (2, 1), (2, 4)), (), {"dimension": 1}),
            Case(((1, 3), (2, 3)), (), {"dimension": 0}),
            Case(((2, 0, 3), (2, 2, 3)), (), {"dimension": 1}),
            Case(((4,),), (), {"dimension": 0}),
        ),
    ),
    OpRecord(
        name="lax.pad",
        ref=_pad_ref,
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        cases=(
            Case(((5,), ()), ((((1, 2, 0),),))),
            Case(((5,), ()), ((((0, 0, 2),),))),
            Case(((3, 4), ()), ((((1, -1, 1), (-1, 2, 2)),))),
            Case(((2, 3, 2), ()), ((((0, 1, 0), (2, 0, 1), (-1, -1, 0)),))),
            Case(((0, 3), ()), ((((1, 1, 3), (0, 0, 0)),))),
            Case(((), ()), (((),))),
            Case(((4,), ()), ((((-2, -2, 0),),))),
        ),
    ),
    OpRecord(
        name="lax.dynamic_slice",
        ref=_dynamic_slice_ref,
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        cases=(
            Case(((5,),), ((1,), (3,))),
            Case(((3, 4),), ((1, 2), (2, 2))),
            Case(((3, 4),), ((2, 3), (2, 2))),  # clamped
            Case(((3, 4),), ((-1, -3), (1, 2))),  # negative indices count from the end
            Case(((2, 3, 4),), ((0, 1, 7), (2, 1, 3))),
            Case(((4,),), ((2,), (0,))),
            Case(((),), ((), ())),
        ),
        notes="start indices are static Python ints (batched indices need gather)",
    ),
    OpRecord(
        name="lax.dynamic_update_slice",
        ref=_dynamic_update_slice_ref,
        args_maker=uniform(),
        dtypes=SLICE_DTYPES,
        cases=(
            Case(((5,), (2,)), ((1,),)),
            Case(((3, 4), (2, 2)), ((1, 2),)),
            Case(((3, 4), (2, 3)), ((5, -1),)),  # clamped
            Case(((2, 3, 4), (1, 3, 2)), ((1, 0, 1),)),
            Case(((4,), (0,)), ((2,),)),
            Case(((3,), (3,)), ((1,),)),
        ),
        notes="start indices are static Python ints (batched indices need scatter)",
    ),
    # Start indices as int32 array arguments: traced under jit, batched under vmap.
    OpRecord(
        name="lax.dynamic_slice[traced]",
        path="lax.dynamic_slice",
        ref=lambda x, *idx, slice_sizes: _dynamic_slice_ref(x, [int(i) for i in idx], slice_sizes),
        args_maker=operands_and_indices(1),
        dtypes=SLICE_DTYPES,
        adapt=_traced_indices(1),
        cases=(
            Case(((5,), ()), (), {"slice_sizes": (2,)}),
            Case(((3, 4), (), ()), (), {"slice_sizes": (2, 3)}),
            Case(((2, 3, 4), (), (), ()), (), {"slice_sizes": (1, 2, 2)}),
            Case(((4, 2), (), ()), (), {"slice_sizes": (0, 2)}),
        ),
    ),
    OpRecord(
        name="lax.dynamic_update_slice[traced]",
        path="lax.dynamic_update_slice",
        ref=lambda x, u, *idx: _dynamic_update_slice_ref(x, u, [int(i) for i in idx]),
        args_maker=operands_and_indices(2),
        dtypes=SLICE_DTYPES,
        adapt=_traced_indices(2),
        cases=(
            Case(((5,), (2,), ())),
            Case(((3, 4), (2, 2), (), ())),
            Case(((2, 3, 4), (1, 2, 3), (), (), ())),
            Case(((4,), (0,), ())),
        ),
    ),
    OpRecord(
        name="lax.dynamic_slice_in_dim",
        ref=lambda x, start, size, axis=0: _dynamic_slice_ref(
            x, [start if a == axis else 0 for a in range(x.ndim)],
            [size if a == axis else x.shape[a] for a in range(x.ndim)]),
        args_maker=uniform(),
        dtypes=("float32", "int32"),
        cases=(Case(((3, 5),), (3, 2), {"axis": 1}), Case(((4,),), (-1, 2), {})),
    ),
    OpRecord(
        name="lax.index_in_dim",
        ref=lambda x, index, axis=0, keepdims=True: np.take(x, [index] if keepdims else index, axis=axis),
        args_maker=uniform(),
        dtypes=("float32", "int32"),
        cases=(Case(((3, 5),), (2,), {"axis": 1}), Case(((3, 5),), (-1,), {"keepdims": False})),
    ),
)
