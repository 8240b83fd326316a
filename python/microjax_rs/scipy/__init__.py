"""`jax.scipy`: `special`, `linalg`, `stats.norm`, `signal` (direct
convolutions, `detrend`), `integrate`, `ndimage`, `interpolate`, `optimize`,
`cluster`, `spatial` and `sparse`."""
from . import cluster, integrate, interpolate, linalg, ndimage, signal, special, stats  # noqa: F401
