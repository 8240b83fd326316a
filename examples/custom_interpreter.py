"""A custom jaxpr interpreter, after JAX's notebook "Writing custom Jaxpr
interpreters in JAX": evaluate a jaxpr with `bind`, then run it backwards to
invert a function built from invertible unary primitives.

    .venv/bin/python examples/custom_interpreter.py
"""
from functools import wraps

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import core, lax
from microjax_rs._src.util import safe_map


def f(x):
    return jnp.exp(jnp.tanh(x))


def environment():
    """`read(var)` and `write(var, val)` over a fresh variable -> value map
    (a literal reads as its value)."""
    env = {}

    def read(var):
        if type(var) is core.Literal:
            return var.val
        return env[var]

    def write(var, val):
        env[var] = val

    return read, write


def eval_jaxpr(jaxpr, consts, *args):
    """The default interpreter: computes what the traced function computed."""
    read, write = environment()
    safe_map(write, jaxpr.invars, args)
    safe_map(write, jaxpr.constvars, consts)
    for eqn in jaxpr.eqns:
        invals = safe_map(read, eqn.invars)
        outvals = eqn.primitive.bind(*invals, **eqn.params)
        if not eqn.primitive.multiple_results:
            outvals = [outvals]
        safe_map(write, eqn.outvars, outvals)
    return safe_map(read, jaxpr.outvars)


# Inverses of some primitives, keyed by the primitive object.
inverse_registry = {
    lax.exp_p: jnp.log,
    lax.tanh_p: jnp.arctanh,
}


def inverse_jaxpr(jaxpr, consts, *args):
    """Walks the jaxpr backwards, applying each primitive's inverse."""
    read, write = environment()
    safe_map(write, jaxpr.outvars, args)
    safe_map(write, jaxpr.constvars, consts)
    for eqn in jaxpr.eqns[::-1]:
        invals = safe_map(read, eqn.outvars)
        if eqn.primitive not in inverse_registry:
            raise NotImplementedError(f"{eqn.primitive} does not have registered inverse.")
        outval = inverse_registry[eqn.primitive](*invals)
        safe_map(write, eqn.invars, [outval])
    return safe_map(read, jaxpr.invars)


def inverse(fun):
    @wraps(fun)
    def wrapped(*args, **kwargs):
        closed_jaxpr = jax.make_jaxpr(fun)(*args, **kwargs)
        out = inverse_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.literals, *args)
        return out[0]

    return wrapped


def main():
    closed_jaxpr = jax.make_jaxpr(f)(jnp.ones(5))
    print(closed_jaxpr.jaxpr)
    print(closed_jaxpr.literals)

    out = eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.literals, jnp.ones(5))
    print("eval_jaxpr:", out)
    assert jnp.allclose(out[0], f(jnp.ones(5)))

    f_inv = inverse(f)
    assert jnp.allclose(f_inv(f(1.0)), 1.0)
    print("inverse(f)(f(1.0)) =", f_inv(f(1.0)))

    # The interpreter itself can be traced.
    print(jax.make_jaxpr(inverse(f))(f(1.0)))


if __name__ == "__main__":
    main()
