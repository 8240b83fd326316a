"""`jax.custom_batching`: functions with a custom rule for `vmap`.

A `custom_vmap` function called under a trace binds the user-defined
primitive `custom_vmap_call`, whose params are the traced function (`call`,
a ClosedJaxpr: the equation has its effects, so `jit` keeps a body that
prints even when its results are unused) and the user's rule (`rule`, a
`_Rule`). Eagerly and under `jit` it runs `call`; when `vmap` meets it (also
through `jit(vmap(f))`, `vmap(jit(f))` and nested maps) the core asks for its
batching rule, which runs the user's rule on the batched operands.

Forward mode works: the JVP of the call is a second `custom_vmap_call` on
(primals, tangents) whose rule is the JVP of the user's rule, so
`vmap(jvp(f))` batches with the rule too. Reverse mode of the call itself
(`grad(f)`, `vjp`, `linearize`, `vmap(grad(f))`) raises JAX's ValueError;
`grad(vmap(f))` differentiates what the rule computed.
"""
import functools
import inspect

from . import core
from .core import ClosedJaxpr
from .interpreters import ad, batching
from .interpreters.partial_eval import trace_to_jaxpr
from .tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten

__all__ = ["custom_vmap", "sequential_vmap"]

custom_vmap_p = core.Primitive("custom_vmap_call")
custom_vmap_p.multiple_results = True

_LINEARIZE_ERROR = ("Linearization failed to produce known values for all output primals. This is "
                    "typically caused by attempting to differentiate a function uses an operation that "
                    "does not support reverse-mode autodiff.")
_CLOSED_OVER_BATCHED = ("a custom_vmap function closes over a value that vmap batches; pass it as an "
                        "argument of the function instead")


def _fun_name(f):
    return getattr(f, "__name__", None) or type(f).__name__


class _Rule:
    """The `rule` param of a `custom_vmap_call`: the batching rule
    `fn(axis_size, in_batched, *args) -> (out, out_batched)` on the arguments
    of structure `in_tree` (the first operands; the last `num_consts` are
    values the function closes over), giving outputs of structure
    `out_tree`. Params are equal by identity: one object per signature, so a
    function traced again makes an equal equation (and reuses the core's
    traced rules)."""

    def __init__(self, fn, in_tree, out_tree, num_consts):
        self.fn = fn
        self.in_tree, self.out_tree, self.num_consts = in_tree, out_tree, num_consts

    def __repr__(self):
        return f"<custom vmap rule {_rule_name(self.fn)}>"


_RULES = {}


def _rule(fn, in_tree, out_tree, num_consts):
    sig = (fn, in_tree, out_tree, num_consts)
    rule = _RULES.get(sig)
    if rule is None:
        rule = _RULES[sig] = _Rule(fn, in_tree, out_tree, num_consts)
    return rule


def _rule_name(fn):
    return getattr(fn, "__name__", "<unnamed rule>")


class custom_vmap:
    """A function with a custom `vmap` rule (JAX's
    `jax.custom_batching.custom_vmap`).

    Decorate a function, then register its rule with `def_vmap`. Called
    eagerly, under `jit` or under forward-mode differentiation it computes the
    function; under `vmap` the rule computes the batched result instead.
    Reverse-mode differentiation of the function itself is not supported (as
    in JAX); combine it with `custom_vjp` (outside) for that."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule):
        """Registers `vmap_rule(axis_size, in_batched, *args) -> (out,
        out_batched)`: `in_batched` is a list, one pytree of bools per
        argument, saying which argument leaves are batched (those have the
        mapped axis, of size `axis_size`, in front); `out_batched` is a pytree
        of bools of the output's structure (or a prefix bool) saying which
        outputs carry the mapped axis in front. Returns the rule unchanged."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = _fun_name(self.fun)
        args = _resolve_kwargs(self.fun, args, kwargs, name)
        if not self.vmap_rule:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} using def_vmap.")
        if core.current_trace() is None:
            return self.fun(*args)
        leaves, in_tree = tree_flatten(args)

        def flat(*ls):
            return self.fun(*tree_unflatten(in_tree, list(ls)))

        closed, out_tree, captures = trace_to_jaxpr(flat, leaves, tree_structure((tuple(leaves), {})), name)
        rule = _rule(self.vmap_rule, in_tree, out_tree, len(captures))
        outs = custom_vmap_p.bind(*leaves, *captures, call=ClosedJaxpr(closed), rule=rule)
        return tree_unflatten(out_tree, outs)


def _resolve_kwargs(fun, args, kwargs, name):
    """The arguments as one positional tuple (JAX's TypeError when they do
    not bind to `fun`'s signature)."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        if kwargs:
            raise TypeError(f"custom_vmap function {name}: keyword arguments need an inspectable "
                            f"signature") from None
        return tuple(args)
    try:
        ba = sig.bind(*args, **kwargs)
        ba.apply_defaults()
        if ba.kwargs:
            raise TypeError("keyword-only arguments are not supported")
    except TypeError as e:
        raise TypeError(f"The input arguments to the custom_vmap-decorated function {name} could not be "
                        f"resolved to positional-only arguments. Binding failed with the error:\n{e}") from e
    return tuple(ba.args)


# ------------------------------------------------------------ primitive rules


def _impl(*args, call, rule):
    return core.eval_jaxpr(call.jaxpr, call.consts, *args)


def _abstract_eval(*avals, call, rule):
    del avals
    return call.out_avals


def _moved_to_front(x, d):
    from . import numpy as jnp

    return x if d is None or d == 0 else jnp.moveaxis(x, d, 0)


def _check_rule_trees(fn, want_tree, out_tree, batched_tree):
    if out_tree != batched_tree:
        raise ValueError(f"structure of output value and output batching specification returned by custom "
                         f"vmap rule ({_rule_name(fn)}) do not match.\nOutput values: {out_tree}\n"
                         f"Batching spec: {batched_tree}")
    if out_tree != want_tree:
        raise ValueError(f"structure of output returned by custom vmap rule ({_rule_name(fn)}) does not "
                         f"match that of original custom-vmapped function.\nOriginal output: {want_tree}\n"
                         f"Rule output: {out_tree}")


def _call_rule(entry, axis_size, in_batched_leaves, arg_leaves):
    """Runs the user's rule; returns (flat outputs, flat batched flags)."""
    in_batched = list(tree_unflatten(entry.in_tree, list(in_batched_leaves)))
    args = tree_unflatten(entry.in_tree, list(arg_leaves))
    res = entry.fn(axis_size, in_batched, *args)
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise TypeError(f"custom vmap rule ({_rule_name(entry.fn)}) must return a pair (output, "
                        f"output batching specification), got {res!r}")
    out, out_batched = res
    flat_out, out_tree = tree_flatten(out)
    flat_batched, batched_tree = tree_flatten(out_batched)
    _check_rule_trees(entry.fn, entry.out_tree, out_tree, batched_tree)
    return flat_out, [bool(b) for b in flat_batched]


def _batch(axis_size, axis_name, trace_type, args, dims, *, call, rule):
    del axis_name, trace_type
    entry = rule
    n = len(args) - entry.num_consts
    if any(d is not None for d in dims[n:]):
        raise ValueError(_CLOSED_OVER_BATCHED)
    moved = [_moved_to_front(x, d) for x, d in zip(args[:n], dims[:n])]
    outs, batched = _call_rule(entry, axis_size, [d is not None for d in dims[:n]], moved)
    result = []
    for o, b, want in zip(outs, batched, call.out_avals):
        got = core.get_aval(o)
        shape = (axis_size, *want.shape) if b else tuple(want.shape)
        if tuple(got.shape) != shape:
            raise ValueError(f"custom vmap rule ({_rule_name(entry.fn)}) returned an output of shape "
                             f"{tuple(got.shape)} marked {'batched' if b else 'unbatched'}; the function's "
                             f"output {want.str_short()} needs shape {shape}")
        if got.dtype_name != want.dtype_name:
            from . import lax

            o = lax.convert_element_type(o, want.dtype_name)
        result.append(o)
    return result, [0 if b else None for b in batched]


def _broadcast_front(x, axis_size):
    from . import numpy as jnp

    return jnp.broadcast_to(x, (axis_size, *core.get_aval(x).shape))


def _jvp_rule(entry):
    """The rule of the tangent call: (primals, tangents) -> output tangents,
    through `jvp` of the user's rule. A leaf batched in only one of primal and
    tangent is broadcast, so the user's rule sees it batched."""
    from ._grad import jvp

    def rule(axis_size, in_batched, primals, tangents):
        pb, tb = in_batched
        n_args = len(primals) - entry.num_consts
        if any(pb[n_args:]) or any(tb[n_args:]):
            raise ValueError(_CLOSED_OVER_BATCHED)
        both = [p or t for p, t in zip(pb[:n_args], tb[:n_args])]
        ps = [_broadcast_front(x, axis_size) if b and not p else x
              for x, b, p in zip(primals[:n_args], both, pb)]
        ts = [_broadcast_front(x, axis_size) if b and not t else x
              for x, b, t in zip(tangents[:n_args], both, tb)]
        found = []

        def primal_fun(*leaves):
            outs, batched = _call_rule(entry, axis_size, both, leaves)
            found.append(batched)
            return outs

        _, out_ts = jvp(primal_fun, tuple(ps), tuple(ts))
        return list(out_ts), list(found[0])

    return rule


def _jvp(primals, tangents, *, call, rule):
    from ._grad import jvp

    tangents = [ad.instantiate_zeros(t) for t in tangents]
    out_primals = custom_vmap_p.bind(*primals, call=call, rule=rule)
    n = len(primals)

    def tangent_call(*pts):
        f = functools.partial(core.eval_jaxpr, call.jaxpr, call.consts)
        return list(jvp(lambda *ps: list(f(*ps)), tuple(pts[:n]), tuple(pts[n:]))[1])

    leaves = list(primals) + list(tangents)
    closed, out_tree, captures = trace_to_jaxpr(tangent_call, leaves, tree_structure((tuple(leaves), {})),
                                                f"jvp({_rule_name(rule.fn)})")
    if captures:
        raise ValueError("the JVP of a custom_vmap function closes over traced values")
    pt_tree = tree_structure((list(primals), list(tangents)))
    jvp_rule = _rule(_jvp_rule_for(rule), pt_tree, out_tree, 0)
    out_tangents = custom_vmap_p.bind(*leaves, call=ClosedJaxpr(closed), rule=jvp_rule)
    return list(out_primals), list(out_tangents)


_JVP_RULES = {}


def _jvp_rule_for(rule):
    """The JVP rule of `rule`, made once (so its `_Rule` stays the same)."""
    fn = _JVP_RULES.get(rule)
    if fn is None:
        fn = _JVP_RULES[rule] = _jvp_rule(rule)
        fn.__name__ = f"jvp_of_{_rule_name(rule.fn)}"
    return fn


def _transpose(cts, *args, call, rule):
    raise ValueError(_LINEARIZE_ERROR)


custom_vmap_p.def_impl(_impl)
custom_vmap_p.def_abstract_eval(_abstract_eval)
batching.axis_primitive_batchers[custom_vmap_p] = _batch
ad.primitive_jvps[custom_vmap_p] = _jvp
ad.primitive_transposes[custom_vmap_p] = _transpose


# ------------------------------------------------------------ applications


def _tree_split(mask, tree):
    lhs = tree_map(lambda m, x: x if m else None, mask, tree)
    rhs = tree_map(lambda m, x: None if m else x, mask, tree)
    return lhs, rhs


def _tree_merge(mask, lhs, rhs):
    return tree_map(lambda m, a, b: a if m else b, mask, lhs, rhs)


def sequential_vmap(f):
    """`f` as a `custom_vmap` function whose batching rule loops: under
    `vmap` it runs `f` once per member of the batch with `lax.map`, the
    unbatched arguments shared (for functions with no batched form)."""
    from . import lax

    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        del axis_size
        mapped, shared = _tree_split(in_batched, list(args))

        def one(mapped_args):
            return f(*_tree_merge(in_batched, mapped_args, shared))

        out = lax.map(one, mapped)
        return out, tree_map(lambda _: True, out)

    return f
