"""Structured control flow: `cond`, `switch`, `while_loop`, `fori_loop`,
`scan`, `map`, `associative_scan`.

Each function traces its Python callables once into closed jaxprs and binds
one primitive (`cond`, `while`, `scan`); the loop runs natively in Rust,
eagerly as well as under `jit`, and every transform (`grad`, `vmap`, ...)
goes through the primitive's Rust rules. Values the callables close over are
hoisted into leading operands (consts and tracers of enclosing traces), as
JAX does, so `make_jaxpr` shows them as operands of the equation."""
import inspect

import numpy as np

from .. import _core, core, dtypes
from ..core import ArrayImpl, ClosedJaxpr, Tracer
from ..interpreters.partial_eval import ShapeDtypeStruct, jit_disabled, trace_to_jaxpr
from ..tree_util import _flatten_with_path_data, keystr, tree_flatten, tree_unflatten

_InputSource = _core.InputSource

cond_p = core.Primitive("cond")
while_p = core.Primitive("while")
scan_p = core.Primitive("scan")


def _short(aval):
    return f"{aval.dtype_name}[{','.join(str(d) for d in aval.shape)}]"


def _struct(aval):
    return ShapeDtypeStruct(aval.shape, aval.dtype_name, aval.weak_type)


def _avals(leaves):
    return [core.get_aval(x) for x in leaves]


class _Traced:
    """A callable traced to a closed jaxpr over `(hoisted..., args...)`:
    `hoisted` are the values it closes over (consts, then captured tracers)."""

    def __init__(self, fun, in_avals, in_tree, name):
        leaves = [_struct(a) for a in in_avals]
        closed, self.out_tree, captures = trace_to_jaxpr(fun, leaves, in_tree, name)
        nargs = len(in_avals)
        consts = list(closed.consts())
        spec = [_InputSource.Const(i) for i in range(len(consts))]
        spec += [_InputSource.Input(nargs + j) for j in range(len(captures))]
        spec += [_InputSource.Input(i) for i in range(nargs)]
        self.jaxpr = closed.rewire_inputs(spec)
        self.hoisted = consts + list(captures)
        self.out_avals = [core.ShapedArray.from_record(a) for a in closed.out_avals()]


def _fun_name(f):
    return getattr(f, "__name__", None) or type(f).__name__


def _is_disabled():
    return jit_disabled()


# -- cond / switch ----------------------------------------------------------------------


def _check_branch_outputs(traced, names):
    first = traced[0]
    for t, nm in zip(traced[1:], names[1:]):
        if t.out_tree != first.out_tree:
            raise TypeError(
                f"{names[0]} and {nm} output must have same type structure, got "
                f"{first.out_tree} and {t.out_tree}.")
        diffs = [f"{_short(a)} vs. {_short(b)}" for a, b in zip(first.out_avals, t.out_avals)
                 if a.shape != b.shape or a.dtype_name != b.dtype_name]
        if diffs:
            raise TypeError(
                f"{names[0]} and {nm} output must have identical types, got\n"
                + "\n".join(diffs) + ".")


def _bind_cond(index, branches, operands, names):
    ops, in_tree = tree_flatten((tuple(operands), {}))
    in_avals = _avals(ops)
    traced = [_Traced(f, in_avals, in_tree, _fun_name(f)) for f in branches]
    _check_branch_outputs(traced, names)
    # One operand list for every branch: all hoisted values (captured tracers
    # shared between branches once), then the operands.
    hoisted, where = [], {}
    for t in traced:
        for v in t.hoisted:
            key = id(v) if isinstance(v, Tracer) else None
            if key is not None and key in where:
                continue
            if key is not None:
                where[key] = len(hoisted)
            hoisted.append(v)
    jaxprs = []
    for k, t in enumerate(traced):
        mine = {}
        for j, v in enumerate(t.hoisted):
            pos = where[id(v)] if isinstance(v, Tracer) else None
            if pos is None:
                pos = next(p for p, h in enumerate(hoisted) if h is v)
            mine[pos] = j
        spec = []
        for p, v in enumerate(hoisted):
            if p in mine:
                spec.append(_InputSource.Input(mine[p]))
            else:
                spec.append(_InputSource.Unused(core.get_aval(v).record()))
        spec += [_InputSource.Input(len(t.hoisted) + i) for i in range(len(ops))]
        jaxprs.append(ClosedJaxpr(t.jaxpr.rewire_inputs(spec)))
    outs = cond_p.bind(index, *hoisted, *ops, branches=tuple(jaxprs))
    return tree_unflatten(traced[0].out_tree, outs)


def _scalar_index(x, what):
    aval = core.get_aval(x)
    if aval.shape != ():
        raise TypeError(f"{what} must be a scalar, got {x!r} of shape {aval.shape}.")
    return aval


class _NoOperand:
    """`operand=` not given (None is a valid operand, as in JAX)."""

    def __repr__(self):
        return "<no operand>"


_NO_OPERAND = _NoOperand()


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """``true_fun(*operands)`` if ``pred`` is true, else ``false_fun(*operands)``, as one staged
    ``cond`` that works on traced predicates.

    Args:
      pred: a scalar boolean or number (nonzero is true); may be traced.
      true_fun, false_fun: functions of the operands returning pytrees of the same structure,
        shapes and dtypes.
      operands: the arguments passed to the branch (or ``operand=``, the older keyword).

    Both branches are traced. Under ``vmap`` with a batched predicate both run and the results
    are selected. With ``jax.disable_jit`` and a concrete predicate only the chosen branch runs.

    Example:
      >>> from microjax_rs import lax
      >>> print(lax.cond(True, lambda x: x + 1, lambda x: x - 1, 5))
      6
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("cond: pass operands positionally or as operand=, not both")
        operands = (operand,)
    if not callable(true_fun) or not callable(false_fun):
        raise TypeError("cond: true_fun and false_fun arguments should be callable.")
    aval = _scalar_index(pred, "Pred")
    if aval.dtype_name not in ("bool",) and not dtypes.is_int_name(aval.dtype_name) \
            and not dtypes.is_float_name(aval.dtype_name):
        raise TypeError(f"Pred type must be either boolean or number, got {aval.dtype_name}.")
    if _is_disabled() and not isinstance(pred, Tracer):
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    from . import convert_element_type, ne

    if aval.dtype_name != "bool":
        pred = ne(pred, 0)
    index = convert_element_type(pred, np.int32)
    return _bind_cond(index, (false_fun, true_fun), operands, ("true_fun", "false_fun"))


def switch(index, branches, *operands, operand=_NO_OPERAND):
    """``branches[index](*operands)``, with ``index`` clamped to ``[0, len(branches) - 1]``, as one
    staged ``cond`` that works on a traced ``index``.

    Args:
      index: a scalar integer; may be traced.
      branches: a sequence of functions with one output structure, shapes and dtypes.
      operands: the arguments passed to the branch.

    Example:
      >>> from microjax_rs import lax
      >>> print(lax.switch(1, [lambda x: x, lambda x: 2 * x, lambda x: 3 * x], 10))
      20
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("switch: pass operands positionally or as operand=, not both")
        operands = (operand,)
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    for b in branches:
        if not callable(b):
            raise TypeError(f"switch: branches must be callable, got {b!r}")
    aval = _scalar_index(index, "Branch index")
    if not dtypes.is_int_name(aval.dtype_name):
        raise TypeError(f"Index type must be an integer, got {index!r} of type {aval.dtype_name}")
    if len(branches) == 1:
        return branches[0](*operands)
    if _is_disabled() and not isinstance(index, Tracer):
        return branches[int(np.clip(int(index), 0, len(branches) - 1))](*operands)
    from . import clamp, convert_element_type

    index = convert_element_type(index, np.int32)
    index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
    names = tuple(f"branch {k}" for k in range(len(branches)))
    return _bind_cond(index, branches, operands, names)


# -- loops ------------------------------------------------------------------------


def _carry_name(fun):
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return None
    return params[0] if params else None


def _check_carry(what, fun, init_tree, init_paths, in_avals, out_tree, out_avals):
    """JAX's messages for a carry whose structure or types change."""
    name = _carry_name(fun)

    def component(path):
        if name:
            return f"the input carry component {name}{keystr(path)}" if path else f"the input carry {name}"
        return f"the input carry at path {keystr(path)}" if path else "the input carry"

    if out_tree != init_tree:
        raise TypeError(
            f"{what} function carry input and carry output must have the same pytree structure, "
            f"but they differ:\n\nThe input carry {name or ''} is a {init_tree} but the output "
            f"carry is a {out_tree}.\n\nRevise the function so that the carry output has the same "
            f"pytree structure as the carry input.")
    diffs = []
    for path, a, b in zip(init_paths, in_avals, out_avals):
        if a.shape != b.shape:
            diffs.append(f"{component(path)} has type {_short(a)} but the corresponding output "
                         f"carry component has type {_short(b)}, so the shapes do not match")
        elif a.dtype_name != b.dtype_name:
            diffs.append(f"{component(path)} has type {_short(a)} but the corresponding output "
                         f"carry component has type {_short(b)}, so the dtypes do not match")
    if diffs:
        body = (diffs[0][:1].upper() + diffs[0][1:] + "." if len(diffs) == 1
                else "\n".join(f"  * {d};" for d in diffs))
        raise TypeError(
            f"{what} function carry input and carry output must have equal types (e.g. shapes "
            f"and dtypes of arrays), but they differ:\n\n{body}\n\nRevise the function so that "
            f"all output types (e.g. shapes and dtypes) match the corresponding input types.")


def _promote_weak_carry(carry_avals, out_avals):
    """JAX lets a weakly typed carry take the type the body gives it (`0.`
    becoming `float32`, `0` becoming `float32` when the body adds floats).
    Returns the new carry avals, or None when nothing changes."""
    changed = False
    new = []
    for a, b in zip(carry_avals, out_avals):
        if a.weak_type and a.shape == b.shape and (a.dtype_name != b.dtype_name or not b.weak_type):
            name, weak = dtypes.promote([(a.dtype_name, True), (b.dtype_name, b.weak_type)])
            if name != a.dtype_name or weak != a.weak_type:
                new.append(core.ShapedArray(a.shape, name, weak))
                changed = True
                continue
        new.append(a)
    return new if changed else None


def _cast_leaves(leaves, avals):
    """The carry init converted to the promoted types (Python scalars become
    constants, so the jaxpr shows a literal as JAX's does)."""
    from . import _convert_keep_weak

    out = []
    for x, a in zip(leaves, avals):
        if type(x) in (bool, int, float):
            out.append(core.to_array(x, a.dtype, weak_type=a.weak_type))
        else:
            out.append(_convert_keep_weak(x, a.dtype_name, a.weak_type))
    return out


def _trace_body(what, fun, init_leaves, init_tree, paths, extra_avals, extra_tree_fn, carry_of):
    """Traces a loop body, promoting weakly typed carries once if needed.
    `extra_tree_fn(carry_tree)` gives the in_tree of the body's arguments;
    `carry_of(traced)` the (out_tree, out_avals) of its carry part."""
    carry_avals = _avals(init_leaves)
    for _ in range(2):
        in_tree = extra_tree_fn(init_tree)
        traced = _Traced(fun, carry_avals + extra_avals, in_tree, _fun_name(fun))
        out_tree, out_avals = carry_of(traced)
        if out_tree == init_tree:
            promoted = _promote_weak_carry(carry_avals, out_avals)
            if promoted is not None:
                carry_avals = promoted
                init_leaves = _cast_leaves(init_leaves, carry_avals)
                continue
        _check_carry(what, fun, init_tree, paths, carry_avals, out_tree, out_avals)
        return traced, init_leaves
    return traced, init_leaves


# Functions `(cond_fun, body_fun) -> body_fun` applied to every traced
# `while_loop` body: `checkify` registers one that, while checks are
# collected, makes the body's checks hold on iterations `cond_fun` stops
# (a batched loop runs the body of its finished examples too).
while_body_wrappers = []


def while_loop(cond_fun, body_fun, init_val):
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)`` is true, starting from ``init_val``;
    returns the final ``val``. One staged ``while`` (the loop runs natively, not in Python).

    Args:
      cond_fun: maps the carry to a scalar boolean.
      body_fun: maps the carry to a new carry of the same structure, shapes and dtypes.
      init_val: the initial carry, a pytree.

    The loop is forward-differentiable (``jvp``, ``jacfwd``); reverse mode raises the error JAX
    raises, because the trip count is not known in advance (use ``scan`` or ``fori_loop`` with
    static bounds).

    Example:
      >>> from microjax_rs import lax
      >>> print(lax.while_loop(lambda v: v < 10, lambda v: v * 2, 1))
      16
    """
    if _is_disabled():
        val = init_val
        while cond_fun(val):
            val = body_fun(val)
        return val
    with_path, init_tree = _flatten_with_path_data(init_val)
    paths = [p for p, _ in with_path]
    init = [x for _, x in with_path]

    def carry_tree(t):
        return tree_flatten(((t.unflatten([0] * t.num_leaves),), {}))[1]

    def body_carry(tr):
        return tr.out_tree, tr.out_avals

    for wrap in while_body_wrappers:
        body_fun = wrap(cond_fun, body_fun)
    body, init = _trace_body("while_loop body", body_fun, init, init_tree, paths, [],
                             carry_tree, body_carry)
    carry_avals = _avals(init)
    cond = _Traced(cond_fun, carry_avals, carry_tree(init_tree), _fun_name(cond_fun))
    if len(cond.out_avals) != 1 or cond.out_avals[0].dtype_name != "bool" or cond.out_avals[0].shape != ():
        got = ", ".join(f"ShapedArray({_short(a)})" for a in cond.out_avals)
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) [{got}].")
    outs = while_p.bind(*cond.hoisted, *body.hoisted, *init,
                        cond_jaxpr=ClosedJaxpr(cond.jaxpr), body_jaxpr=ClosedJaxpr(body.jaxpr),
                        cond_nconsts=len(cond.hoisted), body_nconsts=len(body.hoisted))
    return tree_unflatten(init_tree, outs)


def _concrete_int(x):
    """`x` as a Python int when it is concrete (not staged), else None."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if type(x) is ArrayImpl and x.ndim == 0:
        return int(x)
    if isinstance(x, Tracer):
        try:
            return int(x)
        except Exception:
            return None
    return None


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """Repeat ``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``, starting from
    ``init_val``; returns the final ``val``.

    Args:
      lower, upper: the loop bounds (integers; may be traced).
      body_fun: maps ``(i, carry)`` to a new carry of the same structure, shapes and dtypes.
      init_val: the initial carry.
      unroll: accepted for compatibility.

    With concrete bounds the loop becomes a ``scan`` (so it is reverse-differentiable); with
    traced bounds a ``while_loop`` (forward-differentiable only), as in JAX.

    Example:
      >>> from microjax_rs import lax
      >>> print(lax.fori_loop(0, 5, lambda i, acc: acc + i, 0))
      10
    """
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    idx_name = _index_dtype(lower, upper)
    if lo is not None and hi is not None:
        n = max(hi - lo, 0)
        if _is_disabled():
            val = init_val
            for i in range(lo, hi):
                val = body_fun(np.dtype(idx_name).type(i), val)
            return val
        start = core.to_array(lo, dtypes.np_dtype(idx_name), weak_type=False)

        def step(carry, _):
            i, x = carry
            return (i + 1, body_fun(i, x)), None

        (_, out), _ = scan(step, (start, init_val), None, length=n,
                           unroll=1 if unroll is None else unroll)
        return out
    if unroll is not None and unroll not in (1, False):
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    from . import convert_element_type

    lower = convert_element_type(lower, np.dtype(idx_name))
    upper = convert_element_type(upper, np.dtype(idx_name))

    def cond_fun(c):
        return c[0] < c[1]

    def body(c):
        i, u, x = c
        return i + 1, u, body_fun(i, x)

    _, _, out = while_loop(cond_fun, body, (lower, upper, init_val))
    return out


def _index_dtype(lower, upper):
    names = []
    for b in (lower, upper):
        if isinstance(b, (ArrayImpl, Tracer)):
            names.append(core.get_aval(b).dtype_name)
    for n in names:
        if not dtypes.is_int_name(n):
            raise TypeError(f"fori_loop bounds must be integers, got {n}")
    return names[0] if names else "int32"


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``, returning the final carry
    and the ``y``s stacked along a new leading axis. One staged ``scan``, run natively and
    differentiable in both modes.

    Args:
      f: maps ``(carry, x)`` to ``(new_carry, y)``; the carry keeps its structure, shapes and dtypes.
      init: the initial carry, a pytree.
      xs: a pytree of arrays with one leading length, sliced per step (None: no per-step input).
      length: the number of steps, required when ``xs`` is None.
      reverse: run from the last element to the first (results keep ``xs``'s order).
      unroll: accepted for compatibility.

    Returns:
      ``(final_carry, stacked_ys)``.

    Example:
      >>> import microjax_rs.numpy as jnp
      >>> from microjax_rs import lax
      >>> def cumulative(total, x):
      ...     return total + x, total + x
      >>> total, partial_sums = lax.scan(cumulative, 0.0, jnp.arange(4.0))
      >>> print(total, partial_sums)
      6.0 [0. 1. 3. 6.]
    """
    if not callable(f):
        raise TypeError(f"scan: f argument should be a callable, got {f!r}")
    xs_leaves, xs_tree = tree_flatten(xs)
    lengths = []
    for x in xs_leaves:
        shape = core.get_aval(x).shape
        if not shape:
            raise ValueError("scan got value with no leading axis to scan over: "
                             f"{_short(core.get_aval(x))}.")
        lengths.append(shape[0])
    if length is not None:
        length = int(length)
        if any(n != length for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {sorted(set(lengths))}.")
    elif lengths:
        if len(set(lengths)) > 1:
            raise ValueError("scan got values with different leading axis sizes: "
                             + ", ".join(str(n) for n in lengths) + ".")
        length = lengths[0]
    else:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    if _is_disabled():
        return _scan_python(f, init, xs_leaves, xs_tree, length, reverse)
    unroll = length if unroll is True else (1 if unroll is False else int(unroll))
    if unroll < 1:
        raise ValueError("`unroll` must be a `bool` or a positive `int`.")
    with_path, init_tree = _flatten_with_path_data(init)
    paths = [p for p, _ in with_path]
    init_leaves = [x for _, x in with_path]
    x_avals = [core.ShapedArray(core.get_aval(x).shape[1:], core.get_aval(x).dtype_name,
                                core.get_aval(x).weak_type) for x in xs_leaves]
    nk = len(init_leaves)

    def args_tree(t):
        carry = t.unflatten([0] * t.num_leaves)
        return tree_flatten(((carry, xs_tree.unflatten([0] * len(x_avals))), {}))[1]

    def carry_of(tr):
        out = tr.out_tree.unflatten(list(range(tr.out_tree.num_leaves)))
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError(f"scan body output must be a pair, got {tr.out_tree}.")
        leaves, ctree = tree_flatten(out[0])
        return ctree, [tr.out_avals[i] for i in leaves]

    body, init_leaves = _trace_body("scan body", f, init_leaves, init_tree, paths, x_avals,
                                    args_tree, carry_of)
    outs = scan_p.bind(
        *body.hoisted, *init_leaves, *xs_leaves,
        jaxpr=ClosedJaxpr(body.jaxpr), length=length, reverse=bool(reverse),
        num_consts=len(body.hoisted), num_carry=nk,
        linear=(False,) * (len(body.hoisted) + nk + len(xs_leaves)), unroll=unroll,
        _split_transpose=False)
    out = body.out_tree.unflatten(list(range(body.out_tree.num_leaves)))
    carry_leaves, carry_tree = tree_flatten(out[0])
    y_leaves, y_tree = tree_flatten(out[1])
    return (tree_unflatten(carry_tree, [outs[i] for i in carry_leaves]),
            tree_unflatten(y_tree, [outs[i] for i in y_leaves]))


def _as_array(x):
    """A pytree leaf as an array (as jnp.asarray converts it)."""
    if isinstance(x, Tracer) or type(x) is ArrayImpl or core.on_device(x):
        return x
    return core.to_array(x)


def _promote_leaves(xs):
    """Leaves converted to their common dtype as jnp promotes (JAX's lattice,
    weak types kept)."""
    from . import _convert_keep_weak

    xs = [_as_array(x) for x in xs]
    avals = [core.get_aval(x) for x in xs]
    name, weak = dtypes.promote([(a.dtype_name, a.weak_type) for a in avals])
    return [_convert_keep_weak(x, name, weak) for x in xs]


def _stack(xs, axis=0):
    """`jnp.stack` of leaves of one shape along a new `axis`."""
    from . import concatenate, expand_dims

    xs = _promote_leaves(xs)
    shape = core.get_aval(xs[0]).shape
    if any(core.get_aval(x).shape != shape for x in xs[1:]):
        raise ValueError("All input arrays must have the same shape.")
    return concatenate([expand_dims(x, (axis,)) for x in xs], axis)


def _scan_python(f, init, xs_leaves, xs_tree, length, reverse):
    carry, ys = init, []
    order = range(length - 1, -1, -1) if reverse else range(length)
    for i in order:
        x = xs_tree.unflatten([x[i] for x in xs_leaves]) if xs_leaves else None
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys:
        return carry, None
    leaves0, ytree = tree_flatten(ys[0])
    stacked = [_stack([tree_flatten(y)[0][k] for y in ys]) for k in range(len(leaves0))]
    return carry, tree_unflatten(ytree, stacked)


def map(f, xs, *, batch_size=None):
    """`f` over the leading axis of `xs` (a `scan` without carry); with
    `batch_size`, `vmap(f)` over chunks of that size, the remainder last."""
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    from . import concatenate, reshape
    from .._vmap import vmap  # lax.map(batch_size=) is defined by the vmap transform (a layer above)

    leaves, tree = tree_flatten(xs)
    n = core.get_aval(leaves[0]).shape[0]
    batch_size = int(batch_size)
    nb, rem = divmod(n, batch_size)
    main = [reshape(x[:nb * batch_size], (nb, batch_size) + tuple(x.shape[1:])) for x in leaves]
    _, ys = scan(lambda _, x: ((), vmap(f)(x)), (), tree_unflatten(tree, main))
    yl, ytree = tree_flatten(ys)
    yl = [reshape(y, (nb * batch_size,) + tuple(y.shape[2:])) for y in yl]
    if rem:
        tail = vmap(f)(tree_unflatten(tree, [x[nb * batch_size:] for x in leaves]))
        tl = tree_flatten(tail)[0]
        yl = [concatenate(_promote_leaves([a, b]), 0) for a, b in zip(yl, tl)]
    return tree_unflatten(ytree, yl)


def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive scan of the associative `fn` along `axis` of every leaf of
    `elems`, in O(log n) levels of `fn` (odd/even recursion)."""
    from . import concatenate, full, reshape, rev, slice_in_dim

    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    leaves = [_as_array(x) for x in leaves]  # Arrays out even when there is nothing to combine
    ndim = core.get_aval(leaves[0]).ndim
    axis = axis + ndim if axis < 0 else axis
    n = core.get_aval(leaves[0]).shape[axis]
    for x in leaves:
        if core.get_aval(x).shape[axis] != n:
            raise ValueError("Array inputs to associative_scan must have the same first dimension.")
    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        return tree_flatten(out)[0]

    def sl(xs, start, stop, step=1):
        return [slice_in_dim(x, start, stop, step, axis) for x in xs]

    def interleave(a, b):
        # a has ceil(m), b has floor(m) elements along axis; result a0 b0 a1 b1 ...
        out = []
        for x, y in zip(a, b):
            na, nb_ = x.shape[axis], y.shape[axis]
            if na > nb_:
                pad_shape = list(y.shape)
                pad_shape[axis] = 1
                y = concatenate([y, full(pad_shape, 0, y.dtype)], axis)
            st = _stack([x, y], axis + 1)
            shape = list(x.shape)
            shape[axis] = 2 * x.shape[axis]
            st = reshape(st, shape)
            out.append(slice_in_dim(st, 0, na + nb_, 1, axis))
        return out

    def rec(xs):
        m = xs[0].shape[axis]
        if m < 2:
            return xs
        reduced = combine(sl(xs, 0, m - 1, 2), sl(xs, 1, m, 2))
        odd = rec(reduced)
        if m % 2 == 0:
            even = combine(sl(odd, 0, m // 2 - 1), sl(xs, 2, m, 2))
        else:
            even = combine(odd, sl(xs, 2, m, 2))
        first = sl(xs, 0, 1)
        even = [concatenate([f, e], axis) for f, e in zip(first, even)]
        return interleave(even, odd)

    out = rec(leaves)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


def platform_dependent(*args, default=None, **per_platform):
    """`per_platform[<platform>](*args)` for the platform of the default
    backend ("cpu", or "cuda" on a GPU), else `default(*args)`. The branch
    is chosen when tracing: a microjax_rs program runs on one platform."""
    from .._devices import default_backend

    if "gpu" in per_platform:
        raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    platform = {"gpu": "cuda"}.get(default_backend(), default_backend())
    branch = per_platform.get(platform, default)
    if branch is None:
        raise NotImplementedError(
            f"lax.platform_dependent: no branch for platform {platform} among "
            f"{sorted(per_platform)} and no default")
    return branch(*args)
