"""The MicroJax blog's programs (shared/seeds/microjax-blog.txt) on microjax_rs."""
import microjax_rs as jax
import microjax_rs.numpy as jnp


def deriv(function):
    """Forward-mode derivative of a scalar function, as the blog builds it."""
    def jvp_forward(x):
        return jax.jvp(function, (x,), (jnp.ones_like(jnp.asarray(x)),))[1]

    return jvp_forward


def main():
    y, y_dot = jax.jvp(lambda x: jnp.sin(x) + jnp.exp(x), (3.14,), (1.0,))
    print("jvp(sin + exp)(3.14):", float(y), float(y_dot))
    print("d/dx sin at 3.14:", float(deriv(jnp.sin)(3.14)))
    print("d2/dx2 sin at 3.14:", float(deriv(deriv(jnp.sin))(3.14)))

    poly = lambda x: 3 * x * x * x + 2 * x * x + 2 * x  # noqa: E731
    print("grad(poly)(2), grad(grad(poly))(2):", float(jax.grad(poly)(2.0)), float(jax.grad(jax.grad(poly))(2.0)))

    f = lambda x: jnp.sin(x) + jnp.tanh(x) * jnp.exp(x)  # noqa: E731
    print("forward on backward:", float(deriv(jax.grad(f))(2.0)))
    print("backward on forward:", float(jax.grad(deriv(f))(2.0)))

    g = lambda x: x * jnp.sin(x)  # noqa: E731
    xs = [i / 10 for i in range(-50, 50, 10)]
    print("4th derivative of x*sin(x):", [round(float(deriv(deriv(deriv(deriv(g))))(x)), 4) for x in xs])

    def func(inputs):
        x, y = inputs
        return jnp.tanh(x) + y

    print("grad of a pytree input:", jax.grad(func)((6.0, 9.0)))


if __name__ == "__main__":
    main()
