"""Tokens, `dce_sink` and `composite` (JAX's `lax.create_token`,
`lax.after_all`, `lax.dce_sink`, `lax.composite` and their primitives).

A token orders side effects in JAX's lowering; it carries no data. Here a
`Token` holds one placeholder value, an empty `bool[0]` array (a tracer of
that type under a trace), so tokens flow through `jit` as arguments and
results (a `Token` is a pytree node over its placeholder), and
`create_token`/`after_all` show as JAX's equations in `make_jaxpr` (typed
`bool[0]` where JAX prints `Tok`). `dce_sink` binds one `dce_sink` equation
per leaf, with no outputs: the equation keeps its operand's computation in
the program as JAX's does.

`composite(decomposition, name, version=0)` wraps a function so that each
call is one `composite` equation holding the traced decomposition (params
`name`, `attributes`, `version`, `jaxpr`, as JAX); it runs as its
decomposition, eagerly and under `jit`. As JAX, the equation has no JVP
(ValueError) and no batching rule (NotImplementedError).
"""
import functools

import numpy as np

from .. import _core, core
from ..tree_util import register_pytree_node, tree_flatten, tree_unflatten
from ._composite import composite_primitive


class AbstractToken:
    """The abstract value of a token (`jax.extend.core.AbstractToken`)."""

    shape = ()

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return "Tok"

    def __eq__(self, other):
        return isinstance(other, AbstractToken)

    def __hash__(self):
        return hash(AbstractToken)

    def __repr__(self):
        return "AbstractToken()"


abstract_token = AbstractToken()


def _placeholder():
    return core.to_array(np.zeros((0,), np.bool_))


class Token:
    """A token (`jax.extend.core.Token`): orders effects, carries no data.
    `_buf` is its placeholder (an empty bool array, or a tracer of one)."""

    __slots__ = ("_buf",)

    def __init__(self, buf=None):
        self._buf = _placeholder() if buf is None else buf

    @property
    def aval(self):
        return abstract_token

    def block_until_ready(self):
        return self


register_pytree_node(Token, lambda t: ((t._buf,), None), lambda _, children: Token(children[0]))

create_token_p = composite_primitive("create_token", lambda: _placeholder(), differentiable=False)
after_all_p = composite_primitive("after_all", lambda *tokens: _placeholder(), differentiable=False)
dce_sink_p = composite_primitive("dce_sink", lambda val, *, prevent_mlir_dce=False: [], multiple_results=True,
                                 differentiable=False)


def create_token(_=None):
    """A new token (JAX's `lax.create_token`); the argument is ignored (kept
    for JAX's signature)."""
    return Token(create_token_p.bind())


def after_all(*operands):
    """A token that comes after all the `operands` tokens (JAX's
    `lax.after_all`); TypeError for a non-token operand."""
    if not all(isinstance(t, Token) for t in operands):
        raise TypeError("Arguments to after_all must be tokens")
    return Token(after_all_p.bind(*(t._buf for t in operands)))


def dce_sink(val, *, prevent_mlir_dce: bool = False):
    """Keeps the computation of `val` (a pytree) in the program, as a use of
    each leaf that dead-code elimination does not remove (JAX's
    `lax.dce_sink`); returns None."""
    for leaf in tree_flatten(val)[0]:
        dce_sink_p.bind(leaf, prevent_mlir_dce=bool(prevent_mlir_dce))
    return None


# dce_sink: the operand has no tangent to carry (no outputs), as JAX's rule
def _dce_sink_jvp(primals, tangents, **params):
    return dce_sink_p.bind(*primals, **params), []


def _register_dce_sink_jvp():
    from ..interpreters import ad
    ad.primitive_jvps[dce_sink_p] = _dce_sink_jvp


_register_dce_sink_jvp()


# ---- composite


composite_p = core.Primitive("composite")
composite_p.multiple_results = True


def _composite_impl(*args, name, attributes, version, jaxpr):
    """The decomposition run natively (through Python where it holds
    primitives with Python rules)."""
    handle = jaxpr._handle
    if _core.holds_dynamic(handle):
        return core.jaxpr_as_fun(jaxpr)(*args)
    return list(handle.run([core.to_array(a) for a in args]))


def _composite_abstract_eval(*avals, name, attributes, version, jaxpr):
    return list(jaxpr.out_avals)


def _composite_jvp(primals, tangents, **params):
    raise ValueError("JVP rule for composite not implemented. You can use `jax.custom_jvp` to add support. "
                     "See https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


def _register_composite_rules():
    from ..interpreters import ad, mlir
    composite_p.def_impl(_composite_impl)
    composite_p.def_abstract_eval(_composite_abstract_eval)
    ad.primitive_jvps[composite_p] = _composite_jvp
    mlir.register_lowering(composite_p, mlir.lower_fun(_composite_impl, multiple_results=True))


_register_composite_rules()


def _hashable_leaf(x):
    if isinstance(x, np.ndarray):
        return tuple(x.tolist()) if x.ndim else x.item()
    return x


def composite(decomposition, name: str, version: int = 0):
    """Wraps `decomposition` so that each call is one `composite` equation
    named `name` (JAX's `lax.composite`). Positional arguments (pytrees of
    arrays) are the operands; keyword arguments are static attributes,
    recorded in the equation's `attributes` param and passed to
    `decomposition`. The call computes `decomposition(*args, **kwargs)`."""

    @functools.wraps(decomposition)
    def _decomposition(*args, **kwargs):
        from ..interpreters.partial_eval import trace_to_jaxpr

        flat, in_tree = tree_flatten((args, {}))
        closed, out_tree, captures = trace_to_jaxpr(
            lambda *xs: decomposition(*xs, **kwargs), flat, in_tree, name)
        attributes = []
        for key in sorted(kwargs):
            leaves, tree = tree_flatten(kwargs[key])
            attributes.append((key, tuple(_hashable_leaf(v) for v in leaves), tree))
        # values the decomposition closes over from an enclosing trace are
        # further operands (its jaxpr takes them after the arguments)
        outs = composite_p.bind(*flat, *captures, name=name, attributes=tuple(attributes),
                                version=int(version), jaxpr=core.ClosedJaxpr(closed))
        return tree_unflatten(out_tree, list(outs))

    return _decomposition
