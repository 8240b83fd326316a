"""The rules of a user-defined primitive (`core.Primitive("name")`), as the
Rust core asks for them (rust/python/src/dynamic.rs).

`def_abstract_eval` and `def_impl` answer directly; the transformation rules
registered in `ad.primitive_jvps`, `ad.primitive_transposes` and
`batching.primitive_batchers` are traced here into closed jaxprs, one per
pattern of operand types (Rust caches them), which the core splices where
the primitive is differentiated or batched. Each method returns None when
the primitive has no such rule; the core then raises JAX's
NotImplementedError. Exceptions raised by a rule propagate unchanged.
"""
import numpy as np

from .. import core, dtypes
from ..core import ArrayImpl, StagingTrace, _state
from . import ad, batching


def _trace(fun, avals, name):
    """Closed jaxpr handle of `fun(*tracers)` -> list of outputs."""
    trace = StagingTrace(name)
    with core.new_trace(trace):
        ins = [trace.new_arg(a) for a in avals]
        outs = fun(*ins)
        atoms = [trace.to_atom(x) for x in outs]
        closed = trace.builder.build(atoms)
    if trace.captures:
        raise core.UnexpectedTracerError(
            f"a rule of primitive {name} closes over a traced value of an enclosing "
            f"transformation; pass it as an operand of the primitive instead")
    return closed


def _as_list(x, multiple, what):
    if not multiple:
        return [x]
    if not isinstance(x, (list, tuple)):
        raise TypeError(f"{what} of a primitive with multiple_results must be a list or tuple, "
                        f"got {type(x).__name__}")
    return list(x)


class _Eager:
    """Runs the body with no trace active (a primitive's implementation runs
    on concrete arrays, also when called while a trace is being built)."""

    def __enter__(self):
        self.stack, self.source = _state.stack, _state.source
        _state.stack, _state.source = [], None

    def __exit__(self, *exc):
        _state.stack, _state.source = self.stack, self.source
        return False


class UserRules:
    """The rules of one user-defined primitive."""

    def __init__(self, prim):
        self.prim = prim

    def _out_avals(self, avals, params):
        out = self.prim._abstract_eval(*avals, **params)
        return [core.get_aval(a) if not isinstance(a, core.ShapedArray) else a
                for a in _as_list(out, self.prim.multiple_results, "abstract_eval's result")]

    def abstract_eval(self, avals, params):
        params = core._params_from_rust(params)
        if self.prim._abstract_eval is None:
            return None
        return [a.record() for a in self._out_avals(avals, params)]

    def impl(self, arrays, params, out_avals):
        params = core._params_from_rust(params)
        prim = self.prim
        if prim._impl is None:
            return None
        with _Eager():
            out = prim._impl(*arrays, **params)
        outs = _as_list(out, prim.multiple_results, "impl's result")
        if len(outs) != len(out_avals):
            raise TypeError(f"impl of primitive {prim.name} returned {len(outs)} values; its "
                            f"abstract evaluation gives {len(out_avals)}")
        result = []
        for x, aval in zip(outs, out_avals):
            if type(x) is ArrayImpl and x.dtype_name == aval.dtype_name:
                result.append(x)
            else:
                result.append(core.to_array(np.asarray(x), dtype=dtypes.np_dtype(aval.dtype_name)))
        return result

    def jvp(self, primal_avals, tangent_avals, params):
        params = core._params_from_rust(params)
        prim = self.prim
        rule = ad.primitive_jvps.get(prim)
        if rule is None:
            return None
        n = len(primal_avals)
        multiple = prim.multiple_results

        def fun(*args):
            rest = iter(args[n:])
            tangents = tuple(next(rest) if t is not None else ad.Zero(a)
                             for a, t in zip(primal_avals, tangent_avals))
            # JAX hands a rule its primals and tangents as tuples.
            out, tout = rule(tuple(args[:n]), tangents, **params)
            outs = _as_list(out, multiple, "the primal output of a jvp rule")
            touts = _as_list(tout, multiple, "the tangent output of a jvp rule")
            return outs + [ad.instantiate_zeros(t) for t in touts]

        avals = list(primal_avals) + [t for t in tangent_avals if t is not None]
        return _trace(fun, avals, f"jvp({prim.name})")

    def transpose(self, operands, ct_avals, params):
        params = core._params_from_rust(params)
        prim = self.prim
        rule = ad.primitive_transposes.get(prim)
        if rule is None:
            return None
        known = [a for linear, a in operands if not linear]
        nk = len(known)
        out_avals = None
        if any(c is None for c in ct_avals):
            out_avals = self._out_avals([a for _, a in operands], params)

        def fun(*args):
            kit, cit = iter(args[:nk]), iter(args[nk:])
            call_args = [ad.UndefinedPrimal(a) if linear else next(kit) for linear, a in operands]
            cts = [next(cit) if c is not None else ad.Zero(out_avals[i])
                   for i, c in enumerate(ct_avals)]
            res = rule(cts if prim.multiple_results else cts[0], *call_args, **params)
            res = list(res) if isinstance(res, (list, tuple)) else [res]
            if len(res) != len(operands):
                raise TypeError(f"transpose rule of primitive {prim.name} returned {len(res)} "
                                f"cotangents for {len(operands)} operands")
            out = []
            for (linear, a), r in zip(operands, res):
                if linear:
                    out.append(ad.zeros_like_aval(a) if r is None or type(r) is ad.Zero else r)
            return out

        return _trace(fun, known + [c for c in ct_avals if c is not None], f"transpose({prim.name})")

    def batch(self, avals, dims, size, params):
        params = core._params_from_rust(params)
        prim = self.prim
        rule = batching.primitive_batchers.get(prim)
        if rule is None:
            axis_rule = batching.axis_primitive_batchers.get(prim)
            if axis_rule is None:
                return None

            def rule(args, dims, **params):
                return axis_rule(size, None, None, args, dims, **params)
        multiple = prim.multiple_results
        found = []

        def fun(*args):
            out, out_dim = rule(args, tuple(dims), **params)
            outs = _as_list(out, multiple, "the output of a batching rule")
            if multiple and not isinstance(out_dim, (list, tuple)):
                out_dim = [out_dim] * len(outs)
            out_dims = _as_list(out_dim, multiple, "the batch dims of a batching rule")
            norm = []
            for o, d in zip(outs, out_dims):
                if d is not None:
                    d = int(d)
                    if d < 0:
                        d += len(core.get_aval(o).shape)
                norm.append(d)
            found.append(norm)
            return outs

        closed = _trace(fun, avals, f"vmap({prim.name})")
        return closed, found[0]
