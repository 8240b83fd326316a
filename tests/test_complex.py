"""complex64 / complex128 as first-class dtypes: conversion, promotion,
printing, pickling, the complex-part functions, differentiation with JAX's
conventions (values recorded from JAX 0.10.2), jit and vmap, and JAX's
errors for what JAX rejects. The per-operator value checks are the
`complex_ops` records of the operator table; the finite-difference checks
of real-valued functions of complex inputs run over those records here."""
import pickle

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax

import op_table as ot
from op_table import complex_ops


def _z(values, dtype=np.complex64):
    return jnp.asarray(np.asarray(values, dtype))


# ----------------------------------------------------------------- dtypes


def test_dtype_objects_and_queries():
    assert jnp.complex64.dtype == np.complex64 and jnp.complex128.dtype == np.complex128
    assert jnp.csingle is jnp.complex64 and jnp.cdouble is jnp.complex128
    assert jnp.dtype(jnp.complex64) == np.complex64
    assert jnp.issubdtype(jnp.complex64, jnp.complexfloating)
    assert jnp.issubdtype(jnp.complex64, jnp.inexact) and not jnp.issubdtype(jnp.complex64, jnp.floating)
    assert jnp.isdtype(jnp.complex64, "complex floating")
    assert jnp.iscomplexobj(_z([1j])) and not jnp.iscomplexobj(jnp.ones(2))
    assert jnp.isrealobj(jnp.ones(2)) and not jnp.isrealobj(np.ones(2, np.complex128))
    assert jnp.finfo(jnp.complex64).dtype == np.float32
    x = jnp.complex64(1 + 2j)
    assert x.dtype == np.complex64 and complex(x) == 1 + 2j


def test_promotion_matches_jax():
    # Recorded from JAX 0.10.2 (x64 disabled).
    f32 = jnp.ones(2, jnp.float32)
    assert jnp.result_type(jnp.complex64, jnp.float32) == np.complex64
    assert jnp.result_type(jnp.float64, jnp.complex64) == np.complex64
    assert jnp.result_type(1j, jnp.int32) == np.complex64
    assert jnp.result_type(1.0, jnp.complex64) == np.complex64
    assert jnp.promote_types(jnp.bfloat16, jnp.complex64) == np.complex64
    assert (1j * f32).dtype == np.complex64 and not (1j * f32).weak_type
    w = jnp.array(1 + 2j)
    assert w.dtype == np.complex64 and w.weak_type
    assert (jnp.ones(2, jnp.float16) * 1j).dtype == np.complex64
    assert jnp.array([1 + 2j, 3]).dtype == np.complex64


def test_promotion_with_x64():
    jax.config.update("jax_enable_x64", True)
    try:
        assert jnp.result_type(jnp.float64, jnp.complex64) == np.complex128
        assert jnp.array(1j).dtype == np.complex128
        assert (jnp.ones(2, jnp.float32) * 1j).dtype == np.complex64
        assert (jnp.ones(2, jnp.float64) * 1j).dtype == np.complex128
    finally:
        jax.config.update("jax_enable_x64", False)


def test_numpy_round_trip_printing_and_pickling():
    z = _z([1 + 2j, -0.5 + 0.25j])
    np.testing.assert_array_equal(np.asarray(z), np.array([1 + 2j, -0.5 + 0.25j], np.complex64))
    # JAX 0.10.2's repr and str.
    assert repr(z) == "Array([ 1. +2.j  , -0.5+0.25j], dtype=complex64)"
    assert str(z) == "[ 1. +2.j   -0.5+0.25j]"
    assert repr(jnp.array(1 + 2j)) == "Array(1.+2.j, dtype=complex64, weak_type=True)"
    back = pickle.loads(pickle.dumps(z))
    assert back.dtype == np.complex64 and np.asarray(back).tolist() == np.asarray(z).tolist()
    assert z[1].item() == -0.5 + 0.25j
    assert z.tolist() == [1 + 2j, -0.5 + 0.25j]


def test_astype_and_convert_element_type():
    z = _z([1.5 + 2j, -3 - 1j])
    # complex -> real keeps the real part (JAX).
    np.testing.assert_array_equal(np.asarray(z.astype(jnp.float32)), [1.5, -3.0])
    np.testing.assert_array_equal(np.asarray(lax.convert_element_type(z, jnp.int32)), [1, -3])
    np.testing.assert_array_equal(np.asarray(z.astype(bool)), [True, True])
    np.testing.assert_array_equal(np.asarray(jnp.arange(3).astype(jnp.complex64)), [0, 1, 2])


def test_parts_and_methods():
    z = _z([1 + 2j, 3 - 4j])
    np.testing.assert_array_equal(np.asarray(z.real), [1, 3])
    np.testing.assert_array_equal(np.asarray(z.imag), [2, -4])
    np.testing.assert_array_equal(np.asarray(z.conj()), [1 - 2j, 3 + 4j])
    np.testing.assert_array_equal(np.asarray(jnp.conjugate(z)), [1 - 2j, 3 + 4j])
    np.testing.assert_array_equal(np.asarray(jnp.abs(z)), np.abs(np.asarray(z)))
    x = jnp.array([1.0, 2.0])
    assert jnp.real(x) is x and np.asarray(jnp.imag(x)).tolist() == [0.0, 0.0]
    c = lax.complex(x, 3.0)
    assert c.dtype == np.complex64 and np.asarray(c).tolist() == [1 + 3j, 2 + 3j]
    # jaxpr text as JAX prints it.
    text = str(jax.make_jaxpr(lambda v: (lax.real(v), lax.conj(v), v * (1 + 2j)))(z))
    for piece in ("f32[2] = real a", "c64[2] = conj[input_dtype=complex64] a", "mul a (1+2j):c64[]"):
        assert piece in text, text


# ----------------------------------------------------------------- errors


def test_ordering_and_real_only_ops_raise_type_error():
    z = _z([1 + 2j, 3 - 1j])
    with pytest.raises(TypeError, match="lt does not accept dtype complex64 at position 0"):
        lax.lt(z, z)
    for f in (lax.floor, lax.round, lax.is_finite, lax.erf, lax.cbrt):
        with pytest.raises(TypeError):
            f(z)
    with pytest.raises(TypeError):
        lax.rem(z, z)
    with pytest.raises(TypeError, match="real does not accept dtype float32"):
        lax.real(jnp.ones(2))
    with pytest.raises(TypeError):
        lax.complex(jnp.ones(2, jnp.int32), jnp.ones(2, jnp.int32))
    with pytest.raises(TypeError):
        jax.jit(lambda v: lax.lt(v, v))(z)


def test_grad_errors_match_jax():
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        jax.grad(lambda v: v * v)(jnp.complex64(1 + 2j))
    with pytest.raises(TypeError, match="grad with holomorphic=True requires inputs with complex dtype, but got "
                                        "float32"):
        jax.grad(lambda v: v * v, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        jax.jacfwd(lambda v: v * v)(_z([1j]))


# ----------------------------------------------------------------- differentiation


Z = np.array([1 + 2j, -0.5 + 0.25j], np.complex64)


def _close(got, want, tol=2e-5):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


def test_grad_of_real_valued_functions_is_jax_conjugated_cotangent():
    # Values recorded from JAX 0.10.2.
    z = jnp.asarray(Z)
    _close(jax.grad(lambda v: jnp.sum(jnp.abs(v) ** 2))(z), [2 - 4j, -1 - 0.5j])
    _close(jax.grad(lambda v: jnp.sum(jnp.real(v * jnp.conj(v) + jnp.sin(v))))(z),
           [4.032723 - 7.051898j, -0.09484988 - 0.37889123j])
    _close(jax.grad(lambda v: jnp.real(jnp.sum(v * v * (2 - 1j))))(z), [8 + 6j, -1.5 + 2j])
    _close(jax.grad(lambda x: jnp.abs(jnp.exp(1j * x) * (x + 1j)))(0.7), 0.5734623)


def test_holomorphic_grad_jacfwd_jacrev():
    # Values recorded from JAX 0.10.2.
    z = jnp.asarray(Z)
    _close(jax.grad(lambda v: jnp.sin(v) * v, holomorphic=True)(jnp.complex64(1 + 2j)), 11.302298 + 2.973149j)
    _close(jax.jacfwd(lambda v: v ** 2, holomorphic=True)(z), [[2 + 4j, 0], [0, -1 + 0.5j]])
    _close(jax.jacrev(lambda v: jnp.exp(v), holomorphic=True)(z),
           [[-1.1312044 + 2.4717267j, 0], [0, 0.5876751 + 0.15005809j]])


def test_jvp_and_vjp_with_complex_tangents():
    # Values recorded from JAX 0.10.2.
    z = jnp.asarray(Z)
    f = lambda v: v * jnp.exp(v)  # noqa: E731
    y, t = jax.jvp(f, (z,), (jnp.ones_like(z) * 1j,))
    _close(y, [-6.0746574 + 0.20931792j, -0.33135206 + 0.07188973j])
    _close(t, [-2.6810446 - 7.205862j, -0.22194782 + 0.25632304j])
    (g,) = jax.vjp(f, z)[1](jnp.array([1 + 0j, 1j], jnp.complex64))
    _close(g, [-7.205862 + 2.6810446j, -0.22194782 + 0.25632304j])


def test_transposes_of_the_part_primitives():
    # linear_transpose of real/imag/conj/complex as JAX defines them.
    z = jnp.asarray(Z)
    x = jnp.array([1.0, 2.0])
    (ct,) = jax.linear_transpose(lax.real, z)(x)
    _close(ct, [1 + 0j, 2 + 0j])
    (ct,) = jax.linear_transpose(lax.imag, z)(x)
    _close(ct, [-1j, -2j])
    (ct,) = jax.linear_transpose(lax.conj, z)(z)
    _close(ct, np.conj(Z))
    cx, cy = jax.linear_transpose(lax.complex, x, x)(z)
    _close(cx, Z.real)
    _close(cy, -Z.imag)


# The complex records whose function is differentiable and takes one array.
FD_RECORDS = [r for r in complex_ops.RECORDS if r.differentiable and r.cases and r.name.endswith("[complex]")
              and all(len(c.shapes) == 1 for c in r.cases) and r.name.split("[")[0].split(".")[-1]
              not in ("sign", "abs", "eq", "ne")]


@pytest.mark.parametrize("rec", FD_RECORDS, ids=[r.name for r in FD_RECORDS])
def test_finite_difference_grads_of_real_valued_losses(rec):
    """`L(z) = sum(real(conj(w) * f(z)))` in complex128. JAX's gradient of a
    real loss of `z = x + iy` is `dL/dx - i dL/dy`, so the derivative along a
    direction `t` is `Re(t * grad)`: checked against central differences."""
    jax.config.update("jax_enable_x64", True)
    try:
        case = rec.cases[-1]
        (x,), args, kwargs = ot.make_inputs(rec, "complex128", case)
        fn = rec.resolve()
        out = np.asarray(fn(x, *args, **kwargs))
        rng = np.random.default_rng(3)
        w = rng.standard_normal(out.shape)
        if out.dtype.kind == "c":
            w = w + 1j * rng.standard_normal(out.shape)

        def loss(v):
            return jnp.sum(jnp.real(jnp.conj(w) * fn(v, *args, **kwargs)))

        g = np.asarray(jax.grad(loss)(x))
        eps = 1e-6
        t = rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)
        fd = (float(loss(x + eps * t)) - float(loss(x - eps * t))) / (2 * eps)
        np.testing.assert_allclose(np.sum(np.real(t * g)), fd, rtol=1e-6, atol=1e-8)
    finally:
        jax.config.update("jax_enable_x64", False)


# ----------------------------------------------------------------- jit and vmap


def test_jit_equals_eager_bitwise():
    z = jnp.asarray(Z)

    def f(v):
        return jnp.sum(jnp.exp(v) * v + jnp.conj(v) * 2j) + lax.real(v).sum()

    assert np.asarray(jax.jit(f)(z)).tobytes() == np.asarray(f(z)).tobytes()
    g = lambda v: jnp.sin(v) * v + 1j  # noqa: E731  (an elementwise group the fuser sees)
    big = jnp.asarray((np.arange(300) * (0.01 + 0.02j)).astype(np.complex64))
    assert np.asarray(jax.jit(g)(big)).tobytes() == np.asarray(g(big)).tobytes()


def test_vmap_matches_loop():
    zs = np.stack([Z, Z * 2, Z - 1j])
    f = lambda v: v @ jnp.conj(v) + jnp.abs(v).sum()  # noqa: E731
    got = np.asarray(jax.vmap(f)(jnp.asarray(zs)))
    want = np.array([np.asarray(f(jnp.asarray(z))) for z in zs])
    np.testing.assert_allclose(got, want, rtol=1e-6)


# Recorded from JAX 0.10.2: gradients through pow, div, prod, cumprod,
# integer_pow, sign, conversions, select, dot, vmap, jit and the logistic.
_W = np.array([0.5 + 0.1j, 2 - 1j], np.complex64)
_Z2 = np.array([1 + 2j, 0.5 - 0.25j], np.complex64)
MORE_GRADS = {
    "pow_grad_x": ([(0.18740777671337128 - 0.24095287919044495j), (0.786231517791748 + 9.179153437344212e-09j)],
                   lambda z, w: jax.grad(lambda a: jnp.sum(jnp.abs(lax.pow(a, w))))(z)),
    "pow_grad_y": ([(-0.010138630867004395 + 1.8321565389633179j), (-0.1384323090314865 - 0.04700359329581261j)],
                   lambda z, w: jax.grad(lambda b: jnp.sum(jnp.real(lax.pow(z, b))))(w)),
    "div_grad": ([(-5.621301651000977 + 6.508875846862793j), (-0.04999999701976776 + 0.09999999403953552j)],
                 lambda z, w: jax.grad(lambda a: jnp.sum(jnp.imag(z / a)))(w)),
    "prod_grad": ([(0.5 - 0.25j), (1 + 2j)], lambda z, w: jax.grad(lambda a: jnp.real(jnp.prod(a)))(z)),
    "cumprod_grad": ([(-0.25 - 1.5j), (2 - 1j)],
                     lambda z, w: jax.grad(lambda a: jnp.sum(jnp.imag(jnp.cumprod(a))))(z)),
    "ipow_grad": ([(6.7082037925720215 - 13.416407585144043j), (0.8385254740715027 + 0.41926273703575134j)],
                  lambda z, w: jax.grad(lambda a: jnp.sum(jnp.abs(a ** 3)))(z)),
    "sign_grad": ([(0.4472135901451111 + 0.8944271802902222j), (0.8944271802902222 - 0.4472135901451111j)],
                  lambda z, w: jax.grad(lambda a: jnp.sum(jnp.real(jnp.sign(a) * a)))(z)),
    "convert_grad": ([1.4142135381698608, -1.4142135381698608],
                     lambda z, w: jax.grad(lambda x: jnp.sum(jnp.abs(x.astype(jnp.complex64) * (1 + 1j))))(
                         jnp.array([1.0, -2.0]))),
    "astype_real_grad": ([(2 - 1j), (2 - 1j)], lambda z, w: jax.grad(lambda a: jnp.sum(a.real * 2 + a.imag))(z)),
    "where_grad": ([(0.4472135901451111 - 0.8944271802902222j), (1.7888543605804443 + 0.8944271802902222j)],
                   lambda z, w: jax.grad(lambda a: jnp.sum(jnp.abs(jnp.where(jnp.array([True, False]), a, a * 2))))(z)),
    "dot_vjp": ([(2 - 4j), (1 + 0.5j)],
                lambda z, w: jax.vjp(lambda a: a @ jnp.conj(a), z)[1](jnp.complex64(1 + 1j))[0]),
    "vmap_grad": ([(2 - 4j), (1 + 0.5j)], lambda z, w: jax.vmap(jax.grad(lambda a: jnp.abs(a) ** 2))(z)),
    "jit_holo": ([6j], lambda z, w: jax.jit(jax.grad(lambda a: a ** 3, holomorphic=True))(jnp.complex64(1 + 1j))),
    "logistic": ([(0.14088872075080872 - 0.4207184314727783j), (0.23803703486919403 + 0.014665204100310802j)],
                 lambda z, w: jax.grad(lambda a: jnp.real(jnp.sum(jax.nn.sigmoid(a))))(z)),
}


@pytest.mark.parametrize("name", sorted(MORE_GRADS))
def test_more_gradients_match_jax(name):
    want, fn = MORE_GRADS[name]
    got = fn(jnp.asarray(_Z2), jnp.asarray(_W))
    np.testing.assert_allclose(np.asarray(got).ravel(), np.asarray(want), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------- products

# (einsum spec, lhs shape, rhs shape): products above the small-product
# loop, with the lhs read row-major, column-major (a transpose), with no
# unit stride (batch axis last), batched, and one above the row-block size
# of a stoppable run (several blocks with checkpoints between them).
_PRODUCTS = {
    "row_major": ("ij,jk->ik", (40, 70), (70, 30)),
    "transposed_lhs": ("ji,jk->ik", (70, 40), (70, 30)),
    "transposed_rhs": ("ij,kj->ik", (40, 70), (30, 70)),
    "batched": ("bij,bjk->bik", (3, 20, 50), (3, 50, 10)),
    "no_unit_stride": ("jib,bjk->bik", (50, 20, 3), (3, 50, 10)),
    "row_blocks": ("ij,jk->ik", (700, 800), (800, 600)),
}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("case", sorted(_PRODUCTS))
def test_large_complex_products_match_numpy(case, dtype, x64):
    spec, sa, sb = _PRODUCTS[case]
    rng = np.random.default_rng(len(case))
    a = (rng.standard_normal(sa) + 1j * rng.standard_normal(sa)).astype(dtype)
    b = (rng.standard_normal(sb) + 1j * rng.standard_normal(sb)).astype(dtype)
    want = np.einsum(spec, a.astype(np.complex128), b.astype(np.complex128))
    f = lambda x, y: jnp.einsum(spec, x, y)  # noqa: E731
    eager = np.asarray(f(a, b))
    jitted = np.asarray(jax.jit(f)(a, b))
    assert eager.dtype == dtype and eager.shape == want.shape
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    scale = np.abs(want).max()
    np.testing.assert_allclose(eager, want, rtol=0, atol=tol * scale)
    np.testing.assert_array_equal(jitted, eager)
