"""Effects of jaxpr equations (JAX's `jax._src.effects`).

The core marks each equation with the name of its effect kind (a string:
"ordered_io" for host callbacks, ...). The Python view of a jaxpr
(`core.Jaxpr`) shows JAX's effect objects where JAX has them: a
`jax.debug.callback` / `jax.debug.print` equation has `debug_effect` (an
instance of `DebugEffect`), or `ordered_debug_effect` with `ordered=True`.
An equation holding jaxprs (`scan`, `cond`, `pjit`, ...) has their effects;
other equations keep the core's effect name.

Each effect object names the core's kind of it in `kind`.
"""


class Effect:
    """A side effect of an equation. `kind` is the core's name of it."""

    kind = None

    def __repr__(self):
        return type(self).__name__


class DebugEffect(Effect):
    """The effect of an unordered `jax.debug.callback` / `jax.debug.print`:
    never removed by dead-code elimination, not ordered with other effects."""

    kind = "ordered_io"


class OrderedDebugEffect(Effect):
    """The effect of a `jax.debug.callback` / `jax.debug.print` with
    `ordered=True`: runs in program order with the other ordered effects."""

    kind = "ordered_io"


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()


def is_ordered(effect):
    """Whether `effect` is ordered (an effect object, or a core effect name)."""
    if isinstance(effect, Effect):
        return isinstance(effect, OrderedDebugEffect)
    return "ordered" in str(effect)


def eqn_effects(prim_name, params, core_effect):
    """The effects of one equation, as the Python view of a jaxpr shows them."""
    if core_effect == "none":
        return set()
    if prim_name == "debug_callback":
        host = getattr(params.get("callback"), "fun", None)
        return {ordered_debug_effect if getattr(host, "ordered", False) else debug_effect}
    # an equation holding jaxprs (scan, cond, pjit, ...) has their effects
    inner = set()
    for v in params.values():
        for j in (v if type(v) is tuple else (v,)):
            if hasattr(j, "jaxpr") and hasattr(j, "consts"):
                inner |= j.effects
    return inner or {core_effect}
