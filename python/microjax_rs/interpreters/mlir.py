"""`jax.interpreters.mlir`: how a primitive is compiled.

JAX lowers each primitive to MLIR through a rule registered here. microjax_rs
has no MLIR stage: a compiled program runs a user-defined primitive
(`jax.extend.core.Primitive`) by calling its `def_impl` implementation on
concrete arrays. So:

* `lower_fun(fun, multiple_results)` returns a rule meaning "compile the
  primitive as `fun`"; `register_lowering(prim, rule)` makes `fun` the
  primitive's implementation if it has none yet (with one, as in every
  library seen so far `fun` is that implementation, or computes the same).
* Any other lowering rule (a function emitting MLIR) is recorded in
  `_lowerings` and never called.
"""


class LoweredFun:
    """The rule `lower_fun` returns: the primitive computes `fun(*args, **params)`."""

    def __init__(self, fun, multiple_results):
        self.fun = fun
        self.multiple_results = bool(multiple_results)

    def __call__(self, ctx, *args, **params):
        raise NotImplementedError(
            "microjax_rs does not lower to MLIR; the primitive runs its implementation")

    def __repr__(self):
        return f"lower_fun({getattr(self.fun, '__name__', self.fun)!r}, multiple_results={self.multiple_results})"


_lowerings = {}  # (primitive, platform) -> rule


def lower_fun(fun, multiple_results=True):
    """A lowering rule that computes the primitive as `fun(*args, **params)`."""
    return LoweredFun(fun, multiple_results)


def register_lowering(prim, rule, platform=None, **kwargs):
    """Register `rule` as the lowering of `prim` (see the module doc)."""
    _lowerings[(prim, platform)] = rule
    if isinstance(rule, LoweredFun) and getattr(prim, "_impl", True) is None:
        fun = rule.fun
        prim.def_impl(fun)
    return rule


__all__ = ["LoweredFun", "lower_fun", "register_lowering"]
