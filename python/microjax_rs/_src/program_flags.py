"""Program-level guards and checks read on the Python paths.

* Transfer guards (`jax.transfer_guard*`, `jax_transfer_guard*`): on the
  CPU backend an array already lives in host memory, so, as JAX's CPU
  backend, only host-to-device transfers are guarded: turning host data (a
  NumPy array, a Python scalar, a list) into an Array at top level —
  `jnp.asarray(np_x)`, a NumPy array or Python scalar passed to a jitted
  function, `x + 1` or `x + np_y` eagerly. Those are *implicit* transfers;
  `jax.device_put` is *explicit*. Levels: "allow" (and None), "log" (log
  implicit ones), "disallow" (raise on implicit ones), "log_explicit" (log
  both) and "disallow_explicit" (raise on both). A refused transfer raises
  `jax.errors.JaxRuntimeError("INVALID_ARGUMENT: Disallowed host-to-device
  transfer: aval=..., dst_sharding=...")`, as JAX; a logged one is logged at
  WARNING (logger "jax._src.transfer_guard"). Constants a jitted function
  closes over are part of its program, not transfers (as JAX). Device-to-host
  (`np.asarray(x)`, `float(x)`, printing) and device-to-device transfers
  never raise on a CPU, as in JAX.
* `jax_no_tracing`: a jit trace-cache miss (and `make_jaxpr`) raises
  RuntimeError("re-tracing function f at file:line for `jit`, but
  'no_tracing' is set").
* `jax_no_execution`: running a jitted function or an eager primitive
  raises RuntimeError("JAX tried to execute function jit(f), but the
  no_execution config option is set").
* `jax_explain_cache_misses`: each jit trace-cache miss is logged (WARNING,
  logger "jax._src.interpreters.partial_eval") with why: a function never
  seen, or, against the closest previous key, the input types, pytree,
  static arguments or context that differ (JAX's wording).
* `jax_enable_checks`: every program jit traces is checked (`check_jaxpr`:
  each variable bound once and defined before use, constants matching their
  variables) and a malformed one raises `jax.errors.JaxprTypeError`.
"""
import logging
import threading

from ..config import config
from ..errors import JaxprTypeError, JaxRuntimeError

_transfer_logger = logging.getLogger("jax._src.transfer_guard")
_explain_logger = logging.getLogger("jax._src.interpreters.partial_eval")

_local = threading.local()


# ----------------------------------------------------------------------------
# Transfer guards


class explicit_transfer:
    """Conversions inside are explicit transfers (`device_put`)."""

    def __enter__(self):
        _local.explicit = getattr(_local, "explicit", 0) + 1

    def __exit__(self, *exc):
        _local.explicit -= 1
        return False


def _describe(x, dtype, weak_type):
    from .. import core
    from ..interpreters.partial_eval import _leaf_aval

    try:
        aval = _leaf_aval(x)
        if dtype is not None:
            aval = core.ShapedArray(tuple(aval.shape), core.dtypes.canonical_name(
                core.dtypes.dtype_name(dtype)), bool(weak_type))
    except Exception:  # an object NumPy cannot type: named by its Python type
        return f"value of type {type(x).__name__}"
    return (f"aval={aval!r}, dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), "
            f"memory_kind=device)")


def check_host_to_device(x, dtype=None, weak_type=None):
    """Called (with the guard level set) before host data `x` becomes an
    Array at top level; logs or raises as the level says."""
    from .. import core

    level = config._values["jax_transfer_guard_host_to_device"]
    if level in (None, "allow") or core._state.stack:
        return
    explicit = getattr(_local, "explicit", 0) > 0
    if explicit and level in ("log", "disallow"):
        return
    what = _describe(x, dtype, weak_type)
    if level in ("disallow", "disallow_explicit"):
        raise JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed host-to-device transfer: {what}")
    _transfer_logger.warning("host-to-device transfer: %s", what)


# ----------------------------------------------------------------------------
# no_tracing / no_execution


def _function_text(fun):
    code = getattr(fun, "__code__", None)
    name = getattr(fun, "__name__", None)
    if code is None or name is None:
        return repr(fun)
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def check_tracing(fun):
    if config._values["jax_no_tracing"]:
        raise RuntimeError(f"re-tracing function {_function_text(fun)} for `jit`, but 'no_tracing' is set")


def check_execution(name):
    if config._values["jax_no_execution"]:
        raise RuntimeError(f"JAX tried to execute function jit({name}), but the no_execution config "
                           f"option is set")


# ----------------------------------------------------------------------------
# explain_cache_misses


def _call_site():
    from .. import core

    site = core.source_info()
    return site or "<unknown>"


def _arg_names(fun, in_tree, n_leaves):
    """A name per flattened argument leaf (the parameter name when the leaf
    is a whole positional argument, else its path)."""
    from ..tree_util import tree_flatten_with_path, tree_unflatten, keystr

    try:
        import inspect

        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    paths, _ = tree_flatten_with_path(tree_unflatten(in_tree, list(range(n_leaves))))
    names = []
    for path, _leaf in paths:
        positional = getattr(path[0], "idx", None) == 0
        if positional and getattr(path[1], "idx", len(params)) < len(params):
            names.append(params[path[1].idx] + keystr(path[2:]))
        elif not positional and hasattr(path[1], "key"):
            names.append(str(path[1].key) + keystr(path[2:]))
        else:
            names.append(("args" if positional else "kwargs") + keystr(path[1:]))
    return names


def _short(aval):
    text = aval.str_short()
    return text + "{weak_type=True}" if aval.weak_type and "weak_type" not in text else text


def _type_differences(fun, key, prev):
    names = _arg_names(fun, key[0], len(key[1]))
    lines = []
    for name, now, before in zip(names, key[1], prev[1]):
        if now == before:
            continue
        a, b = now.str_short(), before.str_short()
        if a == b and now.weak_type != before.weak_type:
            a += f"{{weak_type={now.weak_type}}}"
            b += f"{{weak_type={before.weak_type}}}"
        lines.append(f"  * at {name}, now {a} and before {b}")
    return lines


def _node_text(data, n_children):
    if data is None:
        return "pytree leaf"
    kind = data[0]
    if kind in (tuple, list):
        return f"{kind.__name__} of length {n_children}"
    return f"{kind} with {n_children} child"  # (JAX's wording, whatever the count)


def _tree_diffs(now, before, path, out):
    """JAX's wording of where two pytree structures first differ."""
    a, b = now.node_data(), before.node_data()
    ca, cb = now.children(), before.children()
    where = f"  * at input path {path or '()'}, now "
    if (a is None) != (b is None) or (a is not None and a[0] is not b[0]):
        ta = "pytree leaf" if a is None else str(a[0])
        tb = "pytree leaf" if b is None else str(b[0])
        out.append(f"{where}{ta} and before {tb}, so their Python types differ")
    elif a is None:
        return
    elif len(ca) != len(cb):
        text = f"{where}{_node_text(a, len(ca))} and before {_node_text(b, len(cb))}, so "
        if a[0] is dict:
            keys = set(a[1]) ^ set(b[1])
            out.append(text + f"the numbers of children do not match, with the symmetric difference of "
                              f"key sets: {keys}")
        else:
            out.append(text + "the lengths do not match")
    elif a[1] != b[1]:
        out.append(f"{where}{a[0]} with pytree metadata {a[1]} and before {b[0]} with pytree metadata "
                   f"{b[1]}, so the pytree node metadata does not match")
    else:
        for i, (x, y) in enumerate(zip(ca, cb)):
            _tree_diffs(x, y, f"{path}[{i}]", out)


def _tree_differences(key, prev):
    out = []
    _tree_diffs(key[0], prev[0], "", out)
    return out or [f"  * now {key[0]} and before {prev[0]}"]


def _score(key, prev):
    """How far `prev` is from `key` (the closest previous key is explained)."""
    return sum(a != b for a, b in zip(key, prev)) * 1000 + (
        sum(x != y for x, y in zip(key[1], prev[1])) if key[0] == prev[0] else 500)


def explain_miss(fun, name, key, previous):
    """Logs why the trace-cache `key` of `fun` missed, given the keys it
    has cached (`previous`). Key layout: (pytree, avals, static arguments,
    config epoch, named axes, context)."""
    if not config._values["jax_explain_cache_misses"]:
        return
    code = getattr(fun, "__code__", None)
    where = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "<unknown>"
    head = f"TRACING CACHE MISS at {_call_site()}:"
    if not previous:
        _explain_logger.warning("%s\n  never seen function:\n    %s id=%d defined at %s",
                                head, name, id(fun), where)
        return
    prev = min(previous, key=lambda p: _score(key, p))
    lines = [head, f"  for {name} defined at {where}",
             "  all previously seen cache keys differ. For the closest previous key:"]
    if key[0] != prev[0]:
        lines += ["  different input pytree:"] + _tree_differences(key, prev)
    elif key[1] != prev[1]:
        lines += ["  different input types:"] + _type_differences(fun, key, prev)
    if key[2] != prev[2]:
        lines += ["  different static arguments:", f"  * now {key[2]} and before {prev[2]}"]
    if key[3] != prev[3]:
        lines += ["  different configuration: a config option or user context changed since "
                  "(the config epoch)"]
    if key[4:] != prev[4:]:
        lines += ["  different tracing context (named axes or staged checks):",
                  f"  * now {key[4:]} and before {prev[4:]}"]
    _explain_logger.warning("%s", "\n".join(lines))


# ----------------------------------------------------------------------------
# enable_checks


def check_jaxpr(closed):
    """Type-checks a traced program: raises JaxprTypeError unless every
    variable is bound once, before it is read, and the constants match their
    variables' avals."""
    jaxpr = closed.jaxpr
    consts = closed.consts
    if len(consts) != len(jaxpr.constvars):
        raise JaxprTypeError(f"{len(consts)} constants for {len(jaxpr.constvars)} constant variables")
    for v, c in zip(jaxpr.constvars, consts):
        shape, dt = tuple(getattr(c, "shape", ())), getattr(c, "dtype", None)
        if shape != tuple(v.aval.shape) or (dt is not None and str(dt) != v.aval.dtype_name):
            raise JaxprTypeError(f"Constant {v} has aval {v.aval.str_short()} but its value is "
                                 f"{dt}{list(shape)}")
    bound = set()

    def bind(v):
        if v in bound:
            raise JaxprTypeError(f"Variable '{v}' already bound")
        bound.add(v)

    def read(a, where):
        from ..core import Literal

        if type(a) is not Literal and a not in bound:
            raise JaxprTypeError(f"Variable '{a}' not defined{where}")

    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        bind(v)
    for eqn in jaxpr.eqns:
        for a in eqn.invars:
            read(a, f" in equation {eqn}")
        for v in eqn.outvars:
            bind(v)
    for a in jaxpr.outvars:
        read(a, " in the outputs")


# ----------------------------------------------------------------------------
# array_garbage_collection_guard

_gc_logger = logging.getLogger("jax._src.array")

_GC_MESSAGE = ("`jax.Array` was deleted by the Python garbage collector instead of reference counting. "
               "Break the reference cycle that delays the deletion of this `jax.Array` to avoid hogging "
               "memory. Traceback: \n")


class _CollectionWatch:
    """With `jax_array_garbage_collection_guard` at "log" or "fatal": at the
    start of each cycle collection, the arrays held by the objects of the
    generations collected get a weak reference; one that dies before the
    collection ends was freed by the collector (it was held by a reference
    cycle), which is reported as JAX does ("log": logged at ERROR, logger
    "jax._src.array"; "fatal": printed, then the process aborts). Arrays
    are not themselves tracked by the collector, so they are found through
    their holders, as `jax.live_arrays` finds them."""

    def __init__(self):
        self.collecting = False
        self.refs = []

    def __call__(self, phase, info):
        if phase == "start":
            self.start(info.get("generation", 2))
        else:
            self.collecting = False
            self.refs = []

    def start(self, generation):
        import gc

        from .. import _core

        self.collecting = True
        seen = set()
        refs = []
        for gen in range(generation + 1):
            for holder in gc.get_objects(gen):
                for o in gc.get_referents(holder):
                    if type(o) is _core.ArrayImpl and id(o) not in seen:
                        seen.add(id(o))
                        refs.append(_weak_array(o, self))
        self.refs = refs

    def freed(self, traceback):
        if not self.collecting:
            return
        level = config._values["jax_array_garbage_collection_guard"]
        message = _GC_MESSAGE + (str(traceback) if traceback is not None else "(not recorded)")
        if level == "fatal":
            import os
            import sys

            sys.stderr.write(message + "\n")
            sys.stderr.flush()
            os.abort()
        _gc_logger.error("%s", message)


def _weak_array(x, watch):
    import weakref

    from .traceback_util import traceback_of

    tb = traceback_of(x)
    return weakref.ref(x, lambda _ref: watch.freed(tb))


_watch = None


def set_garbage_collection_guard(level):
    """Starts or stops watching collections for `level` (the option's value)."""
    import gc

    global _watch
    if level in ("log", "fatal"):
        if _watch is None:
            _watch = _CollectionWatch()
            gc.callbacks.append(_watch)
    elif _watch is not None:
        if _watch in gc.callbacks:
            gc.callbacks.remove(_watch)
        _watch = None
