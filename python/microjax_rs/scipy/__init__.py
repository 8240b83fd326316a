"""`jax.scipy`: `special`, `linalg`, `stats.norm`, `signal` (direct
convolutions, `detrend`), `integrate`, `ndimage`, `interpolate`, `optimize`,
`cluster`, `sparse` and `spatial`."""
from . import cluster, integrate, interpolate, linalg, ndimage, optimize, signal, sparse, special, stats  # noqa: F401
