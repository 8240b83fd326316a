"""`jax._src.ad_checkpoint` at JAX's path."""
from ..ad_checkpoint import *  # noqa: F401,F403
from ..ad_checkpoint import checkpoint_name, print_saved_residuals, saved_residuals  # noqa: F401
