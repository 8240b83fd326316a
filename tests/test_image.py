"""jax.image: resize and scale_and_translate against values recorded from JAX
0.10.2 (every method, up- and downsampling, with and without antialiasing),
gradients against finite differences, jit, vmap, dtypes and errors."""
import json
import os

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import image

X = np.sin(np.arange(12, dtype=np.float32) * 0.37).reshape(3, 4)

# Recorded from JAX 0.10.2: "resize": [method, shape, antialias, values] of
# jax.image.resize(X, shape, method, antialias=...); "scale_and_translate":
# [method, antialias, values] of scale_and_translate(X, (4, 3), (0, 1), [1.3, 0.6],
# [0.4, -0.7], method, antialias). Values are flattened.
with open(os.path.join(os.path.dirname(__file__), "image_jax_values.json")) as _f:
    _JAX = json.load(_f)
RESIZE = {(method, tuple(shape), aa): values for method, shape, aa, values in _JAX["resize"]}
SCALE_AND_TRANSLATE = {(method, aa): values for method, aa, values in _JAX["scale_and_translate"]}


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("key", sorted(RESIZE, key=str), ids=[f"{m}-{s}-{a}" for m, s, a in sorted(RESIZE, key=str)])
def test_resize_recorded(key, mode):
    method, shape, aa = key
    fn = lambda x: image.resize(x, shape, method, antialias=aa)
    out = (jax.jit(fn) if mode == "jit" else fn)(X)
    assert out.shape == shape and out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out).ravel(), RESIZE[key], rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("key", sorted(SCALE_AND_TRANSLATE, key=str), ids=[f"{m}-{a}" for m, a in
                                                                           sorted(SCALE_AND_TRANSLATE, key=str)])
def test_scale_and_translate_recorded(key):
    method, aa = key
    args = (X, (4, 3), (0, 1), jnp.array([1.3, 0.6]), jnp.array([0.4, -0.7]), method)
    out = image.scale_and_translate(*args, antialias=aa)
    np.testing.assert_allclose(np.asarray(out).ravel(), SCALE_AND_TRANSLATE[key], rtol=2e-6, atol=2e-6)
    # scale and translation traced under jit
    jitted = jax.jit(lambda s, t: image.scale_and_translate(X, (4, 3), (0, 1), s, t, method, antialias=aa))
    np.testing.assert_allclose(np.asarray(jitted(jnp.array([1.3, 0.6]), jnp.array([0.4, -0.7]))).ravel(),
                               SCALE_AND_TRANSLATE[key], rtol=2e-6, atol=2e-6)


def test_method_names_and_enum():
    assert image.ResizeMethod.from_string("bilinear") is image.ResizeMethod.LINEAR
    assert image.ResizeMethod.from_string("tricubic") is image.ResizeMethod.CUBIC
    assert image.ResizeMethod.from_string("bicubic-pytorch") is image.ResizeMethod.CUBIC_PYTORCH
    np.testing.assert_array_equal(np.asarray(image.resize(X, (5, 6), image.ResizeMethod.LANCZOS3)),
                                  np.asarray(image.resize(X, (5, 6), "lanczos3")))
    np.testing.assert_array_equal(np.asarray(image.resize(X, (5, 6), "triangle")),
                                  np.asarray(image.resize(X, (5, 6), "linear")))


def test_dtypes():
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert image.resize(xi, (5, 2), "nearest").dtype == np.int32  # nearest keeps the dtype
    np.testing.assert_array_equal(np.asarray(image.resize(xi, (5, 2), "nearest")), xi[[0, 0, 1, 2, 2]][:, [1, 3]])
    assert image.resize(xi, (5, 6), "linear").dtype == np.float32
    assert image.resize(X.astype(np.float16), (5, 6), "cubic").dtype == np.float16
    # unchanged shape: identity
    np.testing.assert_array_equal(np.asarray(image.resize(X, (3, 4), "lanczos5")), X)


def test_errors():
    with pytest.raises(ValueError, match="shape must have length equal"):
        image.resize(X, (3,), "linear")
    with pytest.raises(ValueError, match='Unknown resize method "spline"'):
        image.resize(X, (5, 6), "spline")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently supported"):
        image.scale_and_translate(X, (4, 3), (0, 1), jnp.ones(2), jnp.zeros(2), "nearest")


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "area", "cubic-pytorch"])
def test_gradients_finite_differences(x64, method):
    x = X.astype(np.float64)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 2))
    t = rng.standard_normal(x.shape)
    f = lambda im: jnp.sum(image.resize(im, (5, 2), method) * w)
    g = np.asarray(jax.grad(f)(x))
    eps = 1e-6
    fd = (float(f(x + eps * t)) - float(f(x - eps * t))) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * t), fd, rtol=1e-6)
    if method == "area":
        return
    # in the scale and the translation
    st = lambda s, tr: jnp.sum(image.scale_and_translate(x, (4, 3), (0, 1), s, tr, method) * w[:4, :1])
    s0, t0 = np.array([1.3, 0.6]), np.array([0.4, -0.7])
    gs, gt = jax.grad(st, argnums=(0, 1))(s0, t0)
    ds, dt = rng.standard_normal(2), rng.standard_normal(2)
    fd = (float(st(s0 + eps * ds, t0 + eps * dt)) - float(st(s0 - eps * ds, t0 - eps * dt))) / (2 * eps)
    np.testing.assert_allclose(np.sum(np.asarray(gs) * ds) + np.sum(np.asarray(gt) * dt), fd, rtol=1e-5, atol=1e-8)


def test_vmap():
    xs = np.stack([X, 2 * X, X[::-1]])
    got = jax.vmap(lambda im: image.resize(im, (5, 2), "lanczos3"))(xs)
    want = np.stack([np.asarray(image.resize(im, (5, 2), "lanczos3")) for im in xs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-7)
    got = jax.vmap(lambda s: image.scale_and_translate(X, (4, 3), (0, 1), s, jnp.zeros(2), "linear"))(
        jnp.array([[1.3, 0.6], [0.9, 1.1]]))
    for i, s in enumerate([[1.3, 0.6], [0.9, 1.1]]):
        np.testing.assert_allclose(np.asarray(got[i]), np.asarray(
            image.scale_and_translate(X, (4, 3), (0, 1), jnp.array(s), jnp.zeros(2), "linear")), rtol=1e-6,
            atol=1e-7)
