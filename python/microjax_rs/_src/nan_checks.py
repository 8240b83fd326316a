"""`jax_debug_nans` / `jax_debug_infs`: results checked for NaN / Inf.

With either option on (`config.update("jax_debug_nans", True)` or the
environment variable `JAX_DEBUG_NANS=1`), the Rust fast paths step aside
(`_core.set_debug_checks`) and

* every eagerly evaluated primitive's results are checked: a NaN raises
  `FloatingPointError: invalid value (nan) encountered in <primitive>` (Inf:
  `divide by zero`... as JAX words it, see `_message`) from the user's call;
* every program run at top level (`jit`, and the programs `grad`, `vmap`
  and the other transforms run) has its outputs checked; on a NaN the program
  is replayed equation by equation, eagerly, to find the first equation that
  produces it, and the error names that primitive and the user's source line
  it was traced from (a note on the exception). If the replay produces no
  NaN, the error says so, as JAX's does for the de-optimized function.
"""
import numpy as np

from .. import core, dtypes
from ..config import config

__all__ = ["check_eager", "check_program", "enabled"]


def enabled():
    return bool(config.jax_debug_nans or config.jax_debug_infs)


def _special(x):
    """"nan" / "inf" when `x` holds a value the active options reject."""
    name = getattr(x, "dtype_name", None)
    if name is None or not dtypes.is_float_name(name):
        return None
    a = np.asarray(x)
    if a.dtype.kind not in "fc":
        a = a.astype(np.float32)
    if config.jax_debug_nans and np.isnan(a).any():
        return "nan"
    if config.jax_debug_infs and np.isinf(a).any():
        return "inf"
    return None


def _message(kind, where):
    if kind == "nan":
        return f"invalid value (nan) encountered in {where}"
    return f"divide by zero (inf) encountered in {where}"


def _raise(kind, where, source=None):
    err = FloatingPointError(_message(kind, where))
    if source:
        err.add_note(f"The operation was traced at {source}.")
    raise err


def check_eager(prim_name, outs):
    """Checks the results of one eagerly evaluated primitive."""
    for o in outs:
        kind = _special(o)
        if kind is not None:
            _raise(kind, prim_name, core.source_info(2))


def check_program(closed, inputs, outs, name):
    """Checks the outputs of a program run at top level (`closed`: the
    program handle, `inputs` its arguments); on a NaN/Inf finds the equation
    that produced it by replaying the program eagerly."""
    kind = next((k for k in map(_special, outs) if k is not None), None)
    if kind is None:
        return
    _replay(core.ClosedJaxpr(closed), list(inputs))
    raise FloatingPointError(
        f"{_message(kind, name)}. Because jax_config.debug_nans.value and/or "
        f"config.jax_debug_infs is set, the de-optimized function (i.e., the function as if the "
        f"`jit` decorator were removed) was called in an attempt to get a more precise error "
        f"message. However, the de-optimized function did not produce invalid values during its "
        f"execution. This behavior can result from `jit` optimizations causing the invalid value "
        f"to be produced. It may also arise from having nan/inf literals as inputs or outputs, "
        f"like `jax.numpy.array(jax.numpy.nan)`.")


def _replay(cj, inputs):
    """Evaluates the equations of `cj` one by one, checking each result;
    raises at the first one producing a NaN/Inf (naming its primitive and
    source line). Calls are entered, other higher-order equations are run
    whole."""
    jaxpr = cj.jaxpr
    env = {}
    for v, c in zip(jaxpr.constvars, cj.consts):
        env[v] = c
    for v, x in zip(jaxpr.invars, inputs):
        env[v] = x

    def read(a):
        return a.val if isinstance(a, core.Literal) else env[a]

    for eqn in jaxpr.eqns:
        vals = [read(a) for a in eqn.invars]
        name = eqn.primitive.name
        callee = eqn.params.get("jaxpr") if name in ("pjit", "checkpoint") else None
        if callee is not None:
            outs = _replay(callee, vals)
        else:
            try:
                prim = core.Primitive(name)
                outs = core.eval_primitive(prim, vals, dict(eqn.params), check=False)
            except FloatingPointError:
                raise
            except Exception:  # an equation the replay cannot evaluate alone
                return None
            if not prim.multiple_results:
                outs = [outs]
        for o in outs:
            kind = _special(o)
            if kind is not None:
                _raise(kind, name, eqn.source_info)
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    return [read(a) for a in jaxpr.outvars]
