"""Batch mode of tracing (vmap).

A `BatchTrace` records only equations with a batched operand; everything
else runs one level down, so values derived only from `in_axes=None`
arguments stay concrete, as in JAX. Inputs are traced at their per-example
avals; Rust's `batch_jaxpr` adds the batch axis to the recorded program and
the result runs one level down (see `ad.run_at`)."""
from .. import core
from ..core import StagingTrace, Tracer
from .ad import bind_at


class BatchTrace(StagingTrace):
    def __init__(self, fun_name, parent, axis_size, axis_name):
        super().__init__(fun_name)
        self.parent = parent
        self.axis_size = axis_size
        self.axis_name = axis_name

    def process_primitive(self, prim, args, params):
        for a in args:
            if type(a) is Tracer and a._trace is self:
                return super().process_primitive(prim, args, params)
        return bind_at(self.parent, prim, args, params)

    def __repr__(self):
        return f"BatchTrace({self.fun_name}, axis_size={self.axis_size})"
