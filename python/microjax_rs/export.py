"""`jax.export`: serialize a jitted function's program for later use in
Python or, with no Python at all, from Rust (`microjax::export::Program`).

    exp = export.export(jax.jit(f))(x, y)       # trace once
    data = exp.serialize()                       # bytes (format: rust/core/src/export.rs)
    exp2 = export.deserialize(data)
    exp2.call(x, y)                              # same results as f(x, y)

The bytes hold the canonical jaxpr text, the constants in a little-endian
binary section, the determinism mode and the pytree structure of the
arguments and results (standard containers, and node types registered with
`register_pytree_node_serialization` / `register_namedtuple_serialization`).

`export` records the active `microjax_determinism` mode ("default" or
"portable"); `Exported.call` (eagerly) and Rust's `Program::run` run the
program in it. Under a trace the program is staged into the enclosing
computation and runs in that computation's mode and limits.

Eager `Exported.call` runs under the program's `Limits`, as Rust's
`Program::run` does: by default at most 2**24 loop iterations (`while`
bodies and `scan` steps together, a `ValueError` beyond) and 2**28
equations executed in all (`max_steps`, the total work), so an untrusted
program finishes or fails within seconds, and no deadline (`timeout`
seconds, a `TimeoutError` beyond). Raise them for trusted long jobs:
`deserialize(data, limits=Limits(max_loop_iterations=2**40))`, or set
`exp.limits`; a pickled `Exported` keeps its limits. Ctrl-C stops a
running call with `KeyboardInterrupt`.

`serialize(vjp_order=n)` also stores the VJP of the program, of the VJP, ...
n levels deep, so `deserialize(data).vjp()` works without the Python
function. The module text (`mlir_module()`) is microjax_rs's program text,
not StableHLO; the only platform is `"cpu"` and programs run on one device.
Shape polymorphism is not supported: `symbolic_shape` parses a
specification (its dimensions belong to a `SymbolicScope` holding the
constraints), and exporting with symbolic dimensions raises
`NotImplementedError`.
"""
import base64
import json
import re

from . import _core, core
from .config import config
from .core import ClosedJaxpr, ShapedArray, Tracer
from ._src.export_trees import decode_tree as _decode_tree
from ._src.export_trees import encode_tree as _encode_tree
from ._src.export_trees import register_namedtuple_serialization, register_pytree_node_serialization
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["DisabledSafetyCheck", "Exported", "Limits", "SymbolicScope", "default_export_platform", "deserialize", "export",
           "is_symbolic_dim", "maximum_supported_calling_convention_version",
           "minimum_supported_calling_convention_version", "register_namedtuple_serialization",
           "register_pytree_node_serialization", "symbolic_args_specs", "symbolic_shape"]

_TREE_VERSION = 1

# The calling-convention versions of JAX 0.10.2's exports (our programs carry
# their own format version; these are reported for code that checks them).
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10
_CALLING_CONVENTION_VERSION = 10


def default_export_platform():
    """The platform `export` lowers for when none is given: `"cpu"`."""
    return "cpu"


class DisabledSafetyCheck:
    """A safety check `export` may skip (`jax.export.DisabledSafetyCheck`);
    kept on the `Exported` as given (the checks they name are JAX's
    platform and custom-call checks, which have no counterpart here)."""

    def __init__(self, name):
        self._name = name

    @classmethod
    def platform(cls):
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name):
        return cls(f"custom_call:{target_name}")

    def __eq__(self, other):
        return isinstance(other, DisabledSafetyCheck) and other._name == self._name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f"DisabledSafetyCheck({self._name})"


class _SymbolicDim:
    """One dimension of a `symbolic_shape`: an expression over dimension
    variables (kept as text; shape polymorphism is not supported), in the
    `SymbolicScope` `scope`."""

    def __init__(self, text, scope=None):
        self.text = text
        self.scope = scope

    def __repr__(self):
        return self.text

    def __eq__(self, other):
        return isinstance(other, _SymbolicDim) and other.text == self.text

    def __hash__(self):
        return hash(self.text)


_DIM_TERM = re.compile(r"^\s*(?:\d+|[A-Za-z_][A-Za-z0-9_]*|\d+\s*\*\s*[A-Za-z_][A-Za-z0-9_]*)"
                       r"(?:\s*[-+*]\s*(?:\d+|[A-Za-z_][A-Za-z0-9_]*))*\s*$")


def is_symbolic_dim(p):
    """Whether `p` is a symbolic dimension (of a `symbolic_shape`), not a
    constant (JAX's `jax.export.is_symbolic_dim`)."""
    return isinstance(p, _SymbolicDim)


_CONSTRAINT = re.compile(r"^(.+?)\s*(>=|<=|==)\s*(.+)$")


class SymbolicScope:
    """The scope of symbolic dimensions, holding their constraints (JAX's
    `jax.export.SymbolicScope(constraints_str=())`): each constraint is
    `e1 >= e2`, `e1 <= e2` or `e1 == e2` over dimension expressions.
    `symbolic_shape(..., scope=s)` puts its dimensions in `s`; without a
    scope each call makes a new one from its `constraints`."""

    def __init__(self, constraints_str=()):
        if isinstance(constraints_str, str):
            raise ValueError(f"The symbolic constraints should be a sequence of strings. Got {constraints_str!r}")
        constraints = []
        for c in constraints_str:
            m = _CONSTRAINT.match(str(c).strip())
            if m is None or not (_DIM_TERM.match(m.group(1)) and _DIM_TERM.match(m.group(3))):
                raise ValueError(f"syntax error in symbolic constraint {c!r}: expecting `e1 >= e2`, `e1 <= e2` or "
                                 f"`e1 == e2` over dimension expressions")
            constraints.append(f"{' '.join(m.group(1).split())} {m.group(2)} {' '.join(m.group(3).split())}")
        self._explicit_constraints = tuple(constraints)
        self._location_frame = _user_location()

    def __str__(self):
        text = f"{id(self)} created at {self._location_frame}"
        if self._explicit_constraints:
            text += " with constraints:\n  " + "\n  ".join(self._explicit_constraints)
        return text

    __repr__ = __str__


def _user_location():
    """`file:line (function)` of the first caller outside this package."""
    import os
    import sys

    pkg = os.path.dirname(os.path.abspath(__file__)) + os.sep
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(pkg):
        f = f.f_back
    return "(unknown)" if f is None else f"{f.f_code.co_filename}:{f.f_lineno} ({f.f_code.co_name})"


def symbolic_shape(shape_spec, *, constraints=(), scope=None, like=None):
    """Parses a shape specification such as `"b, 4"` or `"(b, 2*n + 1)"`:
    integers stay integers, other dimensions become symbolic. Exporting
    with symbolic dimensions raises `NotImplementedError` (no shape
    polymorphism here)."""
    if shape_spec is None:
        raise ValueError("symbolic_shape: the shape specification must be a string, not None")
    if scope is not None and constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    if scope is None:
        scope = SymbolicScope(constraints)
    text = str(shape_spec).strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    if parts and parts[-1] == "":
        parts.pop()
    dims = []
    for k, part in enumerate(parts):
        if part.isdigit():
            dims.append(int(part))
        elif part in ("_", "..."):
            if like is None:
                raise ValueError(f"syntax error in symbolic shape {shape_spec!r} in dimension {k}: "
                                 f"'{part}' needs the `like` argument")
            dims.append(like[k])
        elif _DIM_TERM.match(part):
            dims.append(_SymbolicDim(" ".join(part.split()), scope))
        else:
            raise ValueError(f"syntax error in symbolic shape {shape_spec!r} in dimension {k}: {part!r}")
    return tuple(dims)


def symbolic_args_specs(args, shapes_specs, constraints=(), scope=None):
    """`ShapeDtypeStruct`s of `args` with the shapes `shapes_specs` gives
    (one specification, or a pytree of them)."""
    from .interpreters.partial_eval import ShapeDtypeStruct
    from .tree_util import tree_map

    if scope is not None and constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    scope = scope if scope is not None else SymbolicScope(constraints)  # one scope for all the shapes
    if isinstance(shapes_specs, str) or shapes_specs is None:
        return tree_map(lambda a: ShapeDtypeStruct(symbolic_shape(shapes_specs, like=a.shape, scope=scope)
                                                   if shapes_specs is not None else a.shape, a.dtype),
                        args)
    return tree_map(lambda a, spec: ShapeDtypeStruct(symbolic_shape(spec, like=a.shape, scope=scope), a.dtype),
                    args, shapes_specs)


def _aval_desc(a):
    return [list(a.shape), a.dtype_name, bool(a.weak_type)]


(_DEFAULT_MAX_BYTES, _DEFAULT_MAX_LOOP_ITERATIONS, _DEFAULT_MAX_DEPTH,
 _DEFAULT_MAX_STEPS) = _core.default_program_limits()


class Limits:
    """Resource limits of an exported program (Rust's `microjax::export::Limits`).

    Args:
      max_loop_iterations: loop iterations one eager `Exported.call` may take, all loops
        together (every `while` body and `scan` step); beyond it the call raises `ValueError`.
        Default 2**24 (seconds of work).
      timeout: seconds one eager call may run (`None`: no deadline); beyond it the call raises
        `TimeoutError`.
      max_steps: equations one eager call may execute, the total work (every equation of every
        loop iteration and nested program counts); beyond it the call raises `ValueError`.
        Default 2**28.
      max_bytes: memory of one call in bytes: `deserialize` checks the bytes of all values the
        program names against it, and an eager call may add at most this many bytes of live
        host memory (kernel scratch included) before it raises `MemoryError`. Default 2**34.
      max_depth: nesting of sub-programs, checked by `deserialize`.
    """

    __slots__ = ("max_loop_iterations", "timeout", "max_bytes", "max_depth", "max_steps")

    def __init__(self, max_loop_iterations=_DEFAULT_MAX_LOOP_ITERATIONS, timeout=None,
                 max_bytes=_DEFAULT_MAX_BYTES, max_depth=_DEFAULT_MAX_DEPTH,
                 max_steps=_DEFAULT_MAX_STEPS):
        for name, v in (("max_loop_iterations", max_loop_iterations), ("max_bytes", max_bytes),
                        ("max_depth", max_depth), ("max_steps", max_steps)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"Limits: {name} must be a non-negative int, got {v!r}")
        if timeout is not None:
            timeout = float(timeout)
            if not timeout >= 0 or timeout == float("inf"):
                raise ValueError(f"Limits: timeout must be a finite number of seconds >= 0, got {timeout!r}")
        self.max_loop_iterations = max_loop_iterations
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        self.max_steps = max_steps

    def __repr__(self):
        return (f"Limits(max_loop_iterations={self.max_loop_iterations}, timeout={self.timeout}, "
                f"max_bytes={self.max_bytes}, max_depth={self.max_depth}, max_steps={self.max_steps})")

    def __reduce__(self):
        return (Limits, (self.max_loop_iterations, self.timeout, self.max_bytes, self.max_depth,
                         self.max_steps))

    def __eq__(self, other):
        if not isinstance(other, Limits):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None


class Exported:
    """A traced program with the pytree structure of its arguments and
    results (`jax.export.Exported`); `limits` (a `Limits`) bounds its eager
    calls."""

    platforms = ("cpu",)
    nr_devices = 1
    calling_convention_version = _CALLING_CONVENTION_VERSION

    def __init__(self, fun_name, closed, in_tree, out_tree, determinism="default",
                 disabled_safety_checks=(), vjp=None, limits=None):
        self.fun_name = fun_name
        self.limits = Limits() if limits is None else limits
        self._closed = closed  # _core.ClosedJaxpr
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.determinism = determinism
        self.disabled_safety_checks = tuple(disabled_safety_checks)
        self.in_avals = tuple(ShapedArray.from_record(a) for a in closed.in_avals())
        self.out_avals = tuple(ShapedArray.from_record(a) for a in closed.out_avals())
        # How to get the VJP: None (unavailable: deserialized without one),
        # "trace" (differentiate the program), or an Exported already loaded.
        self._vjp = vjp

    @property
    def in_shardings_hlo(self):
        return (None,) * len(self.in_avals)

    @property
    def out_shardings_hlo(self):
        return (None,) * len(self.out_avals)

    @property
    def module_kept_var_idx(self):
        return tuple(range(len(self.in_avals)))

    @property
    def ordered_effects(self):
        from ._src.effects import is_ordered
        return tuple(sorted({e for e in self.jaxpr.effects if is_ordered(e)}, key=str))

    @property
    def unordered_effects(self):
        from ._src.effects import is_ordered
        return tuple(sorted({e for e in self.jaxpr.effects if not is_ordered(e)}, key=str))

    def mlir_module(self):
        """The program as text (microjax_rs's program text, not StableHLO)."""
        return str(self.jaxpr)

    def has_vjp(self):
        return self._vjp is not None

    def vjp(self):
        """The `Exported` of the VJP: it takes the primal arguments and one
        cotangent per result (flat, in that order) and returns one
        cotangent per argument (flat)."""
        if self._vjp is None:
            raise ValueError("No VJP is available")
        if isinstance(self._vjp, Exported):
            return self._vjp
        self._vjp = _vjp_of(self)
        return self._vjp

    @property
    def jaxpr(self):
        return ClosedJaxpr(self._closed)

    def __repr__(self):
        ins = ", ".join(a.str_short() for a in self.in_avals)
        outs = ", ".join(a.str_short() for a in self.out_avals)
        return f"Exported({self.fun_name}: ({ins}) -> ({outs}))"

    def serialize(self, vjp_order=0):
        """The program as bytes (see rust/core/src/export.rs for the format),
        with its VJPs `vjp_order` levels deep."""
        if not isinstance(vjp_order, int) or vjp_order < 0:
            raise ValueError(f"serialize: vjp_order must be a non-negative int, got {vjp_order!r}")
        info = {
            "version": _TREE_VERSION,
            "fun_name": self.fun_name,
            "in_tree": _encode_tree(self.in_tree),
            "out_tree": _encode_tree(self.out_tree),
            "disabled_checks": [c._name for c in self.disabled_safety_checks],
        }
        if vjp_order > 0:
            info["vjp"] = base64.b64encode(bytes(self.vjp().serialize(vjp_order - 1))).decode("ascii")
        from .custom_derivatives import inline_deferred_calls

        # calls of symbolic-zeros custom rules run as their traced functions
        program = inline_deferred_calls(self._closed)
        return _core.export_program(program, self.determinism, json.dumps(info))

    def call(self, *args, **kwargs):
        """Runs the program on arguments of the exported structure and types
        (under a trace it is staged as one `pjit`, so it composes with `jit`,
        `grad` and `vmap`). An eager call runs under `self.limits`: a
        `ValueError` after `max_loop_iterations` loop iterations or `max_steps` equations, a
        `TimeoutError` after `timeout` seconds."""
        leaves, in_tree = tree_flatten((args, kwargs))
        if in_tree != self.in_tree:
            raise ValueError(
                f"The invocation args and kwargs must have the same pytree structure as the "
                f"exported function: got {in_tree}, expected {self.in_tree}")
        for k, (x, want) in enumerate(zip(leaves, self.in_avals)):
            got = core.get_aval(x)
            if tuple(got.shape) != tuple(want.shape) or got.dtype_name != want.dtype_name:
                raise ValueError(
                    f"Exported {self.fun_name}: argument {k} has type {got.str_short()} "
                    f"but the exported function takes {want.str_short()}")
        if core.current_trace() is not None or any(isinstance(x, Tracer) for x in leaves):
            outs = core.Primitive("pjit").bind(*leaves, jaxpr=self.jaxpr, name=self.fun_name)
        else:
            vals = [core.to_array(x, want.dtype) for x, want in zip(leaves, self.in_avals)]
            limits = self.limits
            outs = self._closed.run(vals, self.determinism, limits.max_loop_iterations, limits.timeout,
                                    limits.max_steps, limits.max_bytes)
        return tree_unflatten(self.out_tree, outs)

    def __reduce__(self):
        # The limits travel with the program: a copy unpickled elsewhere (a
        # worker process) is bounded as this one is, raised limits included.
        return (_deserialize_with_limits, (self.serialize(), self.limits))


def _vjp_of(exp):
    """The VJP of `exp`'s program as an `Exported` of flat arguments."""
    from . import api
    from ._grad import vjp
    from .interpreters.partial_eval import ShapeDtypeStruct
    from .tree_util import tree_leaves

    n_in = len(exp.in_avals)
    program = exp.jaxpr

    def fun_vjp(*args):
        primals, cts = args[:n_in], args[n_in:]

        def run(*xs):
            return tuple(core.Primitive("pjit").bind(*xs, jaxpr=program, name=exp.fun_name))

        _, pullback = vjp(run, *primals)
        return tuple(tree_leaves(pullback(tuple(cts))))

    fun_vjp.__name__ = f"vjp_{exp.fun_name}"
    specs = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in exp.in_avals + exp.out_avals]
    return export(api.jit(fun_vjp))(*specs)


def export(fun_jit, *, platforms=None, disabled_checks=()):
    """`export(jit(f))(*args, **kwargs)` traces `f` for those arguments'
    shapes and dtypes (abstract `ShapeDtypeStruct`s are fine) and returns an
    `Exported`."""
    impl = getattr(fun_jit, "_impl", None)
    if impl is None:
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit!r}")
    if platforms is not None and any(p not in ("cpu",) for p in platforms):
        raise ValueError(f"export: unsupported platforms {platforms}; only 'cpu' is available")

    def do_export(*args, **kwargs):
        from .api import _bind_static, _check_leaf, _split_static, trace_to_jaxpr

        dyn, statics = _split_static(args, impl.static_argnums)
        kw_statics = {k: v for k, v in kwargs.items() if k in impl.static_argnames}
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in impl.static_argnames}
        f = _bind_static(impl.fun, statics, len(args)) if statics else impl.fun
        if kw_statics:
            import functools

            f = functools.partial(f, **kw_statics)
        leaves, in_tree = tree_flatten((tuple(dyn), dyn_kwargs))
        for x in leaves:
            _check_leaf(x)
            if any(isinstance(d, _SymbolicDim) for d in getattr(x, "shape", ())):
                raise NotImplementedError(
                    f"export: symbolic dimensions ({x.shape}) are not supported; microjax_rs has no "
                    f"shape polymorphism: export for concrete shapes")
        closed, out_tree, captures = trace_to_jaxpr(f, leaves, in_tree, impl.name)
        if captures:
            raise ValueError("export: the function closes over values of an enclosing "
                             "transformation; export it outside of jit/grad/vmap")
        # What `deserialize` would refuse (rank, nesting, sizes) is refused
        # now, as a ValueError, not at load time.
        _core.check_exportable(closed)
        # as JAX, pytrees without a serialization registration fail at serialize()
        return Exported(impl.name, closed, in_tree, out_tree,
                        config.read("microjax_determinism"), disabled_checks, vjp="trace")

    return do_export


def _deserialize_with_limits(blob, limits):
    """`deserialize(blob, limits=limits)` (the unpickler of `Exported`)."""
    return deserialize(blob, limits=limits)


def deserialize(blob, *, limits=None):
    """The `Exported` of bytes written by `Exported.serialize()`, checked against `limits` (a
    `Limits`; default `Limits()`), which then bound its eager calls."""
    if limits is None:
        limits = Limits()
    elif not isinstance(limits, Limits):
        raise TypeError(f"deserialize: limits must be an export.Limits, got {type(limits).__name__}")
    closed, meta, determinism = _core.load_program(bytes(blob), limits.max_bytes, limits.max_depth)
    try:
        info = json.loads(meta)
        if info.get("version") != _TREE_VERSION:
            raise ValueError(f"unsupported metadata version {info.get('version')!r}")
        in_tree = _decode_tree(info["in_tree"])
        out_tree = _decode_tree(info["out_tree"])
        name = info.get("fun_name", "<exported>")
        checks = tuple(DisabledSafetyCheck(c) for c in info.get("disabled_checks", ()))
        vjp_blob = info.get("vjp")
        vjp = deserialize(base64.b64decode(vjp_blob), limits=limits) if vjp_blob is not None else None
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"export.deserialize: malformed metadata: {e}") from None
    return Exported(name, closed, in_tree, out_tree, determinism, checks, vjp, limits)
