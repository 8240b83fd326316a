"""`jax.ad_checkpoint`: rematerialization (`checkpoint`), the policies that
say which intermediate values reverse mode saves, value names for them
(`checkpoint_name`) and `print_saved_residuals`.

A policy is passed as `jax.checkpoint(f, policy=jax.checkpoint_policies.dots_saveable)`.
The `checkpoint` equation carries it as a parameter and its partial
evaluation in Rust (`rust/core/src/transforms/remat.rs`) saves the values
the policy accepts (among those computable before the backward pass) and
recomputes the others. Each policy object is also callable with JAX's
signature `policy(prim, *avals, **params) -> bool`. Policies written as
Python function (`policy(prim, *avals, **params)`, as JAX's) is applied to
the traced body's equations when `checkpoint` stages the call: the outputs
of the equations it saves are marked with private names, and the equation
records `save_only_these_names` of them (so the choice survives the
transformations of the body, as names do). The offloading policies save on
the host what they would offload (one memory space here).
"""
import itertools
import types
import typing

import numpy as np

from . import core
from ._grad import checkpoint, remat
from .tree_util import _tree_map_data

__all__ = ["Offloadable", "Recompute", "Saveable", "checkpoint", "checkpoint_name", "checkpoint_policies",
           "print_saved_residuals", "remat", "saved_residuals"]


class RecomputeType:
    """The type of `Recompute`, a policy's answer "recompute this value in
    the backward pass" (as False)."""

    def __repr__(self):
        return "Recompute"


class SaveableType:
    """The type of `Saveable`, a policy's answer "save this value for the
    backward pass" (as True)."""

    def __repr__(self):
        return "Saveable"


Recompute = RecomputeType()
Saveable = SaveableType()


class Offloadable(typing.NamedTuple):
    """A policy's answer "save this value in memory space `dst`, moving it
    from `src`" (JAX's `ad_checkpoint.Offloadable`). There is one memory
    space here, so an offloaded value is saved."""

    src: str
    dst: str


def _decision(value):
    """A policy's answer (a bool, `Saveable`, `Recompute` or an
    `Offloadable`) as a bool: save (True) or recompute; JAX's TypeError for
    anything else."""
    if isinstance(value, Offloadable) or value is Saveable:
        return True
    if value is Recompute:
        return False
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError("Value returned by a remat policy should be a bool or `ad_checkpoint.Recompute`, "
                    "`ad_checkpoint.Saveable` or `ad_checkpoint.Offloadable(...)`. "
                    f"Got {value} of type {type(value)}.")


class Policy:
    """A checkpoint policy: `param` is what the `checkpoint` equation records
    (None, a policy name, or a tuple for the name-based policies); `test`
    decides for one equation `(primitive name, params)`."""

    def __init__(self, name, param, test):
        self.__name__ = name
        self.param = param
        self._test = test

    def __call__(self, prim, *avals, **params):
        """JAX's policy answer for one equation: a bool, or `Saveable`,
        `Recompute` or an `Offloadable` where JAX's policy gives one."""
        out = self._test(getattr(prim, "name", prim), params)
        return out if isinstance(out, (Offloadable, RecomputeType, SaveableType)) else bool(out)

    def __repr__(self):
        return f"<checkpoint policy {self.__name__}>"


def _is_dot(name, params):
    return name == "dot_general"


def _dot_without_batch_dims(name, params):
    if name != "dot_general":
        return False
    (_, batch) = params.get("dimension_numbers", ((), ((), ())))
    return not tuple(batch[0])


def _names(names):
    if any(not isinstance(n, str) for n in names):
        raise TypeError(f"checkpoint names must be strings, got {names!r}")
    return tuple(names)


def _named_in(names):
    return lambda name, params: name == "name" and params.get("name") in names


def save_only_these_names(*names):
    names = _names(names)
    return Policy("save_only_these_names", ("save_only_these_names", names), _named_in(names))


def save_any_names_but_these(*names):
    names = _names(names)
    return Policy("save_any_names_but_these", ("save_any_names_but_these", names),
                  lambda name, params: name == "name" and params.get("name") not in names)


def save_anything_except_these_names(*names):
    names = _names(names)
    named = _named_in(names)
    return Policy("save_anything_except_these_names", ("save_anything_except_these_names", names),
                  lambda name, params: not named(name, params))


def save_from_both_policies(policy_1, policy_2):
    a, b = _policy_param(policy_1), _policy_param(policy_2)
    return Policy("save_from_both_policies", ("save_from_both_policies", a, b),
                  lambda name, params: _decision(policy_1._test(name, params))
                  or _decision(policy_2._test(name, params)))


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded,
                                      offload_src="device", offload_dst="pinned_host"):
    """Saves both lists of names (offloading to host memory is saving: there
    is one memory space). Called as JAX's policy it answers `Saveable`,
    `Offloadable(offload_src, offload_dst)` or `Recompute`."""
    saved, offloaded = _names(tuple(names_which_can_be_saved)), _names(tuple(names_which_can_be_offloaded))
    both = save_only_these_names(*saved, *offloaded)

    def test(name, params):
        if name == "name" and params.get("name") in saved:
            return Saveable
        if name == "name" and params.get("name") in offloaded:
            return Offloadable(offload_src, offload_dst)
        return Recompute
    return Policy("save_and_offload_only_these_names", both.param, test)


def offload_dot_with_no_batch_dims(offload_src="device", offload_dst="pinned_host"):
    """Saves the products without batch dimensions (see above)."""
    return dots_with_no_batch_dims_saveable


everything_saveable = Policy("everything_saveable", "everything_saveable", lambda name, params: True)
nothing_saveable = Policy("nothing_saveable", None, lambda name, params: False)
dots_saveable = Policy("dots_saveable", "dots_saveable", _is_dot)
dots_with_no_batch_dims_saveable = Policy("dots_with_no_batch_dims_saveable",
                                          "dots_with_no_batch_dims_saveable", _dot_without_batch_dims)

checkpoint_policies = types.SimpleNamespace(
    **{policy.__name__: policy for policy in (
        everything_saveable, nothing_saveable, dots_saveable, dots_with_no_batch_dims_saveable,
        save_only_these_names, save_any_names_but_these, save_anything_except_these_names,
        save_from_both_policies, save_and_offload_only_these_names, offload_dot_with_no_batch_dims)},
    # JAX's older names
    checkpoint_dots=dots_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
)


def _policy_param(policy):
    """The `checkpoint` equation's `policy` parameter for `policy`."""
    if policy is None:
        return None
    if isinstance(policy, Policy):
        return policy.param
    if callable(policy):
        return FunctionPolicy(policy)
    raise TypeError(f"checkpoint policy must be a callable, got {policy!r}")


_SAVED_NAME = "checkpoint policy: saved value "
_saved_ids = itertools.count()


class FunctionPolicy:
    """A policy written as a Python function, applied by `apply` to one
    traced body when `checkpoint` stages it."""

    def __init__(self, fun):
        self.fun = fun

    def apply(self, closed, leaves):
        """(body, param): `closed` (the traced body, on `leaves`) re-traced
        with the outputs of each equation the policy saves named, and the
        `save_only_these_names` parameter that saves exactly those."""
        from .interpreters.partial_eval import trace_to_jaxpr
        from .tree_util import tree_structure

        body = core.ClosedJaxpr(closed)
        names = []

        def then(eqn, outs):
            if _decision(self.fun(eqn.primitive, *[v.aval for v in eqn.invars], **eqn.params)):
                name = f"{_SAVED_NAME}{next(_saved_ids)}"
                names.append(name)
                outs = [core.Primitive("name").bind(o, name=name) for o in outs]
            return outs

        def traced(*xs):
            return core.eval_jaxpr_then(body.jaxpr, body.consts, xs, then)

        named, _, _ = trace_to_jaxpr(traced, list(leaves), tree_structure((tuple(leaves), {})),
                                     getattr(self.fun, "__name__", "policy"))
        return named, ("save_only_these_names", tuple(names)) if names else None


def checkpoint_name(x, name):
    """Names the arrays of the pytree `x` for the name-based checkpoint
    policies (`save_only_these_names`, ...): the identity on values and
    derivatives."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {name!r}")
    return _tree_map_data(lambda leaf: core.Primitive("name").bind(leaf, name=name), x)


def _describe(jaxpr, var, inputs):
    """Where value `var` of `jaxpr` comes from, as JAX's
    `print_saved_residuals` says it: `inputs[i]` for input `i` (an
    argument), a constant, or the output of an equation (looked up through
    calls)."""
    if var in jaxpr.invars:
        return inputs[jaxpr.invars.index(var)]
    if var in jaxpr.constvars:
        return "from a constant"
    for eqn in jaxpr.eqns:
        if var in eqn.outvars:
            callee = eqn.params.get("jaxpr")
            if eqn.primitive.name in ("pjit", "checkpoint") and callee is not None:
                out = callee.jaxpr.outvars[eqn.outvars.index(var)]
                if isinstance(out, core.Var):
                    operands = [_describe(jaxpr, a, inputs) if isinstance(a, core.Var) else "a literal"
                                for a in eqn.invars]
                    return _describe(callee.jaxpr, out, operands)
            where = f" from {eqn.source_info}" if eqn.source_info else ""
            if eqn.primitive.name == "name" and eqn.params["name"].startswith(_SAVED_NAME):
                return _describe(jaxpr, eqn.invars[0], inputs)  # what a function policy saved
            if eqn.primitive.name == "name":
                return f"named '{eqn.params['name']}'{where}"
            return f"output of {eqn.primitive.name}{where}"
    return "from an unknown place"


def saved_residuals(f, *args, **kwargs):
    """`[(ShapeDtypeStruct, description)]`: the values reverse mode saves for
    the backward pass of `f` at `args` (its residuals)."""
    from . import _core, dtypes
    from .api import make_jaxpr
    from .interpreters.partial_eval import ShapeDtypeStruct
    from .stages import _leaf_names

    closed = make_jaxpr(lambda *a: f(*a, **kwargs))(*args)
    inputs = [f"from the argument {n}" for n in _leaf_names(f, args, {})]
    nonzeros = [dtypes.is_float_name(v.aval.dtype_name) for v in closed.jaxpr.invars]
    primal, _, num_res = _core.linearize_jaxpr(closed._handle, nonzeros)
    prog = core.ClosedJaxpr(primal).jaxpr
    outs = prog.outvars[len(prog.outvars) - num_res:]
    result = []
    for v in outs:
        aval = ShapeDtypeStruct(v.aval.shape, v.aval.dtype, v.aval.weak_type)
        desc = _describe(prog, v, inputs) if isinstance(v, core.Var) else "a literal"
        result.append((aval, desc))
    return result


def print_saved_residuals(f, *args, **kwargs):
    """Prints one line per value reverse mode saves for `f` at `args`:
    its type and where it comes from."""
    for aval, desc in saved_residuals(f, *args, **kwargs):
        print(f"{core.ShapedArray(aval.shape, aval.dtype, aval.weak_type).str_short()} {desc}")
