"""`jax.numpy.fft`: discrete Fourier transforms (NumPy's `numpy.fft` API) on
the `fft` primitive.

This module only re-exports; the implementation is `microjax_rs._src.numpy.fft`."""
from .._src.numpy.fft import (  # noqa: F401
    fft, fft2, fftfreq, fftn, fftshift, hfft, ifft, ifft2, ifftn, ifftshift, ihfft, irfft, irfft2,
    irfftn, rfft, rfft2, rfftfreq, rfftn,
)
