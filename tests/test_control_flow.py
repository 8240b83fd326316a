"""Control flow (`cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`,
`associative_scan`): the seeds' programs against hand-computed values, eager,
under `jit`, `vmap` (vs a per-example loop), `grad`/`jacfwd` (vs finite
differences in float64), and the errors JAX users know."""
import numpy as np
import pytest
from fd import num_grad

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax


def prims(f, *args):
    return [e.primitive.name for e in jax.make_jaxpr(f)(*args).eqns]


# -- the seeds' programs ------------------------------------------------------------


def one_of_three(index, arg):
    return lax.switch(index, [lambda x: x + 1., lambda x: x - 2., lambda x: x + 3.], arg)


def test_switch_one_of_three_eager_jit_and_clamping():
    for idx, want in [(0, 6.0), (1, 3.0), (2, 8.0), (-4, 6.0), (7, 8.0)]:
        assert float(one_of_three(idx, 5.0)) == want
        assert float(jax.jit(one_of_three)(idx, 5.0)) == want
    jaxpr = jax.make_jaxpr(one_of_three)(1, 5.0)
    names = [e.primitive.name for e in jaxpr.eqns]
    assert names.count("cond") == 1 and "clamp" in names
    cond = next(e for e in jaxpr.eqns if e.primitive.name == "cond")
    assert len(cond.params["branches"]) == 3
    assert "branches=(" in str(jaxpr)


def test_switch_under_vmap_grad_and_jacfwd():
    idx = jnp.array([0, 1, 2, 5], dtype=jnp.int32)
    args = jnp.array([1.0, 2.0, 3.0, 4.0])
    got = jax.vmap(one_of_three)(idx, args)
    want = np.stack([float(one_of_three(int(i), float(a))) for i, a in zip(idx, args)])
    np.testing.assert_allclose(np.asarray(got), want)
    # unbatched index, batched operand stays a cond
    np.testing.assert_allclose(np.asarray(jax.vmap(one_of_three, in_axes=(None, 0))(1, args)),
                               np.asarray(args) - 2.0)
    assert float(jax.grad(one_of_three, argnums=1)(2, 5.0)) == 1.0
    assert float(jax.jacfwd(one_of_three, argnums=1)(0, 5.0)) == 1.0


def func7(arg):
    return lax.cond(arg >= 0., lambda xtrue: xtrue + 3., lambda xfalse: xfalse - 3., arg)


def test_cond_func7_values_jaxpr_grad_vmap():
    assert float(func7(5.0)) == 8.0 and float(func7(-1.0)) == -4.0
    text = str(jax.make_jaxpr(func7)(5.0))
    assert "convert_element_type" in text and "cond[" in text
    assert float(jax.grad(lambda x: func7(x) ** 2)(2.0)) == 2 * 5.0
    xs = jnp.array([-2.0, 0.0, 3.0])
    np.testing.assert_allclose(np.asarray(jax.vmap(func7)(xs)), [-5.0, 3.0, 6.0])
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(lambda x: func7(x) * x))(xs)),
                               [2 * -2.0 - 3.0, 3.0, 2 * 3.0 + 3.0])


def func8(arg1, arg2):
    return lax.cond(arg1 >= 0., lambda xtrue: xtrue[0], lambda xfalse: jnp.array([1]) + xfalse[1], arg2)


def test_cond_func8_hoists_branch_consts():
    arg2 = (jnp.zeros(1), 2.0)
    np.testing.assert_allclose(np.asarray(func8(5.0, arg2)), [0.0])
    np.testing.assert_allclose(np.asarray(func8(-5.0, arg2)), [3.0])
    jaxpr = jax.make_jaxpr(func8)(5.0, arg2)
    cond = next(e for e in jaxpr.eqns if e.primitive.name == "cond")
    # the false branch's constant is an operand of the cond, shared by both branches
    assert len(cond.invars) == 1 + 1 + 2
    assert all(len(b.jaxpr.invars) == 3 for b in cond.params["branches"])
    np.testing.assert_allclose(np.asarray(jax.jit(func8)(-1.0, arg2)), [3.0])


def func10(arg, n):
    ones = jnp.ones(arg.shape)
    return lax.fori_loop(0, n, lambda i, carry: carry + ones * 3. + arg, arg + ones)


def test_fori_loop_func10_traced_bound_is_a_while():
    arg = np.arange(4.0, dtype=np.float32)
    want = arg + 1 + 5 * (3 + arg)
    np.testing.assert_allclose(np.asarray(func10(arg, 5)), want)
    np.testing.assert_allclose(np.asarray(jax.jit(func10)(arg, 5)), want)
    names = prims(func10, arg, 5)
    assert "while" in names and "scan" not in names
    # concrete bounds lower to a scan
    assert "scan" in prims(lambda a: func10(a, 5), arg)


def func11(arr, extra):
    ones = jnp.ones(arr.shape)

    def body(carry, aelems):
        ae1, ae2 = aelems
        return (carry + ae1 * ae2 + extra, carry)

    return lax.scan(body, 0., (arr, ones))


def test_scan_func11_values_jaxpr_and_grads(x64):
    arr = np.array([1.0, 2.0, 3.0, 4.0])
    carry, ys = func11(arr, 5.0)
    assert float(carry) == pytest.approx(10.0 + 4 * 5.0)
    np.testing.assert_allclose(np.asarray(ys), [0.0, 6.0, 13.0, 21.0])
    jaxpr = jax.make_jaxpr(func11)(arr, 5.0)
    scan = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    assert len(scan) == 1 and scan[0].params["length"] == 4 and scan[0].params["num_carry"] == 1

    def loss(a, e):
        c, y = func11(a, e)
        return c * 2.0 + jnp.sum(y * y)

    g = jax.grad(loss)(arr, 5.0)
    np.testing.assert_allclose(np.asarray(g), num_grad(lambda a: loss(a, 5.0), arr), rtol=1e-6)
    ge = jax.grad(loss, argnums=1)(arr, 5.0)
    assert float(ge) == pytest.approx(float(num_grad(lambda e: loss(arr, e), 5.0)), rel=1e-6)


def scan_fib(r):
    def scan_fn(carry, multiplier):
        prev_num, cur_num = carry
        next_num = multiplier * cur_num + prev_num
        return (cur_num, next_num), next_num

    prev_num, cur_num = jnp.array(1.0, r.dtype), jnp.array(1.0, r.dtype)
    return jnp.concatenate([jnp.array([prev_num, cur_num]), lax.scan(scan_fn, (prev_num, cur_num), r)[1]])


def fib_loop(r):
    fib = [1.0, 1.0]
    for m in r:
        fib.append(m * fib[-1] + fib[-2])
    return np.array(fib)


def test_scaled_fibonacci_scan_eager_jit_vmap_grad(x64):
    r = np.random.RandomState(0).normal(size=10)
    np.testing.assert_allclose(np.asarray(scan_fib(r)), fib_loop(r), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jit(scan_fib)(r)), fib_loop(r), rtol=1e-12)
    rs = np.random.RandomState(1).normal(size=(3, 10))
    np.testing.assert_allclose(np.asarray(jax.vmap(scan_fib)(rs)),
                               np.stack([fib_loop(x) for x in rs]), rtol=1e-12)
    loss = lambda r: jnp.sum(scan_fib(r) ** 2)
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(r)),
                               num_grad(lambda x: np.sum(fib_loop(x) ** 2), r), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jacfwd(scan_fib)(r)), np.asarray(jax.jacrev(scan_fib)(r)),
                               rtol=1e-10, atol=1e-12)


A = np.array([[1.0, 0.1], [0.0, 0.9]], dtype=np.float32)
X0 = np.array([0.0, 1.0], dtype=np.float32)


def test_ode_fori_loop_matches_python_loop_and_differentiates(x64):
    A64, x0 = A.astype(np.float64), X0.astype(np.float64)
    want = np.linalg.matrix_power(A64, 10) @ x0
    f = lambda x: lax.fori_loop(0, 10, lambda i, x: A64 @ x, x)
    np.testing.assert_allclose(np.asarray(f(x0)), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x0)), want, rtol=1e-12)
    J = np.linalg.matrix_power(A64, 10)
    np.testing.assert_allclose(np.asarray(jax.jacrev(f)(x0)), J, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jacfwd(f)(x0)), J, rtol=1e-12)


def ode_while(x0):
    cond_fn = lambda it_x: it_x[1][0] < 0.5
    body_fn = lambda it_x: (it_x[0] + 1, A @ it_x[1])
    return lax.while_loop(cond_fn, body_fn, (0, x0))


def ode_python(x0):
    it, x = 0, np.asarray(x0)
    while x[0] < 0.5:
        x = A @ x
        it += 1
    return it, x


def test_ode_while_loop_pytree_carry_eager_jit_vmap():
    it, x = ode_while(X0)
    it_np, x_np = ode_python(X0)
    assert int(it) == it_np and it_np > 0
    np.testing.assert_allclose(np.asarray(x), x_np, rtol=1e-6)
    it2, x2 = jax.jit(ode_while)(X0)
    assert int(it2) == it_np
    np.testing.assert_allclose(np.asarray(x2), x_np, rtol=1e-6)
    # batched predicate: members finish after different trip counts
    x0s = np.array([[0.0, 1.0], [0.3, 1.0], [0.6, 1.0], [0.0, 2.0]], dtype=np.float32)
    its, xs = jax.vmap(ode_while)(x0s)
    for k in range(len(x0s)):
        i_np, xk = ode_python(x0s[k])
        assert int(its[k]) == i_np
        np.testing.assert_allclose(np.asarray(xs[k]), xk, rtol=1e-6)


def test_while_loop_forward_mode_only():
    f = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1]
    assert float(jax.jacfwd(f)(1.5)) == 8.0
    _, t = jax.jvp(f, (1.5,), (1.0,))
    assert float(t) == 8.0
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        jax.grad(f)(1.5)
    with pytest.raises(ValueError, match="Reverse-mode differentiation"):
        jax.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0, x))(1.0, 3) if False else \
            jax.jit(jax.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0, x)))(1.0, 3)


def bounded_scan(x0):
    def scan_fn(carry, _):
        it, x = carry
        it_x = lax.cond(x[0] < 0.5, lambda x: (it + 1, A @ x), lambda x: (it, x), x)
        return it_x, it_x

    return lax.scan(scan_fn, (0, x0), jnp.zeros(100))[0]


def test_bounded_loop_scan_plus_cond_matches_while():
    it, x = bounded_scan(X0)
    it_np, x_np = ode_python(X0)
    assert int(it) == it_np
    np.testing.assert_allclose(np.asarray(x), x_np, rtol=1e-6)
    it2, x2 = jax.jit(bounded_scan)(X0)
    assert int(it2) == it_np
    x0s = np.array([[0.0, 1.0], [0.3, 1.0], [0.6, 1.0]], dtype=np.float32)
    its, xs = jax.vmap(bounded_scan)(x0s)
    for k in range(len(x0s)):
        i_np, xk = ode_python(x0s[k])
        assert int(its[k]) == i_np
        np.testing.assert_allclose(np.asarray(xs[k]), xk, rtol=1e-6)


def test_bounded_loop_gradient_matches_finite_differences(x64):
    A64 = A.astype(np.float64)

    def f(x0):
        def scan_fn(carry, _):
            it, x = carry
            return lax.cond(x[0] < 0.5, lambda x: (it + 1, A64 @ x), lambda x: (it, x), x), None

        return jnp.sum(lax.scan(scan_fn, (0, x0), None, length=30)[0][1] ** 2)

    def f_np(x0):
        it, x = 0, x0
        for _ in range(30):
            if x[0] < 0.5:
                x = A64 @ x
        return np.sum(x ** 2)

    x0 = np.array([0.0, 1.0])
    np.testing.assert_allclose(np.asarray(jax.grad(f)(x0)), num_grad(f_np, x0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jacfwd(f)(x0)), num_grad(f_np, x0), rtol=1e-6)


# -- transforms in depth --------------------------------------------------------


def test_second_order_derivatives_through_scan_and_cond(x64):
    def f(x):
        c, ys = lax.scan(lambda c, w: (jnp.sin(c * w), c * w), x, jnp.array([0.5, 1.5, -0.7]))
        return c + jnp.sum(ys) + lax.cond(x > 0, jnp.cos, jnp.exp, x)

    def f_np(x):
        c, s = x, 0.0
        for w in [0.5, 1.5, -0.7]:
            s += c * w
            c = np.sin(c * w)
        return c + s + (np.cos(x) if x > 0 else np.exp(x))

    for x in [0.8, -0.4]:
        assert float(jax.grad(f)(x)) == pytest.approx(float(num_grad(f_np, x)), rel=1e-6)
        g2 = num_grad(lambda y: float(jax.grad(f)(float(y))), x, eps=1e-5)
        assert float(jax.grad(jax.grad(f))(x)) == pytest.approx(float(g2), rel=1e-5)
        assert float(jax.hessian(f)(x)) == pytest.approx(float(g2), rel=1e-5)


def test_vmap_of_scan_batches_consts_carry_and_xs():
    W = np.random.RandomState(0).normal(size=(3, 4, 4)).astype(np.float32) * 0.5
    c0 = np.random.RandomState(1).normal(size=(3, 4)).astype(np.float32)
    xs = np.random.RandomState(2).normal(size=(5, 4)).astype(np.float32)

    def run(w, c, xs):
        return lax.scan(lambda c, x: (jnp.tanh(w @ c + x), c.sum()), c, xs)

    got_c, got_y = jax.vmap(run, in_axes=(0, 0, None))(W, c0, xs)
    for k in range(3):
        c, y = run(W[k], c0[k], xs)
        np.testing.assert_allclose(np.asarray(got_c[k]), np.asarray(c), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(got_y[k]), np.asarray(y), rtol=1e-5, atol=1e-6)
    # xs batched along axis 1 of the stacked operand
    xsb = np.random.RandomState(3).normal(size=(5, 2, 4)).astype(np.float32)
    got = jax.vmap(lambda x: run(W[0], c0[0], x)[0], in_axes=1)(xsb)
    for k in range(2):
        np.testing.assert_allclose(np.asarray(got[k]), np.asarray(run(W[0], c0[0], xsb[:, k])[0]),
                                   rtol=1e-5, atol=1e-6)
    # per-example gradients through the scan, jitted
    loss = lambda w, c: jnp.sum(run(w, c, xs)[0] ** 2)
    g = jax.jit(jax.vmap(jax.grad(loss)))(W, c0)
    for k in range(3):
        np.testing.assert_allclose(np.asarray(g[k]), np.asarray(jax.grad(loss)(W[k], c0[k])),
                                   rtol=1e-4, atol=1e-6)


def test_reverse_scan_and_unroll():
    xs = jnp.arange(5.0)
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, xs, reverse=True)
    assert float(c) == 10.0
    np.testing.assert_allclose(np.asarray(ys), [10.0, 9.0, 7.0, 4.0, 0.0])
    c2, ys2 = lax.scan(lambda c, x: (c + x, c), 0.0, xs, reverse=True, unroll=2)
    np.testing.assert_allclose(np.asarray(ys2), np.asarray(ys))
    g = jax.grad(lambda xs: jnp.sum(lax.scan(lambda c, x: (c * 1.5 + x, c), 0.0, xs, reverse=True)[1]))(xs)
    want = num_grad(lambda v: sum(_rev_scan_np(v)), np.arange(5.0))
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-3)


def _rev_scan_np(xs):
    c, ys = 0.0, [0.0] * len(xs)
    for i in reversed(range(len(xs))):
        ys[i] = c
        c = c * 1.5 + xs[i]
    return ys


def test_scan_without_xs_and_zero_length():
    c, ys = lax.scan(lambda c, _: (c * 2, c), 1.0, None, length=4)
    assert float(c) == 16.0
    np.testing.assert_allclose(np.asarray(ys), [1.0, 2.0, 4.0, 8.0])
    c, ys = lax.scan(lambda c, x: (c + x, x * 2), jnp.full(2, 3.0), jnp.zeros((0, 2)))
    np.testing.assert_allclose(np.asarray(c), [3.0, 3.0])
    assert ys.shape == (0, 2)


def test_cond_batched_index_runs_both_branches_and_selects():
    f = lambda p, x: lax.cond(p, lambda x: x * 2.0, lambda x: -x, x)
    ps = jnp.array([True, False, True])
    xs = jnp.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(ps, xs)), [2.0, -2.0, 6.0])
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f, argnums=1))(ps, xs)), [2.0, -1.0, 2.0])


def test_nested_loops_and_jit_inside_body():
    inner = jax.jit(lambda x: x * 2.0)

    def f(x):
        def body(i, c):
            return lax.fori_loop(0, 3, lambda j, d: d + inner(c) * 0.0 + 1.0, c)

        return lax.fori_loop(0, 4, body, x)

    assert float(f(1.0)) == 13.0
    assert float(jax.jit(f)(1.0)) == 13.0
    assert float(jax.grad(f)(1.0)) == 1.0


def test_eager_fori_loop_traces_the_body_once():
    calls = []

    def body(i, x):
        calls.append(1)
        return x + i

    out = lax.fori_loop(0, 1000, body, jnp.float32(0.0))
    assert float(out) == sum(range(1000))
    assert len(calls) <= 2  # one trace (a second only to type a weak carry)


def test_lax_map_and_batch_size():
    xs = jnp.arange(10.0).reshape(5, 2)
    f = lambda x: jnp.sum(x ** 2)
    want = np.sum(np.asarray(xs) ** 2, axis=1)
    np.testing.assert_allclose(np.asarray(lax.map(f, xs)), want)
    np.testing.assert_allclose(np.asarray(lax.map(f, xs, batch_size=2)), want)
    assert prims(lambda x: lax.map(f, x), xs).count("scan") == 1


def test_associative_scan_matches_cumulative_ops():
    x = np.random.RandomState(0).normal(size=(7, 3)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(lax.associative_scan(jnp.add, x)), np.cumsum(x, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(lax.associative_scan(jnp.maximum, x, axis=1)),
                               np.maximum.accumulate(x, 1))
    np.testing.assert_allclose(np.asarray(lax.associative_scan(jnp.add, x, reverse=True)),
                               np.cumsum(x[::-1], 0)[::-1], rtol=1e-5, atol=1e-6)


# -- errors ----------------------------------------------------------------


def test_errors_name_the_offending_leaf():
    with pytest.raises(TypeError, match="true_fun and false_fun output must have identical types"):
        lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.0)
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, but got output type\(s\) \[ShapedArray\(float32\[\]\)\]"):
        lax.while_loop(lambda c: np.float32(1.), lambda c: c, np.float32(0.))
    with pytest.raises(TypeError, match=r"The input carry component c\[1\] has type float32\[\] but the "
                                        r"corresponding output carry component has type bool\[\], so the dtypes do not match"):
        lax.while_loop(lambda c: True, lambda c: (True, True), (np.bool_(True), np.float32(0.)))
    with pytest.raises(TypeError, match="must have the same pytree structure"):
        lax.while_loop(lambda c: True, lambda c: (1., 1.), 0.)
    with pytest.raises(TypeError, match="shapes do not match"):
        lax.scan(lambda c, x: (jnp.concatenate([c, c]), x), jnp.zeros(1), jnp.zeros(3))
    with pytest.raises(ValueError, match="different leading axis sizes: 3, 4"):
        lax.scan(lambda c, x: (c, x), 0.0, (jnp.zeros(3), jnp.zeros(4)))
    with pytest.raises(ValueError, match="`length` not provided"):
        lax.scan(lambda c, x: (c, x), 0.0, None)
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [], 1.0)
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        lax.cond(jnp.array([True, False]), lambda: 1.0, lambda: 2.0)


def test_weak_carry_takes_the_body_type():
    out = lax.fori_loop(0, 3, lambda i, x: x + jnp.float32(1.5), 0)
    assert out.dtype == np.float32 and float(out) == 4.5
    c, _ = lax.scan(lambda c, x: (c + x, None), 0.0, jnp.ones(3, jnp.float32))
    assert c.dtype == np.float32 and float(c) == 3.0


def test_disable_jit_runs_python_loops():
    with jax.disable_jit():
        assert float(lax.fori_loop(0, 4, lambda i, x: x + i, 0.0)) == 6.0
        assert float(lax.cond(False, lambda: 1.0, lambda: 2.0)) == 2.0
        c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(3.0))
        assert float(c) == 3.0


def test_linearize_through_while_and_scan_residuals_reuse_inputs():
    f = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, x))[1]
    y, f_jvp = jax.linearize(f, 0.7)
    want = 0.7
    d = 1.0
    for _ in range(3):
        d *= np.cos(want)
        want = np.sin(want)
    assert float(y) == pytest.approx(want, rel=1e-6)
    assert float(f_jvp(1.0)) == pytest.approx(d, rel=1e-5)
    # a scan whose residual is a row of its xs reads the xs, not a stacked copy
    g = lambda xs: lax.scan(lambda c, x: (c * x, None), 1.0, xs)[0]
    jaxpr = jax.make_jaxpr(jax.grad(g))(jnp.arange(1.0, 4.0))
    scans = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    assert len(scans) == 2
    assert len(scans[0].outvars) < 3  # carry + stacked carries only, no copy of xs
    np.testing.assert_allclose(np.asarray(jax.grad(g)(jnp.arange(1.0, 4.0))), [6.0, 3.0, 2.0])


def test_compiled_loop_bodies_match_eager_bitwise_on_repeated_calls():
    # jit runs scan/while bodies compiled, with consts bound once and the
    # carries' and rows' buffers recycled between steps and calls; every
    # call must give eager's bits, and earlier results must stay unchanged.
    rng = np.random.default_rng(3)
    w = jnp.asarray((rng.standard_normal((16, 16)) / 4).astype(np.float32))
    c0 = jnp.asarray(rng.standard_normal(16).astype(np.float32))
    xs = jnp.asarray(rng.standard_normal((12, 16)).astype(np.float32))

    def scan_xs_ys(w, c, xs):
        def body(carry, x):
            c, i = carry
            y = jnp.tanh(c @ w + x) * 0.5
            return (y, i + 1), jnp.sin(c)
        return lax.scan(body, (c, jnp.int32(0)), xs, reverse=True)

    def fori(w, c):
        return lax.fori_loop(0, 9, lambda i, c: jnp.exp(-(c @ w) ** 2) - c, c)

    def while_(w, c):
        return lax.while_loop(lambda s: s[0] < 7, lambda s: (s[0] + 1, jnp.cos(s[1] @ w)),
                              (jnp.int32(0), c))

    def same_bits(g, e):
        g, e = np.asarray(g), np.asarray(e)
        assert (g.dtype, g.shape, g.tobytes()) == (e.dtype, e.shape, e.tobytes())

    for f, args in [(scan_xs_ys, (w, c0, xs)), (fori, (w, c0)), (while_, (w, c0))]:
        want = jax.tree_util.tree_leaves(f(*args))
        jf = jax.jit(f)
        first = [np.array(a) for a in jax.tree_util.tree_leaves(jf(*args))]
        for _ in range(3):
            got = jax.tree_util.tree_leaves(jf(*args))
            for g, e in zip(got, want):
                same_bits(g, e)
        for g, e in zip(first, want):
            same_bits(g, e)


@pytest.mark.parametrize("n,dtype", [(48, np.float32), (64, np.float32), (48, np.float64)])
def test_loop_constant_matrix_times_carry_matches_eager_steps(x64, n, dtype):
    # `W @ c` with W a loop constant: a compiled loop body packs W once and
    # multiplies column by column; the bits must be those of eager `W @ c`
    # step by step (each row's partial sums added in the same order), in a
    # scan (W as a scan constant and as a closed-over array) and a
    # fori_loop, and vmap, grad and the portable mode must agree as well.
    rng = np.random.default_rng(3)
    W = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(dtype)
    c0 = rng.standard_normal(n).astype(dtype)
    steps = 30

    def eager(W, c):
        for _ in range(steps):
            c = jnp.tanh(W @ c)
        return np.asarray(c)

    want = eager(jnp.asarray(W), jnp.asarray(c0))
    by_scan = jax.jit(lambda W, c: lax.scan(lambda c, _: (jnp.tanh(W @ c), None), c, None,
                                            length=steps)[0])
    Wc = jnp.asarray(W)
    closed = jax.jit(lambda c: lax.scan(lambda c, _: (jnp.tanh(Wc @ c), None), c, None,
                                        length=steps)[0])
    by_fori = jax.jit(lambda W, c: lax.fori_loop(0, steps, lambda i, c: jnp.tanh(W @ c), c))
    for got in (by_scan(W, c0), closed(c0), by_fori(W, c0)):
        assert np.asarray(got).dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    # vmap over the carry (a batch of vectors) against a loop.
    cs = rng.standard_normal((3, n)).astype(dtype)
    batched = jax.vmap(by_scan, in_axes=(None, 0))(W, cs)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for row, c in zip(np.asarray(batched), cs):
        np.testing.assert_allclose(row, eager(jnp.asarray(W), jnp.asarray(c)), rtol=tol, atol=tol)
    if dtype == np.float64:
        loss = lambda W: jnp.sum(by_scan(W, c0) ** 2)
        g = np.asarray(jax.grad(loss)(W))
        i, j = 5, 17
        h = 1e-6
        Wp, Wm = W.copy(), W.copy()
        Wp[i, j] += h
        Wm[i, j] -= h
        fd = (float(loss(Wp)) - float(loss(Wm))) / (2 * h)
        assert g[i, j] == pytest.approx(fd, rel=1e-6, abs=1e-9)
    # The portable mode runs its k-ordered products, packed or not.
    jax.config.update("microjax_determinism", "portable")
    try:
        portable = eager(jnp.asarray(W), jnp.asarray(c0))
        fresh = jax.jit(lambda W, c: lax.scan(lambda c, _: (jnp.tanh(W @ c), None), c, None,
                                              length=steps)[0])
        np.testing.assert_array_equal(np.asarray(fresh(W, c0)), portable)
    finally:
        jax.config.update("microjax_determinism", "default")
    np.testing.assert_allclose(portable, want, rtol=tol, atol=tol)
