"""`jnp.fft` on a CUDA device (cuFFT, inverse transforms scaled by a
generated kernel) against `numpy.fft`.

Needs a real GPU: skipped, with that reason, when
`_core.gpu_device_count() == 0` (the stand-in GPU of the fake-GPU stage
has no cuFFT). The planning itself (cuFFT type, batch, lengths, the
scaling kernel) is tested without a GPU in rust/core/tests/cuda_emulation.
"""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import _core

pytestmark = pytest.mark.skipif(
    _core.gpu_device_count() == 0, reason="no CUDA device: cuFFT runs only on a GPU"
)

# Relative to the largest magnitude of the reference.
TOL = {np.dtype("complex64"): 2e-5, np.dtype("float32"): 2e-5,
       np.dtype("complex128"): 1e-12, np.dtype("float64"): 1e-12}


def rng(seed):
    return np.random.default_rng(seed)


def cplx(shape, dtype, seed):
    r = rng(seed)
    return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)


def on_gpu_vs_numpy(f, ref, x):
    """`jit(f)` of `x` put on the GPU, against `ref(x)` in NumPy (at the
    result's precision); the program has no host step."""
    assert _core.cuda_host_steps(jax.make_jaxpr(f)(jnp.asarray(x))._handle) == []
    gpu = jax.devices("gpu")[0]
    got = np.asarray(jax.jit(f)(jax.device_put(jnp.asarray(x), gpu)))
    want = np.asarray(ref(x))
    assert got.shape == want.shape and got.dtype.kind == want.dtype.kind
    scale = max(float(np.max(np.abs(want))), 1.0)
    np.testing.assert_allclose(got, want.astype(got.dtype), rtol=0, atol=TOL[got.dtype] * scale * 10)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_transforms_over_one_to_three_axes(dtype):
    x = cplx((6, 32), dtype, 1)
    on_gpu_vs_numpy(jnp.fft.fft, np.fft.fft, x)
    on_gpu_vs_numpy(jnp.fft.ifft, np.fft.ifft, x)
    y = cplx((3, 16, 12), dtype, 2)
    on_gpu_vs_numpy(jnp.fft.fft2, np.fft.fft2, y)
    on_gpu_vs_numpy(jnp.fft.ifft2, np.fft.ifft2, y)
    z = cplx((2, 8, 6, 10), dtype, 3)
    on_gpu_vs_numpy(lambda v: jnp.fft.fftn(v, axes=(1, 2, 3)),
                    lambda v: np.fft.fftn(v, axes=(1, 2, 3)), z)
    on_gpu_vs_numpy(lambda v: jnp.fft.ifftn(v, axes=(1, 2, 3)),
                    lambda v: np.fft.ifftn(v, axes=(1, 2, 3)), z)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [64, 45])
def test_real_transforms_even_and_odd_lengths(dtype, n):
    x = rng(4).standard_normal((5, n)).astype(dtype)
    on_gpu_vs_numpy(jnp.fft.rfft, np.fft.rfft, x)
    spectrum = np.fft.rfft(x).astype(np.complex64 if dtype == np.float32 else np.complex128)
    on_gpu_vs_numpy(lambda s: jnp.fft.irfft(s, n=n), lambda s: np.fft.irfft(s, n=n), spectrum)
    y = rng(5).standard_normal((3, 12, n)).astype(dtype)
    on_gpu_vs_numpy(jnp.fft.rfft2, np.fft.rfft2, y)
    s2 = np.fft.rfft2(y).astype(spectrum.dtype)
    on_gpu_vs_numpy(lambda s: jnp.fft.irfft2(s, s=(12, n)), lambda s: np.fft.irfft2(s, s=(12, n)), s2)


def test_fft_feeds_device_kernels():
    # A power spectrum: rfft, abs, square and a sum, all on the device.
    x = rng(6).standard_normal((4, 256)).astype(np.float32)
    on_gpu_vs_numpy(lambda v: jnp.sum(jnp.abs(jnp.fft.rfft(v)) ** 2, axis=-1),
                    lambda v: np.sum(np.abs(np.fft.rfft(v)) ** 2, axis=-1).astype(np.float32), x)
