"""Tracing machinery: abstract values, primitives, `bind`, traces and tracers,
and the Python view of jaxprs.

`bind(prim, *args, **params)` goes to the innermost active trace; with none
active it runs the primitive eagerly through one Rust call. A `StagingTrace`
owns a Rust builder: each `bind` appends one equation (Rust infers the output
avals and rejects bad shapes). Values from outside the trace become literals
(scalars) or constvars (arrays); tracers of an enclosing live trace are
captured as extra inputs. A tracer used after its trace ended raises
`UnexpectedTracerError`.
"""
import enum
import operator
import os
import sys
import threading
import typing

import numpy as np

from . import _core, _lru
from . import dtypes
from ._src import profiling as _profiling
from ._src.tables import MULTIPLE_RESULTS
from .config import config
from .errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

ArrayImpl = _core.ArrayImpl
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


# ----------------------------------------------------------------------------
# Abstract values


class MemorySpace(enum.Enum):
    """Where an array's buffer lives (`jax.memory.Space`): this single-host
    system keeps every array in device memory (`Device`)."""
    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self):
        return f"MemorySpace.{self.name}"

    __hash__ = object.__hash__


# The abstract value of an array (shape, dtype, weak type), JAX's
# `core.ShapedArray`: the Rust aval itself (rust/python/src/aval.rs), the
# one tracers carry.
ShapedArray = _core.ShapedArray


def mapped_aval(size, axis, aval):
    """The aval of one member of `aval` mapped over `axis` (of size `size`);
    `axis=None`: unmapped, `aval` itself."""
    if axis is None:
        return aval
    shape = tuple(aval.shape)
    axis = axis + len(shape) if axis < 0 else axis
    if not 0 <= axis < len(shape) or shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval} does not have size {size}")
    return aval.update(shape=shape[:axis] + shape[axis + 1:])


def unmapped_aval(size, axis, aval, explicit_mesh_axis=None):
    """The aval of `size` stacked copies of `aval` along `axis` (None: `aval`)."""
    if axis is None:
        return aval
    shape = tuple(aval.shape)
    axis = axis + len(shape) + 1 if axis < 0 else axis
    if not 0 <= axis <= len(shape):
        raise ValueError(f"unmapped_aval: axis {axis} out of range for {aval}")
    return aval.update(shape=shape[:axis] + (int(size),) + shape[axis:])


# The shared ShapedArray of `(shape tuple, dtype name, weak)` (avals are
# never mutated, so equal ones are shared; staging makes its avals the same way).
_shaped = ShapedArray._shared


# The built-in NumPy dtypes the binding reads directly, by dtype object: NumPy
# arrays' dtype names without numpy's `dtype.name` (computed in Python,
# several microseconds a call).
_NUMPY_NAMES = {np.dtype(n): n for n in _core.builtin_numpy_dtype_names()}


def get_aval(x):
    """Abstract value of any array-like argument."""
    t = type(x)
    if t is ArrayImpl:
        return _shaped(x.shape, x.dtype_name, x.weak_type)
    if t is np.ndarray:
        name = _NUMPY_NAMES.get(x.dtype)
        if name is not None:
            return _shaped(x.shape, dtypes.canonical_name(name), False)
    if isinstance(x, Tracer):
        return x.aval
    if t in (bool, int, float, complex):
        return ShapedArray((), dtypes.scalar_type_name(x), dtypes.is_weak_scalar(x))
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(x.shape, dtypes.canonical_name(dtypes.dtype_name(x.dtype)),
                           getattr(x, "weak_type", False))
    arr = np.asarray(x)
    return ShapedArray(arr.shape, dtypes.canonical_name(dtypes.dtype_name(arr.dtype)), False)


# ----------------------------------------------------------------------------
# Concrete values


def _check_int_range(x, name):
    info = np.iinfo(name)
    if not info.min <= x <= info.max:
        raise OverflowError(f"Python int {x} too large to convert to {name}")


def to_array(x, dtype=None, weak_type=None):
    """Converts an array-like to an ArrayImpl (canonical dtype unless given)."""
    t = type(x)
    if t is ArrayImpl and dtype is None:
        return x
    if t is np.ndarray and dtype is None and not config.debug_checks:
        name = _NUMPY_NAMES.get(x.dtype)
        if name is not None:
            canon = dtypes.canonical_name(name)
            if canon != name:
                x = x.astype(dtypes.np_dtype(canon))
            return _core.from_numpy(x, bool(weak_type))
    if config.debug_checks and t is not ArrayImpl and not isinstance(x, Tracer):
        from ._src import program_flags

        program_flags.check_host_to_device(x, dtype, weak_type)
    if t in (bool, int, float, complex):
        name = dtypes.canonical_name(dtypes.dtype_name(dtype)) if dtype is not None else dtypes.scalar_type_name(x)
        if t is int and dtypes.is_int_name(name):
            _check_int_range(x, name)
        weak = dtypes.is_weak_scalar(x) if (weak_type is None and dtype is None) else bool(weak_type)
        return _core.scalar(x, name, weak)
    if isinstance(x, Tracer):
        raise UnexpectedTracerError(_escaped_tracer_message(x))
    if t is ArrayImpl:
        arr = np.asarray(x)
    else:
        arr = np.asarray(x)
        if arr.dtype == object:
            raise TypeError(f"Value {x!r} with type {type(x)} is not a valid JAX type")
    name = dtypes.canonical_name(dtypes.dtype_name(dtype if dtype is not None else arr.dtype))
    arr = arr.astype(dtypes.np_dtype(name), copy=False)
    return _core.from_numpy(arr, bool(weak_type))


# ----------------------------------------------------------------------------
# Primitives


class Primitive:
    """A primitive operation (`lax.add_p`). One canonical object per name."""

    _registry = {}

    def __new__(cls, name):
        existing = cls._registry.get(name)
        if existing is not None:
            return existing
        self = super().__new__(cls)
        self.name = name
        self._handles = {}
        self._builtin = name in _BUILTIN_NAMES
        # Whether `bind` under a trace stages an equation: built-in
        # primitives, and user-defined ones with an abstract evaluation rule.
        self._staged = self._builtin
        self._impl = None
        self._abstract_eval = None
        self._provider = None
        self._multiple_results = name in MULTIPLE_RESULTS
        cls._registry[name] = self
        return self

    @property
    def multiple_results(self):
        return self._multiple_results

    @multiple_results.setter
    def multiple_results(self, value):
        self._multiple_results = bool(value)
        self._rules_changed()

    def bind(self, *args, **params):
        return bind(self, args, params)

    def impl(self, *args, **params):
        """Evaluate the primitive on `args` (JAX's `Primitive.impl`): a
        user-defined primitive's implementation, else the primitive bound
        (evaluated eagerly on arrays, staged under a trace)."""
        if self._impl is not None:
            return self._impl(*args, **params)
        return bind(self, args, params)

    def get_bind_params(self, params):
        """`(subfuns, bind_params)` to rebind an equation of this primitive
        from its `params` (JAX's interface for jaxpr interpreters): no
        sub-functions, the params as they are."""
        return [], dict(params)

    def def_impl(self, impl):
        """User-defined primitives: the implementation `bind` runs on
        concrete arrays (eagerly, and when a compiled program reaches the
        primitive)."""
        self._impl = impl
        return impl

    def def_abstract_eval(self, rule):
        """User-defined primitives: `rule(*avals, **params)` gives the output
        `ShapedArray`(s). With it, the primitive is staged under `jit` and
        transformed by the rules registered in `interpreters.ad` and
        `interpreters.batching`."""
        self._abstract_eval = rule
        if not self._builtin:
            self._staged = True
            self._rules_changed()
        return rule

    def _rules_changed(self):
        """A rule was (re)registered: traced rules and handles are stale. A
        new provider makes new handles unequal to the old ones, so no cache
        keyed on programs holding the old ones answers for the new rules."""
        if not self._builtin:
            self._handles = {}
            if self._provider is not None:
                self._provider.clear()
                self._provider = None

    def _dynamic_handle(self, params):
        """The Rust primitive of a user-defined primitive: its rules come from
        this object (see `interpreters/user_rules.py`)."""
        if self._provider is None:
            from .interpreters.user_rules import UserRules
            self._provider = _core.RuleProvider(UserRules(self))
        return self._provider.prim(self.name, _params_to_rust(params), self._multiple_results)

    def handle(self, params):
        """The Rust primitive for these params (memoized when params are hashable)."""
        if not self._builtin:
            if _state.stack:
                _check_hashable_params(self, params)
            return self._dynamic_handle(params)
        if not params:
            h = self._handles.get(())
            if h is not None:
                return h
        return self._memoized(params, lambda p: _core.Prim(self.name, _params_to_rust(p)))

    def _memoized(self, params, make):
        """`make(params)`, memoized (up to 4096 entries) when params are hashable."""
        try:
            key = tuple(sorted(params.items()))
            h = self._handles.get(key)
        except TypeError:
            key, h = None, None
        if h is None:
            h = make(params)
            if key is not None and len(self._handles) < 4096:
                self._handles[key] = h
        return h

    def __repr__(self):
        return self.name

    def __reduce__(self):
        return (Primitive, (self.name,))


_BUILTIN_NAMES = frozenset(_core.primitive_names())


def _check_hashable_params(prim, params):
    """JAX's rule for staged equations of user-defined primitives: every
    param value hashes (the rules get the value itself, equal by identity
    here where it is no plain Python or NumPy value)."""
    for k, v in params.items():
        try:
            hash(v)
        except TypeError:
            raise TypeError(
                f"As of JAX v0.7, parameters to jaxpr equations must have __hash__ and __eq__ "
                f"methods. In a call to primitive {prim.name}, the value of parameter {k} was not "
                f"hashable: {v!r}") from None


def primitive(name):
    return Primitive(name)


def _params_to_rust(params):
    out = {}
    for k, v in params.items():
        if isinstance(v, ClosedJaxpr):
            v = v._handle
        out[k] = v
    return out


# Per-primitive views of params (e.g. gather's dimension numbers as a
# `GatherDimensionNumbers`), registered by the modules defining those types.
_PARAM_VIEWS = {}


def _params_from_rust(params, name=None):
    out = {}
    for k, v in params.items():
        if isinstance(v, _core.ClosedJaxpr):
            v = ClosedJaxpr(v)
        elif type(v) is tuple and any(isinstance(j, _core.ClosedJaxpr) for j in v):
            # cond's branches; custom_linear_solve's jaxprs (None where absent)
            v = tuple(ClosedJaxpr(j) if isinstance(j, _core.ClosedJaxpr) else j for j in v)
        out[k] = v
    view = _PARAM_VIEWS.get(name)
    return view(out) if view is not None else out


# ----------------------------------------------------------------------------
# Trace state


class _TraceState(threading.local):
    def __init__(self):
        self.stack = []
        # Source info of the equation `eval_jaxpr` is re-binding (None: walk the stack).
        self.source = None
        # Inside `ensure_compile_time_eval`: concrete-only operations run eagerly.
        self.compile_time_eval = False
        # The enclosing `named_scope` names, outermost first.
        self.names = []


_state = _TraceState()

# Separates an equation's source location from its name stack in the
# source text a trace records (`file:line (function)\x1fouter/inner`).
NAME_STACK_SEPARATOR = "\x1f"
# (source text, names) -> source text with the names
_NAMED_SOURCE = _lru.LRU("core.named_source", 16384)


def named_source(src, base):
    """`src` (an equation's source text) with the `named_scope` names
    entered since the trace began (`base` names were active then) before
    the names `src` already holds (an equation re-bound by `eval_jaxpr`)."""
    names = _state.names
    if len(names) <= base:
        return src
    key = (src, tuple(names[base:]))
    hit = _NAMED_SOURCE.get(key)
    if hit is None:
        loc, sep, inner = (src or "").partition(NAME_STACK_SEPARATOR)
        stack = "/".join(names[base:] + ([inner] if sep and inner else []))
        hit = _NAMED_SOURCE[key] = f"{loc}{NAME_STACK_SEPARATOR}{stack}"
    return hit


def split_source(src):
    """`(location, name stack)` of a recorded source text (either may be
    None / "")."""
    if src is None or NAME_STACK_SEPARATOR not in src:
        return src, ""
    loc, _, names = src.partition(NAME_STACK_SEPARATOR)
    return (loc or None), names


def current_trace():
    stack = _state.stack
    return stack[-1] if stack else None


def trace_stack():
    """The active traces, outermost first (a copy)."""
    return list(_state.stack)


class EvalTrace:
    """The trace of values no transformation is tracing (what
    `find_top_trace` answers for concrete values)."""

    @property
    def main(self):
        return self

    def __repr__(self):
        return "EvalTrace"


_EVAL_TRACE = EvalTrace()


def find_top_trace(xs):
    """The innermost active trace among the tracers in `xs` (a sequence or
    pytree leaves), or the eval trace when none is traced (JAX's
    `jax.extend.core.find_top_trace`). A trace's `main` identifies it."""
    stack = _state.stack
    level, top = -1, _EVAL_TRACE
    for x in xs:
        if type(x) is Tracer:
            t = x._trace
            for i in range(len(stack) - 1, level, -1):
                if stack[i] is t:
                    level, top = i, t
                    break
    return top


class _TraceContext:
    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        trace = self.trace
        _state.stack.append(trace)
        # A trace marked native (`TraceBase.native`) has Rust stage its
        # float arithmetic while it is the innermost one.
        _core.trace_enter(trace)
        return trace

    def __exit__(self, *exc):
        trace = self.trace
        stack = _state.stack
        if stack and stack[-1] is trace:
            stack.pop()
        _core.trace_exit()
        trace.alive = False
        if exc[0] is None:
            check_leaks(trace)
        return False


def check_leaks(trace):
    """Reports tracers of the ended `trace` that escaped, when
    `jax_check_tracer_leaks` is on."""
    if config._values["jax_check_tracer_leaks"]:
        from ._src import leak_checks

        leak_checks.check_trace(trace)


def new_trace(trace):
    return _TraceContext(trace)


def bind(prim, args, params):
    """Applies `prim` to `args` in the innermost active trace, or eagerly."""
    stack = _state.stack
    if stack:
        if _state.compile_time_eval and not any(isinstance(a, Tracer) for a in args):
            return eval_primitive(prim, args, params)
        return stack[-1].process_primitive(prim, args, params)
    return eval_primitive(prim, args, params)


class ensure_compile_time_eval:
    """`jax.ensure_compile_time_eval()`: inside it, operations whose operands
    are all concrete run eagerly even while a function is being traced (their
    results are concrete arrays, usable in Python control flow); operations
    on traced values are staged as usual."""

    def __enter__(self):
        self._saved = _state.compile_time_eval
        _state.compile_time_eval = True
        return self

    def __exit__(self, *exc):
        _state.compile_time_eval = self._saved
        return False


# Array types that live on a device (`_devices.GpuArray`) -> the function
# that evaluates a primitive eagerly where they are, and the one that runs a
# whole program there (`register_device_array`).
_DEVICE_EVAL = {}
_DEVICE_RUN = {}


class _OnDevice(Exception):
    """An eager operand lives on a device (internal signal)."""


def register_device_array(array_type, evaluate, run):
    """Eager primitives with an operand of `array_type` run through
    `evaluate(prim, args, params)` instead of on the host, and eager programs
    (transforms' closed jaxprs) through `run(closed, inputs, device)`."""
    _DEVICE_EVAL[array_type] = evaluate
    _DEVICE_RUN[array_type] = run


def run_on_device(closed, inputs, x):
    """Runs the program handle `closed` on the device of the device array `x`
    (results stay there)."""
    return _DEVICE_RUN[type(x)](closed, inputs, x.device)


def on_device(x):
    """Whether `x` is an array living on a device (a `GpuArray`)."""
    return type(x) in _DEVICE_EVAL


def _host_operand(a):
    if type(a) in _DEVICE_EVAL:
        raise _OnDevice(type(a))
    return to_array(a)


def eval_primitive(prim, args, params, check=True):
    """Evaluates `prim` eagerly; with `jax_debug_nans`/`jax_debug_infs` on
    (and `check`), its results are checked (`_src/nan_checks.py`). While a
    `jax.profiler` trace runs, each evaluation is recorded as an event."""
    t0 = _profiling.ACTIVE and _profiling._now()
    if not prim._builtin:
        if prim._impl is None:
            raise NotImplementedError(f"primitive {prim.name} has no implementation")
        result = prim._impl(*args, **params)
    else:
        try:
            vals = [a if type(a) is ArrayImpl else _host_operand(a) for a in args]
        except _OnDevice as where:
            vals = None
            result = _DEVICE_EVAL[where.args[0]](prim, args, params)
        if vals is not None:
            if config.debug_checks:
                from ._src import program_flags

                program_flags.check_execution(prim.name)
            outs = prim.handle(params).apply(vals)
            if check and config.debug_checks:
                from ._src import nan_checks

                nan_checks.check_eager(prim.name, outs)
            result = outs if prim.multiple_results else outs[0]
    if t0:
        _profiling.record(prim.name, t0, _profiling._now(), None, "eager")
    return result


# id(code object) -> (the code object, whether it is defined inside this
# package or an excluded path). Keyed by identity (hashing a code object
# hashes its bytecode and constants, on every lookup); the entry holds the
# code object, so its id is not reused while the entry lives.
_INTERNAL_CODE = _lru.LRU("core.internal_code", 4096)
_EXCLUDED_PATHS = (_PKG_DIR,)  # source info skips frames of files under these


def exclude_source_path(path):
    """Skip frames of files under `path` when attributing equations to user
    code (`jax._src.traceback_util.register_exclusion`)."""
    global _EXCLUDED_PATHS
    path = str(path)
    if path not in _EXCLUDED_PATHS:
        _EXCLUDED_PATHS = _EXCLUDED_PATHS + (path,)
        _INTERNAL_CODE.clear()
        _SOURCE_TEXT.clear()


def is_excluded_source(filename):
    """Whether `filename` is this package's or under a registered exclusion."""
    return filename.startswith(_EXCLUDED_PATHS)


# (id(code object), instruction offset) -> (the code object,
# "file:line (function)"), keyed by identity as `_INTERNAL_CODE`.
_SOURCE_TEXT = _lru.LRU("core.source_text", 16384)
# (Their dicts, read directly by `source_info`: it runs for every equation.)
_INTERNAL_CODE_DATA = _INTERNAL_CODE.data
_SOURCE_TEXT_DATA = _SOURCE_TEXT.data


def source_info(depth=1):
    """`file:line (function)` of the innermost frame outside this package,
    looking from `depth` frames up (a caller that knows the frames between
    it and the user are ours skips them: from Python 3.11 every frame looked
    at is materialized, which costs more than the lookups below).

    Both steps are cached: whether a code object is ours (per code object)
    and the text of a user call site (per code object and bytecode offset),
    so a traced equation costs a few lookups, not a line-table decode and a
    string format. Both caches are bounded LRUs (`_lru.py`): a process
    that keeps making new lambdas holds at most their sizes."""
    try:
        f = sys._getframe(depth)
    except ValueError:  # fewer frames than `depth`: start from the caller
        f = sys._getframe(1)
    internal = _INTERNAL_CODE_DATA
    while f is not None:
        code = f.f_code
        key = id(code)
        hit = internal.get(key)
        if hit is not None and hit[0] is code:
            # No LRU refresh here: this runs for every frame of every staged
            # equation (the cache is insertion-ordered, see `_lru.py`).
            inside = hit[1]
        else:
            inside = code.co_filename.startswith(_EXCLUDED_PATHS)
            _INTERNAL_CODE[key] = (code, inside)
        if not inside:
            key = (key, f.f_lasti)
            hit = _SOURCE_TEXT_DATA.get(key)
            if hit is not None and hit[0] is code:
                _SOURCE_TEXT_DATA.move_to_end(key)
                return hit[1]
            text = f"{code.co_filename}:{f.f_lineno} ({code.co_name})"
            _SOURCE_TEXT[key] = (code, text)
            return text
        f = f.f_back
    return None


def _user_frame_str():
    s = source_info()
    return f" at {s}" if s else ""


class StagingTrace(_core.TraceBase):
    """Records every bound primitive into a Rust builder (jit, make_jaxpr,
    eval_shape). Values from outside become literals or constvars; tracers of
    an enclosing live trace become captured inputs.

    The Rust base class (rust/python/src/traces.rs) holds the fields Rust
    reads: `builder` (fresh per trace), `captures` (outer tracers, in order
    of their captured input vars), `known` and `eqn_of` (the AD records, see
    `ADTrace`), and the flags `alive`, `record_source` and `native` (Rust
    stages float arithmetic on this trace's tracers without calling
    `process_primitive`, see rust/python/src/tracer.rs; for traces that
    record no source lines)."""

    # Checked for escaped tracers when left, under jax_check_tracer_leaks.
    leak_checked = True

    @property
    def main(self):
        """The trace's identity (JAX's trace tag)."""
        return self

    # `named_scope` names active when the trace began: its equations record
    # the names entered since (JAX's name stacks are relative to the
    # enclosing jaxpr).
    _name_base = 0

    def __init__(self, fun_name="<function>"):
        self.fun_name = fun_name
        self._name_base = len(_state.names)
        self._capture_vars = {}
        self._const_vars = {}

    def new_arg(self, aval):
        var = self.builder.add_input(aval.shape, aval.dtype_name, aval.weak_type)
        return Tracer(self, var, aval)

    def to_atom(self, x):
        """Var id or `_core.Literal` for an operand of an equation."""
        t = type(x)
        if t is Tracer:
            if x._trace is self:
                return x._var
            if not x._trace.alive:
                raise UnexpectedTracerError(_escaped_tracer_message(x))
            return self._capture(x)
        if t is ArrayImpl:
            if x.ndim == 0 and x.dtype_name != "float0":
                return _core.Literal(x.item(), x.dtype_name, x.weak_type)
            return self._const(x)
        if t in (bool, int, float, complex):
            name = dtypes.scalar_type_name(x)
            if t is int:
                _check_int_range(x, name)
            return _core.Literal(x, name, dtypes.is_weak_scalar(x))
        if isinstance(x, Tracer):
            return self.to_atom(x)
        if t in _DEVICE_EVAL and self.captures_device_arrays:
            return self._capture(x)
        return self.to_atom(to_array(x))

    # Whether a device array (GpuArray) used in this trace becomes an input
    # of the program (so the program runs on its device) rather than a
    # host constant. Eager transforms (AD, vmap) run their program once,
    # right away; `jit` keeps constants, so its cached program stays valid.
    captures_device_arrays = False

    def _capture(self, x):
        var = self._capture_vars.get(id(x))
        if var is None:
            a = x.aval
            var = self.builder.add_input(a.shape, a.dtype_name, a.weak_type)
            self._capture_vars[id(x)] = var
            self.captures.append(x)
        return var

    def _const(self, x):
        key = id(x)
        hit = self._const_vars.get(key)
        if hit is not None and hit[0] is x:
            return hit[1]
        var = self.builder.add_const(x)
        self._const_vars[key] = (x, var)
        return var

    def concrete_value(self, tracer, what, error):
        """Value for bool()/int()/__index__; staged values have none."""
        raise error(_concretization_message(tracer, what))

    def splice(self, closed, inputs):
        """Appends a whole closed jaxpr to this trace in one Rust call."""
        atoms = [self.to_atom(x) for x in inputs]
        outs = self.builder.splice(closed, atoms)
        return [self._out_tracer(o) for o in outs]

    def run_program(self, closed, inputs):
        """Runs a closed jaxpr handle at this level (see `ad.run_at`)."""
        return self.splice(closed, inputs)

    def _out_tracer(self, out):
        if type(out) is _core.StagedVar:
            return Tracer(self, out.var, _shaped(out.shape, out.dtype_name, out.weak_type))
        return _core.scalar(out.value, out.dtype_name, out.weak_type)  # a `_core.Literal`

    def process_primitive(self, prim, args, params):
        if not prim._staged:
            if prim._impl is not None:
                return prim._impl(*args, **params)
            raise NotImplementedError(f"Abstract evaluation for '{prim.name}' not implemented")
        src = _state.source
        if src is None:
            src = source_info(3)  # frames 1 and 2 up are this method and its caller, always ours
        if _state.names:
            src = named_source(src, self._name_base)
        return self.builder.stage(self, prim.handle(params), args, src, prim.multiple_results)

    def __repr__(self):
        return f"StagingTrace({self.fun_name})"


def _escaped_tracer_message(x):
    return (
        f"Encountered an unexpected tracer. A function transformed by microjax_rs "
        f"had a side effect that let a traced value escape: {x!r} was created while "
        f"tracing `{x._trace.fun_name}`, and that trace has ended. Pass the value "
        f"as an argument or return it instead of storing it{_user_frame_str()}."
    )


# ----------------------------------------------------------------------------
# Tracers


def _concretization_message(tracer, what):
    return (
        f"Abstract tracer value encountered where concrete value is expected: "
        f"{tracer.aval.str_short()} traced array. The problem arose with the `{what}` "
        f"function, while tracing the function `{tracer._trace.fun_name}`"
        f"{_user_frame_str()}. A value computed from a traced argument cannot be "
        f"converted to a Python value; use lax.cond/jnp.where for data-dependent "
        f"choices, or mark the argument static with static_argnums/static_argnames."
    )


class _TracerMethods:
    """The Python methods of `Tracer` (a Rust class holding `_trace`, `_var`
    and `aval`, see rust/python/src/tracer.rs): attached to it below."""

    __array_priority__ = 1000

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __repr__(self):
        return f"Traced<{self.aval!r}>with<{self._trace!r}>"

    def __bool__(self):
        return bool(self._trace.concrete_value(self, "bool", TracerBoolConversionError))

    def __int__(self):
        return int(self._trace.concrete_value(self, "int", TracerIntegerConversionError))

    def __index__(self):
        return self._trace.concrete_value(self, "__index__", TracerIntegerConversionError).__index__()

    def __float__(self):
        raise ConcretizationTypeError(_concretization_message(self, "float"))

    def __complex__(self):
        raise ConcretizationTypeError(_concretization_message(self, "complex"))

    def item(self, *args):
        raise ConcretizationTypeError(_concretization_message(self, "item"))

    def tolist(self):
        raise ConcretizationTypeError(_concretization_message(self, "tolist"))

    def __array__(self, dtype=None, copy=None):
        raise TracerArrayConversionError(
            f"The numpy.ndarray conversion method __array__() was called on traced array "
            f"with shape {self.aval.str_short()} while tracing `{self._trace.fun_name}`"
            f"{_user_frame_str()}. Use microjax_rs.numpy functions instead of numpy ones "
            f"inside transformed functions."
        )

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__}")

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def __setitem__(self, idx, value):
        raise TypeError(
            "JAX arrays are immutable and do not support in-place item assignment. "
            "Use x = x.at[idx].set(y) instead."
        )


Tracer = _core.Tracer
for _name, _member in list(vars(_TracerMethods).items()):
    if _name not in ("__dict__", "__weakref__", "__module__", "__qualname__", "__doc__"):
        setattr(Tracer, _name, _member)
del _name, _member
# Staging makes Tracers of shared ShapedArrays and converts other operands with `to_atom`.
_core.register_hooks(to_atom=StagingTrace.to_atom)
# The operators, methods and properties of Tracer (x + y, x.sum(), x.T, x.at)
# are the jnp functions: `_src/numpy/array_methods.install_hooks` adds them.


# ----------------------------------------------------------------------------
# Python view of jaxprs


_NAMES = "abcdefghijklmnopqrstuvwxyz"


def _var_name(i):
    s = ""
    i += 1
    while i > 0:
        i, r = divmod(i - 1, 26)
        s = _NAMES[r] + s
    return s


class Var:
    """A jaxpr variable; the same object on every access of a given jaxpr."""

    __slots__ = ("count", "aval", "_name")

    def __init__(self, count, aval, name):
        self.count = count
        self.aval = aval
        self._name = name

    def __repr__(self):
        return self._name


class Literal:
    """A scalar constant inlined in an equation; `.val` is a NumPy scalar."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"{self.val}:{self.aval.str_short()}"


# An equation operand: a variable or an inlined literal (`jax.core.Atom`).
Atom = typing.Union[Var, Literal]


class JaxprEqn:
    """An equation: `source_info` is its user source line
    (`file:line (function)`) or None, `name_stack` the `named_scope` names
    it was staged in, relative to its jaxpr (`outer/inner`, or "")."""

    __slots__ = ("invars", "outvars", "primitive", "params", "effects", "source_info", "name_stack")

    def __init__(self, invars, outvars, primitive, params, effects, source_info, name_stack=""):
        self.invars = invars
        self.outvars = outvars
        self.primitive = primitive
        self.params = params
        self.effects = effects
        self.source_info = source_info
        self.name_stack = name_stack

    def __repr__(self):
        outs = " ".join(f"{v}:{v.aval.str_short()}" for v in self.outvars)
        ps = " ".join(f"{k}={v}" for k, v in self.params.items())
        ins = " ".join(map(repr, self.invars))
        return f"{outs} = {self.primitive.name}{'[' + ps + ']' if ps else ''} {ins}"


class _PrintedFromHandle:
    """The printing of `Jaxpr` and `ClosedJaxpr`: their Rust handle's text."""

    def __str__(self):
        return self._handle.display()

    __repr__ = __str__

    def pretty_print(self, *, name_stack=False, **kwargs):
        """The printed jaxpr; `name_stack=True` adds each equation's
        `named_scope` names (` # [outer/inner]`), as JAX."""
        return self._handle.display_name_stack() if name_stack else str(self)


class Jaxpr(_PrintedFromHandle):
    """The Python view of a Rust jaxpr: `constvars`, `invars`, `outvars`, `eqns`."""

    def __init__(self, handle):
        self._handle = handle
        st = handle.structure()
        avals = [ShapedArray.from_record(a) for a in st.avals]
        order = list(st.constvars) + list(st.invars) + [o for e in st.eqns for o in e.outputs]
        names = {v: _var_name(i) for i, v in enumerate(order)}
        vars_ = {v: Var(v, avals[v], names.get(v, f"_{v}")) for v in range(len(avals))}

        def atom(a):
            if isinstance(a, int):
                return vars_[a]
            name = a.dtype_name  # a `_core.Literal`
            return Literal(np.array(a.value, dtype=dtypes.np_dtype(name))[()],
                           ShapedArray((), name, a.weak_type))

        self.constvars = [vars_[v] for v in st.constvars]
        self.invars = [vars_[v] for v in st.invars]
        self.outvars = [atom(a) for a in st.outvars]
        from ._src import effects as _effects

        def eqn(e):
            params = _params_from_rust(e.prim.params(), e.prim.name)
            return JaxprEqn([atom(a) for a in e.inputs], [vars_[o] for o in e.outputs], Primitive(e.prim.name),
                            params, _effects.eqn_effects(e.prim.name, params, e.effect), *split_source(e.source))

        self.eqns = [eqn(e) for e in st.eqns]
        self.effects = set().union(*(e.effects for e in self.eqns)) if self.eqns else set()


class ClosedJaxpr(_PrintedFromHandle):
    """A jaxpr with its constants (`consts`, also called `literals`)."""

    def __init__(self, handle):
        self._handle = handle
        self._jaxpr = None
        self._consts = None

    @property
    def jaxpr(self):
        if self._jaxpr is None:
            self._jaxpr = Jaxpr(self._handle)
        return self._jaxpr

    @property
    def consts(self):
        if self._consts is None:
            self._consts = list(self._handle.consts())
        return self._consts

    literals = consts

    @property
    def in_avals(self):
        return [ShapedArray.from_record(a) for a in self._handle.in_avals()]

    @property
    def out_avals(self):
        return [ShapedArray.from_record(a) for a in self._handle.out_avals()]

    eqns = property(operator.attrgetter("jaxpr.eqns"))
    effects = property(operator.attrgetter("jaxpr.effects"))

    def canonical(self):
        """Canonical text (weak types, bit-exact literals) that `parse` reads back."""
        return self._handle.canonical()

    def __reduce__(self):
        # Canonical text + top-level consts: the parser rebuilds an equal program.
        return (_closed_from_canonical, (self.canonical(), list(self.consts)))

    def __eq__(self, other):
        return isinstance(other, ClosedJaxpr) and self._handle == other._handle

    def __hash__(self):
        return hash(self._handle)


def walk_jaxpr(jaxpr, consts, args, apply):
    """The outputs of `jaxpr` on `consts` and `args`, every equation's
    outputs (a list) being `apply(eqn, input values)`: the one environment
    walk that the evaluators here and in `custom_derivatives` / `checkify`
    share, each with its own `apply`."""
    env = {}

    def read(v):
        return v.val if type(v) is Literal else env[v]

    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    for eqn in jaxpr.eqns:
        for v, x in zip(eqn.outvars, apply(eqn, [read(v) for v in eqn.invars])):
            env[v] = x
    return [read(v) for v in jaxpr.outvars]


def bind_eqn(eqn, ins, params=None):
    """`eqn`'s primitive bound on `ins` (with `eqn.params`, or `params` where
    given), its outputs as a list."""
    outs = eqn.primitive.bind(*ins, **(eqn.params if params is None else params))
    return outs if eqn.primitive.multiple_results else [outs]


def eval_jaxpr(jaxpr, consts, *args):
    """Evaluates a Jaxpr with `bind` (so it can itself be traced)."""
    return eval_jaxpr_then(jaxpr, consts, args)


def eval_jaxpr_then(jaxpr, consts, args, then=None):
    """`eval_jaxpr`, each equation's outputs passed through `then(eqn,
    outputs) -> outputs` where given (bound at the equation's source line)."""
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr expected {len(jaxpr.invars)} arguments, got {len(args)}")
    state = _state
    prev = state.source
    fallback = prev

    def apply(eqn, ins):
        nonlocal fallback
        # As JAX: a re-bound equation keeps the user line it was traced
        # at; one without (made by a transform) gets the caller's line,
        # looked up once per call rather than once per equation.
        src = eqn.source_info
        if not src:
            if fallback is None:
                fallback = source_info()
            src = fallback
        if eqn.name_stack:
            src = f"{src or ''}{NAME_STACK_SEPARATOR}{eqn.name_stack}"
        state.source = src
        outs = bind_eqn(eqn, ins)
        return outs if then is None else then(eqn, outs)

    try:
        return walk_jaxpr(jaxpr, consts, args, apply)
    finally:
        state.source = prev


def jaxpr_as_fun(closed_jaxpr):
    def fun(*args):
        return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)

    return fun


def _closed_from_canonical(text, consts):
    """Unpickling of a ClosedJaxpr."""
    return ClosedJaxpr(_core.parse(text, [c if type(c) is ArrayImpl else to_array(c) for c in consts]))
