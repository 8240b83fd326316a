"""`custom_jvp`/`custom_vjp` rules defined with `symbolic_zeros=True` survive
`vmap`: differentiating a mapped call (`grad(vmap(f))`, `jacrev`, `jacfwd`,
`jvp`) runs the mapped custom rule, as JAX does. The rules below scale
their tangents by 10 and 100 so that a dropped rule (the plain derivative)
cannot pass. Expected values recorded from JAX 0.10.2 (float64)."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.custom_derivatives import SymbolicZero

# recorded from JAX 0.10.2 with jax_enable_x64
EXPECTED = {
    'jvp_grad_vmap_ax1' : [[10.0, 12.0, 14.0], [16.0, 18.0, 20.0]] ,
    'jvp_grad_vmap_unbatched' : [64.7857353439, 93.136846352, 119.1087362687] ,
    'jvp_jit_grad_vmap_both' : [[[10.0, 12.0, 14.0], [16.0, 18.0, 20.0]], [[9.9833416647, 25.7080551892, 40.776045306], [54.8023936792, 67.4287911628, 78.3326909627]]] ,
    'jvp_grad_vmap_vmap' : [[10.0, 12.0, 14.0], [16.0, 18.0, 20.0]] ,
    'jvp_jacrev_vmap' : [[[9.9833416647, 0.0, 0.0], [0.0, 25.7080551892, 0.0], [0.0, 0.0, 40.776045306]], [[54.8023936792, 0.0, 0.0], [0.0, 67.4287911628, 0.0], [0.0, 0.0, 78.3326909627]]] ,
    'vjp_grad_vmap_ax1' : [[10.0, 12.0, 14.0], [16.0, 18.0, 20.0]] ,
    'vjp_grad_vmap_unbatched' : [64.7857353439, 93.136846352, 119.1087362687] ,
    'vjp_jit_grad_vmap_both' : [[[10.0, 12.0, 14.0], [16.0, 18.0, 20.0]], [[9.9833416647, 25.7080551892, 40.776045306], [54.8023936792, 67.4287911628, 78.3326909627]]] ,
    'vjp_grad_vmap_vmap' : [[10.0, 12.0, 14.0], [16.0, 18.0, 20.0]] ,
    'vjp_jacrev_vmap' : [[[9.9833416647, 0.0, 0.0], [0.0, 25.7080551892, 0.0], [0.0, 0.0, 40.776045306]], [[54.8023936792, 0.0, 0.0], [0.0, 67.4287911628, 0.0], [0.0, 0.0, 78.3326909627]]] ,
    'jvp_jvp_vmap' : [[10.0, 12.0, 14.0], [16.0, 18.0, 20.0]] ,
    'jvp_jacfwd_vmap' : [[[9.9833416647, 0.0, 0.0], [0.0, 25.7080551892, 0.0], [0.0, 0.0, 40.776045306]], [[54.8023936792, 0.0, 0.0], [0.0, 67.4287911628, 0.0], [0.0, 0.0, 78.3326909627]]] ,
}


@pytest.fixture(autouse=True)
def _x64():
    with jax.enable_x64(True):
        yield


def _functions(seen):
    @jax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        seen.append((type(tx) is SymbolicZero, type(ty) is SymbolicZero))
        out = jnp.sin(x) * y
        t = jnp.zeros_like(out)
        if type(tx) is not SymbolicZero:
            t = t + 10. * tx * y
        if type(ty) is not SymbolicZero:
            t = t + 100. * jnp.sin(x) * ty
        return out, t

    f.defjvp(f_jvp, symbolic_zeros=True)

    @jax.custom_vjp
    def g(x, y):
        return jnp.sin(x) * y

    def g_fwd(x, y):
        seen.append((x.perturbed, y.perturbed))
        return jnp.sin(x.value) * y.value, (x.value, y.value)

    def g_bwd(res, ct):
        x, y = res
        return (10. * ct * y, 100. * ct * jnp.sin(x))

    g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)
    return {"jvp": f, "vjp": g}


def _cases(h):
    x = jnp.linspace(0.1, 0.9, 6).reshape(2, 3)
    y = jnp.linspace(1.0, 2.0, 6).reshape(2, 3)
    c = jnp.array([0.5, 1.5, 2.5])
    return {
        "grad_vmap_ax1": lambda: jax.grad(lambda x: jax.vmap(h, in_axes=(1, 1))(x, y).sum())(x),
        "grad_vmap_unbatched": lambda: jax.grad(
            lambda c: jax.vmap(h, in_axes=(0, None))(x, c).sum())(c),
        "jit_grad_vmap_both": lambda: jax.jit(jax.grad(
            lambda x, y: jax.vmap(h)(x, y).sum(), argnums=(0, 1)))(x, y),
        "grad_vmap_vmap": lambda: jax.grad(lambda x: jax.vmap(jax.vmap(h))(x, y).sum())(x),
        "jacrev_vmap": lambda: jax.jacrev(lambda c: jax.vmap(h, in_axes=(0, None))(x, c))(c),
        "jvp_vmap": lambda: jax.jvp(lambda x: jax.vmap(h)(x, y), (x,), (jnp.ones_like(x),))[1],
        "jacfwd_vmap": lambda: jax.jacfwd(lambda c: jax.vmap(h, in_axes=(0, None))(x, c))(c),
    }


@pytest.mark.parametrize("kind", ["jvp", "vjp"])
@pytest.mark.parametrize("case", ["grad_vmap_ax1", "grad_vmap_unbatched", "jit_grad_vmap_both",
                                  "grad_vmap_vmap", "jacrev_vmap", "jvp_vmap", "jacfwd_vmap"])
def test_mapped_call_runs_the_custom_rule(kind, case):
    key = f"{kind}_{case}"
    if kind == "vjp" and case in ("jvp_vmap", "jacfwd_vmap"):
        seen = []
        with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
            _cases(_functions(seen)[kind])[case]()
        return
    seen = []
    got = _cases(_functions(seen)[kind])[case]()
    want = EXPECTED[key]
    if isinstance(got, tuple):
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=1e-12)
    assert seen, "the custom rule never ran"


def test_the_mapped_rule_sees_which_tangents_are_zero():
    # Only `x` is differentiated: the rule sees `y`'s tangent as a symbolic
    # zero (custom_jvp) / `y` as unperturbed (custom_vjp), per mapped call.
    x = jnp.linspace(0.1, 0.9, 6).reshape(2, 3)
    y = jnp.linspace(1.0, 2.0, 6).reshape(2, 3)
    seen = []
    fs = _functions(seen)
    jax.grad(lambda x: jax.vmap(fs["jvp"])(x, y).sum())(x)
    assert seen == [(False, True)]
    seen.clear()
    jax.grad(lambda x: jax.vmap(fs["vjp"])(x, y).sum())(x)
    assert seen == [(True, False)]


def test_mapped_call_values_match_a_loop():
    x = jnp.linspace(0.1, 0.9, 6).reshape(2, 3)
    y = jnp.linspace(1.0, 2.0, 6).reshape(2, 3)
    for h in _functions([]).values():
        mapped = jax.grad(lambda x: jax.vmap(h)(x, y).sum())(x)
        looped = np.stack([np.asarray(jax.grad(lambda r: h(r, y[i]).sum())(x[i]))
                           for i in range(2)])
        np.testing.assert_allclose(np.asarray(mapped), looped, rtol=1e-12)
