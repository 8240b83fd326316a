"""`vmap` (JAX's signature and semantics) on the batch trace mode."""
import inspect

from . import _core, _lru, core
from .core import ArrayImpl, Tracer
from .interpreters.ad import run_at
from .interpreters.batching import BatchTrace
from .tree_util import _flatten_with_path_data, broadcast_prefix, keystr, tree_flatten, tree_unflatten
from ._src.util import wraps as _wraps


def _fun_name(f):
    return getattr(f, "__name__", None) or type(f).__name__


def _normalize_top(axes):
    # As JAX: a list at the top of in_axes is read as a tuple.
    return tuple(axes) if isinstance(axes, list) else axes


def _check_axis_spec(a, what):
    if a is not None and not isinstance(a, int):
        raise TypeError(f"vmap {what} must be an int, None, or a (nested) container with those types "
                        f"as leaves, but got {a!r}.")


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorize ``fun``: the returned function maps ``fun`` over an axis of its arguments, as one
    batched computation (no Python loop).

    Args:
      fun: the function to map; arguments and results are pytrees of arrays.
      in_axes: the mapped axis of each argument: an int (all arguments), None (not mapped), or a
        tuple / pytree prefix with one entry per argument.
      out_axes: where the mapped axis goes in each output (int, None, or a pytree prefix).
      axis_name: a name for the mapped axis, for collectives such as ``lax.psum`` (a string).
      axis_size: the axis size, needed when no argument is mapped.
      spmd_axis_name: raises NotImplementedError (needs sharding support).

    Returns:
      The vectorized function.

    Example:
      >>> import microjax_rs as jax
      >>> import microjax_rs.numpy as jnp
      >>> jax.vmap(jnp.dot)(jnp.ones((3, 2)), jnp.ones((3, 2)))
      Array([2., 2., 2.], dtype=float32)
      >>> jax.vmap(lambda x, y: x + y, in_axes=(0, None))(jnp.arange(3.0), 1.0)
      Array([1., 2., 3.], dtype=float32)
    """
    if spmd_axis_name is not None:
        raise NotImplementedError("vmap's spmd_axis_name needs sharding, which microjax_rs does not have yet")
    if not callable(fun):
        raise TypeError(f"vmap requires a callable, got {fun!r}")
    if axis_name is not None and not isinstance(axis_name, str):
        raise TypeError(f"vmap axis_name must be a string in microjax_rs, got {axis_name!r}")
    in_axes = _normalize_top(in_axes)
    if isinstance(in_axes, tuple):
        pass

    @_wraps(fun)
    def vmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got len(in_axes)={len(in_axes)}, "
                f"len(args)={len(args)}")
        leaves, in_tree, axes = _leaf_axes(in_axes, args, kwargs)
        size, axes, avals = _mapped_size(leaves, axes, axis_size, args, kwargs, fun)
        parent = core.current_trace()
        trace = BatchTrace(_fun_name(fun), parent, size, axis_name)
        mapped = []
        with core.new_trace(trace):
            traced = []
            for x, a, aval in zip(leaves, axes, avals):
                if a is None:
                    traced.append(x)
                    continue
                per_example = aval.shape[:a] + aval.shape[a + 1:]
                traced.append(trace.new_arg(core.ShapedArray(per_example, aval.dtype_name, aval.weak_type)))
                keep = isinstance(x, (ArrayImpl, Tracer)) or core.on_device(x)
                mapped.append(x if keep else core.to_array(x))  # a GpuArray stays on its GPU
            a2, k2 = tree_unflatten(in_tree, traced)
            out = fun(*a2, **k2)
            out_leaves, out_tree = tree_flatten(out)
            try:
                oaxes = broadcast_prefix(_normalize_top(out_axes), out, is_leaf=lambda x: x is None)
            except ValueError as e:
                raise ValueError(f"vmap out_axes specification must be a tree prefix of the "
                                 f"corresponding value, got specification {out_axes!r} for value "
                                 f"tree {out_tree}. {e}") from None
            for a in oaxes:
                _check_axis_spec(a, "out_axes")
            out_dims = []
            for o, a in zip(out_leaves, oaxes):
                if a is None:
                    out_dims.append(None)
                    continue
                nd = core.get_aval(o).ndim + 1
                if not -nd <= a < nd:
                    raise ValueError(f"vmap out_axes {a} is out of bounds for an output of rank {nd - 1}")
                out_dims.append(a % nd)
            atoms = [trace.to_atom(o) for o in out_leaves]
            closed = trace.builder.build(atoms)
        in_dims = [a for a in axes if a is not None] + [None] * len(trace.captures)
        batched = _batched(closed, in_dims, size, out_dims, axis_name)
        outs = run_at(parent, batched, mapped + list(trace.captures))
        return tree_unflatten(out_tree, outs)

    return vmap_f


def _leaf_axes(in_axes, args, kwargs):
    """Leaves of `(args, kwargs)`, their tree, and the in_axes entry of each."""
    leaves, in_tree = tree_flatten((args, kwargs))
    try:
        axes = broadcast_prefix((in_axes, 0), (args, kwargs), is_leaf=lambda x: x is None)
    except ValueError as e:
        raise ValueError(f"vmap in_axes specification must be a tree prefix of the corresponding "
                         f"value, got specification {in_axes!r} for value tree {in_tree}. {e}") from None
    if len(axes) != len(leaves):
        raise ValueError(f"vmap in_axes {in_axes!r} does not match the arguments' structure {in_tree}")
    for a in axes:
        _check_axis_spec(a, "in_axes")
    return leaves, in_tree, axes


def mapped_axis_size(in_axes, args, kwargs, axis_size=None):
    """The size of the mapped axis `vmap(f, in_axes)(*args, **kwargs)` maps."""
    in_axes = _normalize_top(in_axes)
    leaves, _, axes = _leaf_axes(in_axes, args, kwargs)
    return _mapped_size(leaves, axes, axis_size, args, kwargs)[0]


def _leaf_names(args, kwargs, fun):
    """`argument x['a']` (parameter names from `fun`'s signature) or
    `args[0]['a']` for each leaf of `(args, kwargs)`, as JAX names them."""
    try:
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        params = [] if fun is None else [
            n for n, p in inspect.signature(fun).parameters.items() if p.kind in positional]
    except (TypeError, ValueError):
        params = []
    names = []
    for path, _ in _flatten_with_path_data((args, kwargs))[0]:
        top, rest = path[0].idx, keystr(path[2:])
        if top == 0:
            i = path[1].idx
            names.append(f"argument {params[i]}{rest}" if i < len(params) else f"args[{i}]{rest}")
        else:
            names.append(f"argument {path[1].key}{rest}")
    return names


def _mapped_size(leaves, axes, axis_size, args, kwargs, fun=None):
    """`(size, axes, avals)`: the mapped size, the axes made non-negative and the avals of the
    mapped leaves (None for an unmapped leaf in both)."""
    sizes = []
    norm = []
    avals = []
    for x, a in zip(leaves, axes):
        if a is None:
            norm.append(None)
            avals.append(None)
            continue
        aval = core.get_aval(x)
        avals.append(aval)
        if not -aval.ndim <= a < max(aval.ndim, 1) or aval.ndim == 0:
            raise ValueError(
                f"vmap was requested to map its argument along axis {a}, which implies that its rank "
                f"should be at least {(a + 1) if a >= 0 else -a}, but is only {aval.ndim} "
                f"(its shape is {aval.shape})")
        a = a % aval.ndim
        norm.append(a)
        sizes.append((aval.shape[a], a, aval))
    if not sizes:
        if axis_size is None:
            raise ValueError("vmap must have at least one non-None value in in_axes")
        return int(axis_size), norm, avals
    distinct = {s for s, _, _ in sizes}
    if len(distinct) > 1 or (axis_size is not None and distinct != {axis_size}):
        names = [n for n, a in zip(_leaf_names(args, kwargs, fun), axes) if a is not None]
        lines = [f"  * one axis had size {s}: axis {a} of {name} of type {aval.str_short()}"
                 for (s, a, aval), name in zip(sizes, names)]
        if axis_size is not None:
            lines.insert(0, f"  * axis_size was given as {axis_size}")
        raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(lines))
    return sizes[0][0], norm, avals


_BATCH_CACHE_LIMIT = 512
_batch_cache = _lru.LRU("vmap.batch", _BATCH_CACHE_LIMIT)


def _batched(closed, in_dims, size, out_dims, axis_name=None):
    """`batch_jaxpr`, cached by (program, dims, size): nested transforms
    (jacfwd, hessian) batch the same traced program on every call, and the
    same result handle lets `run_at` reuse its Python view."""
    key = (closed, tuple(in_dims), size, tuple(out_dims), axis_name)
    hit = _batch_cache.get(key)
    if hit is None:
        hit = _batch_cache[key] = _core.batch_jaxpr(
            closed, list(in_dims), size, list(out_dims), axis_name)
    return hit
