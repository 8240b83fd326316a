"""`jax.debug`: printing and callbacks that run inside transformed code."""
from ._callback import debug_callback as callback


def print(fmt, *args, ordered=False, **kwargs):  # noqa: A001 - JAX's name
    """`jax.debug.print("x = {x}", x=x)`: formats with `str.format` on the
    runtime values (NumPy arrays), eagerly, under `jit`, `vmap` (once per
    member), `grad` (primal values) and in loop bodies (each iteration)."""
    import builtins

    def show(*a, **k):
        builtins.print(fmt.format(*a, **k))

    callback(show, *args, ordered=ordered, **kwargs)


def plan_stats(fun, *args, **kwargs):
    """What the compiled CPU executor makes of `fun` on `args` (a
    microjax_rs extension, not a JAX function): traces `fun` as `jit` would,
    compiles the program, runs it once and returns a dict with

    * `eqns`, `eqns_simplified`: equations before and after inlining, CSE,
      identity removal and DCE;
    * `fusion_groups`, `fused_eqns`: elementwise groups run as one pass, and
      the equations inside them; `typed_groups`: groups whose members are
      all float32 (or all float64) ops with slice kernels, run without any
      per-chunk allocation; `steps`: what a run walks;
    * `peak_bytes`: most bytes of arrays the run held at once (arguments,
      intermediates and outputs, each buffer once); `arg_bytes`,
      `out_bytes`: bytes of the arguments and of the results.
    """
    from . import api, core
    from .tree_util import tree_leaves

    closed = api.make_jaxpr(lambda *a: fun(*a, **kwargs))(*args)
    leaves = [core.to_array(x) for x in tree_leaves(args)]
    return dict(closed._handle.plan_stats(leaves))


__all__ = ["callback", "plan_stats", "print"]
