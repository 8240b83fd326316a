"""JAX's `lax` primitive objects that the core has no primitive for:
`copy_p`, `tile_p`, `split_p`, `stack_p`, `unstack_p`, the total-order
comparisons `eq_to_p`/`le_to_p`/`lt_to_p`, `scatter_sub_p`, `reduce_p`,
`reduce_window_p`, `select_and_scatter_p`, `approx_top_k_p`,
`rng_bit_generator_p`, `linear_solve_p` (JAX's `custom_linear_solve`),
`rng_uniform_p` and `stage_p`, with the functions `rng_uniform` and `stage`.

Each binds with JAX's operands and params and shows as one equation named as
in JAX (`make_jaxpr`); it computes the composition of lax operations given
here (`_composite.composite_primitive`), with the differentiation and
batching rules JAX registers for it. The public functions (`lax.split`,
`lax.reduce`, ...) keep running their compositions directly: a program
holding one of these primitives runs it through Python under `jit` and
cannot be exported.
"""
import collections

import numpy as np

from .. import core, dtypes
from ._composite import composite_primitive


def _lax():
    from .. import lax
    return lax


# ---- structural operations


def _copy(x):
    x = _lax()._arr(x)
    if type(x) is core.ArrayImpl:
        return core.to_array(np.array(x), dtype=x.dtype, weak_type=x.weak_type)
    return x


copy_p = composite_primitive("copy", _copy)
tile_p = composite_primitive("tile", lambda operand, *, reps: _lax().tile(operand, reps))
split_p = composite_primitive("split", lambda operand, *, sizes, axis: list(_lax().split(operand, sizes, axis)),
                              multiple_results=True)
stack_p = composite_primitive("stack", lambda *operands, axis: _lax().stack(operands, axis))


def _unstack(operand, *, axis):
    shape = core.get_aval(operand).shape
    if not shape:
        raise ValueError(f"unstack requires arrays with rank > 0, however a scalar array of shape {shape} "
                         f"was passed.")
    return list(_lax().unstack(operand, axis))


unstack_p = composite_primitive("unstack", _unstack, multiple_results=True)


# ---- comparisons in the IEEE total order


def _same_dtype(name, x, y):
    """`x` and `y` as arrays of one dtype (a weakly typed side takes the other's)."""
    lax = _lax()
    x, y = lax._arr(x), lax._arr(y)
    ax, ay = core.get_aval(x), core.get_aval(y)
    if ax.dtype_name != ay.dtype_name:
        if ax.weak_type and not ay.weak_type:
            x = lax.convert_element_type(x, ay.dtype_name)
        elif ay.weak_type and not ax.weak_type:
            y = lax.convert_element_type(y, ax.dtype_name)
        else:
            raise TypeError(f"{name} requires arguments to have the same dtypes, got "
                            f"{ax.dtype_name}, {ay.dtype_name}.")
    if dtypes.is_complex_name(core.get_aval(x).dtype_name):
        raise TypeError(f"{name} compares in the IEEE total order, which has no complex dtypes")
    return x, y


def _total_order_key(x):
    """Integers ordered as the floats `x` in the IEEE total order
    (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN); other dtypes as they are."""
    lax = _lax()
    name = core.get_aval(x).dtype_name
    if not dtypes.is_float_name(name):
        return x
    bits = np.dtype(dtypes.np_dtype(name)).itemsize * 8
    int_name = f"int{bits}"
    i = lax.bitcast_convert_type(x, int_name)
    sign = lax.shift_right_arithmetic(i, lax.full_like(i, bits - 1))
    return lax.bitwise_xor(i, lax.bitwise_and(sign, lax.full_like(i, (1 << (bits - 1)) - 1)))


def _total_order(name, compare):
    def fun(x, y):
        x, y = _same_dtype(name, x, y)
        return compare(_total_order_key(x), _total_order_key(y))
    return composite_primitive(name, fun)


eq_to_p = _total_order("eq_to", lambda a, b: _lax().eq(a, b))
le_to_p = _total_order("le_to", lambda a, b: _lax().le(a, b))
lt_to_p = _total_order("lt_to", lambda a, b: _lax().lt(a, b))


# ---- scatter, reductions, windows


def _scatter_sub(operand, indices, updates, *, dimension_numbers, indices_are_sorted=False,
                 unique_indices=False, mode=None, update_jaxpr=None, update_consts=()):
    return _lax().scatter_sub(operand, indices, updates, dimension_numbers, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode)


scatter_sub_p = composite_primitive("scatter-sub", _scatter_sub)


def _as_function(jaxpr, consts=()):
    """A Python function evaluating `jaxpr` (closed, or open with `consts`)."""
    if isinstance(jaxpr, core.ClosedJaxpr):
        return lambda *xs: core.jaxpr_as_fun(jaxpr)(*xs)
    return lambda *xs: core.eval_jaxpr(jaxpr, list(consts), *xs)


def _pairwise(fun, n):
    """`fun(*accs, *xs)` (flat outputs) as a computation over `(acc, x)`,
    tuples when there are several operands (as `lax.reduce` calls it)."""
    if n == 1:
        return lambda a, x: fun(a, x)[0]
    return lambda a, x: tuple(fun(*a, *x))


def _reduce(*args, computation=None, jaxpr=None, dimensions):
    n = len(args) // 2
    ops, inits = list(args[:n]), list(args[n:])
    if computation is None:
        computation = _pairwise(_as_function(jaxpr), n)
    out = _lax().reduce(ops if n > 1 else ops[0], inits if n > 1 else inits[0], computation, dimensions)
    return list(out) if n > 1 else [out]


reduce_p = composite_primitive("reduce", _reduce, multiple_results=True)


def _reduce_window(*args, jaxpr, consts=(), window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    from ._reductions import reduce_window_general
    n = len(args) // 2
    ops, inits = list(args[:n]), list(args[n:])
    out = reduce_window_general(ops if n > 1 else ops[0], inits if n > 1 else inits[0],
                                _pairwise(_as_function(jaxpr, consts), n), tuple(window_dimensions),
                                tuple(window_strides), tuple(tuple(p) for p in padding), tuple(base_dilation),
                                tuple(window_dilation))
    return list(out) if n > 1 else [out]


reduce_window_p = composite_primitive("reduce_window", _reduce_window, multiple_results=True)


def _select_and_scatter(operand, source, init_value, *, select_jaxpr, select_consts=(), scatter_jaxpr,
                        scatter_consts=(), window_dimensions, window_strides, padding):
    """XLA's SelectAndScatter: in each window of `operand` (padded positions
    are never chosen) `select(a, b)` keeps the current choice `a` over the next
    element `b`; the window's `source` value is combined with `scatter` into
    the output (initially `init_value`) at the chosen position."""
    lax = _lax()
    select = _as_function(select_jaxpr, select_consts)
    scatter = _as_function(scatter_jaxpr, scatter_consts)
    operand, source = lax._arr(operand), lax._arr(source)
    shape = tuple(core.get_aval(operand).shape)
    src_shape = tuple(core.get_aval(source).shape)
    nd = len(shape)
    if not (len(window_dimensions) == len(window_strides) == len(padding) == nd):
        raise TypeError(f"select_and_scatter got inconsistent window_strides and window_dimensions: got "
                        f"window_strides {tuple(window_strides)} and window_dimensions {tuple(window_dimensions)}.")
    size, m = int(np.prod(shape)), int(np.prod(src_shape))
    flat = lax.reshape(operand, (size,))
    out = lax.broadcast(lax._arr(init_value), (size,))
    dims = np.asarray(shape)
    starts = np.indices(src_shape).reshape(nd, m).T * np.asarray(window_strides) - \
        np.asarray([lo for lo, _ in padding])
    # The chosen flat position of each window (-1: none yet), found by a
    # static walk over the window's offsets.
    best_val, best_pos = None, core.to_array(np.full(m, -1, np.int32))
    for offset in np.ndindex(*window_dimensions):
        pos = starts + np.asarray(offset)
        inside = np.all((pos >= 0) & (pos < dims), axis=1)
        if not inside.any():
            continue
        lin = np.where(inside, np.ravel_multi_index(np.clip(pos, 0, dims - 1).T, shape), -1).astype(np.int32)
        cand = lax.index_take(flat, (core.to_array(np.maximum(lin, 0)),), (0,))
        valid = core.to_array(inside)
        if best_val is None:
            take_new, best_val = valid, cand
        else:
            keep = select(best_val, cand)[0]
            unset = lax.lt(best_pos, core.to_array(np.zeros(m, np.int32)))
            take_new = lax.bitwise_and(valid, lax.bitwise_or(unset, lax.bitwise_not(keep)))
            best_val = lax.select(take_new, cand, best_val)
        best_pos = lax.select(take_new, core.to_array(lin), best_pos)
    if best_val is None or not m:
        return lax.reshape(out, shape)
    src = lax.reshape(source, (m,))
    zero = core.to_array(np.int32(0))

    def body(i, acc):
        p = lax.dynamic_index_in_dim(best_pos, i, keepdims=False)
        at = lax.max(p, zero)
        cur = lax.dynamic_index_in_dim(acc, at, keepdims=False)
        new = scatter(cur, lax.dynamic_index_in_dim(src, i, keepdims=False))[0]
        new = lax.select(lax.ge(p, zero), lax.convert_element_type(new, core.get_aval(cur).dtype_name), cur)
        return lax.dynamic_update_index_in_dim(acc, lax.reshape(new, (1,)), at, 0)

    out = lax.fori_loop(0, m, body, out)
    return lax.reshape(out, shape)


select_and_scatter_p = composite_primitive("select_and_scatter", _select_and_scatter, differentiable=False,
                                           batchable=False)


# ---- approximate top-k, random bits, linear solves


def _approx_top_k(operand, *, k, reduction_dimension=-1, recall_target=0.95, is_max_k=True,
                  reduction_input_size_override=-1, aggregate_to_topk=True):
    lax = _lax()
    fun = lax.approx_max_k if is_max_k else lax.approx_min_k
    return list(fun(operand, k, reduction_dimension, recall_target, reduction_input_size_override,
                    aggregate_to_topk))


approx_top_k_p = composite_primitive("approx_top_k", _approx_top_k, multiple_results=True)


def _rng_bit_generator(key, *, shape, dtype=np.uint32, algorithm=None, out_sharding=None):
    lax = _lax()
    algorithm = lax.RandomAlgorithm.RNG_DEFAULT if algorithm is None else algorithm
    return list(lax.rng_bit_generator(key, tuple(shape), dtype, algorithm))


rng_bit_generator_p = composite_primitive("rng_bit_generator", _rng_bit_generator, multiple_results=True,
                                          differentiable=False)


# JAX's params of `linear_solve_p`: one entry per function of the solve.
_LinearSolveTuple = collections.namedtuple("_LinearSolveTuple", "matvec vecmat solve transpose_solve")


def _linear_solve(*args, const_lengths, jaxprs):
    """`custom_linear_solve` of the closed jaxprs in `jaxprs` (each taking its
    constants, then the flat vector); the constants lead `args`, the
    right-hand side's leaves follow."""
    lax = _lax()
    const_lengths, jaxprs = _LinearSolveTuple(*const_lengths), _LinearSolveTuple(*jaxprs)
    consts, rest = {}, list(args)
    for field in _LinearSolveTuple._fields:
        n = getattr(const_lengths, field)
        consts[field], rest = rest[:n], rest[n:]
    b = rest

    def function(field):
        closed = getattr(jaxprs, field)
        if closed is None:
            return None
        fun = core.jaxpr_as_fun(closed)
        return lambda *xs: list(fun(*consts[field], *xs))

    matvec = function("matvec")
    solve, transpose_solve = function("solve"), function("transpose_solve")

    def as_list_fun(f):
        return lambda x: f(*x)

    def solve_fn(_, rhs):
        return solve(*rhs)

    t_solve = None if transpose_solve is None else (lambda _, rhs: transpose_solve(*rhs))
    return list(lax.custom_linear_solve(as_list_fun(matvec), b, solve_fn, t_solve))


linear_solve_p = composite_primitive("custom_linear_solve", _linear_solve, multiple_results=True)


# ---- the stateful uniform generator


_RNG_STATE = np.random.default_rng(0)


def _rng_uniform_avals(a, b, shape):
    if a.shape or b.shape:
        raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes {a.shape} and {b.shape}.")
    if a.dtype_name != b.dtype_name:
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got {a.dtype_name} and "
                         f"{b.dtype_name}.")
    if not (dtypes.is_float_name(a.dtype_name) or dtypes.is_int_name(a.dtype_name)):
        raise TypeError(f"rng_uniform draws floats or integers, got {a.dtype_name}")
    return core.ShapedArray(tuple(int(d) for d in shape), a.dtype_name, a.weak_type and b.weak_type)


def _rng_uniform_impl(a, b, *, shape):
    aval = _rng_uniform_avals(core.get_aval(a), core.get_aval(b), shape)
    dt = dtypes.np_dtype(aval.dtype_name)
    lo, hi = np.asarray(a).item(), np.asarray(b).item()
    if dtypes.is_float_name(aval.dtype_name):
        draws = lo + (hi - lo) * _RNG_STATE.random(aval.shape)
        draws = np.where(draws >= hi, lo, draws) if hi > lo else draws
    else:
        draws = _RNG_STATE.integers(lo, hi, aval.shape) if hi > lo else np.full(aval.shape, lo)
    return core.to_array(np.asarray(draws).astype(dt), dtype=aval.dtype_name, weak_type=aval.weak_type)


rng_uniform_p = core.Primitive("rng_uniform")
rng_uniform_p.def_impl(_rng_uniform_impl)
rng_uniform_p.def_abstract_eval(lambda a, b, *, shape: _rng_uniform_avals(a, b, shape))


def rng_uniform(a, b, shape):
    """Stateful generator of uniform draws in `[a, b)` (JAX's
    `lax.rng_uniform`, whose use JAX discourages: prefer `jax.random`). `a`
    and `b` are scalars of one float or integer dtype; every evaluation, also
    of a compiled program, draws new values from one process-wide generator."""
    return rng_uniform_p.bind(a, b, shape=tuple(int(d) for d in shape))


# ---- staging a value


stage_p = composite_primitive("stage", lambda x: x if isinstance(x, core.Tracer) else core.to_array(x))


def stage(x, /):
    """Lifts a value into the active trace (JAX's `lax.stage`): logically the
    identity; outside any trace it returns the value as an array, a value
    already traced by the innermost trace is returned as it is, and under
    `jit`/`make_jaxpr` a concrete value becomes a constant of the program (a
    tracer, no equation; JAX folds `stage_p` the same way). Under the other
    transformations it binds `stage_p`."""
    top = core.current_trace()
    if isinstance(x, core.Tracer) and getattr(x, "_trace", None) is top:
        return x
    if type(top) is core.StagingTrace and not isinstance(x, core.Tracer):
        # jit / make_jaxpr: the value becomes a constant of the program, no equation
        arr = core.to_array(x)
        return core.Tracer(top, top._const(arr), core.get_aval(arr))
    return stage_p.bind(x)
