"""Tracing a Python function to a closed jaxpr (`trace_to_jaxpr`) on
abstract inputs (`ShapeDtypeStruct`s or arrays), and whether `jit` is
disabled. `jit`, the control-flow primitives, custom derivatives and export
all trace through here."""
import os
import threading

import numpy as np

from .. import _core, core, dtypes
from ..config import config
from ..core import ArrayImpl, ShapedArray, StagingTrace, Tracer
from ..tree_util import tree_flatten, tree_unflatten


class ShapeDtypeStruct:
    """Shape, dtype and weak type of an array, without data (jax.ShapeDtypeStruct)."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, weak_type=False, sharding=None):
        self.shape = tuple(shape)
        self.dtype = dtypes.np_dtype(dtypes.dtype_name(dtype))
        self.weak_type = weak_type
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    @classmethod
    def like(cls, x):
        """The shape, dtype and weak type of `x` (an array, a tracer, a
        `ShapeDtypeStruct` or a Python/NumPy scalar), with its sharding where
        it has one.

        Example:
          >>> import microjax_rs as jax
          >>> jax.ShapeDtypeStruct.like(1.0)
          ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)
        """
        aval = _leaf_aval(x)
        return cls(aval.shape, aval.dtype, weak_type=aval.weak_type, sharding=getattr(x, "sharding", None))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))


def _leaf_aval(x):
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, dtypes.canonical_name(dtypes.dtype_name(x.dtype)), x.weak_type)
    try:
        return core.get_aval(x)
    except TypeError:
        raise
    except Exception as e:  # pragma: no cover - defensive
        raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type") from e


def _fun_name(fun):
    return getattr(fun, "__name__", None) or type(fun).__name__


# Test suites set MICROJAX_CHECK_ROUNDTRIP=1: every traced jaxpr is then
# printed in canonical form, parsed back and compared (parse ∘ canonical = id).
_CHECK_ROUNDTRIP = os.environ.get("MICROJAX_CHECK_ROUNDTRIP", "") == "1"


def _check_roundtrip(closed):
    text = closed.canonical()
    if "host_callback_" in text or _core.holds_dynamic(closed):
        return  # host functions and Python-written primitive rules have no text form
    try:
        back = _core.parse(text, closed.consts())
    except ValueError as e:
        if str(e).startswith("limit exceeded"):
            return  # over the parser's size limits (absurd shapes): no loadable text form
        raise
    if back != closed:
        raise AssertionError(f"canonical round trip changed the jaxpr:\n{text}")


def trace_to_jaxpr(fun, leaves, in_tree, name=None):
    """Traces `fun` on abstract leaves; returns (ClosedJaxpr handle, out_tree,
    captured outer tracers)."""
    avals = [_leaf_aval(x) for x in leaves]
    trace = StagingTrace(name or _fun_name(fun))
    with core.new_trace(trace):
        in_tracers = [trace.new_arg(a) for a in avals]
        args, kwargs = tree_unflatten(in_tree, in_tracers)
        out = fun(*args, **kwargs)
        out_leaves, out_tree = tree_flatten(out)
        for x in out_leaves:
            _check_out_leaf(x, trace.fun_name)
        atoms = [trace.to_atom(x) for x in out_leaves]
        closed = trace.builder.build(atoms)
    if _CHECK_ROUNDTRIP:
        _check_roundtrip(closed)
    return closed, out_tree, trace.captures


def _check_out_leaf(x, name):
    if isinstance(x, (ArrayImpl, Tracer, np.ndarray, np.generic, bool, int, float)):
        return
    raise TypeError(
        f"The function {name} returned a value of type {type(x)}, which is not a valid "
        f"JAX type; outputs must be arrays, scalars or pytrees of them")


class _disable_jit_ctx(threading.local):
    depth = 0


_disable = _disable_jit_ctx()  # `jax.disable_jit()` nesting depth (api.disable_jit)


def jit_disabled():
    """Whether `jit` (and the control-flow primitives) run Python instead."""
    return bool(_disable.depth or config.jax_disable_jit)
