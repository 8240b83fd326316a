"""JAX API that optax, chex and equinox use, added for them: `jax.sharding`,
`jax.typeof`, `jax.flatten_util`, `jnp.vectorize`, `jax.scipy.stats.norm`,
`lax.Precision`, `lax.pswapaxes`, `jax.dtypes.result_type`,
`jax.experimental.checkify`, `jax.test_util.check_grads`, `jax.stages`,
`jax.named_scope`, `interpreters.mlir`, `batching.axis_primitive_batchers`,
`extend.core.mapped_aval`, and the `jax._src` stand-ins. Imported directly
(no `install_as_jax`). Expected values: NumPy, closed forms, or JAX 0.10.2's
behaviour where stated."""
import math
import typing

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax
from microjax_rs.experimental import checkify
from microjax_rs.flatten_util import ravel_pytree
from microjax_rs.sharding import Mesh, NamedSharding, P, PartitionSpec, SingleDeviceSharding


# ---------------------------------------------------------------- sharding

def test_partition_spec_equality_and_hash_as_jax():
    assert P("x", None) == PartitionSpec("x", None) == ("x", None)
    assert P("x") != P("x", None)  # JAX 0.10.2: entry by entry
    assert hash(P("x")) == hash(P("x", None))
    assert repr(P("x", None)) == "P('x', None)"
    with pytest.raises(TypeError):
        P(3)


def test_array_and_aval_shardings():
    x = jnp.ones((2, 3))
    s = x.sharding
    assert isinstance(s, SingleDeviceSharding) and isinstance(s, jax.sharding.Sharding)
    assert s.device_set == x.devices() and s.is_fully_replicated and s.memory_kind == "device"
    assert s.shard_shape((2, 3)) == (2, 3)
    a = jax.typeof(x).sharding  # JAX: NamedSharding over the empty AbstractMesh, P(None, None)
    assert isinstance(a, NamedSharding) and a.spec == P(None, None) and a.mesh.empty
    assert a.mesh.are_all_axes_explicit and a.is_fully_replicated
    assert jax.typeof(x).shape == (2, 3)


def test_named_sharding_over_a_mesh():
    devs = jax.devices()
    mesh = Mesh(np.array(devs[:1]).reshape(1, 1), ("data", "model"))
    assert mesh.shape == {"data": 1, "model": 1} and mesh.size == 1 and not mesh.empty
    ns = NamedSharding(mesh, P("data"))
    assert ns.device_set == {devs[0]} and ns.is_fully_replicated
    assert ns.shard_shape((4, 6)) == (4, 6)
    with pytest.raises(ValueError):
        NamedSharding(mesh, P("nope"))
    with pytest.raises(ValueError):
        Mesh(np.array(devs[:1]), ("a", "b"))


# ---------------------------------------------------------------- flatten_util

def test_ravel_pytree_round_trip_and_promotion():
    tree = {"a": jnp.ones(2, jnp.int32), "b": (jnp.zeros((1, 2)),), "c": jnp.asarray([[3.0]])}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == np.float32  # promoted, as JAX
    np.testing.assert_array_equal(flat, [1, 1, 0, 0, 3])
    back = unravel(flat)
    assert back["a"].dtype == np.int32 and back["b"][0].shape == (1, 2) and back["c"].shape == (1, 1)
    np.testing.assert_array_equal(back["a"], [1, 1])
    with pytest.raises(ValueError):
        unravel(jnp.ones(3))
    with pytest.raises(TypeError, match="but expected dtype float32"):
        unravel(jnp.ones(5, jnp.int32))
    empty, unravel_empty = ravel_pytree({})
    assert empty.shape == (0,) and unravel_empty(empty) == {}


def test_ravel_pytree_under_grad_and_jit():
    tree = {"w": jnp.asarray([[1.0, 2.0], [3.0, 4.0]]), "b": jnp.asarray([0.5, -1.0])}
    flat, unravel = ravel_pytree(tree)
    g = jax.jit(jax.grad(lambda v: jnp.sum(unravel(v)["w"] ** 2) + jnp.sum(unravel(v)["b"])))(flat)
    np.testing.assert_allclose(g, [1.0, 1.0, 2.0, 4.0, 6.0, 8.0])  # b leaves come first (sorted keys)


# ---------------------------------------------------------------- jnp.vectorize

def test_vectorize_signature_matches_numpy():
    rng = np.random.RandomState(0)
    a = rng.randn(5, 2, 3).astype(np.float32)
    b = rng.randn(3).astype(np.float32)
    matvec = jnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
    np.testing.assert_allclose(matvec(a, b), np.einsum("kmn,n->km", a, b), rtol=1e-6)
    dot = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    c = rng.randn(4, 1, 3).astype(np.float32)
    d = rng.randn(2, 3).astype(np.float32)
    np.testing.assert_allclose(dot(c, d), np.einsum("kin,jn->kj", c, d).reshape(4, 2), rtol=1e-5)
    two = jnp.vectorize(lambda v: (jnp.sum(v), jnp.max(v)), signature="(n)->(),()")
    s, m = two(a)
    np.testing.assert_allclose(s, a.sum(-1), rtol=1e-5)
    np.testing.assert_allclose(m, a.max(-1))


def test_vectorize_elementwise_and_excluded():
    f = jnp.vectorize(lambda x, p: x ** p, excluded={1})
    np.testing.assert_allclose(f(np.arange(3.0), 2), [0.0, 1.0, 4.0])
    g = jnp.vectorize(lambda x, y: x * 10 + y)
    np.testing.assert_allclose(g(np.ones((2, 1)), np.arange(3.0)), np.ones((2, 1)) * 10 + np.arange(3.0))
    assert jnp.vectorize(lambda x: 2 * x)(np.ones((1, 3))).shape == (1, 3)
    bad = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    with pytest.raises(ValueError):
        bad(np.ones(3), np.ones(4))
    with pytest.raises(ValueError):
        jnp.vectorize(jnp.dot, signature="(n),(n)->")(np.ones(3), np.ones(3))


# ---------------------------------------------------------------- scipy.stats.norm

def test_norm_matches_closed_forms():
    from microjax_rs.scipy.stats import norm
    xs = [-2.0, -0.3, 0.0, 0.7, 1.9]
    for x in xs:
        z = (x - 0.5) / 1.5
        assert float(norm.logpdf(x, 0.5, 1.5)) == pytest.approx(
            -0.5 * z * z - 0.5 * math.log(2 * math.pi) - math.log(1.5), rel=1e-5)
        assert float(norm.pdf(x)) == pytest.approx(math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi), rel=1e-5)
        assert float(norm.cdf(x, 0.5, 1.5)) == pytest.approx(0.5 * (1 + math.erf(z / math.sqrt(2))), abs=1e-6)
        assert float(norm.sf(x)) == pytest.approx(0.5 * math.erfc(x / math.sqrt(2)), abs=1e-6)
    for q in (0.1, 0.5, 0.975):
        assert float(norm.cdf(norm.ppf(q))) == pytest.approx(q, abs=1e-5)
        assert float(norm.sf(norm.isf(q, 1.0, 2.0), 1.0, 2.0)) == pytest.approx(q, abs=1e-5)
    assert float(norm.ppf(0.975)) == pytest.approx(1.959964, abs=1e-4)
    g = jax.grad(lambda x: norm.logpdf(x, 1.0, 2.0))(0.0)
    assert float(g) == pytest.approx(0.25)  # -(x - loc) / scale**2


# ---------------------------------------------------------------- lax additions

def test_precision_enum_as_jax():
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision("float32") is lax.Precision.HIGHEST
    assert lax.Precision("bfloat16") is lax.Precision.DEFAULT
    assert str(lax.Precision.HIGH) == "HIGH"
    with pytest.raises(ValueError):
        lax.Precision("nope")
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(jnp.dot(a, a.T, precision=lax.Precision.HIGHEST), a @ a.T)


def test_pswapaxes_swaps_the_mapped_axis():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 2, 6)
    out = jax.vmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="i")(x)
    np.testing.assert_array_equal(out, np.swapaxes(x, 0, 1))


def test_dtypes_result_type_as_jax():
    assert jax.dtypes.result_type(np.float32, np.int32) == np.float32
    assert jax.dtypes.result_type(jnp.ones(2, jnp.int32), 1.0, return_weak_type_flag=True) == (np.float32, True)
    assert jax.dtypes.result_type(1, return_weak_type_flag=True) == (np.int32, True)
    with pytest.raises(ValueError):
        jax.dtypes.result_type()


def test_imag_attribute_of_real_arrays():
    x = jnp.asarray([1.0, -2.0])
    np.testing.assert_array_equal(x.imag, [0.0, 0.0])
    np.testing.assert_array_equal(jax.jit(lambda v: v.real + v.imag)(x), [1.0, -2.0])


def test_typing_aliases():
    args = typing.get_args(jax.typing.ArrayLike)
    assert jax.Array in args and np.ndarray in args and float in args
    assert np.dtype in typing.get_args(jax.typing.DTypeLike)


# ---------------------------------------------------------------- checkify

def _positive_log(x):
    checkify.check(jnp.all(x > 0), "x must be positive, got {}", x)
    return jnp.log(x)


def test_checkify_reports_the_first_failed_check():
    err, out = checkify.checkify(jax.jit(_positive_log))(jnp.asarray([1.0, 2.0]))
    assert err.get() is None
    np.testing.assert_allclose(out, np.log([1.0, 2.0]))
    checkify.check_error(err)  # no failure: no exception
    err, out = checkify.checkify(jax.jit(_positive_log))(jnp.asarray([1.0, -2.0]))
    msg = err.get()
    assert msg == "x must be positive, got [ 1. -2.] (`check` failed)"  # JAX's text
    assert any("test_ecosystem_api.py" in n for n in err.get_exception().__notes__)  # the user's line
    with pytest.raises(checkify.JaxRuntimeError, match="x must be positive"):
        checkify.check_error(err)
    assert issubclass(checkify.JaxRuntimeError, ValueError)  # as JAX


def test_checkify_under_vmap_and_eagerly():
    err, _ = checkify.checkify(jax.vmap(_positive_log))(jnp.asarray([1.0, -2.0, -3.0]))
    assert err.get().startswith("x must be positive, got -2.0")
    with pytest.raises(checkify.JaxRuntimeError):
        _positive_log(-jnp.ones(2))  # a concrete failing check raises at once
    with pytest.raises(checkify.JaxRuntimeError):
        jax.jit(_positive_log)(-jnp.ones(2))  # a staged one when the program runs
    np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(_positive_log(v)))(jnp.ones(2)), [1.0, 1.0])


def test_checkify_argument_errors_as_jax():
    with pytest.raises(TypeError, match="scalar pred"):
        checkify.check(jnp.asarray([True, False]), "bad")
    with pytest.raises(TypeError, match="PyTrees of arrays"):
        checkify.check(jnp.asarray(False), "bad {x}", x=3)
    # the automatic checks run (tests/test_checkify_automatic.py); user checks are off here
    err, _ = checkify.checkify(_positive_log, errors=checkify.float_checks)(jnp.asarray([1.0, -2.0]))
    assert err.get() == "nan generated by primitive: log."
    with pytest.raises(TypeError):
        checkify.check_error("not an error")
    assert checkify.all_checks == checkify.user_checks | checkify.automatic_checks


# ---------------------------------------------------------------- test_util

def test_check_grads_accepts_right_and_rejects_wrong_derivatives():
    from microjax_rs.test_util import check_grads
    check_grads(lambda x, y: jnp.sin(x) * y ** 2, (np.float32(0.5), np.float32(1.5)), order=2)
    check_grads(lambda x: jnp.sum(jnp.tanh(x)), (jnp.asarray([0.1, -0.4, 0.9]),), order=2, modes=("rev",))

    wrong = jax.custom_jvp(lambda x: jnp.sin(x))
    wrong.defjvp(lambda p, t: (jnp.sin(p[0]), 2.0 * t[0]))  # not cos(x)
    with pytest.raises(AssertionError):
        check_grads(wrong, (np.float32(0.3),), order=1, modes=("fwd",))


# ---------------------------------------------------------------- stages, named_scope

def test_lower_compile_call():
    f = jax.jit(lambda x, n: x ** n, static_argnums=1)
    lowered = f.lower(jnp.ones(3), 2)
    assert isinstance(lowered, jax.stages.Lowered) and "integer_pow" in lowered.as_text()
    compiled = lowered.compile()
    assert isinstance(compiled, jax.stages.Compiled)
    np.testing.assert_allclose(compiled(jnp.asarray([1.0, 2.0, 3.0])), [1.0, 4.0, 9.0])
    with pytest.raises(TypeError, match="Argument types differ"):
        compiled(jnp.ones(2))


def test_named_scope():
    from microjax_rs.api import current_name_stack
    with jax.named_scope("outer"):
        with jax.named_scope("inner"):
            assert current_name_stack() == "outer/inner"
            y = jax.jit(lambda x: x * 2)(jnp.ones(2))
    assert current_name_stack() == ""
    np.testing.assert_array_equal(y, [2.0, 2.0])
    with pytest.raises(TypeError):
        with jax.named_scope(3):
            pass


# ---------------------------------------------------------------- extension points

def test_mapped_and_unmapped_aval():
    from microjax_rs.core import ShapedArray
    from microjax_rs.extend.core import mapped_aval, unmapped_aval
    a = ShapedArray((2, 3, 4), np.float32)
    assert mapped_aval(3, 1, a).shape == (2, 4)
    assert mapped_aval(3, None, a) is a
    assert unmapped_aval(5, 0, a).shape == (5, 2, 3, 4)
    assert unmapped_aval(5, -1, a).shape == (2, 3, 4, 5)
    with pytest.raises(ValueError):
        mapped_aval(7, 1, a)


def test_lower_fun_gives_an_implementation_and_axis_batcher():
    from microjax_rs.extend.core import Primitive
    from microjax_rs.interpreters import batching, mlir
    prim = Primitive("ecosystem_test_double_plus_size")

    def impl(x):
        return x * 2.0

    prim.def_abstract_eval(lambda a: a)
    rule = mlir.lower_fun(impl, multiple_results=False)
    mlir.register_lowering(prim, rule)  # no impl yet: this one becomes it
    np.testing.assert_array_equal(prim.bind(jnp.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(jax.jit(prim.bind)(jnp.ones(2)), [2.0, 2.0])

    seen = []

    def axis_rule(axis_size, axis_name, trace_type, args, dims, **params):
        seen.append(axis_size)
        (x,), (d,) = args, dims
        return prim.bind(x) + axis_size, d

    batching.axis_primitive_batchers[prim] = axis_rule
    out = jax.vmap(prim.bind)(jnp.ones((3, 2)))
    np.testing.assert_array_equal(out, np.full((3, 2), 5.0))
    assert seen and seen[0] == 3


def test_src_stand_ins(tmp_path):
    import importlib.util
    import sys

    from microjax_rs import core
    from microjax_rs._src import compiler, dispatch, traceback_util, xla_bridge
    from microjax_rs._src.dtypes import TypePromotionError

    assert issubclass(TypePromotionError, ValueError)
    assert dispatch.wait_for_tokens() is None
    assert xla_bridge._backends == {}
    backend = xla_bridge.get_backend()
    assert backend.platform in ("cpu", "gpu") and backend.devices() == jax.devices()

    # register_exclusion: frames of the registered file no longer count as user code.
    lib = tmp_path / "ecosystem_fake_lib.py"
    lib.write_text("from microjax_rs import core\n\ndef where():\n    return core.source_info()\n")
    spec = importlib.util.spec_from_file_location("ecosystem_fake_lib", lib)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ecosystem_fake_lib"] = mod
    spec.loader.exec_module(mod)
    try:
        assert str(lib) in mod.where()
        frame = sys._getframe()
        assert traceback_util.include_frame(frame)
        traceback_util.register_exclusion(str(lib))
        assert "test_ecosystem_api.py" in mod.where()
        assert not traceback_util.include_filename(str(lib))
    finally:
        del sys.modules["ecosystem_fake_lib"]

    # jit's backend step runs once per new top-level trace, and can be wrapped.
    calls = []
    original = compiler.backend_compile_and_load

    def wrapper(backend, program, *args, **kwargs):
        calls.append(backend.platform)
        return original(backend, program, *args, **kwargs)

    compiler.backend_compile_and_load = wrapper
    try:
        f = jax.jit(lambda x: x * 3 + 1)
        f(jnp.ones(4))
        f(jnp.ones(4) * 2)
        f(jnp.ones(5))
    finally:
        compiler.backend_compile_and_load = original
    assert len(calls) == 2
    assert core.is_excluded_source(core.__file__)


# ---------------------------------------------------------------- more of jax / jax.nn / jnp

def test_new_nn_functions_match_closed_forms():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    xp = np.linspace(0.1, 3, 7).astype(np.float32)
    softplus = np.log1p(np.exp(x))
    np.testing.assert_allclose(jax.nn.tanh(x), np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(jax.nn.mish(x), x * np.tanh(softplus), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.nn.squareplus(x), (x + np.sqrt(x * x + 4)) / 2, rtol=1e-6)
    np.testing.assert_allclose(jax.nn.sparse_plus(x), np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)))
    np.testing.assert_allclose(jax.nn.sparse_sigmoid(x), np.clip((x + 1) / 2, 0, 1))
    np.testing.assert_allclose(jax.nn.log1mexp(xp), np.log(1 - np.exp(-xp.astype(np.float64))), rtol=1e-5)
    ref = np.log(np.mean(np.exp(x.astype(np.float64))))
    np.testing.assert_allclose(jax.nn.logmeanexp(x), ref, rtol=1e-6)
    np.testing.assert_allclose(jax.nn.logmeanexp(x, where=x > 0),
                               np.log(np.mean(np.exp(x[x > 0].astype(np.float64)))), rtol=1e-6)
    m = np.stack([x, 2 * x], axis=1)
    np.testing.assert_allclose(jax.nn.logmeanexp(m, axis=0),
                               np.log(np.mean(np.exp(m.astype(np.float64)), axis=0)), rtol=1e-6)
    # sparse_plus' derivative is sparse_sigmoid
    np.testing.assert_allclose(jax.grad(lambda t: jnp.sum(jax.nn.sparse_plus(t)))(x), jax.nn.sparse_sigmoid(x))


def test_save_load_round_trip(tmp_path):
    x = jnp.asarray([[1.5, -2.0], [0.25, 4.0]])
    fn = tmp_path / "x.npy"
    jnp.save(fn, x)
    y = jnp.load(fn)
    assert isinstance(y, jax.Array) and y.dtype == np.float32
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(np.load(fn), np.asarray(x))  # a plain .npy file
    jnp.savez(tmp_path / "xs.npz", a=x, b=jnp.arange(3))
    with jnp.load(tmp_path / "xs.npz") as z:
        np.testing.assert_array_equal(z["b"], [0, 1, 2])


def test_ensure_compile_time_eval():
    seen = []

    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            c = jnp.arange(3.0) * 2  # concrete operands: runs now, a concrete array
            seen.append(float(jnp.sum(c)))
            y = x + c  # a traced operand: staged
        return y

    np.testing.assert_array_equal(f(jnp.ones(3)), [1.0, 3.0, 5.0])
    assert seen == [6.0]
    jaxpr = str(jax.make_jaxpr(f)(jnp.ones(3)))
    assert "iota" not in jaxpr and "mul" not in jaxpr and "add" in jaxpr


def test_promotion_mode_contexts():
    with jax.numpy_dtype_promotion("standard"), jax.numpy_rank_promotion("allow"):
        assert (jnp.ones(2, jnp.int32) + 1.5).dtype == np.float32
    with pytest.raises(NotImplementedError):
        jax.numpy_dtype_promotion("strict")
    with jax.numpy_rank_promotion("raise"):  # implemented: tests/test_rank_promotion.py
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            jnp.ones(2) + jnp.ones((3, 2))
    with pytest.raises(ValueError):
        jax.numpy_dtype_promotion("loose")

    @jax.numpy_dtype_promotion("standard")
    def f(x):
        return x + 1.5

    assert f(jnp.ones(2, jnp.int32)).dtype == np.float32


def test_vdot_inner_accept_precision():
    a, b = np.arange(4.0, dtype=np.float32), np.ones(4, np.float32)
    assert float(jnp.vdot(a, b, precision=lax.Precision.HIGHEST)) == 6.0
    assert float(jnp.inner(a, b, precision="highest")) == 6.0


def test_symbolic_zeros_in_custom_rules():
    from microjax_rs.custom_derivatives import CustomVJPPrimal, SymbolicZero, zero_from_primal

    @jax.custom_jvp
    def f(x, y):
        return x * y

    zero_seen = []

    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        zero_seen.append((isinstance(tx, SymbolicZero), isinstance(ty, SymbolicZero)))
        out = x * y
        terms = [t for t in (tx if not isinstance(tx, SymbolicZero) else None,
                             ty if not isinstance(ty, SymbolicZero) else None) if t is not None]
        if not terms:
            return out, SymbolicZero.from_primal_value(out)
        tx = 0.0 if isinstance(tx, SymbolicZero) else tx
        ty = 0.0 if isinstance(ty, SymbolicZero) else ty
        return out, tx * y + x * ty

    f.defjvp(f_jvp, symbolic_zeros=True)
    assert float(jax.grad(f)(2.0, 5.0)) == 5.0
    assert float(jax.jit(jax.grad(f, argnums=1))(2.0, 5.0)) == 2.0
    # As JAX 0.10.2: the unperturbed argument's tangent is a SymbolicZero.
    assert zero_seen == [(False, True), (True, False)]

    def sloppy_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return x * y, tx * y + x * ty

    f.defjvp(sloppy_jvp, symbolic_zeros=True)
    with pytest.raises(TypeError, match="SymbolicZero"):  # as in JAX 0.10.2
        jax.grad(f)(2.0, 5.0)

    seen = []

    @jax.custom_vjp
    def g(x, y):
        return x * 3 + y

    def g_fwd(x, y):
        assert isinstance(x, CustomVJPPrimal) and isinstance(y, CustomVJPPrimal)
        seen.append((x.perturbed, y.perturbed))
        return g(x.value, y.value), None

    def g_bwd(_, ct):
        return 3 * ct, SymbolicZero(jax.core.ShapedArray((), np.float32))

    g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)
    assert float(jax.grad(g)(2.0, 1.0)) == 3.0
    dy = jax.grad(g, argnums=1)(2.0, 1.0)
    assert float(dy) == 0.0  # the SymbolicZero cotangent, instantiated
    # Eagerly, only the argument being differentiated is traced: exact flags.
    assert seen == [(True, False), (False, True)]
    z = zero_from_primal({"a": jnp.ones(2)}, symbolic_zeros=True)
    assert isinstance(z["a"], SymbolicZero) and z["a"].shape == (2,)
    np.testing.assert_array_equal(zero_from_primal(jnp.ones(2)), [0.0, 0.0])


def test_jit_signature_and_src_attributes():
    import inspect

    def foo(x, y=2):
        return x + y

    j = jax.jit(foo, static_argnums=1)
    # JAX's jitted functions carry the wrapped function's signature, also
    # without following __wrapped__ (chex's fake_pmap relies on it).
    assert str(inspect.signature(j, follow_wrapped=False)) == "(x, y=2)"
    # `jax._src.<stand-in>` is reachable as an attribute without an import, as
    # after JAX's `import jax`.
    import microjax_rs._src as src
    assert src.xla_bridge._backends == {}
    assert src.dispatch.wait_for_tokens() is None
    with pytest.raises(AttributeError):
        src.no_such_module


def test_rademacher_same_bits_as_jax():
    # Recorded from JAX 0.10.2 on CPU.
    np.testing.assert_array_equal(jax.random.rademacher(jax.random.PRNGKey(0), (10,)),
                                  [-1, -1, 1, 1, -1, 1, 1, -1, -1, 1])
    out = jax.random.rademacher(jax.random.key(3), (2, 3), dtype=jnp.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[1.0, -1.0, -1.0], [-1.0, 1.0, -1.0]])


def test_cond_and_switch_with_operand_none():
    # An explicit operand=None is an operand (JAX's deprecated keyword form).
    assert float(lax.cond(True, lambda o: 1.0 if o is None else 0.0, lambda o: 2.0, operand=None)) == 1.0
    out = jax.jit(lambda p: lax.cond(p, lambda o: jnp.zeros(2), lambda o: jnp.ones(2), operand=None))(False)
    np.testing.assert_array_equal(out, [1.0, 1.0])
    assert int(lax.switch(1, [lambda o: 0, lambda o: 5 if o is None else 6], operand=None)) == 5
    assert float(lax.cond(False, lambda: 1.0, lambda: 2.0)) == 2.0  # no operands at all
    with pytest.raises(TypeError):
        lax.cond(True, lambda o: o, lambda o: o, 1.0, operand=2.0)


def test_fortran_order_reshape_ravel_and_size_axis():
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(jnp.reshape(a, (4, 6), order="F"), np.reshape(a, (4, 6), order="F"))
    np.testing.assert_array_equal(jnp.reshape(a, (-1, 4), order="F"), np.reshape(a, (-1, 4), order="F"))
    np.testing.assert_array_equal(jnp.ravel(a, order="F"), np.ravel(a, order="F"))
    with pytest.raises(NotImplementedError):
        jnp.reshape(a, (24,), order="A")
    g = jax.grad(lambda x: jnp.sum(jnp.reshape(x, (3, 2), order="F")[0]))(jnp.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(g, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    assert jnp.size(a) == 24 and jnp.size(a, 1) == 3 and jnp.size(a, (0, 2)) == 8 and jnp.size(a, -1) == 4


def test_lax_broadcast_shapes():
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert lax.broadcast_shapes((5,), ()) == (5,)
    with pytest.raises(ValueError):
        lax.broadcast_shapes((2,), (3,))


def test_log_compiles(caplog):
    f = jax.jit(lambda x: x * 5 - 1)
    f(jnp.ones(5))
    with caplog.at_level("WARNING", logger="jax"):
        with jax.log_compiles():
            f(jnp.ones(5))  # traced before: switching logging on keeps the trace
    assert not caplog.records
    with caplog.at_level("WARNING", logger="jax"):
        with jax.log_compiles():
            assert jax.config.jax_log_compiles
            f(jnp.ones(2))
            f(jnp.ones(2))  # cached: no compilation
            f(jnp.ones(3))
        f(jnp.ones(4))  # logging off again
    assert not jax.config.jax_log_compiles
    finished = [r.getMessage() for r in caplog.records if "Finished" in r.getMessage()]
    assert len(finished) == 2 and all("compilation of jit(<lambda>)" in m for m in finished)
    assert all(r.name == "jax._src.dispatch" for r in caplog.records)


def test_make_mesh_and_effects_barrier():
    m = jax.make_mesh((1,), ("x",))
    assert repr(m) == "Mesh('x': 1, axis_types=(Explicit,))"  # as JAX 0.10.2
    assert m.are_all_axes_explicit and m.devices.shape == (1,) and m.devices[0] == jax.devices()[0]
    with pytest.raises(ValueError, match="must be >= the product of mesh_shape"):
        jax.make_mesh((len(jax.devices()) + 1,), ("x",))
    seen = []
    jax.jit(lambda x: jax.debug.callback(seen.append, x) or x)(jnp.ones(1))
    assert jax.effects_barrier() is None and len(seen) == 1


# ---------------------------------------------------------------- trace introspection (equinox's filter_jvp)

def test_find_top_trace_and_jvp_tracers_as_jax():
    from microjax_rs.extend.core import find_top_trace
    from microjax_rs.interpreters import ad

    # JAX 0.10.2: concrete values -> the eval trace; inside jvp the tangent trace,
    # whose `main` identifies it, and its tracers are `ad.JVPTracer`s.
    assert find_top_trace([1.0]) is find_top_trace([])
    found = []

    def f(x):
        t = find_top_trace([x, 1.0])
        found.append((t.main, isinstance(x, ad.JVPTracer), isinstance(1.0, ad.JVPTracer)))
        return x * 2

    jax.jvp(f, (1.0,), (1.0,))
    main, is_jvp, const_is_jvp = found[0]
    assert main is not find_top_trace([1.0]).main and is_jvp and not const_is_jvp
    jax.jit(f)(1.0)
    assert found[1][1] is False  # a staging tracer is no JVP tracer


def test_to_tangent_aval_and_named_call():
    # Recorded from JAX 0.10.2: int -> float0, float -> itself.
    t = jax.typeof(jnp.ones(2, jnp.int32)).to_tangent_aval()
    assert t.shape == (2,) and t.dtype == jax.dtypes.float0
    assert jax.typeof(jnp.ones(2)).to_tangent_aval() == jax.typeof(jnp.ones(2))
    f = jax.named_call(lambda x: x + 1, name="inc")
    assert float(f(1.0)) == 2.0 and float(jax.jit(f)(1.0)) == 2.0
    import microjax_rs.lib

    assert microjax_rs.lib.__version__ == "0.10.2"


def test_make_jaxpr_inside_a_trace_keeps_closed_over_tracers_as_consts():
    from microjax_rs import core

    shapes = []

    def outer(y):
        cj = jax.make_jaxpr(lambda x: x * y + 1.0)(2.0)
        shapes.append((len(cj.jaxpr.invars), len(cj.jaxpr.constvars), len(cj.consts)))
        return core.eval_jaxpr(cj.jaxpr, cj.consts, 2.0)[0]

    # Recorded from JAX 0.10.2: one input, the closed-over `y` a constant.
    assert float(jax.grad(outer)(3.0)) == 2.0
    assert float(jax.jit(outer)(3.0)) == 7.0
    assert shapes == [(1, 1, 1), (1, 1, 1)]


def test_a_float0_scalar_passes_back_into_jit():
    # An integer input's cotangent (float0) returned by one jit and passed to
    # another, as equinox's scan tests do; JAX 0.10.2 returns it unchanged.
    @jax.jit
    def f(i, x):
        out, vjp = jax.vjp(lambda i, x: x * 2.0, i, x)
        return vjp(out)

    g_int, g_x = jax.jit(lambda g: g)(f(0, 1.0))
    assert g_int.dtype == jax.dtypes.float0 and g_int.shape == ()
    assert float(g_x) == 4.0
