"""The automatic checks of `checkify` (NaN, division by zero, out-of-bounds
indices): `f` is traced to a jaxpr, which is evaluated equation by equation
(re-binding each primitive, so it runs eagerly or inside the `jit` it is
nested in), with a check after each equation that can fail. The checks of a
straight run of equations go out together, as one ordered host callback (the
scalar predicates stacked into one vector, the raw indices of index checks
as they are), emitted before any equation with an effect (a user `check`)
or a sub-program and at the end of the jaxpr, so failures are seen in
program order; with concrete operands (eagerly) they run at once. `pjit`, `cond`, `scan` and `while` are rebuilt
around checked evaluations of their sub-jaxprs; `custom_jvp_call`,
`custom_vjp_call` and `checkpoint` are evaluated through their primal
sub-jaxpr (a checkified program is not differentiated); other higher-order
primitives are re-bound unchecked inside."""
import numpy as np

from .. import _lru, core as _core
from .._callback import debug_callback as _debug_callback

# Primitives whose result is checked for NaNs (JAX 0.10.2's list; `div`
# and the scatters are checked too, after their own checks).
NAN_PRIMITIVES = frozenset("""
acos acosh add asin asinh atan2 atan atanh bessel_i0e bessel_i1e cbrt
conv_general_dilated cos cosh cumlogsumexp cummax cummin cumprod cumsum digamma
dot_general erf_inv erf erfc exp expm1 fft igamma_grad_a igamma igammac
integer_pow lgamma linear_solve log1p log logistic mul pad pow psum reduce
reduce_prod reduce_sum reduce_window reduce_window_sum
regularized_incomplete_beta rem rng_uniform rsqrt sin sinh sqrt sub tan tanh
div scatter scatter-add scatter-mul scatter-min scatter-max
""".split())

# Higher-order primitives evaluated through their primal sub-jaxpr.
_INLINED = {"custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
            "checkpoint": "jaxpr"}

# Equations before which pending checks are emitted (they hold sub-programs).
_STRUCTURED = frozenset({"pjit", "cond", "scan", "while"}) | frozenset(_INLINED)

SCATTERS = frozenset({"scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max"})


_JIT_CACHE = _lru.LRU("checkify_auto.jit", 64)


def _traced(vals):
    return any(isinstance(v, _core.Tracer) for v in vals)


def _emit(host_fn, run, *vals):
    """Runs `host_fn` on NumPy values: now for concrete ones, when the
    program runs (ordered host callback) for traced ones or, with a staged
    `checkify`'s traced run number `run`, reporting into that run."""
    from .checkify import _staged_callback
    if run is not None:
        _staged_callback(host_fn, run, *vals)
    elif _traced(vals):
        _debug_callback(host_fn, *vals, ordered=True)
    else:
        host_fn(*(np.asarray(v) for v in vals))


def _oob_payload(mask, indices, dims_map, operand_shape):
    """(raw index, axis, axis size) of the first out-of-bounds entry."""
    flat = int(np.argmax(mask.reshape(-1)))
    pos = np.unravel_index(flat, mask.shape)
    axis = int(dims_map[pos[-1]])
    return int(indices.reshape(-1)[flat]), axis, int(operand_shape[axis])


def _oob_message(shape, payload):
    index, axis, size = payload
    return (f"out-of-bounds indexing for array of shape {tuple(shape)}: index {index} "
            f"is out of bounds for axis {axis} with size {size}. ")


class _Checker:
    """Evaluates jaxprs with the enabled automatic checks; `report(message,
    category, where)` records a failure."""

    def __init__(self, nan, div, oob, report):
        self.nan, self.div, self.oob = nan, div, oob
        self.report = report
        # Checks of the jaxpr being evaluated not yet emitted: (host function,
        # its operands). They go out as one host callback, before any
        # equation with an effect or a sub-program and at the end, so their
        # order with user checks and nested checks is the program's.
        self._pending = []

    # -- checks -------------------------------------------------------------
    def _fail_if(self, pred, message, category, where):
        """Reports `message` if the scalar `pred` holds."""
        from .checkify import _active_failure
        pred = _active_failure(pred)
        self._pending.append(((message, category, where), [pred]))

    def _flush(self):
        """Emits the pending checks as one host callback; the scalar
        predicates travel stacked into one vector."""
        entries, self._pending = self._pending, []
        if not entries:
            return
        from .. import numpy as jnp
        preds = [vals[0] for what, vals in entries if isinstance(what, tuple)]
        rest = [v for what, vals in entries if not isinstance(what, tuple) for v in vals]
        packed = [jnp.stack(preds)] if preds else []

        def host(*vals):
            flags = vals[0].tolist() if preds else []
            k, start = 0, len(packed)
            for what, own in entries:
                if isinstance(what, tuple):
                    if flags[k]:
                        self.report(*what)
                    k += 1
                else:
                    what(*vals[start:start + len(own)])
                    start += len(own)
        _emit(host, getattr(self.report, "run", None), *packed, *rest)

    def _check_oob(self, operand_shape, indices, upper, dims_map, where):
        """`indices`: arrays stacked (on the host) along a new last axis into
        index vectors; `upper[k]`: the largest valid start along `dims_map[k]`."""
        upper = np.asarray(upper, dtype=np.int64)

        def host(*idx):
            idx = np.stack([np.asarray(i).astype(np.int64) for i in idx], axis=-1)
            mask = (idx < 0) | (idx > upper)
            if np.any(mask):
                payload = _oob_payload(mask, idx, dims_map, operand_shape)
                self.report(_oob_message(operand_shape, payload), "OOBError", where)
        self._pending.append((host, list(indices)))

    def _checks_before_nan(self, eqn, ins, where):
        name = eqn.primitive.name
        if self.div and name == "div":
            from .. import numpy as jnp
            self._fail_if(jnp.any(jnp.equal(ins[1], 0)), "division by zero",
                          "DivisionByZeroError", where)
        if not self.oob:
            return
        if name == "gather":
            operand, idx = ins[0], ins[1]
            dn = eqn.params["dimension_numbers"]
            sizes = eqn.params["slice_sizes"]
            smap = tuple(dn.start_index_map)
            upper = [operand.shape[d] - sizes[d] for d in smap]
            self._check_oob(operand.shape, [idx[..., k] for k in range(len(smap))], upper, smap, where)
        elif name in SCATTERS:
            operand, idx, updates = ins[0], ins[1], ins[2]
            dn = eqn.params["dimension_numbers"]
            skip = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
            sizes, pos = [], 0
            for d in range(len(operand.shape)):
                if d in skip:
                    sizes.append(1)
                else:
                    sizes.append(updates.shape[dn.update_window_dims[pos]])
                    pos += 1
            smap = tuple(dn.scatter_dims_to_operand_dims)
            upper = [operand.shape[d] - sizes[d] for d in smap]
            self._check_oob(operand.shape, [idx[..., k] for k in range(len(smap))], upper, smap, where)
        elif name in ("dynamic_slice", "dynamic_update_slice"):
            operand = ins[0]
            if name == "dynamic_slice":
                starts, sizes = ins[1:], eqn.params["slice_sizes"]
            else:
                starts, sizes = ins[2:], ins[1].shape
            if not starts:
                return
            upper = [n - s for n, s in zip(operand.shape, sizes)]
            self._check_oob(operand.shape, starts, upper, tuple(range(len(starts))), where)

    # -- evaluation ---------------------------------------------------------
    def eval(self, jaxpr, consts, args):
        state = _core._state
        prev, outer = state.source, self._pending
        self._pending = []

        def apply(eqn, ins):
            where = eqn.source_info or prev
            state.source = where
            if eqn.effects or eqn.primitive.name in _STRUCTURED:
                self._flush()
            return self._apply(eqn, ins, where)

        try:
            outs = _core.walk_jaxpr(jaxpr, consts, args, apply)
            self._flush()
        finally:
            state.source = prev
            self._pending = outer
        return outs

    def _jitted(self, closed):
        """The checked program of a `pjit` equation, jitted once per program
        and set of checks (its callbacks report to the checkify running)."""
        from .. import jit
        key = (closed, self.nan, self.div, self.oob, self.report)
        fn = _JIT_CACHE.get(key)
        if fn is None:
            body = self._sub(closed)
            fn = _JIT_CACHE[key] = jit(lambda *a: body(*a))
        return fn

    def _sub(self, closed):
        return lambda *a: self.eval(closed.jaxpr, closed.consts, a)

    def _apply(self, eqn, ins, where):
        name = eqn.primitive.name
        p = eqn.params
        from .. import lax
        if name == "pjit":
            return list(self._jitted(p["jaxpr"])(*ins))
        if name == "cond":
            branches = [self._sub(b) for b in p["branches"]]
            return list(lax.switch(ins[0], branches, *ins[1:]))
        if name in _INLINED:
            # Not differentiated (checkify runs outside transforms): the
            # primal program, checked, is the equation's value.
            closed = p[_INLINED[name]]
            return self.eval(closed.jaxpr, closed.consts, ins)
        if name == "scan":
            return self._scan(p, ins)
        if name == "while":
            return self._while(p, ins)
        self._checks_before_nan(eqn, ins, where)
        outs = list(_core.bind_eqn(eqn, ins))
        if self.nan and name in NAN_PRIMITIVES:
            self._nan(name, outs, where)
        return outs

    def _nan(self, name, outs, where):
        from .. import numpy as jnp
        floats = [o for o in outs if jnp.issubdtype(o.dtype, jnp.inexact)]
        if not floats:
            return
        anys = [jnp.any(jnp.isnan(o)) for o in floats]
        pred = anys[0]
        for a in anys[1:]:
            pred = pred | a
        self._fail_if(pred, f"nan generated by primitive: {name}.", "NaNError", where)

    def _scan(self, p, ins):
        from .. import lax
        nc, ncarry = p["num_consts"], p["num_carry"]
        consts, carry, xs = ins[:nc], ins[nc:nc + ncarry], ins[nc + ncarry:]
        body = self._sub(p["jaxpr"])

        def step(c, x):
            outs = body(*consts, *c, *x)
            return tuple(outs[:ncarry]), tuple(outs[ncarry:])

        c, ys = lax.scan(step, tuple(carry), tuple(xs), length=p["length"],
                         reverse=p["reverse"], unroll=p["unroll"])
        return list(c) + list(ys)

    def _while(self, p, ins):
        from .. import lax
        cn, bn = p["cond_nconsts"], p["body_nconsts"]
        cconsts, bconsts, carry = ins[:cn], ins[cn:cn + bn], ins[cn + bn:]
        cond, body = self._sub(p["cond_jaxpr"]), self._sub(p["body_jaxpr"])
        out = lax.while_loop(lambda c: cond(*cconsts, *c)[0],
                             lambda c: tuple(body(*bconsts, *c)), tuple(carry))
        return list(out)

