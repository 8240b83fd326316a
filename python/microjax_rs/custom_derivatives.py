"""`custom_jvp` and `custom_vjp` with JAX's API.

Calling a custom function with no trace active runs the function. Under a
trace it binds `custom_jvp_call` / `custom_vjp_call` (Rust primitives) whose
params hold the traced function and the traced rules. Rules are traced when
the call is staged, in a `RuleTrace` whose primal inputs carry the known
values of the call under `grad`, so `if x > 0:` works inside a rule during
eager differentiation (under `jit` the primals are abstract, as in JAX).

Rules defined with `symbolic_zeros=True`, and rules that raise when traced
at staging time (equinox's `nondifferentiable`), are traced when the call is
differentiated instead, as JAX does: the call binds a user-defined primitive
(`custom_jvp_call_deferred` / `custom_vjp_call_deferred`, whose linear part
is `custom_lin_deferred`) holding the traced function and the rule, and its
JVP rule sees which tangents are symbolic zeros: the Rust core traces
that rule once per pattern of symbolic-zero tangents (and `bwd` once per
pattern of zero cotangents) when it differentiates the call, so `jit(grad(f))`
holds the rule's equations as ordinary ones. Where a program still holds
such calls (their primal results are used, or `jit(f)` itself), the program
`jit` runs and the one `export` serializes have them inlined as their
traced function (`inline_deferred_calls`); the program `jit` traced keeps
them, so `grad(jit(f))` still uses the rule. Such a call loses its custom
rule under `vmap`.
"""
import functools
import inspect
import operator

import numpy as np

from . import core, dtypes
from .interpreters.partial_eval import ShapeDtypeStruct, trace_to_jaxpr
from .core import ArrayImpl, ClosedJaxpr, Primitive, ShapedArray, Tracer
from .interpreters.ad import ADTrace, RuleTrace
from .tree_util import _tree_map_data, tree_flatten, tree_structure, tree_unflatten

import threading

custom_jvp_call_p = Primitive("custom_jvp_call")
custom_vjp_call_p = Primitive("custom_vjp_call")
custom_lin_p = Primitive("custom_lin")


def _fun_name(f):
    return getattr(f, "__name__", None) or type(f).__name__


def _rule_pair(res, what, holds):
    """`res`, the result of the custom rule `what`, checked to be a pair; `holds()` says what it holds."""
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise TypeError(f"{what} must produce a pair (list or tuple of length two) {holds()}")
    return res


def _rule_primal_leaves(out, out_tree, what, mismatch):
    """The leaves and tree of the primal output `out` of the custom rule `what`, whose tree
    must be the function's `out_tree` (`mismatch(tree)` says otherwise)."""
    leaves, tree = tree_flatten(out)
    if tree != out_tree:
        raise TypeError(f"{what} must produce {mismatch(tree)}")
    return leaves, tree


class _Reentry(threading.local):
    def __init__(self):
        self.active = {}

    def depth(self, fun):
        return self.active.get(id(fun), 0)

    def enter(self, fun):
        self.active[id(fun)] = self.depth(fun) + 1

    def leave(self, fun):
        d = self.depth(fun) - 1
        if d > 0:
            self.active[id(fun)] = d
        else:
            self.active.pop(id(fun), None)


# Rules being traced right now, per custom function: how many of its rule
# traces are open. A rule usually calls its own function (`return f(x), t`, a
# fixed point's rule solving another fixed point); JAX traces rules lazily, we
# trace them when the call is staged. Such an inner call gets rules of its own
# only when the outer rules will be differentiated again: one level of rule
# nesting per differentiation order beyond the first (the AD traces active,
# at most `_MAX_RULE_NESTING`), so a first-order gradient runs each rule once.
# Below that the inner call binds with no rule (or is the primal function
# itself): only differentiating it to a higher order reports it.
_tracing_rules = _Reentry()
_MAX_RULE_NESTING = 4


def _rule_nesting_allowed(fun):
    """Whether a call of `fun` traces its rules now (see `_tracing_rules`)."""
    orders = sum(1 for t in core.trace_stack() if isinstance(t, ADTrace) and not isinstance(t, RuleTrace))
    return _tracing_rules.depth(fun) < min(max(orders, 1), _MAX_RULE_NESTING)


def _resolve_kwargs(fun, args, kwargs):
    if not kwargs:
        return tuple(args)
    try:
        ba = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"custom function {_fun_name(fun)}: {e}") from None
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError("keyword-only arguments are not supported by custom_jvp/custom_vjp functions")
    return tuple(ba.args)


def _tangent_aval(aval):
    if dtypes.is_float_name(aval.dtype_name):
        return aval
    return ShapedArray(aval.shape, "float0", False)


def _known_thunk(x):
    """A thunk giving `x`'s value one level below the current AD trace."""
    trace = core.current_trace()
    if type(x) is Tracer:
        if isinstance(trace, ADTrace) and x._trace is trace:
            return lambda: trace.known_value(x)
        return None
    return lambda: x


def _rule_parent():
    trace = core.current_trace()
    return trace.parent if isinstance(trace, ADTrace) else trace


def _split_nondiff(args, nondiff_argnums):
    nondiff = {i % len(args) if args else i for i in nondiff_argnums}
    dyn = [a for i, a in enumerate(args) if i not in nondiff]
    return nondiff, dyn


def _merge(args, nondiff, dyn_values):
    it = iter(dyn_values)
    return [args[i] if i in nondiff else next(it) for i in range(len(args))]


def _trace_fun(fun, args, nondiff, leaves, in_tree, name):
    def flat(*ls):
        return fun(*_merge(args, nondiff, tree_unflatten(in_tree, list(ls))))

    flat_tree = tree_structure((tuple(leaves), {}))
    return trace_to_jaxpr(flat, leaves, flat_tree, name)


def _trace_fun_on_known_values(fun, args, nondiff, leaves, in_tree, name):
    """`_trace_fun` for a body that branches on its arguments' values: under
    eager differentiation the call's primal values are known, so the body is
    traced in a `RuleTrace` whose inputs carry them (JAX runs the body on
    concrete primals there). The jaxpr is specialized to those values; None
    when some argument has no known value (under `jit`)."""
    thunks = [_known_thunk(x) for x in leaves]
    if not leaves or any(k is None for k in thunks):
        return None
    trace = RuleTrace(name, _rule_parent())
    with core.new_trace(trace):
        ins = [trace.new_rule_input(a, k) for a, k in zip(_leaf_avals(leaves), thunks)]
        out = fun(*_merge(args, nondiff, tree_unflatten(in_tree, ins)))
        out_leaves, out_tree = tree_flatten(out)
        closed = _build_rule(trace, out_leaves)
    return closed, out_tree, trace.captures


def _leaf_avals(leaves):
    return [core.get_aval(x) for x in leaves]


class SymbolicZero:
    """A zero tangent or cotangent known to be zero without its values, of
    abstract value `aval` (rules defined with `symbolic_zeros=True` may
    receive or return it)."""

    def __init__(self, aval):
        self.aval = aval

    shape = property(operator.attrgetter("aval.shape"))
    dtype = property(operator.attrgetter("aval.dtype"))

    def instantiate(self):
        """The zeros it stands for."""
        return _instantiate_zeros(None, self.aval)

    def __bool__(self):
        return False

    def __repr__(self):
        return f"SymbolicZero({self.aval.str_short()})"

    @staticmethod
    def from_primal_value(value):
        aval = core.get_aval(value)
        return SymbolicZero(ShapedArray(aval.shape, _tangent_aval(aval).dtype_name))


class CustomVJPPrimal:
    """A `custom_vjp` fwd rule's argument under `symbolic_zeros=True`: the
    primal `value` and whether it is `perturbed` (may have a nonzero
    tangent)."""

    def __init__(self, value, perturbed):
        self.value = value
        self.perturbed = perturbed

    def __repr__(self):
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def custom_vjp_primal_tree_values(tree):
    """The primal values of a `symbolic_zeros=True` fwd rule's argument
    pytree: each `CustomVJPPrimal` leaf replaced by its `value` (JAX's
    helper); TypeError for any other leaf."""
    from .tree_util import tree_map

    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_map(value, tree)


def _remat_opt(*args, num_consts, num_res, fwd_jaxpr, fun_jaxpr_thunk):
    return list(core.jaxpr_as_fun(fwd_jaxpr)(*args))


def _make_remat_opt_p():
    from .lax._composite import composite_primitive
    return composite_primitive("remat_opt", _remat_opt, multiple_results=True)


# JAX's primitive for the forward pass of a `custom_vjp` with
# `optimize_remat=True`: operands are `num_consts` constants then the
# arguments; it computes `fwd_jaxpr` (its `num_res` residuals, then the
# outputs), differentiates and batches as that computation;
# `fun_jaxpr_thunk()` gives the primal function's jaxpr.
remat_opt_p = _make_remat_opt_p()


def zero_from_primal(val, symbolic_zeros=False):
    """Zero tangents for the pytree `val`: `SymbolicZero`s, or instantiated zeros."""
    def zero(x):
        z = SymbolicZero.from_primal_value(x)
        return z if symbolic_zeros else z.instantiate()
    return _tree_map_data(zero, val)


def _tangent_leaves(t_out, p_tree):
    """Leaves and tree of a rule's tangent output: flattened as the primal
    output (`p_tree`) when they match (None an empty subtree there, as in JAX),
    else with None (a zero tangent) and `SymbolicZero` as leaves."""
    leaves, tree = tree_flatten(t_out)
    if tree == p_tree:
        return leaves, tree
    return tree_flatten(t_out, is_leaf=lambda x: x is None or isinstance(x, SymbolicZero))


def _instantiate_zeros(x, aval):
    from . import numpy as jnp

    if isinstance(x, SymbolicZero):
        x = None
    if x is None:
        if aval.dtype_name == "float0":
            return np.zeros(aval.shape, dtype=dtypes.float0)
        return jnp.zeros(aval.shape, aval.dtype_name)
    return x


def _build_rule(trace, outs):
    atoms = [trace.to_atom(o) for o in outs]
    return trace.builder.build(atoms)


def _check_primal_avals(leaves, avals, message):
    """TypeError `message(got, expected)` (short aval texts) for the first of the
    primal output `leaves` a rule gave whose shape or dtype is not its aval's."""
    for x, a in zip(leaves, avals):
        xa = core.get_aval(x)
        if xa.shape != a.shape or xa.dtype_name != a.dtype_name:
            raise TypeError(message(xa.str_short(), a.str_short()))


def _eval_plain(closed, out_tree, leaves, extra=()):
    """The staged primal function `closed` evaluated as a plain call (no
    rule) on `leaves` and the `extra` inputs: its output tree."""
    cj = ClosedJaxpr(closed)
    return tree_unflatten(out_tree, core.eval_jaxpr(cj.jaxpr, cj.consts, *leaves, *extra))


class _CustomFunction:
    """What custom_jvp and custom_vjp share: method binding and staging the
    primal function when a trace is active."""

    def __init__(self, fun, nondiff_argnums):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.symbolic_zeros = False

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __getattr__(self, name):
        # As JAX: attributes this object lacks come from the wrapped function
        # (`custom_vjp(custom_vmap(f)).def_vmap`).
        fun = self.__dict__.get("fun")
        if fun is None:
            raise AttributeError(name)
        return getattr(fun, name)
    # The attribute holding the rule, and the error (formatted with the
    # function's name) when it was never defined; set by the subclasses.
    _RULE = _MISSING = None

    def __call__(self, *args, **kwargs):
        if not kwargs and core.current_trace() is None and getattr(self, self._RULE) is not None:
            return self.fun(*args)  # no trace active: `_stage`'s answer, without its work
        name = _fun_name(self.fun)
        if getattr(self, self._RULE) is None:
            raise AttributeError(self._MISSING.format(name))
        args, staged = self._stage(args, kwargs)
        if staged is None:
            return self.fun(*args)
        return self._call_staged(name, args, *staged)

    def _call_staged(self, name, args, nondiff, leaves, in_tree, closed, out_tree, captures):
        """The call under an active trace, from the staged primal function (see `_stage`)."""
        raise NotImplementedError

    def _stage(self, args, kwargs):
        """None when no trace is active (call `fun` directly); otherwise
        (args, nondiff, leaves, in_tree, closed, out_tree, captures)."""
        args = _resolve_kwargs(self.fun, args, kwargs)
        if core.current_trace() is None:
            return args, None
        nondiff, dyn = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(dyn)
        name = _fun_name(self.fun)
        try:
            traced = _trace_fun(self.fun, args, nondiff, leaves, in_tree, name)
        except core.ConcretizationTypeError:
            traced = _trace_fun_on_known_values(self.fun, args, nondiff, leaves, in_tree, name)
            if traced is None:
                raise
        closed, out_tree, captures = traced
        if not captures and not any(type(x) is Tracer for x in leaves):
            # Nothing traced flows in: no tangent can reach the call, so (as
            # in JAX, where the call then binds on the eval trace) no rule runs.
            return args, None
        return args, (nondiff, leaves, in_tree, closed, out_tree, captures)


class custom_jvp(_CustomFunction):
    """Wrap ``fun`` so that its forward-mode derivative is given by a rule instead of being traced.

    Use it as a decorator and register the rule with ``defjvp`` (one rule for all arguments:
    ``jvp(primals, tangents) -> (primal_out, tangent_out)``) or ``defjvps`` (one rule per
    argument). Reverse mode is derived from the rule by transposition, so ``grad`` works too.
    ``nondiff_argnums`` names arguments that are passed to the rule as plain values.

    Example:
      >>> import microjax_rs as jax
      >>> import microjax_rs.numpy as jnp
      >>> @jax.custom_jvp
      ... def log1pexp(x):
      ...     return jnp.log1p(jnp.exp(x))
      >>> @log1pexp.defjvp
      ... def log1pexp_jvp(primals, tangents):
      ...     (x,), (t,) = primals, tangents
      ...     return log1pexp(x), t * jax.nn.sigmoid(x)
      >>> print(jax.grad(log1pexp)(100.0))
      1.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros=False):
        """Registers `jvp(primals, tangents) -> (primal_out, tangent_out)`.

        With `symbolic_zeros=True` the rule is traced when the call is
        differentiated, as in JAX: an unperturbed input's tangent is a
        `SymbolicZero`, and the rule may return `SymbolicZero`s (or None) for
        zero output tangents."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument: `jvp_i(tangent_i, primal_out, *primals)`."""
        if self.nondiff_argnums:
            raise TypeError("Can't use custom_jvp.defjvps with nondiff_argnums.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            zeros = _tree_map_data(lambda x: x * 0, primal_out)
            total = zeros
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                contrib = rule(t, primal_out, *primals)
                total = _tree_map_data(lambda a, b: a + b, total, contrib)
            return primal_out, total

        self.defjvp(jvp)

    _RULE, _MISSING = "jvp", "No JVP defined for custom_jvp function {} using defjvp."

    def _call_staged(self, name, args, nondiff, leaves, in_tree, closed, out_tree, captures):
        if captures:
            # Values closed over from an enclosing trace: treat them as
            # non-differentiable extra inputs of a plain call.
            return _eval_plain(closed, out_tree, leaves, captures)
        if getattr(self, "symbolic_zeros", False):
            # The rule sees which tangents are symbolic zeros: it is traced
            # when the call is differentiated, from the tangents that arrive.
            rule = _DEFERRED
        elif not _rule_nesting_allowed(self):
            rule = None
        else:
            _tracing_rules.enter(self)
            try:
                rule = self._trace_rule(args, nondiff, leaves, in_tree, closed, out_tree, name)
            except Exception:
                # As JAX, which traces a rule only when a nonzero tangent
                # reaches it: the rule runs again then, raising there.
                rule = _DEFERRED
            finally:
                _tracing_rules.leave(self)
        if rule is _DEFERRED:
            outs = _deferred_jvp_call_p.bind(
                *leaves, call_jaxpr=ClosedJaxpr(closed),
                rule=_DeferredJvp(self, args, nondiff, in_tree, out_tree,
                                  [ShapedArray.from_record(t) for t in closed.out_avals()]))
            return tree_unflatten(out_tree, outs)
        outs = custom_jvp_call_p.bind(*leaves, call_jaxpr=ClosedJaxpr(closed),
                                      jvp_jaxpr_fun=None if rule is None else ClosedJaxpr(rule),
                                      name=name)
        return tree_unflatten(out_tree, outs)

    def _jvp_outputs(self, res, name, out_tree, out_avals):
        """The primal and tangent output leaves of the rule's result `res`,
        checked against the function's outputs (JAX's errors), zero tangents
        instantiated and tangents of the tangent dtypes."""
        what = f"Custom JVP rule {_fun_name(self.jvp)} for function {name}"
        p_out, t_out = _rule_pair(res, what, lambda: (
            f"representing primal and tangent outputs, but got {res!r}."))
        p_leaves, p_tree = _rule_primal_leaves(p_out, out_tree, what, lambda tree: (
            f"primal outputs with the same container (pytree) structure as the function's "
            f"output: {tree} vs {out_tree}."))
        t_leaves, t_tree = _tangent_leaves(t_out, p_tree)
        if len(t_leaves) != len(p_leaves):
            raise TypeError(f"Custom JVP rule {_fun_name(self.jvp)} for function {name} must "
                            f"produce primal and tangent outputs with equal container (pytree) "
                            f"structures, but got {p_tree} and {t_tree} respectively.")
        t_leaves = [_instantiate_zeros(t, _tangent_aval(a)) for t, a in zip(t_leaves, out_avals)]
        _check_primal_avals(p_leaves, out_avals, lambda got, want: (
            f"Custom JVP rule must produce primal outputs with the shapes and "
            f"dtypes of the function's outputs: got {got}, expected {want}."))
        for t, a in zip(t_leaves, out_avals):
            ta, want = core.get_aval(t), _tangent_aval(a)
            if ta.shape != want.shape:
                raise TypeError(f"Custom JVP rule must produce primal and tangent outputs with "
                                f"corresponding shapes, but got {a.str_short()} and "
                                f"{ta.str_short()}.")
        for t, a in zip(t_leaves, out_avals):
            ta, want = core.get_aval(t), _tangent_aval(a)
            if ta.dtype_name != want.dtype_name and want.dtype_name != "float0":
                raise TypeError(f"Custom JVP rule must produce primal and tangent outputs with "
                                f"corresponding shapes and dtypes. Expected {want.str_short()} "
                                f"(tangent type of {a.str_short()}) but got {ta.str_short()}.")
        t_leaves = [t if core.get_aval(t).dtype_name == _tangent_aval(a).dtype_name
                    else _astype(t, _tangent_aval(a).dtype_name)
                    for t, a in zip(t_leaves, out_avals)]
        return p_leaves, t_leaves

    def _trace_rule(self, args, nondiff, leaves, in_tree, closed, out_tree, name):
        avals = _leaf_avals(leaves)
        out_avals = [ShapedArray.from_record(a) for a in closed.out_avals()]
        trace = RuleTrace(f"jvp({name})", _rule_parent())
        thunks = [_known_thunk(x) for x in leaves]
        try:
            with core.new_trace(trace):
                p_in = [trace.new_rule_input(a, k) for a, k in zip(avals, thunks)]
                t_in = [trace.new_rule_input(_tangent_aval(a)) for a in avals]
                primals = _merge(args, nondiff, tree_unflatten(in_tree, p_in))
                tangents = tree_unflatten(in_tree, t_in)
                dyn_primals = [p for i, p in enumerate(primals) if i not in nondiff]
                nd_vals = [args[i] for i in sorted(nondiff)]
                res = self.jvp(*nd_vals, tuple(dyn_primals), tuple(tangents))
                p_leaves, t_leaves = self._jvp_outputs(res, name, out_tree, out_avals)
                rule = _build_rule(trace, list(p_leaves) + list(t_leaves))
        except core.ConcretizationTypeError:
            if isinstance(core.current_trace(), ADTrace):
                raise
            return None  # rule needs concrete primals: only differentiation will report it
        if trace.captures:
            raise TypeError(f"the custom_jvp rule of {name} closes over traced values of an "
                            f"enclosing transformation; pass them as arguments instead")
        return rule


_DEFERRED = object()


class _DeferredJvp:
    """The JVP rule of one staged call whose rule raised when traced at
    staging time (JAX traces a rule only when the call is differentiated: a
    rule may refuse to run, as equinox's `nondifferentiable` does). Carried
    as a param of `_deferred_jvp_call_p`, traced when a tangent reaches it."""

    def __init__(self, fun, args, nondiff, in_tree, out_tree, out_avals):
        self.fun = fun
        self.out_avals = out_avals
        self.n_args = len(args)
        self.nondiff = nondiff
        self.nd_args = {i: args[i] for i in nondiff}
        self.in_tree, self.out_tree = in_tree, out_tree

    def __call__(self, primals, tangents):
        from .interpreters import ad

        fun = self.fun
        n = self.n_args
        if getattr(fun, "symbolic_zeros", False):
            tangents = [SymbolicZero(_tangent_aval(t.aval)) if type(t) is ad.Zero else t
                        for t in tangents]
        else:
            tangents = [ad.instantiate_zeros(t) for t in tangents]
        p_tree = tree_unflatten(self.in_tree, list(primals))
        t_tree = tree_unflatten(self.in_tree, tangents)
        p_args = _merge([self.nd_args.get(i) for i in range(n)], self.nondiff, p_tree)
        dyn_primals = [p for i, p in enumerate(p_args) if i not in self.nondiff]
        nd_vals = [self.nd_args[i] for i in sorted(self.nondiff)]
        res = fun.jvp(*nd_vals, tuple(dyn_primals), tuple(t_tree))
        return fun._jvp_outputs(res, _fun_name(fun.fun), self.out_tree, self.out_avals)


def _define_deferred_call(name):
    """`name`: a call of a custom function whose rule is traced lazily, when
    a tangent reaches it (a user-defined primitive whose JVP rule is its
    `rule` param, called with the primals and tangents, `ad.Zero` for the
    unperturbed ones). Evaluation runs the traced function; `vmap` gives a
    call of the mapped function whose rule is the mapped rule (as JAX, a
    rule survives batching: `grad(vmap(f))` still runs it)."""
    from .interpreters import ad, batching

    p = Primitive(name)
    p.multiple_results = True

    def impl(*args, call_jaxpr, rule):
        return core.eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)

    def abstract_eval(*avals, call_jaxpr, rule):
        return call_jaxpr.out_avals

    def batch(args, dims, call_jaxpr, rule):
        from ._vmap import vmap

        dims = tuple(dims)
        mapped = vmap(lambda *xs: impl(*xs, call_jaxpr=call_jaxpr, rule=rule), in_axes=dims)
        closed, _, _ = trace_to_jaxpr(lambda *xs: list(mapped(*xs)), list(args),
                                      tree_structure((tuple(args), {})))
        outs = p.bind(*args, call_jaxpr=ClosedJaxpr(closed), rule=_BatchedRule(rule, dims))
        return outs, [0] * len(outs)

    p.def_impl(impl)
    p.def_abstract_eval(abstract_eval)
    ad.primitive_jvps[p] = lambda primals, tangents, call_jaxpr, rule: rule(primals, tangents)
    batching.primitive_batchers[p] = batch
    return p


def _unbatched_aval(aval, dim):
    """`aval` without its mapped axis `dim` (None: not mapped)."""
    if dim is None:
        return aval
    shape = tuple(aval.shape)
    return ShapedArray(shape[:dim] + shape[dim + 1:], aval.dtype_name, aval.weak_type)


class _BatchedRule:
    """The rule of a deferred call after `vmap`: `rule` mapped over the
    arguments' axes `dims` (a tangent is mapped where its primal is; a zero
    tangent stays symbolic, as the unmapped rule would see it)."""

    def __init__(self, rule, dims):
        self.rule, self.dims = rule, dims

    def __call__(self, primals, tangents):
        from ._vmap import vmap
        from .interpreters import ad

        dims = self.dims
        live = [i for i, t in enumerate(tangents) if type(t) is not ad.Zero]
        zeros = {i: ad.Zero(_unbatched_aval(t.aval, dims[i]))
                 for i, t in enumerate(tangents) if type(t) is ad.Zero}

        def one(ps, ts):
            it = iter(ts)
            p_out, t_out = self.rule(list(ps), [zeros[i] if i in zeros else next(it)
                                                for i in range(len(ps))])
            return list(p_out), list(t_out)

        return vmap(one, in_axes=(list(dims), [dims[i] for i in live]))(
            list(primals), [tangents[i] for i in live])


_deferred_jvp_call_p = _define_deferred_call("custom_jvp_call_deferred")
_deferred_vjp_call_p = _define_deferred_call("custom_vjp_call_deferred")
_DEFERRED_CALLS = frozenset({"custom_jvp_call_deferred", "custom_vjp_call_deferred"})


def _sub_programs(value):
    """The `ClosedJaxpr`s in an equation param (one, or a tuple of them)."""
    if isinstance(value, ClosedJaxpr):
        return [value]
    if isinstance(value, tuple):
        return [x for x in value if isinstance(x, ClosedJaxpr)]
    return []


def _deferred_status(jaxpr):
    """(holds deferred calls, holds other user-defined primitives), sub-jaxprs included."""
    deferred = other = False
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in _DEFERRED_CALLS:
            deferred = True
        elif name not in core._BUILTIN_NAMES:
            other = True
        for v in eqn.params.values():
            for sub in _sub_programs(v):
                d, o = _deferred_status(sub.jaxpr)
                deferred, other = deferred or d, other or o
    return deferred, other


def _inline_param(value):
    if isinstance(value, ClosedJaxpr):
        return ClosedJaxpr(inline_deferred_calls(value._handle)) if _deferred_status(value.jaxpr)[0] else value
    if isinstance(value, tuple) and any(isinstance(x, ClosedJaxpr) for x in value):
        return tuple(_inline_param(x) for x in value)
    return value


def _eval_inlined(jaxpr, consts, args):
    """Evaluates `jaxpr` by `bind`, a deferred call as its traced function."""

    def apply(eqn, ins):
        if eqn.primitive.name in _DEFERRED_CALLS:
            call = eqn.params["call_jaxpr"]
            return _eval_inlined(call.jaxpr, call.consts, ins)
        return core.bind_eqn(eqn, ins, {k: _inline_param(v) for k, v in eqn.params.items()})

    return core.walk_jaxpr(jaxpr, consts, args, apply)


def inline_deferred_calls(closed):
    """The closed jaxpr handle `closed` with its deferred custom-rule calls
    (symbolic-zeros rules, also in sub-jaxprs) replaced by their traced
    functions: an ordinary program (it runs natively and exports). `closed`
    itself where it holds none, or holds other user-defined primitives."""
    from . import _core

    if not _core.holds_dynamic(closed):
        return closed
    view = ClosedJaxpr(closed)
    deferred, other = _deferred_status(view.jaxpr)
    if not deferred or other:
        return closed
    specs = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
             for a in (ShapedArray.from_record(r) for r in closed.in_avals())]
    _, in_tree = tree_flatten((tuple(specs), {}))

    def inlined(*xs):
        return _eval_inlined(view.jaxpr, view.consts, xs)

    out, _, captures = trace_to_jaxpr(inlined, specs, in_tree, "inlined")
    return closed if captures else out


def _maybe_perturbed(x):
    """Whether `x` may carry a nonzero tangent in the differentiation now
    being traced: a traced inexact value (integer values never do)."""
    return type(x) is Tracer and dtypes.is_float_name(core.get_aval(x).dtype_name)


class _DeferredVjp:
    """The JVP of one staged `custom_vjp` call (symbolic-zeros rules), traced
    when a tangent reaches it: `fwd` runs with `perturbed` set from the
    tangents present, the output tangents are `custom_lin` of the residuals,
    transposed by the traced `bwd`."""

    def __init__(self, fun, args, nondiff, leaves, in_tree, out_tree):
        self.fun = fun
        self.args = [a if i in nondiff else None for i, a in enumerate(args)]
        self.nondiff = nondiff
        self.avals = _leaf_avals(leaves)
        self.in_tree, self.out_tree = in_tree, out_tree

    def __call__(self, primals, tangents):
        from .interpreters import ad
        fun, name = self.fun, _fun_name(self.fun.fun)
        p_in = [CustomVJPPrimal(p, type(t) is not ad.Zero) for p, t in zip(primals, tangents)]
        res = fun.fwd(*_merge(self.args, self.nondiff, tree_unflatten(self.in_tree, p_in)))
        what = f"Custom VJP fwd rule {_fun_name(fun.fwd)} for function {name}"
        out, residuals = _rule_pair(res, what, lambda: (
            "where the first element represents the primal output and the second the residuals."))
        o_leaves, _ = _rule_primal_leaves(out, self.out_tree, what, lambda tree: (
            f"a primal output with the structure of the function's output: {tree} vs {self.out_tree}."))
        # As JAX: residuals not computed from traced values reach bwd as the
        # constants they are (a Python bool stays a bool).
        r_leaves, r_tree = tree_flatten(residuals)
        r_traced = [x for x in r_leaves if isinstance(x, Tracer)]
        out_avals = [core.get_aval(o) for o in o_leaves]
        nr = len(r_traced)

        def bwd(res, cts):
            # Zero output cotangents reach bwd as SymbolicZeros, as in JAX.
            cts = [SymbolicZero(_tangent_aval(a)) if type(c) is ad.Zero else c
                   for c, a in zip(cts, out_avals)]
            it = iter(res)
            r_in = [next(it) if isinstance(x, Tracer) else x for x in r_leaves]
            return self.fun._bwd_leaves(self.args, self.nondiff, list(primals), self.in_tree,
                                        self.out_tree, r_tree, r_in, cts)

        t_in = [_instantiate_zeros(None, _tangent_aval(a)) if type(t) is ad.Zero else t
                for t, a in zip(tangents, self.avals)]
        t_out = _deferred_lin_p.bind(*r_traced, *t_in, rule=_LinRule(
            nr, [_tangent_aval(a) for a in out_avals], bwd))
        return list(o_leaves), list(t_out)


class _LinRule:
    """The linear part of a deferred `custom_vjp` call: `nres` residual
    operands, then the input tangents; its output tangents have avals
    `out_avals`; transposed by `bwd(residuals, output cotangents)`."""

    def __init__(self, nres, out_avals, bwd):
        self.nres, self.out_avals, self.bwd = nres, out_avals, bwd


def _define_deferred_lin():
    """`custom_lin_deferred`: as `custom_lin`, with `bwd` traced at
    transposition, when it is known which output cotangents are zero."""
    from .interpreters import ad, batching

    p = Primitive("custom_lin_deferred")
    p.multiple_results = True

    def impl(*args, rule):
        raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")

    def transpose(cts, *operands, rule):
        res = operands[:rule.nres]
        return [None] * rule.nres + list(rule.bwd(res, list(cts)))

    def batch(args, dims, rule):
        # All mapped axes moved to the front; `bwd` is mapped over the
        # residuals and output cotangents, and a cotangent for an unmapped
        # input tangent is summed over the mapped axis.
        from ._vmap import vmap
        from . import lax

        size = next(np.shape(x)[d] for x, d in zip(args, dims) if d is not None)
        args = [x if d in (None, 0) else lax.transpose(
            x, (d,) + tuple(i for i in range(np.ndim(x)) if i != d)) for x, d in zip(args, dims)]
        dims = [None if d is None else 0 for d in dims]
        res_dims, t_dims = dims[:rule.nres], dims[rule.nres:]

        def bwd(res, cts):
            live = [i for i, c in enumerate(cts) if type(c) is not ad.Zero]

            def one(res, live_cts):
                it = iter(live_cts)
                return list(rule.bwd(list(res), [next(it) if i in live else ad.Zero(a)
                                                 for i, a in enumerate(rule.out_avals)]))

            outs = vmap(one, in_axes=(res_dims, [0] * len(live)))(
                list(res), [cts[i] for i in live])
            return [o.sum(0) if d is None else o for o, d in zip(outs, t_dims)]

        out_avals = [ShapedArray((size,) + tuple(a.shape), a.dtype_name, a.weak_type)
                     for a in rule.out_avals]
        outs = p.bind(*args, rule=_LinRule(rule.nres, out_avals, bwd))
        return outs, [0] * len(outs)

    p.def_impl(impl)
    p.def_abstract_eval(lambda *avals, rule: rule.out_avals)
    ad.primitive_transposes[p] = transpose
    batching.primitive_batchers[p] = batch
    return p


_deferred_lin_p = _define_deferred_lin()


def _astype(x, name):
    from . import lax

    return lax.convert_element_type(x, name)


class custom_vjp(_CustomFunction):
    """Wrap ``fun`` so that its reverse-mode derivative is given by a forward / backward pair.

    Register them with ``defvjp(fwd, bwd)``: ``fwd(*args)`` returns ``(output, residuals)`` and
    ``bwd(residuals, output_cotangent)`` returns a tuple with one cotangent per argument.
    Forward mode (``jvp``) of a ``custom_vjp`` function raises TypeError, as in JAX.
    ``nondiff_argnums`` names arguments passed to ``bwd`` first, as plain values.

    Example:
      >>> import microjax_rs as jax
      >>> import microjax_rs.numpy as jnp
      >>> @jax.custom_vjp
      ... def clip_gradient(x):
      ...     return x
      >>> def fwd(x):
      ...     return x, None
      >>> def bwd(residuals, g):
      ...     return (jnp.clip(g, -1.0, 1.0),)
      >>> clip_gradient.defvjp(fwd, bwd)
      >>> print(jax.grad(lambda x: 5.0 * clip_gradient(x))(2.0))
      1.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = None
        self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """`fwd(*args) -> (out, residuals)`; `bwd(residuals, out_cotangent) -> tuple of input cotangents`.

        With `symbolic_zeros=True`, `fwd` and `bwd` are traced when the call
        is differentiated, as in JAX: `fwd` gets each differentiable argument
        leaf as a `CustomVJPPrimal(value, perturbed)`, `perturbed` True
        exactly for the leaves a nonzero tangent reaches (also under `jit`);
        `bwd` gets `SymbolicZero`s for zero output cotangents and may return
        `SymbolicZero`s (or None) for zero cotangents. Residuals not computed
        from traced values reach `bwd` as the constants they are."""
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = bool(symbolic_zeros)

    _RULE, _MISSING = "fwd", "No VJP defined for custom_vjp function {} using defvjp."

    def _call_staged(self, name, args, nondiff, leaves, in_tree, closed, out_tree, captures):
        if captures:
            if any(isinstance(c, Tracer) and isinstance(c._trace, ADTrace) for c in captures):
                raise core.UnexpectedTracerError(
                    f"custom_vjp function {name} closes over a value that is being differentiated "
                    f"(a JVPTracer in JAX's terms). Pass it as an argument, or use "
                    f"jax.closure_convert to hoist it out.")
            return _eval_plain(closed, out_tree, leaves, captures)
        if not _rule_nesting_allowed(self):
            # called from its own rules, nested deeper: the primal function itself
            return _eval_plain(closed, out_tree, leaves)
        if self.symbolic_zeros:
            # Not being differentiated now: trace fwd/bwd when a tangent
            # arrives, so `perturbed` says which inputs really carry one.
            outs = _deferred_vjp_call_p.bind(
                *leaves, call_jaxpr=ClosedJaxpr(closed),
                rule=_DeferredVjp(self, args, nondiff, leaves, in_tree, out_tree))
            return tree_unflatten(out_tree, outs)
        _tracing_rules.enter(self)
        try:
            fwd, bwd, num_res = self._trace_rules(args, nondiff, leaves, in_tree, closed, out_tree, name)
        finally:
            _tracing_rules.leave(self)
        outs = custom_vjp_call_p.bind(*leaves, call_jaxpr=ClosedJaxpr(closed), fwd_jaxpr=ClosedJaxpr(fwd),
                                      bwd_jaxpr=ClosedJaxpr(bwd), num_res=num_res, name=name)
        return tree_unflatten(out_tree, outs)

    def _bwd_leaves(self, args, nondiff, leaves, in_tree, out_tree, r_tree, r_in, c_in):
        """The input cotangent leaves `bwd` gives for residuals `r_in` and output
        cotangents `c_in` (checked against the arguments, zeros instantiated)."""
        nd_vals = [args[i] for i in sorted(nondiff)]
        avals = _leaf_avals(leaves)
        cts = self.bwd(*nd_vals, tree_unflatten(r_tree, r_in), tree_unflatten(out_tree, c_in))
        if not isinstance(cts, (tuple, list)):
            raise TypeError(f"Custom VJP bwd rule must produce a tuple of cotangents, one per "
                            f"non-static argument; got {type(cts).__name__}.")
        dyn_count = len(args) - len(nondiff)
        if len(cts) != dyn_count:
            raise TypeError(f"Custom VJP bwd rule must produce an output with the same container "
                            f"(pytree) structure as the args tuple of the primal function, and in "
                            f"particular must produce a tuple of length equal to the number of "
                            f"arguments to the primal function, but got bwd output structure of "
                            f"length {len(cts)} for {dyn_count} arguments.")
        c_leaves = []
        for ct_arg, dyn_arg in zip(cts, tree_unflatten(in_tree, list(leaves))):
            arg_leaves, arg_tree = tree_flatten(dyn_arg)
            if ct_arg is None:
                c_leaves.extend([None] * len(arg_leaves))
                continue
            ls, t = _tangent_leaves(ct_arg, arg_tree)
            if len(ls) != len(arg_leaves):
                raise TypeError(f"Custom VJP bwd rule must produce an output with the same "
                                f"container (pytree) structure as the args tuple of the primal "
                                f"function: got {t} for an argument of structure {arg_tree}.")
            c_leaves.extend(ls)
        c_leaves = [_instantiate_zeros(c, _tangent_aval(a)) for c, a in zip(c_leaves, avals)]
        for c, a in zip(c_leaves, avals):
            ca = core.get_aval(c)
            if ca.shape != a.shape:
                raise ValueError(f"Custom VJP bwd rule must produce an output with shapes/dtypes "
                                 f"as args tuple of the primal function: got {ca.str_short()} "
                                 f"for an argument of {a.str_short()}.")
        c_leaves = [c if core.get_aval(c).dtype_name == _tangent_aval(a).dtype_name
                    else _astype(c, _tangent_aval(a).dtype_name) for c, a in zip(c_leaves, avals)]
        return c_leaves

    def _trace_rules(self, args, nondiff, leaves, in_tree, closed, out_tree, name):
        avals = _leaf_avals(leaves)
        out_avals = [ShapedArray.from_record(a) for a in closed.out_avals()]
        parent = _rule_parent()
        # fwd: primals -> (outs..., residuals...)
        ftrace = RuleTrace(f"fwd({name})", parent)
        thunks = [_known_thunk(x) for x in leaves]
        with core.new_trace(ftrace):
            p_in = [ftrace.new_rule_input(a, k) for a, k in zip(avals, thunks)]
            if self.symbolic_zeros:
                p_in = [CustomVJPPrimal(p, _maybe_perturbed(x)) for p, x in zip(p_in, leaves)]
            primals = _merge(args, nondiff, tree_unflatten(in_tree, p_in))
            res = self.fwd(*primals)
            what = f"Custom VJP fwd rule {_fun_name(self.fwd)} for function {name}"
            out, residuals = _rule_pair(res, what, lambda: (
                "where the first element represents the primal output and the second the residuals."))
            o_leaves, o_tree = _rule_primal_leaves(out, out_tree, what, lambda tree: (
                f"a primal output with the structure of the function's output: {tree} vs {out_tree}."))
            _check_primal_avals(o_leaves, out_avals, lambda got, want: (
                f"{what} must produce a primal output with the shapes/dtypes of the function's "
                f"output: got {got}, expected {want}."))
            r_leaves, r_tree = tree_flatten(residuals)
            r_leaves = [x if isinstance(x, Tracer) else core.to_array(x) for x in r_leaves]
            fwd = _build_rule(ftrace, list(o_leaves) + r_leaves)
            r_tracers = list(r_leaves)
        if ftrace.captures:
            raise TypeError(f"the custom_vjp fwd rule of {name} closes over traced values of an "
                            f"enclosing transformation; pass them as arguments instead")
        r_avals = [core.get_aval(x) for x in r_tracers]
        # bwd: (residuals..., output cotangents...) -> input cotangents
        btrace = RuleTrace(f"bwd({name})", parent)

        def res_thunk(x):
            if type(x) is Tracer and x._trace is ftrace:
                return lambda: ftrace.known_value(x)
            return lambda: x

        with core.new_trace(btrace):
            r_in = [btrace.new_rule_input(a, res_thunk(x)) for a, x in zip(r_avals, r_tracers)]
            c_in = [btrace.new_rule_input(_tangent_aval(a)) for a in out_avals]
            c_leaves = self._bwd_leaves(args, nondiff, leaves, in_tree, out_tree, r_tree, r_in, c_in)
            bwd = _build_rule(btrace, c_leaves)
        if btrace.captures:
            raise TypeError(f"the custom_vjp bwd rule of {name} closes over traced values of an "
                            f"enclosing transformation; pass them as arguments instead")
        return fwd, bwd, len(r_leaves)


def custom_gradient(fun):
    """`fun(*args) -> (out, vjp_fn)`, as a custom_vjp function."""

    @custom_vjp
    def f(*args):
        out, _ = fun(*args)
        return out

    def fwd(*args):
        out, vjp_fn = fun(*args)
        return out, (args, )

    def bwd(res, ct):
        (args,) = res
        _, vjp_fn = fun(*args)
        cts = vjp_fn(ct)
        return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)

    f.defvjp(fwd, bwd)
    return f


def closure_convert(fun, *example_args):
    """`(converted_fun, consts)`: `converted_fun(*args, *consts)` computes
    `fun(*args)`, with the values `fun` closes over from enclosing
    transformations (e.g. a value being differentiated) hoisted into `consts`
    so they can flow through a `custom_vjp` function as arguments."""
    leaves, in_tree = tree_flatten(example_args)
    flat_tree = tree_structure((tuple(leaves), {}))

    def flat(*ls):
        return fun(*tree_unflatten(in_tree, list(ls)))

    closed, out_tree, captures = trace_to_jaxpr(flat, leaves, flat_tree, _fun_name(fun))
    cj = ClosedJaxpr(closed)
    n_args = len(leaves)

    def converted(*args_and_consts):
        args, consts = args_and_consts[:len(example_args)], args_and_consts[len(example_args):]
        arg_leaves, tree = tree_flatten(tuple(args))
        if tree != in_tree or len(arg_leaves) != n_args:
            raise TypeError(f"closure_convert: expected arguments of structure {in_tree}, got {tree}")
        outs = core.eval_jaxpr(cj.jaxpr, cj.consts, *arg_leaves, *consts)
        return tree_unflatten(out_tree, outs)

    return converted, list(captures)


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """`fun(residual_args, linear_args)`, linear in `linear_args`, whose
    transpose is `fun_transpose(residual_args, cotangent)` (JAX's
    `custom_derivatives.linear_call`). One `linear_call` equation: forward
    mode applies `fun` to the tangents, reverse mode and `linear_transpose`
    call `fun_transpose`, and transposing twice gives `fun` back."""

    res_leaves, _ = tree_flatten(residual_args)
    lin_leaves, lin_tree = tree_flatten(linear_args)
    leaves, in_tree = tree_flatten(((residual_args, linear_args), {}))
    callee, out_tree, captures = trace_to_jaxpr(fun, leaves, in_tree, getattr(fun, "__name__", "linear_call"))
    if captures:
        raise ValueError("linear_call: `fun` must not close over traced values; pass them as residual_args")
    outs = [ShapeDtypeStruct(a.shape, a.dtype_name, a.weak_type) for a in callee.out_avals()]
    out_struct = tree_unflatten(out_tree, outs)
    t_leaves, t_in_tree = tree_flatten(((residual_args, out_struct), {}))
    transpose, t_out_tree, t_captures = trace_to_jaxpr(
        fun_transpose, t_leaves, t_in_tree, getattr(fun_transpose, "__name__", "linear_call_transpose"))
    if t_captures:
        raise ValueError("linear_call: `fun_transpose` must not close over traced values")
    if t_out_tree != lin_tree:
        raise TypeError(
            f"linear_call: fun_transpose must return the structure of linear_args ({lin_tree}), "
            f"got {t_out_tree}")
    want = [core.get_aval(x) for x in lin_leaves]
    for k, (a, w) in enumerate(zip(transpose.out_avals(), want)):
        shape, name = a.shape, a.dtype_name
        if tuple(shape) != tuple(w.shape) or name != w.dtype_name:
            raise TypeError(
                f"linear_call: fun_transpose output {k} has type {name}{list(shape)} but the linear "
                f"argument has type {w.dtype_name}{list(w.shape)}")
    res = Primitive("linear_call").bind(
        *res_leaves, *lin_leaves, callee=ClosedJaxpr(callee), transpose=ClosedJaxpr(transpose),
        num_res=len(res_leaves), num_callee_consts=0, num_transpose_consts=0)
    return tree_unflatten(out_tree, res)
