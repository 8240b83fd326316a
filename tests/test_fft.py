"""Fourier transforms beyond the operator table (tests/op_table/fft.py):
`jnp.fft` against `numpy.fft` over many sizes (primes, non-powers of two) in
complex64 and complex128, the transposes of `lax.fft` against values
recorded from JAX 0.10.2, gradients of FFT-based real losses against finite
differences (float64), vmap against a loop, jit against eager, the
`lax.FftType` surface and `jax.scipy.fft` round trips."""
import numpy as np
import pytest
import scipy.fft

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax
import microjax_rs.scipy.fft as jsp_fft

SIZES = (1, 2, 3, 5, 7, 8, 12, 16, 17, 31, 64, 97, 100, 127, 128, 243, 256, 257, 1000, 1009, 1024)


def _rel(got, want):
    """Largest error relative to the largest reference magnitude."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.max(np.abs(got - want), initial=0.0) / max(np.max(np.abs(want), initial=0.0), 1e-300))


def _complex(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("n", SIZES)
def test_complex64_matches_numpy(n):
    rng = np.random.default_rng(n)
    z = _complex(rng, (3, n), np.complex64)
    for fn in ("fft", "ifft"):
        got = getattr(jnp.fft, fn)(z)
        assert got.dtype == np.complex64
        assert _rel(got, getattr(np.fft, fn)(z.astype(np.complex128))) < 1e-5, fn
    x = rng.standard_normal((3, n)).astype(np.float32)
    spec = jnp.fft.rfft(x)
    assert spec.dtype == np.complex64
    assert _rel(spec, np.fft.rfft(x.astype(np.float64))) < 1e-5
    back = jnp.fft.irfft(spec, n=n)
    assert back.dtype == np.float32
    assert _rel(back, x) < 1e-5


@pytest.mark.parametrize("n", SIZES)
def test_complex128_matches_numpy(n, x64):
    rng = np.random.default_rng(1000 + n)
    z = _complex(rng, (2, n), np.complex128)
    for fn in ("fft", "ifft"):
        got = getattr(jnp.fft, fn)(z)
        assert got.dtype == np.complex128
        assert _rel(got, getattr(np.fft, fn)(z)) < 1e-12, fn
    x = rng.standard_normal((2, n))
    assert _rel(jnp.fft.rfft(x), np.fft.rfft(x)) < 1e-12
    assert _rel(jnp.fft.irfft(np.fft.rfft(x), n=n), x) < 1e-12
    assert _rel(jnp.fft.hfft(z, n=2 * n), np.fft.hfft(z, n=2 * n)) < 1e-12
    assert _rel(jnp.fft.ihfft(x), np.fft.ihfft(x)) < 1e-12


@pytest.mark.parametrize("shape", [(8, 8), (7, 12), (17, 5), (3, 4, 5), (2, 9, 6, 5)])
def test_multi_axis_matches_numpy(shape, x64):
    rng = np.random.default_rng(len(shape))
    z = _complex(rng, shape, np.complex128)
    x = rng.standard_normal(shape)
    for norm in (None, "ortho", "forward"):
        assert _rel(jnp.fft.fftn(z, norm=norm), np.fft.fftn(z, norm=norm)) < 1e-12
        assert _rel(jnp.fft.ifftn(z, norm=norm), np.fft.ifftn(z, norm=norm)) < 1e-12
        assert _rel(jnp.fft.rfftn(x, norm=norm), np.fft.rfftn(x, norm=norm)) < 1e-12
        half = np.fft.rfftn(x)
        every = tuple(range(len(shape)))
        assert _rel(jnp.fft.irfftn(half, s=shape, norm=norm),
                    np.fft.irfftn(half, s=shape, axes=every, norm=norm)) < 1e-12
    assert _rel(jnp.fft.fft2(z), np.fft.fft2(z)) < 1e-12
    assert _rel(jnp.fft.irfft2(np.fft.rfft2(x), s=shape[-2:]), x) < 1e-12


def test_lax_fft_types_and_lengths(x64):
    z = _complex(np.random.default_rng(0), (2, 3, 4), np.complex128)
    np.testing.assert_allclose(lax.fft(z, lax.FftType.FFT, (3, 4)), np.fft.fftn(z, axes=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(lax.fft(z, "IFFT", (4,)), np.fft.ifft(z), rtol=1e-12)
    np.testing.assert_allclose(lax.fft(z, "ifft", (2, 3, 4)), np.fft.ifftn(z), rtol=1e-12)
    x = z.real
    np.testing.assert_allclose(lax.fft(x, lax.FftType.RFFT, (3, 4)), np.fft.rfftn(x, axes=(1, 2)), rtol=1e-12)
    half = np.fft.rfft(x)
    out = lax.fft(half, lax.FftType.IRFFT, (4,))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, x, rtol=1e-12, atol=1e-15)
    # no lengths: the converted operand itself
    assert lax.fft(x, "FFT", ()).dtype == np.complex128
    assert [t.value for t in lax.FftType] == [0, 1, 2, 3]
    assert [t.name for t in lax.FftType] == ["FFT", "IFFT", "RFFT", "IRFFT"]
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        lax.fft(z, "RFFT", (4,))
    with pytest.raises(ValueError, match="IRFFT input shape"):
        lax.fft(z, "IRFFT", (5, 4))


def test_integer_input_becomes_default_float():
    out = jnp.fft.fft(np.arange(6, dtype=np.int32))
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, np.fft.fft(np.arange(6)), rtol=1e-6, atol=1e-5)
    assert jnp.fft.rfft(np.arange(6)).dtype == np.complex64


# ----------------------------------------------------------------- transposes, as JAX

X6 = np.array([0.5, -1.0, 2.0, 0.25, -0.75, 1.5])
Z4 = np.array([1 + 2j, -0.5 + 0.25j, 0.75 - 1j, 2 + 0.5j])


def _vjp(f, primal, ct):
    _, pullback = jax.vjp(f, primal)
    return np.asarray(pullback(ct)[0])


def test_transposes_match_jax(x64):
    # recorded from JAX 0.10.2 (jax.vjp of lax.fft, float64/complex128)
    np.testing.assert_allclose(
        _vjp(lambda x: lax.fft(x, "RFFT", (6,)), X6, Z4),
        [3.25, -2.274519052838329, 3.957531754730548, 0.24999999999999986, 1.7924682452694518,
         -0.9754809471616708], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        _vjp(lambda x: lax.fft(x, "RFFT", (5,)), X6[:5], Z4[:3]),
        [1.25, -0.11129236618736904, 2.734274072336956, 0.5382684136004126, 0.5887498802500004],
        rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        _vjp(lambda z: lax.fft(z, "IRFFT", (6,)), Z4, X6),
        [0.41666666666666663, -0.0416666666666667 + 0.07216878364870327j,
         -0.04166666666666663 - 1.5155444566227676j, 0.16666666666666666], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        _vjp(lambda z: lax.fft(z, "IRFFT", (5,)), Z4[:3], X6[:5]),
        [0.2, -0.7444271909999159 + 0.31634402497521585j, 1.0444271909999159 - 0.7245180866358548j],
        rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_vjp(lambda z: lax.fft(z, "FFT", (4,)), Z4, Z4[::-1]),
                               [3.25 + 1.75j, -0.5 + 0.5j, -0.25 - 0.25j, 5.5], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_vjp(lambda z: lax.fft(z, "IFFT", (4,)), Z4, Z4[::-1]),
                               [0.8125 + 0.4375j, 1.375, -0.0625 - 0.0625j, -0.125 + 0.125j],
                               rtol=1e-12, atol=1e-14)


def test_complex_input_gradients_match_jax(x64):
    w = np.array([1.0, -2.0, 0.5, 3.0, 0.25, -1.0])
    # recorded from JAX 0.10.2: grad of real losses of a complex input (JAX's conjugate convention)
    np.testing.assert_allclose(
        jax.grad(lambda z: jnp.sum(jnp.fft.irfft(z) * w))(Z4),
        [0.29166666666666663, -1.2916666666666665 - 0.21650635094610973j,
         1.7083333333333333 - 0.36084391824351614j, 0.29166666666666663], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        jax.grad(lambda z: jnp.sum(jnp.abs(jnp.fft.fft(z)) ** 2 * w[:4]))(Z4),
        [9.75 + 15.25j, 31.25 - 0.25j, 3.75 - 22.75j, -18.75 - 6.25j], rtol=1e-12)


# ----------------------------------------------------------------- gradients against finite differences


def _check_fd(loss, x, eps=1e-6):
    """grad of a real loss of a real input against central differences along
    a random direction, and the JVP against the VJP."""
    rng = np.random.default_rng(x.size)
    t = rng.standard_normal(x.shape)
    g = np.asarray(jax.grad(loss)(x))
    fd = (float(loss(x + eps * t)) - float(loss(x - eps * t))) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * t), fd, rtol=1e-6, atol=1e-8)
    _, jt = jax.jvp(loss, (x,), (t,))
    np.testing.assert_allclose(float(jt), np.sum(g * t), rtol=1e-10, atol=1e-12)


LOSSES = {
    "rfft_power": lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2 * jnp.arange(1.0, x.shape[-1] // 2 + 2)),
    "fft_real_imag": lambda x: jnp.sum(jnp.real(jnp.fft.fft(x)) * 0.3 - jnp.imag(jnp.fft.fft(x)) ** 2),
    "ifft_phase": lambda x: jnp.sum(jnp.imag(jnp.fft.ifft(x * (1 + 0.5j))) * jnp.cos(x)),
    "fft_convolution": lambda x: jnp.sum(jnp.fft.irfft(jnp.fft.rfft(x) * jnp.fft.rfft(jnp.sin(x)), n=x.shape[-1]) ** 2),
    "hfft": lambda x: jnp.sum(jnp.sin(jnp.fft.hfft(x + 0.1j * x ** 2))),
    "ihfft": lambda x: jnp.sum(jnp.abs(jnp.fft.ihfft(x)) ** 3),
    "fft2_norms": lambda x: jnp.sum(jnp.abs(jnp.fft.fft2(x.reshape(2, -1), norm="ortho")) ** 1.5),
    "rfftn_irfftn": lambda x: jnp.sum(jnp.tanh(jnp.fft.irfftn(jnp.fft.rfftn(x.reshape(2, -1)) * 1.5j,
                                                               s=(2, x.size // 2)))),
    "dct": lambda x: jnp.sum(jsp_fft.dct(x, norm="ortho") ** 3),
    "idctn": lambda x: jnp.sum(jnp.sin(jsp_fft.idctn(x.reshape(2, -1)))),
}


@pytest.mark.parametrize("n", [5, 6, 12])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_of_fft_losses_match_finite_differences(name, n, x64):
    x = np.random.default_rng(n).uniform(-1, 1, size=2 * n)
    _check_fd(LOSSES[name], x)


# ----------------------------------------------------------------- vmap and jit


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_matches_loop(axis, x64):
    rng = np.random.default_rng(axis)
    z = _complex(rng, (3, 4, 5), np.complex128)
    for f in (lambda v: jnp.fft.fft(v), lambda v: jnp.fft.ifft2(v, s=(3, 6)), lambda v: jnp.fft.rfft(v.real),
              lambda v: jnp.fft.irfft(v, n=7), lambda v: lax.fft(v, "FFT", (v.shape[-1],))):
        got = jax.vmap(f, in_axes=axis)(z)
        want = np.stack([np.asarray(f(np.take(z, i, axis=axis))) for i in range(z.shape[axis])])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    # a batched gradient: per-example grads of a spectral loss
    xs = rng.standard_normal((4, 8))
    loss = LOSSES["fft_convolution"]
    got = jax.vmap(jax.grad(loss))(xs)
    want = np.stack([np.asarray(jax.grad(loss)(x)) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_jit_matches_eager_bitwise():
    rng = np.random.default_rng(5)
    z = _complex(rng, (6, 10), np.complex64)
    x = rng.standard_normal((6, 10)).astype(np.float32)
    for f, a in ((jnp.fft.fft2, z), (jnp.fft.ifftn, z), (jnp.fft.rfft, x), (lambda v: jnp.fft.irfft(v, n=9), z),
                 (jsp_fft.dct, x)):
        eager = np.asarray(f(a))
        jitted = np.asarray(jax.jit(f)(a))
        assert eager.tobytes() == jitted.tobytes()
    loss = jax.jit(jax.grad(lambda v: jnp.sum(jnp.abs(jnp.fft.rfft(v)) ** 2)))
    assert np.asarray(loss(x)).tobytes() == np.asarray(loss(x)).tobytes()


def test_same_bits_on_one_or_many_threads():
    # A large batched 2-d transform runs its tasks in parallel; the result
    # does not depend on how many threads ran them.
    z = _complex(np.random.default_rng(9), (4, 96, 130), np.complex64)
    first = np.asarray(jnp.fft.fft2(z))
    for _ in range(3):
        assert np.asarray(jnp.fft.fft2(z)).tobytes() == first.tobytes()


# ----------------------------------------------------------------- frequencies, shifts, DCT


def test_frequencies_and_shifts():
    for n in (1, 6, 7):
        np.testing.assert_allclose(jnp.fft.fftfreq(n, 0.5), np.fft.fftfreq(n, 0.5), rtol=1e-6)
        np.testing.assert_allclose(jnp.fft.rfftfreq(n, 0.5), np.fft.rfftfreq(n, 0.5), rtol=1e-6)
    assert jnp.fft.fftfreq(4, dtype=jnp.float16).dtype == np.float16
    x = np.arange(24.0).reshape(4, 6)
    np.testing.assert_array_equal(jnp.fft.fftshift(x), np.fft.fftshift(x))
    np.testing.assert_array_equal(jnp.fft.ifftshift(x, axes=1), np.fft.ifftshift(x, axes=1))


@pytest.mark.parametrize("norm", [None, "ortho"])
def test_dct_round_trips_and_scipy(norm, x64):
    x = np.random.default_rng(3).standard_normal((3, 7, 8))
    np.testing.assert_allclose(jsp_fft.idct(jsp_fft.dct(x, norm=norm), norm=norm), x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jsp_fft.dctn(x, norm=norm), scipy.fft.dctn(x, norm=norm), rtol=1e-12, atol=1e-11)
    np.testing.assert_allclose(jsp_fft.idctn(x, norm=norm, axes=(0, 2)),
                               scipy.fft.idctn(x, norm=norm, axes=(0, 2)), rtol=1e-12, atol=1e-12)
    z = x + 1j * x[::-1]
    np.testing.assert_allclose(jsp_fft.dct(z, norm=norm), scipy.fft.dct(z, norm=norm), rtol=1e-12, atol=1e-11)


# ----------------------------------------------------------------- jax.scipy.signal


def test_stft_istft_round_trip_and_axes(x64):
    import scipy.signal as sp_signal

    x = np.random.default_rng(11).standard_normal((2, 100))
    f, t, z = jax.scipy.signal.stft(x, fs=8.0, nperseg=16)
    fr, tr, zr = sp_signal.stft(x, fs=8.0, nperseg=16)
    np.testing.assert_allclose(f, fr, rtol=1e-12)
    np.testing.assert_allclose(t, tr, rtol=1e-12)
    np.testing.assert_allclose(z, zr, rtol=1e-10, atol=1e-12)
    times, back = jax.scipy.signal.istft(z, fs=8.0, nperseg=16)
    tb, xb = sp_signal.istft(zr, fs=8.0, nperseg=16)
    np.testing.assert_allclose(back, xb, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(back[..., :100], x, rtol=1e-10, atol=1e-12)
    assert times.shape == (back.shape[-1],)


def test_welch_csd_frequencies_and_gradient(x64):
    import scipy.signal as sp_signal

    x = np.random.default_rng(12).standard_normal(80)
    y = np.random.default_rng(13).standard_normal(80)
    f, pxx = jax.scipy.signal.welch(x, fs=2.0, nperseg=20)
    fr, pr = sp_signal.welch(x, fs=2.0, nperseg=20)
    np.testing.assert_allclose(f, fr, rtol=1e-12)
    np.testing.assert_allclose(pxx, pr, rtol=1e-10)
    f, pxy = jax.scipy.signal.csd(x, y, nperseg=20, return_onesided=False)
    fr, pr = sp_signal.csd(x, y, nperseg=20, return_onesided=False)
    np.testing.assert_allclose(f, fr, rtol=1e-12)
    np.testing.assert_allclose(pxy, pr, rtol=1e-10, atol=1e-13)
    _check_fd(lambda v: jnp.sum(jax.scipy.signal.welch(v, nperseg=16)[1] * jnp.arange(9.0)), x)
    np.testing.assert_allclose(jax.scipy.signal.fftconvolve(x, y[:7]), np.convolve(x, y[:7]), rtol=1e-10, atol=1e-12)


def test_cuda_planner_runs_fft_through_cufft():
    # The CUDA planner makes `fft` a cuFFT step: nothing runs on the host,
    # and an inverse transform adds its 1/n scaling kernel to the sources.
    from microjax_rs import _core

    jaxpr = jax.make_jaxpr(lambda v: jnp.fft.rfft(v) * 2.0)(np.ones(8, np.float32))
    assert _core.cuda_host_steps(jaxpr._handle) == []
    inverse = jax.make_jaxpr(jnp.fft.irfft)(np.ones(5, np.complex64))
    assert _core.cuda_host_steps(inverse._handle) == []
    (scale,) = [s for s in _core.cuda_kernel_sources(inverse._handle) if "out0[i] = out0[i] *" in s]
    assert "((float)1.25e-1)" in scale
