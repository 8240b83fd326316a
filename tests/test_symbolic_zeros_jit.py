"""`custom_jvp` / `custom_vjp` rules with `symbolic_zeros=True` under `jit`:
the rule is traced per pattern of symbolic-zero tangents / cotangents when
the call is differentiated, the compiled program runs natively (no host
callback into the primal function) and exports. Values and the patterns
the rules see are recorded from JAX 0.10.2 (the same functions run there)."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import _core, core, export
from microjax_rs.api import _runnable
from microjax_rs.custom_derivatives import SymbolicZero

seen = []


@jax.custom_jvp
def f(x, y):
    return jnp.sin(x) * y


def f_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    seen.append(("jvp", isinstance(tx, SymbolicZero), isinstance(ty, SymbolicZero)))
    out = f(x, y)
    t = jnp.zeros_like(out)
    if not isinstance(tx, SymbolicZero):
        t = t + 3.0 * jnp.cos(x) * y * tx
    if not isinstance(ty, SymbolicZero):
        t = t + 5.0 * jnp.sin(x) * ty
    return out, t


f.defjvp(f_jvp, symbolic_zeros=True)


@jax.custom_vjp
def g(x, y):
    return x * y, jnp.sin(x)


def g_fwd(x, y):
    seen.append(("fwd", x.perturbed, y.perturbed))
    return g(x.value, y.value), (x.value, y.value)


def g_bwd(res, cts):
    x, y = res
    c1, c2 = cts
    seen.append(("bwd", isinstance(c1, SymbolicZero), isinstance(c2, SymbolicZero)))
    dx, dy = jnp.zeros_like(x), jnp.zeros_like(y)
    if not isinstance(c1, SymbolicZero):
        dx, dy = dx + 7.0 * c1 * y, dy + 11.0 * c1 * x
    if not isinstance(c2, SymbolicZero):
        dx = dx + 13.0 * c2 * jnp.cos(x)
    return dx, dy


g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)


def run(fn, *args):
    seen.clear()
    out = fn(*args)
    return [float(v) for v in jax.tree_util.tree_leaves(out)], list(seen)


# (name, function, values, patterns the rules saw), recorded from JAX 0.10.2
CASES = [
    ("jit_grad_x", lambda: jax.jit(jax.grad(f)), [3.241814], [("jvp", False, True)]),
    ("jit_grad_y", lambda: jax.jit(jax.grad(f, argnums=1)), [4.207355], [("jvp", True, False)]),
    ("jit_grad_xy", lambda: jax.jit(jax.grad(f, argnums=(0, 1))), [3.241814, 4.207355],
     [("jvp", False, False)]),
    ("grad_jit", lambda: jax.grad(jax.jit(f)), [3.241814], [("jvp", False, True)]),
    ("jit_value_and_grad", lambda: jax.jit(jax.value_and_grad(f)), [1.682942, 3.241814],
     [("jvp", False, True)]),
    ("jit_jvp_concrete_zero", lambda: jax.jit(lambda x, y: jax.jvp(f, (x, y), (1.0, 0.0))),
     [1.682942, 3.241814], [("jvp", False, False)]),
    ("vjp_first_output", lambda: jax.jit(jax.grad(lambda x, y: g(x, y)[0])), [14.0],
     [("fwd", True, False), ("bwd", False, True)]),
    ("vjp_second_output", lambda: jax.jit(jax.grad(lambda x, y: g(x, y)[1])), [7.02393],
     [("fwd", True, False), ("bwd", True, False)]),
    ("vjp_two_calls_argnums_1",
     lambda: jax.jit(jax.grad(lambda x, y: g(x, y)[0] + g(x, y)[1], argnums=1)), [11.0],
     [("fwd", False, True), ("fwd", False, True), ("bwd", True, False), ("bwd", False, True)]),
    ("vjp_grad_jit", lambda: jax.grad(jax.jit(lambda x, y: g(x, y)[1])), [7.02393],
     [("fwd", True, False), ("bwd", True, False)]),
]


@pytest.mark.parametrize("name,make,values,patterns", CASES, ids=[c[0] for c in CASES])
def test_values_and_symbolic_zero_patterns_as_jax(name, make, values, patterns):
    fn = make()
    got, saw = run(fn, 1.0, 2.0)
    np.testing.assert_allclose(got, values, rtol=1e-5)
    assert saw == patterns
    # a second call reuses the compiled program: no rule is traced again
    got, saw = run(fn, 1.0, 2.0)
    np.testing.assert_allclose(got, values, rtol=1e-5)
    assert saw == []


def _count_primal_evaluations(monkeypatch):
    """Counts Python evaluations of a deferred call's primal function (the
    host-callback path of a program that still holds the call)."""
    calls = []
    real = core.eval_jaxpr

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(core, "eval_jaxpr", counting)
    return calls


@pytest.mark.parametrize("make", [
    lambda: jax.jit(jax.grad(f)),
    lambda: jax.jit(jax.value_and_grad(f)),
    lambda: jax.jit(f),
    lambda: jax.jit(jax.grad(lambda x, y: g(x, y)[1])),
    lambda: jax.jit(g),
], ids=["grad", "value_and_grad", "primal", "vjp_grad", "vjp_primal"])
def test_compiled_program_is_ordinary(make, monkeypatch):
    fn = make()
    first = fn(1.0, 2.0)
    closed = fn._impl._traced((1.0, 2.0), {})[0]
    assert not _core.holds_dynamic(_runnable(closed))
    calls = _count_primal_evaluations(monkeypatch)
    again = fn(jnp.float32(1.0), jnp.float32(2.0))
    assert calls == []
    np.testing.assert_allclose(jax.tree_util.tree_leaves(again), jax.tree_util.tree_leaves(first))


def test_lowered_compile_runs_the_ordinary_program(monkeypatch):
    compiled = jax.jit(jax.value_and_grad(f)).lower(1.0, 2.0).compile()
    calls = _count_primal_evaluations(monkeypatch)
    out = compiled(jnp.float32(1.0), jnp.float32(2.0))
    assert calls == []
    np.testing.assert_allclose([float(v) for v in out], [1.682942, 3.241814], rtol=1e-5)


@pytest.mark.parametrize("make,values", [
    (lambda: jax.jit(jax.grad(f)), [3.241814]),
    (lambda: jax.jit(f), [1.682942]),
    (lambda: jax.jit(jax.grad(lambda x, y: g(x, y)[1])), [7.02393]),
], ids=["grad", "primal", "vjp_grad"])
def test_export_serializes(make, values):
    exp = export.export(make())(1.0, 2.0)
    back = export.deserialize(exp.serialize())
    np.testing.assert_allclose([float(v) for v in jax.tree_util.tree_leaves(back.call(1.0, 2.0))],
                               values, rtol=1e-5)


def test_exported_vjp_keeps_the_custom_rule():
    # the serialized VJP is traced from the program with the rule (x's
    # tangent scaled by 3 in the rule, as JAX's `Exported.vjp`)
    exp = export.export(jax.jit(f))(1.0, 2.0)
    back = export.deserialize(exp.serialize(vjp_order=1))
    ct = back.vjp().call(1.0, 2.0, 1.0)
    np.testing.assert_allclose([float(v) for v in ct], [3.241814, 4.207355], rtol=1e-5)


def test_traced_program_keeps_the_rule_for_later_differentiation():
    jf = jax.jit(f)
    np.testing.assert_allclose(float(jf(1.0, 2.0)), np.sin(1.0) * 2.0, rtol=1e-6)
    got, saw = run(jax.grad(jf, argnums=1), 1.0, 2.0)
    np.testing.assert_allclose(got, [4.207355], rtol=1e-5)
    assert saw == [("jvp", True, False)]
