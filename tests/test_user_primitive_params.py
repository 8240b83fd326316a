"""User-defined primitives carrying arbitrary Python objects as params (as
JAX's `Primitive.bind(*args, **params)` accepts, and equinox's
`filter_primitive_bind` relies on: a PyTreeDef, a tuple of static leaves
holding sentinels, an object the rules write to): every rule receives the
very object given, eagerly and under `jit`, `grad` and `vmap`; staging an
unhashable param raises JAX's `TypeError`. Also custom_jvp rules that refuse
to be traced until a tangent reaches them (equinox's `nondifferentiable`)."""
import collections

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs.custom_derivatives import custom_jvp
from microjax_rs.extend.core import Primitive
from microjax_rs.interpreters import ad, batching

_MISSING = object()


class Recorder:
    """Mutable, hashable by identity: the rules record the outputs' structure on it."""

    def __init__(self):
        self.treedef_out = None
        self.seen = []


filter_p = Primitive("filter_scale")
filter_p.multiple_results = True


def _combine(dynamic, static):
    it = iter(dynamic)
    return [next(it) if s is _MISSING else s for s in static]


def _call(dynamic, treedef, static):
    """The rule body: args = unflatten(treedef, static with the dynamic leaves put back);
    the primitive computes `scale * x` for args `(x, scale)`."""
    x, scale = jax.tree_util.tree_unflatten(treedef, _combine(dynamic, static))
    return [x * scale]


@filter_p.def_abstract_eval
def _filter_abstract(*avals, treedef, static, record):
    record.seen.append(("abstract_eval", treedef, static))
    record.treedef_out = jax.tree_util.tree_structure([0])
    return [avals[0]]


@filter_p.def_impl
def _filter_impl(*dynamic, treedef, static, record):
    record.seen.append(("impl", treedef, static))
    return _call(dynamic, treedef, static)


def _filter_jvp(primals, tangents, *, treedef, static, record):
    assert type(primals) is tuple and type(tangents) is tuple  # as JAX hands them
    out = filter_p.bind(*primals, treedef=treedef, static=static, record=record)
    t = ad.instantiate_zeros(tangents[0])
    return out, _call([t], treedef, static)


def _filter_transpose(cts, *operands, treedef, static, record):
    return _call([cts[0]], treedef, static)


def _filter_batch(args, dims, *, treedef, static, record):
    return filter_p.bind(*args, treedef=treedef, static=static, record=record), [dims[0]]


ad.primitive_jvps[filter_p] = _filter_jvp
ad.primitive_transposes[filter_p] = _filter_transpose
batching.primitive_batchers[filter_p] = _filter_batch


def scale(x, k, record):
    """`k * x` through the primitive: `x` dynamic, `k` a static leaf (a Python float)."""
    treedef = jax.tree_util.tree_structure((0, 0))
    return filter_p.bind(x, treedef=treedef, static=(_MISSING, k), record=record)[0]


def test_rules_receive_the_objects_given_eagerly():
    rec = Recorder()
    out = scale(jnp.arange(3.0), 2.5, rec)
    np.testing.assert_allclose(np.asarray(out), [0.0, 2.5, 5.0])
    kind, treedef, static = rec.seen[-1]
    assert kind == "impl"
    assert treedef == jax.tree_util.tree_structure((0, 0))
    assert static[0] is _MISSING and static[1] == 2.5


def test_under_jit_the_object_is_the_same_and_the_jaxpr_prints_it():
    rec = Recorder()
    f = jax.jit(lambda x: scale(x, 3.0, rec))
    np.testing.assert_allclose(np.asarray(f(jnp.ones(2))), [3.0, 3.0])
    assert rec.treedef_out == jax.tree_util.tree_structure([0])
    assert any(kind == "abstract_eval" and s[0] is _MISSING for kind, _, s in rec.seen)
    text = str(jax.make_jaxpr(lambda x: scale(x, 3.0, rec))(1.0))
    assert "filter_scale[" in text and "treedef=PyTreeDef((*, *))" in text
    assert "record=<" in text and "Recorder object" in text


def test_each_fresh_object_reaches_the_shape_rule():
    # Params are equal by identity: a new recorder is a new equation, whose
    # abstract evaluation records on it (equinox's Flatten relies on this).
    f = jax.jit(lambda x, r: scale(x, 2.0, r), static_argnums=1)
    recs = [Recorder(), Recorder()]
    for r in recs:
        f(1.0, r)
        assert r.treedef_out is not None


def test_grad_jvp_and_vmap():
    rec = Recorder()
    g = jax.grad(lambda x: scale(x, 4.0, rec).sum())(jnp.ones(3))
    np.testing.assert_allclose(np.asarray(g), [4.0, 4.0, 4.0])
    g = jax.jit(jax.grad(lambda x: scale(x, -1.5, rec)))(2.0)
    np.testing.assert_allclose(float(g), -1.5)
    _, t = jax.jvp(lambda x: scale(x, 2.0, rec), (1.0,), (3.0,))
    np.testing.assert_allclose(float(t), 6.0)
    out = jax.vmap(lambda x: scale(x, 0.5, rec))(jnp.arange(4.0))
    np.testing.assert_allclose(np.asarray(out), [0.0, 0.5, 1.0, 1.5])


def test_param_values_keep_their_python_types():
    Point = collections.namedtuple("Point", "a b")
    seen = {}
    p = Primitive("types_probe")

    @p.def_abstract_eval
    def _abstract(x, **params):
        seen.update(params)
        return x

    p.def_impl(lambda x, **params: x)
    params = dict(point=Point(1, 2), npint=np.int32(3), ints=(1, 2), text="a",
                  dtype=np.dtype("float32"), nothing=None, fn=np.sin)
    jax.jit(lambda x: p.bind(x, **params))(1.0)
    assert type(seen["point"]) is Point and seen["point"].b == 2
    assert type(seen["npint"]) is np.int32
    assert seen["ints"] == (1, 2) and type(seen["ints"]) is tuple
    assert seen["text"] == "a" and seen["dtype"] == np.dtype("float32")
    assert seen["nothing"] is None and seen["fn"] is np.sin


def test_an_unhashable_param_is_a_type_error_when_staged():
    p = Primitive("unhashable_probe")
    p.def_abstract_eval(lambda x, **params: x)
    p.def_impl(lambda x, **params: x)
    # Eagerly JAX calls the implementation with the list as given.
    assert float(p.bind(jnp.float32(2.0), lst=[1])) == 2.0
    # Text recorded from JAX 0.10.2.
    with pytest.raises(TypeError, match=r"As of JAX v0\.7, parameters to jaxpr equations must have "
                                        r"__hash__ and __eq__ methods\. In a call to primitive "
                                        r"unhashable_probe, the value of parameter lst was not "
                                        r"hashable: \[1, 2\]"):
        jax.jit(lambda x: p.bind(x, lst=[1, 2]))(1.0)


@custom_jvp
def refuses_tangents(x):
    return x


@refuses_tangents.defjvp
def _refuses_tangents_jvp(primals, tangents):
    raise RuntimeError("no tangent may reach this value")


def test_a_custom_jvp_rule_runs_only_when_a_tangent_reaches_it():
    f = jax.jit(refuses_tangents)
    np.testing.assert_allclose(float(f(1.5)), 1.5)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(jnp.arange(3.0))), [0.0, 1.0, 2.0])
    # Differentiating another argument: the rule is never asked.
    g = jax.grad(lambda x, y: x * f(y))(2.0, 3.0)
    np.testing.assert_allclose(float(g), 3.0)
    with pytest.raises(RuntimeError, match="no tangent may reach"):
        jax.jvp(f, (1.0,), (1.0,))
    with pytest.raises(RuntimeError, match="no tangent may reach"):
        jax.grad(lambda x: f(x) * x)(1.0)
    with pytest.raises(RuntimeError, match="no tangent may reach"):
        jax.grad(jax.jit(lambda x: refuses_tangents(x) * x))(1.0)


def test_a_custom_function_of_no_traced_value_runs_no_rule():
    # No traced argument under grad (here: an empty pytree): the call is
    # plain, as in JAX, where it binds on the eval trace.
    @custom_jvp
    def const(args):
        return 2.0

    const.defjvp(_refuses_tangents_jvp)
    g = jax.grad(lambda x: x * const(((), {})))(1.0)
    np.testing.assert_allclose(float(g), 2.0)


def test_a_primitive_holding_an_effectful_program_carries_its_effect():
    import io
    from contextlib import redirect_stdout

    def body(x):
        jax.debug.print("body {}", x)
        return x + 1.0

    body_jaxpr = jax.make_jaxpr(body)(1.0)
    call_p = Primitive("call_with_program")
    call_p.def_abstract_eval(lambda x, *, program: x)
    call_p.def_impl(lambda x, *, program: jax.core.eval_jaxpr(program.jaxpr, program.consts, x)[0])

    @jax.jit
    def f(x):
        call_p.bind(x, program=body_jaxpr)  # result unused
        return x * 2.0

    out = io.StringIO()
    with redirect_stdout(out):
        assert float(f(3.0)) == 6.0
    assert out.getvalue().split() == ["body", "3.0"]
    eqn = jax.make_jaxpr(lambda x: call_p.bind(x, program=body_jaxpr))(1.0).eqns[0]
    assert eqn.effects
    pure = jax.make_jaxpr(lambda x: x + 1.0)(1.0)
    assert not jax.make_jaxpr(lambda x: call_p.bind(x, program=pure))(1.0).eqns[0].effects
