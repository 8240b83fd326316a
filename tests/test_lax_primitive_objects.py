"""JAX's primitive objects built from compositions (lax/_primitive_objects.py,
the structured routines' in lax/linalg.py): `p.bind(...)` with JAX's operands
and params gives the public function's (or NumPy's) values eagerly and under
jit, differentiates where JAX does (float64 finite differences), batches as
a loop of binds, and shows in make_jaxpr as one equation named as in JAX."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax
from microjax_rs.lax import linalg as ll

from fd import num_grad

RNG = np.random.default_rng(7)
M3 = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 1.0], [0.5, 1.0, 2.0]])
X23 = np.arange(6.0).reshape(2, 3) - 2.5
TAUS = np.array([0.3, 0.2])
DN = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                 scatter_dims_to_operand_dims=(0,))


def _closed(fun, *example):
    return jax.make_jaxpr(fun)(*example)


def _mul_add():
    """The computation (acc, x) -> acc * x + 1 as a float64 jaxpr (built under x64)."""
    return _closed(lambda a, b: a * b + 1.0, np.float64(0.0), np.float64(0.0))


def _leaves(x):
    return [np.asarray(v) for v in (x if isinstance(x, (list, tuple)) else [x])]


# name -> (primitive, operands, params (or a function making them), reference(*operands), JAX differentiates it, JAX batches it)
CASES = {
    "copy": (lax.copy_p, (X23,), {}, lambda x: x, True, True),
    "tile": (lax.tile_p, (X23,), dict(reps=(2, 1)), lambda x: np.tile(x, (2, 1)), True, True),
    "split": (lax.split_p, (X23,), dict(sizes=(1, 2), axis=1), lambda x: np.split(x, [1], axis=1), True, True),
    "stack": (lax.stack_p, (X23, X23 * 2), dict(axis=1), lambda a, b: np.stack([a, b], 1), True, True),
    "unstack": (lax.unstack_p, (X23,), dict(axis=0), lambda x: list(x), True, True),
    "scatter-sub": (lax.scatter_sub_p, (X23, np.array([[1], [0]]), np.ones((2, 3))),
                    dict(dimension_numbers=DN, indices_are_sorted=False, unique_indices=False,
                         mode=lax.GatherScatterMode.FILL_OR_DROP, update_jaxpr=None, update_consts=()),
                    lambda x, i, u: x - 1.0, True, True),
    "reduce": (lax.reduce_p, (X23, np.float64(0.5)),
               lambda: dict(computation=lambda a, b: a * b + 1.0, jaxpr=_mul_add(), dimensions=(0,)),
               lambda x, i: [(i * x[0] + 1.0) * x[1] + 1.0], True, True),
    "reduce_window": (lax.reduce_window_p, (X23, np.float64(0.5)),
                      lambda: dict(jaxpr=_mul_add().jaxpr, consts=(), window_dimensions=(1, 2),
                                   window_strides=(1, 1), padding=((0, 0), (0, 0)), base_dilation=(1, 1),
                                   window_dilation=(1, 1)),
                      # JAX 0.10.2 fails to linearize it (ValueError); the composition differentiates
                      lambda x, i: [(i * x[:, :-1] + 1.0) * x[:, 1:] + 1.0], True, True),
    "approx_top_k": (lax.approx_top_k_p, (RNG.normal(size=(3, 4)),),
                     dict(k=2, reduction_dimension=-1, recall_target=0.95, is_max_k=True,
                          reduction_input_size_override=-1, aggregate_to_topk=True),
                     lambda x: list(lax.approx_max_k(x, 2)), True, True),
    "cholesky_update": (ll.cholesky_update_p, (np.linalg.cholesky(M3).T, M3[0]), {},
                        lambda r, w: np.linalg.cholesky(M3 + np.outer(w, w)).T, False, False),
    "householder_product": (ll.householder_product_p, (M3, TAUS), {},
                            lambda a, t: ll.householder_product(a, t), False, True),
    "ormqr": (ll.ormqr_p, (M3, TAUS, X23.T), dict(left=True, transpose=False),
              lambda a, t, c: np.asarray(ll.householder_product(a, t)) @ c, False, True),
    "symmetric_product": (ll.symmetric_product_p, (X23.T, M3), dict(alpha=2.0, beta=0.5),
                          lambda a, c: 2.0 * a @ a.T + 0.5 * c, False, True),
    "tridiagonal": (ll.tridiagonal_p, (M3,), dict(lower=True), lambda a: list(ll.tridiagonal(a)), False, True),
    "tridiagonal_solve": (ll.tridiagonal_solve_p, (np.array([0.0, 1.0, 0.5]), np.array([4.0, 3.0, 2.0]),
                                                   np.array([1.0, 0.7, 0.0]), X23.T), dict(perturb_singular=False),
                          lambda dl, d, du, b: np.linalg.solve(np.diag(d) + np.diag(dl[1:], -1)
                                                               + np.diag(du[:-1], 1), b), True, True),
    "lu_pivots_to_permutation": (ll.lu_pivots_to_permutation_p, (np.array([2, 2, 2], np.int32),),
                                 dict(permutation_size=4), lambda p: np.array([2, 0, 1, 3]), False, True),
}


@pytest.fixture(autouse=True)
def _x64(x64):
    yield


def _params(name):
    params = CASES[name][2]
    return params() if callable(params) else params


def _bind(name):
    prim, params = CASES[name][0], _params(name)
    return lambda *xs: prim.bind(*xs, **params)


def _close(got, want, tol=1e-10):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bind_matches_reference_eagerly_and_under_jit(name):
    prim, args, _, ref, *_ = CASES[name]
    want = ref(*args)
    _close(_bind(name)(*args), want)
    _close(jax.jit(_bind(name))(*args), want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_make_jaxpr_shows_one_equation_named_as_in_jax(name):
    prim, args, *_ = CASES[name]
    jaxpr = jax.make_jaxpr(_bind(name))(*args).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == [name]
    assert prim.name == name


def _scalar_loss(name, i):
    """sum(sin(output)) of the bind as a function of operand `i`."""
    prim, args, params = CASES[name][0], CASES[name][1], _params(name)

    def loss(x):
        xs = list(args)
        xs[i] = x
        return sum(jnp.sum(jnp.sin(o)) for o in _leaves_traced(prim.bind(*xs, **params)))
    return loss


def _leaves_traced(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n][4]))
def test_grad_matches_finite_differences(name):
    _, args, *_ = CASES[name]
    for i, a in enumerate(args):
        if np.ndim(a) == 0 or not np.issubdtype(np.asarray(a).dtype, np.floating):
            continue
        loss = _scalar_loss(name, i)
        g = jax.grad(loss)(np.asarray(a))
        np.testing.assert_allclose(g, num_grad(lambda v: loss(v), a), rtol=1e-5, atol=1e-6)


def _float_operand(name):
    """The position of the first floating, non-scalar operand of a case (None: none)."""
    return next((i for i, a in enumerate(CASES[name][1])
                 if np.ndim(a) and np.issubdtype(np.asarray(a).dtype, np.floating)), None)


@pytest.mark.parametrize("name", sorted(n for n in CASES if not CASES[n][4] and _float_operand(n) is not None))
def test_no_derivative_where_jax_has_none(name):
    i = _float_operand(name)
    with pytest.raises(NotImplementedError):
        jax.grad(_scalar_loss(name, i))(np.asarray(CASES[name][1][i]))


def _batched(a, k):
    a = np.asarray(a)
    if np.issubdtype(a.dtype, np.floating):
        return np.stack([a * (1.0 + 0.1 * j) for j in range(k)])
    return np.stack([a] * k)


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n][5]))
def test_vmap_matches_a_loop_of_binds(name):
    _, args, *_ = CASES[name]
    k = 3
    # batch the first operand only, then all of them
    for axes in ([0] + [None] * (len(args) - 1), [0] * len(args)):
        batched = [_batched(a, k) if ax == 0 else a for a, ax in zip(args, axes)]
        got = _leaves(jax.vmap(_bind(name), in_axes=tuple(axes))(*batched))
        for j in range(k):
            one = [b[j] if ax == 0 else b for b, ax in zip(batched, axes)]
            _close([g[j] for g in got], _bind(name)(*one))


def test_cholesky_update_has_no_batching_rule_as_in_jax():
    r, w = CASES["cholesky_update"][1]
    with pytest.raises(NotImplementedError):
        jax.vmap(ll.cholesky_update_p.bind)(np.stack([r, r]), np.stack([w, w]))


# ---- total-order comparisons


def test_total_order_comparisons_recorded_from_jax():
    a = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -np.inf, np.inf])
    b = np.array([-0.0, 0.0, np.nan, np.nan, 2.0, 1.0, np.nan])
    # recorded from JAX 0.10.2 (eq_to_p / le_to_p / lt_to_p .bind(a, b))
    want = {
        lax.eq_to_p: [False, False, True, False, False, False, False],
        lax.le_to_p: [False, True, True, True, True, True, True],
        lax.lt_to_p: [False, True, False, True, True, True, True],
    }
    for p, w in want.items():
        np.testing.assert_array_equal(p.bind(a, b), w)
        np.testing.assert_array_equal(jax.jit(p.bind)(a, b), w)
        np.testing.assert_array_equal(p.bind(a.astype(np.float32), b.astype(np.float32)), w)
    ints = (np.array([1, 2, 3]), np.array([2, 2, 2]))
    np.testing.assert_array_equal(lax.eq_to_p.bind(*ints), [False, True, False])
    np.testing.assert_array_equal(lax.le_to_p.bind(*ints), [True, True, False])
    np.testing.assert_array_equal(lax.lt_to_p.bind(*ints), [True, False, False])
    np.testing.assert_array_equal(lax.lt_to_p.bind(np.array([True]), np.array([False])), [False])


def test_total_order_comparisons_transform():
    x = np.arange(3.0)
    assert [e.primitive.name for e in jax.make_jaxpr(lambda x: lax.lt_to_p.bind(x, 1.0))(x).jaxpr.eqns] == ["lt_to"]
    np.testing.assert_array_equal(jax.vmap(lambda v: lax.lt_to_p.bind(v, 1.0))(x), [True, False, False])
    assert float(jax.grad(lambda v: jnp.where(lax.lt_to_p.bind(v, 1.0), v * 2, v))(0.5)) == 2.0
    with pytest.raises(TypeError):
        lax.eq_to_p.bind(np.array([1.0]), np.array([1], np.int32))
    with pytest.raises(TypeError):
        lax.eq_to_p.bind(np.array([1 + 2j]), np.array([1 + 2j]))


# ---- select_and_scatter


def _select_and_scatter(op, src, padding, strides=(1, 2), select=lambda a, b: a >= b):
    return lax.select_and_scatter_p.bind(
        op, src, np.float64(0.0), select_jaxpr=_closed(select, 0.0, 0.0).jaxpr, select_consts=(),
        scatter_jaxpr=_closed(lax.add, 0.0, 0.0).jaxpr, scatter_consts=(), window_dimensions=(1, 2),
        window_strides=strides, padding=padding)


def test_select_and_scatter_recorded_from_jax():
    op = -np.arange(1.0, 7.0).reshape(1, 6)
    # recorded from JAX 0.10.2
    np.testing.assert_array_equal(_select_and_scatter(op, np.array([[10.0, 20.0, 30.0]]), ((0, 0), (0, 0))),
                                  [[10.0, 0.0, 20.0, 0.0, 30.0, 0.0]])
    np.testing.assert_array_equal(_select_and_scatter(op, np.array([[10.0, 20.0, 30.0, 40.0]]), ((0, 0), (1, 1))),
                                  [[10.0, 20.0, 0.0, 30.0, 0.0, 40.0]])


def test_select_and_scatter_is_the_max_pool_gradient():
    x = RNG.normal(size=(4, 6))
    src = RNG.normal(size=(4, 5))
    got = lax.select_and_scatter_p.bind(
        x, src, np.float64(0.0), select_jaxpr=_closed(lambda a, b: a >= b, 0.0, 0.0).jaxpr, select_consts=(),
        scatter_jaxpr=_closed(lax.add, 0.0, 0.0).jaxpr, scatter_consts=(), window_dimensions=(1, 2),
        window_strides=(1, 1), padding=((0, 0), (0, 0)))
    pool = lambda v: lax.reduce_window(v, -np.inf, lax.max, (1, 2), (1, 1), "VALID")
    _, pull = jax.vjp(pool, x)
    np.testing.assert_allclose(got, pull(src)[0], rtol=1e-12)
    jitted = jax.jit(lambda a, s: _select_and_scatter(a, s, ((0, 0), (0, 0)), strides=(1, 1)))(x, src)
    np.testing.assert_allclose(jitted, got, rtol=1e-12)
    names = [e.primitive.name for e in jax.make_jaxpr(
        lambda a, s: _select_and_scatter(a, s, ((0, 0), (0, 0)), strides=(1, 1)))(x, src).jaxpr.eqns]
    assert names == ["select_and_scatter"]
    with pytest.raises(NotImplementedError):
        jax.vmap(lambda a, s: _select_and_scatter(a, s, ((0, 0), (0, 0)), strides=(1, 1)))(x[None], src[None])


# ---- random bits, rng_uniform, linear solves, stage


def test_rng_bit_generator_p_matches_the_function_and_jax():
    key = np.zeros(4, np.uint32)
    outs = lax.rng_bit_generator_p.bind(key, shape=(3,), dtype=np.dtype("uint32"),
                                        algorithm=lax.RandomAlgorithm.RNG_DEFAULT, out_sharding=None)
    ref = lax.rng_bit_generator(key, (3,))
    _close(outs, list(ref), tol=0)
    # recorded from JAX 0.10.2
    np.testing.assert_array_equal(outs[1], [1713891541, 3781805453, 3159862348])
    names = [e.primitive.name for e in jax.make_jaxpr(
        lambda k: lax.rng_bit_generator_p.bind(k, shape=(3,), dtype=np.dtype("uint32"),
                                               algorithm=lax.RandomAlgorithm.RNG_DEFAULT,
                                               out_sharding=None))(key).jaxpr.eqns]
    assert names == ["rng_bit_generator"]
    keys = np.zeros((2, 4), np.uint32)
    keys[1, 0] = 1
    got = jax.vmap(lambda k: lax.rng_bit_generator_p.bind(
        k, shape=(3,), dtype=np.dtype("uint32"), algorithm=lax.RandomAlgorithm.RNG_DEFAULT, out_sharding=None)[1])(keys)
    for j in range(2):
        np.testing.assert_array_equal(got[j], lax.rng_bit_generator(keys[j], (3,))[1])


def test_rng_uniform_draws_in_range_and_anew_each_call():
    a = lax.rng_uniform(0.0, 1.0, (1000,))
    assert a.dtype == np.float64 and a.shape == (1000,)
    assert 0.0 <= float(jnp.min(a)) and float(jnp.max(a)) < 1.0
    assert abs(float(jnp.mean(a)) - 0.5) < 0.05
    f = jax.jit(lambda lo: lax.rng_uniform(lo, lo + 2.0, (8,)))
    x, y = f(1.0), f(1.0)
    assert not np.array_equal(x, y)
    assert 1.0 <= float(jnp.min(x)) and float(jnp.max(x)) < 3.0
    two = jax.jit(lambda: (lax.rng_uniform(0.0, 1.0, (4,)), lax.rng_uniform(0.0, 1.0, (4,))))()
    assert not np.array_equal(*two)  # two draws in one program are not merged
    i = lax.rng_uniform(np.int32(2), np.int32(5), (200,))
    assert i.dtype == np.int32 and set(np.unique(np.asarray(i))) == {2, 3, 4}
    assert [e.primitive.name for e in jax.make_jaxpr(lambda: lax.rng_uniform(0.0, 1.0, (3,)))().jaxpr.eqns] \
        == ["rng_uniform"]
    with pytest.raises(ValueError):
        lax.rng_uniform(np.float32(0), 1, (2,))
    with pytest.raises(ValueError):
        lax.rng_uniform(np.zeros(2), 1.0, (2,))
    with pytest.raises(NotImplementedError):
        jax.grad(lambda v: jnp.sum(lax.rng_uniform(v, v + 1.0, (2,))))(0.0)


def _solve_params(matrix):
    matvec = _closed(lambda m, x: m @ x, matrix, np.zeros(3))
    solve = _closed(lambda m, b: jnp.linalg.solve(m, b), matrix, np.zeros(3))
    # M3 is symmetric: its solve is also the transposed system's
    return dict(const_lengths=(1, 0, 1, 1), jaxprs=(matvec, None, solve, solve))


def test_linear_solve_p_solves_and_differentiates():
    b = np.array([1.0, -2.0, 0.5])
    params = _solve_params(M3)
    x = lax.linear_solve_p.bind(M3, M3, M3, b, **params)
    np.testing.assert_allclose(x[0], np.linalg.solve(M3, b), rtol=1e-12)
    np.testing.assert_allclose(jax.jit(lambda m, v: lax.linear_solve_p.bind(m, m, m, v, **params))(M3, b)[0],
                               np.linalg.solve(M3, b), rtol=1e-12)
    names = [e.primitive.name for e in jax.make_jaxpr(
        lambda m, v: lax.linear_solve_p.bind(m, m, m, v, **params))(M3, b).jaxpr.eqns]
    assert names == ["custom_linear_solve"]
    loss = lambda v: jnp.sum(jnp.sin(lax.linear_solve_p.bind(M3, M3, M3, v, **params)[0]))
    np.testing.assert_allclose(jax.grad(loss)(b), num_grad(loss, b), rtol=1e-6)
    # the matrix reaches the solve as constants of its jaxprs: differentiated implicitly
    loss_m = lambda m: jnp.sum(jnp.sin(lax.linear_solve_p.bind(m, m, m, b, **params)[0]))
    np.testing.assert_allclose(jax.grad(loss_m)(M3), num_grad(loss_m, M3), rtol=1e-6, atol=1e-8)
    bs = np.stack([b, 2 * b])
    got = jax.vmap(lambda v: lax.linear_solve_p.bind(M3, M3, M3, v, **params)[0])(bs)
    np.testing.assert_allclose(got, np.linalg.solve(M3, bs.T).T, rtol=1e-12)


def test_stage_is_the_identity_lifted_into_the_trace():
    s = lax.stage(1.0)
    assert isinstance(s, jax.Array) and float(s) == 1.0 and s.weak_type
    np.testing.assert_array_equal(lax.stage(np.arange(3)), np.arange(3))
    seen = []

    def f(x):
        c = lax.stage(2.0)
        seen.append(isinstance(c, jax.core.Tracer))
        assert lax.stage(x) is x
        return c * x
    assert float(jax.jit(f)(3.0)) == 6.0 and seen == [True]
    assert jax.make_jaxpr(lambda x: lax.stage(x))(1.0).jaxpr.eqns == []
    consts = jax.make_jaxpr(lambda: lax.stage(np.arange(3.0)))()
    assert consts.jaxpr.eqns == [] and len(consts.jaxpr.outvars) == 1
    np.testing.assert_array_equal(jax.jit(lambda x: x + lax.stage(np.arange(3.0)))(1.0), [1.0, 2.0, 3.0])
    staged = jax.make_jaxpr(lambda x: lax.stage_p.bind(x) * 2.0)(1.0).jaxpr.eqns
    assert [e.primitive.name for e in staged] == ["stage", "mul"]
    assert float(jax.grad(lambda x: lax.stage_p.bind(x) * 3.0)(1.0)) == 3.0
    np.testing.assert_array_equal(jax.vmap(lax.stage_p.bind)(np.arange(3.0)), np.arange(3.0))


def test_unstack_of_a_scalar_raises_as_jax():
    with pytest.raises(ValueError):
        lax.unstack_p.bind(np.float64(1.0), axis=0)


X32 = np.arange(6.0, dtype=np.float32).reshape(2, 3)
# bad operands -> JAX 0.10.2's exception type (recorded by binding each there)
BAD = {
    "tile": (TypeError, lambda: lax.tile_p.bind(X32, reps=(2,))),
    "split": (ValueError, lambda: lax.split_p.bind(X32, sizes=(1, 1), axis=1)),
    "stack": (ValueError, lambda: lax.stack_p.bind(X32, X32.T, axis=0)),
    "approx_top_k": (ValueError, lambda: lax.approx_top_k_p.bind(
        X32, k=5, reduction_dimension=-1, recall_target=0.95, is_max_k=True, reduction_input_size_override=-1,
        aggregate_to_topk=True)),
    "eq_to": (TypeError, lambda: lax.eq_to_p.bind(X32, X32[0])),
    "tridiagonal_solve": (TypeError, lambda: ll.tridiagonal_solve_p.bind(X32[0], X32[0], X32[0, :2], X32.T,
                                                                         perturb_singular=False)),
    "tridiagonal": (ValueError, lambda: ll.tridiagonal_p.bind(X32, lower=True)),
    "householder_product": (ValueError, lambda: ll.householder_product_p.bind(X32, X32[0])),
    "lu_pivots_to_permutation": (ValueError, lambda: ll.lu_pivots_to_permutation_p.bind(
        np.array([1, 5], np.int32), permutation_size=1)),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_operands_raise_as_jax(name):
    exc, call = BAD[name]
    with pytest.raises(exc):
        call()
    with pytest.raises(exc):
        jax.jit(call)()


def test_nested_transformations_of_a_composite_primitive():
    dl, d, du, b = CASES["tridiagonal_solve"][1]

    def loss(diag):
        return jnp.sum(ll.tridiagonal_solve_p.bind(dl, diag, du, b, perturb_singular=False) ** 2)

    diags = np.stack([d, d + 0.5, d * 2.0])
    got = jax.jit(jax.vmap(jax.grad(loss)))(diags)
    for j in range(3):
        np.testing.assert_allclose(got[j], num_grad(loss, diags[j]), rtol=1e-6)
    hess = jax.hessian(loss)(d)
    np.testing.assert_allclose(hess, jax.jacfwd(jax.grad(loss))(d), rtol=1e-10)
    np.testing.assert_allclose(hess[0], num_grad(lambda v: jax.grad(loss)(v)[0], d), rtol=1e-5, atol=1e-8)
