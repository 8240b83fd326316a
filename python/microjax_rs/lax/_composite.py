"""Primitive objects defined by a composition of other operations.

`composite_primitive(name, fun)` makes `jax.extend.core.Primitive(name)`
whose every rule comes from `fun(*operands, **params)`, a function written
with lax operations:

* `bind` on concrete arrays runs `fun` (compiled once per params);
* abstract evaluation is `fun` traced for shapes (`eval_shape`), so under
  `jit` and `make_jaxpr` the primitive is one equation named `name`;
* its JVP is the JVP of `fun` (integer operands are held fixed);
* its batching rule is `vmap` of `fun` (outputs batched along axis 0);
* its lowering is `mlir.lower_fun(fun)`: a compiled program calls the
  compiled `fun` where it reaches the primitive.

This is how the JAX primitive objects that have no primitive of their own in
the core (`lax.tridiagonal_solve_p`, `lax.split_p`, ...) are built.
"""
import functools

from .. import core, dtypes


def _is_inexact(x):
    return dtypes.is_inexact_name(core.get_aval(x).dtype_name)


def _as_outs(out, multiple_results):
    return list(out) if multiple_results else out


def _shaped(s):
    return core.ShapedArray(tuple(s.shape), dtypes.canonical_name(dtypes.dtype_name(s.dtype)),
                            bool(getattr(s, "weak_type", False)))


def composite_primitive(name, fun, *, multiple_results=False, differentiable=True, batchable=True):
    """The primitive `name` computing `fun(*operands, **params)` (see the
    module doc). `differentiable=False` leaves it without a JVP rule (JAX's
    NotImplementedError under differentiation), `batchable=False` without a
    batching rule."""
    from ..interpreters import ad, batching, mlir

    prim = core.Primitive(name)
    prim.multiple_results = multiple_results

    compiled = {}  # params -> fun compiled for them (bounded)

    def impl(*args, **params):
        """`fun` compiled per params (it runs eagerly, and from inside compiled
        programs, at the speed of `jit(fun)`); unhashable params run it as is."""
        try:
            key = tuple(sorted(params.items()))
            run = compiled.get(key)
        except TypeError:
            return _as_outs(fun(*args, **params), multiple_results)
        if run is None:
            from ..api import jit
            run = jit(functools.partial(fun, **params))
            if len(compiled) < 256:
                compiled[key] = run
        return _as_outs(run(*args), multiple_results)

    def abstract_eval(*avals, **params):
        from ..api import ShapeDtypeStruct, eval_shape
        specs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]
        out = eval_shape(functools.partial(fun, **params), *specs)
        return [_shaped(s) for s in out] if multiple_results else _shaped(out)

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)

    if differentiable:
        def jvp(primals, tangents, **params):
            from .._grad import jvp as jvp_of
            moving = [i for i, x in enumerate(primals) if _is_inexact(x)]

            def of_moving(*xs):
                args = list(primals)
                for i, x in zip(moving, xs):
                    args[i] = x
                return _as_outs(fun(*args, **params), multiple_results)

            tans = [ad.instantiate_zeros(tangents[i]) for i in moving]
            return jvp_of(of_moving, [primals[i] for i in moving], tans)

        ad.primitive_jvps[prim] = jvp

    if batchable:
        def batch(args, dims, **params):
            from .._vmap import vmap
            out = vmap(functools.partial(fun, **params), in_axes=tuple(dims))(*args)
            return (list(out), [0] * len(out)) if multiple_results else (out, 0)

        batching.primitive_batchers[prim] = batch

    mlir.register_lowering(prim, mlir.lower_fun(impl, multiple_results=multiple_results))
    return prim
