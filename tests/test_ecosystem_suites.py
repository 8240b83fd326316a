"""Behaviour the test suites of optax, chex and equinox rely on, each case
the reduced form of a failure those suites showed: complex samples and
convolutions, library functions under `jax_numpy_rank_promotion="raise"`,
complex carries of loops. Expected values: NumPy, closed forms, or JAX
0.10.2's recorded output where stated."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax


@pytest.fixture
def rank_promotion_raise():
    jax.config.update("jax_numpy_rank_promotion", "raise")
    try:
        yield
    finally:
        jax.config.update("jax_numpy_rank_promotion", "allow")


# ---------------------------------------------------------------- random

def test_normal_complex_samples_as_jax():
    # recorded from JAX 0.10.2: parts from two split keys, each of variance 1/2
    got = jax.random.normal(jax.random.key(0), (3,), jnp.complex64)
    assert got.dtype == jnp.complex64
    want = np.array([0.70994526 - 1.727077j, -0.6408772 - 1.4394435j, -0.52903765 + 0.14534172j])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    got = jax.jit(lambda k: jax.random.normal(k, (2,), jnp.complex64))(jax.random.PRNGKey(3))
    np.testing.assert_allclose(np.asarray(got), [-1.6817402 - 1.3740652j, -1.206442 + 0.07411618j],
                               rtol=1e-6)
    k1, k2 = jax.random.split(jax.random.key(5))
    z = jax.random.normal(jax.random.key(5), (4,), jnp.complex64)
    np.testing.assert_allclose(np.real(np.asarray(z)), np.sqrt(0.5) * np.asarray(jax.random.normal(k1, (4,))),
                               rtol=1e-6)
    np.testing.assert_allclose(np.imag(np.asarray(z)), np.sqrt(0.5) * np.asarray(jax.random.normal(k2, (4,))),
                               rtol=1e-6)


def test_normal_rejects_integer_dtypes_with_jax_message():
    with pytest.raises(ValueError, match="must be a float or complex dtype, got int32"):
        jax.random.normal(jax.random.key(0), (2,), jnp.int32)


# ---------------------------------------------------------------- convolution

def _np_correlate_valid(x, w):
    """NCHW / OIHW cross-correlation with VALID padding, unit strides."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1), np.result_type(x, w))
    for i in range(h - kh + 1):
        for j in range(wd - kw + 1):
            out[:, :, i, j] = np.einsum("nchw,ochw->no", x[:, :, i:i + kh, j:j + kw], w)
    return out


def test_complex_convolution_matches_numpy():
    rng = np.random.RandomState(0)
    x = (rng.randn(2, 3, 5, 4) + 1j * rng.randn(2, 3, 5, 4)).astype(np.complex64)
    w = (rng.randn(4, 3, 2, 3) + 1j * rng.randn(4, 3, 2, 3)).astype(np.complex64)
    got = lax.conv_general_dilated(x, w, (1, 1), "VALID")
    assert got.dtype == jnp.complex64
    np.testing.assert_allclose(np.asarray(got), _np_correlate_valid(x, w), rtol=1e-5, atol=1e-5)
    got = jax.jit(lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "VALID"))(x.astype(np.complex128),
                                                                               w.astype(np.complex128))
    np.testing.assert_allclose(np.asarray(got), _np_correlate_valid(x, w), rtol=1e-5, atol=1e-5)


def test_complex_convolution_gradient_as_jax():
    x = (np.arange(8).reshape(1, 1, 2, 4) + 1j * np.arange(8)[::-1].reshape(1, 1, 2, 4) / 2).astype(np.complex64)
    w = np.array([[[[1 - 1j, 2 + 0.5j]]], [[[0.5j, -1]]]], np.complex64)
    g = jax.grad(lambda x: jnp.sum(jnp.abs(lax.conv_general_dilated(x, w, (1, 1), "VALID")) ** 2))(x)
    # recorded from JAX 0.10.2
    want = np.array([[[[-15. - 30.75j, 27. - 75.j, 48. - 64.5j, 52.5 - 16.5j],
                       [27. - 39.75j, 111. - 33.j, 132. - 22.5j, 94.5 + 34.5j]]]])
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6)


# ---------------------------------------------------------------- rank promotion

def test_outer_under_rank_promotion_raise(rank_promotion_raise):
    a, b = np.arange(3.0, dtype=np.float32), np.arange(4.0, dtype=np.float32).reshape(2, 2)
    np.testing.assert_array_equal(np.asarray(jnp.outer(a, b)), np.outer(a, b))
    with pytest.raises(ValueError, match="rank_promotion"):
        jnp.multiply(a.reshape(3, 1), np.ones(2, np.float32))


# ---------------------------------------------------------------- loops

def test_complex_carry_through_scan_and_linearized_loop():
    xs = (np.arange(6) - 1j * np.arange(6)).astype(np.complex64)
    carry, ys = lax.scan(lambda c, x: (c * x, c + x), np.complex64(1 + 1j), xs)
    np.testing.assert_allclose(np.asarray(ys), np.concatenate([[1 + 1j], np.cumprod(xs)[:-1] * (1 + 1j)]) + xs,
                               rtol=1e-6)
    np.testing.assert_allclose(complex(carry), np.prod(xs) * (1 + 1j), rtol=1e-6)

    def loop(z):
        return lax.fori_loop(0, 3, lambda i, c: c * z, jnp.ones_like(z))

    z = np.array([1 + 2j, 0.5 - 1j], np.complex64)
    out, f_jvp = jax.linearize(loop, z)
    np.testing.assert_allclose(np.asarray(out), z ** 3, rtol=1e-6)
    t = np.array([1 + 0j, 1j], np.complex64)
    np.testing.assert_allclose(np.asarray(f_jvp(t)), 3 * z ** 2 * t, rtol=1e-6)


# ---------------------------------------------------------------- API shapes

class _OddName:
    """A callable whose attribute lookup answers every name (as a module
    object with a catch-all `__getattr__` does): `__name__` is not a string."""

    def __getattr__(self, name):
        return 42

    def __call__(self, x):
        return x * 2


@pytest.mark.parametrize("transform", [jax.vmap, jax.grad, jax.jacfwd, jax.jacrev, jax.hessian])
def test_transforms_wrap_callables_with_a_non_string_name(transform):
    f = _OddName()
    g = transform(lambda x: jnp.sum(f(x) ** 2)) if transform is not jax.vmap else transform(f)
    wrapped = transform(f) if transform is jax.vmap else g
    assert wrapped.__wrapped__ is not None
    x = jnp.arange(3.0)
    if transform is jax.vmap:
        np.testing.assert_array_equal(np.asarray(wrapped(x)), [0.0, 2.0, 4.0])
        assert transform(f).__wrapped__ is f
    else:
        assert np.asarray(wrapped(x)).shape == {jax.grad: (3,), jax.jacfwd: (3,), jax.jacrev: (3,),
                                                 jax.hessian: (3, 3)}[transform]


def test_core_atom_is_var_or_literal():
    import typing

    assert set(typing.get_args(jax.core.Atom)) == {jax.core.Var, jax.core.Literal}


def test_dtypes_bfloat16_is_the_scalar_type():
    import ml_dtypes

    bf16 = jax.dtypes.bfloat16
    assert bf16 is ml_dtypes.bfloat16  # JAX 0.10.2: the ml_dtypes scalar type
    x = bf16(1.5)
    assert isinstance(x, bf16) and float(x) == 1.5
    assert jnp.asarray(x).dtype == np.dtype(bf16) == jnp.dtype(jnp.bfloat16)
    assert jnp.zeros(2, bf16).dtype == jnp.bfloat16
    assert jnp.finfo(bf16).eps == 2.0 ** -7


def test_jit_repr_names_the_wrapped_function_as_jax():
    def f(x):
        return x

    # JAX 0.10.2: `<PjitFunction of <function f at 0x...>>` (chex's
    # `is_traceable` recognises jitted functions by it)
    assert repr(jax.jit(f)) == f"<PjitFunction of {f!r}>"
    assert str(jax.jit(f)) == repr(jax.jit(f))
    assert type(jax.jit(f)).__name__ == "PjitFunction"
    assert "PjitFunction" in str(type(jax.jit(f)))


def test_checkify_formats_traced_arguments_as_arrays():
    from microjax_rs.experimental import checkify

    def f(x):
        checkify.check(x < 0, "bad {x}", x={"a": x})
        return x

    err, _ = checkify.checkify(jax.jit(f))(jnp.float32(1.0))
    # recorded from JAX 0.10.2: "bad {'a': Array(1., dtype=float32)} (`check` failed)"
    assert err.get().startswith("bad {'a': Array(1., dtype=float32)}")
    err, _ = checkify.checkify(jax.jit(lambda x: (checkify.check(x < 0, "bad {}", x), x)[1]))(jnp.float32(1.0))
    assert err.get().startswith("bad 1.0")


# ---------------------------------------------------------------- typed keys in trees

def test_path_functions_see_a_typed_key_array_as_one_leaf():
    from microjax_rs.tree_util import DictKey, keystr

    key = jax.random.key(0)
    tree = {"key": key, "x": jnp.float32(1.0)}
    with_path, treedef = jax.tree_util.tree_flatten_with_path(tree)
    assert [p for p, _ in with_path] == [(DictKey("key"),), (DictKey("x"),)]  # JAX 0.10.2
    assert with_path[0][1] is key and treedef.num_leaves == 2
    assert [keystr(p) for p, _ in jax.tree_util.tree_leaves_with_path(tree)] == ["['key']", "['x']"]
    seen = jax.tree_util.tree_map_with_path(lambda p, x: type(x).__name__, tree)
    assert seen["key"] == type(key).__name__
    # a user is_leaf still applies, with or without the path
    assert len(jax.tree_util.tree_leaves_with_path(tree, is_leaf=lambda x: isinstance(x, dict))) == 1
    assert len(jax.tree_util.tree_leaves_with_path(
        tree, is_leaf=lambda p, x: p == (DictKey("x"),), is_leaf_takes_path=True)) == 2
    # loops and vmap still carry the key's data
    k2, xs = lax.scan(lambda k, _: (jax.random.split(k)[0], jax.random.uniform(k)), key, None, length=3)
    assert jax.random.key_data(k2).shape == (2,) and xs.shape == (3,)
    keys = jax.vmap(lambda k: jax.random.split(k)[1])(jax.random.split(key, 4))
    assert keys.shape == (4,)


def test_linearize_returns_a_partial_over_its_residuals():
    f = lambda x: jnp.sin(x) * x
    x = jnp.arange(3.0)
    want = np.cos(np.arange(3.0)) * np.arange(3.0) + np.sin(np.arange(3.0))  # d/dx of x sin x, at t = 1
    y, f_jvp = jax.linearize(f, x)
    assert isinstance(f_jvp, jax.tree_util.Partial)
    assert len(jax.tree_util.tree_leaves(f_jvp)) == 3  # JAX 0.10.2 keeps three residuals too
    np.testing.assert_allclose(np.asarray(f_jvp(jnp.ones(3))), want, rtol=1e-6)
    # returned from jit and vmap, as JAX's (the residuals are the leaves)
    _, g = jax.jit(lambda x: jax.linearize(f, x))(x)
    np.testing.assert_allclose(np.asarray(g(jnp.ones(3))), want, rtol=1e-6)
    _, g = jax.vmap(lambda x: jax.linearize(f, x))(x)
    assert [leaf.shape for leaf in jax.tree_util.tree_leaves(g)] == [(3,)] * 3
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        f_jvp(jnp.ones(2))


def test_pmap_lower_and_compile():
    f = jax.pmap(lambda x, y: 2 * x + y, in_axes=(0, None))
    x = jnp.array([3.0])
    lowered = f.lower(x, 4.0)
    assert isinstance(lowered, jax.stages.Lowered) and isinstance(lowered.as_text(), str)
    compiled = lowered.compile()
    np.testing.assert_array_equal(np.asarray(compiled(x, 4.0)), [10.0])
    np.testing.assert_array_equal(np.asarray(f(x, 4.0)), [10.0])


def test_compile_accepts_gpu_options_and_rejects_others_as_runtime_errors():
    lowered = jax.jit(lambda x, y: 2 * x + y).lower(jnp.array(3), 4)
    compiled = lowered.compile(compiler_options={"xla_gpu_autotune_level": "0"})
    assert int(compiled(jnp.array(3), 4)) == 10
    # JAX 0.10.2 raises JaxRuntimeError ("No such compile option") for an unknown option
    with pytest.raises(jax.errors.JaxRuntimeError):
        lowered.compile(compiler_options={"an option that does not make sense": "bad value"})
    with pytest.raises(NotImplementedError):
        lowered.compile(compiler_options={"xla_cpu_enable_fast_math": True})


def test_builtin_round_of_arrays_and_tracers():
    # recorded from JAX 0.10.2: without ndigits an integer array (round half to even)
    got = round(jnp.array([1.5, 2.5, -0.5]))
    assert got.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(got), [2, 2, 0])
    assert round(jnp.int32(7)).dtype == jnp.int32 and int(round(jnp.int32(7))) == 7
    got = round(jnp.array([1.25, 2.5, -0.75]), 1)
    assert got.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(got), np.round(np.array([1.25, 2.5, -0.75], np.float32), 1))
    assert int(jax.jit(lambda x: round(x))(jnp.float32(3.5))) == 4
    assert float(jax.grad(lambda x: round(x, 1))(1.0)) == 0.0


def test_python_complex_arguments_of_make_jaxpr_and_lower():
    # JAX 0.10.2: a weak complex64 scalar, as for jit
    assert str(jax.make_jaxpr(lambda x: x * 2)(1j)) == "{ lambda ; a:c64[]. let b:c64[] = mul a (2+0j):c64[] in (b,) }"
    compiled = jax.jit(lambda x: x * 2).lower(3 + 1j).compile()
    got = compiled(3 + 1j)
    assert complex(got) == 6 + 2j and got.dtype == jnp.complex64


def test_canonicalize_dtype_of_none_is_the_default_float():
    assert jax.dtypes.canonicalize_dtype(None) == np.dtype("float32")  # JAX 0.10.2
    with jax.enable_x64(True):
        assert jax.dtypes.canonicalize_dtype(None) == np.dtype("float64")
    assert jax.dtypes.canonicalize_dtype("float64") == np.dtype("float32")


def test_dtypes_issubdtype_knows_key_dtypes():
    key = jax.random.key(0)
    assert jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
    # JAX 0.10.2: also of `extended` and `np.generic`, not of `np.floating`
    assert jax.dtypes.issubdtype(key.dtype, jax.dtypes.extended)
    assert jax.dtypes.issubdtype(key.dtype, np.generic) and not jax.dtypes.issubdtype(key.dtype, np.floating)
    assert not jax.dtypes.issubdtype(np.float32, jax.dtypes.prng_key)
    assert jax.dtypes.issubdtype(jax.dtypes.bfloat16, np.floating)
    assert jax.dtypes.issubdtype("int32", np.integer) and not jax.dtypes.issubdtype("int32", np.floating)


def _eval_jaxpr_by_impl(closed, *args):
    """A jaxpr interpreter as equinox's `finalise_jaxpr` writes one: each
    equation rebound through `get_bind_params` and run with `impl`."""
    env = dict(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, args))

    def read(v):
        return v.val if isinstance(v, jax.core.Literal) else env[v]

    for eqn in closed.jaxpr.eqns:
        subfuns, params = eqn.primitive.get_bind_params(eqn.params)
        out = eqn.primitive.impl(*subfuns, *map(read, eqn.invars), **params)
        outs = out if eqn.primitive.multiple_results else [out]
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in closed.jaxpr.outvars]


def test_primitive_impl_and_get_bind_params_evaluate_a_jaxpr():
    def f(x, p):
        y = jnp.sin(x) * 2.0 + x.sum()
        return lax.cond(p, lambda y: y + 1.0, lambda y: y * 3.0, y)

    x = jnp.arange(3.0)
    for p in (True, False):
        closed = jax.make_jaxpr(f)(x, p)
        (got,) = _eval_jaxpr_by_impl(closed, x, p)
        np.testing.assert_allclose(np.asarray(got), np.asarray(f(x, p)), rtol=1e-6)
        # and re-staged under make_jaxpr, as equinox's finalise_fn does
        again = jax.make_jaxpr(lambda x, p: _eval_jaxpr_by_impl(closed, x, p)[0])(x, p)
        (got,) = _eval_jaxpr_by_impl(again, x, p)
        np.testing.assert_allclose(np.asarray(got), np.asarray(f(x, p)), rtol=1e-6)
    add = lax.add_p
    assert add.get_bind_params({"a": 1}) == ([], {"a": 1})
    np.testing.assert_array_equal(np.asarray(add.impl(jnp.ones(2), jnp.ones(2))), [2.0, 2.0])
