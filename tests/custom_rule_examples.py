"""Custom-rule examples from JAX's documentation, shared by the tests of
custom_vjp and custom_vmap."""
import microjax_rs.numpy as jnp


def sin_times_vjp_rules(f):
    """`(fwd, bwd)` of the custom_vjp function `f(x, y) = sin(x) * y`
    (JAX's custom_vjp example): residuals cos(x), sin(x), y."""

    def f_fwd(x, y):
        return f(x, y), (jnp.cos(x), jnp.sin(x), y)

    def f_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)

    return f_fwd, f_bwd
