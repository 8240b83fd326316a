"""Batch mode of tracing (vmap).

A `BatchTrace` records only equations with a batched operand; everything
else runs one level down, so values derived only from `in_axes=None`
arguments stay concrete, as in JAX. Inputs are traced at their per-example
avals; Rust's `batch_jaxpr` adds the batch axis to the recorded program and
the result runs one level down (see `ad.run_at`)."""
from .. import _core, core
from ..core import ClosedJaxpr, StagingTrace, Tracer
from .ad import bind_at, replay, run_split

# Collectives and the params holding their axis names.
_AXIS_PARAMS = {"psum": "axes", "pmax": "axes", "pmin": "axes", "all_gather": "axis_name",
                "reduce_scatter": "axis_name", "all_to_all": "axis_name", "axis_index": "axis_name",
                "ppermute": "axis_name"}


def axis_env():
    """Name -> size of the named axes bound by the active maps (innermost wins)."""
    env = {}
    for t in core._state.stack:
        name = getattr(t, "axis_name", None)
        if name is not None:
            env[name] = t.axis_size
    return env


def axis_env_key():
    """The active named axes as a hashable key (jit traces per axis environment)."""
    stack = core._state.stack
    if not stack:
        return ()
    return tuple((t.axis_name, t.axis_size) for t in stack if getattr(t, "axis_name", None) is not None)


def names_axis(prim, params, name):
    """Whether the equation names axis `name` (a collective over it, or a
    sub-jaxpr containing one): it must be batched even with no batched operand."""
    key = _AXIS_PARAMS.get(prim.name)
    if key is not None:
        names = params.get(key)
        return name == names or (isinstance(names, tuple) and name in names)
    for v in params.values():
        if isinstance(v, ClosedJaxpr) and name in _core.jaxpr_axis_names(v._handle):
            return True
    return False


class BatchTrace(StagingTrace):
    captures_device_arrays = True  # its program runs where a GpuArray is

    def __init__(self, fun_name, parent, axis_size, axis_name):
        super().__init__(fun_name)
        self.parent = parent
        self.axis_size = axis_size
        self.axis_name = axis_name

    def process_primitive(self, prim, args, params):
        for a in args:
            if type(a) is Tracer and a._trace is self:
                return super().process_primitive(prim, args, params)
        if self.axis_name is not None and names_axis(prim, params, self.axis_name):
            return super().process_primitive(prim, args, params)
        return bind_at(self.parent, prim, args, params)

    def run_program(self, closed, inputs):
        """Only the part of the program that reads a batched value is
        recorded (see `ad.run_split`); a program using a collective over this
        trace's axis is replayed, since those equations are batched even
        without a batched operand."""
        if self.axis_name is not None and self.axis_name in _core.jaxpr_axis_names(closed):
            return replay(closed, inputs)
        return run_split(self, closed, inputs, self.splice)

    def __repr__(self):
        return f"BatchTrace({self.fun_name}, axis_size={self.axis_size})"


class _BatcherRegistry(dict):
    """Primitive -> batching rule; registering drops its traced rules."""

    def __setitem__(self, prim, rule):
        super().__setitem__(prim, rule)
        changed = getattr(prim, "_rules_changed", None)
        if changed is not None:
            changed()

    def __delitem__(self, prim):
        super().__delitem__(prim)
        changed = getattr(prim, "_rules_changed", None)
        if changed is not None:
            changed()


# Batching rules of user-defined primitives (JAX's `batching.primitive_batchers`):
# `rule(batched_args, batch_dims, **params) -> (out, out_dim)`, a batch dim
# being an int or `not_mapped`.
primitive_batchers = _BatcherRegistry()
# Rules that also see the mapped axis (JAX's `batching.axis_primitive_batchers`):
# `rule(axis_size, axis_name, trace_type, batched_args, batch_dims, **params)`;
# used for a primitive with no entry in `primitive_batchers`. Here the rule is
# traced once per pattern of operand types for any map, so it is given
# `axis_name=None` and `trace_type=None`.
axis_primitive_batchers = _BatcherRegistry()
not_mapped = None
