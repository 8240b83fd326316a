"""`lax.reduce` and the general case of `lax.reduce_window`: reductions
with any Python computation.

A computation JAX recognizes (add, mul, max, min, and, or, xor with their
identity as init value) binds its `reduce_*` primitive. Any other
computation runs as a traced loop: `reduce` scans the reduced elements in
row-major order, combining `computation(acc, x)` from the init value;
`reduce_window` pads with the init value and folds the window's offsets in
row-major order. The computation is applied per element (vmapped), so a
scalar computation works as written; derivatives, jit and vmap go through
the scan and the elementwise steps."""
import math

import numpy as np

from .. import core
from ..tree_util import tree_flatten, tree_unflatten


def _lax():
    from .. import lax

    return lax


def _concrete(x):
    try:
        return np.asarray(x).item()
    except Exception:  # a traced init value
        return None


def _monoid_primitive(computation, init, dtype_name):
    """The `reduce_*` function for a recognized computation whose init value
    is its identity, else None."""
    lax = _lax()
    from ._convolution import _extreme, _monoid

    kind = _monoid(computation)
    if kind is None:
        named = ((lax.mul, "mul"), (lax.bitwise_and, "and"), (lax.bitwise_or, "or"), (lax.bitwise_xor, "xor"))
        kind = next((k for fn, k in named if computation is fn), None)
    value = _concrete(init)
    if kind is None or value is None:
        return None
    dt = np.dtype(_np_dtype(dtype_name))
    identity = {"add": 0, "mul": 1, "max": _extreme(dt, False), "min": _extreme(dt, True),
                "or": 0, "xor": 0, "and": True if dt.kind == "b" else -1}[kind]
    if kind == "and" and dt.kind == "u":
        identity = int(np.iinfo(dt).max)
    if value != identity:
        return None
    return {"add": lax.reduce_sum, "mul": lax.reduce_prod, "max": lax.reduce_max, "min": lax.reduce_min,
            "and": lax.reduce_and, "or": lax.reduce_or, "xor": lax.reduce_xor}[kind]


def _np_dtype(name):
    from .. import dtypes

    return dtypes.np_dtype(name)


def _elementwise(computation, tree, n):
    """`computation` of two pytrees of flat arrays (`n` leaves each), vmapped
    over their one axis; the results keep the accumulator's dtypes."""
    from .._vmap import vmap

    lax = _lax()

    def flat(*leaves):
        a = tree_unflatten(tree, list(leaves[:n]))
        b = tree_unflatten(tree, list(leaves[n:]))
        out, out_tree = tree_flatten(computation(a, b))
        if out_tree != tree:
            raise TypeError(f"reduction computation must return the structure of its operands ({tree}), "
                            f"got {out_tree}")
        return [lax.convert_element_type(o, core.get_aval(leaves[i]).dtype_name) for i, o in enumerate(out)]

    return vmap(flat)


def _check(operands, init_values):
    lax = _lax()
    ops, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: {tree} vs. {init_tree}")
    ops = [lax._arr(o) for o in ops]
    inits = [core.to_array(i, _np_dtype(core.get_aval(o).dtype_name), weak_type=False)
             if isinstance(i, (bool, int, float, np.generic, np.ndarray))
             else lax._convert_keep_weak(lax._arr(i), core.get_aval(o).dtype_name, False)
             for i, o in zip(inits, ops)]
    shapes = {tuple(core.get_aval(o).shape) for o in ops}
    if len(shapes) != 1:
        raise ValueError(f"reduce operands must all have the same shape, got {sorted(shapes)}")
    return ops, inits, tree, shapes.pop()


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """Reduces `operands` (an array or a pytree of same-shaped arrays) over
    `dimensions` with `computation(acc, x)`, starting from `init_values`."""
    lax = _lax()
    ops, inits, tree, shape = _check(operands, init_values)
    dims = tuple(sorted({lax._canon_axis(d, len(shape)) for d in dimensions}))
    if len(dims) != len(tuple(dimensions)):
        raise ValueError(f"reduce dimensions must be unique, got {tuple(dimensions)}")
    if len(ops) == 1:
        prim = _monoid_primitive(computation, inits[0], core.get_aval(ops[0]).dtype_name)
        if prim is not None:
            return tree_unflatten(tree, [prim(ops[0], dims)])
    kept = [d for d in range(len(shape)) if d not in dims]
    kept_shape = tuple(shape[d] for d in kept)
    n_red = math.prod(shape[d] for d in dims)
    m = math.prod(kept_shape)
    accs = [lax.broadcast(i, (m,)) for i in inits]
    if n_red and m:
        xs = [lax.reshape(lax.transpose(o, dims + tuple(kept)), (n_red, m)) for o in ops]
        step = _elementwise(computation, tree, len(ops))

        def body(carry, x):
            return list(step(*carry, *x)), None

        accs, _ = lax.scan(body, accs, xs)
    return tree_unflatten(tree, [lax.reshape(a, kept_shape) for a in accs])


def reduce_window_general(operands, init_values, computation, window_dimensions, window_strides, padding,
                          base_dilation, window_dilation):
    """`reduce_window` with any computation (explicit `(lo, hi)` padding)."""
    lax = _lax()
    ops, inits, tree, _ = _check(operands, init_values)
    config = [(lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation)]
    padded = [lax.pad(o, i, config) for o, i in zip(ops, inits)]
    pshape = tuple(core.get_aval(padded[0]).shape)
    out_shape = tuple(
        max(0, (p - ((w - 1) * wd + 1)) // s + 1)
        for p, w, wd, s in zip(pshape, window_dimensions, window_dilation, window_strides))
    m = math.prod(out_shape)
    accs = [lax.broadcast(i, (m,)) for i in inits]
    if m:
        step = _elementwise(computation, tree, len(ops))
        for offset in np.ndindex(*window_dimensions):
            starts = [k * wd for k, wd in zip(offset, window_dilation)]
            limits = [st + (o - 1) * s + 1 for st, o, s in zip(starts, out_shape, window_strides)]
            xs = [lax.reshape(lax.slice(p, starts, limits, window_strides), (m,)) for p in padded]
            accs = step(*accs, *xs)
    return tree_unflatten(tree, [lax.reshape(a, out_shape) for a in accs])


# ----------------------------------------------------------------------------
# jax_allow_f16_reductions: with it off, `reduce_sum_p` on a float16 /
# bfloat16 operand raises ValueError, as JAX (`jnp.sum` is unaffected: it
# sums half-precision values in float32).

_reduce_sum_p = core.Primitive("reduce_sum")


def _reduce_sum_bind(*args, **params):
    from ..config import config

    if args and not config._values["jax_allow_f16_reductions"]:
        aval = core.get_aval(args[0])
        if aval.dtype_name in ("float16", "bfloat16"):
            raise ValueError(f"reduce_sum on operand {aval.str_short()} is not allowed when "
                             f"jax_allow_f16_reductions=False.")
    return core.bind(_reduce_sum_p, args, params)


_reduce_sum_p.bind = _reduce_sum_bind
