"""`jax._src.api` at JAX's path: the public transformations."""
from ..api import *  # noqa: F401,F403
from .. import (  # noqa: F401
    block_until_ready, device_get, device_put, devices, eval_shape, grad, hessian, jacfwd, jacrev, jit, jvp,
    linearize, make_jaxpr, value_and_grad, vjp, vmap,
)
