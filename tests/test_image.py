"""jax.image: resize and scale_and_translate against values recorded from JAX
0.10.2 (every method, up- and downsampling, with and without antialiasing),
gradients against finite differences, jit, vmap, dtypes and errors."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import image

X = np.sin(np.arange(12, dtype=np.float32) * 0.37).reshape(3, 4)

# recorded from JAX 0.10.2: jax.image.resize(X, shape, method, antialias=...)
RESIZE = {
    ("nearest", (5, 6), True): [
        0, 0.36161545, 0.36161545, 0.67428792, 0.89569867, 0.89569867, 0, 0.36161545, 0.36161545, 0.67428792,
        0.89569867, 0.89569867, 0.99588084, 0.96127522, 0.96127522, 0.79656547, 0.52404422, 0.52404422, 0.18059623,
        -0.18729459, -0.18729459, -0.52983618, -0.80066687, -0.80066687, 0.18059623, -0.18729459, -0.18729459,
        -0.52983618, -0.80066687, -0.80066687
    ],
    ("nearest", (2, 3), True): [0, 0.67428792, 0.89569867, 0.18059623, -0.52983618, -0.80066687],
    ("nearest", (2, 3), False): [0, 0.67428792, 0.89569867, 0.18059623, -0.52983618, -0.80066687],
    ("nearest", (3, 7), True): [
        0, 0, 0.36161545, 0.67428792, 0.67428792, 0.89569867, 0.89569867, 0.99588084, 0.99588084, 0.96127522,
        0.79656547, 0.79656547, 0.52404422, 0.52404422, 0.18059623, 0.18059623, -0.18729459, -0.52983618,
        -0.52983618, -0.80066687, -0.80066687
    ],
    ("linear", (5, 6), True): [
        0, 0.18080772, 0.41372755, 0.62217587, 0.78499329, 0.89569867, 0.39835238, 0.49991587, 0.62176597,
        0.70291233, 0.73511791, 0.74703687, 0.99588084, 0.97857803, 0.93382359, 0.82401705, 0.66030484, 0.52404422,
        0.50670999, 0.38942155, 0.22689834, 0.04595907, -0.13502917, -0.27078262, 0.18059623, -0.0033491775,
        -0.24438488, -0.47274595, -0.66525149, -0.80066687
    ],
    ("linear", (2, 3), True): [0.43736511, 0.65331495, 0.74547243, 0.41345534, 0.10549176, -0.22246087],
    ("linear", (2, 3), False): [0.29273024, 0.60819387, 0.7864638, 0.33698913, -0.049193949, -0.42428026],
    ("linear", (3, 7), True): [
        0, 0.12914839, 0.33578578, 0.51795167, 0.69010305, 0.81662345, 0.89569867, 0.99588078, 0.98352164,
        0.96374702, 0.87892032, 0.77709961, 0.62137318, 0.52404422, 0.18059622, 0.049206626, -0.16101669,
        -0.35856539, -0.54918128, -0.70394164, -0.80066687
    ],
    ("cubic", (5, 6), True): [
        -0.10091852, 0.088571601, 0.37799475, 0.61264735, 0.82252425, 0.94076729, 0.37017754, 0.4885909, 0.65500391,
        0.75809383, 0.81103837, 0.82782143, 0.99815756, 0.98928469, 0.94260073, 0.83176202, 0.64260077, 0.5061152,
        0.52882564, 0.40242082, 0.19396126, -0.0089570703, -0.23227216, -0.37198269, 0.14492346, -0.044957753,
        -0.33643892, -0.5759781, -0.79419452, -0.91845465
    ],
    ("cubic", (2, 3), True): [0.43086514, 0.7005322, 0.81555945, 0.4569481, 0.089787841, -0.29719275],
    ("cubic", (2, 3), False): [0.23780078, 0.6239351, 0.84212327, 0.32497156, -0.11776893, -0.52880931],
    ("cubic", (3, 7), True): [
        -0.028685911, 0.097289108, 0.33564132, 0.5267145, 0.6939159, 0.84075892, 0.91326255, 0.99862599, 0.99171686,
        0.96790177, 0.89379007, 0.77916974, 0.60007137, 0.50242585, 0.20977995, 0.08255206, -0.16011879,
        -0.36463165, -0.5526188, -0.73194009, -0.82215106
    ],
    ("lanczos3", (5, 6), True): [
        -0.16033074, 0.012849179, 0.33597189, 0.55893612, 0.79612732, 0.90759575, 0.39140892, 0.5142507, 0.72510815,
        0.83337051, 0.89457852, 0.9099502, 0.99437261, 0.99082685, 0.94822121, 0.84576499, 0.63089573, 0.50363982,
        0.56873429, 0.44246891, 0.19047238, -0.016719317, -0.28540018, -0.42364728, 0.086035088, -0.086879812,
        -0.40681913, -0.62212825, -0.8432653, -0.94522578
    ],
    ("lanczos3", (2, 3), True): [0.4487876, 0.74465048, 0.8623988, 0.49289665, 0.097489178, -0.32123706],
    ("lanczos3", (2, 3), False): [0.26372716, 0.68720263, 0.90119803, 0.36546177, -0.11103377, -0.55368316],
    ("lanczos3", (3, 7), True): [
        -0.030716876, 0.085091129, 0.32903907, 0.53798091, 0.69611722, 0.85006618, 0.91033703, 0.99418509,
        0.99492854, 0.96648663, 0.91290826, 0.77311701, 0.59195447, 0.49845615, 0.21100558, 0.095332466,
        -0.15377319, -0.37243107, -0.55591768, -0.74271935, -0.81994545
    ],
    ("lanczos5", (5, 6), True): [
        -0.18943596, 0.0072539682, 0.29469761, 0.51887399, 0.71851349, 0.86492687, 0.39960763, 0.54624063,
        0.77123636, 0.89555013, 0.94065922, 0.98428923, 1.0013306, 0.9753744, 0.9567681, 0.84990162, 0.63631189,
        0.49870825, 0.61069137, 0.43786976, 0.19410101, -0.038036421, -0.29864839, -0.48111445, 0.068422355,
        -0.12513059, -0.41032562, -0.62158692, -0.79541367, -0.92519724
    ],
    ("lanczos5", (2, 3), True): [0.45776978, 0.76321566, 0.87893707, 0.50385308, 0.10101728, -0.32693017],
    ("lanczos5", (2, 3), False): [0.28696892, 0.73772109, 0.94124234, 0.37345484, -0.11844697, -0.57065415],
    ("lanczos5", (3, 7), True): [
        -0.043720029, 0.10204251, 0.33079726, 0.5467093, 0.69182146, 0.82887042, 0.92478716, 1.0026437, 0.98127961,
        0.96273899, 0.92771971, 0.77255857, 0.59840089, 0.49245286, 0.22554262, 0.075905912, -0.15621096,
        -0.37847355, -0.55172324, -0.72035456, -0.83548421
    ],
    ("cubic-pytorch", (5, 6), True): [
        -0.10091852, 0.088571601, 0.37799475, 0.61264735, 0.82252425, 0.94076729, 0.37017754, 0.4885909, 0.65500391,
        0.75809383, 0.81103837, 0.82782143, 0.99815756, 0.98928469, 0.94260073, 0.83176202, 0.64260077, 0.5061152,
        0.52882564, 0.40242082, 0.19396126, -0.0089570703, -0.23227216, -0.37198269, 0.14492346, -0.044957753,
        -0.33643892, -0.5759781, -0.79419452, -0.91845465
    ],
    ("cubic-pytorch", (2, 3), True): [0.43086514, 0.7005322, 0.81555945, 0.4569481, 0.089787841, -0.29719275],
    ("cubic-pytorch", (2, 3), False): [0.29132903, 0.65956259, 0.84601933, 0.36189815, -0.067169592, -0.47772521],
    ("cubic-pytorch", (3, 7), True): [
        -0.028685911, 0.097289108, 0.33564132, 0.5267145, 0.6939159, 0.84075892, 0.91326255, 0.99862599, 0.99171686,
        0.96790177, 0.89379007, 0.77916974, 0.60007137, 0.50242585, 0.20977995, 0.08255206, -0.16011879,
        -0.36463165, -0.5526188, -0.73194009, -0.82215106
    ],
    ("area", (5, 6), True): [
        0, 0.18080774, 0.36161545, 0.67428792, 0.78499335, 0.89569867, 0.33196035, 0.44673124, 0.5615021,
        0.71504712, 0.7434305, 0.77181381, 0.99588084, 0.97857803, 0.96127522, 0.79656547, 0.66030484, 0.52404422,
        0.45235765, 0.32395974, 0.19556186, -0.08770249, -0.22339961, -0.35909668, 0.18059623, -0.0033491962,
        -0.18729459, -0.52983618, -0.66525155, -0.80066687
    ],
    ("area", (2, 3), True): [0.38934574, 0.63827461, 0.75762218, 0.38815883, 0.053929854, -0.29124799],
    ("area", (2, 3), False): [0.38934574, 0.63827461, 0.75762218, 0.38815883, 0.053929854, -0.29124799],
    ("area", (3, 7), True): [
        0, 0.090403885, 0.36161545, 0.51795179, 0.67428792, 0.84034604, 0.89569867, 0.99588084, 0.98722935,
        0.96127522, 0.87892032, 0.79656547, 0.59217453, 0.52404422, 0.18059623, 0.088623501, -0.18729459,
        -0.35856548, -0.52983618, -0.73295921, -0.80066687
    ],
}
# recorded from JAX 0.10.2: scale_and_translate(X, (4, 3), (0, 1), [1.3, 0.6], [0.4, -0.7], method, antialias)
SCALE_AND_TRANSLATE = {
    ("linear", True): [
        0.50918889, 0.84034592, 0, 0.63202566, 0.75444043, 0, 0.72367936, 0.43927437, 0, -0.21212807, -0.58005917, 0
    ],
    ("linear", False): [
        0.51795167, 0.89569867, 0, 0.64290231, 0.76704907, 0, 0.7361334, 0.37119284, 0, -0.21577862, -0.64781564, 0
    ],
    ("cubic", True): [
        0.4703024, 0.91559583, 0, 0.6607241, 0.83521372, 0, 0.78589338, 0.43831769, 0, -0.26360172, -0.68066472, 0
    ],
    ("cubic", False): [
        0.48332813, 0.95803356, 0, 0.67902392, 0.8414225, 0, 0.8076598, 0.37997448, 0, -0.27090254, -0.72428083, 0
    ],
    ("lanczos3", True): [
        0.38145477, 0.92428583, 0, 0.71663523, 0.932661, 0, 0.76164693, 0.36141255, 0, -0.24948333, -0.72221714, 0
    ],
    ("lanczos3", False): [
        0.40164161, 0.92313588, 0, 0.75456011, 0.91326171, 0, 0.80195385, 0.32728669, 0, -0.26268613, -0.72398955, 0
    ],
    ("lanczos5", True): [
        0.28378192, 0.82708019, 0, 0.76014531, 1.0136578, 0, 0.75208211, 0.32086027, 0, -0.25134254, -0.76832682, 0
    ],
    ("lanczos5", False): [
        0.30399087, 0.81091595, 0, 0.81427753, 0.98438913, 0, 0.80564028, 0.29986414, 0, -0.26924133, -0.75359249, 0
    ],
    ("cubic-pytorch", True): [
        0.4703024, 0.91559583, 0, 0.6607241, 0.83521372, 0, 0.78589338, 0.43831769, 0, -0.26360172, -0.68066472, 0
    ],
    ("cubic-pytorch", False): [
        0.49200547, 0.95869821, 0.93495017, 0.72733194, 0.85647362, 0.85135782, 0.8047871, 0.34548131, 0.37202722,
        -0.2428925, -0.70100433, -0.67710191
    ],
    ("area", True): [
        0.51795167, 0.86406857, 0, 0.62624228, 0.77374065, 0, 0.87892038, 0.56297582, 0, -0.35856533, -0.76197672, 0
    ],
    ("area", False): [
        0.51795167, 0.86406857, 0, 0.62624228, 0.77374065, 0, 0.87892038, 0.56297582, 0, -0.35856533, -0.76197672, 0
    ],
}


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
