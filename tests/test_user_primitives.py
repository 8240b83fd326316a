"""User-defined primitives (JAX's "How JAX primitives work"): a
`multiply_add(x, y, z) = x * y + z` primitive with an implementation, an
abstract evaluation rule, a JVP rule, a transpose rule and a batching rule,
checked against NumPy eagerly and under jit, grad against finite
differences, vmap against a Python loop, nesting, the missing-rule errors and
exceptions raised inside a rule."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.extend.core import Primitive, ShapedArray
from microjax_rs.interpreters import ad, batching

from fd import num_grad

multiply_add_p = Primitive("multiply_add")
IMPL_CALLS = []


def multiply_add(x, y, z):
    return multiply_add_p.bind(x, y, z)


@multiply_add_p.def_impl
def _multiply_add_impl(x, y, z):
    IMPL_CALLS.append(1)
    return np.add(np.multiply(x, y), z)


@multiply_add_p.def_abstract_eval
def _multiply_add_abstract_eval(xs, ys, zs):
    assert xs.shape == ys.shape == zs.shape
    return ShapedArray(xs.shape, xs.dtype)


def _multiply_add_jvp(primals, tangents):
    x, y, z = primals
    xt, yt, zt = (ad.instantiate_zeros(t) for t in tangents)
    out = multiply_add(x, y, z)
    # d(x*y + z) = xt*y + x*yt + zt, written with the primitive itself, so
    # the tangent is linear in (xt, yt, zt) through multiply_add's
    # transpose rule.
    t = multiply_add(xt, y, multiply_add(x, yt, zt))
    return out, t


ad.primitive_jvps[multiply_add_p] = _multiply_add_jvp


def _multiply_add_transpose(ct, x, y, z):
    # Linear in x (y known) or in y (x known), and in z.
    if not ad.is_undefined_primal(x):
        ct_y = ct * x if ad.is_undefined_primal(y) else None
        return None, ct_y, ct if ad.is_undefined_primal(z) else None
    return ct * y, None, ct if ad.is_undefined_primal(z) else None


ad.primitive_transposes[multiply_add_p] = _multiply_add_transpose


def _multiply_add_batch(args, dims):
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not batching.not_mapped)
    moved = []
    for a, d in zip(args, dims):
        if d is batching.not_mapped:
            a = jnp.broadcast_to(a, (size,) + a.shape)
        else:
            a = jnp.moveaxis(a, d, 0)
        moved.append(a)
    return multiply_add(*moved), 0


batching.primitive_batchers[multiply_add_p] = _multiply_add_batch


def _arrays(dtype, shape=(3,), seed=0):
    rng = np.random.RandomState(seed)
    return [rng.uniform(-2, 2, size=shape).astype(dtype) for _ in range(3)]


def test_eager_values_match_numpy():
    x, y, z = _arrays(np.float32)
    got = multiply_add(x, y, z)
    np.testing.assert_allclose(np.asarray(got), x * y + z, rtol=1e-6)


def test_jit_values_match_numpy_and_the_jaxpr_holds_the_primitive():
    x, y, z = _arrays(np.float32, (2, 3))
    f = jax.jit(lambda x, y, z: jnp.sin(multiply_add(x, y, z)))
    got = f(x, y, z)
    np.testing.assert_allclose(np.asarray(got), np.sin(x * y + z), rtol=1e-5)
    jaxpr = jax.make_jaxpr(lambda x, y, z: multiply_add(x, y, z))(x, y, z)
    assert [e.primitive.name for e in jaxpr.eqns] == ["multiply_add"]
    assert jaxpr.eqns[0].primitive is multiply_add_p
    assert jaxpr.out_avals[0].shape == (2, 3)
    # The compiled program calls the implementation.
    before = len(IMPL_CALLS)
    np.testing.assert_allclose(np.asarray(f(y, x, z)), np.sin(x * y + z), rtol=1e-5)
    assert len(IMPL_CALLS) > before


def test_grad_matches_finite_differences(x64):
    x, y, z = _arrays(np.float64, (4,), seed=1)

    def loss(x, y, z):
        return jnp.sum(jnp.tanh(multiply_add(x, y, z)) * multiply_add(x, x, y))

    def loss_np(x, y, z):
        return np.sum(np.tanh(x * y + z) * (x * x + y))

    for argnum in range(3):
        got = jax.grad(loss, argnums=argnum)(x, y, z)
        args = [x, y, z]

        def f(v, argnum=argnum):
            a = list(args)
            a[argnum] = v
            return loss_np(*a)

        np.testing.assert_allclose(np.asarray(got), num_grad(f, args[argnum]), rtol=1e-6, atol=1e-8)
    g_jit = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(x, y, z)
    g_eager = jax.grad(loss, argnums=(0, 1, 2))(x, y, z)
    for a, b in zip(g_jit, g_eager):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


def test_jvp_and_vjp(x64):
    x, y, z = _arrays(np.float64, (3,), seed=2)
    tx, ty, tz = _arrays(np.float64, (3,), seed=3)
    out, t = jax.jvp(multiply_add, (x, y, z), (tx, ty, tz))
    np.testing.assert_allclose(np.asarray(out), x * y + z, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(t), tx * y + x * ty + tz, rtol=1e-12)
    out, pullback = jax.vjp(multiply_add, x, y, z)
    ct = np.array([1.0, -2.0, 0.5])
    gx, gy, gz = pullback(ct)
    np.testing.assert_allclose(np.asarray(gx), ct * y, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gy), ct * x, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gz), ct, rtol=1e-12)


def test_vmap_matches_a_loop():
    x, y, z = _arrays(np.float32, (5, 3), seed=4)
    y0 = y[0]
    got = jax.vmap(multiply_add, in_axes=(0, None, 1))(x, y0, z.T)
    want = np.stack([x[i] * y0 + z[i] for i in range(5)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    got = jax.jit(jax.vmap(multiply_add, in_axes=(1, 1, 1), out_axes=1))(x.T, y.T, z.T)
    np.testing.assert_allclose(np.asarray(got), (x * y + z).T, rtol=1e-6)


def test_jit_grad_vmap_nesting(x64):
    x, y, z = _arrays(np.float64, (4, 3), seed=5)

    def per_row(x, y, z):
        return jnp.sum(multiply_add(x, y, z) ** 2)

    def total(x):
        return jnp.sum(jax.vmap(per_row)(x, y, z))

    got = jax.jit(jax.grad(total))(x)
    np.testing.assert_allclose(np.asarray(got), 2 * (x * y + z) * y, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(got), num_grad(lambda v: np.sum((v * y + z) ** 2), x),
                               rtol=1e-6)
    # vmap of grad, per example.
    g = jax.vmap(jax.grad(per_row))(x, y, z)
    np.testing.assert_allclose(np.asarray(g), 2 * (x * y + z) * y, rtol=1e-12)


def test_missing_rules_raise_not_implemented():
    p = Primitive("user_prim_without_rules")
    p.def_impl(lambda x: np.asarray(x) * 2)
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(jax.jit(p.bind)(x)), x * 2)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'user_prim_without_rules' not implemented"):
        jax.grad(lambda x: jnp.sum(p.bind(x)))(x)
    with pytest.raises(NotImplementedError, match="Batching rule for 'user_prim_without_rules' not implemented"):
        jax.vmap(p.bind)(np.ones((2, 3), np.float32))
    # A JVP rule applying the primitive itself to the tangent: linear, but
    # without a transpose rule reverse mode cannot go through it.
    ad.primitive_jvps[p] = lambda primals, tangents: (p.bind(*primals), p.bind(*tangents))
    out, t = jax.jvp(p.bind, (x,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(np.asarray(t), np.full(3, 2.0))
    with pytest.raises(NotImplementedError,
                       match=r"Transpose rule \(for reverse-mode differentiation\) for 'user_prim_without_rules' not implemented"):
        jax.grad(lambda x: jnp.sum(p.bind(x)))(x)
    q = Primitive("user_prim_without_abstract_eval")
    with pytest.raises(NotImplementedError, match="Abstract evaluation for 'user_prim_without_abstract_eval'"):
        jax.jit(q.bind)(x)


class RuleFailure(Exception):
    pass


def test_exceptions_raised_in_a_rule_reach_the_caller():
    p = Primitive("user_prim_raising")

    @p.def_impl
    def impl(x):
        raise RuleFailure("impl failed")

    @p.def_abstract_eval
    def abstract_eval(x):
        if x.ndim == 2:
            raise RuleFailure("abstract eval failed")
        return ShapedArray(x.shape, x.dtype)

    def jvp(primals, tangents):
        raise RuleFailure("jvp failed")

    def batcher(args, dims):
        raise RuleFailure("batching failed")

    ad.primitive_jvps[p] = jvp
    batching.primitive_batchers[p] = batcher
    x = np.ones(3, np.float32)
    with pytest.raises(RuleFailure, match="impl failed"):
        jax.jit(p.bind)(x)
    with pytest.raises(RuleFailure, match="abstract eval failed"):
        jax.jit(p.bind)(np.ones((2, 2), np.float32))
    with pytest.raises(RuleFailure, match="jvp failed"):
        jax.jvp(p.bind, (x,), (x,))
    with pytest.raises(RuleFailure, match="batching failed"):
        jax.vmap(p.bind)(np.ones((2, 3), np.float32))


def test_multiple_results_and_defjvp_deflinear2(x64):
    p = Primitive("user_sincos")
    p.multiple_results = True
    p.def_impl(lambda x: [np.sin(x), np.cos(x)])
    p.def_abstract_eval(lambda x: [ShapedArray(x.shape, x.dtype), ShapedArray(x.shape, x.dtype)])

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        s, c = p.bind(x)
        return [s, c], [c * t, -s * t]

    ad.primitive_jvps[p] = jvp
    x = np.array([0.3, -1.2, 2.0])
    s, c = jax.jit(p.bind)(x)
    np.testing.assert_allclose(np.asarray(s), np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(c), np.cos(x), rtol=1e-12)
    g = jax.grad(lambda x: jnp.sum(p.bind(x)[0] * p.bind(x)[1]))(x)
    np.testing.assert_allclose(np.asarray(g), np.cos(2 * x), rtol=1e-12)

    # defjvp with one rule per operand; deflinear2 for a linear primitive.
    scale_p = Primitive("user_scale3")
    scale_p.def_impl(lambda x: np.asarray(x) * 3)
    scale_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    ad.deflinear2(scale_p, lambda ct, x: [scale_p.bind(ct)])
    square_p = Primitive("user_square")
    square_p.def_impl(lambda x: np.asarray(x) ** 2)
    square_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    ad.defjvp(square_p, lambda g, x: scale_p.bind(g) * x * (2.0 / 3.0))
    f = lambda x: jnp.sum(scale_p.bind(square_p.bind(x)))  # noqa: E731
    np.testing.assert_allclose(np.asarray(jax.grad(f)(x)), 6 * x, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(f))(x)), 6 * x, rtol=1e-12)


def test_programs_holding_one_do_not_serialize():
    x, y, z = _arrays(np.float32)
    exported = jax.export.export(jax.jit(multiply_add))(x, y, z)
    # Calling the traced program works; its rules cannot be serialized.
    np.testing.assert_allclose(np.asarray(exported.call(x, y, z)), x * y + z, rtol=1e-6)
    with pytest.raises(TypeError, match=r"rules are given at run time \(multiply_add\)"):
        exported.serialize()
    # Nor does its text form parse back.
    closed = jax.make_jaxpr(multiply_add)(x, y, z)
    with pytest.raises(ValueError, match='unknown primitive "multiply_add"'):
        jax.core._core.parse(closed.canonical(), list(closed.consts))


def test_rules_are_traced_once_per_pattern_and_replacing_one_takes_effect():
    p = Primitive("user_double")
    p.def_impl(lambda x: np.asarray(x) * 2)
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    traced = []

    def jvp(primals, tangents):
        traced.append(primals[0].shape)
        return p.bind(*primals), p.bind(*tangents)

    ad.primitive_jvps[p] = jvp
    x = np.arange(3, dtype=np.float32)
    t = np.ones(3, np.float32)
    for _ in range(3):
        _, tout = jax.jvp(p.bind, (x,), (t,))
        np.testing.assert_allclose(np.asarray(tout), 2 * t)
    assert traced == [(3,)]
    jax.jvp(p.bind, (np.ones((2, 2), np.float32),), (np.ones((2, 2), np.float32),))
    assert traced == [(3,), (2, 2)]
    # A new rule replaces the traced one.
    ad.primitive_jvps[p] = lambda primals, tangents: (p.bind(*primals), -p.bind(*tangents))
    _, tout = jax.jvp(p.bind, (x,), (t,))
    np.testing.assert_allclose(np.asarray(tout), -2 * t)


def test_a_batching_rule_giving_a_wrong_batch_dim_is_a_value_error():
    p = Primitive("user_bad_batcher")
    p.def_impl(lambda x: np.asarray(x) + 1)
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    batching.primitive_batchers[p] = lambda args, dims: (p.bind(args[0]), 1)
    with pytest.raises(ValueError, match="user_bad_batcher: the batching rule gave batch dim 1"):
        jax.vmap(p.bind)(np.ones((2, 3), np.float32))
