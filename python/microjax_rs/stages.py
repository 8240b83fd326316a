"""`jax.stages`: the steps of ahead-of-time compilation.

`jax.jit(f)` returns a `Wrapped` function. Its stages, as JAX's
(https://docs.jax.dev/en/latest/aot.html):

* `jit(f).trace(*args, **kwargs)` → `Traced`: the program traced for the
  arguments' shapes and dtypes (`.jaxpr`, `.out_info`, `.args_info`);
* `.lower()` (or `jit(f).lower(...)`) → `Lowered`: the program handed to the
  compiler (`.as_text()`, `.compiler_ir()`, `.in_tree`, `.cost_analysis()`);
* `.compile()` → `Compiled`: the CPU executor's plan, callable with the
  dynamic arguments (static ones are baked in), with `.cost_analysis()` and
  `.memory_analysis()` computed from the plan.

What differs from JAX: microjax_rs's compiler input is its own program text
(the jaxpr as `make_jaxpr` prints it), not StableHLO, so `as_text()` and
`compiler_ir()` show that program; `Compiled.as_text()` shows the program the
plan runs after simplification (inlined calls, shared subexpressions, dead
code removed).
"""
from __future__ import annotations

import abc
import dataclasses
from typing import Union

from . import _core, core
from ._src import profiling as _profiling
from .core import ArrayImpl, ClosedJaxpr, Tracer
from .errors import JaxRuntimeError
from .interpreters.partial_eval import ShapeDtypeStruct, _leaf_aval
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["ArgInfo", "Compiled", "CompiledMemoryStats", "CompilerOptions", "Lowered", "OutInfo", "Traced",
           "Wrapped"]

# The type of `Lowered.compile`'s `compiler_options`: option names to values
# (JAX's `jax.stages.CompilerOptions`, the same generic alias).
CompilerOptions = dict[str, Union[str, bool]]  # Union: Python 3.9 has no `str | bool` at run time

OutInfo = ShapeDtypeStruct


class ArgInfo:
    """What a stage knows of one argument leaf: its abstract value and
    whether it is donated."""

    __slots__ = ("_aval", "donated")

    def __init__(self, _aval, donated):
        self._aval = _aval
        self.donated = donated

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)

    def __repr__(self):
        return f"ArgInfo(shape={self.shape}, dtype={self.dtype.name}, donated={self.donated})"


@dataclasses.dataclass(frozen=True)
class CompiledMemoryStats:
    """Bytes one run of a compiled program holds (`Compiled.memory_analysis()`).
    `temp_size_in_bytes` is the most bytes of intermediate values live at
    once; `peak_memory_in_bytes` adds the arguments and constants live at
    that point. Nothing is aliased and no code is generated, so those figures
    are 0."""

    argument_size_in_bytes: int
    output_size_in_bytes: int
    temp_size_in_bytes: int
    constant_size_in_bytes: int
    peak_memory_in_bytes: int
    alias_size_in_bytes: int = 0
    generated_code_size_in_bytes: int = 0
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_generated_code_size_in_bytes: int = 0


class Wrapped(abc.ABC):
    """The type of what `jax.jit` returns (for `isinstance` checks): a
    function with `trace`, `lower` and `eval_shape`."""


Wrapped.register(_core.JitFunction)


def _type_str(aval):
    return f"{aval.dtype_name}[{','.join(map(str, aval.shape))}]"


class _Specialization:
    """A function traced for one call signature: what every stage carries."""

    def __init__(self, closed, in_tree, out_tree, in_avals, donated, names, fun_name):
        self.closed = closed
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.in_avals = in_avals
        self.donated = donated
        self.names = names  # a readable path per argument leaf
        self.fun_name = fun_name

    def args_info(self):
        return tree_unflatten(self.in_tree, [ArgInfo(a, d) for a, d in zip(self.in_avals, self.donated)])

    def out_info(self):
        outs = [ShapeDtypeStruct(a.shape, a.dtype_name, a.weak_type) for a in self.closed.out_avals()]
        return tree_unflatten(self.out_tree, outs)


def _leaf_names(fun, dyn_args, dyn_kwargs):
    """A path naming each argument leaf as JAX's errors do: the parameter
    name for a positional argument when the signature gives one (`x`,
    `params['w']`), `args[i]` otherwise, the keyword for a keyword argument
    (`vmap`'s leaf names without their "argument " prefix)."""
    from ._vmap import _leaf_names as vmap_leaf_names

    prefix = "argument "
    return [n[len(prefix):] if n.startswith(prefix) else n
            for n in vmap_leaf_names(tuple(dyn_args), dyn_kwargs, fun)]


def specialize(jitted, args, kwargs):
    """Traces the jitted function `jitted` (`api._Jitted`) for `args`/`kwargs`
    through `jit`'s trace cache."""
    traced = jitted.trace_call(args, kwargs)
    closed, out_tree, leaves, in_tree, dyn, dyn_kwargs, donated = traced
    in_avals = [_leaf_aval(x) for x in leaves]
    names = _leaf_names(jitted.fun, dyn, dyn_kwargs)
    return _Specialization(closed, in_tree, out_tree, in_avals, donated, names, jitted.name)


class Traced:
    """A function traced for particular argument types (`jit(f).trace(...)`)."""

    def __init__(self, spec):
        self._spec = spec

    @property
    def jaxpr(self):
        return ClosedJaxpr(self._spec.closed)

    @property
    def out_info(self):
        return self._spec.out_info()

    @property
    def args_info(self):
        return self._spec.args_info()

    @property
    def in_avals(self):
        return self._spec.in_avals

    @property
    def fun_name(self):
        return self._spec.fun_name

    def lower(self, *, lowering_platforms=None, _private_parameters=None):
        _check_platforms(lowering_platforms)
        return Lowered(self._spec)


def _check_platforms(platforms):
    if platforms is not None and any(p not in ("cpu",) for p in platforms):
        raise NotImplementedError(
            f"lowering for platforms {tuple(platforms)} is not supported; microjax_rs lowers for 'cpu'")


class Lowered:
    """A traced function lowered for the compiler (`jit(f).lower(...)`)."""

    def __init__(self, spec):
        self._spec = spec

    in_tree = property(lambda self: self._spec.in_tree)
    out_tree = property(lambda self: self._spec.out_tree)
    args_info = property(lambda self: self._spec.args_info())
    out_info = property(lambda self: self._spec.out_info())

    def as_text(self, dialect=None, *, debug_info=False):
        """The program the compiler receives, as text (microjax_rs's program
        text, as `make_jaxpr` prints it; `dialect` is not used)."""
        return str(ClosedJaxpr(self._spec.closed))

    def compiler_ir(self, dialect=None):
        """The program the compiler receives (a `ClosedJaxpr`)."""
        return ClosedJaxpr(self._spec.closed)

    def cost_analysis(self):
        """Flops, transcendentals and bytes accessed of one run (a dict)."""
        return self.compile().cost_analysis()

    def compile(self, compiler_options: CompilerOptions | None = None):
        """The `Compiled` program. `compiler_options` for XLA's GPU backend
        (`xla_gpu_*`) have no effect on the CPU executor and are accepted, as
        JAX's CPU backend accepts them; any other option raises
        `UnsupportedCompilerOption` (a `JaxRuntimeError`, JAX's type for an
        option its compiler rejects, and a `NotImplementedError`)."""
        unsupported = sorted(k for k in (compiler_options or {}) if not str(k).startswith("xla_gpu_"))
        if unsupported:
            raise UnsupportedCompilerOption(f"compiler_options are not supported (got {unsupported})")
        from .api import _runnable

        program = _runnable(self._spec.closed)
        if not _profiling.ACTIVE:
            return Compiled(self._spec, _core.CompiledProgram(program))
        return Compiled(self._spec, _profiling.timed(f"build_plan({self._spec.fun_name})", "compile",
                                                     _core.CompiledProgram, program))


class UnsupportedCompilerOption(JaxRuntimeError, NotImplementedError):
    """A compiler option the CPU executor does not implement."""


class Compiled:
    """A lowered function compiled into the CPU executor's plan. Called with
    the dynamic arguments of the traced call (static arguments are part of
    the program); arguments of other types raise `TypeError`, as do tracers
    (compiled functions are not transformed)."""

    def __init__(self, spec, program):
        self._spec = spec
        self._program = program

    in_tree = property(lambda self: self._spec.in_tree)
    out_tree = property(lambda self: self._spec.out_tree)
    args_info = property(lambda self: self._spec.args_info())
    out_info = property(lambda self: self._spec.out_info())

    @property
    def input_formats(self):
        """The layout of every argument leaf (row-major), as the pytree
        `(args, kwargs)` of the call."""
        return tree_unflatten(self._spec.in_tree, [Format(Layout(tuple(range(len(a.shape)))))
                                                   for a in self._spec.in_avals])

    @property
    def output_formats(self):
        outs = [Format(Layout(tuple(range(len(a.shape))))) for a in self._spec.closed.out_avals()]
        return tree_unflatten(self._spec.out_tree, outs)

    input_layouts = input_formats
    output_layouts = output_formats

    def as_text(self):
        """The program the plan runs (after simplification), as text."""
        return self._program.simplified_text()

    def cost_analysis(self):
        """`{"flops", "transcendentals", "bytes accessed"}` of one run,
        counted on the plan (XLA's cost model: see `exec/compiled/analysis.rs`)."""
        return dict(self._program.cost_analysis())

    def memory_analysis(self):
        m = self._program.memory_analysis()
        return CompiledMemoryStats(
            argument_size_in_bytes=m["argument_size_in_bytes"],
            output_size_in_bytes=m["output_size_in_bytes"],
            temp_size_in_bytes=m["temp_size_in_bytes"],
            constant_size_in_bytes=m["constant_size_in_bytes"],
            peak_memory_in_bytes=m["peak_bytes"],
        )

    def runtime_executable(self):
        """The compiled plan (a `microjax_rs._core.CompiledProgram`)."""
        return self._program

    def __call__(self, *args, **kwargs):
        spec = self._spec
        leaves, in_tree = tree_flatten((args, kwargs))
        for x in leaves:
            if isinstance(x, Tracer):
                raise TypeError(
                    "Cannot apply JAX transformations to a function lowered and compiled for a "
                    f"particular signature. Detected argument of Tracer type {type(x)}.")
        if in_tree != spec.in_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it was "
                f"called with: compiled for {spec.in_tree}, called with {in_tree}.")
        avals = [_leaf_aval(x) for x in leaves]
        bad = [(n, a, b) for n, a, b in zip(spec.names, spec.in_avals, avals)
               if tuple(a.shape) != tuple(b.shape) or a.dtype_name != b.dtype_name]
        if bad:
            lines = "\n".join(f"Argument '{n}' compiled with {_type_str(a)} and called with {_type_str(b)}"
                              for n, a, b in bad)
            raise TypeError("Argument types differ from the types for which this computation was "
                            f"compiled. The mismatches are:\n{lines}")
        vals = [x if type(x) is ArrayImpl else core.to_array(x) for x in leaves]
        if _profiling.ACTIVE:
            outs = _profiling.timed(f"execute({spec.fun_name})", "jit", self._program.run, vals)
        else:
            outs = self._program.run(vals)
        return tree_unflatten(spec.out_tree, outs)


class Layout:
    """The order of an array's axes in memory, major to minor
    (`jax.experimental.layout.Layout`)."""

    def __init__(self, major_to_minor):
        self.major_to_minor = tuple(major_to_minor)

    def __repr__(self):
        return f"Layout(major_to_minor={self.major_to_minor})"

    def __eq__(self, other):
        return isinstance(other, Layout) and other.major_to_minor == self.major_to_minor

    def __hash__(self):
        return hash(self.major_to_minor)


class Format:
    """A layout and a sharding (`jax.experimental.layout.Format`); arrays on
    one host have no sharding."""

    def __init__(self, layout=None, sharding=None):
        self.layout = layout
        self.sharding = sharding

    def __repr__(self):
        return f"Format({self.layout!r}, {self.sharding!r})"

    def __eq__(self, other):
        return isinstance(other, Format) and (self.layout, self.sharding) == (other.layout, other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))
