"""AD mode of tracing (grad, jvp, vjp, linearize, ...).

Every tracer of an `ADTrace` is *perturbed*: it depends on a differentiated
input along a float path. An equation with no perturbed operand, or whose
outputs are all bool/int (comparisons, integer conversions), is not recorded:
it runs one level down on the operands' known values and returns a value of
that level — where JAX's JVP tracer returns plain arrays. So Python control
flow on such values works under `grad` on concrete inputs.

Known values of recorded variables are computed lazily (only when `bool`,
`int` or `__index__` needs one), by the eager kernels one level down, each
equation at most once per trace. The recorded program goes to Rust for the
transform (JVP, linearize, VJP) and the result runs one level down: through
the executor when the level below is eager, spliced into the enclosing
builder in one call under `jit`/`make_jaxpr`, and split by partial
evaluation under another AD or batch trace (`run_split`): the part reading
none of that trace's tracers runs below it, the rest is spliced into it.
"""
from .. import _core, _lru, core, dtypes
from ..config import config
# _NONDIFF_PRIMS: primitives whose outputs are never perturbed (the core's
# non-differentiable ones: bool/int results, and stop_gradient, whose value
# is taken one level down, which cuts the path).
from .._src.tables import INEXACT_NAMES as _FLOATS, NONDIFF_PRIMS as _NONDIFF_PRIMS
from ..core import ArrayImpl, ClosedJaxpr, StagingTrace, Tracer, _state, named_source, source_info


def _nondiff_output(prim, params):
    """Primitives whose outputs are never perturbed (bool/int results)."""
    if prim.name in _NONDIFF_PRIMS:
        return True
    if prim.name == "convert_element_type":
        return not dtypes.is_inexact_name(dtypes.dtype_name(params["new_dtype"]))
    return False


def bind_at(level, prim, args, params):
    """Binds `prim` at trace `level` (None = eager)."""
    if level is None:
        return core.eval_primitive(prim, args, params)
    return level.process_primitive(prim, args, params)


class ADTrace(StagingTrace):
    """Staging trace whose values are all perturbed, with lazily known values."""

    captures_device_arrays = True  # its programs run where a GpuArray is
    leak_checked = False  # as JAX 0.10.2: differentiation traces are not leak-checked

    def __init__(self, fun_name, parent):
        super().__init__(fun_name)
        self.parent = parent
        # `known` (var id -> value one level down), `eqn_of` (out var id ->
        # the `_core.StagedEqn` that made it) and `record_source` (see
        # trace_ad) are fields of `_core.TraceBase`.

    def new_input(self, value):
        """A perturbed input whose known value is `value` (one level down):
        a scalar, a tracer of an enclosing trace or a device array (`_core.trace_ad`
        stages an array input itself)."""
        if type(value) in (bool, int, float) or not (
                isinstance(value, (ArrayImpl, Tracer)) or core.on_device(value)):
            value = core.to_array(value)  # a device array stays where it is
        t = self.new_arg(core.get_aval(value))
        self.known[t._var] = value
        return t

    def _capture(self, x):
        var = super()._capture(x)
        self.known[var] = x
        return var

    def _const(self, x):
        var = super()._const(x)
        self.known[var] = x
        return var

    def process_primitive(self, prim, args, params):
        # The hot path of every traced operation under grad/jvp: the checks
        # here, then one Rust call stages the equation and records it.
        for a in args:
            if type(a) is Tracer and a._trace is self:
                break
        else:
            return bind_at(self.parent, prim, args, params)
        if prim.name in _NONDIFF_PRIMS or not prim._staged or (
                prim.name == "convert_element_type" and _nondiff_output(prim, params)):
            low = [self.known_value(a) if (type(a) is Tracer and a._trace is self) else a for a in args]
            return bind_at(self.parent, prim, low, params)
        src = _state.source
        if src is None and self.record_source:
            src = source_info(3)  # frames 1 and 2 up are this method and its caller, always ours
        if _state.names:
            src = named_source(src, self._name_base)
        return self.builder.stage(self, prim.handle(params), args, src, prim.multiple_results,
                                  (self.eqn_of, prim, params))

    def known_value(self, t):
        """The value of a perturbed tracer one level down (memoized)."""
        known = self.known
        v = t._var
        if v in known:
            return known[v]
        return _evaluate_known(self, v, _no_equation)

    def run_program(self, closed, inputs):
        """Runs a whole program at this level: the part that depends on no
        perturbed input runs one level down (its outputs stay concrete, as
        if its equations had been bound one by one), the rest is spliced in
        one call and recorded as one step for lazily known values. Its
        bool/int outputs are never perturbed: like a bool/int equation bound
        here, they are values one level down (their known values)."""
        def splice(unknown, args):
            known, eqn_of = self.known, self.eqn_of
            outs = self.splice(unknown, args)
            # Only variables the splice created: an output that is one of
            # its inputs passed through keeps its own record.
            fresh = [o._var if type(o) is Tracer and o._var not in eqn_of and o._var not in known
                     else None for o in outs]
            record = _core.StagedEqn(_Program(unknown), None, tuple(args), fresh)
            for v in fresh:
                if v is not None:
                    eqn_of[v] = record
            return [self.known_value(o) if type(o) is Tracer and o.aval.dtype_name not in _FLOATS
                    else o for o in outs]

        return run_split(self, closed, inputs, splice)

    def lower(self, x):
        """`x` with this trace's tracers replaced by their known values."""
        if type(x) is Tracer and x._trace is self:
            return self.known_value(x)
        return x

    def concrete_value(self, tracer, what, error):
        low = self.known_value(tracer)
        if isinstance(low, Tracer):
            return low._trace.concrete_value(low, what, error)
        return low

    def __repr__(self):
        return f"ADTrace({self.fun_name})"


def run_at(level, closed, inputs):
    """Runs a closed jaxpr handle at trace `level` (None = eager: on the GPU
    of a `GpuArray` input, results staying there, else on the host)."""
    if level is None:
        for x in inputs:
            if core.on_device(x):
                return core.run_on_device(closed, inputs, x)
        vals = [x if type(x) is ArrayImpl else core.to_array(x) for x in inputs]
        outs = closed.run(vals)
        if config.debug_checks:
            from .._src import nan_checks

            nan_checks.check_program(closed, vals, outs, "a transformed function")
        return outs
    return level.run_program(closed, inputs)


def replay(closed, inputs):
    """Binds a program's equations one by one in the current trace."""
    cj = _view(closed)
    return core.eval_jaxpr(cj.jaxpr, cj.consts, *inputs)


class _Program:
    """Stands for a spliced program in an AD trace's equation records."""

    __slots__ = ("closed",)
    multiple_results = True

    def __init__(self, closed):
        self.closed = closed


# Bounded (see _lru.py): entries of the transformed-program caches below.
_CACHE_LIMIT = 512
_split_cache = _lru.LRU("ad.split", _CACHE_LIMIT)


def run_split(level, closed, inputs, splice):
    """Runs `closed` at a mode trace `level` (AD or batch), which records only
    equations reading one of its own tracers: partial evaluation (Rust, cached
    per program and input pattern) splits the program into the part that
    reads none — run one level down, so its outputs are values of that level
    — and the rest, which `splice(unknown, residuals + own inputs)` appends
    to the trace in one call. Programs with ordered effects are replayed
    equation by equation instead, so their effects keep their order."""
    mine = tuple([type(x) is Tracer and x._trace is level for x in inputs])
    if True not in mine:
        return run_at(level.parent, closed, inputs)
    known, unknown, out_unknowns, num_res, effectful = _cached(
        _split_cache, (closed, mine), lambda: _core.partial_eval_jaxpr(closed, list(mine)))
    if effectful:
        return replay(closed, inputs)
    kouts = run_at(level.parent, known, [x for x, m in zip(inputs, mine) if not m])
    nk = len(kouts) - num_res
    uouts = iter(splice(unknown, list(kouts[nk:]) + [x for x, m in zip(inputs, mine) if m]))
    kit = iter(kouts[:nk])
    return [next(uouts) if u else next(kit) for u in out_unknowns]


_views = _lru.LRU("ad.views", _CACHE_LIMIT)  # id(handle) -> (handle, its ClosedJaxpr view)


def _view(closed):
    """The Python view of a program handle, built once per handle: the
    programs run here come from the transform caches below, so the same
    handle is run again and again (building `Jaxpr` costs more than running)."""
    hit = _views.get(id(closed))
    if hit is not None and hit[0] is closed:
        return hit[1]
    cj = ClosedJaxpr(closed)
    _views[id(closed)] = (closed, cj)
    return cj


def trace_ad(flat_fun, primals, name, private=False):
    """Traces `flat_fun(list of tracers) -> (out leaves, aux)` in AD mode.

    Returns (trace, closed jaxpr handle, out leaves, lowered aux, inputs) where
    `inputs` = primals + captured values, the jaxpr's input order. `private`:
    the caller runs the transformed program at once and never hands it out,
    so at the eager level its equations need no source lines (finding the
    user's frame is a good part of staging an equation). The tracing itself
    is `_core.trace_ad` (rust/python/src/traces.rs), which the `grad` path
    (rust/python/src/grad.rs) runs too."""
    parent = core.current_trace()
    trace = ADTrace(name, parent)
    if private and parent is None:
        trace.make_private()

    def flat(tracers):
        outs, aux = flat_fun(tracers)
        return outs, _lower_tree(trace, aux)

    closed, outs, aux, inputs = _core.trace_ad(trace, core._state.stack, flat, primals, ADTrace.new_input)
    core.check_leaks(trace)
    return trace, closed, outs, aux, inputs


def _lower_tree(trace, tree):
    if tree is None:
        return None
    from ..tree_util import _tree_map_data

    return _tree_map_data(trace.lower, tree)


_vjp_cache = _lru.LRU("ad.vjp", _CACHE_LIMIT)
_vg_cache = _lru.LRU("ad.value_and_grad", _CACHE_LIMIT)
_jvp_cache = _lru.LRU("ad.jvp", _CACHE_LIMIT)
_lin_cache = _lru.LRU("ad.linearize", _CACHE_LIMIT)


_cached = _lru.cached


def _lifted(closed, nonzeros):
    """Float literals become leading non-differentiated inputs, so programs
    that differ only in literal values share one transform (and compile)."""
    lifted, lits = closed.lift_literals()
    return lifted, list(lits), tuple([False] * len(lits) + list(nonzeros))


def vjp_program(closed, nonzeros):
    """(fwd, bwd, num_res, lits): run `fwd` on `lits + inputs`."""
    lifted, lits, nz = _lifted(closed, nonzeros)
    fwd, bwd, num_res = _cached(_vjp_cache, (lifted, nz), lambda: _core.vjp_jaxpr(lifted, list(nz)))
    return fwd, bwd, num_res, lits


def value_and_grad_program(closed, nonzeros):
    """(program, lits): run it on `lits + inputs` for (output, cotangents of
    the nonzero inputs), the backward pass seeded with ones."""
    lifted, lits, nz = _lifted(closed, nonzeros)
    prog = _cached(_vg_cache, (lifted, nz), lambda: _core.value_and_grad_jaxpr(lifted, list(nz)))
    return prog, lits


def jvp_program(closed, nonzeros):
    """(jvp program, lits): run it on `lits + primals + tangents`."""
    lifted, lits, nz = _lifted(closed, nonzeros)
    prog, _ = _cached(_jvp_cache, (lifted, nz), lambda: _core.jvp_jaxpr(lifted, list(nz), True))
    return prog, lits


def linearize_program(closed, nonzeros):
    """(primal, tangent, num_res, lits): run `primal` on `lits + inputs`."""
    lifted, lits, nz = _lifted(closed, nonzeros)
    primal, tangent, num_res = _cached(_lin_cache, (lifted, nz),
                                       lambda: _core.linearize_jaxpr(lifted, list(nz)))
    return primal, tangent, num_res, lits


class RuleTrace(ADTrace):
    """Traces a custom-derivative rule: every equation is recorded (the rule
    jaxpr is a function of its inputs), but inputs may carry known values —
    the primal values of the call being differentiated — so Python control
    flow on primals works inside a rule, as in JAX. `known_inputs[i]` is a
    zero-argument function giving input i's value one level down, or None."""

    def __init__(self, fun_name, parent):
        super().__init__(fun_name, parent)
        self.lazy = {}

    def run_program(self, closed, inputs):
        # Every equation of a rule is recorded, so nothing may run below.
        return replay(closed, inputs)

    def new_rule_input(self, aval, known=None):
        t = self.new_arg(aval)
        if known is not None:
            self.lazy[t._var] = known
        return t

    def process_primitive(self, prim, args, params):
        if not prim._staged:
            return StagingTrace.process_primitive(self, prim, args, params)
        outs = StagingTrace.process_primitive(self, prim, args, params)
        outs_list = outs if prim.multiple_results else [outs]
        record = _core.StagedEqn(prim, params, tuple(args), tuple([o._var for o in outs_list]))
        for o in outs_list:
            self.eqn_of[o._var] = record
        return outs

    def known_value(self, t):
        return _evaluate_known(self, t._var, self._leaf_value)

    def _leaf_value(self, cur):
        """A variable with no recorded equation: a lazily given input."""
        if cur in self.lazy:
            return self.lazy[cur]()
        raise _NoKnownValue()

    def concrete_value(self, tracer, what, error):
        try:
            low = self.known_value(tracer)
        except _NoKnownValue:
            raise error(core._concretization_message(tracer, what)) from None
        if isinstance(low, Tracer):
            return low._trace.concrete_value(low, what, error)
        return low

    def __repr__(self):
        return f"RuleTrace({self.fun_name})"


class _NoKnownValue(Exception):
    pass


def _no_equation(var):
    """Every perturbed tracer of an ADTrace comes from a recorded equation."""
    raise KeyError(f"no equation records variable {var}")


def _evaluate_known(trace, v, leaf):
    """Known value of variable `v` of an AD-mode trace: evaluates the recorded
    equations it depends on one level down, each at most once (memoized in
    `trace.known`), iteratively (deep programs do not recurse). `leaf(var)`
    gives the value of a variable without a recorded equation."""
    known = trace.known
    todo = [v]
    while todo:
        cur = todo[-1]
        if cur in known:
            todo.pop()
            continue
        rec = trace.eqn_of.get(cur)
        if rec is None:
            known[cur] = leaf(cur)
            todo.pop()
            continue
        prim, params, args, outvars = rec.prim, rec.params, rec.args, rec.outvars
        missing = [a._var for a in args
                   if type(a) is Tracer and a._trace is trace and a._var not in known]
        if missing:
            todo.extend(missing)
            continue
        low = [known[a._var] if (type(a) is Tracer and a._trace is trace) else a for a in args]
        if type(prim) is _Program:
            res = run_at(trace.parent, prim.closed, low)
        else:
            res = bind_at(trace.parent, prim, low, params)
        if not prim.multiple_results:
            res = [res]
        for ov, r in zip(outvars, res):
            if ov is not None:  # None: a literal output of a spliced program
                known[ov] = r
        todo.pop()
    return known[v]


# ----------------------------------------------------------------------------
# Rules of user-defined primitives (`core.Primitive("name")`), as JAX's
# `ad.primitive_jvps`, `ad.primitive_transposes`, `ad.defjvp`,
# `ad.deflinear2`. The registries are read when a program holding the
# primitive is differentiated (`interpreters/user_rules.py` traces them).


class _RuleRegistry(dict):
    """Primitive -> rule; registering a rule drops the primitive's traced rules."""

    def __setitem__(self, prim, rule):
        super().__setitem__(prim, rule)
        _rules_changed(prim)

    def __delitem__(self, prim):
        super().__delitem__(prim)
        _rules_changed(prim)


def _rules_changed(prim):
    changed = getattr(prim, "_rules_changed", None)
    if changed is not None:
        changed()


primitive_jvps = _RuleRegistry()
primitive_transposes = _RuleRegistry()


class _TracerOfTrace(type):
    def __instancecheck__(cls, x):
        return type(x) is core.Tracer and isinstance(getattr(x, "_trace", None), cls._trace_type)


class JVPTracer(metaclass=_TracerOfTrace):
    """`isinstance(x, ad.JVPTracer)`: `x` is a tracer of a differentiation
    trace (microjax_rs has one tracer type; this class only answers the
    check, as libraries use it)."""

    _trace_type = ADTrace


class Zero:
    """A symbolic zero tangent or cotangent of type `aval` (JAX's `ad.Zero`)."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    @staticmethod
    def from_primal_value(x):
        return Zero(core.get_aval(x))

    def __repr__(self):
        return f"Zero({self.aval})"


class UndefinedPrimal:
    """A linear operand of an equation being transposed (JAX's `ad.UndefinedPrimal`)."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_undefined_primal(x):
    return type(x) is UndefinedPrimal


def zeros_like_aval(aval):
    """Zeros of type `aval`, staged as one broadcast of a scalar."""
    zero = _core.scalar(0, aval.dtype_name, aval.weak_type)
    if not aval.shape:
        return zero
    return core.Primitive("broadcast_in_dim").bind(
        zero, shape=tuple(aval.shape), broadcast_dimensions=(), sharding=None)


def instantiate_zeros(t):
    """`t`, with a symbolic zero made an array of zeros."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def _add_tangents(xs):
    out = xs[0]
    for x in xs[1:]:
        out = core.Primitive("add").bind(out, x)
    return out


def defjvp(prim, *jvprules):
    """JVP of `prim` as a sum of per-operand rules: `jvprules[i](g, *primals,
    **params)` is the tangent contribution of operand i (None: operand i
    has no derivative)."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        terms = [jvp(t, *primals, **params) for jvp, t in zip(jvprules, tangents)
                 if jvp is not None and type(t) is not Zero]
        if not terms:
            return out, Zero(core.get_aval(out))
        return out, _add_tangents(terms)

    primitive_jvps[prim] = rule
    return rule


def _linear_jvp(prim, primals, tangents, **params):
    out = prim.bind(*primals, **params)
    if all(type(t) is Zero for t in tangents):
        return out, (Zero(core.get_aval(out)) if not prim.multiple_results
                     else [Zero(core.get_aval(o)) for o in out])
    return out, prim.bind(*[instantiate_zeros(t) for t in tangents], **params)


def deflinear2(prim, transpose_rule):
    """`prim` is linear in its operands: its JVP applies it to the tangents,
    and `transpose_rule(cotangent, *args, **params)` (args: values, or
    `UndefinedPrimal` for the linear ones) gives the operands' cotangents."""
    primitive_jvps[prim] = lambda primals, tangents, **params: _linear_jvp(prim, primals, tangents, **params)
    primitive_transposes[prim] = transpose_rule


def deflinear(prim, transpose_rule):
    """As `deflinear2`, with `transpose_rule(cotangent, **params)`."""
    deflinear2(prim, lambda ct, *args, **params: transpose_rule(ct, **params))
