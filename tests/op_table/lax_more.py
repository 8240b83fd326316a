"""Operator-table records for the `jax.lax` functions composed from other
primitives: `reciprocal`, `full_like`, `empty`, `broadcast_like`, `collapse`,
`batch_matmul`, `index_take`, `tile`, `split`, `stack`, `unstack`,
`scatter_sub`, `ragged_dot`, `approx_max_k` / `approx_min_k`,
`conv_transpose`, `conv_general_dilated_patches` and
`conv_general_dilated_local`.

References are NumPy; the convolution references are direct loops over
output positions. Functions returning several arrays are reached through
`adapt` (one output per record variant). Bad inputs raise JAX 0.10.2's
exception types and messages (recorded by running JAX)."""
import numpy as np

from ._record import Case, OpErr, OpRecord, _rand, uniform

F = ("float32", "float64")
FI = ("float32", "int32")


def _f32(*shape):
    return np.ones(shape, np.float32)


def _err(arrays, exc, match, *args, **kwargs):
    return OpErr(tuple(arrays), kwargs, exc, match, args=args)


def _pick(k):
    """Adapter: output `k` of a function returning several arrays."""

    def adapt(fn):
        def picked(*a, **kw):
            return fn(*a, **kw)[k]

        return picked

    return adapt


def _listed(fn):
    """Adapter: the arrays as one list argument (`stack`)."""

    def listed(*arrays, **kw):
        return fn(list(arrays), **kw)

    return listed


# ----------------------------------------------------------------- references


def _np_full_like(x, fill_value, dtype=None, shape=None):
    return np.full(x.shape if shape is None else shape, fill_value, x.dtype if dtype is None else dtype)


def _np_broadcast_like(x, like):
    return np.broadcast_to(x, like.shape).copy()


def _np_collapse(x, start_dimension, stop_dimension=None):
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(x.ndim)
    return x.reshape(x.shape[:lo] + (int(np.prod(x.shape[lo:hi])),) + x.shape[hi:])


def _index_take_inputs(rng, shapes, dtype):
    src = _rand(rng, shapes[0], dtype, -3, 3)
    n = shapes[1][0]
    i = rng.integers(-src.shape[0], src.shape[0], size=n).astype(np.int32)
    j = rng.integers(-src.shape[2], src.shape[2], size=n).astype(np.int32)
    return [src, i, j]


def _np_index_take(src, i, j):
    return np.moveaxis(src[i % src.shape[0], :, j % src.shape[2]], 0, 0)


def _index_take(fn):
    def take(src, i, j):
        return fn(src, (i, j), (0, 2))

    return take


def _np_split(x, sizes, axis=0, k=0):
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)[k]


def _np_scatter_sub(x, idx, upd):
    out = x.copy()
    np.subtract.at(out, idx[:, 0], upd)
    return out


_SCATTER_DN = dict(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))


def _scatter_sub_inputs(rng, shapes, dtype):
    x = _rand(rng, shapes[0], dtype, -3, 3)
    idx = rng.integers(0, shapes[0][0], size=(shapes[1][0], 1)).astype(np.int32)
    upd = _rand(rng, (shapes[1][0], shapes[0][1]), dtype, -3, 3)
    return [x, idx, upd]


def _scatter_sub(fn):
    from microjax_rs import lax

    def sub(x, idx, upd):
        return fn(x, idx, upd, lax.ScatterDimensionNumbers(**_SCATTER_DN))

    return sub


def _ragged_inputs(rng, shapes, dtype):
    (m, k), (g, _, n) = shapes[0], shapes[1]
    sizes = rng.multinomial(m - 1, [1.0 / g] * g).astype(np.int32)  # one row left over: zeros
    return [_rand(rng, (m, k), dtype, -3, 3), _rand(rng, (g, k, n), dtype, -3, 3), sizes]


def _np_ragged_dot(lhs, rhs, sizes):
    out = np.zeros((lhs.shape[0], rhs.shape[2]), np.result_type(lhs, rhs))
    start = 0
    for g, s in enumerate(sizes):
        out[start:start + s] = lhs[start:start + s] @ rhs[g]
        start += s
    return out


def _distinct(rng, shapes, dtype):
    """Distinct values (no ties), so the top-k indices are unambiguous."""
    return [(rng.permutation(int(np.prod(s))).reshape(s) * 0.5 - 3).astype(dtype) for s in shapes]


def _np_topk(x, k, reduction_dimension=-1, largest=True, out=0):
    order = np.argsort(-x if largest else x, axis=reduction_dimension, kind="stable")
    idx = np.take(order, np.arange(k), axis=reduction_dimension)
    return np.take_along_axis(x, idx, reduction_dimension) if out == 0 else idx.astype(np.int32)


def _spatial_pads(padding, in_space, window, strides):
    if not isinstance(padding, str):
        return list(padding)
    out = []
    for size, w, s in zip(in_space, window, strides):
        n = -(-size // s)
        total = max((n - 1) * s + w - size, 0)
        out.append((total // 2, total - total // 2) if padding == "SAME" else (0, 0))
    return out if padding in ("SAME",) else [(0, 0)] * len(in_space)


def _np_conv_nchw(x, k, strides, pads, lhs_dil=(1, 1), rhs_dil=(1, 1), groups=1):
    """Direct N-C-H-W / O-I-H-W convolution (float64), with dilations and groups."""
    n, c, h, w = x.shape
    dh = (h - 1) * lhs_dil[0] + 1
    dw = (w - 1) * lhs_dil[1] + 1
    xd = np.zeros((n, c, dh, dw), np.float64)
    xd[:, :, ::lhs_dil[0], ::lhs_dil[1]] = x
    (pl0, ph0), (pl1, ph1) = pads
    xp = np.zeros((n, c, dh + max(pl0, 0) + max(ph0, 0), dw + max(pl1, 0) + max(ph1, 0)))
    xp[:, :, max(pl0, 0):max(pl0, 0) + dh, max(pl1, 0):max(pl1, 0) + dw] = xd
    xp = xp[:, :, max(-pl0, 0):xp.shape[2] - max(-ph0, 0), max(-pl1, 0):xp.shape[3] - max(-ph1, 0)]
    o, i, kh, kw = k.shape
    ekh, ekw = (kh - 1) * rhs_dil[0] + 1, (kw - 1) * rhs_dil[1] + 1
    oh = (xp.shape[2] - ekh) // strides[0] + 1
    ow = (xp.shape[3] - ekw) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    per = o // groups
    for a in range(oh):
        for b in range(ow):
            win = xp[:, :, a * strides[0]:a * strides[0] + ekh:rhs_dil[0], b * strides[1]:b * strides[1] + ekw:rhs_dil[1]]
            for g in range(groups):
                out[:, g * per:(g + 1) * per, a, b] = np.einsum(
                    "nihw,oihw->no", win[:, g * i:(g + 1) * i], k[g * per:(g + 1) * per])
    return out


def _np_conv_transpose(x, k, strides, padding):
    """NHWC / HWIO transposed convolution: dilate the input by `strides`, pad as
    JAX's conv_transpose does for 'SAME' / 'VALID', convolve (no kernel flip)."""
    pads = []
    for kk, s in zip(k.shape[:2], strides):
        if padding == "SAME":
            total = kk + s - 2
            lo = kk - 1 if s > kk - 1 else -(-total // 2)
        else:
            total = kk + s - 2 + max(kk - s, 0)
            lo = kk - 1
        pads.append((lo, total - lo))
    out = _np_conv_nchw(np.transpose(x, (0, 3, 1, 2)), np.transpose(k, (3, 2, 0, 1)), (1, 1), pads,
                        lhs_dil=strides)
    return np.transpose(out, (0, 2, 3, 1))


def _np_patches(x, filter_shape, window_strides, padding):
    n, c, h, w = x.shape
    size = int(np.prod(filter_shape))
    eye = np.eye(size).reshape((size, 1) + tuple(filter_shape))
    kernel = np.tile(eye, (c, 1, 1, 1))
    pads = _spatial_pads(padding, (h, w), filter_shape, window_strides)
    return _np_conv_nchw(x, kernel, window_strides, pads, groups=c)


def _np_local(x, k, window_strides, padding, filter_shape):
    p = _np_patches(x, filter_shape, window_strides, padding)  # (N, C*P, S...)
    return np.einsum("nihw,oihw->nohw", p, k)


# ----------------------------------------------------------------- records

RECORDS = (
    OpRecord(name="lax.reciprocal", ref=lambda x: 1.0 / x, args_maker=uniform(0.5, 3.0), dtypes=F + ("float16",),
             cases=(Case(((3, 4),)), Case(((),)), Case(((2, 1, 5),))),
             errors=(_err([np.ones(3, np.int32)], TypeError, "Integers cannot be raised to negative powers"),)),
    OpRecord(name="lax.full_like", ref=_np_full_like, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=(Case(((2, 3),), (1,)), Case(((4,),), (2,), {"shape": (2, 2)}),
                    Case(((3,),), (1,), {"dtype": np.float32})),
             differentiable=False,
             errors=(_err([_f32(3)], TypeError, "fill_value must be a scalar", np.ones(2, np.float32)),)),
    OpRecord(name="lax.empty", ref=lambda shape, dtype: np.zeros(shape, dtype), args_maker=uniform(),
             dtypes=FI, cases=(Case((), ((2, 3), "float32")), Case((), ((4,), "int32"))),
             differentiable=False),
    OpRecord(name="lax.broadcast_like", ref=_np_broadcast_like, args_maker=uniform(), dtypes=FI,
             cases=(Case(((4,), (2, 3, 4))), Case(((3, 1), (2, 3, 4))), Case(((), (2, 2)))),
             errors=(_err([_f32(3), _f32(2, 3, 4)], ValueError, "Incompatible types for broadcasting"),)),
    OpRecord(name="lax.collapse", ref=_np_collapse, args_maker=uniform(), dtypes=FI,
             cases=(Case(((2, 3, 4),), (1,)), Case(((2, 3, 4),), (0, 2)), Case(((2, 3, 4),), (-2,)),
                    Case(((2, 3, 4),), (0, 5))),
             errors=(_err([_f32(2, 3, 4)], ValueError, "Invalid dimension range passed to collapse", 2, 1),)),
    OpRecord(name="lax.batch_matmul", ref=np.matmul, args_maker=uniform(), dtypes=F + ("int32",),
             cases=(Case(((2, 3, 4), (2, 4, 5))), Case(((3, 4), (4, 2))), Case(((2, 2, 3, 2), (2, 2, 2, 3)))),
             errors=(_err([_f32(4), _f32(4, 5)], ValueError, "Arguments to batch_matmul must be at least 2D"),
                     _err([_f32(2, 3, 4), _f32(3, 4, 5)], TypeError, "differ in size"))),
    OpRecord(name="lax.index_take", ref=_np_index_take, args_maker=_index_take_inputs, dtypes=FI,
             cases=(Case(((3, 2, 4), (5,))), Case(((2, 3, 2), (1,)))), adapt=_index_take),
    OpRecord(name="lax.tile", ref=np.tile, args_maker=uniform(), dtypes=FI + ("bool",),
             cases=(Case(((2, 3),), ((2, 1),)), Case(((3,),), ((3,),)), Case(((2, 1, 2),), ((1, 3, 2),))),
             errors=(_err([_f32(2, 3)], TypeError, "reps length must be equal to the ndim of x", (2,)),)),
    *(OpRecord(name=f"lax.split[{k}]", path="lax.split", ref=lambda x, sizes, axis=0, k=k: _np_split(x, sizes, axis, k),
               args_maker=uniform(), dtypes=FI, adapt=_pick(k),
               cases=(Case(((2, 6),), ((1, 2, 3),), {"axis": 1}), Case(((5, 2),), ((2, 0, 3),)),
                      Case(((2, 3, 4),), ((2, 1, 0),), {"axis": -2})),
               errors=(_err([_f32(2, 3, 4)], ValueError, "Sum of sizes 3 must be equal to dimension 2", (1, 2, 0),
                            axis=2),
                       _err([_f32(2, 3, 4)], ValueError, "Sizes passed to split must be nonnegative", (4, -1, 0),
                            axis=1)))
      for k in (0, 2)),
    OpRecord(name="lax.stack", ref=lambda *xs, axis=0: np.stack(xs, axis=axis), args_maker=uniform(), dtypes=FI,
             adapt=_listed,
             cases=(Case(((3,), (3,))), Case(((2, 3), (2, 3), (2, 3)), (), {"axis": 1}),
                    Case(((2, 3), (2, 3)), (), {"axis": -1})),
             errors=(_err([_f32(3), _f32(4)], ValueError, "All input arrays must have the same shape"),
                     _err([_f32(3), np.ones(3, np.int32)], TypeError, "lax.stack requires arguments to have the same dtypes"))),
    *(OpRecord(name=f"lax.unstack[{k}]", path="lax.unstack",
               ref=lambda x, axis=0, k=k: np.take(x, k, axis=axis), args_maker=uniform(), dtypes=FI, adapt=_pick(k),
               cases=(Case(((3, 4),)), Case(((2, 3, 2),), (), {"axis": 1}), Case(((2, 2),), (), {"axis": -1})),
               errors=(_err([_f32(2, 3)], ValueError, "out of bounds", axis=2),))
      for k in (0, 1)),
    OpRecord(name="lax.scatter_sub", ref=_np_scatter_sub, args_maker=_scatter_sub_inputs, dtypes=FI,
             cases=(Case(((5, 3), (4,))), Case(((2, 2), (3,)))), adapt=_scatter_sub),
    OpRecord(name="lax.ragged_dot", ref=_np_ragged_dot, args_maker=_ragged_inputs, dtypes=F + ("int32",),
             cases=(Case(((6, 2), (3, 2, 4))), Case(((5, 3), (2, 3, 2)))),
             errors=(_err([_f32(6, 2), _f32(3, 2, 4), np.array([1, 2], np.int32)], TypeError,
                          "expected rhs group dimension size to be 2, got 3."),)),
    *(OpRecord(name=f"lax.{fn}[{out}]", path=f"lax.{fn}",
               ref=lambda x, k, reduction_dimension=-1, largest=largest, out=out: _np_topk(
                   x, k, reduction_dimension, largest, out),
               args_maker=_distinct, dtypes=F, adapt=_pick(out), differentiable=out == 0,
               cases=(Case(((2, 5),), (2,)), Case(((4, 3),), (1,), {"reduction_dimension": 0}), Case(((6,),), (6,))),
               out_dtype=(lambda dt, x64: np.dtype("int32")) if out else None,
               errors=(_err([_f32(2, 5)], ValueError, "k must be smaller than the size of reduction_dim 5, got 9", 9),
                       _err([np.ones(4, np.int32)], ValueError, "operand must be a floating type", 2)))
      for fn, largest in (("approx_max_k", True), ("approx_min_k", False)) for out in (0, 1)),
    OpRecord(name="lax.conv_transpose",
             ref=lambda x, k, strides, padding: _np_conv_transpose(x, k, strides, padding),
             args_maker=uniform(), dtypes=F,
             cases=(Case(((1, 4, 3, 2), (3, 2, 2, 3)), ((2, 1), "SAME")),
                    Case(((2, 3, 3, 1), (2, 2, 1, 2)), ((2, 2), "VALID"))),
             errors=(_err([_f32(1, 3), _f32(3, 2)], TypeError, "dimension_numbers", (1,), "SAME",
                          dimension_numbers=("NCH", "OIH", "NCH")),)),
    OpRecord(name="lax.conv_general_dilated_patches", ref=_np_patches, args_maker=uniform(), dtypes=F,
             cases=(Case(((2, 2, 4, 5),), ((2, 2), (1, 1), "VALID")), Case(((1, 3, 5, 4),), ((3, 2), (2, 1), "SAME"))),
             errors=(_err([_f32(1, 2, 4, 4)], TypeError, "dimension_numbers", (2, 2), (1, 1), "VALID",
                          dimension_numbers=("NCHW", "OIHW")),)),
    OpRecord(name="lax.conv_general_dilated_local", ref=_np_local, args_maker=uniform(), dtypes=F,
             cases=(Case(((2, 2, 4, 5), (3, 8, 3, 4)), ((1, 1), "VALID", (2, 2))),
                    Case(((1, 1, 4, 4), (2, 6, 2, 4)), ((2, 1), "SAME", (3, 2))))),
)
