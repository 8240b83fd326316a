"""Host callbacks: `pure_callback`, `io_callback` and the `debug` callbacks.

Each binds one primitive holding a `_core.HostCallback`; the Rust evaluator
calls the Python function (on the calling thread) with NumPy arrays when the
program runs: eagerly, inside `jit`, `vmap`, `grad` and loop bodies. The
function's exceptions propagate unchanged."""
import numpy as np

from . import _core, core, dtypes
from .tree_util import tree_flatten, tree_unflatten


def _result_avals(result_shape_dtypes):
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for r in leaves:
        if not (hasattr(r, "shape") and hasattr(r, "dtype")):
            raise TypeError(
                f"result_shape_dtypes must be a pytree of objects with shape and dtype "
                f"(e.g. jax.ShapeDtypeStruct), got {r!r}")
        name = dtypes.canonical_name(dtypes.dtype_name(r.dtype))
        avals.append((tuple(int(d) for d in r.shape), dtypes.np_dtype(name)))
    return avals, tree


def _host(callback, in_tree, avals, out_tree, what):
    """The function the evaluator calls: arrays in, checked arrays out."""

    def host(arrays):
        args, kwargs = tree_unflatten(in_tree, [np.asarray(a) for a in arrays])
        out = callback(*args, **kwargs)
        if avals is None:
            return []
        leaves, tree = tree_flatten(out)
        if tree != out_tree:
            raise TypeError(
                f"{what}: the callback returned a value of structure {tree}, but "
                f"result_shape_dtypes has structure {out_tree}")
        result = []
        for k, (x, (_, dt)) in enumerate(zip(leaves, avals)):
            # Shapes are checked by the evaluator against the equation's declared
            # results (which vmap batches); dtypes here, with JAX's message.
            if type(x) is core.ArrayImpl and x.dtype == dt:
                result.append(x)  # already an array: no copy
                continue
            arr = np.asarray(x)
            if arr.dtype != dt:
                raise TypeError(
                    f"{what}: incorrect output dtype for return value {k}: expected {dt}, "
                    f"got {arr.dtype}")
            result.append(core.to_array(arr))
        return result

    return host


def _name(f):
    return getattr(f, "__name__", None) or type(f).__name__


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """Calls a pure Python function on arrays from inside transformed code
    (`jax.pure_callback`). It may be removed if its results are unused, is
    not differentiable (wrap it in `custom_jvp`/`custom_vjp`), and batches
    under `vmap` per `vmap_method` ('sequential', 'expand_dims',
    'broadcast_all')."""
    if vmap_method not in (None, "sequential", "expand_dims", "broadcast_all", "legacy_vectorized"):
        raise ValueError(f"vmap_method must be one of 'sequential', 'expand_dims', 'broadcast_all'; "
                         f"got {vmap_method!r}")
    if vmap_method == "legacy_vectorized":
        vmap_method = "expand_dims"
    flat, in_tree = tree_flatten((args, kwargs))
    avals, out_tree = _result_avals(result_shape_dtypes)
    hc = _core.HostCallback(_host(callback, in_tree, avals, out_tree, "pure_callback"), _name(callback))
    outs = core.Primitive("pure_callback").bind(
        *flat, callback=hc, result_avals=tuple(avals), vmap_method=vmap_method)
    return tree_unflatten(out_tree, outs)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """A callback with side effects (`jax.experimental.io_callback`): never
    removed, run in program order; not differentiable w.r.t. its results."""
    flat, in_tree = tree_flatten((args, kwargs))
    avals, out_tree = _result_avals(result_shape_dtypes)
    hc = _core.HostCallback(_host(callback, in_tree, avals, out_tree, "io_callback"), _name(callback))
    outs = core.Primitive("io_callback").bind(
        *flat, callback=hc, result_avals=tuple(avals), ordered=bool(ordered))
    return tree_unflatten(out_tree, outs)


def debug_callback(callback, *args, ordered=False, **kwargs):
    """`jax.debug.callback`: calls `callback(*args, **kwargs)` with NumPy
    arrays for its side effect, in program order, in every transform."""
    flat, in_tree = tree_flatten((args, kwargs))
    host = _host(callback, in_tree, None, None, "debug.callback")
    host.ordered = bool(ordered)  # the equation's effect (see _src/effects.py)
    hc = _core.HostCallback(host, _name(callback))
    core.Primitive("debug_callback").bind(*flat, callback=hc)
    return None
