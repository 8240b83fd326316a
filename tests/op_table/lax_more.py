"""Operator-table records for the `jax.lax` functions composed from other
primitives: `reciprocal`, `full_like`, `empty`, `broadcast_like`, `collapse`,
`batch_matmul`, `index_take`, `tile`, `split`, `stack`, `unstack`,
`scatter_sub`, `ragged_dot`, `approx_max_k` / `approx_min_k`, `reduce` and
`reduce_window` with Python computations, the primitives `mulhi`,
`reduce_precision`, `reduce_xor` and `optimization_barrier`,
`conv_transpose`, `conv_general_dilated_patches` and
`conv_general_dilated_local`.

References are NumPy; the convolution references are direct loops over
output positions. Functions returning several arrays are reached through
`adapt` (one output per record variant). Bad inputs raise JAX 0.10.2's
exception types and messages (recorded by running JAX)."""
import numpy as np

from ._record import Case, OpErr, OpRecord, _rand, pick_output, uniform

F = ("float32", "float64")
FI = ("float32", "int32")


def _f32(*shape):
    return np.ones(shape, np.float32)


def _err(arrays, exc, match, *args, **kwargs):
    return OpErr(tuple(arrays), kwargs, exc, match, args=args)


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


def _ragged_general(dims):
    """Adapter: `ragged_dot_general` with fixed dimension numbers."""
    def adapt(fn):
        from microjax_rs import lax

        def call(lhs, rhs, sizes):
            return fn(lhs, rhs, sizes, lax.RaggedDotDimensionNumbers(*dims))

        return call

    return adapt


def _ragged_contracting_inputs(rng, shapes, dtype):
    (m, k), (_, n), (g,) = shapes
    sizes = rng.multinomial(k, [1.0 / g] * g).astype(np.int32)
    return [_rand(rng, (m, k), dtype, -3, 3), _rand(rng, (k, n), dtype, -3, 3), sizes]


def _np_ragged_contracting(lhs, rhs, sizes):
    out, start = [], 0
    for s in sizes:
        out.append(lhs[:, start:start + s] @ rhs[start:start + s])
        start += s
    return np.stack(out)


def _ragged_batch_inputs(rng, shapes, dtype):
    b = shapes[0][0]
    sizes = rng.multinomial(b, [0.5, 0.5]).astype(np.int32)
    return [_rand(rng, shapes[0], dtype, -3, 3), _rand(rng, shapes[1], dtype, -3, 3), sizes]


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
            r0, c0 = a * strides[0], b * strides[1]
            win = xp[:, :, r0:r0 + ekh:rhs_dil[0], c0:c0 + ekw:rhs_dil[1]]
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


def _np_mulhi(x, y):
    bits = 8 * x.dtype.itemsize
    wide = [(int(a) * int(b)) >> bits for a, b in zip(np.broadcast_to(x, np.broadcast(x, y).shape).ravel(),
                                                       np.broadcast_to(y, np.broadcast(x, y).shape).ravel())]
    out = np.array(wide, dtype=object).reshape(np.broadcast(x, y).shape)
    return out.astype(np.int64).astype(x.dtype) if out.size else np.zeros(out.shape, x.dtype)


def _full_range(rng, shapes, dtype):
    info = np.iinfo(dtype)
    return [rng.integers(info.min, info.max, size=tuple(s), endpoint=True, dtype=dtype) for s in shapes]


def _np_reduce_precision(x, exponent_bits, mantissa_bits):
    """Rounding through the narrower NumPy type of the same layout (inputs
    stay clear of its subnormals, which reduce_precision flushes)."""
    import ml_dtypes

    narrow = {(5, 10): np.float16, (8, 7): ml_dtypes.bfloat16, (8, 23): np.float32}[(exponent_bits, mantissa_bits)]
    return np.asarray(x).astype(narrow).astype(np.asarray(x).dtype)


def _full_range_or_bool(rng, shapes, dtype):
    if dtype == np.dtype(bool):
        return [rng.integers(0, 2, size=tuple(s)).astype(bool) for s in shapes]
    return _full_range(rng, shapes, dtype)


def _np_reduce_xor(x, axes):
    return np.bitwise_xor.reduce(x, axis=tuple(axes)) if axes else x


def _barrier_first(fn):
    def first(x, y):
        return fn((x, y))[0]

    return first


def _barrier_second(fn):
    def second(x, y):
        return fn({"a": x, "b": [y]})["b"][0]

    return second


def _reduce_sum_of_squares(fn):
    def reduce(x, dimensions):
        return fn(x, 0.0 if np.dtype(x.dtype).kind == "f" else 0, lambda a, b: a + b * b, dimensions)

    return reduce


def _reduce_pair(fn):
    """A two-operand reduction: the running max of `x` and the sum of `y`."""
    from microjax_rs import lax

    def reduce(x, y, dimensions):
        out = fn((x, y), (-np.inf, 0.0), lambda a, b: (lax.max(a[0], b[0]), a[1] + b[1]), dimensions)
        return out[0] + out[1]

    return reduce


def _reduce_window_general(fn):
    def reduce_window(x, window, strides, padding):
        return fn(x, 0.0, lambda a, b: a + b * b, window, strides, padding)

    return reduce_window


def _np_reduce_window_squares(x, window, strides, padding):
    pads = [tuple(p) for p in padding]
    xp = np.pad(np.asarray(x, np.float64) ** 2, pads)
    out_shape = [(n - w) // s + 1 for n, w, s in zip(xp.shape, window, strides)]
    out = np.zeros(out_shape)
    for idx in np.ndindex(*out_shape):
        sl = tuple(slice(i * s, i * s + w) for i, s, w in zip(idx, strides, window))
        out[idx] = xp[sl].sum()
    return out


def _tridiagonal_inputs(rng, shapes, dtype):
    """Diagonally dominant systems: `dl, d, du` of shape (..., n), `b` (..., n, k)."""
    dl = _rand(rng, shapes[0], dtype, -1, 1)
    d = (_rand(rng, shapes[0], dtype, 3, 4) * np.where(rng.integers(0, 2, size=shapes[0]) == 1, 1, -1)).astype(dtype)
    du = _rand(rng, shapes[0], dtype, -1, 1)
    return [dl, d, du, _rand(rng, shapes[1], dtype, -2, 2)]


def _np_tridiagonal_solve(dl, d, du, b):
    n = d.shape[-1]
    a = np.zeros(d.shape + (n,))
    idx = np.arange(n)
    a[..., idx, idx] = d
    a[..., idx[1:], idx[:-1]] = dl[..., 1:]
    a[..., idx[:-1], idx[1:]] = du[..., :-1]
    return np.linalg.solve(a, b)


def _np_reflectors_q(a, taus):
    m = a.shape[-2]
    q = np.broadcast_to(np.eye(m), a.shape[:-2] + (m, m)).copy()
    for i in range(taus.shape[-1]):
        v = np.array(a[..., :, i], np.float64)
        v[..., :i] = 0
        v[..., i] = 1
        h = np.eye(m) - taus[..., i, None, None] * v[..., :, None] * v[..., None, :]
        q = q @ h
    return q


def _np_householder_product(a, taus):
    return _np_reflectors_q(a, taus)[..., :, :a.shape[-1]]


def _np_ormqr(a, taus, c, left=True, transpose=False):
    q = _np_reflectors_q(a, taus)
    q = np.swapaxes(q, -1, -2) if transpose else q
    return q @ c if left else c @ q


def _reflector_inputs(rng, shapes, dtype):
    out = [_rand(rng, s, dtype, -1, 1) for s in shapes]
    out[1] = _rand(rng, shapes[1], dtype, 0.2, 1.5)
    return out


def _cholesky_inputs(rng, shapes, dtype):
    n = shapes[0][0]
    m = rng.normal(size=(n, n))
    r = np.linalg.cholesky(m @ m.T + n * np.eye(n)).T
    return [r.astype(dtype), _rand(rng, shapes[1], dtype, -1, 1)]


def _np_cholesky_update(r, w):
    return np.linalg.cholesky(r.T @ r + np.outer(w, w)).T


def _np_sytrd(a, lower=True, out=0):
    from scipy.linalg import lapack

    sytrd = lapack.get_lapack_funcs("sytrd", (a,))
    c, d, e, tau, _ = sytrd(a, lower=int(lower))
    return (c, d, e, tau)[out]


def _symmetric(rng, shapes, dtype):
    a = _rand(rng, shapes[0], dtype, -2, 2)
    return [((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)]


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
               args_maker=uniform(), dtypes=FI, adapt=pick_output(k),
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
                     _err([_f32(3), np.ones(3, np.int32)], TypeError,
                          "lax.stack requires arguments to have the same dtypes"))),
    *(OpRecord(name=f"lax.unstack[{k}]", path="lax.unstack",
               ref=lambda x, axis=0, k=k: np.take(x, k, axis=axis), args_maker=uniform(), dtypes=FI,
               adapt=pick_output(k),
               cases=(Case(((3, 4),)), Case(((2, 3, 2),), (), {"axis": 1}), Case(((2, 2),), (), {"axis": -1})),
               errors=(_err([_f32(2, 3)], ValueError, "out of bounds", axis=2),))
      for k in (0, 1)),
    OpRecord(name="lax.scatter_sub", ref=_np_scatter_sub, args_maker=_scatter_sub_inputs, dtypes=FI,
             cases=(Case(((5, 3), (4,))), Case(((2, 2), (3,)))), adapt=_scatter_sub),
    OpRecord(name="lax.ragged_dot", ref=_np_ragged_dot, args_maker=_ragged_inputs, dtypes=F + ("int32",),
             cases=(Case(((6, 2), (3, 2, 4))), Case(((5, 3), (2, 3, 2)))),
             errors=(_err([_f32(6, 2), _f32(3, 2, 4), np.array([1, 2], np.int32)], TypeError,
                          "expected rhs group dimension size to be 2, got 3."),)),
    OpRecord(name="lax.ragged_dot_general[non_contracting]", path="lax.ragged_dot_general", ref=_np_ragged_dot,
             args_maker=_ragged_inputs, dtypes=F, adapt=_ragged_general(((((1,), (1,)), ((), ())), (0,), (0,))),
             cases=(Case(((6, 2), (3, 2, 4))), Case(((5, 3), (2, 3, 2))))),
    OpRecord(name="lax.ragged_dot_general[contracting]", path="lax.ragged_dot_general", ref=_np_ragged_contracting,
             args_maker=_ragged_contracting_inputs, dtypes=F,
             adapt=_ragged_general(((((1,), (0,)), ((), ())), (1,), ())),
             cases=(Case(((2, 6), (6, 3), (3,))), Case(((3, 4), (4, 2), (2,))))),
    OpRecord(name="lax.ragged_dot_general[batch]", path="lax.ragged_dot_general",
             ref=lambda lhs, rhs, sizes: np.einsum("bij,bjk->bik", lhs, rhs),
             args_maker=_ragged_batch_inputs, dtypes=F,
             adapt=_ragged_general(((((2,), (1,)), ((0,), (0,))), (0,), ())),
             cases=(Case(((4, 2, 3), (4, 3, 2), (2,))),)),
    *(OpRecord(name=f"lax.{fn}[{out}]", path=f"lax.{fn}",
               ref=lambda x, k, reduction_dimension=-1, largest=largest, out=out: _np_topk(
                   x, k, reduction_dimension, largest, out),
               args_maker=_distinct, dtypes=F, adapt=pick_output(out), differentiable=out == 0,
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
    OpRecord(name="lax.mulhi", ref=_np_mulhi, args_maker=_full_range,
             dtypes=("int32", "uint32", "int8", "uint8", "int16", "uint16"),
             cases=(Case(((5,), (5,))), Case(((2, 3), (2, 3))), Case(((3,), ())), Case(((), ()))),
             errors=(_err([_f32(3), _f32(3)], TypeError, "mulhi"),
                     _err([np.ones(3, np.int32), np.ones(3, np.uint32)], TypeError, "operands must have equal dtypes"),
                     _err([np.ones(3, np.int32), np.ones(4, np.int32)], TypeError, "incompatible shapes"))),
    *(OpRecord(name=f"lax.reduce_precision[{e}_{m}]", path="lax.reduce_precision", ref=_np_reduce_precision,
               args_maker=uniform(-300.0, 300.0), dtypes=F, differentiable=False,
               cases=(Case(((4, 5),), (e, m)), Case(((7,),), (e, m)), Case(((),), (e, m))),
               errors=(_err([_f32(3)], ValueError, "exponent_bits must be positive; got 0", 0, 3),
                       _err([_f32(3)], ValueError, "mantissa_bits must be non-negative; got -1", 4, -1),
                       _err([np.ones(3, np.int32)], TypeError, "reduce_precision does not accept dtype int32", 4, 3)))
      for e, m in ((5, 10), (8, 7), (8, 23))),
    OpRecord(name="lax.reduce_xor", ref=_np_reduce_xor, args_maker=_full_range_or_bool,
             dtypes=("int32", "uint8", "int64", "bool"),
             cases=(Case(((3, 4),), ((1,),)), Case(((3, 4),), ((0, 1),)), Case(((2, 3, 2),), ((0, 2),)),
                    Case(((5,),), ((),))),
             errors=(_err([_f32(3)], TypeError, "reduce_xor", (0,)),)),
    OpRecord(name="lax.optimization_barrier[0]", path="lax.optimization_barrier", ref=lambda x, y: x,
             args_maker=uniform(), dtypes=F + ("int32",), adapt=_barrier_first,
             cases=(Case(((3,), (2, 2))), Case(((), (4,))))),
    OpRecord(name="lax.optimization_barrier[1]", path="lax.optimization_barrier", ref=lambda x, y: y,
             args_maker=uniform(), dtypes=F, adapt=_barrier_second, cases=(Case(((3,), (2, 2))),)),
    OpRecord(name="lax.reduce[sum_of_squares]", path="lax.reduce",
             ref=lambda x, dimensions: np.sum(np.asarray(x) ** 2, axis=tuple(dimensions)).astype(x.dtype),
             args_maker=uniform(), dtypes=FI, adapt=_reduce_sum_of_squares,
             cases=(Case(((3, 4),), ((1,),)), Case(((3, 4),), ((0, 1),)), Case(((2, 3, 2),), ((0, 2),)),
                    Case(((0, 3),), ((0,),)))),
    OpRecord(name="lax.reduce[pair]", path="lax.reduce",
             ref=lambda x, y, dimensions: np.max(x, axis=tuple(dimensions)) + np.sum(y, axis=tuple(dimensions)),
             args_maker=_distinct, dtypes=F, adapt=_reduce_pair,
             cases=(Case(((3, 4), (3, 4)), ((1,),)), Case(((2, 3), (2, 3)), ((0, 1),)))),
    OpRecord(name="lax.reduce_window[general]", path="lax.reduce_window", ref=_np_reduce_window_squares,
             args_maker=uniform(), dtypes=F, adapt=_reduce_window_general,
             cases=(Case(((4, 5),), ((2, 2), (1, 1), ((0, 0), (0, 0)))),
                    Case(((5, 4),), ((3, 2), (2, 1), ((1, 1), (0, 1)))))),
    OpRecord(name="lax.linalg.tridiagonal_solve", ref=_np_tridiagonal_solve, args_maker=_tridiagonal_inputs,
             dtypes=F, cases=(Case(((5,), (5, 2))), Case(((2, 4), (2, 4, 3))), Case(((1,), (1, 1)))),
             errors=(_err([_f32(5), _f32(5), _f32(5), _f32(5)], TypeError,
                          "Input 3 to tridiagonal_solve must have rank at least 2, but got shape=(5,)"),
                     _err([_f32(4), _f32(5), _f32(5), _f32(5, 2)], TypeError,
                          "tridiagonal_solve requires that all diagonal arguments have the same shape."))),
    OpRecord(name="lax.linalg.householder_product", ref=_np_householder_product, args_maker=_reflector_inputs,
             dtypes=F, cases=(Case(((4, 3), (3,))), Case(((3, 3), (2,))), Case(((2, 4, 2), (2, 2)))),
             errors=(_err([_f32(4, 3), _f32(5)], ValueError, "householder_product"),)),
    *(OpRecord(name=f"lax.linalg.ormqr[{'left' if left else 'right'}{'_t' if tr else ''}]", path="lax.linalg.ormqr",
               ref=lambda a, t, c, left=True, transpose=False: _np_ormqr(a, t, c, left, transpose),
               args_maker=_reflector_inputs, dtypes=F,
               cases=(Case(((4, 3), (3,), (4, 2) if left else (2, 4)), (), {"left": left, "transpose": tr}),))
      for left in (True, False) for tr in (False, True)),
    OpRecord(name="lax.linalg.symmetric_product",
             ref=lambda a, c, alpha=1.0, beta=0.0, symmetrize_output=False: (
                 (lambda o: np.tril(o) + np.swapaxes(np.tril(o, -1), -1, -2) if symmetrize_output else o)(
                     alpha * a @ np.swapaxes(a, -1, -2) + beta * c)),
             args_maker=uniform(), dtypes=F,
             cases=(Case(((3, 4), (3, 3)), (), {"alpha": 2.0, "beta": 0.5}), Case(((3, 2), (3, 3))),
                    Case(((2, 3, 2), (2, 3, 3)), (), {"beta": -1.0, "symmetrize_output": True})),
             errors=(_err([_f32(3, 4), _f32(4, 4)], ValueError, "symmetric_product"),)),
    OpRecord(name="lax.linalg.cholesky_update", ref=_np_cholesky_update, args_maker=_cholesky_inputs, dtypes=F,
             cases=(Case(((3, 3), (3,))), Case(((5, 5), (5,)))),
             errors=(_err([_f32(3, 3), _f32(4)], ValueError, "cholesky_update"),)),
    *(OpRecord(name=f"lax.linalg.tridiagonal[{'lower' if lower else 'upper'}{out}]", path="lax.linalg.tridiagonal",
               ref=lambda a, lower=True, out=out: _np_sytrd(a, lower, out), args_maker=_symmetric, dtypes=F,
               adapt=pick_output(out), differentiable=False,
               cases=(Case(((4, 4),), (), {"lower": lower}), Case(((5, 5),), (), {"lower": lower})),
               errors=(_err([_f32(3, 4)], ValueError, "tridiagonal requires square matrices"),))
      for lower in (True, False) for out in (0, 1, 2, 3)),
    *(OpRecord(name=f"lax.linalg.qdwh[{'uh'[k]}]", path="lax.linalg.qdwh",
               ref=lambda x, k=k: __import__("scipy.linalg", fromlist=["polar"]).polar(x)[k], args_maker=uniform(),
               dtypes=F, adapt=pick_output(k), differentiable=False,
               tol={"float32": (2e-4, 2e-4), "float64": (1e-9, 1e-9)},
               cases=(Case(((4, 3),)), Case(((3, 3),)), Case(((5, 2),))),
               errors=(_err([_f32(2, 3)], ValueError, "must have M >= N"),))
      for k in (0, 1)),
    OpRecord(name="lax.conv_general_dilated_local", ref=_np_local, args_maker=uniform(), dtypes=F,
             cases=(Case(((2, 2, 4, 5), (3, 8, 3, 4)), ((1, 1), "VALID", (2, 2))),
                    Case(((1, 1, 4, 4), (2, 6, 2, 4)), ((2, 1), "SAME", (3, 2))))),
)
