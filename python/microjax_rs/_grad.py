"""Differentiation API with JAX's names and signatures: grad,
value_and_grad, jvp, vjp, linearize, jacfwd, jacrev, jacobian, hessian.

Each traces the function in AD mode (interpreters/ad.py), asks Rust for the
transformed program and runs it one level down."""
import dataclasses
import functools

import numpy as np

from . import _core, _lru, core, dtypes
from ._src.tables import FLOAT_NAMES as _FLOAT_NAMES
from .core import ArrayImpl, Tracer
from .interpreters import ad
from .interpreters.batching import BatchTrace
from .tree_util import Partial, tree_flatten, tree_structure, tree_unflatten
from ._src.util import wraps as _wraps


def _fun_name(f):
    return getattr(f, "__name__", None) or type(f).__name__


def _argnums_tuple(argnums, nargs):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for i in nums:
        if not isinstance(i, int):
            raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
        if not -nargs <= i < nargs:
            raise TypeError(
                f"differentiating with respect to argnums={argnums} requires at least "
                f"{i + 1 if i >= 0 else -i} positional arguments to be passed by the caller, "
                f"but got only {nargs} positional arguments.")
    return single, tuple(i % nargs for i in nums)


def _dtype_name(x):
    t = type(x)
    if t is ArrayImpl:
        return x.dtype_name
    if t is Tracer:
        return x.aval.dtype_name
    return core.get_aval(x).dtype_name


def _check_input_dtype(x, fname, allow_int, holomorphic=False):
    name = _dtype_name(x)
    if holomorphic:
        if not dtypes.is_complex_name(name):
            raise TypeError(f"{fname} with holomorphic=True requires inputs with complex dtype, "
                            f"but got {name}.")
        return
    if dtypes.is_float_name(name) or (dtypes.is_complex_name(name) and fname in ("grad", "vjp")):
        return
    if dtypes.is_complex_name(name):
        raise TypeError(
            f"{fname} requires real-valued inputs (input dtype that is a sub-dtype of np.floating), "
            f"but got {name}. For holomorphic differentiation, pass holomorphic=True. For "
            "differentiation of non-holomorphic functions involving complex inputs, use jax.jvp directly.")
    if allow_int and (dtypes.is_int_name(name) or name == "bool"):
        return
    raise TypeError(
        f"{fname} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
        f"np.inexact), but got {name}. If you want to use Boolean- or integer-valued inputs, "
        f"use vjp or set allow_int to True.")


def _split_args(args, nums):
    """Leaves of the differentiated arguments and a function of them."""
    diff = tuple(args[i] for i in nums)
    leaves, tree = tree_flatten(diff)

    def rebuild(new_leaves):
        new_args = list(args)
        for i, v in zip(nums, tree_unflatten(tree, new_leaves)):
            new_args[i] = v
        return new_args

    return leaves, tree, rebuild


def _zeros_like(x):
    from . import numpy as jnp

    return jnp.zeros_like(x)


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """Like ``grad``, but the function returns ``(fun(*args), gradient)``, computing both in one pass.

    The arguments are those of ``grad``; with ``has_aux`` it returns ``((value, aux), gradient)``.

    Example:
      >>> import microjax_rs as jax
      >>> value, slope = jax.value_and_grad(lambda x: x ** 3)(2.0)
      >>> print(value, slope)
      8.0 12.0
    """
    return _grad_function(fun, argnums, has_aux, holomorphic, allow_int, True)


def _grad_function(fun, argnums, has_aux, holomorphic, allow_int, with_value):
    """The Rust `GradFunction` of `grad` (or `value_and_grad` with
    `with_value`): the one call path of both (rust/python/src/grad.rs), which
    calls back the hooks below for what stays Python."""
    f = _core.GradFunction(fun, argnums, bool(has_aux), bool(holomorphic), bool(allow_int), with_value,
                           str(_fun_name(fun)))
    return _wraps(fun)(f)


def _prepare(args, argnums, allow_int, holomorphic):
    """The differentiated leaves of a call: `(single, leaves, tree, nonzeros,
    rebuild)` where `rebuild(tracers)` gives the arguments with the leaves
    replaced; the argnums and the leaves' dtypes are checked."""
    single, nums = _argnums_tuple(argnums, len(args))
    leaves, tree, rebuild = _split_args(args, nums)
    for x in leaves:
        _check_input_dtype(x, "grad", allow_int, holomorphic)
    nonzeros = [dtypes.is_inexact_name(_dtype_name(x)) for x in leaves]
    return single, leaves, tree, nonzeros, rebuild


def _finish_output(trace, out, has_aux, holomorphic):
    """`(output, aux lowered out of trace)` of the differentiated function's
    result, the output checked to be a scalar of a differentiable dtype."""
    aux = None
    if has_aux:
        out, aux = _aux_pair(out, "value_and_grad")
    _check_scalar_output(out, holomorphic)
    return out, ad._lower_tree(trace, aux)


def _run_value_and_grad(level, closed, nonzeros, inputs):
    """`[value, *cotangents]` of the value-and-grad program of `closed` run
    on `inputs` at trace `level` (None: eager, where the inputs are; a
    captured GpuArray: on its device)."""
    prog, lits = ad.value_and_grad_program(closed, nonzeros)
    return ad.run_at(level, prog, lits + list(inputs))


def _grads(tree, leaves, nonzeros, cts, single):
    """The gradient pytree of the differentiated arguments."""
    g = tree_unflatten(tree, _fill_int_grads(leaves, nonzeros, cts))
    return g[0] if single else g


def _fill_int_grads(leaves, nonzeros, cts):
    """Float0 zeros for integer inputs (allow_int), cotangents for the rest."""
    it = iter(cts)
    out = []
    for x, nz in zip(leaves, nonzeros):
        if nz:
            out.append(next(it))
        else:
            aval = core.get_aval(x)
            out.append(np.zeros(aval.shape, dtype=dtypes.float0))
    return out


def _check_scalar_output(out, holomorphic=False):
    if type(out) is Tracer and not holomorphic:  # the common case
        a = out.aval
        if a.shape == () and a.dtype_name in _FLOAT_NAMES:
            return
    if not isinstance(out, (ArrayImpl, Tracer, float, int, np.ndarray, np.generic)):
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was {out!r}.")
    aval = core.get_aval(out)
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}.")
    if holomorphic:
        if not dtypes.is_complex_name(aval.dtype_name):
            raise TypeError(f"grad with holomorphic=True requires outputs with complex dtype, but got "
                            f"{aval.dtype_name}.")
        return
    if not dtypes.is_float_name(aval.dtype_name):
        extra = (" For differentiation of non-holomorphic functions involving complex outputs, use "
                 "jax.vjp directly.") if dtypes.is_complex_name(aval.dtype_name) else ""
        raise TypeError(
            f"grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
            f"but got {aval.dtype_name}. For holomorphic differentiation, pass holomorphic=True.{extra}")


_core.register_hooks(grad=(ad.ADTrace, ad.ADTrace.new_input, core._state, _prepare, _finish_output,
                           _run_value_and_grad, _grads))


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """Gradient of ``fun``, a function returning a scalar, with respect to the argument(s) ``argnums``.

    Args:
      fun: the function to differentiate; its output must be a real scalar (or ``(scalar, aux)``
        with ``has_aux``).
      argnums: an int or a tuple of ints: which positional arguments to differentiate; with a
        tuple the gradient is a tuple.
      has_aux: ``fun`` returns ``(value, aux)``; the gradient function then returns
        ``(gradient, aux)``.
      holomorphic: ``fun`` is holomorphic in complex inputs: the result is the complex
        derivative (inputs and output must be complex; TypeError otherwise).
      allow_int: allow integer inputs, whose gradients are ``float0`` zeros (otherwise TypeError).
      reduce_axes: accepted for compatibility.

    Returns:
      A function with ``fun``'s signature returning the gradient, with the pytree structure and
      dtypes of the differentiated arguments. Differs from JAX: the gradient of a Python-scalar
      argument is a strongly typed array here (JAX marks it weakly typed).

    Example:
      >>> import microjax_rs as jax
      >>> import microjax_rs.numpy as jnp
      >>> jax.grad(lambda x: jnp.sum(x ** 2))(jnp.array([1.0, 2.0]))
      Array([2., 4.], dtype=float32)
      >>> dx, dy = jax.grad(lambda x, y: x * y, argnums=(0, 1))(3.0, 4.0)
      >>> print(dx, dy)
      4.0 3.0
    """
    return _grad_function(fun, argnums, has_aux, holomorphic, allow_int, False)


def _check_tangents(primal_leaves, tangent_leaves, ptree, ttree):
    if ptree != ttree:
        raise TypeError(f"primal and tangent arguments to jax.jvp must have the same tree structure; "
                        f"primals have tree structure {ptree} whereas tangents have tree structure {ttree}.")
    for p, t in zip(primal_leaves, tangent_leaves):
        pa, ta = core.get_aval(p), core.get_aval(t)
        if pa.shape != ta.shape:
            raise ValueError(f"jvp called with different primal and tangent shapes; Got primal shape "
                             f"{pa.shape} and tangent shape as {ta.shape}")
        if dtypes.is_inexact_name(pa.dtype_name) and pa.dtype_name != ta.dtype_name:
            raise TypeError(f"primal and tangent arguments to jax.jvp do not match; dtypes must be equal, "
                            f"or in case of int/bool primal dtype the tangent dtype must be float0. Got "
                            f"primal dtype {pa.dtype_name} and so expected tangent dtype "
                            f"{pa.dtype_name}, but got tangent dtype {ta.dtype_name} instead.")


def _aux_pair(out, api):
    """`(output, aux)` of a `has_aux` function's result, checked to be a pair."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{api} with has_aux=True requires the function to return a pair "
                        "(output, auxiliary_data)")
    return out


def _flat_over_tree(fun, ptree, has_aux, pair_check=None):
    """`fun` over the leaves of `ptree`: returns (output leaves, aux) and records
    the output tree as `.out_tree`. `pair_check`: the API name under which a
    `has_aux` result that is not a pair is reported (unchecked when None)."""
    def flat(tracers):
        out = fun(*tree_unflatten(ptree, tracers))
        aux = None
        if has_aux:
            out, aux = out if pair_check is None else _aux_pair(out, pair_check)
        leaves, tree = tree_flatten(out)
        flat.out_tree = tree
        return leaves, aux

    return flat


def jvp(fun, primals, tangents, has_aux=False):
    """Forward-mode derivative: ``fun`` evaluated at ``primals`` and its directional derivative
    along ``tangents``.

    Args:
      fun: the function.
      primals: a tuple (or list) of the positional arguments.
      tangents: a tuple of tangents, one per primal, of the same structure, shapes and dtypes.
      has_aux: ``fun`` returns ``(output, aux)``; ``aux`` is returned third.

    Returns:
      ``(primals_out, tangents_out)`` (plus ``aux``).

    Example:
      >>> import microjax_rs as jax
      >>> import microjax_rs.numpy as jnp
      >>> y, dy = jax.jvp(jnp.sin, (0.0,), (1.0,))
      >>> print(y, dy)
      0.0 1.0
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    pleaves, ptree = tree_flatten(tuple(primals))
    tleaves, ttree = tree_flatten(tuple(tangents))
    _check_tangents(pleaves, tleaves, ptree, ttree)
    name = _fun_name(fun)

    flat = _flat_over_tree(fun, ptree, has_aux)
    trace, closed, outs, aux, inputs = ad.trace_ad(flat, pleaves, name, private=True)
    nonzeros = [dtypes.is_inexact_name(_dtype_name(p)) for p in pleaves]
    jclosed, lits = ad.jvp_program(closed, nonzeros + [False] * len(trace.captures))
    tans = [t for t, nz in zip(tleaves, nonzeros) if nz]
    res = ad.run_at(trace.parent, jclosed, lits + inputs + tans)
    n = len(outs)
    out_p = tree_unflatten(flat.out_tree, res[:n])
    out_t = tree_unflatten(flat.out_tree, res[n:])
    return (out_p, out_t, aux) if has_aux else (out_p, out_t)


def linearize(fun, *primals, has_aux=False):
    """`(fun(*primals), f_jvp)` where `f_jvp(*tangents)` evaluates the linearized function."""
    pleaves, ptree = tree_flatten(tuple(primals))
    name = _fun_name(fun)

    flat = _flat_over_tree(fun, ptree, has_aux)
    trace, closed, outs, aux, inputs = ad.trace_ad(flat, pleaves, name)
    nonzeros = [dtypes.is_inexact_name(_dtype_name(p)) for p in pleaves]
    primal_prog, tangent_prog, num_res, lits = ad.linearize_program(
        closed, nonzeros + [False] * len(trace.captures))
    res = ad.run_at(trace.parent, primal_prog, lits + inputs)
    n = len(outs)
    out_p = tree_unflatten(flat.out_tree, res[:n])
    residuals = list(res[n:])
    pavals = [core.get_aval(p) for p in pleaves]

    def apply_linearized(residuals, *tangents):
        tleaves, ttree = tree_flatten(tuple(tangents))
        _check_tangents(pavals, tleaves, ptree, ttree)
        tans = [t for t, nz in zip(tleaves, nonzeros) if nz]
        outs_t = ad.run_at(core.current_trace(), tangent_prog, list(residuals) + tans)
        return tree_unflatten(flat.out_tree, outs_t)

    # A `Partial` over the residuals, as JAX's: a pytree that `jit` and `vmap`
    # can return (the residuals are its leaves).
    f_jvp = Partial(apply_linearized, residuals)
    return (out_p, f_jvp, aux) if has_aux else (out_p, f_jvp)


def vjp(fun, *primals, has_aux=False):
    """Reverse-mode derivative: ``fun`` evaluated at ``primals`` and a function that pulls an
    output cotangent back to the inputs.

    Args:
      fun: the function.
      primals: its positional arguments.
      has_aux: ``fun`` returns ``(output, aux)``; ``aux`` is returned third.

    Returns:
      ``(primals_out, vjp_fn)`` (plus ``aux``), where ``vjp_fn(cotangent)`` returns a tuple with
      one cotangent per primal.

    Example:
      >>> import microjax_rs as jax
      >>> y, vjp_fn = jax.vjp(lambda x: x * 3.0, 2.0)
      >>> (dx,) = vjp_fn(1.0)
      >>> print(y, dx)
      6.0 3.0
    """
    pleaves, ptree = tree_flatten(tuple(primals))
    name = _fun_name(fun)

    flat = _flat_over_tree(fun, ptree, has_aux, pair_check="vjp")
    trace, closed, outs, aux, inputs = ad.trace_ad(flat, pleaves, name)
    nonzeros = [dtypes.is_inexact_name(_dtype_name(p)) for p in pleaves] + [False] * len(trace.captures)
    fwd, bwd, num_res, lits = ad.vjp_program(closed, nonzeros)
    res = ad.run_at(trace.parent, fwd, lits + inputs)
    n = len(outs)
    out_leaves = list(res[:n])
    residuals = list(res[n:])
    out_tree = flat.out_tree
    out_p = tree_unflatten(out_tree, out_leaves)
    out_avals = [core.get_aval(o) for o in out_leaves]

    def pull(ct):
        """The cotangents of the flat primals (`pleaves`) for output cotangent `ct`."""
        cleaves, ctree = tree_flatten(ct)
        if ctree != out_tree:
            raise TypeError(f"Tree structure of cotangent input {ctree}, does not match structure "
                            f"of primal output {out_tree}.")
        for c, a in zip(cleaves, out_avals):
            ca = core.get_aval(c)
            if ca.shape != a.shape:
                raise ValueError(f"Shape of cotangent input to vjp pullback function {ca.shape} must "
                                 f"be the same as the shape of corresponding primal input {a.shape}.")
        cin = ad.run_at(core.current_trace(), bwd, residuals + list(cleaves))
        return _fill_int_grads(pleaves, nonzeros, cin)

    def vjp_fn(*cts):
        if len(cts) != 1:
            raise TypeError(f"The function returned by vjp takes one cotangent argument (a pytree "
                            f"matching the output), got {len(cts)}")
        return tuple(tree_unflatten(ptree, pull(cts[0])))

    vjp_fn.with_refs = functools.partial(_vjp_with_markers, pull, ptree)
    return (out_p, vjp_fn, aux) if has_aux else (out_p, vjp_fn)


# -- which cotangents a VJP computes (`jax.ad`) ----------------------------------


@dataclasses.dataclass(frozen=True)
class GradValue:
    """`vjp_fn.with_refs` marker: compute this primal's cotangent."""


@dataclasses.dataclass(frozen=True)
class DontWant:
    """`vjp_fn.with_refs` marker: this primal's cotangent is not wanted."""


@dataclasses.dataclass(frozen=True)
class DidntWant:
    """What `vjp_fn.with_refs(...)` returns in place of an unwanted cotangent
    (a pytree node without leaves)."""


@dataclasses.dataclass(frozen=True)
class GradRef:
    """What JAX returns for a cotangent accumulated into a mutable array
    reference (a pytree node without leaves); references are not supported
    here (see `jax.Ref`), so it is never returned."""


def _vjp_with_markers(pull, ptree, *markers):
    """`vjp_fn.with_refs(*markers)`: one marker per primal leaf, `GradValue()`
    or `DontWant()`; the returned function maps an output cotangent to the
    primals' cotangents with `DidntWant()` where `DontWant()` was given."""
    mleaves, mtree = tree_flatten(tuple(markers))
    if mtree != ptree:
        raise TypeError(f"vjp_fn.with_refs takes one marker per primal: the markers' structure {mtree} "
                        f"does not match the primals' {ptree}")
    for m in mleaves:
        if not isinstance(m, (GradValue, DontWant)):
            raise TypeError(f"vjp_fn.with_refs takes jax.ad.GradValue() or jax.ad.DontWant() markers; got "
                            f"{m!r} (mutable array references are not supported)")

    def pullback(ct):
        grads = pull(ct)
        return tuple(tree_unflatten(ptree, [DidntWant() if isinstance(m, DontWant) else g
                                             for m, g in zip(mleaves, grads)]))
    return pullback


def _register_marker_nodes():
    from .tree_util import register_pytree_node
    for cls in (DidntWant, GradRef):
        register_pytree_node(cls, lambda _: ((), None), lambda _aux, _children, cls=cls: cls())


_register_marker_nodes()


# -- Jacobians -------------------------------------------------------------------

_BASIS_CACHE = _lru.LRU("grad.basis", 64)  # (shape, dtype name) -> eager identity rows
_BASIS_CACHE_ELEMENTS = 1 << 20  # largest n*n cached


def _std_basis(x):
    """Identity rows for leaf `x`: shape (size, *x.shape), x's dtype.

    When the rows come out concrete (no trace in the stack records
    operand-free equations), they are cached per aval: jacfwd/jacrev/hessian
    called again and again on one shape rebuild nothing."""
    aval = core.get_aval(x)
    key = (aval.shape, aval.dtype_name)
    hit = _BASIS_CACHE.get(key)
    if hit is not None and not hit.is_deleted() and _operand_free_ops_run_eagerly():
        return hit
    basis = _make_std_basis(aval)
    if type(basis) is ArrayImpl and aval.size ** 2 <= _BASIS_CACHE_ELEMENTS:
        _BASIS_CACHE[key] = basis
    return basis


def _operand_free_ops_run_eagerly():
    """Whether an equation with no traced operand runs eagerly: every active
    trace is an AD or batch trace, which pass such equations down."""
    for t in core._state.stack:
        if type(t) not in (ad.ADTrace, BatchTrace):
            return False
    return True


def _make_std_basis(aval):
    from . import lax

    n = aval.size
    eye = lax.convert_element_type(
        lax.eq(lax.broadcasted_iota("int32", (n, n), 0), lax.broadcasted_iota("int32", (n, n), 1)),
        aval.dtype_name)
    return lax.reshape(eye, (n,) + aval.shape)


def _jacobian_setup(fun, args, kwargs, argnums, has_aux, api, allow_int, holomorphic=False):
    """`(single, leaves, tree, f_flat)` for a Jacobian of `fun` at `args` with
    respect to `argnums`: `f_flat(*leaves)` returns `(output, aux or None)`."""
    single, nums = _argnums_tuple(argnums, len(args))
    leaves, tree, rebuild = _split_args(args, nums)
    for x in leaves:
        _check_input_dtype(x, api, allow_int, holomorphic)

    def f_flat(*ls):
        out = fun(*rebuild(list(ls)), **kwargs)
        return out if has_aux else (out, None)

    return single, leaves, tree, f_flat


def _jacobian_fun(fun, argnums, has_aux, api, allow_int, holomorphic, blocks):
    """The Jacobian function of `fun` that `api` (jacfwd or jacrev) returns:
    `blocks(leaves, tree, f_flat)` (see `_jacobian_setup`) gives one Jacobian
    block per output leaf (each a pytree of the inputs' structure), the
    outputs' structure and the aux value."""

    @_wraps(fun)
    def jacfun(*args, **kwargs):
        single, leaves, tree, f_flat = _jacobian_setup(fun, args, kwargs, argnums, has_aux, api, allow_int,
                                                       holomorphic)
        rows, out_struct, aux = blocks(leaves, tree, f_flat)
        if single:
            rows = [r[0] for r in rows]
        jac = tree_unflatten(out_struct, rows)
        return (jac, aux) if has_aux else jac

    return jacfun


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian of ``fun`` by forward mode (``jvp`` mapped with ``vmap`` over the input basis);
    efficient for functions with few inputs and many outputs.

    Args:
      fun: the function; inputs and outputs are pytrees of float arrays.
      argnums: the argument(s) to differentiate, an int or tuple.
      has_aux: ``fun`` returns ``(output, aux)``; the result is then ``(jacobian, aux)``.
      holomorphic: ``fun`` is holomorphic in complex inputs (complex inputs and outputs required).

    Returns:
      A function returning the Jacobian: for array in and out, shape ``out.shape + in.shape``.

    Example:
      >>> import microjax_rs as jax
      >>> import microjax_rs.numpy as jnp
      >>> jax.jacfwd(lambda x: x ** 2)(jnp.array([1.0, 2.0]))
      Array([[2., 0.],
             [0., 4.]], dtype=float32)
    """
    from ._vmap import vmap
    from . import lax

    def forward(leaves, tree, f_flat):
        per_leaf = []
        aux = None
        out_struct = None
        for i, x in enumerate(leaves):
            def push(t, i=i):
                tangents = [t if j == i else _zeros_like(l) for j, l in enumerate(leaves)]
                out, tout, a = jvp(f_flat, tuple(leaves), tuple(tangents), has_aux=True)
                return tout, a

            touts, a = vmap(push, out_axes=(-1, None))(_std_basis(x))
            aux = a
            out_leaves, out_struct = tree_flatten(touts)
            in_shape = core.get_aval(x).shape
            per_leaf.append([lax.reshape(o, core.get_aval(o).shape[:-1] + in_shape) for o in out_leaves])
        # out structure outer, input structure inner (as JAX)
        n_out = len(per_leaf[0]) if per_leaf else 0
        result = [tree_unflatten(tree, [per_leaf[i][k] for i in range(len(leaves))]) for k in range(n_out)]
        return result, out_struct, aux

    return _jacobian_fun(fun, argnums, has_aux, "jacfwd", False, holomorphic, forward)


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Jacobian of ``fun`` by reverse mode (``vjp`` mapped with ``vmap`` over the output basis);
    efficient for functions with many inputs and few outputs. The arguments are those of
    ``jacfwd``, plus ``allow_int`` as in ``grad``.

    Example:
      >>> import microjax_rs as jax
      >>> import microjax_rs.numpy as jnp
      >>> jax.jacrev(jnp.sin)(jnp.array([0.0, 0.0]))
      Array([[1., 0.],
             [0., 1.]], dtype=float32)
    """
    from ._vmap import vmap
    from . import lax

    def reverse(leaves, tree, f_flat):
        out, pullback, aux = vjp(f_flat, *leaves, has_aux=True)
        out_leaves, out_struct = tree_flatten(out)
        rows = []
        for k, o in enumerate(out_leaves):
            def pull(c, k=k):
                cts = [c if j == k else _zeros_like(l) for j, l in enumerate(out_leaves)]
                return pullback(tree_unflatten(out_struct, cts))

            gs = vmap(pull)(_std_basis(o))
            oshape = core.get_aval(o).shape
            per_in = [lax.reshape(g, oshape + core.get_aval(g).shape[1:]) for g in gs]
            rows.append(tree_unflatten(tree, per_in))
        return rows, out_struct, aux

    return _jacobian_fun(fun, argnums, has_aux, "jacrev", allow_int, holomorphic, reverse)


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """Hessian (matrix of second derivatives) of a scalar ``fun``, as ``jacfwd(jacrev(fun))``;
    ``argnums`` and ``has_aux`` as in ``jacfwd``.

    Example:
      >>> import microjax_rs as jax
      >>> print(jax.hessian(lambda x: x ** 3)(2.0))
      12.0
    """
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux), argnums, has_aux=has_aux)


def linear_transpose(fun, *primals, reduce_axes=()):
    """Transpose of a linear `fun`: returns `f_t(cotangent) -> tuple of input cotangents`.

    `primals` only give shapes and dtypes (arrays or ShapeDtypeStructs)."""
    from . import _core
    from .interpreters.partial_eval import _leaf_aval, trace_to_jaxpr

    pleaves, ptree = tree_flatten(tuple(primals))
    for p in pleaves:
        name = _leaf_aval(p).dtype_name
        if not dtypes.is_inexact_name(name):
            raise TypeError(f"linear_transpose only supports float or complex inputs, got {name}")

    def flat(*leaves):
        return fun(*tree_unflatten(ptree, list(leaves)))

    flat_tree = tree_structure((tuple(pleaves), {}))
    closed, out_tree, captures = trace_to_jaxpr(lambda *a: flat(*a), pleaves, flat_tree, _fun_name(fun))
    linear = [True] * len(pleaves) + [False] * len(captures)
    transposed = _core.transpose_jaxpr(closed, linear)
    out_avals = closed.out_avals()

    def f_t(ct):
        cleaves, ctree = tree_flatten(ct)
        if ctree != out_tree:
            raise TypeError(f"cotangent tree structure {ctree} does not match the output's {out_tree}")
        for c, a in zip(cleaves, out_avals):
            shape, name = a.shape, a.dtype_name
            ca = core.get_aval(c)
            if ca.shape != tuple(shape) or ca.dtype_name != name:
                raise TypeError(f"cotangent {ca.str_short()} does not match output "
                                f"{core.ShapedArray(shape, name).str_short()}")
        outs = ad.run_at(core.current_trace(), transposed, list(captures) + list(cleaves))
        return tuple(tree_unflatten(ptree, outs))

    return f_t


def checkpoint(fun=None, *, prevent_cse=True, policy=None, static_argnums=()):
    """`jax.checkpoint` / `jax.remat`: same values and derivatives as `fun`,
    but reverse mode saves only `fun`'s inputs and recomputes its
    intermediates in the backward pass (one `checkpoint` equation, whose
    partial-evaluation rule in Rust does the recomputation). `policy`
    (one of `jax.checkpoint_policies`, or a function `policy(prim, *avals,
    **params) -> bool` as JAX's) names intermediate values to save instead
    of recomputing (see `ad_checkpoint.py`)."""
    from .ad_checkpoint import FunctionPolicy, _policy_param

    policy_param = _policy_param(policy)
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    static = tuple(static_argnums) if isinstance(static_argnums, (tuple, list)) else (static_argnums,)

    @_wraps(fun)
    def remat_f(*args, **kwargs):
        if core.current_trace() is None:
            return fun(*args, **kwargs)  # nothing to differentiate: plain call
        from .api import _bind_static, _split_static, trace_to_jaxpr

        dyn, statics = _split_static(args, static)
        f = _bind_static(fun, statics, len(args)) if statics else fun
        leaves, in_tree = tree_flatten((tuple(dyn), kwargs))
        closed, out_tree, captures = trace_to_jaxpr(f, leaves, in_tree, getattr(fun, "__name__", "remat"))
        param = policy_param
        if isinstance(param, FunctionPolicy):
            closed, param = param.apply(closed, [*leaves, *captures])
        outs = core.Primitive("checkpoint").bind(
            *leaves, *captures, jaxpr=core.ClosedJaxpr(closed), prevent_cse=bool(prevent_cse),
            differentiated=False, policy=param)
        return tree_unflatten(out_tree, outs)

    return remat_f


remat = checkpoint
