"""User-facing transformations: make_jaxpr, jit, eval_shape and friends."""
import contextlib
import functools
import inspect
import logging
import time
import weakref

import numpy as np

from . import _core, _devices, _lru, _trace_cache, core, dtypes
from ._src import key_reuse as _key_reuse, traceback_util as _traceback_util, profiling as _profiling, program_flags as _program_flags
from .core import ArrayImpl, ClosedJaxpr, Tracer
from .config import config
from .tree_util import tree_flatten, tree_unflatten
from .interpreters.batching import axis_env_key
from .interpreters.partial_eval import (  # noqa: F401  (ShapeDtypeStruct is jax.ShapeDtypeStruct)
    ShapeDtypeStruct, _disable, _fun_name, _leaf_aval, trace_to_jaxpr,
)
from ._src.util import wraps as _wraps


def _canonical_leaf(x):
    """An array argument as `jit` sees it: a 64-bit array made while x64 was
    on becomes its 32-bit counterpart once x64 is off (as JAX canonicalizes
    jit's arguments); everything else unchanged. Called only with x64 off."""
    if type(x) is ArrayImpl:
        name = x.dtype_name
        small = dtypes.canonical_name(name)
        if small != name:
            from . import lax

            return lax.convert_element_type(x, small)
    return x


def _check_leaf(x):
    if isinstance(x, (ArrayImpl, Tracer, ShapeDtypeStruct, np.ndarray, np.generic, bool, int, float, complex,
                      _devices.GpuArray)):
        return
    raise TypeError(
        f"Argument {x!r} of type {type(x)} is not a valid JAX type: arguments of "
        f"transformed functions must be arrays, scalars or pytrees of them "
        f"(mark other arguments static with static_argnums/static_argnames)")


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    """Returns a function that traces `fun` and returns its ClosedJaxpr."""
    static_argnums = _as_tuple(static_argnums)

    @_wraps(fun)
    def make_jaxpr_f(*args, **kwargs):
        dyn_args, statics = _split_static(args, static_argnums)
        f = _bind_static(fun, statics, len(args)) if statics else fun
        leaves, in_tree = tree_flatten((tuple(dyn_args), kwargs))
        for x in leaves:
            _check_leaf(x)
        _program_flags.check_tracing(fun)
        closed, out_tree, captures = trace_to_jaxpr(f, leaves, in_tree, _fun_name(fun))
        cj = ClosedJaxpr(closed)
        if captures:
            # As JAX: values closed over from an enclosing trace are constants
            # of the jaxpr (their tracers in `consts`), not inputs.
            j, n = cj.jaxpr, len(leaves)
            j.constvars = j.constvars + j.invars[n:]
            j.invars = j.invars[:n]
            cj._consts = cj.consts + list(captures)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in cj.out_avals]
            return cj, tree_unflatten(out_tree, shapes)
        return cj

    make_jaxpr_f.__name__ = f"make_jaxpr({_fun_name(fun)})"
    return make_jaxpr_f


def eval_shape(fun, *args, **kwargs):
    """Output shapes/dtypes of `fun(*args, **kwargs)` without computing anything."""
    leaves, in_tree = tree_flatten((args, kwargs))
    for x in leaves:
        _check_leaf(x)
    closed, out_tree, _ = trace_to_jaxpr(fun, leaves, in_tree)
    out = [ShapeDtypeStruct(a.shape, a.dtype_name, a.weak_type) for a in closed.out_avals()]
    return tree_unflatten(out_tree, out)


def _link_nums_and_names(nums, names, positional):
    """Adds to the sets `nums` and `names` the position of every named
    positional parameter and the name of every numbered one."""
    for i in list(nums):
        if 0 <= i < len(positional):
            names.add(positional[i])
    for nm in list(names):
        if nm in positional:
            nums.add(positional.index(nm))


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    return tuple(x)


def _split_static(args, static_argnums):
    n = len(args)
    statics = {}
    for i in static_argnums:
        j = i + n if i < 0 else i
        if 0 <= j < n:
            statics[j] = args[j]
    dyn = [a for i, a in enumerate(args) if i not in statics]
    return dyn, statics


def _bind_static(fun, statics, nargs):
    """`fun` of the dynamic positional arguments only."""

    def f(*dyn, **kwargs):
        it = iter(dyn)
        full = [statics[i] if i in statics else next(it) for i in range(nargs)]
        return fun(*full, **kwargs)

    return f


# -- jit ----------------------------------------------------------------------

class disable_jit:
    """Context manager (and decorator-free flag) that runs jitted functions eagerly."""

    def __init__(self, disable=True):
        self.disable = disable

    def __enter__(self):
        self._prev = _disable.depth
        if self.disable:
            _disable.depth += 1
        return self

    def __exit__(self, *exc):
        _disable.depth = self._prev
        return False


class _Jitted:
    """Python side of a jitted function: static-arg handling, tracing, the
    trace cache lookups (`_trace_cache.py`) and binding `pjit` under an
    enclosing trace. The Rust `JitFunction` in front of it serves repeated
    calls with array arguments from the same cache."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, donate_argnames=None):
        self.fun = fun
        self.name = _fun_name(fun)
        argnums = set(_as_tuple(static_argnums))
        argnames = set(_as_tuple(static_argnames))
        self.donate_argnums = _as_tuple(donate_argnums)
        dnums, dnames = set(self.donate_argnums), set(_as_tuple(donate_argnames))
        # The signature is read only when an option names arguments (else on
        # first use of `signature`): most jitted functions never need it.
        sig = self.signature if (argnums or argnames or dnums or dnames) else None
        params = list(sig.parameters.values()) if sig is not None else []
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if sig is not None and not any(p.kind == p.VAR_POSITIONAL for p in params):
            n = len(positional)
            if any(not -n <= i < n for i in argnums):
                raise ValueError(f"Jitted function has static_argnums={tuple(sorted(argnums))}, but only "
                                 f"accepts {n} positional arguments.")
        # As JAX: static_argnums imply their names and vice versa.
        _link_nums_and_names(argnums, argnames, positional)
        self.static_argnums = tuple(sorted(argnums))
        self.static_argnames = frozenset(argnames)
        # As JAX: donated names imply their positions and vice versa.
        _link_nums_and_names(dnums, dnames, positional)
        self._donated = (frozenset(dnums), frozenset(dnames))
        # Trace cache owner: per (weakly held) function and these options;
        # None until jit() keys it on the JitFunction when `fun` cannot be
        # referenced weakly or hashed.
        self._options = (self.static_argnums, self.static_argnames, self._donated)
        self.owner = _trace_cache.owner_of(fun, self._options)
        self._weak_key = self.owner is not None
        self.rust = None  # jit(): a weak reference to the JitFunction (no cycle)
        # jax_debug_key_reuse: trace-cache key -> positions of the key
        # arguments the traced function consumes (_src/key_reuse.py).
        # (An LRU made on first use: most jitted functions never need it.)
        self._key_signatures = None
        self._last_key = None

    @functools.cached_property
    def signature(self):
        """`inspect.signature` of the wrapped function, or None where it has none."""
        try:
            return inspect.signature(self.fun)
        except (TypeError, ValueError):
            return None

    def _lookup(self, key):
        """`(owner, hit)`: the trace cache owner token and the entry under
        `key` (None on a miss). The token a wrapper was made with may be an
        equal function's (a bound method taken again) that died since, with
        its entries: so on a miss a weakly keyed wrapper looks its function
        up again and moves itself and its fast path to the token found."""
        hit = _trace_cache.lookup(self.owner, key)
        if hit is None and self._weak_key:
            owner = _trace_cache.owner_of(self.fun, self._options)
            if owner != self.owner:
                self.owner = owner
                rust = self.rust() if self.rust is not None else None
                if rust is not None:
                    rust._set_owner(owner)
                hit = _trace_cache.lookup(owner, key)
        return self.owner, hit

    def _static_key(self, statics, kw_statics):
        key = (tuple(sorted(statics.items())), tuple(sorted(kw_statics.items())))
        try:
            hash(key)
        except TypeError:
            bad = [v for v in list(statics.values()) + list(kw_statics.values()) if not _hashable(v)]
            raise ValueError(
                f"Non-hashable static arguments are not supported. An error occurred while "
                f"trying to hash an object of type {type(bad[0]) if bad else '?'}, {bad[0] if bad else ''!r}. "
                f"The error was: unhashable type") from None
        return key

    def _traced(self, args, kwargs):
        """Splits a call into dynamic and static arguments and returns the
        trace for it from the trace cache (tracing on a miss):
        `(closed, out_tree, captures, entry_id, leaves, in_tree, dyn, dyn_kwargs)`."""
        dyn, statics = _split_static(args, self.static_argnums)
        kw_statics = {k: v for k, v in kwargs.items() if k in self.static_argnames}
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        skey = self._static_key(statics, kw_statics)
        leaves, in_tree = tree_flatten((tuple(dyn), dyn_kwargs))
        for x in leaves:
            _check_leaf(x)
        if not _core.get_x64():
            leaves = [_canonical_leaf(x) for x in leaves]
        avals = tuple(_leaf_aval(x) for x in leaves)
        key = (in_tree, avals, skey, _core.config_epoch(), axis_env_key(), _trace_cache.context_key())
        owner, hit = self._lookup(key)
        if hit is None:
            _program_flags.check_tracing(self.fun)
            _program_flags.explain_miss(self.fun, self.name, key, _trace_cache.keys_of(owner))
            f = self.fun
            if statics:
                f = _bind_static(f, statics, len(args))
            if kw_statics:
                f = functools.partial(f, **kw_statics)
            signature = None
            if config.read("jax_debug_key_reuse"):  # which key arguments the function consumes
                signature = []
                f = _key_reuse.recording(f, signature)
            t0 = time.perf_counter()
            p0 = _profiling._now() if _profiling.ACTIVE else 0
            closed, out_tree, captures = trace_to_jaxpr(f, leaves, in_tree, self.name)
            p1 = _profiling._now() if p0 else 0
            if signature:
                if self._key_signatures is None:
                    self._key_signatures = _lru.LRU("api.key_signatures", _trace_cache.DEFAULT_SIZE)
                self._key_signatures[key] = tuple(signature)
            if config.read("jax_enable_checks"):
                _program_flags.check_jaxpr(ClosedJaxpr(closed))
            if not (captures or core.current_trace() is not None
                    or any(isinstance(x, Tracer) for x in leaves)):
                # A new program to run at top level: the backend step (which
                # `chex.restrict_backends` wraps) comes before it is cached.
                _compile_for_backend(_runnable(closed), leaves, self.name, avals, t0)
            if p0:
                _record_compile(self.name, p0, p1, _profiling._now(), avals)
                _profiling.fresh_trace.add(id(closed))
            # Traces closing over an enclosing trace's values are not kept.
            entry_id = None if captures else _trace_cache.add(owner, key, (closed, out_tree))
        else:
            entry_id, (closed, out_tree) = hit
            captures = []
        self._last_key = key
        return closed, out_tree, captures, entry_id, leaves, in_tree, dyn, dyn_kwargs

    def __call__(self, *args, **kwargs):
        if _profiling.ACTIVE:  # a jax.profiler trace records the call
            return _profiling.timed(f"PjitFunction({self.name})", "jit", self._call, args, kwargs)
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        if _disable.depth or config.jax_disable_jit:
            return self.fun(*args, **kwargs)
        closed, out_tree, captures, entry_id, leaves, _, dyn, dyn_kwargs = self._traced(args, kwargs)
        statics = len(dyn) != len(args)
        if self._key_signatures:
            _key_reuse.consume_arguments(dyn, dyn_kwargs, self._key_signatures.get(self._last_key))
        if core.current_trace() is not None or captures or any(isinstance(x, Tracer) for x in leaves):
            outs = core.Primitive("pjit").bind(*leaves, *captures, jaxpr=ClosedJaxpr(closed), name=self.name)
            return tree_unflatten(out_tree, outs)
        closed = _runnable(closed)
        if config.debug_checks:
            _program_flags.check_execution(self.name)
        device = _devices.gpu_target(leaves)
        if device is not None:  # the default device, or the arguments', is a GPU
            vals = leaves
            p0 = _profiling._now() if _profiling.ACTIVE else 0
            outs = _devices.run_on_gpu(closed, leaves, device)
        else:
            vals = [x if type(x) is ArrayImpl else core.to_array(x) for x in leaves]
            p0 = _profiling._now() if _profiling.ACTIVE else 0
            outs = closed.run(vals)
        if p0:
            _profiling.record(f"execute({self.name})", p0, _profiling._now(), None, "jit")
        if config.debug_checks:
            from ._src import nan_checks

            nan_checks.check_program(closed, vals, outs, f"jit({self.name})")
        _traceback_util.record_creation(outs, depth=3)  # from the caller of jit(f)(...)
        if device is not None:
            if self._donated[0] or self._donated[1]:
                _donate(self._donated, args, kwargs, outs)
            return tree_unflatten(out_tree, outs)
        if self._donated[0] or self._donated[1]:
            # Donating calls stay on this path (the Rust fast path does not
            # donate), so every call marks its donated arrays.
            _donate(self._donated, args, kwargs, outs)
        elif (entry_id is not None and self.rust is not None and not kwargs and not statics
                and all(type(a) is ArrayImpl for a in args) and len(leaves) == len(args)
                and all(x is a for x, a in zip(leaves, args))):
            rust = self.rust()
            if rust is not None:
                p0 = _profiling._now() if _profiling.ACTIVE else 0
                if rust._cache_insert(list(args), closed, out_tree, entry_id) and p0 and \
                        id(closed) in _profiling.fresh_trace:  # the executor's plan is built here
                    _profiling.fresh_trace.discard(id(closed))
                    _profiling.record(f"build_plan({self.name})", p0, _profiling._now(), None, "compile")
        return tree_unflatten(out_tree, outs)

    def trace_call(self, args, kwargs):
        """The trace of a call for the AOT stages (`stages.specialize`):
        `(closed, out_tree, leaves, in_tree, dyn, dyn_kwargs, donated)`, with
        one donated flag per argument leaf."""
        closed, out_tree, captures, _, leaves, in_tree, dyn, dyn_kwargs = self._traced(args, kwargs)
        if captures:
            raise TypeError(f"{self.name}: a function traced for ahead-of-time compilation cannot "
                            f"close over values of an enclosing transformation")
        nums, names = self._donated
        dyn_nums = [i for i in range(len(args)) if i not in self.static_argnums]
        donated = []
        for pos, a in zip(dyn_nums, dyn):
            donated += [pos in nums] * len(tree_flatten(a)[0])
        for k, v in dyn_kwargs.items():
            donated += [k in names] * len(tree_flatten(v)[0])
        return closed, out_tree, leaves, in_tree, dyn, dyn_kwargs, donated

    def trace(self, *args, **kwargs):
        """`jit(f).trace(*args)`: a `jax.stages.Traced`."""
        from . import stages

        return stages.Traced(stages.specialize(self, args, kwargs))

    def lower(self, *args, **kwargs):
        """`jit(f).lower(*args)`: a `jax.stages.Lowered`."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        """`jit(f).eval_shape(*args)`: the outputs' `ShapeDtypeStruct`s."""
        return self.trace(*args, **kwargs).out_info


def _record_compile(name, t0, t1, t2, avals):
    """Profiler events of one compile: tracing `[t0, t1)`, lowering for the
    backend `[t1, t2)`, and both together."""
    shapes = {"shapes": ", ".join(a.str_short() for a in avals)}
    _profiling.record(f"jit_compile({name})", t0, t2, shapes, "compile")
    _profiling.record(f"trace_to_jaxpr({name})", t0, t1, None, "compile")
    _profiling.record(f"lower({name})", t1, t2, None, "compile")


_RUNNABLE = _lru.LRU("api.runnable", 4096)  # id(traced program) -> (traced program, the program run for it)


def _runnable(closed):
    """The program a top-level jitted call runs for the traced `closed`:
    `closed`, or (where it holds calls of symbolic-zeros custom rules,
    which stay in the trace for later differentiation) `closed` with those
    calls inlined, so it runs natively. Memoized."""
    hit = _RUNNABLE.get(id(closed))
    if hit is not None and hit[0] is closed:
        return hit[1]
    run = closed
    if _core.holds_dynamic(closed):
        from .custom_derivatives import inline_deferred_calls
        run = inline_deferred_calls(closed)
    _RUNNABLE[id(closed)] = (closed, run)
    return run


def _compile_for_backend(closed, leaves, name, avals, t0):
    from ._src import compiler, xla_bridge
    device = _devices.gpu_target(leaves)
    log = config.jax_log_compiles
    if log:
        logger = logging.getLogger("jax._src.dispatch")
        logger.warning("Compiling %s with global shapes and types %s.", name, list(avals))
    compiler.backend_compile_and_load(xla_bridge.Backend("gpu" if device is not None else "cpu"), closed)
    if log:
        logger.warning("Finished microjax_rs compilation of jit(%s) in %.9f sec", name, time.perf_counter() - t0)


_DONATION_FAQ = "See an explanation at https://jax.readthedocs.io/en/latest/faq.html#buffer-donation."


def _donate(donated, args, kwargs, outs):
    """Marks the donated arrays of a call deleted, as JAX does: each donated
    `Array` leaf is matched, in order, with a not yet matched output of the
    same shape and dtype (the output that may take over its buffer) and
    deleted (a `GpuArray` frees its device memory); donated arrays no output can take stay alive and are named in
    JAX's "Some donated buffers were not usable" warning. Leaves that are
    not arrays (Python scalars, NumPy arrays) are ignored, as in JAX."""
    import warnings

    from .tree_util import tree_leaves

    nums, names = donated
    leaves = [x for i, a in enumerate(args) if i in nums for x in tree_leaves(a)]
    leaves += [x for k, v in kwargs.items() if k in names for x in tree_leaves(v)]
    arrays = (ArrayImpl, _devices.GpuArray)
    free = [(tuple(o.shape), o.dtype_name) for o in outs if type(o) in arrays]
    unusable, seen = [], set()
    for x in leaves:
        if type(x) not in arrays or id(x) in seen or x.is_deleted():
            continue
        seen.add(id(x))
        sig = (tuple(x.shape), x.dtype_name)
        if sig in free:
            free.remove(sig)
            x.delete()
        else:
            unusable.append(f"ShapedArray({x.dtype_name}[{','.join(map(str, x.shape))}])")
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\n{_DONATION_FAQ}",
                      UserWarning, stacklevel=3)


def _hashable(v):
    try:
        hash(v)
        return True
    except TypeError:
        return False


def clear_caches():
    """Clears every cache of traced and compiled programs (`jax.clear_caches`):
    `jit`'s trace cache — the traces, and the compiled programs its Rust fast
    path runs — the structural compile cache of the un-jitted transforms,
    the GPU plan cache and the transformed-program caches. The next call of
    a jitted function traces it again, so a changed global it reads is seen
    from then on."""
    _trace_cache.clear()
    _lru.clear_all()
    _core.compile_cache_clear()
    _core.value_and_grad_cache_clear()
    gpu_plans_clear = getattr(_core, "gpu_plan_cache_clear", None)  # a binding built without CUDA lacks it
    if gpu_plans_clear is not None:
        gpu_plans_clear()


# The jitted function's type is named as JAX's (`PjitFunction`): tools such
# as chex's `is_traceable` recognise jitted functions by the type's name.
_core.JitFunction.__name__ = _core.JitFunction.__qualname__ = "PjitFunction"


def _reduce_jitted(wrapped):
    """`JitFunction.__reduce__`: the global name when the module attribute of
    the function's qualified name is this very object (a decorated
    module-level function), else a rebuild from the wrapped function."""
    import sys

    impl = wrapped._impl
    name = getattr(impl.fun, "__qualname__", None)
    obj = sys.modules.get(getattr(impl.fun, "__module__", None) or "")
    for part in (name or "<lambda>").split("."):
        obj = getattr(obj, part, None)
    if obj is wrapped:
        return name
    return (_rebuild_jit, (impl.fun, impl.static_argnums, tuple(sorted(impl.static_argnames)),
                           impl.donate_argnums))


def _rebuild_jit(fun, static_argnums, static_argnames, donate_argnums):
    return jit(fun, static_argnums=static_argnums or None, static_argnames=static_argnames or None,
               donate_argnums=donate_argnums or None)


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, keep_unused=False, device=None, backend=None, inline=False,
        in_shardings=None, out_shardings=None, abstracted_axes=None):
    """Compile ``fun``: it is traced once per input signature and later calls run the compiled program.

    Args:
      fun: the function to compile; its arguments and results are pytrees of arrays. Without
        ``fun`` (``jit(static_argnums=...)``) a decorator is returned.
      static_argnums, static_argnames: arguments passed as Python values rather than traced
        (they must be hashable; each new value traces again). Use them for shapes, flags, sizes.
      donate_argnums, donate_argnames: arguments whose buffers the call may reuse (part of the
        cache key; accepted).
      keep_unused, device, backend, inline, in_shardings, out_shardings, abstracted_axes:
        accepted for JAX compatibility.

    Returns:
      The compiled function, with the signature of ``fun``. Under an enclosing trace it binds
      the ``pjit`` primitive; repeated calls with array arguments are dispatched in Rust.

    Tracing runs the Python body once with abstract values, so Python control flow may depend
    on shapes and static arguments but not on traced values (use ``lax.cond`` and friends).

    Traces are kept in one process-wide cache, as JAX's, keyed on:

    * ``fun`` itself, held weakly: a fresh ``jit(fun)`` reuses the traces of earlier ones,
      and they are dropped when ``fun`` is garbage-collected. A global ``fun`` reads is read
      when it is traced; a changed value is not seen until ``clear_caches()`` (JAX's "pure
      functions" caveat). Equal functions share a key (``obj.method`` taken twice); a
      ``functools.partial`` is keyed on the partial object; a callable that cannot be weakly
      referenced or hashed is keyed on the returned object instead;
    * the options ``static_argnums``/``static_argnames``/``donate_argnums``/``donate_argnames``;
    * the call: input pytree structure, shapes, dtypes and weak types of the leaves, static
      argument values, config and active named axes.

    The cache holds at most 4096 traces, all functions together
    (``config.update("microjax_jit_cache_size", n)``), evicting the least recently used
    first; ``clear_caches()`` empties it. Traces that close over values of an enclosing
    transformation are not kept. With x64 off, 64-bit arguments are converted to 32 bits.

    Example:
      >>> import microjax_rs as jax
      >>> import microjax_rs.numpy as jnp
      >>> f = jax.jit(lambda x, y: x * y + 1.0)
      >>> f(jnp.arange(3.0), 2.0)
      Array([1., 3., 5.], dtype=float32)
      >>> from functools import partial
      >>> @partial(jax.jit, static_argnums=1)
      ... def power(x, n):
      ...     return x ** n
      >>> power(jnp.array([1.0, 2.0]), 3)
      Array([1., 8.], dtype=float32)
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    impl = _Jitted(fun, static_argnums, static_argnames, donate_argnums, donate_argnames)
    wrapped = _core.JitFunction(impl, impl.owner)
    impl.rust = weakref.ref(wrapped)
    if impl.owner is None:  # keyed on the jit object: its traces go with it
        impl.owner = wrapped._owner
        weakref.finalize(wrapped, _trace_cache.drop_owner, impl.owner).atexit = False
    try:
        functools.update_wrapper(wrapped, fun)
    except (AttributeError, TypeError):
        pass
    wrapped.trace = impl.trace
    wrapped.lower = impl.lower
    wrapped.eval_shape = impl.eval_shape
    wrapped._impl = impl  # (`JitFunction.__signature__` reads `impl.signature` on first use)
    return wrapped


from ._devices import (  # noqa: E402  (device API; see _devices.py)
    CpuDevice,
    CudaDevice,
    Device,
    GpuArray,
    _num_cpu_devices,
    block_until_ready,
    default_backend,
    default_device,
    device_count,
    device_get,
    device_put,
    devices,
    local_device_count,
    local_devices,
)


def process_index(backend=None):
    """Index of this process in a multi-process run (`jax.distributed.initialize`); 0 in a
    single-process one."""
    from ._src import distributed
    return distributed.process_index()


def process_count(backend=None):
    """Number of processes in the run (`jax.distributed.initialize` under an MPI launcher);
    1 in a single-process one."""
    from ._src import distributed
    return distributed.process_count()


def process_indices(backend=None):
    """The indices of every process of the run: ``range(process_count())``."""
    return list(range(process_count(backend)))


_CpuDevice = CpuDevice


@contextlib.contextmanager
def named_scope(name):
    """`jax.named_scope`: names the operations staged inside it. Each staged
    equation records the names entered since its jaxpr's trace began
    (`outer/inner`), which `pretty_print(name_stack=True)` of the jaxpr
    shows (` # [outer/inner]`, as JAX) and `JaxprEqn.name_stack` holds;
    `current_name_stack()` is the whole stack."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    names = core._state.names
    names.append(name)
    try:
        yield
    finally:
        names.pop()


def named_call(fun, *, name=None):
    """`jax.named_call`: `fun` with its calls inside `named_scope(name)`
    (default: the function's name)."""
    scope = name if name is not None else getattr(fun, "__name__", type(fun).__name__)

    @_wraps(fun)
    def named(*args, **kwargs):
        with named_scope(scope):
            return fun(*args, **kwargs)

    return named


def current_name_stack():
    """The names of the enclosing `named_scope`s, outermost first, '/'-joined."""
    return "/".join(core._state.names)


def effects_barrier():
    """`jax.effects_barrier()`: wait until every dispatched side effect
    (callbacks, `debug.print`) has run. microjax_rs runs them synchronously in
    the calling thread, so they all have."""
    return None


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """`jax.make_mesh`: a `sharding.Mesh` of the first `prod(axis_shapes)`
    devices (of `devices`, default `jax.devices()`), every axis `Explicit`
    unless `axis_types` says otherwise (JAX 0.10's default)."""
    import math

    from .sharding import AxisType, Mesh
    axis_shapes = tuple(int(s) for s in axis_shapes)
    axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
    if len(axis_shapes) != len(axis_names):
        raise ValueError(f"Mismatched lengths of axis_shapes {axis_shapes} and axis_names {axis_names}")
    devs = list(devices if devices is not None else _devices.devices())
    size = math.prod(axis_shapes)
    if size > len(devs):
        raise ValueError(f"Number of devices {len(devs)} must be >= the product of mesh_shape {axis_shapes}")
    arr = np.empty(size, dtype=object)
    for i, d in enumerate(devs[:size]):
        arr[i] = d
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_names)
    return Mesh(arr.reshape(axis_shapes), axis_names, axis_types)
