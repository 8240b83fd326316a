"""`jax.scipy`: `special`, `linalg`, `fft` (DCT), `stats.norm`, `signal` (direct
convolutions, `detrend`), `integrate`, `ndimage`, `interpolate`, `optimize`,
`cluster`, `sparse` and `spatial`."""
from . import (  # noqa: F401
    cluster, fft, integrate, interpolate, linalg, ndimage, optimize, signal, sparse, spatial, special, stats)
