"""`jax.debug`: printing and callbacks that run inside transformed code."""
from ._callback import debug_callback as callback


def print(fmt, *args, ordered=False, **kwargs):  # noqa: A001 - JAX's name
    """`jax.debug.print("x = {x}", x=x)`: formats with `str.format` on the
    runtime values (NumPy arrays), eagerly, under `jit`, `vmap` (once per
    member), `grad` (primal values) and in loop bodies (each iteration)."""
    import builtins

    def show(*a, **k):
        builtins.print(fmt.format(*a, **k))

    callback(show, *args, ordered=ordered, **kwargs)


__all__ = ["callback", "print"]
