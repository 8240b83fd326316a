"""Named-axis collectives under vmap/pmap against NumPy, their derivatives,
pmap and devices, vmap's API errors, and vmap of custom_vjp functions."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax

rng = np.random.default_rng(1)


@pytest.fixture
def four_devices():
    """Four CPU devices, the CPU the only platform (pmap maps over the
    default platform's devices, and a GPU, when present, would be first)."""
    jax.config.update("jax_num_cpu_devices", 4)
    jax.config.update("jax_platforms", "cpu")
    yield
    jax.config.update("jax_num_cpu_devices", -1)
    jax.config.update("jax_platforms", None)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def close(got, want, tol=1e-5):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


# ----------------------------------------------------------------- values


@pytest.mark.parametrize("n", [1, 5])
def test_reductions_over_the_axis(n):
    x = f32(n, 3)
    vm = lambda f: jax.vmap(f, axis_name="i")(jnp.asarray(x))  # noqa: E731
    close(vm(lambda v: lax.psum(v, "i")), np.broadcast_to(x.sum(0), x.shape))
    close(vm(lambda v: lax.pmean(v, "i")), np.broadcast_to(x.mean(0), x.shape))
    close(vm(lambda v: lax.pmax(v, "i")), np.broadcast_to(x.max(0), x.shape))
    close(vm(lambda v: lax.pmin(v, "i")), np.broadcast_to(x.min(0), x.shape))
    # Normalizing over the axis: x / psum(x).
    close(vm(lambda v: v / lax.psum(v, "i")), x / x.sum(0))


def test_psum_of_pytrees_unbatched_values_and_ints():
    x = f32(4, 2)
    out = jax.vmap(lambda v: lax.psum({"a": v, "b": 2.0 * v}, "i"), axis_name="i")(jnp.asarray(x))
    close(out["a"], np.broadcast_to(x.sum(0), x.shape))
    close(out["b"], np.broadcast_to(2 * x.sum(0), x.shape))
    # psum of a value equal on every example multiplies by the axis size.
    sizes = jax.vmap(lambda v: lax.psum(1, "i"), axis_name="i")(jnp.asarray(x))
    assert np.asarray(sizes).tolist() == [4] * 4
    ints = np.arange(12, dtype=np.int32).reshape(4, 3)
    got = jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(jnp.asarray(ints))
    assert np.asarray(got).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), np.broadcast_to(ints.sum(0), ints.shape))


def test_psum_of_complex_values():
    x = (f32(3, 2) + 1j * f32(3, 2)).astype(np.complex64)
    f = jax.vmap(lambda a: lax.psum(a, "i"), axis_name="i")
    close(f(x), np.broadcast_to(x.sum(0), x.shape))
    close(jax.jit(f)(x), np.broadcast_to(x.sum(0), x.shape))
    # Each element reaches the three outputs of its column (JAX 0.10.2 gives 6-3j).
    g = jax.grad(lambda a: jnp.real(f(a) * (2 - 1j)).sum())(jnp.asarray(x))
    close(g, np.full(x.shape, 3 * (2 - 1j)))
    with pytest.raises(TypeError):
        jax.vmap(lambda a: lax.pmax(a, "i"), axis_name="i")(x)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_all_gather(axis):
    n = 3
    x = f32(n, 2, 4)
    got = jax.vmap(lambda v: lax.all_gather(v, "i", axis=axis), axis_name="i")(jnp.asarray(x))
    per = np.stack(list(x), axis=axis if axis >= 0 else 3 + axis)
    close(got, np.stack([per] * n))
    got = jax.vmap(lambda v: lax.all_gather(v, "i", axis=axis, tiled=True), axis_name="i")(jnp.asarray(x))
    per = np.concatenate(list(x), axis=axis)
    close(got, np.stack([per] * n))


def test_axis_index_and_out_axes():
    x = f32(4, 2)
    got = jax.vmap(lambda v: v * lax.axis_index("i"), axis_name="i")(jnp.asarray(x))
    close(got, x * np.arange(4)[:, None])
    idx = jax.vmap(lambda v: lax.axis_index("i"), axis_name="i", out_axes=0)(jnp.asarray(x))
    assert np.asarray(idx).dtype == np.int32
    assert np.asarray(idx).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("split,concat", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_all_to_all_untiled(split, concat):
    n = 3
    shape = [2, 2]
    shape[split] = n
    x = f32(n, *shape)
    got = jax.vmap(lambda v: lax.all_to_all(v, "i", split, concat), axis_name="i")(jnp.asarray(x))
    # Example j: block j (of split) of every example k, stacked at concat.
    want = np.stack([np.stack([np.take(x[k], j, axis=split) for k in range(n)], axis=concat)
                     for j in range(n)])
    close(got, want)


def test_all_to_all_tiled_and_psum_scatter():
    n = 2
    x = f32(n, 4, 3)
    got = jax.vmap(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), axis_name="i")(jnp.asarray(x))
    want = np.stack([np.concatenate([x[k][2 * j:2 * j + 2] for k in range(n)], axis=1) for j in range(n)])
    close(got, want)
    y = f32(n, n, 3)
    got = jax.vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(jnp.asarray(y))
    close(got, y.sum(0))
    z = f32(n, 4, 3)
    got = jax.vmap(lambda v: lax.psum_scatter(v, "i", tiled=True), axis_name="i")(jnp.asarray(z))
    close(got, z.sum(0).reshape(n, 2, 3))


def test_ppermute_shift():
    n = 4
    x = f32(n, 3)
    perm = [(i, (i + 1) % n) for i in range(n)]
    got = jax.vmap(lambda v: lax.ppermute(v, "i", perm), axis_name="i")(jnp.asarray(x))
    close(got, np.roll(x, 1, axis=0))
    partial = [(0, 1)]
    got = jax.vmap(lambda v: lax.ppermute(v, "i", partial), axis_name="i")(jnp.asarray(x))
    want = np.zeros_like(x)
    want[1] = x[0]
    close(got, want)


def test_nested_vmaps_with_outer_axis_collectives():
    x = f32(3, 4, 2)

    def f(v):
        return v - lax.pmean(v, "i") + lax.psum(v, "j") * lax.axis_index("i")

    got = jax.vmap(jax.vmap(f, axis_name="j"), axis_name="i")(jnp.asarray(x))
    want = x - x.mean(0) + x.sum(1, keepdims=True) * np.arange(3)[:, None, None]
    close(got, want)
    both = jax.vmap(jax.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(jnp.asarray(x))
    close(both, np.broadcast_to(x.sum((0, 1)), x.shape))
    # An inner collective over the outer axis of a value only the outer map batches.
    w = f32(3, 2)
    got = jax.vmap(lambda a: jax.vmap(lambda b: lax.psum(a, "i") * b, axis_name="j")(jnp.ones(4)),
                   axis_name="i")(jnp.asarray(w))
    close(got, np.broadcast_to(w.sum(0)[None, None], (3, 4, 2)))


def test_jit_inside_vmap_and_vmap_inside_jit():
    x = f32(5, 3)
    inner = jax.jit(lambda v: v / lax.psum(v, "i") + lax.axis_index("i"))
    got = jax.vmap(inner, axis_name="i")(jnp.asarray(x))
    want = x / x.sum(0) + np.arange(5)[:, None]
    close(got, want)
    # An axis_index inside a jit with no batched operand.
    got = jax.vmap(lambda v: jax.jit(lambda: lax.axis_index("i"))() + v, axis_name="i")(jnp.asarray(x))
    close(got, x + np.arange(5)[:, None])
    outer = jax.jit(jax.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i"))
    close(outer(jnp.asarray(x)), np.stack([x] * 5))
    # The same jitted function inside maps of different sizes.
    g = jax.jit(lambda v: lax.all_gather(v, "i"))
    for n in (2, 3):
        got = jax.vmap(g, axis_name="i")(jnp.asarray(x[:n]))
        close(got, np.stack([x[:n]] * n))


def test_make_jaxpr_shows_collectives():
    text = str(jax.make_jaxpr(jax.vmap(lambda v: jax.jit(lambda u: lax.psum(u, "i"))(v), axis_name="i"))(
        jnp.ones((3, 2))))
    assert "reduce_sum" in text and "psum" not in text
    jaxpr = jax.make_jaxpr(lambda v: jax.vmap(lambda u: lax.psum(u, "i"), axis_name="j")(v))
    with pytest.raises(NameError, match="unbound axis name: i"):
        jaxpr(jnp.ones((3, 2)))
    # Inside a map binding "i" the per-example program shows the collectives as JAX does.
    texts = []

    def per_example(v):
        texts.append(str(jax.make_jaxpr(
            lambda u: (lax.psum(u, "i"), lax.all_gather(u, "i"), lax.axis_index("i")))(v)))
        return v

    jax.vmap(per_example, axis_name="i")(jnp.ones((2, 3)))
    assert "psum[axes=('i',) axis_index_groups=None] a" in texts[0]
    assert ("all_gather[all_gather_dimension=0 axis_index_groups=None axis_name=i axis_size=2 "
            "tiled=False] a") in texts[0]
    assert "i32[] = axis_index[axis_name=i]" in texts[0]


# ----------------------------------------------------------------- derivatives


def test_grad_through_psum_is_the_issue_example(x64):
    x = np.array([0.5, -1.0, 2.0, 1.5, 3.0])
    g = jax.vmap(jax.grad(lambda v: v / lax.psum(v, "i")), axis_name="i")(jnp.asarray(x))
    # psum transposes to psum: each gradient is d/dx_i of sum_k x_k / S, i.e. 0.
    close(np.asarray(g), np.zeros_like(x), 1e-12)


def num_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def test_grad_through_collectives_against_finite_differences(x64):
    x = rng.standard_normal(5)

    def per(v):
        return jnp.sin(v) * lax.psum(v * v, "i") + lax.pmax(v, "i") * v

    g = jax.vmap(jax.grad(per), axis_name="i")(jnp.asarray(x))

    def total(v):  # the sum over examples that psum's transpose differentiates
        return float(np.sum(np.sin(v) * np.sum(v * v) + np.max(v) * v))

    close(np.asarray(g), num_grad(total, x), 1e-6)
    # The hand-derived formula.
    i = int(np.argmax(x))
    want = np.cos(x) * np.sum(x * x) + 2 * x * np.sum(np.sin(x)) + np.max(x)
    want[i] += np.sum(x)
    close(np.asarray(g), want, 1e-9)


def test_grad_of_all_gather_and_psum_scatter(x64):
    x = rng.standard_normal((3, 2))
    w = rng.standard_normal((3, 3, 2))

    def per(v, wk):
        return jnp.sum(lax.all_gather(v, "i") * wk)

    g = jax.vmap(jax.grad(per), axis_name="i")(jnp.asarray(x), jnp.asarray(w))
    # sum over examples k of sum(x_all * w_k): d/dx_j = sum_k w_k[j]
    close(np.asarray(g), w.sum(0), 1e-9)

    def per2(v):
        return jnp.sum(jnp.sin(lax.psum_scatter(v, "i")))

    y = rng.standard_normal((3, 3, 2))
    g = jax.vmap(jax.grad(per2), axis_name="i")(jnp.asarray(y))
    s = y.sum(0)  # example j holds sin(s[j]); d/dy_k[j] = cos(s[j])
    close(np.asarray(g), np.broadcast_to(np.cos(s), y.shape), 1e-9)


def test_jvp_of_pmax(x64):
    x = np.array([1.0, 3.0, 2.0, 3.0])
    t = np.array([0.1, 0.2, 0.3, 0.4])
    y, ty = jax.vmap(lambda a, b: jax.jvp(lambda v: lax.pmax(v, "i"), (a,), (b,)), axis_name="i")(
        jnp.asarray(x), jnp.asarray(t))
    close(y, np.full(4, 3.0))
    # Like reduce_max: tangents of the maximal examples, averaged.
    close(ty, np.full(4, 0.3), 1e-12)


def test_axis_index_has_no_gradient(x64):
    g = jax.vmap(jax.grad(lambda v: v * lax.axis_index("i")), axis_name="i")(jnp.arange(3.0))
    close(g, np.arange(3.0))


# ----------------------------------------------------------------- errors


def test_unbound_axis_names_raise_name_error():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(jnp.ones(3), "i")
    with pytest.raises(NameError, match="unbound axis name: j"):
        jax.vmap(lambda v: lax.psum(v, "j"), axis_name="i")(jnp.ones(3))
    with pytest.raises(NameError, match="unbound axis name: i"):
        jax.jit(lambda v: lax.axis_index("i"))(jnp.ones(3))
    with pytest.raises(NameError, match="unbound axis name: i"):
        jax.vmap(jax.jit(lambda v: lax.all_gather(v, "i")))(jnp.ones(3))
    with pytest.raises(NameError):
        lax.psum_p.bind(jnp.ones(2), axes=("i",), axis_index_groups=None)


def test_vmap_api_errors():
    x, y = jnp.ones((3, 2)), jnp.ones((4, 2))
    with pytest.raises(ValueError, match="inconsistent sizes") as e:
        jax.vmap(lambda a, b: a + b)(x, y)
    assert "size 3" in str(e.value) and "size 4" in str(e.value)
    assert "axis 0 of argument a of type f32[3,2]" in str(e.value)
    assert "axis 0 of argument b of type f32[4,2]" in str(e.value)
    with pytest.raises(ValueError, match="axis 2"):
        jax.vmap(lambda a: a, in_axes=2)(x)
    with pytest.raises(ValueError, match="in_axes"):
        jax.vmap(lambda a, b: a, in_axes=(0, 0, 0))(x, x)
    with pytest.raises(ValueError, match="tree prefix"):
        jax.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": x})
    with pytest.raises(ValueError, match="at least one non-None"):
        jax.vmap(lambda a: a, in_axes=None)(x)
    out = jax.vmap(lambda a: a + 1.0, in_axes=None, axis_size=3)(jnp.ones(2))
    assert out.shape == (3, 2)
    with pytest.raises(NotImplementedError):
        jax.vmap(lambda a: a, spmd_axis_name="x")
    with pytest.raises(ValueError, match="out_axes"):
        jax.vmap(lambda a: a, out_axes=3)(x)
    with pytest.raises(ValueError, match="axis sizes|axis size"):
        jax.vmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(jnp.ones((3, 2)))


# ----------------------------------------------------------------- pmap and devices


def test_devices():
    devs = jax.devices("cpu")
    assert len(devs) == jax.device_count("cpu") == jax.local_device_count("cpu") == 1
    assert devs[0].platform == "cpu" and devs[0].id == 0
    assert repr(devs[0]) == "CpuDevice(id=0)"
    assert jax.local_devices(backend="cpu") == devs


def test_pmap_equals_vmap(four_devices):
    assert jax.device_count() == 4
    assert [d.id for d in jax.devices()] == [0, 1, 2, 3]
    x = f32(4, 3)

    def f(v):
        return v / lax.psum(v, "i") + lax.axis_index("i")

    close(jax.pmap(f, axis_name="i")(jnp.asarray(x)), jax.vmap(f, axis_name="i")(jnp.asarray(x)))
    w = f32(3)
    g = jax.pmap(lambda v, w, k: (v * w) ** k, in_axes=(0, None, None), static_broadcasted_argnums=2)
    close(g(jnp.asarray(x), jnp.asarray(w), 2), (x * w) ** 2)
    with pytest.raises(ValueError, match="requires 5 logical devices"):
        jax.pmap(f, axis_name="i")(jnp.ones((5, 3)))


def test_pmap_size_limit_on_one_device():
    x = jnp.ones((1, 3))
    close(jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(x), np.ones((1, 3)))
    with pytest.raises(ValueError, match="only 1 XLA devices"):
        jax.pmap(lambda v: v)(jnp.ones((2, 3)))


# ----------------------------------------------------------------- custom_vjp


@jax.custom_vjp
def clip_grad(x, lo):
    return jnp.sin(x) * lo


def _fwd(x, lo):
    return clip_grad(x, lo), (x, lo)


def _bwd(res, g):
    x, lo = res
    return (jnp.clip(jnp.cos(x) * lo * g, -0.5, 0.5), jnp.sin(x) * g)


clip_grad.defvjp(_fwd, _bwd)


def test_vmap_of_custom_vjp_function():
    x = f32(5, 3)
    lo = f32(3)
    got = jax.vmap(clip_grad, in_axes=(0, None))(jnp.asarray(x), jnp.asarray(lo))
    close(got, np.sin(x) * lo)
    los = f32(3, 5)
    got = jax.vmap(clip_grad, in_axes=(1, 1), out_axes=1)(jnp.asarray(x.T.copy()), jnp.asarray(los))
    close(got, np.sin(x.T) * los)


def test_vmap_of_grad_of_custom_vjp_function():
    x = f32(5, 3)
    lo = jnp.asarray(f32(3))
    loss = lambda v, l: jnp.sum(clip_grad(v, l))  # noqa: E731
    got = jax.vmap(jax.grad(loss), in_axes=(0, None))(jnp.asarray(x), lo)
    want = np.stack([np.asarray(jax.grad(loss)(jnp.asarray(r), lo)) for r in x])
    close(got, want)
    assert np.abs(np.asarray(got)).max() <= 0.5
    # Gradient of the batched function (the custom rule batched), both arguments.
    gx, gl = jax.grad(lambda v, l: jnp.sum(jax.vmap(clip_grad, in_axes=(0, None))(v, l)),
                      argnums=(0, 1))(jnp.asarray(x), lo)
    close(gx, want)
    close(gl, np.sin(x).sum(0))
    jitted = jax.jit(jax.vmap(jax.grad(loss), in_axes=(0, None)))(jnp.asarray(x), lo)
    close(jitted, want)


def test_forward_and_second_order_through_psum(x64):
    x = np.array([0.5, -1.0, 2.0, 1.5])
    per = lambda v: jnp.sin(v) * lax.psum(v * v, "i")  # noqa: E731
    s2, sx, ss, sc = np.sum(x * x), np.sum(x), np.sum(np.sin(x)), np.sum(np.cos(x))
    # Forward mode: every example's tangent is 1, so psum sums all of them.
    jf = jax.vmap(jax.jacfwd(per), axis_name="i")(jnp.asarray(x))
    close(jf, np.cos(x) * s2 + 2 * np.sin(x) * sx, 1e-12)
    # Reverse mode: the gradient of the sum over examples.
    jr = jax.vmap(jax.jacrev(per), axis_name="i")(jnp.asarray(x))
    close(jr, np.cos(x) * s2 + 2 * x * ss, 1e-12)
    # hessian = jacfwd(jacrev): the all-ones directional derivative of jr.
    h = jax.vmap(jax.hessian(per), axis_name="i")(jnp.asarray(x))
    close(h, -np.sin(x) * s2 + 2 * np.cos(x) * sx + 2 * ss + 2 * x * sc, 1e-12)
    # grad of a vmap with collectives: d/dx of sum_i x_i / S is 0.
    g = jax.grad(lambda v: jnp.sum(jax.vmap(lambda u: u / lax.psum(u, "i"), axis_name="i")(v)))(jnp.asarray(x))
    close(g, np.zeros(4), 1e-12)
    counts = jax.vmap(lambda v: lax.psum(v > 0, "i"), axis_name="i")(jnp.asarray(x))
    assert np.asarray(counts).tolist() == [3] * 4
